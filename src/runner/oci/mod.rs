//! The container runner: Docker and Podman through one implementation (SPEC §7).
//! Provisioning still happens on the host; this module makes the container the agent
//! runs in, keeps it running, and builds the commands that run a program in it.
//!
//! One file per job:
//! - [`engine`]: the `docker`/`podman` program and the argv of each engine command;
//! - [`container`]: a box's container — create, ensure running, remove, `inspect`;
//! - [`image`]: the [`Spec`] of a box's container, its image tag and build;
//! - [`mounts`]: what of the host the container sees;
//! - [`credentials`]: the harness's login files and the 0600 env file;
//! - [`login`]: Claude Code's OAuth login file, read as untrusted (expiry, a digest of
//!   its single-use refresh token);
//! - [`firewall`]: the egress allowlist, applied as root;
//! - [`forge`]: the forge's credential helper, and whether origin is within reach;
//! - [`host_url`]: provider URLs naming the user's machine, as a box reaches it;
//! - [`setup`]: the guard check and the setup steps run inside at create;
//! - [`status`]: the agent's status channel;
//! - [`error`]: [`ContainerError`], the one error type of all of them.
//!
//! The items callers use are re-exported here, so they are named `runner::oci::…`.
//! The [`Oci`] runner itself only builds commands; the CLI decides to spawn or print.

pub mod agents;
pub mod claude_json;
pub mod container;
pub mod credentials;
pub mod ending;
pub mod engine;
pub mod error;
pub mod firewall;
pub mod forge;
mod handed;
pub mod host_url;
pub mod image;
mod inspect;
pub mod keys;
pub mod launch;
mod limits;
pub mod login;
pub mod mounts;
mod running;
pub mod setup;
pub mod status;

use std::path::Path;

use super::Runner;
use crate::cmd::Cmd;
// The one name the runner takes from outside its inputs: the ecosystem vocabulary, to
// know each one's download cache. (Moving to `crate::ecosystem::Ecosystem`.)
use crate::ecosystem::Ecosystem;

pub use container::{
    container_name, listening, remove, remove_box_containers, running_by_proc, ContainerRecord,
};
pub use credentials::{refresh_credentials, stage_credentials};
pub use engine::{first_answering_engine, resolve_engine, Engine, EngineInfo, RunSpec};
pub use error::ContainerError;
pub use firewall::{apply_firewall, FIREWALL};
pub use handed::await_handed;
pub use image::{node_major, Spec};
pub use inspect::{parse_inspect, ContainerState};
pub use keys::KeysOutcome;
pub use mounts::{mountable, Mount};
pub use running::ensure_running;
pub use setup::{check_guard, setup_inside};
pub use status::{read_status, AgentStatus, Reported, STATUS_DIR};

/// Environment variables, in order.
type EnvVars = Vec<(String, String)>;

/// A box's container, as the runner sees it.
pub struct Oci {
    pub engine: Engine,
    pub container: ContainerRecord,
    /// Give the exec a terminal (only when this process has one).
    pub tty: bool,
    /// The box has the firewall: an agent of an earlier version's container that runs
    /// as root must not hold NET_ADMIN/NET_RAW.
    pub firewall: bool,
}

/// How a program in a box's container meets its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    /// A terminal: this process's, passed on.
    Tty,
    /// Plain pipes: the caller's stdin, or what it gives.
    Pipes,
    /// Its output captured, its stdin held open by the caller and given nothing
    /// ([`crate::cmd::Cmd::hold_stdin`]): treebox's own steps (the setup steps, the
    /// guard's check), which end with the `create` that runs them, however it ends.
    /// In a container made before the launcher (`ContainerRecord::launcher` false)
    /// these are plain pipes: nothing there could end the step, so it runs on
    /// until the container stops, as it always did there.
    Held,
}

/// The command that runs `argv` in a box's container as its agent, in `workdir`, with
/// `env` (never a secret: those come from the env file). A container made by this
/// version goes through the launcher ([`launch`]), under a mark its ender takes should
/// the engine's client be cut off ([`ending`]); one made earlier runs as its
/// recorded user, with the network capabilities dropped when that user is root and
/// the box has the firewall.
pub fn agent_exec(
    engine: Engine,
    rec: &ContainerRecord,
    firewall: bool,
    workdir: &Path,
    env: &[(String, String)],
    io: Io,
    argv: &[String],
) -> Cmd {
    let tty = io == Io::Tty;
    if rec.launcher {
        if let Some(id) = launch::Identity::parse(&rec.user, &rec.home) {
            let mark = ending::mark();
            let held = io == Io::Held;
            let wrapped = launch::wrap(&id, Some(&mark), held, rec.anchor_hands, env, argv);
            let cmd = engine
                .exec(&rec.name, "0:0", workdir, &[], tty, &wrapped)
                .with_ender(ending::ender(engine, &rec.name, &mark));
            return if held { cmd.holding_stdin() } else { cmd };
        }
    }
    let mut full: Vec<String> = Vec::new();
    let root = rec
        .user
        .split(':')
        .next()
        .is_some_and(|u| u == "0" || u == "root");
    if firewall && root {
        full.extend(["setpriv", "--bounding-set", "-net_admin,-net_raw", "--"].map(String::from));
    }
    full.extend(argv.iter().cloned());
    engine.exec(&rec.name, &rec.user, workdir, env, tty, &full)
}

impl Runner for Oci {
    fn exec(&self, box_path: &Path, leaf: &str, argv: &[String]) -> Cmd {
        agent_exec(
            self.engine,
            &self.container,
            self.firewall,
            box_path,
            &[
                ("TREEBOX_BOX".into(), leaf.into()),
                ("GIT_CEILING_DIRECTORIES".into(), super::ceiling(box_path)),
            ],
            if self.tty { Io::Tty } else { Io::Pipes },
            argv,
        )
    }

    fn shell(&self, box_path: &Path, leaf: &str) -> Cmd {
        self.exec(
            box_path,
            leaf,
            &[
                "/bin/sh".into(),
                "-c".into(),
                "exec \"${SHELL:-/bin/bash}\" -l".into(),
            ],
        )
    }
}
