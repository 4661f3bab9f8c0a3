//! Credentials for a box's container: the chosen harness's login files and the 0600
//! env file (git identity, model keys, forwarded tokens and the forge's credential
//! helper, the template's env, the caches' variables).
//!
//! Invariants:
//! - Credentials never enter an image layer: the model keys and git identity go in a
//!   0600 env file given at start; only the chosen harness's login files are copied
//!   (0700 dir, 0600 files) into the bookkeeping and mounted; the live `~/.claude` or
//!   `~/.codex` is never mounted.
//! - Staging and every refresh rewrite the copies in place (a bind-mounted file pins
//!   its inode, a mounted directory must not be replaced under a running container)
//!   and never write through a symlink.
//!
//! Called by `mounts` and `container` at create, and by `provision::enter` (refresh).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::{io_err, ContainerError};
use super::keys::{write_keys, KeysOutcome};
use super::login;
use super::mounts::Mount;
use crate::git::Repo;
use crate::harness::Harness;
use crate::names::Leaf;
use crate::state::{Layout, Record};
use crate::untrusted::{read_regular, Links};

/// The login files each harness needs, relative to the host home: (source, whether
/// it is a directory entry under the harness dir or a file in home).
fn login_files(h: Harness) -> (&'static str, &'static [&'static str], Option<&'static str>) {
    match h {
        Harness::Claude => (
            ".claude",
            &[".credentials.json", "settings.json"],
            Some(".claude.json"),
        ),
        Harness::Codex => (".codex", &["auth.json", "config.toml"], None),
    }
}

/// Copy the chosen harness's login files into the box's credentials dir (0700/0600),
/// fresh each time, in place: a container may already mount the directory (one made by
/// an interrupted create), and a replaced directory would leave it reading deleted
/// files. Returns the mounts that place them in the agent's home.
pub fn stage_credentials(
    layout: &Layout,
    record: &Record,
    harness: Harness,
    host_home: &Path,
    agent_home: &Path,
) -> Result<Vec<Mount>, ContainerError> {
    use std::os::unix::fs::DirBuilderExt;
    let leaf = Leaf::parse(&record.name).map_err(|_| ContainerError::NoEngine)?;
    let creds = layout.credentials_dir(&leaf);
    let (dir, files, home_file) = login_files(harness);
    let staged = creds.join(dir.trim_start_matches('.'));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&staged)
        .map_err(io_err("could not create", &staged))?;
    let (host_dir, host_file) = harness.host_login(host_home);
    sync_login_files(harness, files, &host_dir, &staged)?;
    let mut mounts = vec![Mount {
        src: staged,
        dst: agent_home.join(dir),
        readonly: false,
    }];
    if let Some(hf) = home_file {
        let dst = creds.join(hf.trim_start_matches('.'));
        let staged = host_file
            .as_deref()
            .and_then(|f| std::fs::read(f).ok())
            .and_then(|raw| home_file_data(layout, record, harness, &raw));
        if let Some(data) = staged {
            write_in_place(&dst, &data)?;
            mounts.push(Mount {
                src: dst,
                dst: agent_home.join(hf),
                readonly: false,
            });
        }
    }
    Ok(mounts)
}

/// [`sync_login_file`] for each of the harness's `files`, from `host_dir` to `staged`.
fn sync_login_files(
    harness: Harness,
    files: &[&str],
    host_dir: &Path,
    staged: &Path,
) -> Result<(), ContainerError> {
    for f in files {
        sync_login_file(
            harness,
            f,
            &host_dir.join(f),
            &staged.join(f),
            login::env_token(),
        )?;
    }
    Ok(())
}

/// Bring the host's login file `src` to the box's copy `dst`, at create and on every
/// `enter`. Claude Code's OAuth login (single-use refresh tokens, see [`login`]) is
/// special: with `CLAUDE_CODE_OAUTH_TOKEN` in the environment the box gets that token
/// through the keys file and no copy of the login — a copy staged before is removed
/// when it is the host's login — and otherwise a box's copy newer than the host's
/// (the box refreshed it) is kept.
fn sync_login_file(
    harness: Harness,
    name: &str,
    src: &Path,
    dst: &Path,
    env_token: bool,
) -> Result<(), ContainerError> {
    let oauth = harness == Harness::Claude && name == login::FILE;
    // The user's own file, capped as the box's is.
    let cap = if oauth {
        login::MAX_BYTES
    } else {
        MAX_LOGIN_FILE
    };
    let Ok(data) = read_regular(src, cap, Links::Follow) else {
        return Ok(());
    };
    if oauth && env_token {
        if login::same_login(&data, dst) {
            std::fs::remove_file(dst).map_err(io_err("could not remove", dst))?;
        }
        return Ok(());
    }
    if oauth && login::keep_box_copy(&data, dst) {
        return Ok(());
    }
    write_in_place(dst, &data)
}

