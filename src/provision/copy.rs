//! Stages 4–5: submodules and `.env`, plus the repository hygiene (`info/exclude`).
//!
//! Everything in the box and every repo-provided file is hostile input: `.env` is
//! written with mode 0600 through a fresh file renamed into place (never through a
//! symlink planted in the checkout), a `.env` that the repository itself tracks as a
//! symlink is never followed, and submodule paths are validated before git is asked
//! to touch them.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use fs4::fs_std::FileExt;
use sha2::{Digest, Sha256};

use crate::cmd::CmdError;
use crate::git::GitCli;
use crate::state::atomic;

/// Lines treebox keeps in `info/exclude`.
pub const EXCLUDES: &[&str] = &["/.treebox/", "/.env"];

/// Append the treebox lines to `<common>/info/exclude` once (never `.gitignore`).
/// Serialised by an flock on the file, so concurrent creates do not duplicate lines.
pub fn ensure_excludes(common_dir: &Path) -> std::io::Result<()> {
    ensure_excludes_with(common_dir, &[])
}

/// The user's own patterns in `<user_common>/info/exclude` (comments and blank lines
/// left out): a clone has an `info/exclude` of its own, and without them what the user
/// ignores there (a file `.worktreeinclude` copies in, say) shows as untracked in it.
pub fn user_excludes(user_common: &Path) -> Vec<String> {
    use crate::untrusted::{read_regular, Links};
    let Ok(bytes) = read_regular(&user_common.join("info/exclude"), 1 << 20, Links::Refuse) else {
        return Vec::new();
    };
    String::from_utf8_lossy(&bytes)
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// [`ensure_excludes`], with `extra` lines after treebox's own.
pub fn ensure_excludes_with(common_dir: &Path, extra: &[String]) -> std::io::Result<()> {
    let info = common_dir.join("info");
    std::fs::create_dir_all(&info)?;
    let path = info.join("exclude");
    // A box can write this directory: never open a FIFO (or follow a link) here.
    match std::fs::symlink_metadata(&path) {
        Ok(m) if !m.is_file() => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is not a regular file", path.display()),
            ))
        }
        _ => {}
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(&path)?;
    FileExt::lock_exclusive(&f)?;
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut add = String::new();
    if !text.is_empty() && !text.ends_with('\n') {
        add.push('\n');
    }
    let mut missing = false;
    for line in EXCLUDES
        .iter()
        .copied()
        .chain(extra.iter().map(String::as_str))
    {
        if !text.lines().any(|l| l.trim() == line.trim()) && !add.lines().any(|l| l == line) {
            add.push_str(line);
            add.push('\n');
            missing = true;
        }
    }
    if missing {
        f.write_all(add.as_bytes())?;
    }
    Ok(())
}

/// What happened to `.env`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvOutcome {
    /// Copied; the SHA-256 of what was written.
    Copied { hash: String },
    /// There is no canonical `.env`.
    Absent,
    /// Not copied, for the reason given (a warning for the user).
    Refused { reason: String },
    /// `enter`: the box's copy already matches the canonical file.
    Unchanged,
    /// `enter`: the box's copy was edited in the box since it was copied; kept.
    /// `canonical_changed`: the canonical file changed too since then (so the box
    /// misses that change: worth a warning).
    KeptEdited { canonical_changed: bool },
}

/// Where the canonical `.env` is: `override_path` (user config), else `<main>/.env`.
/// `None` when it does not exist.
pub fn env_source(main_root: &Path, override_path: Option<&str>) -> Option<PathBuf> {
    let p = match override_path {
        Some(o) => expand_home(o),
        None => main_root.join(".env"),
    };
    std::fs::symlink_metadata(&p).ok().map(|_| p)
}

fn expand_home(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(p),
    }
}

