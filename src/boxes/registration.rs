//! A worktree box's registration, `<common>/worktrees/<id>/`, judged without reading it.
//!
//! The box can write its registration (its admin dir is mounted into a container with
//! it). git reads *every* registration in `worktree add` and in `fetch` (`rev-list
//! --all`): a FIFO there, or a symlink to a device, hangs it; a box can also fill its
//! `HEAD` with junk. Such a box is broken; only stat calls and small reads happen here.
//! A clone box's own `.git` is judged the same way ([`hostile_clone_git`]).

use std::path::{Path, PathBuf};

use crate::git::caps::Caps;
use crate::git::repo::canonical;
use crate::state::Record;
use crate::vocab::GitMode;

/// Files git reads whole, and keeps small.
pub(crate) const SMALL: &[&str] = &["gitdir", "HEAD", "commondir", "locked", "ORIG_HEAD"];
/// Files git reads (or maps) that may be large: held to their caps
/// ([`crate::git::caps`]), which grow with the user's repository.
pub(crate) const LARGE: &[&str] = &["index", "config.worktree", "logs/HEAD"];
const SMALL_MAX: u64 = 64 << 10;

/// Would reading this admin dir block or leave it: a file git reads that is a FIFO, a
/// device, a symlink or oversized (past [`SMALL_MAX`] where git keeps a line, past its
/// cap in `caps` where it may grow), or the dir itself not a plain directory?
pub fn registration_blocks(admin: &Path, caps: &Caps) -> bool {
    if !std::fs::symlink_metadata(admin).is_ok_and(|m| m.is_dir()) {
        return true;
    }
    let bad = |f: &str, max: u64| match std::fs::symlink_metadata(admin.join(f)) {
        Ok(m) => !m.is_file() || m.len() > max,
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    };
    SMALL.iter().any(|f| bad(f, SMALL_MAX)) || LARGE.iter().any(|f| bad(f, caps.of_file(f)))
}

/// A registration's `HEAD` and `gitdir` as the inventory read them, so that judging
/// the box ([`hostile_registration_seen`]) does not read them again. `Some` bytes are
/// what reading the file whole gave; `None`: not read (judged by reading it then).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// The admin dir these were read in.
    pub admin: PathBuf,
    pub head: Option<Vec<u8>>,
    pub gitdir: Option<Vec<u8>>,
}

/// The bytes of the file at `path` when it is a regular file (a link followed) of at
/// most `max` bytes: the size first, so nothing that could block is ever opened; then
/// one read of that size (no second stat on the open file).
pub fn read_small(path: &Path, max: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    let len = std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_file() && m.len() <= max)?
        .len();
    let mut buf = Vec::with_capacity(usize::try_from(len).ok()? + 1);
    std::fs::File::open(path)
        .ok()?
        .take(max + 1)
        .read_to_end(&mut buf)
        .ok()?;
    (buf.len() as u64 <= max).then_some(buf)
}

