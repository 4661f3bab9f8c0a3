//! A box's forge, seen from inside its container: how the box's git authenticates to
//! it, and whether origin is within the box's reach at all.
//!
//! Invariants:
//! - The credential helper exists only when a GitHub token was forwarded
//!   (`--token-from GH_TOKEN` or `GITHUB_TOKEN`, with a value); it is git configuration
//!   carried in the 0600 env file (host bookkeeping, outside every mount), so the box
//!   cannot rewrite it and the host never runs git with it (SPEC §8).
//! - A box in a container sees only its own mounts (SPEC §7): an origin that is a path
//!   on the host is out of its reach, and `create` says so with the way the work comes
//!   back instead of mounting it (a writable origin would let the box plant hooks that
//!   the user's own pushes run).
//!
//! Called by `credentials` (the env file) and `provision` (the create-time warning).

use std::path::{Path, PathBuf};

use crate::git::Repo;

/// The variables that carry a token for github.com, as `gh` reads them (its order).
const GITHUB_TOKENS: [&str; 2] = ["GH_TOKEN", "GITHUB_TOKEN"];

/// The credential helper the box's git uses for github.com when a GitHub token was
/// forwarded: `gh auth git-credential` where the image has `gh`, else the token from
/// the environment (user `x-access-token`, as `gh` answers too). The empty first value
/// clears any helper an image configured for that host, as `gh auth setup-git` does.
pub const GITHUB_HELPER: &str = "!f() { if command -v gh >/dev/null 2>&1; then gh auth git-credential \"$@\"; \
elif [ \"$1\" = get ]; then echo username=x-access-token; echo \"password=${GH_TOKEN:-$GITHUB_TOKEN}\"; fi; }; f";

/// Git configuration for the box's forge, as environment (`GIT_CONFIG_COUNT`, `_KEY_n`,
/// `_VALUE_n`): set only when a GitHub token was forwarded (`present`: the forwarded
/// variables that have a value), and nothing otherwise. It lives in the env file, which
/// is host bookkeeping outside every mount: the box's git runs it, the box cannot
/// rewrite it, and the host never runs git with it (SPEC §8). Entries a template's
/// `env` already numbers (`vars`) are kept, and these follow them.
fn forge_git_config(present: &[&str], vars: &[(String, String)]) -> Vec<(String, String)> {
    if !present.iter().any(|k| GITHUB_TOKENS.contains(k)) {
        return Vec::new();
    }
    let base: usize = vars
        .iter()
        .rev()
        .find(|(k, _)| k == "GIT_CONFIG_COUNT")
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    let key = "credential.https://github.com.helper";
    let mut out = Vec::new();
    for (i, value) in ["", GITHUB_HELPER].into_iter().enumerate() {
        out.push((format!("GIT_CONFIG_KEY_{}", base + i), key.to_string()));
        out.push((format!("GIT_CONFIG_VALUE_{}", base + i), value.to_string()));
    }
    out.push(("GIT_CONFIG_COUNT".into(), (base + 2).to_string()));
    out
}

/// Add [`forge_git_config`] to the env file's variables, leaving one `GIT_CONFIG_COUNT`
/// (with a name twice in an env file, which one a process sees is the engine's choice).
pub(super) fn add_forge_config(vars: &mut Vec<(String, String)>, present: &[&str]) {
    let forge = forge_git_config(present, vars);
    if !forge.is_empty() {
        vars.retain(|(k, _)| k != "GIT_CONFIG_COUNT");
        vars.extend(forge);
    }
}

/// Is `url` a path on this machine (`/srv/o.git`, `../o.git`, `file:///srv/o.git`) rather
/// than a server? Git's rule: a `scheme://` URL is a server unless the scheme is `file`;
/// `host:path` with no `/` before the colon is scp-like ssh; anything else is a path.
pub fn is_host_path(url: &str) -> bool {
    if url.is_empty() {
        return false;
    }
    if let Some((scheme, _)) = url.split_once("://") {
        return scheme.eq_ignore_ascii_case("file");
    }
    match url.split_once(':') {
        Some((before, _)) => before.contains('/'),
        None => true,
    }
}

/// For a box in a container: when origin is a path on this host, the one-line warning
/// that a push from inside cannot reach it, with the way its work comes back (`name`:
/// the box, `branch`: its branch, `placeholder`: still a `treebox/` name). `None` when
/// origin is a server, or there is no origin.
pub fn origin_out_of_reach(
    repo: &Repo,
    name: &str,
    branch: &str,
    placeholder: bool,
) -> Option<String> {
    let remote = repo.git.find_remote("origin").ok()?;
    let url = remote.url().ok()?.to_string();
    if !is_host_path(&url) {
        return None;
    }
    let to = if placeholder { "NEW-NAME" } else { branch };
    Some(format!(
        "origin ({url}) is a path on this host, out of reach from inside the container: a push from the box fails. \
         Bring the work back and push it from here: `git sandbox fetch {name}`, then `git push origin refs/hort/{name}/incoming:refs/heads/{to}`"
    ))
}

/// Origin's URL when it is a relative path (`../app.git`), with the absolute path it
/// names from the main checkout. git reads such a URL from where it runs, so from a box
/// (deeper in the tree) it names another place and a push there fails. `None` when it
/// is absolute, a server, or there is no origin.
pub fn relative_origin(repo: &Repo) -> Option<(String, PathBuf)> {
    let remote = repo.git.find_remote("origin").ok()?;
    let url = remote.url().ok()?.to_string();
    if !is_host_path(&url) || url.contains("://") || Path::new(&url).is_absolute() {
        return None;
    }
    let joined = repo.main_root.join(&url);
    Some((url, joined.canonicalize().unwrap_or(joined)))
}

