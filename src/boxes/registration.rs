//! A worktree box's registration, `<common>/worktrees/<id>/`, judged without reading it.
//!
//! The box can write its registration (its admin dir is mounted into a container with
//! it). git reads *every* registration in `worktree add` and in `fetch` (`rev-list
//! --all`): a FIFO there, or a symlink to a device, hangs it; a box can also fill its
//! `HEAD` with junk. Such a box is broken; only stat calls and small reads happen here.

use std::path::{Path, PathBuf};

use crate::git::repo::canonical;
use crate::state::Record;
use crate::vocab::GitMode;

/// Files git reads whole, and keeps small.
const SMALL: &[&str] = &["gitdir", "HEAD", "commondir", "locked", "ORIG_HEAD"];
/// Files git reads (or maps) that may be large.
const LARGE: &[&str] = &["index", "config.worktree", "logs/HEAD"];
const SMALL_MAX: u64 = 64 << 10;

/// Would reading this admin dir block or leave it: a file git reads that is a FIFO, a
/// device, a symlink or (where git keeps a line) oversized, or the dir itself not a
/// plain directory?
pub fn registration_blocks(admin: &Path) -> bool {
    if !std::fs::symlink_metadata(admin).is_ok_and(|m| m.is_dir()) {
        return true;
    }
    let bad = |f: &str, max: u64| match std::fs::symlink_metadata(admin.join(f)) {
        Ok(m) => !m.is_file() || m.len() > max,
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    };
    SMALL.iter().any(|f| bad(f, SMALL_MAX)) || LARGE.iter().any(|f| bad(f, u64::MAX))
}

/// Does a small file hold junk: not one line of text, or (for `HEAD`) neither a
/// symbolic ref nor an object id?
fn junk(admin: &Path) -> bool {
    let text = |f: &str| match std::fs::read(admin.join(f)) {
        Ok(b) => Some(String::from_utf8(b).ok().filter(|t| !t.contains('\0'))),
        Err(_) => None,
    };
    let one_line = |t: &str| !t.trim().is_empty() && t.trim_end().lines().count() == 1;
    let head_ok = |t: &str| {
        let t = t.trim_end();
        t.strip_prefix("ref: refs/").is_some_and(|r| !r.is_empty())
            || (matches!(t.len(), 40 | 64) && t.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    match text("HEAD") {
        Some(Some(t)) if head_ok(&t) => {}
        // A missing HEAD is git's own half-made registration, not junk.
        None => {}
        Some(_) => return true,
    }
    ["gitdir", "commondir"]
        .iter()
        .any(|f| matches!(text(f), Some(t) if !t.as_deref().is_some_and(one_line)))
}

/// The registration of a worktree box (`record`) when its files are hostile: ones git
/// would hang on ([`registration_blocks`]) or junk. Found through the box's `.git`
/// pointer when it names a dir under `<common>/worktrees/`, else by the box's name.
pub fn hostile_registration(record: &Record) -> Option<PathBuf> {
    if record.git_mode != GitMode::Worktree {
        return None;
    }
    let worktrees = record.common_dir.join("worktrees");
    let pointer = record.path.join(".git");
    let small = std::fs::symlink_metadata(&pointer).is_ok_and(|m| m.is_file() && m.len() < 4096);
    let named = small
        .then(|| crate::git::repo::read_plain(&pointer))
        .flatten()
        .and_then(|t| {
            let dir = PathBuf::from(t.trim().strip_prefix("gitdir: ")?);
            let id = dir.file_name()?.to_owned();
            let under = dir.parent().map(canonical) == Some(canonical(&worktrees));
            under.then(|| worktrees.join(id))
        });
    let admin = named.unwrap_or_else(|| worktrees.join(&record.name));
    if std::fs::symlink_metadata(&admin).is_err() {
        return None;
    }
    (registration_blocks(&admin) || junk(&admin)).then_some(admin)
}
