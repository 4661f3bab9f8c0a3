//! What a box's record keeps about its container: plain data, written inside the
//! record (`container` field) and read back by the container runner.
//!
//! It lives in `state` so that the record can hold it without `state` importing the
//! runner: `runner::oci` makes and updates a [`ContainerRecord`]; `state::record`
//! stores it; the CLI's `ls`, `run` and teardown read it. The JSON names are part of
//! the on-disk record format (camelCase; `id` and `pid` default when absent).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What the record keeps about a box's container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecord {
    pub engine: String,
    pub name: String,
    pub image: String,
    /// `uid:gid` the agent runs as.
    pub user: String,
    /// The agent's home inside.
    pub home: PathBuf,
    /// The container's id and first process, as last seen running: lets the hot path
    /// (`run`, `enter`) know it still runs without asking the engine.
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub pid: u32,
    /// Programs start through treebox's launcher (`runner::oci::launch`): as root for
    /// a moment, reading the mounted 0600 env file, then dropped to `user` with no
    /// capabilities. `false` for a container made by an earlier version, whose agent
    /// may be root and whose keys sit in its engine config: `doctor` names it.
    #[serde(default)]
    pub launcher: bool,
    /// The paths, as the container sees them, handed to the agent's uid at create (its
    /// checkout, git data, credential copies, status directory): given back to the
    /// user before the container goes, where the user could not remove them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_paths: Vec<PathBuf>,
}
