//! Where the agent runs (SPEC §3 isolation). Provisioning always happens on the host;
//! a runner only decides how the last step — launching a program in the box — is done.
//!
//! Runners return the command they would run; the CLI decides whether to spawn it or
//! print it, so tests can assert argv without an engine.

pub mod host;

use std::path::Path;

use crate::cmd::Cmd;

pub trait Runner {
    /// The recorded runner name (`host`, `docker`, `podman`).
    fn name(&self) -> &'static str;
    /// The command that runs `argv` in the box whose checkout is `box_path`.
    fn exec(&self, box_path: &Path, leaf: &str, argv: &[String]) -> Cmd;
    /// An interactive login shell in the box.
    fn shell(&self, box_path: &Path, leaf: &str) -> Cmd;
}

/// The runner recorded for a box.
pub fn for_name(name: &str) -> Option<Box<dyn Runner>> {
    match name {
        "host" => Some(Box::new(host::Host)),
        _ => None,
    }
}
