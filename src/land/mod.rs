//! Review and land (SPEC §10b): what a box changed, and whether it has landed.
//!
//! Every read of a box here goes through [`BoxGit`]: its commits and trees from the
//! object stores treebox gave it, its checkout read by libgit2 — a box's git is
//! hostile data, and nothing it configured runs. The integration check itself is a
//! pure question over commits and trees ([`crate::git::landed`]).
//!
//! - [`diff`]: `git treebox diff` (three-dot against the base, plus the working tree).
//! - [`onto`]: `git treebox land` — the box's work made the base's.
//! - [`publish`]: `land --push` and `--pr` (the guard's decision, `gh`).
//! - [`landed`]: a box's verdict, afresh (teardown, prune) or kept by commit ids
//!   (`list`, `ls`).
//!
//! Callers: `cli/diff.rs`, `cli/list.rs`, `cli/sandbox/ls.rs`, [`crate::teardown`],
//! [`crate::maintain::prune`].

pub mod diff;
pub mod landed;
pub mod onto;
mod open;
pub mod pager;
pub mod publish;
pub mod scan;

pub use open::{BoxGit, OpenError};