/// Does a small file hold junk: not one line of text, or (for `HEAD`) neither a
/// symbolic ref nor an object id? `seen`: what the inventory read of this admin dir.
fn junk(admin: &Path, seen: Option<&Seen>) -> bool {
    let seen = seen.filter(|s| s.admin == admin);
    let known = |f: &str| match f {
        "HEAD" => seen.and_then(|s| s.head.clone()),
        "gitdir" => seen.and_then(|s| s.gitdir.clone()),
        _ => None,
    };
    // Read as `registration_blocks` measured them: at most `SMALL_MAX`, on the file
    // opened (one swapped in since is never read whole).
    let read = |f: &str| {
        use crate::untrusted::{read_regular, Links, Unread};
        match read_regular(&admin.join(f), SMALL_MAX, Links::Refuse) {
            Ok(b) => Ok(b),
            Err(Unread::Absent | Unread::Failed) => Err(()),
            // Too large, or no longer a regular file: junk.
            Err(Unread::TooLarge | Unread::NotRegular) => Ok(b"\0".to_vec()),
        }
    };
    let text = |f: &str| match known(f).map_or_else(|| read(f), Ok) {
        Ok(b) => Some(String::from_utf8(b).ok().filter(|t| !t.contains('\0'))),
        Err(()) => None,
    };
    let one_line = |t: &str| !t.trim().is_empty() && t.trim_end().lines().count() == 1;
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

/// A symbolic ref or an object id: what git accepts in a `HEAD`.
fn head_ok(t: &str) -> bool {
    let t = t.trim_end();
    t.strip_prefix("ref: refs/").is_some_and(|r| !r.is_empty())
        || (matches!(t.len(), 40 | 64) && t.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The first `n` bytes of the regular file at `path` (fewer when it is shorter).
fn head_bytes(path: &Path, n: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut b = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(n)
        .read_to_end(&mut b)
        .ok()?;
    Some(b)
}

/// Files of a clone's `.git` git reads as files: never a link, a dir or a device.
const CLONE_FILES: &[&str] = &[
    "HEAD",
    "config",
    "index",
    "packed-refs",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "shallow",
    "logs/HEAD",
    "objects/info/alternates",
    "info/exclude",
    "info/attributes",
];

/// Would git hang on, or misread, the clone's git dir `git_dir`: not a plain directory,
/// a file it reads that is a FIFO, a device or a symlink (anywhere under `refs/` and
/// `objects/pack/` too, see [`crate::git::repo::plain_git_dir`]), or junk where git
/// keeps a `HEAD`, an index, a packed-refs or a config? Stat calls and the first bytes
/// of a few small files only.
pub fn hostile_clone_git(git_dir: &Path, caps: &Caps) -> bool {
    if !std::fs::symlink_metadata(git_dir).is_ok_and(|m| m.is_dir()) {
        return true;
    }
    let not_file = |f: &&str| match std::fs::symlink_metadata(git_dir.join(f)) {
        Ok(m) => !m.is_file(),
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    };
    if CLONE_FILES.iter().any(not_file) || !crate::git::repo::plain_git_dir(git_dir, caps) {
        return true;
    }
    let start = |f: &str| head_bytes(&git_dir.join(f), SMALL_MAX + 1);
    let text = |b: Vec<u8>| String::from_utf8(b).ok().filter(|t| !t.contains('\0'));
    // HEAD: one line, a symbolic ref or an object id.
    if !start("HEAD").and_then(text).is_some_and(|t| {
        t.len() as u64 <= SMALL_MAX && head_ok(&t) && t.trim_end().lines().count() == 1
    }) {
        return true;
    }
    // The index opens with its signature.
    if start("index").is_some_and(|b| !b.is_empty() && !b.starts_with(b"DIRC")) {
        return true;
    }
    // packed-refs: its header, or a first line `<id> refs/...`.
    let packed_ok = |t: &str| {
        let first = t.lines().next().unwrap_or("");
        first.starts_with("# pack-refs with:")
            || first
                .split_once(' ')
                .is_some_and(|(id, r)| head_ok(id) && r.starts_with("refs/"))
    };
    if start("packed-refs").is_some_and(|b| {
        !b.is_empty()
            && !String::from_utf8_lossy(&b)
                .split('\n')
                .next()
                .is_some_and(packed_ok)
    }) {
        return true;
    }
    // An include naming a FIFO or device would block libgit2's and git's reads.
    if crate::git::blocking_include(&git_dir.join("config")).is_some() {
        return true;
    }
    // config: text whose lines are sections, comments, `key = value` or continuations.
    start("config").is_some_and(|b| match text(b) {
        Some(t) => !config_ok(&t),
        None => true,
    })
}

/// Does `t` read as a git config file (its first 64 KiB: no line judged past that)?
fn config_ok(t: &str) -> bool {
    let mut continued = false;
    for line in t.lines() {
        let l = line.trim();
        let was = continued;
        continued = l.ends_with('\\');
        if was || l.is_empty() || l.starts_with(['#', ';', '[']) {
            continue;
        }
        if !l.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return false;
        }
        let key = l.split(['=', ' ', '\t']).next().unwrap_or("");
        if !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return false;
        }
    }
    true
}

/// The registration of a worktree box (`record`) when its files are hostile: ones git
/// would hang on ([`registration_blocks`]) or junk. Found through the box's `.git`
/// pointer when it names a dir under `<common>/worktrees/`, else by the box's name.
/// For a clone box, its own `.git` when that is a directory judged hostile by
/// [`hostile_clone_git`] (one that is gone or not a directory is `checkout_intact`'s).
/// For a sandboxed worktree, its bare clone judged like a clone's `.git`, then its
/// registration there (which must point back at the bare clone).
pub fn hostile_registration(record: &Record) -> Option<PathBuf> {
    hostile_registration_seen(record, None)
}

/// [`hostile_registration`], with what the inventory already read of the box's
/// registration ([`Seen`]; used only when it is the admin dir judged).
pub fn hostile_registration_seen(record: &Record, seen: Option<&Seen>) -> Option<PathBuf> {
    if let Some(own) = super::OwnGit::of(record) {
        return hostile_own_git(&own);
    }
    if record.git_mode != GitMode::Worktree {
        return None;
    }
    let (admin, _) = judged_admin(record);
    if std::fs::symlink_metadata(&admin).is_err() {
        return None;
    }
    let include_blocks = crate::git::blocking_include(&admin.join("config.worktree")).is_some();
    let caps = Caps::of(&record.common_dir);
    (registration_blocks(&admin, &caps) || junk(&admin, seen) || include_blocks).then_some(admin)
}

/// The registration [`hostile_registration`] judges for a worktree box (`record`): the
/// admin dir its `.git` pointer names under `<common>/worktrees/`, else the one named
/// like the box. The flag: found from the files' bytes alone, no path resolved (the
/// summary cache of `list` keeps a judgement only then).
pub(crate) fn judged_admin(record: &Record) -> (PathBuf, bool) {
    let worktrees = record.common_dir.join("worktrees");
    let pointer = record.path.join(".git");
    let small = std::fs::symlink_metadata(&pointer).is_ok_and(|m| m.is_file() && m.len() < 4096);
    let mut literal = true;
    let named = small
        .then(|| read_small(&pointer, 1 << 20))
        .flatten()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|t| {
            let dir = PathBuf::from(t.trim().strip_prefix("gitdir: ")?);
            let id = dir.file_name()?.to_owned();
            // The literal path first: the usual case, without resolving both paths
            // (a readlink per component, for every box `list` shows).
            let under = dir.parent().is_some_and(|p| {
                p == worktrees || {
                    literal = false;
                    canonical(p) == canonical(&worktrees)
                }
            });
            under.then(|| worktrees.join(id))
        });
    (
        named.unwrap_or_else(|| worktrees.join(&record.name)),
        literal,
    )
}

