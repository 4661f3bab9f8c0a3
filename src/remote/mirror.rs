//! A laptop's repository on another machine: what that machine keeps of it, per
//! laptop and repository, under `$XDG_DATA_HOME/treebox/machines/<key>/` there.
//!
//! - `mirror.git`: bare, holding only what the laptop pushed — `refs/heads/<base>`,
//!   each seeded from a pack the laptop streams over the SSH channel
//!   ([`seed`]); never the laptop's config, hooks or other refs, and never fetched
//!   from a box's clone.
//! - `repo`: a non-bare clone of the mirror (its `origin`), the repository that
//!   machine's own treebox makes the laptop's boxes in, as it makes any box: fetch
//!   origin, worktree, guard, setup, agent in tmux ([`clone_dir`]).
//!
//! `<key>` ([`key_of`]) names the laptop and the repository; it is checked to be 32
//! hex digits before it is ever part of a path. Runs on the other machine, in the
//! entry point's process.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::git::GitCli;

/// The most bytes of a pack taken in one seed.
pub const MAX_BUNDLE: u64 = 4 << 30;

/// Why the machine could not take what the laptop sent.
#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    #[error("`{0}` is not a repository key")]
    BadKey(String),
    #[error("`{0}` is not a branch name")]
    BadBranch(String),
    #[error("no data directory on this machine (set HOME or XDG_DATA_HOME)")]
    NoDataDir,
    #[error("the pack is over {MAX_BUNDLE} bytes")]
    TooLarge,
    #[error("could not write {}", .0.display())]
    Write(PathBuf, #[source] std::io::Error),
    #[error("git failed: {0}")]
    Git(String),
    #[error("the mirror has no commit {0} and no pack brought it")]
    Missing(String),
    #[error("`{0}` is not a path a file may be put at in the clone")]
    BadPath(String),
    #[error("`{0}` is not a URL to fetch origin from")]
    BadUrl(String),
}

/// The key of repository `common_dir` on the laptop named `host`: 32 hex digits.
pub fn key_of(host: &str, common_dir: &Path) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(host.as_bytes());
    h.update([0]);
    h.update(common_dir.as_os_str().as_encoded_bytes());
    hex::encode(&h.finalize()[..16])
}

/// This machine's host name, as the key of its repositories elsewhere names it.
pub fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// `machines/<key>` in this machine's data dir, the key checked.
pub fn dir_of(key: &str) -> Result<PathBuf, MirrorError> {
    if key.len() != 32
        || !key
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    {
        return Err(MirrorError::BadKey(crate::sanitize::line(key)));
    }
    let data = crate::state::layout::data_root().map_err(|_| MirrorError::NoDataDir)?;
    Ok(data.join("machines").join(key))
}

fn git(dir: &Path) -> crate::cmd::Cmd {
    GitCli::plain().cmd(dir)
}

