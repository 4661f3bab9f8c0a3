//! The boxes of one repository, as they are right now, and how a reference names one.
//!
//! A box is known from two sources: its host-owned record, and git's own worktree
//! registration (`<common>/worktrees/<id>/gitdir`) for a checkout under a box root
//! (the repository's, or the checkouts root of container boxes: [`Layout::roots`]).
//! Either alone is enough to find it, so a box whose `.git` pointer file is gone, or
//! whose record was lost, can still be listed and removed. The main worktree is never
//! a box.
//!
//! Everything here reads files and libgit2 only — no subprocess, and nothing a box
//! wrote is executed — so `list` stays instant with hundreds of boxes and is safe
//! against hostile boxes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::git::repo::canonical;
use crate::git::Repo;
use crate::names::Leaf;
use crate::state::{Layout, Record};
use crate::vocab::GitMode;

mod assess;
pub mod bounded;
pub mod deadline;
mod own_git;
pub mod par;
mod registration;

#[cfg(test)]
mod moved_tests;

pub use assess::{assess, changes_of, dirt, dirt_all, Assessment, Dirt};
pub use own_git::OwnGit;
pub use registration::{
    hostile_own_git, hostile_registration, hostile_registration_seen, registration_blocks, Seen,
};
pub(crate) use registration::{
    judged_admin, LARGE as REGISTRATION_LARGE, SMALL as REGISTRATION_SMALL,
};

/// One box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxEntry {
    pub leaf: Leaf,
    /// Where the checkout is (or was).
    pub path: PathBuf,
    pub record: Option<Record>,
    /// Why the record could not be read, when it exists but is malformed.
    pub record_error: Option<String>,
    /// The worktree's admin dir under `<common>/worktrees/`, when git knows it.
    pub admin_dir: Option<PathBuf>,
    /// The branch checked out right now (read live, so renames are followed).
    pub branch: Option<String>,
    /// Whether the checkout directory exists.
    pub dir_exists: bool,
    /// A clone's or sandboxed worktree's tip commit time, read with its branch (the
    /// user's repository may not have the commit).
    pub own_tip_time: Option<i64>,
    /// That tip itself (what `list` asks whether it landed).
    pub own_tip: Option<git2::Oid>,
    /// The registration's `HEAD` and `gitdir` as the inventory read them (judging the
    /// box reuses them instead of reading them again).
    pub seen: Option<Box<Seen>>,
}

impl BoxEntry {
    /// The branch to show: the live one, else the recorded one.
    pub fn shown_branch(&self) -> Option<&str> {
        self.branch
            .as_deref()
            .or(self.record.as_ref().map(|r| r.branch.as_str()))
            // A folder box has no branch.
            .filter(|b| !b.is_empty())
    }

    /// Does `reference` name this box whole: its leaf, or the branch checked out in it
    /// now (`refs/heads/` allowed)? What [`resolve`] tries before a part of a name.
    pub fn is_named(&self, reference: &str) -> bool {
        self.leaf.as_str() == reference || self.is_on_branch(reference)
    }

    fn is_on_branch(&self, reference: &str) -> bool {
        let short = reference.strip_prefix("refs/heads/").unwrap_or(reference);
        self.shown_branch() == Some(short)
    }
}

/// The admin dirs of the repository's registered linked worktrees
/// (`<common>/worktrees/<id>`).
fn registrations(common_dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(common_dir.join("worktrees")) else {
        return Vec::new();
    };
    rd.flatten().map(|e| e.path()).collect()
}

