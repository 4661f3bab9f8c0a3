//! A libgit2 status of a box's work tree that reads nothing unbounded (issue 38).
//!
//! libgit2 reads, during a status, files the box wrote: every `.gitignore` of every
//! directory it walks (untracked ones too, until it finds a file), `.gitattributes`
//! along a path it must hash, `info/exclude`, `info/attributes`, and whatever
//! `core.excludesFile` and `core.attributesFile` name; and it hashes every tracked file
//! whose stat data differs from the index (loading it whole when an attribute filters
//! it). A FIFO there blocks the host in `open()`; a sparse 4 GiB file costs the box no
//! disk and the host seconds and gigabytes, per box, per command. Before libgit2 is
//! asked, [`changes`]:
//!
//! - overrides the two config keys with the values the user's own config gives them
//!   (an in-memory config level above the box's; [`harden`]);
//! - walks the directories libgit2 will walk (the tracked ones; the untracked ones it
//!   would look into), reading only directory entries (their type comes with them),
//!   and measures every ignore and attribute file there: one not a regular file, over
//!   [`MAX_RULES_FILE`], or past [`MAX_RULES_TOTAL`] altogether → unreadable (`None`,
//!   the caller's `unknown`);
//! - reads every tracked file's stat data in those directories and compares it with
//!   its index entry, at least as strictly as libgit2 does; libgit2's status is then
//!   asked only about the paths that differ, the untracked, the deleted and the
//!   conflicted (an exact pathspec: its walk stats nothing else), beside a HEAD-to-index
//!   diff of every path (HEAD's tree counted first, within the budget
//!   [`crate::git::trees::budget_for`] gives the index's size). A file over
//!   [`MAX_HASHED`] that differs is never handed to
//!   it: "changed (not read)" when its size or mtime differs from the index or it is
//!   racily clean, else unchanged. The walk does what libgit2's own walk did (a
//!   `readdir` per directory, a stat per file), so a normal box costs what it did.
//!
//! What remains (a file swapped for a FIFO between the walk and libgit2's open) is
//! what [`super::deadline`] is for. Callers: [`super::assess`].

use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, c_int, c_void, OsStr};
use std::fs::{DirEntry, Metadata};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use git2::Binding;

/// An ignore or attribute file larger than this makes the box's status unreadable.
pub const MAX_RULES_FILE: u64 = 1 << 20;
/// All ignore and attribute files of one status together.
pub const MAX_RULES_TOTAL: u64 = 16 << 20;
/// A tracked file larger than this is never hashed by a host status: when its stat
/// data differs from the index it is changed (not read).
pub const MAX_HASHED: u64 = 32 << 20;

/// What the caller needs of the status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Only whether anything changed: the read stops once that is known.
    Dirty,
    /// Every changed path (what `assess` digests).
    Changes,
}

/// One changed path and its `git2::Status` bits.
pub type Change = (Vec<u8>, u32);

/// The box's changed paths (tracked or untracked, not ignored), read under the bounds
/// above; `None` when they cannot be read within them. `trusted` is the user's own
/// config file that may name the ignore and attribute files (`None` for a box whose
/// git data is its own: then only the user's global config does).
pub fn changes(r: &git2::Repository, want: Want, trusted: Option<&Path>) -> Option<Vec<Change>> {
    changes_at(r, want, trusted, 0)
}

/// Submodules within submodules a status follows; deeper, the box is unreadable.
const MAX_NESTING: u8 = 2;

/// The mode of a gitlink (a submodule's commit) in the index.
const GITLINK: u32 = 0o160000;

