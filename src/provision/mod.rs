//! The provisioning pipeline (SPEC §4): everything `create` does on the host.
//!
//! ```text
//! fetch origin → resolve origin/<base> → worktree add → guard → submodules → .env
//!   → setup → record → (the CLI hands off to the runner)
//! ```
//!
//! [`create`] validates the request and builds a [`Plan`](crate::plan::Plan) before
//! writing anything, so every refusal leaves no trace; `--dry-run` stops there.
//! Applying the plan writes a record with `setupCompleted: false` *before* the checkout
//! is made, so a crash at any later point leaves a box that a re-run of `create` (or
//! `enter`) finishes instead of skipping. A failure before setup rolls the checkout
//! back; a failing setup step only warns (the box is usable) and leaves
//! `setupCompleted: false`.
//!
//! This module never prints: progress and warnings go through [`Reporter`].
//!
//! One file per job, in the order data flows:
//!
//! - [`request`]: [`CreateRequest`] → a resolved context (git mode, runner, name);
//! - [`planner`]: context → [`Plan`](crate::plan::Plan) ([`dry_run`] stops here);
//! - [`apply`]: [`create`] — fetch, lock, apply the plan; the stages it runs live in
//!   [`fetch`], [`checkout`]/[`clone`]/[`sandboxed`], [`guard`], [`copy`], [`setup`] (with
//!   [`lockhash`]), [`warm`] and [`container_stage`];
//! - [`enter`]: finish or re-sync an existing box before an agent runs in it;
//! - [`rollback`]: undo a checkout when a later stage fails;
//! - [`repair`]: finish or refuse an existing box's checkout (also for `enter`);
//! - [`error`] ([`ProvisionError`]) and [`reporter`] ([`Reporter`]).

pub mod apply;
mod beside;
pub mod checkout;
pub mod claude;
pub mod clone;
pub mod container_stage;
pub mod copy;
mod deps;
pub mod enter;
pub mod error;
pub mod fetch;
pub mod guard;
pub mod host_trust;
pub mod include;
pub mod launch;
pub mod lockhash;
pub mod planner;
pub mod repair;
pub mod reporter;
pub mod request;
pub mod rollback;
pub mod sandboxed;
pub mod setup;
pub mod warm;

pub(crate) use apply::env_tracked;
pub use apply::{create, Created};
pub(crate) use container_stage::container_up;
pub(crate) use deps::run_setup;
pub use error::ProvisionError;
pub use planner::dry_run;
pub use repair::check_checkout;
pub(crate) use repair::repair_checkout;
pub(crate) use reporter::timed;
pub use reporter::{Reporter, Silent};
pub(crate) use request::resolve_runner;
pub use request::CreateRequest;