/// The box a registration's admin dir names, when its checkout is a direct child of
/// a box root (never the main worktree); `roots` are [`Layout::canonical_roots`].
fn registered_box(admin: PathBuf, layout: &Layout, roots: &[PathBuf]) -> Option<BoxEntry> {
    let gitdir = registration::read_small(&admin.join("gitdir"), 1 << 20)?;
    let text = std::str::from_utf8(&gitdir).ok()?;
    let dotgit = PathBuf::from(text.trim_end_matches(['\n', '\r']));
    let checkout = dotgit.parent()?;
    // Only direct children of a box root are boxes. The literal root first: the
    // usual case, without resolving the path (a readlink per component).
    let parent = checkout.parent()?;
    let leaf = Leaf::parse(&checkout.file_name()?.to_string_lossy()).ok()?;
    let path = if parent == layout.box_root {
        layout.box_path(&leaf)
    } else {
        let real = canonical(parent);
        match roots.iter().position(|r| *r == real) {
            Some(0) => layout.box_path(&leaf),
            Some(_) => layout.checkout_path(&leaf),
            None => return None,
        }
    };
    let seen = Seen {
        head: registration::read_small(&admin.join("HEAD"), 1 << 20),
        gitdir: Some(gitdir.clone()),
        admin,
    };
    // The branch checked out: `HEAD`'s symbolic ref (as `Repo::worktree_branch`).
    let branch = seen
        .head
        .as_deref()
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|h| {
            let r = h.trim().strip_prefix("ref: ")?;
            Some(r.strip_prefix("refs/heads/").unwrap_or(r).to_string())
        });
    Some(BoxEntry {
        branch,
        admin_dir: Some(seen.admin.clone()),
        dir_exists: path.is_dir(),
        path,
        leaf,
        record: None,
        record_error: None,
        own_tip_time: None,
        own_tip: None,
        seen: Some(Box::new(seen)),
    })
}

/// A box's record as read: the record (`None` when there is none), or why it could not
/// be read.
type Loaded = (Option<Record>, Option<String>);

/// What [`load_recorded`] found of one box: its record, whether its checkout exists,
/// and (with git data of its own) its live branch and tip time.
type Recorded = (Loaded, bool, Option<OwnHead>);

/// A box's own branch, tip and tip time, as [`OwnGit::head_and_time`] read them.
type OwnHead = (Option<String>, Option<git2::Oid>, Option<i64>);

/// Read the record of `leaf` and, for a box with git data of its own whose checkout
/// exists, its live branch and tip time (libgit2, through [`OwnGit`]).
fn load_recorded(leaf: &Leaf, layout: &Layout, known: &BTreeMap<Leaf, BoxEntry>) -> Recorded {
    let loaded = match Record::load(&layout.record_path(leaf)) {
        Ok(r) => (r, None),
        Err(e) => (None, Some(crate::sanitize::chain(&e))),
    };
    let dir_exists = match known.get(leaf) {
        Some(e) => e.dir_exists,
        None => layout.path_of(leaf, loaded.0.as_ref()).is_dir(),
    };
    let own = loaded.0.as_ref().and_then(OwnGit::of);
    let head = own.filter(|_| dir_exists).map(|own| {
        // A clone, a sandboxed worktree: the branch lives in the box's own git
        // data, and is read from there (libgit2).
        own.head_and_time().unwrap_or((None, None, None))
    });
    (loaded, dir_exists, head)
}

/// What a caller already knows of some boxes, read from files that have not changed
/// since (the summary cache of `list`, [`summary`]): the inventory takes it instead of
/// reading those files again. Each answer must be exactly what the read would give.
pub(crate) trait Known: Sync {
    /// [`registered_box`] of the admin dir `admin`, when it names a box.
    fn registration(&self, admin: &Path) -> Option<BoxEntry>;
    /// The record of `leaf` (a worktree's or a folder's: no git data of its own), and
    /// whether its checkout is a directory.
    fn recorded(&self, leaf: &Leaf) -> Option<(Record, bool)>;
}

/// Nothing known: every file is read.
struct Unknown;

impl Known for Unknown {
    fn registration(&self, _: &Path) -> Option<BoxEntry> {
        None
    }
    fn recorded(&self, _: &Leaf) -> Option<(Record, bool)> {
        None
    }
}

/// Every box of the repository, sorted by leaf.
///
/// The per-box reads (registration files, records, a clone's HEAD) run on the
/// machine's cores ([`par::map`]); the result does not depend on them.
pub fn inventory(repo: &Repo, layout: &Layout) -> Vec<BoxEntry> {
    inventory_with(repo, layout, &Unknown)
}

