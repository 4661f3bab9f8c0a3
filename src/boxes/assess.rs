//! What removing a box would lose: its changes, its commits no ref has, its
//! unreturned clone work — read through libgit2 only (no filters, no hooks).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::bounded::{Change, Want};
use super::deadline::READ_DEADLINE;
use super::BoxEntry;
use crate::git::caps::Caps;
use crate::git::repo::plain_git_dir;
use crate::git::Repo;

/// What removing a box would lose, read through libgit2 (no filters, no hooks).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assessment {
    /// Uncommitted changes (tracked or untracked, not ignored). `None`: unknown.
    pub dirty: Option<bool>,
    /// Commits on the branch that no remote-tracking ref has.
    pub unpushed: Option<usize>,
    /// The branch tip is already in the base.
    pub merged: Option<bool>,
    /// No commits beyond the base and no changes.
    pub empty: bool,
    /// A clone or sandboxed worktree: some ref of its own git data (HEAD, a branch, the
    /// stash, a tag; not the remote-tracking ones) names a commit the user's repository
    /// does not have, or it cannot be read (`None`: the box's branch is the user's).
    pub unreturned: Option<bool>,
    /// A clone or sandboxed worktree: some ref of its own git data other than what is
    /// checked out names a commit the user's repository lacks (another branch, a tag,
    /// the stash), or it cannot be read. What a landed box may still hold.
    pub unreturned_other: Option<bool>,
    /// Worktree mode: the box's HEAD (or, its branch gone, its last HEAD) is a commit no
    /// ref of the repository reaches — not its branches, tags, nor origin's.
    pub orphaned: bool,
    /// A digest of where the box's work stands: its HEAD, its changed paths and, for a
    /// clone, every ref but the remote-tracking ones. Two assessments with different digests saw
    /// different work (`teardown::remove_if_unchanged` refuses on a change).
    pub work: u64,
}

impl Assessment {
    /// Would removing the checkout lose uncommitted work (or can't we tell)?
    pub fn loses_uncommitted(&self) -> bool {
        self.dirty != Some(false)
    }
}

/// Open the box's checkout as a repository: through its `.git` pointer, else through
/// the registration (when the pointer file is gone).
fn open_box(entry: &BoxEntry) -> Option<git2::Repository> {
    if !entry.dir_exists {
        // A sandboxed worktree keeps its git apart from its checkout: a checkout
        // removed (the user's `git clean -ffdx`) leaves the agent's commits in the
        // bare clone, still judged (no work tree is read).
        let own = entry.own_git()?;
        let borrowed = entry.record.as_ref()?.common_dir.join("objects");
        crate::git::objects::check_stores(&own.common, &borrowed).ok()?;
        return own.is_worktree().then(|| own.open()).flatten();
    }
    // A clone, a sandboxed worktree: only where the record says its git data is, and
    // only when its object stores are its own and the user's (SPEC §8.4): libgit2
    // would otherwise read, on the host, whatever store the box's alternates name.
    if let Some(own) = entry.own_git() {
        let borrowed = entry.record.as_ref()?.common_dir.join("objects");
        crate::git::objects::check_stores(&own.common, &borrowed).ok()?;
        return own.open();
    }
    let pointer = entry.path.join(".git");
    // A worktree's `.git` is a pointer file; a clone's is a directory. Either opens
    // with libgit2 (a symlink planted there is not followed into somewhere else).
    let kind = std::fs::symlink_metadata(&pointer).ok();
    // Never open what could block a read, or take the time and memory of a huge
    // file (see `plain_git_dir`): unreadable instead. The caps scale with the user's
    // repository: the record's, else the one the registration is under.
    let caps = match (&entry.record, &entry.admin_dir) {
        (Some(r), _) => Caps::of(&r.common_dir),
        (None, Some(admin)) => admin
            .parent()
            .and_then(Path::parent)
            .map_or(Caps::FLOOR, Caps::of),
        (None, None) => Caps::FLOOR,
    };
    if kind.as_ref().is_some_and(|m| m.is_dir()) && !plain_git_dir(&pointer, &caps) {
        return None;
    }
    if let Some(admin) = &entry.admin_dir {
        if !plain_git_dir(admin, &caps) {
            return None;
        }
    }
    // The git dir a pointer file names is read by libgit2 too (its `gitdir`, `HEAD`…),
    // even when the registration could not be matched to this box.
    if kind.as_ref().is_some_and(|m| m.is_file()) {
        let named = crate::git::repo::read_plain(&pointer)
            .and_then(|t| {
                t.trim()
                    .strip_prefix("gitdir: ")
                    .map(std::path::PathBuf::from)
            })
            .map(|d| {
                if d.is_relative() {
                    entry.path.join(d)
                } else {
                    d
                }
            });
        match named {
            // The registration, judged just above: once is enough.
            Some(dir) if entry.admin_dir.as_ref() == Some(&dir) => {}
            Some(dir) if plain_git_dir(&dir, &caps) => {}
            _ => return None,
        }
    }
    if kind.is_some_and(|m| m.is_file() || m.is_dir()) {
        if let Ok(r) = git2::Repository::open(&entry.path) {
            return Some(r);
        }
    }
    let admin = entry.admin_dir.as_ref()?;
    let repo = git2::Repository::open(admin).ok()?;
    repo.set_workdir(&entry.path, false).ok()?;
    Some(repo)
}

