//! Stage 1: fetch origin, so the box starts from a fresh `origin/<base>`.
//!
//! Concurrent creates in one repository would race on `refs/remotes/origin/*` locks,
//! so fetches are serialised by a repository-wide lock; a create that waited while
//! another fetch finished after it started uses that fetch instead of repeating it.

use std::path::Path;
use std::time::SystemTime;

use crate::cmd::CmdError;
use crate::git::GitCli;

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("could not fetch origin: {}", summary(.0))]
    Failed(#[source] CmdError),
    #[error("could not take the fetch lock {path}")]
    Lock {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn summary(e: &CmdError) -> String {
    if let Some(lock) = stale_lock(e) {
        return format!(
            "git found the lock file {} in the way (another git command is running, or one was killed)",
            crate::sanitize::line(&lock.to_string_lossy())
        );
    }
    // git's first fatal/error line says what failed; the last is often advice
    // ("...and the repository exists.").
    let lines: Vec<&str> = e
        .stderr()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    let s = lines
        .iter()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or(lines.last())
        .copied();
    match s {
        Some(l) => crate::sanitize::line(l.trim()),
        None => crate::sanitize::chain(e),
    }
}

/// The lock file git could not create, when that is why it failed: git's
/// `Unable to create '<path>.lock': File exists.` (what a git killed mid-update leaves).
pub fn stale_lock(e: &CmdError) -> Option<std::path::PathBuf> {
    e.stderr().lines().find_map(|l| {
        let rest = l.split("Unable to create '").nth(1)?;
        let path = rest.split("': File exists").next()?;
        (path.ends_with(".lock") && rest.contains("': File exists")).then(|| path.into())
    })
}

/// origin's branches as `ls-remote` reports them (name → commit), asked silently.
/// Writes nothing: `--dry-run` plans against this instead of fetching.
pub fn remote_heads(
    git: &GitCli,
    main_root: &Path,
) -> Result<std::collections::HashMap<String, git2::Oid>, FetchError> {
    let out = git
        .silent_remote_cmd(main_root)
        .arg("ls-remote")
        .args(git.upload_pack_arg("origin"))
        .args(["--heads", "origin"])
        .stdout_string()
        .map_err(FetchError::Failed)?;
    Ok(crate::git::porcelain::parse_ls_remote_heads(&out))
}

/// The branch origin's `HEAD` names, asked of origin (`ls-remote --symref origin HEAD`),
/// silently: what a fetch by git 2.48 or newer records as `origin/HEAD` where it is
/// missing. `None` when origin's HEAD names no branch (detached, or an empty remote).
pub fn origin_default_branch(git: &GitCli, main_root: &Path) -> Result<Option<String>, FetchError> {
    let out = git
        .silent_remote_cmd(main_root)
        .arg("ls-remote")
        .args(git.upload_pack_arg("origin"))
        .args(["--symref", "origin", "HEAD"])
        .stdout_string()
        .map_err(FetchError::Failed)?;
    Ok(crate::git::porcelain::parse_ls_remote_head_symref(&out))
}

/// `git fetch [--upload-pack=…] --quiet [--prune] --no-recurse-submodules origin`.
fn origin_fetch_args(git: &GitCli, prune: bool) -> Vec<String> {
    let mut args: Vec<String> = vec!["fetch".into()];
    args.extend(git.upload_pack_arg("origin"));
    args.push("--quiet".into());
    if prune {
        args.push("--prune".into());
    }
    args.extend(["--no-recurse-submodules", "origin"].map(String::from));
    args
}

/// Fetch origin quietly (no prompt), for at most `limit`; whether it succeeded. For
/// a question a command can go on without (may the box go? see `teardown`), never
/// for a base a box is cut from.
pub fn fetch_origin_within(git: &GitCli, main_root: &Path, limit: std::time::Duration) -> bool {
    let c = git
        .silent_remote_cmd(main_root)
        .args(origin_fetch_args(git, false).iter());
    matches!(c.status_within(limit), Ok(Some(st)) if st.success())
}

/// Fetch `origin` in the repository at `main_root`. `state_dir` holds the fetch lock
/// and stamp. `interactive_retry`: after a silent failure, try once more with prompts
/// allowed (the caller passes true only on a terminal).
pub fn fetch_origin(
    git: &GitCli,
    main_root: &Path,
    state_dir: &Path,
    interactive_retry: bool,
) -> Result<(), FetchError> {
    let started = SystemTime::now();
    let lock_path = state_dir.join("fetch.lock");
    let lock_err = |source| FetchError::Lock {
        path: lock_path.clone(),
        source,
    };
    let _lock = crate::state::WaitedLock::acquire(&lock_path).map_err(lock_err)?;
    let stamp = state_dir.join("fetch.stamp");
    let fresh = std::fs::metadata(&stamp)
        .and_then(|m| m.modified())
        .map(|t| t > started)
        .unwrap_or(false);
    if fresh {
        return Ok(());
    }
    let args = origin_fetch_args(git, true);
    let silent = git.silent_remote_cmd(main_root).args(args.iter()).output();
    let result = match silent {
        Ok(_) => Ok(()),
        Err(e) if interactive_retry => git
            .cmd(main_root)
            .args(args.iter())
            .status_inherit()
            .map_err(FetchError::Failed)
            .and_then(|st| {
                if st.success() {
                    Ok(())
                } else {
                    Err(FetchError::Failed(e))
                }
            }),
        Err(e) => Err(FetchError::Failed(e)),
    };
    if result.is_ok() {
        let _ = std::fs::write(&stamp, b"");
    }
    result
}
