//! The last step of the pipeline, for a box just made: how its agent starts in a
//! session ([`detached`]: the runner's launch with a terminal, how to tell it is ready,
//! what stands in its way), and [`create_detached`], all of `create -d` (provision,
//! start, wait) for the front ends that are not the CLI: `watch`'s `n`, the MCP
//! server's `box_create` and another machine's `create` request. `create` and `enter`
//! build their launch from the same [`ready_for`] and [`as_root`].
//!
//! Never prints: what a front end should say is in the [`AgentLaunch`] it gets back.

use std::path::Path;

use super::apply::Created;
use crate::cmd::Cmd;
use crate::config::UserConfig;
use crate::harness::{AsRoot, Harness};
use crate::session::detached::{self, Started};
use crate::session::{Ready, SessionError, Sign};
use crate::vocab::RunnerKind;

/// How the agent of a box just made starts in its session.
#[derive(Debug, Clone)]
pub struct AgentLaunch {
    /// The session's program: the agent, run by the box's runner with a terminal.
    pub cmd: Cmd,
    /// How to tell it is ready for a prompt.
    pub ready: Ready,
    /// What Claude Code will do about running as root (`OptedIn`: `IS_SANDBOX=1` is
    /// set in [`AgentLaunch::cmd`]).
    pub as_root: AsRoot,
    /// The agent will stop at a trust question first: the warning, with its fix.
    pub will_ask: Option<String>,
}

/// Why a box's agent cannot be launched.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The record names a container runner without a container.
    #[error("box `{name}` records runner `{runner}` without a container")]
    NoContainer { name: String, runner: RunnerKind },
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Provision(#[from] super::ProvisionError),
}

/// A box made and its agent started detached: what `create -d` does, for the front
/// ends that are not the CLI (`watch`'s `n`, the MCP server's `box_create`). Refused
/// before anything is made when this machine has no session host.
pub fn create_detached(
    req: &super::CreateRequest,
    cfg: &UserConfig,
    reporter: &mut dyn super::Reporter,
) -> Result<(Created, AgentLaunch, Started), LaunchError> {
    if !crate::session::available() {
        return Err(crate::session::missing().into());
    }
    let created = super::create(req, cfg, reporter)?;
    let agent = detached(&created, cfg)?;
    let started = detached::start(
        &created.session_path,
        &agent.cmd,
        &agent.ready,
        detached::READY_LIMIT,
    )?;
    Ok((created, agent, started))
}

/// How the agent of `created` starts detached, as its plan says.
pub fn detached(created: &Created, cfg: &UserConfig) -> Result<AgentLaunch, LaunchError> {
    let plan = &created.plan;
    let record = &created.record;
    let runner =
        crate::runner::for_record(record, true).ok_or_else(|| LaunchError::NoContainer {
            name: record.name.clone(),
            runner: record.runner,
        })?;
    let as_root = as_root(
        plan.harness,
        record.runner,
        cfg.harness_allows_root(plan.harness),
    );
    let mut cmd = runner
        .exec(&plan.path, &plan.name, &plan.launch_argv)
        .without_git_dispatch();
    if as_root == AsRoot::OptedIn {
        cmd = cmd.env("IS_SANDBOX", "1");
    }
    let mut ready = ready_for(plan.harness, &plan.launch_argv, &created.session_path);
    let will_ask = super::host_trust::will_ask(plan.harness, &record.repo, created.main_trusted);
    if will_ask.is_some() {
        ready.will_ask();
    }
    Ok(AgentLaunch {
        cmd,
        ready,
        as_root,
        will_ask,
    })
}

/// How to tell that `argv`, the launch of `harness` in the box whose session marker is
/// `marker`, is ready: Claude Code with treebox's status hooks shows its prompt, or
/// reports at `SessionStart`; Codex shows its prompt; either showing a screen that
/// waits for a person is not.
pub fn ready_for(harness: Harness, argv: &[String], marker: &Path) -> Ready {
    let sign = match harness {
        Harness::Claude if argv.iter().any(|a| a == "--settings") => Sign::Reported {
            path: crate::state::session::status_path(marker)
                .with_file_name(crate::runner::oci::status::UP),
            shows: harness
                .prompt_marks()
                .iter()
                .map(|s| s.to_string())
                .collect(),
        },
        h if !h.prompt_shows().is_empty() => {
            Sign::Shows(h.prompt_shows().iter().map(|s| s.to_string()).collect())
        }
        _ => Sign::Started,
    };
    Ready {
        sign,
        asks: harness.asks().iter().map(|s| s.to_string()).collect(),
        still_asks: false,
    }
}

/// SPEC §7 "Unattended": what Claude Code will do about running as root on the host
/// runner of this process's user, given the user's opt-in `allowed`
/// (`harnesses.claude.allowRoot`).
pub fn as_root(harness: Harness, runner: RunnerKind, allowed: bool) -> AsRoot {
    // SAFETY: geteuid cannot fail and touches no memory.
    let euid = unsafe { libc::geteuid() };
    let is_sandbox = std::env::var_os("IS_SANDBOX");
    crate::harness::as_root(
        harness,
        runner == RunnerKind::Host,
        euid,
        is_sandbox.as_deref(),
        allowed,
    )
}