/// The box's changed paths (tracked or untracked, not ignored) with their status bits;
/// `None` when they cannot be read within the bounds of [`super::bounded`].
fn changes(r: &git2::Repository, entry: &BoxEntry, want: Want) -> Option<Vec<Change>> {
    // A worktree of the user's repository: the user's config may name the ignore and
    // attribute files. A box with git data of its own wrote its config itself.
    let trusted = match (&entry.record, &entry.admin_dir) {
        _ if entry.owns_git() => None,
        (Some(rec), _) => Some(rec.common_dir.join("config")),
        (None, Some(admin)) => admin
            .parent()
            .and_then(Path::parent)
            .map(|c| c.join("config")),
        (None, None) => None,
    };
    let changed = super::bounded::changes(r, want, trusted.as_deref())?;
    // libgit2 has no sparse checkout: a file the box's sparse patterns leave out (its
    // index entry marked skip-worktree, as git marks it) reads as deleted. It is not.
    let index = r.index().ok();
    let skipped = |path: &[u8]| {
        index.as_ref().is_some_and(|i| {
            i.get_path(Path::new(OsStr::from_bytes(path)), 0)
                .is_some_and(|e| e.flags_extended & SKIP_WORKTREE != 0)
        })
    };
    Some(
        changed
            .into_iter()
            .filter(|(p, s)| !(*s == git2::Status::WT_DELETED.bits() && skipped(p)))
            .collect(),
    )
}

/// The box opened and its changes read ([`open_box`], [`changes`]) on a thread of
/// their own, given up at [`READ_DEADLINE`] (then both unknown: `None`).
fn read_work(entry: &BoxEntry, want: Want) -> (Option<git2::Repository>, Option<Vec<Change>>) {
    let e = entry.clone();
    super::deadline::within(READ_DEADLINE, move || {
        let opened = open_box(&e);
        // A removed checkout has no work tree to read (its git may still be there).
        let changed = opened
            .as_ref()
            .filter(|_| e.dir_exists)
            .and_then(|r| changes(r, &e, want));
        (opened, changed)
    })
    .unwrap_or((None, None))
}

/// The box's changed paths, read as [`assess`] reads them (its own handle, under the
/// bounds of [`super::bounded`], given up at [`READ_DEADLINE`]); `None` when they
/// cannot be read so (or its checkout is gone). What `diff` asks before it lets
/// libgit2 compare the work tree.
pub fn changes_of(entry: &BoxEntry) -> Option<Vec<Change>> {
    read_work(entry, Want::Changes).1
}

/// The skip-worktree bit of an index entry's extended flags (`GIT_INDEX_ENTRY_SKIP_WORKTREE`).
const SKIP_WORKTREE: u16 = 1 << 14;

/// Is there uncommitted work: [`Assessment::dirty`] from what [`changes`] read.
fn dirty(entry: &BoxEntry, changes: Option<&[Change]>) -> Option<bool> {
    match changes {
        Some(c) => Some(!c.is_empty()),
        None if !entry.dir_exists => Some(false),
        None => None,
    }
}

/// What `git sandbox ls` shows of a box's work, and nothing more: its
/// [`Assessment::dirty`] and [`Assessment::unreturned`], judged exactly as [`assess`]
/// judges them. Without the ref walks of a full assessment (every ref of the user's
/// repository peeled, per box), `ls` of many boxes grows linearly, not quadratically.
/// `user` is the user's repository (its object store answers `unreturned`; without
/// it, as when its object store cannot be read, the work counts as unreturned).
pub fn dirt(entry: &BoxEntry, user: Option<&git2::Repository>) -> Dirt {
    let (opened, changed) = read_work(entry, Want::Dirty);
    dirt_of(entry, user, opened, changed)
}

