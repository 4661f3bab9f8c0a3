//! What `land` may write into the user's repository (SPEC §8.11): what a reviewer
//! would — no path under the boxes' own directory, no path and no commit text carrying
//! terminal controls.
//!
//! - The boxes' directory is `.treebox` at the top of the tree (the root,
//!   [`crate::state::layout::BOX_ROOT`], is fixed under it; a container box's checkout
//!   lives outside the working tree altogether). It is compared as macOS compares
//!   names: ASCII case folded (`.TreeBox/` is the same directory on APFS and HFS+) and
//!   the code points HFS+ ignores left out (git's own `.git` check does the same). A
//!   `.treebox` deeper down (`docs/.treebox/x`) is an ordinary name: nothing of
//!   treebox's lives there, and the user's tools treat it as any other directory.
//! - Terminal controls: C0 (tab and newline included: a path has no use for them), DEL,
//!   C1 (U+0080–U+009F, and the raw bytes 0x80–0x9F that are not UTF-8, which a
//!   terminal in an 8-bit locale reads as C1), and the bidirectional controls
//!   ([`crate::sanitize::is_bidi_control`]).
//!
//! [`Scan`] walks only what changed between two trees (an unchanged subtree is one id
//! comparison), within [`ENTRY_BUDGET`] entries and [`MAX_DEPTH`] levels for a whole
//! land: past either the work is refused as too large, never walked for minutes. Within
//! one tree every entry counts as the merge would count it — a tree made of identical
//! subtrees (4 M paths from 300 KB of objects) is as large as it expands to, and is
//! refused before libgit2's merge would build an index of it; a pair of trees already
//! walked by an earlier call (the next commit of a history) is not walked again.
//!
//! Before that walk, each pair of trees is counted with [`crate::git::trees`] (every
//! tree object read once, so the 4 M-path bomb costs 22 reads) against a budget scaled
//! with the base's own tree ([`crate::git::trees::budget_for`]): a bomb is refused in
//! milliseconds instead of walked to [`ENTRY_BUDGET`] (which stays as the bound on a
//! whole land's walks), and [`Scan::fits`] does the same for the trees libgit2 is
//! about to merge or cherry-pick (it builds an index of every entry). The box's
//! history is [`crate::git::history`]'s capped walk ([`history`]), the one capped
//! walk of the codebase. Callers: [`super::onto`], `cli/land_report.rs`, [`super::diff`]
//! (marks). `create`'s base check is provision's planner's, by [`is_boxes_dir`].

use std::collections::HashSet;

use git2::{Commit, ObjectType, Oid, Repository};

use crate::git::history::{self, WalkError};
use crate::git::trees::{self, Trees};

/// Tree entries one land may look at (all its trees together).
pub const ENTRY_BUDGET: usize = 5_000_000;
/// Directory levels a path may have (git's own `core.maxTreeDepth` default). The
/// count before the walk ([`crate::git::trees::MAX_DEPTH`], 512) refuses deeper trees
/// first; this bounds the walk on its own.
pub const MAX_DEPTH: usize = 4096;
/// Commits of a box one land may look at: the capped walk's own cap.
pub const COMMIT_BUDGET: usize = history::MAX_COMMITS;

/// What is wrong with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathFlaw {
    /// Under (or at) the boxes' directory.
    BoxesRoot,
    /// A component holds a terminal control.
    Controls,
}

impl PathFlaw {
    /// As `diff --json` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            PathFlaw::BoxesRoot => "boxes-root",
            PathFlaw::Controls => "controls",
        }
    }
}

