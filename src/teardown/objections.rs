//! What removing a box without `--force` weighs: each thing it would lose that the
//! user may not know about (SPEC §2). `git sandbox down NAME` asks about them on a
//! terminal and refuses without one (exit 5); the MCP server's `box_remove` always
//! refuses. Either way nothing is removed while one stands; with none, the box goes
//! through [`super::remove_if_unchanged`].
//!
//! Called by `cli/sandbox/down.rs` and `cli/mcp/tools.rs`; this module only decides.

use super::Target;
use crate::git::Repo;

/// One thing removing the box would lose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Objection {
    /// Uncommitted or untracked changes.
    Dirty,
    /// A checkout whose changes cannot be read.
    Unreadable,
    /// Commits the repository does not have (when its work has landed: on another
    /// branch, a tag or the stash).
    Unreturned,
    /// Commits neither the repository nor origin has (a worktree whose branch was
    /// deleted), its work not landed.
    Orphaned,
    /// A live session: an agent, or a shell.
    Live,
}

impl Objection {
    /// As the refusal or the question says it.
    pub fn says(self) -> &'static str {
        match self {
            Objection::Dirty => "it has uncommitted or untracked changes",
            Objection::Unreadable => "its changes cannot be read",
            Objection::Unreturned => "it holds commits the repository does not have",
            Objection::Orphaned => "it holds commits that neither the repository nor origin has",
            Objection::Live => "a session is live in it (an agent, or a shell)",
        }
    }
}

/// Everything that stands against removing `t` unforced, in the order they are told;
/// none: it may go. Landed work is not lost; another branch, a tag or the stash in the
/// box may be.
pub fn objections(t: &Target) -> Vec<Objection> {
    let mut out = Vec::new();
    match t.assessment.dirty {
        Some(true) => out.push(Objection::Dirty),
        None if t.entry.dir_exists => out.push(Objection::Unreadable),
        _ => {}
    }
    let unreturned = match t.is_landed() {
        true => t.assessment.unreturned_other,
        false => t.assessment.unreturned,
    };
    if unreturned == Some(true) {
        out.push(Objection::Unreturned);
    }
    if t.assessment.orphaned && !t.is_landed() {
        out.push(Objection::Orphaned);
    }
    if t.live {
        out.push(Objection::Live);
    }
    out
}

/// `box `NAME`: what stands, joined` — the refusal's message and the question's start.
pub fn describe(name: &str, objections: &[Objection]) -> String {
    let says: Vec<&str> = objections.iter().map(|o| o.says()).collect();
    format!("box `{name}`: {}", says.join(", and "))
}

/// Is the tip of the box's current branch in the repository? Then work the
/// repository lacks is on another branch, a tag or the stash — which `git sandbox
/// fetch` (it brings the current branch) does not bring back.
pub fn current_branch_returned(t: &Target, repo: &Repo) -> bool {
    crate::land::back::own_git(&t.entry)
        .head()
        .and_then(|(_, tip)| tip)
        .is_some_and(|tip| repo.git.odb().is_ok_and(|o| o.exists(tip)))
}
