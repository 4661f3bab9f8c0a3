//! Publishing a landed box (SPEC §10b): `land --push` pushes the base, `land --pr`
//! pushes the box's branch and opens a pull request with `gh`. Both run on the host,
//! where git runs no hooks ([`GitCli`] pins `core.hooksPath`), so the guard's decision
//! is asked here ([`guard_allows`]); `gh` runs in the main checkout, so its token never
//! enters a box. Callers: `cli/land.rs`, `cli/land_report.rs`.

use crate::cmd::{Cmd, CmdError};
use crate::git::cli::GitCli;
use crate::git::Repo;
use crate::guard::{decide, Decision, PushLine};

/// Why nothing (or, where a variant says so, only the push) was published.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error("the box's branch `{branch}` is not a name to push")]
    NotABranch { branch: String },
    #[error("the box's branch is now `{branch}`, the base itself: a pull request needs a branch of its own")]
    IsTheBase { branch: String },
    #[error("{message}")]
    Guard { message: String },
    #[error("origin ({url}) is not a forge repository `gh` can open a pull request on")]
    NotAForge { url: String },
    #[error("`gh` (GitHub's CLI) is not installed, so no pull request can be opened; nothing was pushed")]
    GhMissing,
    #[error("`gh --version` failed; nothing was pushed")]
    GhBroken(#[source] CmdError),
    #[error("`gh` is not logged in to {host}; nothing was pushed")]
    GhLoggedOut {
        host: String,
        #[source]
        source: CmdError,
    },
    #[error("could not push `{branch}` to origin")]
    Push {
        branch: String,
        #[source]
        source: CmdError,
    },
    #[error("`{branch}` is pushed, but `gh pr create` failed")]
    PrCreate {
        branch: String,
        #[source]
        source: CmdError,
    },
}

/// The guard's decision on a push of `local` to `remote` (full ref names): a
/// placeholder branch is refused, as the pre-push hook would refuse it.
pub fn guard_allows(local: &str, remote: &str) -> Result<(), PublishError> {
    let line = PushLine {
        local_ref: local.to_string(),
        local_oid: String::new(),
        remote_ref: remote.to_string(),
        remote_oid: String::new(),
    };
    match decide(&[line], None) {
        Decision::Allow => Ok(()),
        Decision::Refuse { message, .. } => Err(PublishError::Guard { message }),
    }
}

/// May `branch` (the box's, as it is now) be pushed for a pull request onto `base`?
/// Never the base, origin's default branch, a name git would not take, or a
/// placeholder.
pub fn check_pr_branch(repo: &Repo, branch: &str, base: &str) -> Result<(), PublishError> {
    let shown = crate::sanitize::line(branch);
    if crate::names::check_existing_branch(branch).is_err() {
        return Err(PublishError::NotABranch { branch: shown });
    }
    if branch == base || repo.origin_head_branch().as_deref() == Some(branch) {
        return Err(PublishError::IsTheBase { branch: shown });
    }
    let refname = format!("refs/heads/{branch}");
    guard_allows(&refname, &refname)
}

/// Push `what` (a commit id or a ref) to origin's `refname`; no force, no hooks.
pub fn push(repo: &Repo, git: &GitCli, what: &str, refname: &str) -> Result<(), CmdError> {
    git.silent_remote_cmd(&repo.main_root)
        .args(["push", "--porcelain", "origin"])
        .arg(format!("{what}:{refname}"))
        .output()
        .map(|_| ())
}

/// The forge's host and `gh`'s `--repo` (`OWNER/REPO`, or `HOST/OWNER/REPO` off
/// github.com) from origin's URL as configured (before any `insteadOf`).
pub fn forge_repo(repo: &Repo) -> Result<(String, String), PublishError> {
    let url = repo
        .git
        .config()
        .and_then(|c| c.get_string("remote.origin.url"))
        .unwrap_or_default();
    parse_forge_url(&url).ok_or_else(|| PublishError::NotAForge {
        url: crate::sanitize::line(&url),
    })
}