/// Copy the canonical `.env` into the box (0600).
///
/// `tracked_in_repo`: the repository itself tracks a `.env` (then the source may be a
/// repo-planted symlink, e.g. to `~/.aws/credentials`: it is not followed).
pub fn copy_env(source: Option<&Path>, box_root: &Path, tracked_in_repo: bool) -> EnvOutcome {
    let Some(source) = source else {
        return EnvOutcome::Absent;
    };
    let refused = |reason: String| EnvOutcome::Refused { reason };
    let meta = match std::fs::symlink_metadata(source) {
        Ok(m) => m,
        Err(_) => return EnvOutcome::Absent,
    };
    if meta.file_type().is_symlink() && tracked_in_repo {
        return refused(format!(
            "{} is a symlink the repository tracks; it is not followed",
            source.display()
        ));
    }
    let data = match std::fs::metadata(source) {
        Ok(m) if m.is_file() && m.len() <= 16 * 1024 * 1024 => match std::fs::read(source) {
            Ok(d) => d,
            Err(e) => return refused(format!("could not read {}: {e}", source.display())),
        },
        _ => return refused(format!("{} is not a regular file", source.display())),
    };
    let dest = box_root.join(".env");
    if let Ok(m) = std::fs::symlink_metadata(&dest) {
        if m.file_type().is_symlink() {
            return refused(format!(
                "{} is a symlink in the checkout; .env was not written through it",
                dest.display()
            ));
        }
        if tracked_in_repo {
            return refused(format!(
                "{} is tracked by the repository; left as checked out",
                dest.display()
            ));
        }
    }
    // A fresh file renamed into place: rename replaces a path, it never follows one. In
    // a box whose checkout belongs to another uid (a container's agent), it is theirs.
    let owner = {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid cannot fail and touches no memory.
        let me = unsafe { libc::geteuid() };
        std::fs::symlink_metadata(box_root)
            .ok()
            .filter(|m| m.is_dir() && m.uid() != me)
            .map(|m| (m.uid(), m.gid()))
    };
    match atomic::write_owned(&dest, &data, 0o600, owner) {
        Ok(()) => EnvOutcome::Copied {
            hash: sha256_hex(&data),
        },
        Err(e) => refused(format!("could not write {}: {e}", dest.display())),
    }
}

/// Refresh the box's `.env` from the canonical file (`enter`), never silently
/// destroying edits made in the box: when the box's copy differs from what was copied
/// in (`recorded_hash`), it is kept.
pub fn refresh_env(
    source: Option<&Path>,
    box_root: &Path,
    tracked_in_repo: bool,
    recorded_hash: Option<&str>,
) -> EnvOutcome {
    let dest = box_root.join(".env");
    let current = match std::fs::symlink_metadata(&dest) {
        Ok(m) if m.is_file() && m.len() <= 16 * 1024 * 1024 => {
            std::fs::read(&dest).ok().map(|d| sha256_hex(&d))
        }
        _ => None,
    };
    if let Some(cur) = &current {
        let canonical = source
            .and_then(|s| std::fs::metadata(s).ok().filter(|m| m.is_file()).map(|_| s))
            .and_then(|s| std::fs::read(s).ok())
            .map(|d| sha256_hex(&d));
        if canonical.as_deref() == Some(cur.as_str()) {
            return EnvOutcome::Unchanged;
        }
        if recorded_hash != Some(cur.as_str()) {
            return EnvOutcome::KeptEdited {
                canonical_changed: canonical.as_deref() != recorded_hash,
            };
        }
    }
    copy_env(source, box_root, tracked_in_repo)
}

pub fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

