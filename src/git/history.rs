//! Capped walks of a box's history (SPEC §8.8): how many commits a box has beyond a
//! base, whether its tip is in a base's history, always with a bound on what is read.
//!
//! A box writes its own history, and a history is cheap to make large: 1.2 M empty
//! commits are 178 MB of objects, made in seconds with `git fast-import`. libgit2's
//! merge-base and `graph_descendant_of` walk it whole (18 s, 712 MB for one `ls`), and
//! so does a libgit2 revwalk with a hidden commit: before it yields anything, it marks
//! every commit reachable from the pushed tip and not from the hidden one
//! (`limit_list`), so `take(n)` bounds nothing. [`since`] is the walk done here
//! instead, the way git's `limit_list` does it (newest commit first, a commit reached
//! from a hidden one is hidden, stopped once everything still queued is hidden), with
//! two bounds: at most `cap` commits of the box's own, and at most [`MAX_READ`]
//! commits read in all. Over either, the answer is [`WalkError::TooLarge`], and the
//! caller reports the field unknown or too large. Within them, libgit2's merge-base
//! of the same two commits reads what this walk read, about: callers ask [`since`]
//! first and libgit2 after.
//!
//! Commit dates are the box's word. A box that dates its commits in the past makes
//! the walk read the base's newer history first: bounded by [`MAX_READ`] too. A box
//! that skews dates among its commits can make a commit look like its own when it is
//! the base's (git's `limit_list` has the same slop): counted as the box's, the safe
//! direction (not landed, more commits ahead).

use std::collections::{BinaryHeap, HashMap};

use git2::{Oid, Repository};

/// How many commits of a box's own (not in the base it is compared with) are counted
/// or walked: `list`'s landed verdict, `watch`'s `+N −M`, `assess`'s unpushed count.
pub const MAX_COMMITS: usize = 10_000;

/// How many commits one walk reads in all, the box's and the base's.
pub const MAX_READ: usize = 100_000;

/// Once nothing queued is the box's own, this many more commits are read before the
/// walk stops (a base commit dated before one of the box's can still reach it).
const SLOP: usize = 5;

#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    /// Past the walk's bounds: more than the cap of the box's own commits, or more
    /// than [`MAX_READ`] read in all.
    #[error("the history is too large to walk (more than {0} commits)")]
    TooLarge(usize),
    /// Past a tree budget ([`super::trees`]).
    #[error("the trees are too large to compare (more than {0} entries)")]
    TooManyEntries(u64),
    #[error(transparent)]
    Git(#[from] git2::Error),
}

impl WalkError {
    /// Past a bound (not a failure to read).
    pub fn is_too_large(&self) -> bool {
        !matches!(self, WalkError::Git(_))
    }
}

const OURS: u8 = 1;
const HIDDEN: u8 = 2;

struct Node {
    time: i64,
    parents: Vec<Oid>,
    flags: u8,
    /// Walked: its parents are read and have its flags.
    walked: bool,
    queued: bool,
}

struct Walk<'r> {
    repo: &'r Repository,
    nodes: HashMap<Oid, Node>,
    queue: BinaryHeap<(i64, u64, Oid)>,
    seq: u64,
    /// Queued nodes that are ours alone.
    live: usize,
    read: usize,
    max_read: usize,
}