/// The git dir of a box's own git data ([`super::OwnGit`]) that is hostile, judged
/// as [`hostile_registration`] judges it: a clone's `.git` ([`hostile_clone_git`]), or
/// a sandboxed worktree's bare clone (the same) and then its registration there (which
/// must point back at the bare clone). `None` when the git dir is gone or not a
/// directory (that is `checkout_intact`'s to judge).
pub fn hostile_own_git(own: &super::OwnGit) -> Option<PathBuf> {
    let common = &own.common;
    if !std::fs::symlink_metadata(common).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    if hostile_clone_git(common, &own.caps) {
        return Some(common.clone());
    }
    if !own.is_worktree() {
        return None;
    }
    let admin = &own.head_dir;
    if std::fs::symlink_metadata(admin).is_err() {
        return None;
    }
    let include_blocks = crate::git::blocking_include(&admin.join("config.worktree")).is_some();
    let hostile = registration_blocks(admin, &own.caps)
        || junk(admin, None)
        || include_blocks
        || !crate::git::repo::plain_git_dir(admin, &own.caps)
        || !own.commondir_ok();
    hostile.then(|| admin.clone())
}

#[cfg(test)]
mod tests {
    use super::config_ok;

    #[test]
    fn config_ok_takes_what_git_writes_and_refuses_junk() {
        let real = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\
                    [remote \"origin\"]\n\turl = /x\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\
                    # a comment\n; another\n[alias]\n\tst = \"!sh -c \\\n  status\"\n\tflag\n";
        assert!(config_ok(real));
        assert!(!config_ok("\u{1b}[2Jjunk\n"));
        assert!(!config_ok("[core]\n\t=bare\n"));
        assert!(!config_ok("[core]\n\tbare.x = 1\n"));
    }
}
