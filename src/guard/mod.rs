//! The pre-push guard, in one place: what stops a box's placeholder branch from being
//! published by accident.
//!
//! - `decide.rs` (re-exported here) is the pure decision: [`parse_pre_push`] reads git's
//!   pre-push stdin, [`decide()`] refuses placeholder branches. No I/O; unit-tested.
//! - [`hook`] is the runtime of `git-treebox-guard` (entry point
//!   `hooks/git-treebox-guard.rs`), the binary installed under every hook name in a
//!   box's private hooks dir: it applies the decision as `pre-push` and chains to the
//!   repository's own hooks.
//!
//! Installing the hooks into a box is provisioning's job (`provision::guard`); it uses
//! [`HOOK_NAMES`] from here.

mod decide;
pub mod hook;

pub use decide::*;
