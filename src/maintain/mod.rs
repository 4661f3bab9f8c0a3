//! Work on boxes that already exist: the machine-wide passes `park` (stop idle
//! containers) and `prune` (find and remove leftovers), and the files of bringing a
//! clone box's work back (`bundle`), and the summary of every box `list` shows, kept
//! between runs (`summary`).
//!
//! Each pass decides and acts here, in the engine, and reports back as data; the CLI
//! (`cli/sandbox/{park,prune}.rs`) only parses flags, asks for confirmation and prints.
//! Nothing here prints or picks an exit code. The on-disk layout comes from
//! [`crate::state`]; containers are reached through the runner.

pub mod bundle;
pub mod park;
pub mod prune;
pub mod summary;
pub mod timer;

/// Does the box at `box_path` have a `.env` (a file or a link, dangling or not)?
pub fn has_env_file(box_path: &std::path::Path) -> bool {
    std::fs::symlink_metadata(box_path.join(".env")).is_ok()
}