/// [`inventory`], taking what `known` answers instead of reading it.
pub(crate) fn inventory_with(repo: &Repo, layout: &Layout, known: &dyn Known) -> Vec<BoxEntry> {
    let roots = layout.canonical_roots();
    let admins = registrations(&repo.common_dir);
    let registered = par::map(
        &admins,
        || (),
        |(), admin| {
            known
                .registration(admin)
                .or_else(|| registered_box(admin.clone(), layout, &roots))
        },
    );
    let mut by_leaf: BTreeMap<Leaf, BoxEntry> = BTreeMap::new();
    for e in registered.into_iter().flatten() {
        by_leaf.insert(e.leaf.clone(), e);
    }
    let leaves = layout.recorded_leaves();
    let loaded = par::map(
        &leaves,
        || (),
        |(), leaf| match known.recorded(leaf) {
            Some((record, dir_exists)) => ((Some(record), None), dir_exists, None),
            None => load_recorded(leaf, layout, &by_leaf),
        },
    );
    for (leaf, ((record, record_error), dir_exists, head)) in leaves.into_iter().zip(loaded) {
        if record.is_none() && record_error.is_none() {
            // A bookkeeping dir without a record (e.g. a session marker): not a box.
            if !by_leaf.contains_key(&leaf) {
                continue;
            }
        }
        let entry = by_leaf.entry(leaf.clone()).or_insert_with(|| BoxEntry {
            dir_exists,
            path: layout.path_of(&leaf, record.as_ref()),
            leaf: leaf.clone(),
            record: None,
            record_error: None,
            admin_dir: None,
            branch: None,
            own_tip_time: None,
            own_tip: None,
            seen: None,
        });
        if let Some((branch, tip, time)) = head {
            entry.branch = branch;
            entry.own_tip = tip;
            entry.own_tip_time = time;
        }
        entry.record = record;
        entry.record_error = record_error;
    }
    // A clone whose record was lost is still a box: a directory under either root with
    // a `.git` of its own (git does not register clones, so only the directory says
    // so). So is a worktree git no longer lists (the repository was moved: its pointer
    // and registration name the old paths until `git worktree repair`).
    for (leaf, path) in layout.leaves_on_disk() {
        if by_leaf.contains_key(&leaf) {
            continue;
        }
        let own_git =
            std::fs::symlink_metadata(path.join(".git")).is_ok_and(|m| m.is_dir() || m.is_file());
        if !own_git || !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let caps = crate::git::caps::Caps::of(&repo.common_dir);
        let head = OwnGit::clone_at(&path).with_caps(caps).head_and_time();
        by_leaf.insert(
            leaf.clone(),
            BoxEntry {
                branch: head.as_ref().and_then(|(b, _, _)| b.clone()),
                own_tip: head.as_ref().and_then(|(_, t, _)| *t),
                own_tip_time: head.and_then(|(_, _, t)| t),
                dir_exists: true,
                path,
                leaf,
                record: None,
                record_error: None,
                admin_dir: None,
                seen: None,
            },
        );
    }
    by_leaf.into_values().collect()
}

/// The box whose leaf is exactly `leaf`, read alone (its record, its registration,
/// its live branch) — what `enter NAME` and `run NAME` need, in time that does not
/// grow with the number of boxes. `None` when no record names it.
pub fn exact(repo: &Repo, layout: &Layout, leaf: &str) -> Option<BoxEntry> {
    let leaf = Leaf::parse(leaf).ok()?;
    let record_path = layout.record_path(&leaf);
    if !record_path.exists() {
        return None;
    }
    let (record, record_error) = match Record::load(&record_path) {
        Ok(r) => (r, None),
        Err(e) => (None, Some(crate::sanitize::chain(&e))),
    };
    let path = layout.path_of(&leaf, record.as_ref());
    let dir_exists = path.is_dir();
    let own = record.as_ref().and_then(OwnGit::of);
    let admin_dir = match own {
        Some(_) => None,
        None => repo.worktree_admin_dir(&path),
    };
    let head = own
        .as_ref()
        .filter(|_| dir_exists)
        .and_then(OwnGit::head_and_time);
    let branch = match &own {
        Some(_) => head.as_ref().and_then(|(b, _, _)| b.clone()),
        None => admin_dir.as_deref().and_then(Repo::worktree_branch),
    };
    Some(BoxEntry {
        leaf,
        path,
        record,
        record_error,
        admin_dir,
        branch,
        dir_exists,
        own_tip: head.as_ref().and_then(|(_, t, _)| *t),
        own_tip_time: head.and_then(|(_, _, t)| t),
        seen: None,
    })
}

