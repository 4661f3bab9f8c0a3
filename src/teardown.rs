//! Removing boxes without losing work by accident, and without trusting the box.
//!
//! Removal never runs git in the box (its config, hooks and attributes may be
//! hostile, SPEC §8.1): the checkout directory and its registration under
//! `<common>/worktrees/` are removed directly — what `git worktree remove` does — and
//! the branch, when asked, is deleted through libgit2. Every path is checked to be a
//! box: a direct child of the box root, never the main worktree, whatever the root
//! setting. The caller decides whether the box may go (dirty, live, confirmation);
//! this module only assesses and removes — and, once a worktree box is gone, deletes
//! its branch when that loses nothing ([`settle_branch`]).

pub mod objections;

use std::path::{Path, PathBuf};

use crate::boxes::{self, Assessment, BoxEntry};
use crate::git::landed::{self, Verdict};
use crate::git::repo::canonical;
use crate::git::Repo;
use crate::state::session;
use crate::state::{BoxLock, Layout, LockError, Record};

/// A box chosen for removal, with what removing it would lose.
#[derive(Debug, Clone)]
pub struct Target {
    pub entry: BoxEntry,
    pub assessment: Assessment,
    /// An agent session is running in it now.
    pub live: bool,
    /// Whether its committed work has landed in its base (`None`: not asked, as with
    /// `--force`, or it cannot be told).
    pub landed: Option<Verdict>,
}

impl Target {
    /// Its work has landed in its base and nothing else of it would be lost: a clean
    /// checkout, no live session, no other branch, tag or stash holding commits the
    /// repository lacks. Such a box goes without `--force` (SPEC §10b).
    pub fn landed_clean(&self) -> bool {
        let a = &self.assessment;
        matches!(self.landed, Some(Verdict::Landed { .. }))
            && !self.live
            && (!self.entry.dir_exists || a.dirty == Some(false))
            && a.unreturned_other != Some(true)
    }

