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
//! walked by an earlier call (the next commit of a history) is not walked again. Callers: [`super::onto`], `cli/land_pr.rs`,
//! [`super::diff`] (marks). `create`'s base check is provision's planner's, by
//! [`is_boxes_dir`].

use std::collections::HashSet;

use git2::{Commit, ObjectType, Oid, Repository};

/// Tree entries one land may look at (all its trees together).
pub const ENTRY_BUDGET: usize = 5_000_000;
/// Directory levels a path may have (git's own `core.maxTreeDepth` default).
pub const MAX_DEPTH: usize = 4096;
/// Commits of a box one land may look at.
pub const COMMIT_BUDGET: usize = 10_000;

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

fn in_commit(c: &Option<String>) -> String {
    c.as_deref()
        .map(|c| format!(" (in commit {c})"))
        .unwrap_or_default()
}

pub use crate::state::layout::is_boxes_dir;

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
}

impl<'r> Scan<'r> {
    pub fn new(repo: &'r Repository) -> Scan<'r> {
        Scan {
            repo,
            seen: HashSet::new(),
            left: ENTRY_BUDGET,
        }
    }

    /// Every path of the tree `new` that `old` (a tree, or none) does not have as it
    /// is: none may lie under the boxes' directory or hold a control. `commit` names
    /// the commit in a refusal.
    pub fn tree(&mut self, old: Option<Oid>, new: Oid, commit: Option<Oid>) -> Result<(), Refusal> {
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
/// its tip and not from the base. At most [`COMMIT_BUDGET`], counted by an
/// unsorted walk first (a topological sort reads the whole history before the first
/// commit comes out); over it, the work is too large to land.
pub fn history(r: &Repository, onto: Option<Oid>, tip: Oid) -> Result<Vec<(Oid, bool)>, Refusal> {
    let walk = || -> Result<git2::Revwalk<'_>, git2::Error> {
        let mut w = r.revwalk()?;
        w.push(tip)?;
        if let Some(o) = onto {
            w.hide(o)?;
        }
        Ok(w)
    };
    let mut w = walk()?;
    w.set_sorting(git2::Sort::NONE)?;
    if w.take(COMMIT_BUDGET + 1).count() > COMMIT_BUDGET {
        return Err(Refusal::TooLarge {
            what: "commits",
            limit: COMMIT_BUDGET,
        });
    }
    let mut w = walk()?;
    w.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)?;
    let mut out = Vec::new();
    for id in w {
        let id = id?;
        out.push((id, r.find_commit(id)?.parent_count() > 1));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