/// The box `reference` names: the exact name read alone (the common case, in time that
/// does not grow with the number of boxes), else [`resolve`] over the whole inventory.
pub fn find(repo: &Repo, layout: &Layout, reference: &str) -> Result<BoxEntry, ResolveError> {
    if let Some(e) = exact(repo, layout, reference) {
        return Ok(e);
    }
    let all = inventory(repo, layout);
    resolve(&all, reference, repo).cloned()
}

/// The main checkout of every repository on this machine with boxes (or the memory of
/// them, [`Layout::remember_repo`]) whose repository is still there: the repositories
/// `git sandbox ls` lists boxes of.
pub fn known_repos() -> Result<Vec<PathBuf>, crate::state::layout::NoStateDir> {
    use crate::state::layout;
    let mut out = Vec::new();
    for repo_state in layout::repo_state_dirs()? {
        let main = match layout::records_in(&repo_state).first() {
            Some(r) => r.repo.clone(),
            None => match Layout::remembered_repo(&repo_state) {
                Some(m) => m,
                None => continue,
            },
        };
        if let Ok(repo) = Repo::discover(&main) {
            if Layout::is_state_dir_of(&repo_state, &repo.common_dir)
                && !out.contains(&repo.main_root)
            {
                out.push(repo.main_root);
            }
        }
    }
    Ok(out)
}

/// The repositories of this machine, other than the one at `common_dir`, that hold a
/// box named `name` (by its record; one direct lookup per repository).
pub fn elsewhere(name: &str, common_dir: Option<&Path>) -> Vec<PathBuf> {
    let Ok(leaf) = Leaf::parse(name) else {
        return Vec::new();
    };
    let Ok(dirs) = crate::state::layout::repo_state_dirs() else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = dirs
        .iter()
        .filter_map(|d| crate::state::layout::record_in(d, &leaf))
        .filter(|r| common_dir.is_none_or(|c| canonical(&r.common_dir) != canonical(c)))
        .map(|r| r.repo)
        .collect();
    out.sort();
    out
}

/// Is `dir` inside a box of this repository: under one of its box roots (a host box,
/// a container box's checkout), or in any repository's container checkout? Paths
/// only, resolved; nothing under `dir` is opened. The MCP server refuses to start
/// there (a lead agent inside a box must not drive boxes).
pub fn holds(layout: &Layout, dir: &Path) -> bool {
    if crate::state::layout::moved_box_of(dir).is_some() {
        return true;
    }
    let dir = canonical(dir);
    let roots = layout.canonical_roots();
    dir.ancestors()
        .skip(1)
        .any(|a| roots.iter().any(|r| r.as_path() == a))
}

/// Why a reference named no single box.
/// Open the clone at `path` with libgit2, unless its `.git` holds something a read
/// could block on (see [`crate::git::repo::plain_git_dir`]).
pub fn open_clone(path: &Path) -> Option<git2::Repository> {
    OwnGit::clone_at(path).open()
}

/// The branch and tip the clone at `path` has checked out now (see [`OwnGit::head`]).
pub fn clone_head(path: &Path) -> Option<(Option<String>, Option<git2::Oid>)> {
    OwnGit::clone_at(path).head()
}

/// Is the box's `.git` the kind its git mode needs (a clone has a directory, a worktree
/// a pointer file, and a sandboxed worktree its bare clone too)? Without it, git run
/// there would walk up to the user's own repository, which the box sits inside.
/// Folder boxes have no `.git`: always intact.
pub fn checkout_intact(record: &Record) -> bool {
    let want_dir = match record.git_mode {
        GitMode::Clone => true,
        GitMode::Worktree => false,
        GitMode::Folder => return true,
    };
    let bare_ok = record
        .bare_clone
        .as_ref()
        .is_none_or(|b| std::fs::symlink_metadata(b).is_ok_and(|m| m.is_dir()));
    bare_ok
        && std::fs::symlink_metadata(record.path.join(".git")).is_ok_and(|m| {
            if want_dir {
                m.is_dir()
            } else {
                m.is_file()
            }
        })
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("no box matches `{reference}`")]
    NotFound {
        reference: String,
        /// A local branch of that name exists (it has no box).
        branch_exists: bool,
    },
    #[error("`{reference}` matches several boxes: {}", .candidates.join(", "))]
    Ambiguous {
        reference: String,
        candidates: Vec<String>,
    },
}