impl Walk<'_> {
    /// Read `oid` (once), give it `flags`, and queue it when it is not walked yet. A
    /// node hidden now hides what it was walked to, at once (as git's
    /// `mark_parents_uninteresting`): dates do not decide that.
    fn mark(&mut self, oid: Oid, flags: u8) -> Result<(), WalkError> {
        if !self.nodes.contains_key(&oid) {
            self.read += 1;
            if self.read > self.max_read {
                return Err(WalkError::TooLarge(self.max_read));
            }
            let c = self.repo.find_commit(oid)?;
            self.nodes.insert(
                oid,
                Node {
                    time: c.time().seconds(),
                    parents: c.parent_ids().collect(),
                    flags: 0,
                    walked: false,
                    queued: false,
                },
            );
        }
        if flags & HIDDEN != 0 {
            let mut stack = vec![oid];
            while let Some(o) = stack.pop() {
                let Some(n) = self.nodes.get_mut(&o) else {
                    continue;
                };
                if n.flags & HIDDEN != 0 {
                    continue;
                }
                if n.queued && n.flags == OURS {
                    self.live -= 1;
                }
                n.flags |= HIDDEN;
                if n.walked {
                    stack.extend(n.parents.iter().copied());
                }
            }
        }
        let Some(n) = self.nodes.get_mut(&oid) else {
            return Ok(());
        };
        n.flags |= flags;
        if !n.walked && !n.queued {
            n.queued = true;
            self.seq += 1;
            self.queue.push((n.time, self.seq, oid));
            if n.flags == OURS {
                self.live += 1;
            }
        }
        Ok(())
    }
}

/// The commits reachable from `tip` and from none of `hide`, newest first: at most
/// `cap` of them, else [`WalkError::TooLarge`]. `tip` and each of `hide` must be
/// commits of `repo`.
pub fn since(repo: &Repository, tip: Oid, hide: &[Oid], cap: usize) -> Result<Vec<Oid>, WalkError> {
    walk(repo, tip, hide, cap, MAX_READ)
}

fn walk(
    repo: &Repository,
    tip: Oid,
    hide: &[Oid],
    cap: usize,
    max_read: usize,
) -> Result<Vec<Oid>, WalkError> {
    let mut w = Walk {
        max_read,
        repo,
        nodes: HashMap::new(),
        queue: BinaryHeap::new(),
        seq: 0,
        live: 0,
        read: 0,
    };
    w.mark(tip, OURS)?;
    for h in hide {
        w.mark(*h, HIDDEN)?;
    }
    let mut ours = Vec::new();
    let mut slop = SLOP;
    while let Some((_, _, oid)) = w.queue.pop() {
        let Some(n) = w.nodes.get_mut(&oid) else {
            continue;
        };
        n.queued = false;
        n.walked = true;
        let flags = n.flags;
        let parents = n.parents.clone();
        if flags == OURS {
            w.live -= 1;
            ours.push(oid);
            if ours.len() > cap {
                return Err(WalkError::TooLarge(cap));
            }
        }
        let pass = if flags & HIDDEN != 0 { HIDDEN } else { OURS };
        for p in parents {
            w.mark(p, pass)?;
        }
        if w.live == 0 {
            if slop == 0 {
                break;
            }
            slop -= 1;
        } else {
            slop = SLOP;
        }
    }
    // A commit first seen as ours and later reached from a hidden one is not ours.
    ours.retain(|o| w.nodes.get(o).is_some_and(|n| n.flags & HIDDEN == 0));
    Ok(ours)
}

/// Is `tip` the commit `of`, or one of its ancestors? Walked with [`since`] (at most
/// [`MAX_COMMITS`] of the box's own).
pub fn within(repo: &Repository, tip: Oid, of: Oid) -> Result<bool, WalkError> {
    if tip == of {
        return Ok(true);
    }
    Ok(since(repo, tip, &[of], MAX_COMMITS)?.is_empty())
}

/// The merge-base of `tip` and `base`, asked of libgit2 only once [`since`] has found
/// at most [`MAX_COMMITS`] commits of `tip`'s beyond `base` (libgit2's own walk
/// has no bound). `Ok(None)`: unrelated histories.
pub fn merge_base(repo: &Repository, tip: Oid, base: Oid) -> Result<Option<Oid>, WalkError> {
    since(repo, tip, &[base], MAX_COMMITS)?;
    match repo.merge_base(tip, base) {
        Ok(mb) => Ok(Some(mb)),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests;
