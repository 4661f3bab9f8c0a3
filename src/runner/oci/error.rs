//! The container runner's one error type, [`ContainerError`], and the helpers that
//! shape an engine failure into it (the last lines of the engine's stderr; "does not
//! answer" when the engine is down). Every fallible function of `runner::oci` returns
//! it; `provision`, `folder` and `teardown` wrap it in their own errors.

use std::path::{Path, PathBuf};

use super::engine::Engine;
use crate::cmd::CmdError;
use crate::template;

#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    #[error("{engine} does not answer (is it installed and running?)")]
    EngineDown { engine: String },
    #[error("no container engine answers (tried podman and docker)")]
    NoEngine,
    #[error(transparent)]
    Template(#[from] template::TemplateError),
    #[error("template `{name}`: {problems}")]
    BadTemplate { name: String, problems: String },
    #[error("a mount cannot express the path {}", .path.display())]
    Unmountable { path: PathBuf },
    #[error("building the box image failed: {}", tail(.0))]
    Build(#[source] CmdError),
    #[error("starting the box's container failed: {}", tail(.0))]
    Run(#[source] CmdError),
    #[error("the firewall could not be applied (egress stays denied): {}", tail(.0))]
    Firewall(#[source] CmdError),
    #[error("the firewall of container {container} is not the one applied (its rules changed); the container was stopped")]
    FirewallChanged { container: String },
    #[error("a container named {name} exists ({id}) that no box of treebox's records; it is not adopted")]
    NameTaken {
        engine: String,
        name: String,
        id: String,
    },
    #[error("setup step `{step}` failed in the container: {detail}")]
    Setup {
        step: String,
        detail: String,
        /// The program the image lacks, when that is why the step failed.
        missing: Option<String>,
        /// The box, where the caller knows it, and its template when that is the
        /// user's own (not the bundled one): for the hint.
        leaf: Option<String>,
        template: Option<String>,
    },
    #[error("the files of box {leaf} could not be given to its agent: {reason}")]
    HandOver { leaf: String, reason: String },
    #[error("the pre-push guard cannot run in this box's image, so git would refuse every commit and push there: {detail}")]
    GuardCannotRun { detail: String },
    #[error("{what} {}", .path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the engine failed: {}", tail(.0))]
    Engine(#[source] CmdError),
}

pub(super) fn tail(e: &CmdError) -> String {
    let s = e.stderr();
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    let last = lines
        .iter()
        .rev()
        .take(3)
        .rev()
        .cloned()
        .collect::<Vec<_>>()
        .join(" / ");
    if last.is_empty() {
        crate::sanitize::chain(e)
    } else {
        crate::sanitize::line(&last)
    }
}

pub(super) fn io_err<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> ContainerError + 'a {
    move |source| ContainerError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// An engine failure, said plainly when the engine is not answering at all.
impl ContainerError {
    /// The engine could not start a container because a port it publishes was taken
    /// since the box's block was handed out (by another program, or another user's
    /// container).
    pub fn port_taken(&self) -> bool {
        let stderr = match self {
            ContainerError::Run(e) | ContainerError::Engine(e) => e.stderr(),
            _ => return false,
        };
        port_refused(stderr)
    }
}

/// Does an engine's stderr say a published port could not be bound?
pub(super) fn port_refused(stderr: &str) -> bool {
    stderr.contains("port is already allocated") || stderr.contains("address already in use")
}

pub(super) fn explain(engine: Engine, e: ContainerError) -> ContainerError {
    match e {
        ContainerError::Build(_) | ContainerError::Run(_) | ContainerError::Engine(_)
            if engine.version().is_none() =>
        {
            ContainerError::EngineDown {
                engine: engine.program().to_string(),
            }
        }
        e => e,
    }
}