/// Largest login or settings file copied into a box.
const MAX_LOGIN_FILE: u64 = 4 << 20;

/// The env file's lines: what is fixed at create — the box, the git identity, the
/// template's env, the caches' variables, the forge's credential helper. No secret:
/// those are the keys file's ([`super::keys`]).
pub(super) fn env_lines(
    repo: Option<&Repo>,
    leaf: &Leaf,
    spec_env: &[(String, String)],
    extra: &[(String, String)],
    forwarded: &[String],
) -> String {
    let mut vars: Vec<(String, String)> = vec![("TREEBOX_BOX".into(), leaf.to_string())];
    // The repository's view of the identity, or (a folder box) the user's own config.
    let cfg = match repo {
        Some(r) => r.git.config(),
        None => git2::Config::open_default(),
    };
    if let Ok(cfg) = cfg {
        for (key, names) in [
            ("user.name", ["GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"]),
            ("user.email", ["GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"]),
        ] {
            if let Ok(v) = cfg.get_string(key) {
                for n in names {
                    vars.push((n.into(), v.clone()));
                }
            }
        }
    }
    // `--token-from`: which of the named variables have a value decides the helper.
    let present: Vec<&str> = forwarded
        .iter()
        .filter(|k| std::env::var(k).is_ok_and(|v| !v.is_empty()))
        .map(String::as_str)
        .collect();
    // The image's agent CLIs stay the version it was built with (`doctor` reports skew
    // with the host's); a template's env may still say otherwise.
    vars.push(("DISABLE_AUTOUPDATER".into(), "1".into()));
    vars.extend(spec_env.iter().cloned());
    vars.extend(extra.iter().cloned());
    super::forge::add_forge_config(&mut vars, &present);
    render(vars)
}

/// `KEY=value` lines; a value with a newline cannot be passed (the launcher reads a
/// line each), nor a name the launcher would not export.
pub(super) fn render(vars: Vec<(String, String)>) -> String {
    let mut out = String::new();
    for (k, v) in vars {
        if v.contains(['\n', '\r']) || !super::launch::valid_key(&k) {
            continue;
        }
        out.push_str(&format!("{k}={v}\n"));
    }
    out
}

/// The user's own Codex `config.toml` (the one staged into a box), as text.
pub fn user_codex_config() -> Option<String> {
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    let (dir, _) = Harness::Codex.host_login(&home);
    read_regular(&dir.join("config.toml"), MAX_LOGIN_FILE, Links::Follow)
        .ok()
        .map(|raw| String::from_utf8_lossy(&raw).into_owned())
}

/// Refresh the harness's credential copies and the keys file (every `enter`): what
/// became of each model key the box had or this shell gives.
pub fn refresh_credentials(
    layout: &Layout,
    record: &Record,
    harness: Harness,
) -> Result<KeysOutcome, ContainerError> {
    let (Some(rec), Ok(leaf)) = (record.container.as_ref(), Leaf::parse(&record.name)) else {
        return Ok(KeysOutcome::default());
    };
    let host_home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    // The mounts of a running container point at these paths: only refresh the files.
    let (dir, files, home_file) = login_files(harness);
    let staged = layout
        .credentials_dir(&leaf)
        .join(dir.trim_start_matches('.'));
    if !staged.is_dir() {
        stage_credentials(layout, record, harness, &host_home, &rec.home)?;
        return keys_after_refresh(layout, record, harness, rec.launcher);
    }
    let (host_dir, host_file) = harness.host_login(&host_home);
    sync_login_files(harness, files, &host_dir, &staged)?;
    if let Some(hf) = home_file {
        let dst = layout
            .credentials_dir(&leaf)
            .join(hf.trim_start_matches('.'));
        let data = host_file
            .as_deref()
            .and_then(|f| std::fs::read(f).ok())
            .and_then(|raw| home_file_data(layout, record, harness, &raw));
        if let Some(data) = data {
            write_in_place(&dst, &data)?;
        }
    }
    keys_after_refresh(layout, record, harness, rec.launcher)
}

