//! Host-owned bookkeeping: the only module that knows the on-disk layout.
//!
//! Boxes live under `<repo>/.treebox/worktrees/<leaf>`. Everything that decides how a
//! box is handled — its record, its lock, later its rendered container config and
//! credential copies — lives under `$XDG_STATE_HOME/treebox/repos/<repo-key>/`, outside
//! every mount, so a box can never edit the record that decides how it is torn down
//! (SPEC §5).

pub mod atomic;
pub mod container;
pub mod hooks;
pub mod layout;
pub mod list_cache;
pub mod lock;
pub mod machine_lists;
pub mod record;
pub mod session;

pub use container::{ContainerRecord, Limits};
pub use layout::{Layout, Store};
pub use lock::{BoxLock, LockError, WaitedLock};
pub use record::Record;
