//! Everything treebox knows about git.
//!
//! - [`repo`]: reads through libgit2 (which runs no hooks, filters or helpers): finding
//!   the repository, resolving refs, the worktree registrations.
//! - [`caps`]: how large a file of a box's git data may be before it is not read
//!   (SPEC §8.8), scaled from the user's own repository.
//! - [`cli`]: the one builder of `git` subprocesses, with exec-shaped configuration
//!   pinned to inert values (SPEC §8.1).
//! - [`objects`]: which object stores a box's git dir reaches, refused unless they
//!   are the ones treebox gave it (SPEC §8.4).
//! - `pins`: what the repository-level config (which a box may write) sets, every
//!   include followed, as git and as a conservative libgit2 walk read it.
//! - [`porcelain`]: pure parsers of git's machine-readable output.

pub mod caps;
pub mod cli;
pub mod objects;
mod pins;
pub(crate) use pins::{blocking_include, names_include};
pub mod porcelain;
pub mod repo;

pub use cli::GitCli;
pub use repo::Repo;
