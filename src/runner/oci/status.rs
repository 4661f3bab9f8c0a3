//! The agent's status channel: a directory of the box's bookkeeping mounted at
//! [`STATUS_DIR`] in the container, where the agent's hooks write a small `state` file.
//! Read here as untrusted data.
//!
//! Called by the CLI's `ls` and `park`; `mounts` mounts the directory.

use crate::names::Leaf;
use crate::state::Layout;

/// Where the status directory appears inside every container.
pub const STATUS_DIR: &str = "/run/treebox/status";
/// Largest status file read.
const MAX_STATUS_BYTES: u64 = 4096;

/// The agent's reported status (`working`, `idle`, `waiting`), from the status
/// directory: a small file `state` whose first word is the status, parsed as untrusted
/// data. `None` when absent or not one of the three.
pub fn read_status(layout: &Layout, leaf: &Leaf) -> Option<(String, std::time::SystemTime)> {
    let p = layout.status_state_path(leaf);
    let m = std::fs::symlink_metadata(&p).ok()?;
    if !m.is_file() || m.len() > MAX_STATUS_BYTES {
        return None;
    }
    let text = std::fs::read_to_string(&p).ok()?;
    let word = text.split_whitespace().next()?;
    matches!(word, "working" | "idle" | "waiting").then(|| {
        (
            word.to_string(),
            m.modified().unwrap_or(std::time::UNIX_EPOCH),
        )
    })
}
