//! Where the agent runs (SPEC §3 isolation). Provisioning always happens on the host;
//! a runner only decides how the last step — launching a program in the box — is done.
//!
//! Runners return the command they would run; the CLI decides whether to spawn it or
//! print it, so tests can assert argv without an engine.

pub mod host;
mod listening;
pub mod oci;

pub use listening::{ports_now, PortsNow};

use std::path::Path;

use crate::cmd::Cmd;
use crate::vocab::RunnerKind;

pub trait Runner {
    /// The command that runs `argv` in the box whose checkout is `box_path`.
    fn exec(&self, box_path: &Path, leaf: &str, argv: &[String]) -> Cmd;
    /// An interactive login shell in the box.
    fn shell(&self, box_path: &Path, leaf: &str) -> Cmd;
}

/// The runner recorded for a box; `tty`: give a container exec a terminal.
pub fn for_record(record: &crate::state::Record, tty: bool) -> Option<Box<dyn Runner>> {
    match record.runner {
        RunnerKind::Host => Some(Box::new(host::Host {
            forward: record.forward_tokens.clone(),
            ports: record.ports.clone(),
        })),
        RunnerKind::Docker | RunnerKind::Podman => {
            let c = record.container.as_ref()?;
            Some(Box::new(oci::Oci {
                engine: oci::Engine::parse(&c.engine)?,
                container: c.clone(),
                tty,
                firewall: record.firewall,
            }))
        }
    }
}

/// `GIT_CEILING_DIRECTORIES` for a command run in `box_path`: the box's parent. A box
/// lives inside the user's checkout (`<repo>/.treebox/worktrees/<leaf>`); should its
/// `.git` go missing, git would otherwise walk up and find the *user's* repository,
/// and an agent's commit would land there.
pub fn ceiling(box_path: &std::path::Path) -> String {
    box_path
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}