    /// The work is landed (whatever else the box holds).
    pub fn is_landed(&self) -> bool {
        matches!(self.landed, Some(Verdict::Landed { .. }))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TeardownError {
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Container(crate::runner::oci::ContainerError),
    #[error("refusing to remove {}: it is not a box under {}", .path.display(), .root.display())]
    NotABoxPath { path: PathBuf, root: PathBuf },
    #[error("could not remove {}", .path.display())]
    Remove {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("box `{leaf}` changed since it was assessed ({now}); nothing of it was removed")]
    Changed { leaf: String, now: String },
    #[error("the program running in box `{leaf}` (pid {pids}) did not end when killed; nothing of the box was removed", pids = .pids.iter().map(i32::to_string).collect::<Vec<_>>().join(", "))]
    Outlived { leaf: String, pids: Vec<i32> },
    #[error("could not delete branch `{branch}`")]
    Branch {
        branch: String,
        #[source]
        source: git2::Error,
    },
}

/// What was removed.
#[derive(Debug, Clone)]
pub struct Removed {
    pub leaf: String,
    pub path: PathBuf,
    pub branch: Option<String>,
    pub branch_deleted: bool,
    /// The directory was already gone: only the registration and records were pruned.
    pub pruned_only: bool,
}

/// How long removing a box waits for origin to say whether it has the box's work.
const ORIGIN_FETCH_SECS: u64 = 15;

/// A box of a laptop's repository, made on this machine (SPEC §11): its work is
/// returned only once it is on the laptop — in what the laptop sent (origin's
/// branches of this clone, its mirror) or among `returned`, the commits the laptop
/// has fetched back from it. Work of a worktree box here (its branch stays in this
/// clone, which the laptop never reads) counts as unreturned like a clone's.
pub fn returned_elsewhere(t: &mut Target, repo: &Repo, returned: &[git2::Oid]) {
    let tip = crate::land::BoxGit::open(&t.entry, repo)
        .ok()
        .and_then(|g| g.tip);
    let Some(tip) = tip else {
        // Its tip cannot be read: it cannot be told returned.
        t.assessment.unreturned = Some(true);
        return;
    };
    let reaches = |r: git2::Oid| r == tip || repo.git.graph_descendant_of(r, tip).unwrap_or(false);
    let sent = repo
        .git
        .references_glob("refs/remotes/origin/*")
        .map(|refs| {
            refs.flatten()
                .filter_map(|r| r.peel_to_commit().ok().map(|c| c.id()))
                .any(reaches)
        })
        .unwrap_or(false);
    let back = sent || returned.iter().any(|r| reaches(*r));
    let a = &mut t.assessment;
    a.unreturned = Some(!back || a.unreturned_other == Some(true));
    if back {
        a.orphaned = false;
    }
}

/// The box to remove, assessed unless `forced`: with `--force` nothing is read from
/// the box (whatever it holds goes anyway), so a box that made its files unreadable
/// cannot stall its removal.
///
/// A box whose own git data (a clone, a sandboxed worktree) holds commits the
/// repository lacks may have pushed them to origin from inside: then origin is fetched
/// (once, with the usual pins, no prompt, for at most [`ORIGIN_FETCH_SECS`]) and the box assessed again, so only work
/// that is nowhere else holds a removal up. A failed fetch changes nothing.
pub fn target_for(entry: BoxEntry, repo: &Repo, layout: &Layout, forced: bool) -> Target {
    if !forced {
        let t = target(entry, repo, layout);
        let fetchable = repo.has_remote("origin")
            && crate::provision::repair::blocking_registration(&repo.common_dir).is_none();
        if t.assessment.unreturned != Some(true) || !fetchable {
            return t;
        }
        let git = crate::git::GitCli::for_repo(&repo.common_dir, None);
        let limit = std::time::Duration::from_secs(ORIGIN_FETCH_SECS);
        if !crate::provision::fetch::fetch_origin_within(&git, &repo.main_root, limit) {
            return t;
        }
        return target(t.entry, repo, layout);
    }
    let live = session::is_live(&layout.session_path(&entry.leaf));
    Target {
        entry,
        assessment: Assessment::default(),
        live,
        landed: None,
    }
}

/// Remove a box as decided: `forced`, whatever it holds ([`remove`]); else only if it
/// holds no more than when it was assessed ([`remove_if_unchanged`]).
pub fn remove_as_decided(
    repo: &Repo,
    layout: &Layout,
    target: &Target,
    delete_branch: bool,
    forced: bool,
) -> Result<Removed, TeardownError> {
    match forced {
        true => remove(repo, layout, target, delete_branch),
        false => remove_if_unchanged(repo, layout, target, delete_branch),
    }
}

/// Assess a box for removal.
pub fn target(entry: BoxEntry, repo: &Repo, layout: &Layout) -> Target {
    let assessment = boxes::assess(&entry, repo);
    let live = session::is_live(&layout.session_path(&entry.leaf));
    let landed = crate::land::landed::verdict(&entry, repo);
    Target {
        entry,
        assessment,
        live,
        landed,
    }
}

/// Is `path` a box directory: exactly `<root>/<leaf>` under one of the layout's roots
/// (the box root, the checkouts root), and not the main worktree nor anything
/// containing it?
fn check_box_path(path: &Path, layout: &Layout, repo: &Repo) -> Result<(), TeardownError> {
    let refuse = || TeardownError::NotABoxPath {
        path: path.to_path_buf(),
        root: layout.box_root.clone(),
    };
    let parent_ok = path.parent().is_some_and(|p| layout.is_root(p));
    if !parent_ok {
        return Err(refuse());
    }
    let real = canonical(path);
    if real == repo.main_root || repo.main_root.starts_with(&real) || real == repo.common_dir {
        return Err(refuse());
    }
    Ok(())
}

/// Remove a directory tree without following symlinks; directories made read-only
/// (Go's module cache does that) are made writable first.
pub(crate) fn remove_tree(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) => {
            make_dirs_writable(path);
            std::fs::remove_dir_all(path)
        }
    }
}

fn make_dirs_writable(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(m) = std::fs::symlink_metadata(p) {
        if m.is_dir() {
            let mode = m.permissions().mode() | 0o700;
            let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode));
            if let Ok(rd) = std::fs::read_dir(p) {
                for e in rd.flatten() {
                    make_dirs_writable(&e.path());
                }
            }
        }
    }
}