/// [`changes`] of a repository `depth` submodules down.
fn changes_at(
    r: &git2::Repository,
    want: Want,
    trusted: Option<&Path>,
    depth: u8,
) -> Option<Vec<Change>> {
    harden(r, trusted).ok()?;
    let workdir = r.workdir()?.to_path_buf();
    for f in ["info/exclude", "info/attributes"] {
        rules_file_ok(
            &std::fs::symlink_metadata(r.commondir().join(f)).ok(),
            &mut 0,
        )?;
    }
    let index = r.index().ok()?;
    // Submodules: libgit2 would open each and run a status there with nothing of the
    // above; they are read here instead, each with the same bounds.
    let mut gitlinks: Vec<(Vec<u8>, git2::Oid)> = Vec::new();
    let mut entries: HashMap<Vec<u8>, git2::IndexEntry> = HashMap::new();
    let mut ask: Vec<Vec<u8>> = Vec::new();
    // Every directory holding a tracked path (the root too), as libgit2's walk enters
    // them.
    let mut tracked: HashSet<Vec<u8>> = HashSet::from([Vec::new()]);
    for mut e in index.iter() {
        let mut p = e.path.as_slice();
        while let Some(slash) = p.iter().rposition(|&b| b == b'/') {
            p = &p[..slash];
            if tracked.contains(p) {
                break;
            }
            tracked.insert(p.to_vec());
        }
        if e.flags & STAGE_MASK != 0 {
            ask.push(e.path); // a conflict: libgit2 says what it is
        } else if e.mode == GITLINK {
            gitlinks.push((e.path, e.id));
        } else {
            entries.insert(std::mem::take(&mut e.path), e);
        }
    }
    let stamp = index
        .path()
        .and_then(|p| std::fs::symlink_metadata(p).ok())
        .map_or((0, 0), |m| (m.mtime(), m.mtime_nsec()));
    let mut walk = Walk {
        repo: r,
        workdir: &workdir,
        tracked,
        gitlinks: gitlinks.iter().map(|(p, _)| p.clone()).collect(),
        entries,
        stamp,
        ask,
        rules: 0,
        big: Vec::new(),
        untracked: false,
    };
    walk.tracked_dir(Vec::new())?;
    if want == Want::Dirty && walk.untracked {
        return Some(vec![(Vec::new(), git2::Status::WT_NEW.bits())]);
    }
    let mut out: Vec<Change> = Vec::new();
    for (path, oid) in gitlinks {
        if submodule_changed(&workdir.join(OsStr::from_bytes(&path)), oid, depth)? {
            out.push((path, git2::Status::WT_MODIFIED.bits()));
        }
    }
    for (path, meta, e) in std::mem::take(&mut walk.big) {
        if judge_big(&e, &meta, stamp) == Big::Changed {
            out.push((path, git2::Status::WT_MODIFIED.bits()));
        }
    }
    if want == Want::Dirty && !out.is_empty() {
        return Some(out);
    }
    // What status compares first, HEAD against the index, for every path (no work tree
    // read).
    let head = match r.head() {
        Ok(h) => Some(h.peel_to_tree().ok()?),
        Err(e)
            if matches!(
                e.code(),
                git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound
            ) =>
        {
            None
        }
        Err(_) => return None,
    };
    // That diff walks HEAD's whole tree: counted first, each tree object read once,
    // within the budget a tree the size of the index has (a box that committed 4 M
    // files made of 22 trees, and left its index alone, is unknown here).
    if let Some(h) = &head {
        let budget = crate::git::trees::budget_for(index.len() as u64);
        let n = crate::git::trees::Trees::new(r, budget)
            .entries(h.id())
            .ok()?;
        if n > budget {
            return None;
        }
    }
    let mut staged_opts = git2::DiffOptions::new();
    staged_opts.include_typechange(true).ignore_submodules(true);
    let staged = r
        .diff_tree_to_index(head.as_ref(), Some(&index), Some(&mut staged_opts))
        .ok()?;
    for d in staged.deltas() {
        let bits = match d.status() {
            git2::Delta::Added => git2::Status::INDEX_NEW,
            git2::Delta::Deleted => git2::Status::INDEX_DELETED,
            git2::Delta::Typechange => git2::Status::INDEX_TYPECHANGE,
            git2::Delta::Renamed => git2::Status::INDEX_RENAMED,
            _ => git2::Status::INDEX_MODIFIED,
        };
        let file = if d.status() == git2::Delta::Deleted {
            d.old_file()
        } else {
            d.new_file()
        };
        let path = file.path_bytes().unwrap_or_default().to_vec();
        out.push((path, bits.bits()));
    }
    // The work tree: libgit2 is asked only about the paths whose stat data did not
    // match their index entry exactly (and the untracked, the deleted, the conflicted):
    // its status of the others would be "unmodified" without a read, and it stats
    // nothing it is not asked about.
    let mut ask = std::mem::take(&mut walk.ask);
    // Entries whose file the walk did not find: deleted, or no longer a file.
    ask.extend(walk.entries.into_keys());
    if !ask.is_empty() {
        let mut opts = git2::StatusOptions::new();
        opts.include_untracked(true)
            .include_ignored(false)
            .recurse_untracked_dirs(false)
            .exclude_submodules(true)
            .disable_pathspec_match(true);
        for p in &ask {
            opts.pathspec(OsStr::from_bytes(p));
        }
        let statuses = r.statuses(Some(&mut opts)).ok()?;
        let wt = git2::Status::WT_NEW
            | git2::Status::WT_MODIFIED
            | git2::Status::WT_DELETED
            | git2::Status::WT_TYPECHANGE
            | git2::Status::WT_RENAMED
            | git2::Status::WT_UNREADABLE
            | git2::Status::CONFLICTED;
        out.extend(statuses.iter().filter_map(|e| {
            let bits = e.status() & wt;
            (!bits.is_empty()).then(|| (e.path_bytes().to_vec(), bits.bits()))
        }));
    }
    // One entry per path, its bits together, in path order (as status lists them).
    out.sort();
    let mut merged: Vec<Change> = Vec::with_capacity(out.len());
    for (p, bits) in out {
        match merged.last_mut() {
            Some((q, b)) if *q == p => *b |= bits,
            _ => merged.push((p, bits)),
        }
    }
    Some(merged)
}