/// [`dirt`] on the calling thread (the caller bounds it in time).
fn dirt_inline(entry: &BoxEntry, user: Option<&git2::Repository>) -> Dirt {
    let opened = open_box(entry);
    // A removed checkout has no work tree to read (its git may still be there).
    let changed = opened
        .as_ref()
        .filter(|_| entry.dir_exists)
        .and_then(|r| changes(r, entry, Want::Dirty));
    dirt_of(entry, user, opened, changed)
}

fn dirt_of(
    entry: &BoxEntry,
    user: Option<&git2::Repository>,
    opened: Option<git2::Repository>,
    changed: Option<Vec<Change>>,
) -> Dirt {
    let dirty = dirty(entry, changed.as_deref());
    let unreturned = entry.owns_git().then(|| match (&opened, user) {
        (Some(c), Some(user)) => clone_unreturned(c, user, None),
        (Some(_), None) => true,
        (None, _) => entry.git_left(),
    });
    Dirt { dirty, unreturned }
}

/// [`Assessment::dirty`] and [`Assessment::unreturned`] alone (see [`dirt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dirt {
    pub dirty: Option<bool>,
    pub unreturned: Option<bool>,
}

/// [`dirt`] of every box of `repo`, read on the machine's cores (each reader with its
/// own handle on the user's repository: a libgit2 handle is not shared between
/// threads), in the boxes' order. A box whose read has not ended at [`READ_DEADLINE`]
/// is unknown (its reader abandoned, see [`super::deadline::map_within`]).
pub fn dirt_all(entries: &[BoxEntry], repo: &Repo) -> Vec<Dirt> {
    let common = repo.common_dir.clone();
    let got = super::deadline::map_within(
        entries.to_vec(),
        super::par::cores(),
        READ_DEADLINE,
        move || git2::Repository::open(&common).ok(),
        |user, e| dirt_inline(e, user.as_ref()),
    );
    got.into_iter()
        .zip(entries)
        .map(|(d, e)| {
            d.unwrap_or(Dirt {
                dirty: None,
                // Unknown counts as unreturned.
                unreturned: e.owns_git().then_some(e.dir_exists),
            })
        })
        .collect()
}

/// Assess a box against the repository's refs.
pub fn assess(entry: &BoxEntry, repo: &Repo) -> Assessment {
    let mut a = Assessment::default();
    let (opened, changed) = read_work(entry, Want::Changes);
    a.dirty = dirty(entry, changed.as_deref());
    let changes = changed.unwrap_or_default();
    // The box's live HEAD (a detached one too), else its branch as recorded.
    let live_head = opened
        .as_ref()
        .and_then(|r| r.head().ok().and_then(|h| h.target()));
    let owns_git = entry.owns_git();
    if !owns_git {
        // A deleted branch leaves its commits only in the box's HEAD or HEAD reflog.
        let last = || last_head(opened.as_ref()?.path());
        a.orphaned = live_head
            .or_else(last)
            .is_some_and(|t| unreachable(&repo.git, t));
    }
    let clone = if owns_git { opened } else { None };
    let tip = live_head.or_else(|| {
        entry
            .branch
            .as_deref()
            .filter(|_| clone.is_none())
            .and_then(|b| repo.local_branch(b))
    });
    a.work = work_digest(tip, clone.as_ref(), &changes);
    if owns_git {
        // Unknown (clone unreadable) counts as unreturned.
        a.unreturned = Some(match &clone {
            Some(c) => clone_unreturned(c, &repo.git, None),
            None => entry.git_left(),
        });
        a.unreturned_other = Some(match (&clone, live_head) {
            (Some(c), Some(head)) => clone_unreturned(c, &repo.git, Some(head)),
            (Some(_), None) => a.unreturned == Some(true),
            (None, _) => entry.git_left(),
        });
    }
    if let Some(tip) = tip {
        let graph = clone.as_ref().unwrap_or(&repo.git);
        a.unpushed = count_unpushed(graph, tip).ok();
        let base = entry
            .record
            .as_ref()
            .and_then(|r| r.base_ref.as_deref())
            .and_then(|b| repo.git.refname_to_id(b).ok());
        if let Some(base) = base {
            a.merged = merged(&repo.git, tip, base);
        }
        let started = entry
            .record
            .as_ref()
            .and_then(|r| r.base_commit.as_deref())
            .and_then(|c| git2::Oid::from_str(c).ok());
        a.empty = started == Some(tip) && a.dirty == Some(false) && a.unreturned != Some(true);
    } else {
        a.empty = a.dirty == Some(false);
    }
    a
}

