//! `git sandbox …`: the box-first front end over the same engine and state.
//!
//! `up NAME` provisions exactly like `git treebox create NAME --no-launch`, then opens
//! a shell in the box unless `-d`.

use clap::{Args, Parser, Subcommand};

use super::error::{self, CliError};
use super::ui::Ui;
use super::GlobalOpts;
use crate::provision::{self, CreateRequest};

/// Sandboxes for coding agents, box first: bring one up, work in it, take it down.
#[derive(Debug, Parser)]
#[command(
    name = "git-sandbox",
    bin_name = "git sandbox",
    version,
    propagate_version = true
)]
pub struct SandboxCli {
    #[command(flatten)]
    pub global: GlobalOpts,
    #[command(subcommand)]
    pub command: SandboxCommand,
}

#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Provision a box (like `git treebox create NAME --no-launch`) and open a shell in it.
    Up(UpArgs),
}

#[derive(Debug, Args)]
pub struct UpArgs {
    /// The box's branch (created from the base).
    pub name: String,
    /// Check out this existing branch instead of creating NAME.
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// Base branch [default: main].
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// Do not fetch origin first.
    #[arg(long)]
    pub no_fetch: bool,
    /// Where the box runs.
    #[arg(long, value_parser = ["host", "docker", "podman", "auto"])]
    pub isolation: Option<String>,
    /// How the box's checkout is made.
    #[arg(long = "git", value_name = "MODE", value_parser = ["worktree", "clone"])]
    pub git_mode: Option<String>,
    /// Detached: provision only, print the box path.
    #[arg(short = 'd', long)]
    pub detach: bool,
}

pub fn run(cli: SandboxCli, ui: &mut Ui) -> Result<i32, CliError> {
    match cli.command {
        SandboxCommand::Up(a) => up(a, ui),
    }
}

fn up(a: UpArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let cfg = super::load_config()?;
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::new(error::RUNTIME, "cwd", format!("no current directory: {e}")))?;
    let (name, checkout) = match a.branch {
        Some(b) => (Some(a.name), Some(b)),
        None => (Some(a.name), None),
    };
    let req = CreateRequest {
        cwd,
        name,
        checkout,
        base: a.base,
        no_fetch: a.no_fetch,
        isolation: a.isolation,
        git_mode: a.git_mode,
        launch: false,
        interactive: ui.stderr_is_tty(),
        ..Default::default()
    };
    let created = provision::create(&req, &cfg, ui)?;
    let path = created.plan.path.clone();
    if a.detach {
        ui.out(&path.to_string_lossy());
        return Ok(error::OK);
    }
    let runner = crate::runner::for_name(&created.record.runner).ok_or_else(|| {
        CliError::new(
            error::USAGE,
            "unsupported",
            "this runner is not available in this version",
        )
    })?;
    ui.finish();
    super::create::launch_child(&runner.shell(&path, &created.plan.name))
}