fn run(c: crate::cmd::Cmd) -> Result<String, MirrorError> {
    let out = c.output().map_err(|e| MirrorError::Git(e.to_string()))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The directory of `key` and its mirror, made bare when it is not there yet.
fn mirror_made(key: &str) -> Result<(PathBuf, PathBuf), MirrorError> {
    let dir = dir_of(key)?;
    let mirror = dir.join("mirror.git");
    std::fs::create_dir_all(&dir).map_err(|e| MirrorError::Write(dir.clone(), e))?;
    if !mirror.join("HEAD").is_file() {
        run(GitCli::plain()
            .cmd(&dir)
            .args(["init", "-q", "--bare", "mirror.git"]))?;
    }
    Ok((dir, mirror))
}

/// The tips the mirror of `key` has: `(branch, commit)` per branch.
pub fn heads(key: &str) -> Result<Vec<(String, String)>, MirrorError> {
    let mirror = dir_of(key)?.join("mirror.git");
    if !mirror.join("HEAD").is_file() {
        return Ok(Vec::new());
    }
    // Read with libgit2 (no process): a listing answers them too.
    let repo = git2::Repository::open_bare(&mirror).map_err(|e| MirrorError::Git(e.to_string()))?;
    let refs = repo
        .references_glob("refs/heads/*")
        .map_err(|e| MirrorError::Git(e.to_string()))?;
    Ok(refs
        .flatten()
        .filter_map(|r| {
            let name = r.name().ok()?.strip_prefix("refs/heads/")?.to_string();
            Some((name, r.target()?.to_string()))
        })
        .collect())
}

/// Take `pack` (what the rest of the channel holds, possibly nothing: a whole pack
/// libgit2 made on the laptop) into the objects of the mirror of `key`, then point
/// its `refs/heads/<branch>` at `tip`, which must be there now. `from` is the ref the
/// laptop sent (`refs/heads/<branch>`, or by default `refs/remotes/origin/<branch>`:
/// a base, which names the mirror's HEAD).
pub fn seed(
    key: &str,
    branch: &str,
    from: Option<&str>,
    tip: &str,
    pack: &mut dyn Read,
) -> Result<(), MirrorError> {
    if crate::names::check_existing_branch(branch).is_err() {
        return Err(MirrorError::BadBranch(crate::sanitize::line(branch)));
    }
    let origin = format!("refs/remotes/origin/{branch}");
    let from = match from {
        None => origin,
        Some(f) if f == origin || f == format!("refs/heads/{branch}") => f.to_string(),
        Some(f) => return Err(MirrorError::BadBranch(crate::sanitize::line(f))),
    };
    if tip.len() != 40 || !tip.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(MirrorError::Missing(crate::sanitize::line(tip)));
    }
    let (_, mirror) = mirror_made(key)?;
    // The pack (possibly none) written into the mirror's objects as it arrives, with
    // libgit2's indexer: no process.
    let g = |e: git2::Error| MirrorError::Git(e.to_string());
    let repo = git2::Repository::open_bare(&mirror).map_err(g)?;
    {
        let odb = repo.odb().map_err(g)?;
        let mut writer = odb.packwriter().map_err(g)?;
        let got = std::io::copy(&mut pack.take(MAX_BUNDLE + 1), &mut writer)
            .map_err(|e| MirrorError::Write(mirror.clone(), e))?;
        if got > MAX_BUNDLE {
            return Err(MirrorError::TooLarge);
        }
        if got > 0 {
            writer.commit().map_err(g)?;
        }
    }
    let commit = git2::Oid::from_str(tip)
        .ok()
        .and_then(|oid| repo.find_commit(oid).ok())
        .ok_or_else(|| MirrorError::Missing(tip.to_string()))?;
    let refname = format!("refs/heads/{branch}");
    repo.reference(&refname, commit.id(), true, "treebox: seeded by the laptop")
        .map_err(g)?;
    // A base names the mirror's HEAD; a branch to check out does not.
    if !from.starts_with("refs/heads/") {
        repo.set_head(&refname).map_err(g)?;
    }
    Ok(())
}

/// Fetch `branch` of origin at `url` into the mirror of `key` (the machine's
/// `"fetch": "origin"`: this machine reaches origin itself, with its own credentials);
/// the commit the mirror's `refs/heads/<branch>` names then. git runs with the usual
/// pins, no prompt, and no transport that runs a command (`ext::`).
pub fn fetch_from(key: &str, branch: &str, url: &str) -> Result<String, MirrorError> {
    if crate::names::check_existing_branch(branch).is_err() {
        return Err(MirrorError::BadBranch(crate::sanitize::line(branch)));
    }
    if url.is_empty() || url.starts_with('-') || url.chars().any(char::is_control) {
        return Err(MirrorError::BadUrl(crate::sanitize::line(url)));
    }
    let (_, mirror) = mirror_made(key)?;
    let refspec = format!("+refs/heads/{branch}:refs/heads/{branch}");
    run(git(&mirror)
        .args(["-c", "protocol.ext.allow=never"])
        .env("GIT_TERMINAL_PROMPT", "0")
        .args([
            "fetch",
            "-q",
            "--no-tags",
            "--end-of-options",
            url,
            &refspec,
        ]))?;
    run(git(&mirror).args(["symbolic-ref", "HEAD", &format!("refs/heads/{branch}")]))?;
    let tip = run(git(&mirror).args([
        "rev-parse",
        "--verify",
        &format!("refs/heads/{branch}^{{commit}}"),
    ]))?;
    Ok(tip.trim().to_string())
}