/// Remove a box: its checkout, its registration, optionally its branch, and every
/// bookkeeping file (record, session marker, lock). Takes the box's lock.
pub fn remove(
    repo: &Repo,
    layout: &Layout,
    target: &Target,
    delete_branch: bool,
) -> Result<Removed, TeardownError> {
    check_box_path(&target.entry.path, layout, repo)?;
    let lock = BoxLock::try_acquire(
        &layout.lock_path(&target.entry.leaf),
        target.entry.leaf.as_str(),
    )?;
    remove_locked(repo, layout, target, delete_branch, lock)
}

/// [`remove`], unless the box now holds more to lose than when `target` was assessed
/// (and the user, or the rule that needed no question, decided on that): the lock is
/// taken first, then the box is assessed again under it, so work done in the meantime
/// — a commit, a new file, an agent started — is never removed unseen.
pub fn remove_if_unchanged(
    repo: &Repo,
    layout: &Layout,
    target: &Target,
    delete_branch: bool,
) -> Result<Removed, TeardownError> {
    check_box_path(&target.entry.path, layout, repo)?;
    let lock = BoxLock::try_acquire(
        &layout.lock_path(&target.entry.leaf),
        target.entry.leaf.as_str(),
    )?;
    let entry = boxes::exact(repo, layout, target.entry.leaf.as_str())
        .unwrap_or_else(|| target.entry.clone());
    let now = self::target(entry, repo, layout);
    let stakes = |t: &Target| {
        let a = &t.assessment;
        (
            t.entry.dir_exists && a.dirty != Some(false),
            a.unreturned == Some(true) || a.orphaned,
            a.unpushed.unwrap_or(0),
            t.live,
        )
    };
    let (d0, u0, p0, l0) = stakes(target);
    let (d1, u1, p1, l1) = stakes(&now);
    let moved = now.assessment.work != target.assessment.work;
    if moved || (d1 && !d0) || (u1 && !u0) || p1 > p0 || (l1 && !l0) {
        return Err(TeardownError::Changed {
            leaf: target.entry.leaf.to_string(),
            now: describe(&now),
        });
    }
    remove_locked(repo, layout, &now, delete_branch, lock)
}