/// The stage bits of an index entry's flags (0: not a conflict).
const STAGE_MASK: u16 = 0x3000;

/// Does the submodule checked out at `dir` differ from the commit the index records
/// (`oid`): another HEAD, or changes of its own (untracked files too, as `git status`
/// counts them)? Not checked out (no `.git`): no. `None`: it cannot be read within the
/// bounds — its git dir judged as a box's ([`plain_git_dir`], a `.git` file read only
/// as a small regular file), then [`changes_at`] one level down.
fn submodule_changed(dir: &Path, oid: git2::Oid, depth: u8) -> Option<bool> {
    use crate::git::caps::Caps;
    use crate::git::repo::{plain_git_dir, read_plain};
    let dotgit = dir.join(".git");
    let Ok(m) = std::fs::symlink_metadata(&dotgit) else {
        return Some(false);
    };
    if depth >= MAX_NESTING {
        return None;
    }
    let git_dir = if m.is_dir() {
        dotgit
    } else if m.is_file() {
        let named = read_plain(&dotgit)?;
        let named = Path::new(named.trim().strip_prefix("gitdir: ")?);
        dir.join(named)
    } else {
        return None;
    };
    if !plain_git_dir(&git_dir, &Caps::FLOOR) {
        return None;
    }
    let sub = git2::Repository::open(dir).ok()?;
    if sub.head().ok().and_then(|h| h.target()) != Some(oid) {
        return Some(true);
    }
    Some(!changes_at(&sub, Want::Dirty, None, depth + 1)?.is_empty())
}

/// What a tracked file over [`MAX_HASHED`] whose stat data is not exactly its index
/// entry's is.
#[derive(Debug, PartialEq, Eq)]
enum Big {
    /// Size and mtime as the index has them (its ctime, inode or owner differ, as a
    /// container's view of them does): unchanged, and not read.
    Same,
    /// Size or mtime differ, or the entry is racily clean or zeroed: changed, not read.
    Changed,
}