/// The laptop's `.env` for the boxes of `key` made here: written (0600) at the top of
/// the clone they are made from, where provisioning copies it into each box, as it
/// copies the main checkout's `.env` on the laptop.
pub fn put_env(key: &str, content: &[u8]) -> Result<(), MirrorError> {
    let file = clone_dir(key)?.join(".env");
    crate::state::atomic::write(&file, content, 0o600).map_err(|e| MirrorError::Write(file, e))
}

/// The files `.worktreeinclude` names in the laptop's main checkout, for the boxes of
/// `key` made here: each written at its relative path at the top of the clone (its
/// mode's permission bits kept, at most 0755), where provisioning copies it into each
/// box as it does on the laptop. A path that is not plainly relative, or that would
/// land in the clone's git data or the boxes' directory, is refused and nothing of the
/// rest is written.
pub fn put_files(key: &str, files: &[super::boxes::Included]) -> Result<(), MirrorError> {
    use std::path::Component;
    for (rel, _, _) in files {
        let plain = rel.components().all(|c| matches!(c, Component::Normal(_)));
        let first = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_ascii_lowercase());
        let reserved = first
            .as_deref()
            .is_some_and(|f| f == ".git" || f == ".treebox");
        if !plain || reserved || rel.as_os_str().is_empty() {
            return Err(MirrorError::BadPath(crate::sanitize::line(
                &rel.to_string_lossy(),
            )));
        }
    }
    let clone = clone_dir(key)?;
    for (rel, mode, content) in files {
        let file = clone.join(rel);
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| MirrorError::Write(dir.to_path_buf(), e))?;
        }
        crate::state::atomic::write(&file, content, mode & 0o755)
            .map_err(|e| MirrorError::Write(file.clone(), e))?;
    }
    Ok(())
}

/// The clone of the mirror of `key` that boxes are made in, made on first use (its
/// HEAD detached).
pub fn clone_dir(key: &str) -> Result<PathBuf, MirrorError> {
    let dir = dir_of(key)?;
    let repo = dir.join("repo");
    if !repo.join(".git").exists() {
        run(GitCli::plain()
            .cmd(&dir)
            .args(["clone", "-q", "mirror.git", "repo"]))?;
        // Detached: the clone's own checkout holds no branch a box may want.
        run(git(&repo).args(["checkout", "-q", "--detach"]))?;
    }
    Ok(repo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_the_laptop_and_repository_and_nothing_else() {
        let k = key_of("laptop", Path::new("/home/me/src/p/.git"));
        assert_eq!(k.len(), 32);
        assert_ne!(k, key_of("laptop2", Path::new("/home/me/src/p/.git")));
        assert_ne!(k, key_of("laptop", Path::new("/home/me/src/q/.git")));
        for bad in [
            "../../etc",
            "",
            "ABCDEF0123456789ABCDEF0123456789",
            &"a".repeat(33),
        ] {
            assert!(matches!(dir_of(bad), Err(MirrorError::BadKey(_))), "{bad}");
        }
    }

    #[test]
    fn a_file_goes_nowhere_but_plainly_inside_the_clone() {
        for bad in [
            "../x",
            "/etc/passwd",
            ".git/hooks/pre-commit",
            ".GIT/config",
            ".treebox/worktrees/a/x",
            "a/../../b",
            "",
        ] {
            let files = vec![(PathBuf::from(bad), 0o644, b"x".to_vec())];
            let e = put_files("0123456789abcdef0123456789abcdef", &files);
            assert!(matches!(e, Err(MirrorError::BadPath(_))), "{bad}: {e:?}");
        }
    }
}
