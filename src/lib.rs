//! treebox: a ready-to-run box for every coding agent.
//!
//! # Architecture
//!
//! One seam organises the crate: **provisioning always happens on the host; where the
//! agent runs is pluggable.**
//!
//! - [`provision`] is the pipeline (fetch → checkout → guard → submodules → `.env` →
//!   setup → record), driven by an immutable [`plan::Plan`] that `--dry-run` prints
//!   and the real run applies. Refusals happen while planning, before anything is
//!   written.
//! - [`runner`] decides where a program in a box runs: [`runner::host`], or
//!   [`runner::oci`] for docker and podman. A runner returns the [`cmd::Cmd`] it would
//!   run; the CLI spawns or prints it. The runner never imports [`provision`].
//! - [`git`] reads repositories through libgit2 (no hooks, filters or helpers run)
//!   and builds every `git` subprocess with exec-shaped config pinned inert.
//! - [`state`] owns the host-side bookkeeping (records, locks), outside every box; its
//!   [`state::Store`] is the only code that spells the on-disk layout.
//! - [`session`] runs the agent in a tmux session on treebox's own socket, so it
//!   outlives the terminal that started it (SPEC §7a).
//! - [`template`] (operator-owned container templates), [`doctor`] (checks as data) and
//!   [`maintain`] (park, prune) are the other engine rooms.
//! - [`guard`] is the pure pre-push decision; [`guard::hook`] is the small runtime that
//!   is copied into each box's private hooks dir and chains to the repo's own hooks.
//! - [`vocab`] ([`vocab::GitMode`], [`vocab::RunnerKind`], [`vocab::Isolation`]),
//!   [`ecosystem`] and [`harness`] are the closed vocabularies, enums whose serde names
//!   are the strings records and JSON use; nothing else spells them.
//! - [`boxes`] is the read model of existing boxes; provisioning uses it, never the
//!   reverse.
//! - [`watch`] is the dashboard's engine room (its model, diff sizes, screens, the
//!   status channel's changes); `cli/watch` draws it.
//! - [`remote`] reaches other machines' treeboxes over SSH (issue 41): one fixed
//!   entry point there, one framed document back, read as hostile data.
//! - [`stdio`] hands the process's stdin and stdout to a protocol (`git treebox mcp`):
//!   private copies for it, fd 1 pointed at stderr, fd 0 at `/dev/null`.
//! - [`cli`] is the only layer that prints or picks exit codes, and it neither touches
//!   the filesystem nor spawns: one file per subcommand, one `Ui`, one `ErrorKind`
//!   table, one serde struct per published JSON schema.
//!
//! Data flows one way: CLI → request → plan → apply → record → runner
//! (`docs/design.md` draws the map).
//!
//! The engine modules never print: progress reaches the CLI through
//! [`provision::Reporter`], failures as typed errors carrying paths and refs.

pub mod boxes;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod doctor;
pub mod ecosystem;
pub mod folder;
pub mod git;
pub mod guard;
pub mod harness;
pub mod land;
pub mod maintain;
pub mod names;
pub mod plan;
pub mod ports;
pub mod provision;
pub mod remote;
pub mod runner;
pub mod sanitize;
pub mod session;
pub mod state;
pub mod stdio;
mod suggest;
pub mod teardown;
pub mod template;
#[cfg(test)]
mod testing;
pub mod untrusted;
pub mod vocab;
pub mod watch;