fn judge_big(e: &git2::IndexEntry, m: &Metadata, stamp: (i64, i64)) -> Big {
    let same_size = u64::from(e.file_size) == m.len();
    let same_mtime = i64::from(e.mtime.seconds()) == m.mtime()
        && i64::from(e.mtime.nanoseconds()) == m.mtime_nsec();
    if same_size && same_mtime && !racy(m, stamp) {
        Big::Same
    } else {
        Big::Changed
    }
}

/// Written no earlier than the index (`stamp`, its mtime): libgit2 hashes such a file
/// to be sure.
fn racy(m: &Metadata, stamp: (i64, i64)) -> bool {
    (m.mtime(), m.mtime_nsec()) >= stamp
}

/// Is the file's stat data exactly its index entry's (mode, size, mtime, ctime, inode,
/// owner), and not racy? Then libgit2 calls it unmodified without reading it; this is
/// at least as strict as libgit2 (which may skip ctime or the mode bits).
fn unchanged(e: &git2::IndexEntry, m: &Metadata, stamp: (i64, i64)) -> bool {
    let mode = match e.mode {
        0o100644 => m.is_file() && m.mode() & 0o100 == 0,
        0o100755 => m.is_file() && m.mode() & 0o100 != 0,
        0o120000 => m.file_type().is_symlink(),
        _ => false,
    };
    mode && u64::from(e.file_size) == m.len() & 0xffff_ffff
        && i64::from(e.mtime.seconds()) == m.mtime()
        && i64::from(e.mtime.nanoseconds()) == m.mtime_nsec()
        && i64::from(e.ctime.seconds()) == m.ctime()
        && i64::from(e.ctime.nanoseconds()) == m.ctime_nsec()
        && e.ino == m.ino() as u32
        && e.uid == m.uid()
        && e.gid == m.gid()
        && !racy(m, stamp)
}

/// The walk [`changes`] makes before libgit2's.
struct Walk<'a> {
    repo: &'a git2::Repository,
    workdir: &'a Path,
    tracked: HashSet<Vec<u8>>,
    /// Submodules' paths: read apart ([`submodule_changed`]), never walked here.
    gitlinks: HashSet<Vec<u8>>,
    /// The index's stage-0 entries (submodules apart), by path, each taken out once
    /// the walk measured its file.
    entries: HashMap<Vec<u8>, git2::IndexEntry>,
    /// The index file's mtime (what racily clean is judged against).
    stamp: (i64, i64),
    /// Paths libgit2 is to judge: not exactly as the index has them, or not in it.
    ask: Vec<Vec<u8>>,
    /// Bytes of ignore and attribute files seen so far.
    rules: u64,
    /// Tracked files over [`MAX_HASHED`] whose stat data differs, with it and their
    /// index entry.
    big: Vec<(Vec<u8>, Metadata, git2::IndexEntry)>,
    /// An untracked file that is not ignored was seen.
    untracked: bool,
}