/// Why the box's work may not land as it is. Nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("the box's work writes `{path}`{}, under `.treebox/`, the boxes' own directory", in_commit(.commit))]
    BoxesRoot {
        /// Sanitised for a terminal.
        path: String,
        commit: Option<String>,
    },
    #[error("the box's work writes a path holding terminal control characters, `{path}`{}", in_commit(.commit))]
    ControlPath {
        /// Sanitised for a terminal.
        path: String,
        commit: Option<String>,
    },
    #[error("the box's commit {commit} carries terminal control characters in its {field}")]
    ControlText { commit: String, field: &'static str },
    #[error("the box's work is too large to check before landing (over {limit} {what})")]
    TooLarge { what: &'static str, limit: usize },
    #[error("could not read the box's work")]
    Git(#[from] git2::Error),
}

impl From<WalkError> for Refusal {
    /// Past a bound of [`crate::git::history`] or [`crate::git::trees`]: too large.
    fn from(e: WalkError) -> Refusal {
        match e {
            WalkError::TooLarge(n) => Refusal::TooLarge {
                what: "commits",
                limit: n,
            },
            WalkError::TooManyEntries(n) => Refusal::TooLarge {
                what: "tree entries",
                limit: usize::try_from(n).unwrap_or(usize::MAX),
            },
            WalkError::Git(e) => Refusal::Git(e),
        }
    }
}

fn in_commit(c: &Option<String>) -> String {
    c.as_deref()
        .map(|c| format!(" (in commit {c})"))
        .unwrap_or_default()
}

pub use crate::names::is_boxes_dir;

/// Does `b` hold a terminal control (see the module doc), `allowed` characters aside?
fn controls_in(b: &[u8], allowed: impl Fn(char) -> bool) -> bool {
    b.utf8_chunks().any(|chunk| {
        chunk
            .valid()
            .chars()
            .any(|c| (c.is_control() && !allowed(c)) || crate::sanitize::is_bidi_control(c))
            || chunk.invalid().iter().any(|x| (0x80..=0x9f).contains(x))
    })
}

/// A name (or a whole path) with a terminal control in it.
pub fn name_has_controls(name: &[u8]) -> bool {
    controls_in(name, |_| false)
}

/// What is wrong with a whole path (`/`-separated, from the top of the tree).
pub fn path_flaw(path: &[u8]) -> Option<PathFlaw> {
    let top = path.split(|b| *b == b'/').next().unwrap_or(path);
    if is_boxes_dir(top) {
        Some(PathFlaw::BoxesRoot)
    } else if name_has_controls(path) {
        Some(PathFlaw::Controls)
    } else {
        None
    }
}

/// A commit message with terminal controls: newlines, tabs and a CR ending a line are
/// text; everything else [`name_has_controls`] counts is not.
pub fn message_has_controls(m: &[u8]) -> bool {
    let mut plain = Vec::with_capacity(m.len());
    for (i, b) in m.iter().enumerate() {
        if !(*b == b'\r' && m.get(i + 1) == Some(&b'\n')) {
            plain.push(*b);
        }
    }
    controls_in(&plain, |c| c == '\n' || c == '\t')
}

/// Which part of a commit carries terminal controls (as `git log` would print it raw),
/// if any: its message (or a message in another encoding, which `git log` re-encodes
/// and treebox cannot vouch for), its author, its committer.
pub fn commit_flaw(c: &Commit) -> Option<&'static str> {
    let encoding = c.message_encoding().ok().flatten();
    if encoding.is_some_and(|e| !e.eq_ignore_ascii_case("utf-8") && !e.eq_ignore_ascii_case("utf8"))
    {
        return Some("message encoding");
    }
    if message_has_controls(c.message_raw_bytes()) {
        return Some("message");
    }
    let who = |s: git2::Signature| {
        name_has_controls(s.name_bytes()) || name_has_controls(s.email_bytes())
    };
    if who(c.author()) {
        return Some("author");
    }
    if who(c.committer()) {
        return Some("committer");
    }
    None
}

/// A short id as messages show it.
pub fn short(id: Oid) -> String {
    id.to_string().chars().take(12).collect()
}

/// One land's walk of trees (see the module doc).
pub struct Scan<'r> {
    repo: &'r Repository,
    /// Pairs (old, new, at the top) walked clean by earlier calls.
    seen: HashSet<(Option<Oid>, Oid, bool)>,
    left: usize,
    /// Counts of trees, before anything walks or merges them.
    trees: Trees<'r>,
}