/// For a box on the host: [`relative_origin`] as a one-line warning, with the command
/// that makes the URL absolute.
pub fn relative_origin_warning(repo: &Repo) -> Option<String> {
    let (url, absolute) = relative_origin(repo)?;
    Some(format!(
        "origin's URL ({}) is a relative path, which git reads from where it runs: from the box it names another place, and a push there fails. Make it absolute: `{}`",
        crate::sanitize::line(&url),
        set_url_absolute(&absolute)
    ))
}

/// `git remote set-url origin <absolute>`, quoted for a shell.
pub fn set_url_absolute(absolute: &Path) -> String {
    format!(
        "git remote set-url origin {}",
        crate::cmd::quote(&absolute.to_string_lossy())
    )
}

/// The forge hosts of a remote URL, for `--allow-forge`: the URL's host (`https://`,
/// `http://`, `ssh://`, `git://`, or scp-like `user@host:path`), and for GitHub its API
/// host. None for a local path or `file://`, or a host that is not a plain host name.
pub fn forge_hosts(url: &str) -> Vec<String> {
    let host = if let Some((scheme, rest)) = url.split_once("://") {
        if !matches!(
            scheme,
            "https" | "http" | "ssh" | "git" | "git+ssh" | "ssh+git"
        ) {
            return Vec::new();
        }
        let authority = rest.split('/').next().unwrap_or("");
        let host_port = authority.rsplit('@').next().unwrap_or("");
        host_port.split(':').next().unwrap_or("").to_string()
    } else if let Some((user_host, _path)) = url.split_once(':') {
        // scp-like: `[user@]host:path` (no slash before the colon).
        if user_host.contains('/') {
            return Vec::new();
        }
        user_host.rsplit('@').next().unwrap_or("").to_string()
    } else {
        return Vec::new();
    };
    let host = host.to_ascii_lowercase();
    let plain = !host.is_empty()
        && host.contains('.')
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    if !plain {
        return Vec::new();
    }
    let mut out = vec![host.clone()];
    if host == "github.com" {
        out.push("api.github.com".into());
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn forge_hosts_come_from_origin() {
        assert_eq!(
            forge_hosts("https://github.com/o/r.git"),
            ["github.com", "api.github.com"]
        );
        assert_eq!(
            forge_hosts("git@gitlab.example.org:o/r.git"),
            ["gitlab.example.org"]
        );
        assert_eq!(
            forge_hosts("ssh://git@Git.Example.COM:2222/o/r"),
            ["git.example.com"]
        );
        assert!(forge_hosts("/srv/git/r.git").is_empty());
        assert!(forge_hosts("file:///srv/r.git").is_empty());
        assert!(forge_hosts("./r.git").is_empty());
        assert!(forge_hosts("https://evil host;rm/x").is_empty());
    }

    use super::*;

    #[test]
    fn a_github_token_brings_the_credential_helper_and_nothing_else_does() {
        let none: &[(String, String)] = &[];
        assert!(forge_git_config(&[], none).is_empty());
        assert!(forge_git_config(&["GITLAB_TOKEN", "OTHER"], none).is_empty());
        let got = forge_git_config(&["GH_TOKEN"], none);
        let want: Vec<(String, String)> = [
            ("GIT_CONFIG_KEY_0", "credential.https://github.com.helper"),
            ("GIT_CONFIG_VALUE_0", ""),
            ("GIT_CONFIG_KEY_1", "credential.https://github.com.helper"),
            ("GIT_CONFIG_VALUE_1", GITHUB_HELPER),
            ("GIT_CONFIG_COUNT", "2"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(got, want);
        // A template's own numbered entries keep their numbers; these follow.
        let template = [("GIT_CONFIG_COUNT".to_string(), "1".to_string())];
        let got = forge_git_config(&["GITHUB_TOKEN"], &template);
        assert_eq!(got[0].0, "GIT_CONFIG_KEY_1");
        assert_eq!(
            got.last().unwrap(),
            &("GIT_CONFIG_COUNT".into(), "3".into())
        );
    }

    #[test]
    fn the_env_file_has_one_git_config_count() {
        let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
        let template = vec![
            pair("GIT_CONFIG_COUNT", "1"),
            pair("GIT_CONFIG_KEY_0", "core.pager"),
            pair("GIT_CONFIG_VALUE_0", "cat"),
        ];
        // No GitHub token: the template's entries as they were.
        let mut vars = template.clone();
        add_forge_config(&mut vars, &["GITLAB_TOKEN"]);
        assert_eq!(vars, template);
        // A GitHub token: the template's entry stays first, one count for all three.
        add_forge_config(&mut vars, &["GH_TOKEN"]);
        let counts: Vec<_> = vars
            .iter()
            .filter(|(k, _)| k == "GIT_CONFIG_COUNT")
            .collect();
        assert_eq!(counts, [&pair("GIT_CONFIG_COUNT", "3")]);
        assert!(vars.contains(&pair("GIT_CONFIG_KEY_0", "core.pager")));
        assert!(vars.contains(&pair("GIT_CONFIG_VALUE_2", GITHUB_HELPER)));
    }

    #[test]
    fn host_paths_and_servers() {
        for path in [
            "/srv/o.git",
            "../o.git",
            "o.git",
            "file:///srv/o.git",
            "FILE:///srv/o.git",
            "./a:b/o.git",
        ] {
            assert!(is_host_path(path), "{path}");
        }
        for server in [
            "",
            "https://github.com/o/r.git",
            "git://10.0.0.2/o.git",
            "ssh://git@host:22/o.git",
            "git@github.com:o/r.git",
            "host:o.git",
        ] {
            assert!(!is_host_path(server), "{server}");
        }
    }
}