/// The keys file, rewritten after the login files (Codex's keys follow its refreshed
/// `config.toml`); a container made before the launcher has none.
fn keys_after_refresh(
    layout: &Layout,
    record: &Record,
    harness: Harness,
    launcher: bool,
) -> Result<KeysOutcome, ContainerError> {
    if launcher {
        return write_keys(layout, record, harness);
    }
    Ok(KeysOutcome::default())
}

/// What a box gets of the user's home file (`~/.claude.json`): the minimal one
/// ([`super::claude_json`]), with the trust the user gave the main checkout carried to
/// the paths Claude Code knows the box by.
fn home_file_data(
    layout: &Layout,
    record: &Record,
    harness: Harness,
    raw: &[u8],
) -> Option<Vec<u8>> {
    let paths = super::claude_json::project_keys(&record.path, record.bare_clone.as_deref());
    // The key the box will have: this shell's, else the one it kept.
    let key = super::keys::keys_for(layout, record, harness)
        .and_then(|k| k.value("ANTHROPIC_API_KEY").map(str::to_string));
    super::claude_json::minimal(raw, &record.repo, &paths, key.as_deref())
}

/// Rewrite a staged credential file in place. A file bind-mounted on its own pins its
/// inode, so a rename would leave the container reading the old copy; the staging dir
/// is host-owned, so there is no symlink to fear, but one is refused all the same.
fn write_in_place(path: &Path, data: &[u8]) -> Result<(), ContainerError> {
    use std::os::unix::fs::OpenOptionsExt;
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file()) {
        return Err(ContainerError::Io {
            what: "refusing to write through",
            path: path.to_path_buf(),
            source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
        });
    }
    let new = std::fs::symlink_metadata(path).is_err();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(io_err("could not write", path))?;
    // A copy new since the container was made belongs to whoever owns its directory:
    // the agent, once the container runs (where this process may give files away).
    if new {
        if let Some(dir) = path.parent().and_then(|d| std::fs::metadata(d).ok()) {
            use std::os::unix::fs::MetadataExt;
            let _ = std::os::unix::fs::fchown(&f, Some(dir.uid()), Some(dir.gid()));
        }
    }
    f.write_all(data).map_err(io_err("could not write", path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oauth(expires: i64, refresh: &str) -> String {
        format!(r#"{{"claudeAiOauth":{{"refreshToken":"{refresh}","expiresAt":{expires}}}}}"#)
    }

    #[test]
    fn the_claude_login_is_synced_without_losing_a_newer_one() {
        let d = tempfile::tempdir().unwrap();
        let (src, dst) = (d.path().join("host.json"), d.path().join("box.json"));
        let sync = |env_token| sync_login_file(Harness::Claude, login::FILE, &src, &dst, env_token);
        let read = || std::fs::read_to_string(&dst).ok();
        // No host login: nothing staged.
        sync(false).unwrap();
        assert_eq!(read(), None);
        std::fs::write(&src, oauth(1000, "r1")).unwrap();
        sync(false).unwrap();
        assert_eq!(read(), Some(oauth(1000, "r1")));
        // The box refreshed: its newer login stays.
        std::fs::write(&dst, oauth(2000, "r2")).unwrap();
        sync(false).unwrap();
        assert_eq!(read(), Some(oauth(2000, "r2")));
        // The host logged in again since: the host's.
        std::fs::write(&src, oauth(3000, "r3")).unwrap();
        sync(false).unwrap();
        assert_eq!(read(), Some(oauth(3000, "r3")));
        // The long-lived token: the host's login is taken back out of the box…
        sync(true).unwrap();
        assert_eq!(read(), None);
        // …but a login of the box's own is left alone.
        std::fs::write(&dst, oauth(5, "own")).unwrap();
        sync(true).unwrap();
        assert_eq!(read(), Some(oauth(5, "own")));
        // Other files are copied as they are, whatever the route.
        let other = d.path().join("settings.json");
        std::fs::write(&src, "{}").unwrap();
        sync_login_file(Harness::Claude, "settings.json", &src, &other, true).unwrap();
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "{}");
    }

    #[test]
    fn env_lines_skip_newlines() {
        let d = tempfile::tempdir().unwrap();
        let r = git2::Repository::init(d.path()).unwrap();
        drop(r);
        let repo = Repo::discover(d.path()).unwrap();
        let leaf = Leaf::parse("b").unwrap();
        let text = env_lines(
            Some(&repo),
            &leaf,
            &[("A".into(), "1".into()), ("B".into(), "x\ny".into())],
            &[],
            &[],
        );
        assert!(text.contains("TREEBOX_BOX=b\n"));
        assert!(text.contains("A=1\n"));
        assert!(!text.contains("B="));
    }
}