impl Walk<'_> {
    fn abs(&self, rel: &[u8]) -> PathBuf {
        self.workdir.join(OsStr::from_bytes(rel))
    }

    /// A directory's entries, its ignore and attribute files measured first (`None`:
    /// one is hostile, or the directory cannot be read as one).
    fn entries(&mut self, rel: &[u8]) -> Option<Vec<DirEntry>> {
        let dir = match std::fs::read_dir(self.abs(rel)) {
            Ok(d) => d,
            // Gone meanwhile (or never there: a sparse checkout): libgit2 skips it too.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Vec::new()),
            Err(_) => return None,
        };
        let entries: Vec<DirEntry> = dir.collect::<Result<_, _>>().ok()?;
        for e in &entries {
            let name = e.file_name();
            if name == ".gitignore" || name == ".gitattributes" {
                rules_file_ok(&e.metadata().ok(), &mut self.rules)?;
            }
        }
        Some(entries)
    }

    /// A directory with tracked paths: every subdirectory libgit2 enters is walked;
    /// its files' sizes are read (tracked files over the cap are kept).
    fn tracked_dir(&mut self, rel: Vec<u8>) -> Option<()> {
        let entries = self.entries(&rel)?;
        for e in entries {
            let name = e.file_name();
            let child = join(&rel, name.as_bytes());
            let kind = e.file_type().ok()?;
            if kind.is_dir() {
                if rel.is_empty() && name == ".git" {
                    continue;
                }
                if self.gitlinks.contains(&child) {
                    continue;
                }
                if self.tracked.contains(&child) {
                    self.tracked_dir(child)?;
                } else if !self.ignored(&child, true)? && self.untracked_dir(child.clone())? {
                    // libgit2 looks into it for a file that is not ignored, as here.
                    self.untracked = true;
                    self.ask.push(child);
                }
            } else if kind.is_file() || kind.is_symlink() {
                let m = e.metadata().ok()?;
                match self.entries.remove(&child) {
                    Some(ie) if unchanged(&ie, &m, self.stamp) => {}
                    Some(ie) if m.is_file() && m.len() > MAX_HASHED => {
                        self.big.push((child, m, ie))
                    }
                    _ => self.ask.push(child),
                }
            }
        }
        Some(())
    }

    /// An untracked directory, as libgit2 looks into it: entries in its order, into
    /// subdirectories that are not ignored, until a file that is not ignored (then
    /// `true`: the directory is untracked work).
    fn untracked_dir(&mut self, rel: Vec<u8>) -> Option<bool> {
        let mut entries: Vec<(Vec<u8>, bool)> = Vec::new();
        for e in self.entries(&rel)? {
            let is_dir = e.file_type().ok()?.is_dir();
            let mut name = e.file_name().as_bytes().to_vec();
            if is_dir {
                name.push(b'/');
            }
            entries.push((name, is_dir));
        }
        entries.sort();
        for (name, is_dir) in entries {
            let child = join(&rel, name.strip_suffix(b"/").unwrap_or(&name));
            if self.ignored(&child, is_dir)? {
                continue;
            }
            if !is_dir || self.untracked_dir(child)? {
                return Some(true);
            }
        }
        Some(false)
    }

    /// Do the box's ignore rules (measured already, all the way down) ignore `rel`?
    fn ignored(&self, rel: &[u8], is_dir: bool) -> Option<bool> {
        let mut p = rel.to_vec();
        if is_dir {
            p.push(b'/');
        }
        self.repo
            .is_path_ignored(Path::new(OsStr::from_bytes(&p)))
            .ok()
    }
}

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = dir.to_vec();
    if !p.is_empty() {
        p.push(b'/');
    }
    p.extend_from_slice(name);
    p
}

/// An ignore or attribute file libgit2 may open: absent, or a regular file within
/// [`MAX_RULES_FILE`] and, with the others, [`MAX_RULES_TOTAL`]. Not a symlink: libgit2
/// follows one (into a FIFO, a device, anything of the host's).
fn rules_file_ok(meta: &Option<Metadata>, total: &mut u64) -> Option<()> {
    let Some(m) = meta else {
        return Some(());
    };
    if !m.is_file() || m.len() > MAX_RULES_FILE {
        return None;
    }
    *total += m.len();
    (*total <= MAX_RULES_TOTAL).then_some(())
}

// The in-memory config backend of the vendored libgit2 (`git2/sys/config.h`), which
// the git2 crate does not wrap.
extern "C" {
    fn git_config_backend_from_string(
        out: *mut *mut c_void,
        cfg: *const c_char,
        len: usize,
        opts: *const c_void,
    ) -> c_int;
    fn git_config_add_backend(
        cfg: *mut c_void,
        backend: *mut c_void,
        level: c_int,
        repo: *const c_void,
        force: c_int,
    ) -> c_int;
}

/// `GIT_CONFIG_LEVEL_APP`: above the repository's own levels (local, worktree).
const LEVEL_APP: c_int = 7;