fn work_digest(
    head: Option<git2::Oid>,
    clone: Option<&git2::Repository>,
    changes: &[Change],
) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    head.map(|o| o.as_bytes().to_vec()).hash(&mut h);
    changes.hash(&mut h);
    if let Some(refs) = clone.and_then(|c| c.references().ok()) {
        let mut all: Vec<(Vec<u8>, Option<git2::Oid>)> = refs
            .flatten()
            .filter(|r| !r.name_bytes().starts_with(b"refs/remotes/"))
            .map(|r| (r.name_bytes().to_vec(), r.target()))
            .collect();
        all.sort();
        for (n, t) in all {
            n.hash(&mut h);
            t.map(|o| o.as_bytes().to_vec()).hash(&mut h);
        }
    }
    h.finish()
}

/// Does the clone hold a commit the user's repository lacks — at HEAD, on any of its
/// branches, in its stash, tags or notes (anything but remote-tracking refs, which
/// are copies of somewhere else)? Anything unreadable counts as yes. A ref at `but`
/// (the tip checked out, when its own fate is judged apart) does not count.
fn clone_unreturned(
    clone: &git2::Repository,
    user: &git2::Repository,
    but: Option<git2::Oid>,
) -> bool {
    let Ok(odb) = user.odb() else {
        return true;
    };
    let mut tips = Vec::new();
    match clone.head() {
        Ok(h) => tips.extend(h.target()),
        Err(e) if e.code() == git2::ErrorCode::UnbornBranch => {}
        Err(_) => return true,
    }
    let Ok(refs) = clone.references() else {
        return true;
    };
    for r in refs {
        let Ok(r) = r else {
            return true;
        };
        if r.name_bytes().starts_with(b"refs/remotes/") {
            continue;
        }
        tips.extend(r.target());
    }
    tips.iter().any(|t| Some(*t) != but && !odb.exists(*t))
}

/// The newest commit a git dir's HEAD reflog names (its `logs/HEAD`, opened once and
/// read only when it is at most 64 MiB on the open handle).
fn last_head(git_dir: &Path) -> Option<git2::Oid> {
    use crate::untrusted::{read_regular, Links};
    let bytes = read_regular(&git_dir.join("logs/HEAD"), 64 << 20, Links::Refuse).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?;
    git2::Oid::from_str(line.split(' ').nth(1)?).ok()
}

// The history walks of an assessment, each through the capped walk
// ([`crate::git::history`]): libgit2's revwalk with hidden commits and
// `graph_descendant_of` walk a box's whole history first.

/// Does no ref of `repo` (nor its HEAD) reach `tip`? Unreadable, or a history too
/// large to tell, counts as yes.
fn unreachable(repo: &git2::Repository, tip: git2::Oid) -> bool {
    let hidden = || -> Result<Vec<git2::Oid>, git2::Error> {
        let mut hide = Vec::new();
        if let Ok(h) = repo.head().and_then(|h| h.peel_to_commit()) {
            hide.push(h.id());
        }
        for r in repo.references()?.flatten() {
            if let Ok(c) = r.peel_to_commit() {
                hide.push(c.id());
            }
        }
        Ok(hide)
    };
    let Ok(hide) = hidden() else {
        return true;
    };
    crate::git::history::since(repo, tip, &hide, crate::git::history::MAX_COMMITS)
        .map_or(true, |own| !own.is_empty())
}

/// Commits of `tip` that no remote-tracking ref reaches, counted to
/// [`crate::git::history::MAX_COMMITS`] (a longer history counts as that many).
fn count_unpushed(repo: &git2::Repository, tip: git2::Oid) -> Result<usize, git2::Error> {
    use crate::git::history::{since, WalkError, MAX_COMMITS};
    let mut hide = Vec::new();
    for r in repo.references_glob("refs/remotes/*")?.flatten() {
        if let Ok(c) = r.peel_to_commit() {
            hide.push(c.id());
        }
    }
    match since(repo, tip, &hide, MAX_COMMITS) {
        Ok(own) => Ok(own.len()),
        Err(WalkError::Git(e)) => Err(e),
        Err(_) => Ok(MAX_COMMITS),
    }
}

/// Is `tip` the base's commit or in its history? `None`: too large to tell.
fn merged(repo: &git2::Repository, tip: git2::Oid, base: git2::Oid) -> Option<bool> {
    match crate::git::history::within(repo, tip, base) {
        Ok(m) => Some(m),
        Err(e) if e.is_too_large() => None,
        Err(_) => Some(false),
    }
}