impl<'r> Scan<'r> {
    /// A scan within [`trees::MAX_ENTRIES`] entries a question (a base of its size,
    /// or smaller).
    pub fn new(repo: &'r Repository) -> Scan<'r> {
        Scan::within(repo, trees::MAX_ENTRIES)
    }

    fn within(repo: &'r Repository, budget: u64) -> Scan<'r> {
        Scan {
            repo,
            seen: HashSet::new(),
            left: ENTRY_BUDGET,
            trees: Trees::new(repo, budget),
        }
    }

    /// A scan of work landing on the commit `base`: its budget a question is
    /// [`trees::budget_for`] the base's own tree (the user's: counted whole, each tree
    /// object once).
    pub fn on(repo: &'r Repository, base: Option<Oid>) -> Result<Scan<'r>, Refusal> {
        let own = match base {
            Some(b) => {
                let tree = repo.find_commit(b)?.tree_id();
                Trees::new(repo, u64::MAX).entries(tree)?
            }
            None => 0,
        };
        Ok(Scan::within(repo, trees::budget_for(own)))
    }

    /// Refuse, as too large, any of `trees` holding more entries than a question's
    /// budget: asked before libgit2 merges or cherry-picks them (it holds every entry
    /// of each in an index).
    pub fn fits(&mut self, trees: &[Oid]) -> Result<(), Refusal> {
        for t in trees {
            self.trees.fresh();
            self.trees.entries(*t)?;
        }
        Ok(())
    }

    /// Every path of the tree `new` that `old` (a tree, or none) does not have as it
    /// is: none may lie under the boxes' directory or hold a control. `commit` names
    /// the commit in a refusal.
    pub fn tree(&mut self, old: Option<Oid>, new: Oid, commit: Option<Oid>) -> Result<(), Refusal> {
        // Counted first, each tree object read once: a bomb is refused here.
        self.trees.fresh();
        self.trees.changed(old, Some(new))?;
        let mut stack: Vec<(Option<Oid>, Oid, Vec<u8>, usize)> = Vec::new();
        let mut walked = vec![(old, new, true)];
        if old != Some(new) && !self.seen.contains(&(old, new, true)) {
            stack.push((old, new, Vec::new(), 0));
        }
        while let Some((old, new, prefix, depth)) = stack.pop() {
            if depth >= MAX_DEPTH {
                return Err(Refusal::TooLarge {
                    what: "directory levels",
                    limit: MAX_DEPTH,
                });
            }
            let old_tree = old.map(|o| self.repo.find_tree(o)).transpose()?;
            let new_tree = self.repo.find_tree(new)?;
            for entry in new_tree.iter() {
                self.left = self.left.checked_sub(1).ok_or(Refusal::TooLarge {
                    what: "tree entries",
                    limit: ENTRY_BUDGET,
                })?;
                let name = entry.name_bytes();
                let before = old_tree
                    .as_ref()
                    .filter(|_| !name.contains(&0))
                    .and_then(|t| t.get_name_bytes(name));
                if before
                    .as_ref()
                    .is_some_and(|b| b.id() == entry.id() && b.filemode() == entry.filemode())
                {
                    continue;
                }
                let path = || {
                    let mut p = prefix.clone();
                    p.extend_from_slice(name);
                    crate::sanitize::line(&String::from_utf8_lossy(&p))
                };
                let commit = commit.map(short);
                if depth == 0 && is_boxes_dir(name) {
                    return Err(Refusal::BoxesRoot {
                        path: path(),
                        commit,
                    });
                }
                if name_has_controls(name) {
                    return Err(Refusal::ControlPath {
                        path: path(),
                        commit,
                    });
                }
                if entry.kind() == Some(ObjectType::Tree) {
                    let old_sub = before
                        .filter(|b| b.kind() == Some(ObjectType::Tree))
                        .map(|b| b.id());
                    if !self.seen.contains(&(old_sub, entry.id(), false)) {
                        walked.push((old_sub, entry.id(), false));
                        let mut p = prefix.clone();
                        p.extend_from_slice(name);
                        p.push(b'/');
                        stack.push((old_sub, entry.id(), p, depth + 1));
                    }
                }
            }
        }
        self.seen.extend(walked);
        Ok(())
    }

    /// Commits that would enter the user's history as they are (a fast-forward's, a
    /// merge's, a pull request's): each one's own change (against its first parent)
    /// is walked as [`Self::tree`] walks it; the first whose text carries controls is
    /// returned with the part that does ([`commit_flaw`]), for the caller to replay
    /// or refuse.
    pub fn commits(&mut self, ids: &[Oid]) -> Result<Option<(Oid, &'static str)>, Refusal> {
        let mut text = None;
        for id in ids {
            let c = self.repo.find_commit(*id)?;
            let parent = c.parent(0).ok().map(|p| p.tree_id());
            self.tree(parent, c.tree_id(), Some(*id))?;
            if text.is_none() {
                text = commit_flaw(&c).map(|f| (*id, f));
            }
        }
        Ok(text)
    }
}

/// The box's commits, oldest first, each with whether it is a merge: reachable from
/// its tip and not from the base. At most [`COMMIT_BUDGET`], counted by
/// [`history::since`]'s capped walk first (libgit2's revwalk with a hidden commit
/// reads the whole history before the first commit comes out, sorted or not); over
/// it, the work is too large to land. Within it, libgit2's topological order of the
/// same commits reads what the capped walk read, about.
pub fn history(r: &Repository, onto: Option<Oid>, tip: Oid) -> Result<Vec<(Oid, bool)>, Refusal> {
    let hide: Vec<Oid> = onto.into_iter().collect();
    let ours = history::since(r, tip, &hide, COMMIT_BUDGET)?;
    if ours.is_empty() {
        return Ok(Vec::new());
    }
    let mut w = r.revwalk()?;
    w.push(tip)?;
    for h in &hide {
        w.hide(*h)?;
    }
    w.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)?;
    let mut out = Vec::with_capacity(ours.len());
    for id in w {
        let id = id?;
        out.push((id, r.find_commit(id)?.parent_count() > 1));
    }
    Ok(out)
}

/// The bounds asked of the box's tip alone, before anything reads its checkout (a
/// status of a tree bomb at `HEAD` walks every entry): at most [`COMMIT_BUDGET`]
/// commits beyond `base` ([`history::since`]) and a tip tree within the budget of
/// [`Scan::on`]. Only a bound refuses here; a failure to read is the later steps'
/// to report.
pub fn tip_fits(r: &Repository, base: Option<Oid>, tip: Oid) -> Result<(), Refusal> {
    let bounded = |r: Result<(), Refusal>| match r {
        Err(e @ Refusal::TooLarge { .. }) => Err(e),
        _ => Ok(()),
    };
    let hide: Vec<Oid> = base.into_iter().collect();
    bounded(
        history::since(r, tip, &hide, COMMIT_BUDGET)
            .map(drop)
            .map_err(Refusal::from),
    )?;
    let tree = match r.find_commit(tip) {
        Ok(c) => c.tree_id(),
        Err(_) => return Ok(()),
    };
    bounded(Scan::on(r, base).and_then(|mut s| s.fits(&[tree])))
}

#[cfg(test)]
mod tests;