/// Give the handle's config, in memory and above every file of the box's, the
/// `core.excludesFile` and `core.attributesFile` the user's own config gives (else
/// libgit2's default, else `/dev/null`): a box's config naming a FIFO, a device or a
/// huge file is never followed. Nothing is written. Must run before the handle's
/// first status (libgit2 reads the two keys once per handle).
pub fn harden(r: &git2::Repository, trusted: Option<&Path>) -> Result<(), git2::Error> {
    let text = override_text(trusted);
    let cfg = r.config()?;
    let mut backend: *mut c_void = std::ptr::null_mut();
    // SAFETY: `text` outlives the call (the backend copies it); `backend` is set only
    // on success, and `git_config_add_backend` takes ownership of it then. On its
    // failure the backend (a few bytes) is leaked rather than freed through a struct
    // layout this crate does not know.
    let rc = unsafe {
        git_config_backend_from_string(
            &mut backend,
            text.as_ptr().cast(),
            text.len(),
            std::ptr::null(),
        )
    };
    if rc != 0 || backend.is_null() {
        return Err(git2::Error::from_str("could not make an in-memory config"));
    }
    // SAFETY: `cfg.raw()` is a live config the repository holds; the repository
    // pointer is live for the call.
    let rc = unsafe {
        git_config_add_backend(
            cfg.raw().cast(),
            backend,
            LEVEL_APP,
            r.raw().cast_const().cast(),
            1,
        )
    };
    if rc != 0 {
        return Err(git2::Error::from_str("could not add an in-memory config"));
    }
    Ok(())
}

/// The config text [`harden`] adds, from the user's config (`trusted` and the global
/// files), cached per `trusted` for the process.
fn override_text(trusted: Option<&Path>) -> String {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static MADE: Mutex<Option<HashMap<Option<PathBuf>, String>>> = Mutex::new(None);
    let key = trusted.map(Path::to_path_buf);
    if let Ok(mut m) = MADE.lock() {
        if let Some(t) = m.get_or_insert_with(HashMap::new).get(&key) {
            return t.clone();
        }
    }
    let cfg = user_config(trusted);
    let value = |key: &str, xdg: &str| {
        cfg.as_ref()
            .and_then(|c| c.get_path(key).ok())
            .or_else(|| xdg_file(xdg))
            .filter(|p| !p.as_os_str().as_bytes().contains(&b'\n'))
            .unwrap_or_else(|| PathBuf::from("/dev/null"))
    };
    let quote = |p: PathBuf| {
        let s = p
            .to_string_lossy()
            .replace('\\', "\\\\")
            .replace('"', "\\\"");
        format!("\"{s}\"")
    };
    let text = format!(
        "[core]\n\texcludesFile = {}\n\tattributesFile = {}\n",
        quote(value("core.excludesFile", "ignore")),
        quote(value("core.attributesFile", "attributes"))
    );
    if let Ok(mut m) = MADE.lock() {
        m.get_or_insert_with(HashMap::new).insert(key, text.clone());
    }
    text
}

/// The user's global config files, and `trusted` (the user's repository's own).
fn user_config(trusted: Option<&Path>) -> Option<git2::Config> {
    let mut cfg = git2::Config::new().ok()?;
    let levels = [
        (git2::Config::find_system(), git2::ConfigLevel::System),
        (git2::Config::find_xdg(), git2::ConfigLevel::XDG),
        (git2::Config::find_global(), git2::ConfigLevel::Global),
    ];
    for (path, level) in levels {
        if let Ok(p) = path {
            let _ = cfg.add_file(&p, level, false);
        }
    }
    if let Some(t) = trusted.filter(|t| t.is_file()) {
        let _ = cfg.add_file(t, git2::ConfigLevel::Local, false);
    }
    Some(cfg)
}

/// libgit2's default for the two keys: `$XDG_CONFIG_HOME/git/<name>`, when it exists.
fn xdg_file(name: &str) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")))?;
    let p = base.join("git").join(name);
    p.is_file().then_some(p)
}

#[cfg(test)]
#[path = "bounded_tests.rs"]
mod tests;