/// `https://host/owner/repo(.git)`, `ssh://[user@]host[:port]/owner/repo(.git)`,
/// `user@host:owner/repo(.git)` → (host, `[host/]owner/repo`).
pub(crate) fn parse_forge_url(url: &str) -> Option<(String, String)> {
    let (host, path) = if let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .or_else(|| url.strip_prefix("ssh://"))
        .or_else(|| url.strip_prefix("git://"))
    {
        let (authority, path) = rest.split_once('/')?;
        let host = authority.rsplit('@').next()?;
        (host.split(':').next()?.to_string(), path.to_string())
    } else if !url.contains("://") && !url.starts_with('/') {
        let (authority, path) = url.split_once(':')?;
        (authority.rsplit('@').next()?.to_string(), path.to_string())
    } else {
        return None;
    };
    let path = path.trim_end_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    let parts: Vec<&str> = path.split('/').collect();
    let ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && !s.starts_with('.')
            && !s.starts_with('-')
    };
    if parts.len() != 2 || !parts.iter().all(|p| ok(p)) || host.is_empty() || !ok(&host) {
        return None;
    }
    let slug = if host == "github.com" {
        path.to_string()
    } else {
        format!("{host}/{path}")
    };
    Some((host, slug))
}

/// `gh` installed and logged in to `host`; nothing is pushed otherwise.
pub fn gh_ready(host: &str) -> Result<(), PublishError> {
    match Cmd::new("gh").arg("--version").output() {
        Ok(_) => {}
        Err(e) if e.is_not_found() => return Err(PublishError::GhMissing),
        Err(e) => return Err(PublishError::GhBroken(e)),
    }
    Cmd::new("gh")
        .args(["auth", "status", "--hostname", host])
        .output()
        .map_err(|source| PublishError::GhLoggedOut {
            host: host.to_string(),
            source,
        })?;
    Ok(())
}

/// `gh pr create` in the main checkout; the last line it printed (the URL).
pub fn open_pr(
    repo: &Repo,
    slug: &str,
    base: &str,
    branch: &str,
    title: &str,
    body: &str,
) -> Result<String, PublishError> {
    let out = Cmd::new("gh")
        .cwd(&repo.main_root)
        .args([
            "pr", "create", "--repo", slug, "--base", base, "--head", branch,
        ])
        .args(["--title", title, "--body", body])
        .output()
        .map_err(|source| PublishError::PrCreate {
            branch: crate::sanitize::line(branch),
            source,
        })?;
    let printed = String::from_utf8_lossy(&out.stdout);
    Ok(printed
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| crate::sanitize::line(l.trim()))
        .unwrap_or_default())
}

/// The pull request's title and body: one commit's subject, else the branch; the
/// box's commit subjects (plain text) listed.
pub fn describe(
    repo: &Repo,
    leaf: &str,
    branch: &str,
    tip: git2::Oid,
    base: &str,
) -> (String, String) {
    let mut subjects = Vec::new();
    let hide: Vec<git2::Oid> = [repo.remote_branch(base), repo.local_branch(base)]
        .into_iter()
        .flatten()
        .collect();
    // The capped walk (a revwalk with hidden commits reads the whole history before
    // its first commit): past its cap, no subjects are listed.
    let ours = crate::git::history::since(&repo.git, tip, &hide, crate::git::history::MAX_COMMITS)
        .unwrap_or_default();
    for id in ours.into_iter().take(200) {
        if let Ok(c) = repo.git.find_commit(id) {
            let m = String::from_utf8_lossy(c.message_bytes()).into_owned();
            subjects.push(crate::sanitize::line(m.lines().next().unwrap_or("").trim()));
        }
    }
    subjects.reverse();
    let title = match subjects.as_slice() {
        [only] => only.clone(),
        _ => crate::sanitize::line(branch),
    };
    let mut body = String::new();
    for s in &subjects {
        body.push_str(&format!("- {s}\n"));
    }
    body.push_str(&format!(
        "\nOpened by `git treebox land --pr` from box `{}`.\n",
        leaf
    ));
    (title, body)
}

#[cfg(test)]
mod tests {
    use super::parse_forge_url;

    #[test]
    fn forge_urls_give_host_and_gh_repo() {
        let p = |u: &str| parse_forge_url(u).map(|(h, s)| format!("{h} {s}"));
        assert_eq!(
            p("https://github.com/acme/widget.git").unwrap(),
            "github.com acme/widget"
        );
        assert_eq!(
            p("git@github.com:acme/widget").unwrap(),
            "github.com acme/widget"
        );
        assert_eq!(
            p("ssh://git@github.com:22/acme/widget.git").unwrap(),
            "github.com acme/widget"
        );
        assert_eq!(
            p("https://ghe.example.com/team/app").unwrap(),
            "ghe.example.com ghe.example.com/team/app"
        );
        for bad in [
            "/srv/origin.git",
            "file:///srv/x.git",
            "https://github.com/acme",
            "https://github.com/a/b/c",
            "git@github.com:../x/y",
            "https://github.com/-x;rm/y",
        ] {
            assert!(p(bad).is_none(), "{bad}");
        }
    }
}