/// [`remove`], for a caller that already holds the box's `lock` (to decide under it).
fn remove_locked(
    repo: &Repo,
    layout: &Layout,
    target: &Target,
    delete_branch: bool,
    lock: BoxLock,
) -> Result<Removed, TeardownError> {
    let entry = &target.entry;
    check_box_path(&entry.path, layout, repo)?;
    // A live session was decided on (refused, asked, or forced): end it — a tmux
    // session, or a program a command runs in the foreground — so the agent is gone
    // before its box is. One the kernel will not let go keeps the box whole.
    let left = crate::session::end(&layout.session_path(&entry.leaf));
    if !left.is_empty() {
        return Err(TeardownError::Outlived {
            leaf: entry.leaf.to_string(),
            pids: left,
        });
    }
    // The container first: with the engine down, nothing is removed and the box stays
    // whole, so a later teardown (or `git sandbox prune`) finishes the job.
    if let Some(r) = entry.record.as_ref() {
        crate::runner::oci::remove_box_containers(r).map_err(TeardownError::Container)?;
    }
    // A warmer still cloning `target/` into the box: stopped, and waited for.
    crate::provision::warm::stop(&layout.box_state(&entry.leaf));
    let pruned_only = !entry.path.exists();
    // Asked before the directory goes: without a record, only its `.git` says so. A
    // clone or a sandboxed worktree: its branch lived in its own git data (a sandboxed
    // worktree's bare clone goes with the bookkeeping below).
    let is_clone = entry.owns_git();
    remove_tree(&entry.path).map_err(|source| TeardownError::Remove {
        path: entry.path.clone(),
        source,
    })?;
    if is_clone {
        // What Claude Code kept for the box (and the trust treebox carried to it).
        crate::provision::host_trust::after_teardown(&entry.path);
        // The pin lives in the recorded repository, wherever this command runs from.
        let common = entry
            .record
            .as_ref()
            .map_or(&repo.common_dir, |r| &r.common_dir);
        crate::provision::clone::remove_pin(common, entry.leaf.as_str()).map_err(|source| {
            TeardownError::Branch {
                branch: crate::provision::clone::pin_ref(entry.leaf.as_str()),
                source,
            }
        })?;
    }
    // Held through the branch deletion too: libgit2 (1.9) reports a branch as checked
    // out in a linked worktree whenever *any* admin dir under `<common>/worktrees/` is
    // half-made or half-removed (`git_repository_foreach_worktree` returns 1 when a
    // lookup fails), and treebox changes admin dirs only under this lock.
    let registration = crate::state::WaitedLock::acquire(&layout.registration_lock_path());
    // A registration whose `gitdir` cannot be read (a FIFO the box planted in its own
    // admin dir) does not name its checkout; git names it after the leaf.
    let unreadable_admin = (entry.admin_dir.is_none() && !is_clone)
        .then(|| repo.common_dir.join("worktrees").join(entry.leaf.as_str()))
        .filter(|a| {
            std::fs::symlink_metadata(a).is_ok_and(|m| m.is_dir())
                && !std::fs::metadata(a.join("gitdir")).is_ok_and(|m| m.is_file())
        });
    if let Some(admin) = entry.admin_dir.as_ref().or(unreadable_admin.as_ref()) {
        let worktrees = canonical(&repo.common_dir.join("worktrees"));
        if admin.parent().map(canonical).as_deref() == Some(worktrees.as_path()) {
            remove_tree(admin).map_err(|source| TeardownError::Remove {
                path: admin.clone(),
                source,
            })?;
        }
    }
    let branch = entry.shown_branch().map(str::to_string);
    let mut branch_deleted = false;
    // A clone's branch lived in the clone, and went with it (so did a sandboxed
    // worktree's, in its bare clone).
    if delete_branch && !is_clone {
        if let Some(b) = &branch {
            if !repo.branch_checked_out(b) {
                match repo.git.find_branch(b, git2::BranchType::Local) {
                    Ok(mut br) => {
                        br.delete().map_err(|source| TeardownError::Branch {
                            branch: b.clone(),
                            source,
                        })?;
                        branch_deleted = true;
                    }
                    Err(e) if e.code() == git2::ErrorCode::NotFound => {}
                    Err(source) => {
                        return Err(TeardownError::Branch {
                            branch: b.clone(),
                            source,
                        })
                    }
                }
            }
        }
    }
    drop(registration);
    let state = layout.box_state(&entry.leaf);
    remove_tree(&state).map_err(|source| TeardownError::Remove {
        path: state.clone(),
        source,
    })?;
    // The box's block of ports is free for the next box.
    crate::ports::release(&layout.record_path(&entry.leaf));
    lock.release_and_remove();
    Ok(Removed {
        leaf: entry.leaf.to_string(),
        path: entry.path.clone(),
        branch,
        branch_deleted,
        pruned_only,
    })
}

/// What became of a removed box's branch ([`settle_branch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BranchFate {
    /// Deleted: it held nothing its base does not have.
    Deleted { branch: String, verdict: Verdict },
    /// Kept, and why.
    Kept { branch: String, why: KeptBecause },
}

/// Why a removed box's branch was kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeptBecause {
    /// It holds work its base does not have.
    NotLanded(Verdict),
    /// treebox did not make it (the box checked out an existing branch), or the box
    /// switched to a branch of the user's.
    NotMadeByTreebox,
    /// Another worktree has it checked out.
    CheckedOut,
    /// Its history could not be read; the reason.
    Unreadable(String),
}