/// Resolve REF: the exact leaf, then the branch checked out *now*, then a unique
/// substring of a leaf or branch.
pub fn resolve<'a>(
    boxes: &'a [BoxEntry],
    reference: &str,
    repo: &Repo,
) -> Result<&'a BoxEntry, ResolveError> {
    if let Some(b) = boxes.iter().find(|b| b.leaf.as_str() == reference) {
        return Ok(b);
    }
    let short = reference.strip_prefix("refs/heads/").unwrap_or(reference);
    let by_branch: Vec<&BoxEntry> = boxes.iter().filter(|b| b.is_on_branch(short)).collect();
    if by_branch.len() == 1 {
        return Ok(by_branch[0]);
    }
    let matches: Vec<&BoxEntry> = if by_branch.is_empty() {
        boxes
            .iter()
            .filter(|b| {
                // A placeholder's `treebox/` prefix is not part of its name: `tree`
                // must not match every nameless box.
                let branch = b.shown_branch().map(|br| {
                    br.strip_prefix(crate::names::PLACEHOLDER_PREFIX)
                        .unwrap_or(br)
                });
                !reference.is_empty()
                    && (b.leaf.as_str().contains(reference)
                        || branch.is_some_and(|br| br.contains(reference)))
            })
            .collect()
    } else {
        by_branch
    };
    match matches.len() {
        1 => Ok(matches[0]),
        0 => Err(ResolveError::NotFound {
            reference: reference.to_string(),
            branch_exists: crate::names::check_existing_branch(short).is_ok()
                && repo.local_branch(short).is_some(),
        }),
        _ => Err(ResolveError::Ambiguous {
            reference: reference.to_string(),
            candidates: matches.iter().map(|b| b.leaf.to_string()).collect(),
        }),
    }
}

impl BoxEntry {
    /// Its checkout was made whole, and its `.git` is now gone or of the wrong kind
    /// (see [`checkout_intact`]), or its registration holds hostile files (see
    /// [`hostile_registration`]).
    pub fn is_broken(&self) -> bool {
        self.record.as_ref().is_some_and(|r| {
            r.checkout_completed
                && (!checkout_intact(r)
                    || hostile_registration_seen(r, self.seen.as_deref()).is_some())
        })
    }

    /// Its own git data, when it has some: a clone's (so its record says; without a
    /// readable record, as [`Self::is_clone`] judges), or a sandboxed worktree's.
    pub fn own_git(&self) -> Option<OwnGit> {
        match &self.record {
            Some(r) => OwnGit::of(r),
            None => self.is_clone().then(|| OwnGit::clone_at(&self.path)),
        }
    }

    /// Is any of its own git data there to read: the checkout (a clone's git is in
    /// it), or a sandboxed worktree's bare clone, which outlives a removed checkout
    /// (SPEC §6: its commits are still the agent's work, fetched and landed from it).
    pub fn git_left(&self) -> bool {
        self.dir_exists
            || self.own_git().is_some_and(|own| {
                own.is_worktree() && std::fs::symlink_metadata(&own.common).is_ok()
            })
    }

    /// Its branch and commits live in git data of its own (a clone, a sandboxed
    /// worktree), not in the user's repository: its work comes back by fetch.
    pub fn owns_git(&self) -> bool {
        match &self.record {
            Some(r) => OwnGit::of(r).is_some(),
            None => self.is_clone(),
        }
    }

    /// A clone box: so its record says; without a readable record, a directory with a
    /// `.git` of its own and no worktree registration.
    pub fn is_clone(&self) -> bool {
        match &self.record {
            Some(r) => r.git_mode == GitMode::Clone,
            None => {
                self.admin_dir.is_none()
                    && self.dir_exists
                    && std::fs::symlink_metadata(self.path.join(".git")).is_ok_and(|m| m.is_dir())
            }
        }
    }
}
