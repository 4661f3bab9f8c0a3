//! Review and land (SPEC §10b): what a box changed, and whether it has landed.
//!
//! Every read of a box here goes through [`BoxGit`]: its commits and trees from the
//! object stores treebox gave it, its checkout read by libgit2 — a box's git is
//! hostile data, and nothing it configured runs. The integration check itself is a
//! pure question over commits and trees ([`crate::git::landed`]).
//!
//! - [`diff`]: `git treebox diff` (three-dot against the base, plus the working tree).
//! - [`flow`]: `land` as engine calls under every front end (its refusals, then
//!   [`onto`] or a pull request).
//! - [`onto`]: the box's work made the base's.
//! - [`publish`]: `land --push` and `--pr` (the guard's decision, `gh`).
//! - [`back`]: a clone's (a sandboxed worktree's) work bundled and brought back
//!   (`git sandbox bundle`, `fetch`, and `land` of such a box).
//! - [`landed`]: a box's verdict, afresh (teardown, prune) or kept by commit ids
//!   (`list`, `ls`).
//!
//! Callers: `cli/diff.rs`, `cli/list.rs`, `cli/sandbox/ls.rs`, [`crate::teardown`],
//! [`crate::maintain::prune`].

pub mod back;
pub mod diff;
pub mod far;
pub mod flow;
pub mod landed;
pub mod onto;
mod open;
pub mod pager;
pub mod publish;
pub mod scan;

pub use open::{BoxGit, OpenError};