/// After a worktree box is removed, its branch (in the user's repository) goes too when
/// removing it loses nothing: no work beyond the box's start, or work that has landed
/// in `origin/<base>` or `<base>` ([`crate::git::landed`]). When the answer is "not
/// landed" and there is an origin, origin is fetched once (no prompt, at most
/// [`ORIGIN_FETCH_SECS`]) and asked again: a forge's merge is seen without a manual
/// fetch. Only a branch treebox made for the box is ever deleted, and only at the tip
/// that was judged. `None`: no such branch.
pub fn settle_branch(
    repo: &Repo,
    layout: &Layout,
    branch: &str,
    record: Option<&Record>,
) -> Option<BranchFate> {
    let tip = repo.local_branch(branch)?;
    let kept = |why| {
        Some(BranchFate::Kept {
            branch: branch.to_string(),
            why,
        })
    };
    // Made by treebox for this box: the recorded branch, or its new name after a
    // rename in the box (the recorded one is then gone).
    let ours = record.filter(|r| {
        r.created_branch && (r.branch == branch || repo.local_branch(&r.branch).is_none())
    });
    let Some(record) = ours else {
        return kept(KeptBecause::NotMadeByTreebox);
    };
    let start = record
        .base_commit
        .as_deref()
        .and_then(|c| git2::Oid::from_str(c).ok());
    let ask = || {
        let targets = landed::targets_for_base(&repo.git, &record.base);
        landed::verdict(&repo.git, tip, start, &targets)
    };
    let mut verdict = ask();
    if matches!(verdict, Ok(Verdict::NotLanded { .. })) && repo.has_remote("origin") {
        let git = crate::git::GitCli::for_repo(&repo.common_dir, None);
        let limit = std::time::Duration::from_secs(ORIGIN_FETCH_SECS);
        if crate::provision::fetch::fetch_origin_within(&git, &repo.main_root, limit) {
            verdict = ask();
        }
    }
    let verdict = match verdict {
        Ok(v) => v,
        Err(e) => return kept(KeptBecause::Unreadable(crate::sanitize::chain(&e))),
    };
    if !verdict.nothing_to_lose() {
        return kept(KeptBecause::NotLanded(verdict));
    }
    // As in `remove_locked`: libgit2 calls a branch checked out while any admin dir is
    // half-made, and treebox changes admin dirs only under this lock.
    let _registration = crate::state::WaitedLock::acquire(&layout.registration_lock_path());
    if repo.branch_checked_out(branch) {
        return kept(KeptBecause::CheckedOut);
    }
    let deleted = repo
        .git
        .find_branch(branch, git2::BranchType::Local)
        .and_then(|mut b| match b.get().target() {
            Some(t) if t == tip => b.delete().map(|()| true),
            _ => Ok(false),
        });
    match deleted {
        Ok(true) => Some(BranchFate::Deleted {
            branch: branch.to_string(),
            verdict,
        }),
        Ok(false) => kept(KeptBecause::Unreadable(
            "it moved while it was judged".into(),
        )),
        Err(e) => kept(KeptBecause::Unreadable(e.message().to_string())),
    }
}

/// One line saying what removing the box would lose.
pub fn describe(t: &Target) -> String {
    let a = &t.assessment;
    let mut parts = Vec::new();
    if !t.entry.dir_exists {
        parts.push("directory already gone".to_string());
    }
    match a.dirty {
        Some(true) => parts.push("uncommitted changes".into()),
        None if t.entry.dir_exists => parts.push("changes unknown (unreadable checkout)".into()),
        _ => {}
    }
    match &t.landed {
        Some(Verdict::Landed { how, into }) => {
            parts.push(format!("landed ({} into {into})", how.describe()))
        }
        Some(Verdict::NotLanded {
            ahead: Some(ahead), ..
        }) if ahead.count > 0 => parts.push(format!(
            "{}{} commit{} not in {}{}",
            ahead.count,
            if ahead.capped { "+" } else { "" },
            if ahead.count == 1 { "" } else { "s" },
            ahead.of,
            // A worktree's branch on a remote-tracking ref of the repository (a clone's
            // own remote-tracking refs are the box's word, not counted).
            if a.unpushed == Some(0) && !t.entry.owns_git() {
                " (pushed)"
            } else {
                ""
            }
        )),
        // Nothing to compare with (no record, no base): what no remote has.
        None => {
            if let Some(n) = a.unpushed.filter(|n| *n > 0) {
                parts.push(format!(
                    "{n} unpushed commit{}",
                    if n == 1 { "" } else { "s" }
                ));
            }
        }
        _ => {}
    }
    let unreturned = match t.is_landed() {
        true => a.unreturned_other,
        false => a.unreturned,
    };
    if unreturned == Some(true) {
        parts.push("holds commits the repository does not have".into());
    }
    if a.orphaned && !t.is_landed() {
        parts.push("holds commits no branch, tag or remote has".into());
    }
    if a.merged == Some(true) && !a.empty && !t.is_landed() {
        parts.push("merged".into());
    }
    if a.empty {
        parts.push("empty".into());
    }
    if t.live {
        parts.push("agent session live".into());
    }
    if parts.is_empty() {
        "committed and pushed".into()
    } else {
        parts.join(", ")
    }
}
