//! Names treebox gives its hooks directories in a repository's git data: on-disk
//! layout that `provision::guard` writes (the guard and its hook links) and that
//! `runner::oci` mounts read-only into a box's container. One spelling, here.

/// Name of the hooks directory inside a worktree's private git dir.
pub const HOOKS_DIR_NAME: &str = "treebox-hooks";
