//! Everything treebox knows about git.
//!
//! - [`repo`]: reads through libgit2 (which runs no hooks, filters or helpers): finding
//!   the repository, resolving refs, the worktree registrations.
//! - [`blobs`]: the sizes of the objects a box would bring back, from their headers.
//! - [`caps`]: how large a file of a box's git data may be before it is not read
//!   (SPEC §8.8), scaled from the user's own repository.
//! - [`history`]: capped walks of a box's history (commits of its own, ancestry).
//! - [`landed`]: has a box's work landed in its base (merged, rebased, squash-merged)?
//! - [`cli`]: the one builder of `git` subprocesses, with exec-shaped configuration
//!   pinned to inert values (SPEC §8.1).
//! - [`objects`]: which object stores a box's git dir reaches, refused unless they
//!   are the ones treebox gave it (SPEC §8.4).
//! - `pins`: what the repository-level config (which a box may write) sets, every
//!   include followed, as git and as a conservative libgit2 walk read it.
//! - [`trees`]: entry budgets on a box's trees, counted before a diff or merge.
//! - [`porcelain`]: pure parsers of git's machine-readable output.

pub mod blobs;
pub mod caps;
pub mod cli;
pub mod history;
pub mod landed;
pub mod objects;
mod pins;
pub(crate) use pins::{blocking_include, names_include};
pub mod porcelain;
pub mod repo;
pub mod trees;

pub use cli::GitCli;
pub use repo::Repo;

/// Let libgit2 open repositories whatever their owner, once, before any is opened.
///
/// A container box's checkout and git data belong to the agent's uid (SPEC §7), so
/// git's ownership check (`safe.directory`) keeps the user's own `git`, a shell prompt
/// or an editor from running what the box configured there (SPEC §8.7). libgit2 applies
/// the same check, but it runs nothing a config names (no hooks, fsmonitor, filters,
/// pager or helpers), so for treebox's reads the check guards nothing and would only
/// hide the box's work from the user. The `git` subprocesses treebox starts keep the
/// check: they never run in a box's directories after the box has run (SPEC §8.1), and
/// none is ever given `safe.directory=*`.
pub fn read_any_owner() {
    // SAFETY: called at the start of `main`, before any thread or repository exists.
    let _ = unsafe { git2::opts::set_verify_owner_validation(false) };
}