#[derive(Debug, thiserror::Error)]
pub enum SubmoduleError {
    #[error("submodule path {path:?} escapes the box")]
    UnsafePath { path: String },
    #[error("could not read .gitmodules")]
    Read(#[from] git2::Error),
    #[error("could not check out submodules")]
    Update(#[from] CmdError),
}

/// A submodule path from `.gitmodules` is repo-provided: relative, no `..`, no
/// absolute or prefix components, and no symlink on the way inside the box.
pub fn check_submodule_path(box_root: &Path, rel: &str) -> Result<(), SubmoduleError> {
    let unsafe_path = || SubmoduleError::UnsafePath {
        path: rel.to_string(),
    };
    if rel.is_empty() || rel.starts_with('-') || rel.chars().any(char::is_control) {
        return Err(unsafe_path());
    }
    let p = Path::new(rel);
    let mut cur = box_root.to_path_buf();
    for c in p.components() {
        match c {
            Component::Normal(n) => {
                cur.push(n);
                if let Ok(m) = std::fs::symlink_metadata(&cur) {
                    if m.file_type().is_symlink() {
                        return Err(unsafe_path());
                    }
                }
            }
            _ => return Err(unsafe_path()),
        }
    }
    Ok(())
}

/// Check out every submodule at the commit the box's branch pins (not a copy of the
/// main checkout's possibly dirty submodules). Returns how many there were.
pub fn update_submodules(git: &GitCli, box_root: &Path) -> Result<usize, SubmoduleError> {
    if !box_root.join(".gitmodules").is_file() {
        return Ok(0);
    }
    let repo = git2::Repository::open(box_root)?;
    let subs = repo.submodules()?;
    for s in &subs {
        let rel = s.path().to_string_lossy().into_owned();
        check_submodule_path(box_root, &rel)?;
    }
    if subs.is_empty() {
        return Ok(0);
    }
    git.cmd(box_root)
        .args(["submodule", "update", "--init", "--recursive", "--quiet"])
        .output()?;
    Ok(subs.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excludes_appended_once() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("info")).unwrap();
        std::fs::write(d.path().join("info/exclude"), "# mine").unwrap();
        ensure_excludes(d.path()).unwrap();
        ensure_excludes(d.path()).unwrap();
        let t = std::fs::read_to_string(d.path().join("info/exclude")).unwrap();
        assert_eq!(t, "# mine\n/.treebox/\n/.env\n");
    }

    #[test]
    fn env_never_written_through_symlink() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("src.env");
        std::fs::write(&src, "K=v\n").unwrap();
        let bx = d.path().join("box");
        std::fs::create_dir(&bx).unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, bx.join(".env")).unwrap();
        assert!(matches!(
            copy_env(Some(&src), &bx, false),
            EnvOutcome::Refused { .. }
        ));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        std::fs::remove_file(bx.join(".env")).unwrap();
        assert!(matches!(
            copy_env(Some(&src), &bx, false),
            EnvOutcome::Copied { .. }
        ));
        let m = std::fs::metadata(bx.join(".env")).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn refresh_keeps_edits_made_in_the_box() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("src.env");
        let bx = d.path().join("box");
        std::fs::create_dir(&bx).unwrap();
        std::fs::write(&src, "A=1\n").unwrap();
        let EnvOutcome::Copied { hash } = copy_env(Some(&src), &bx, false) else {
            panic!("copy")
        };
        assert_eq!(
            refresh_env(Some(&src), &bx, false, Some(&hash)),
            EnvOutcome::Unchanged
        );
        // Canonical changed, box copy untouched: refreshed.
        std::fs::write(&src, "A=2\n").unwrap();
        let EnvOutcome::Copied { hash } = refresh_env(Some(&src), &bx, false, Some(&hash)) else {
            panic!("refresh")
        };
        assert_eq!(std::fs::read_to_string(bx.join(".env")).unwrap(), "A=2\n");
        // Edited in the box, canonical as copied: kept, nothing to say.
        std::fs::write(bx.join(".env"), "A=mine\n").unwrap();
        assert_eq!(
            refresh_env(Some(&src), &bx, false, Some(&hash)),
            EnvOutcome::KeptEdited {
                canonical_changed: false
            }
        );
        // Edited in the box, canonical changed again: the edit is kept, and said.
        std::fs::write(&src, "A=3\n").unwrap();
        assert_eq!(
            refresh_env(Some(&src), &bx, false, Some(&hash)),
            EnvOutcome::KeptEdited {
                canonical_changed: true
            }
        );
        assert_eq!(
            std::fs::read_to_string(bx.join(".env")).unwrap(),
            "A=mine\n"
        );
        // Deleted in the box: copied again.
        std::fs::remove_file(bx.join(".env")).unwrap();
        assert!(matches!(
            refresh_env(Some(&src), &bx, false, Some(&hash)),
            EnvOutcome::Copied { .. }
        ));
    }

    #[test]
    fn tracked_symlink_source_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let secret = d.path().join("secret");
        std::fs::write(&secret, "AWS=1").unwrap();
        let src = d.path().join(".env");
        std::os::unix::fs::symlink(&secret, &src).unwrap();
        let bx = d.path().join("box");
        std::fs::create_dir(&bx).unwrap();
        assert!(matches!(
            copy_env(Some(&src), &bx, true),
            EnvOutcome::Refused { .. }
        ));
        assert!(!bx.join(".env").exists());
        assert!(matches!(
            copy_env(Some(&src), &bx, false),
            EnvOutcome::Copied { .. }
        ));
    }

    #[test]
    fn submodule_paths() {
        let d = tempfile::tempdir().unwrap();
        assert!(check_submodule_path(d.path(), "lib/sub").is_ok());
        for bad in ["../x", "/etc", "a/../../b", "", "-x", "a\nb"] {
            assert!(check_submodule_path(d.path(), bad).is_err(), "{bad}");
        }
        std::os::unix::fs::symlink("/tmp", d.path().join("link")).unwrap();
        assert!(check_submodule_path(d.path(), "link/sub").is_err());
    }
}
