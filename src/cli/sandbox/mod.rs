//! `git sandbox …`: the box-first front end over the same engine and state.
//!
//! `up NAME` provisions exactly like `git treebox create NAME --no-launch`, then opens
//! a shell in the box unless `-d`. A box made by either front end is seen, entered and
//! removed by the other. `down` keeps its own manners (SPEC §2): naming the box is the
//! decision, and it asks only when something would be lost that the user may not know
//! about — a clone holding commits the repository lacks, or a live session.

mod bundle;
mod down;
mod ls;
mod park;
mod prune;
mod run;

use clap::{Args, Parser, Subcommand};

use super::error::{self, CliError, ErrorKind};
use super::json::{CreateDocument, Document, Launch, V1};
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
    /// Open a login shell in a box.
    Attach(run::AttachArgs),
    /// Run a command in a box (no shell) and exit with its code.
    Run(run::RunArgs),
    /// List every box on this machine, across repositories.
    Ls(ls::LsArgs),
    /// Remove a box; asks only when unreturned work or a live session would be lost.
    Down(down::DownArgs),
    /// Stop containers idle for a while (they start again on next use).
    Park(park::ParkArgs),
    /// Remove leftovers (records without a box, boxes without a record, stale pins, locks,
    /// records of repositories that are gone) and, with `--idle`, unused boxes that hold
    /// nothing to lose.
    Prune(prune::PruneArgs),
    /// Write a git bundle of a clone box's branch.
    Bundle(bundle::BundleArgs),
    /// Import a clone box's branch into refs/hort/<name>/incoming of this repository.
    Fetch(bundle::FetchArgs),
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
    /// Container template (operator-owned; see `git treebox template list`).
    #[arg(long, value_name = "NAME")]
    pub template: Option<String>,
    /// Containers: deny egress except the template's allowlist.
    #[arg(long)]
    pub firewall: bool,
    /// Detached: provision only, print the box path.
    #[arg(short = 'd', long)]
    pub detach: bool,
    /// Provision only and print the result as JSON (implies -d).
    #[arg(long)]
    pub json: bool,
}

impl SandboxCommand {
    /// Whether the command was asked for JSON output.
    pub fn json(&self) -> bool {
        match self {
            SandboxCommand::Ls(a) => a.json,
            SandboxCommand::Bundle(a) => a.json,
            SandboxCommand::Fetch(a) => a.json,
            SandboxCommand::Prune(a) => a.json,
            SandboxCommand::Park(a) => a.json,
            SandboxCommand::Down(a) => a.json,
            SandboxCommand::Up(a) => a.json,
            SandboxCommand::Attach(_) | SandboxCommand::Run(_) => false,
        }
    }
}

pub fn run(cli: SandboxCli, ui: &mut Ui) -> Result<i32, CliError> {
    match cli.command {
        SandboxCommand::Up(a) => up(a, ui),
        SandboxCommand::Attach(a) => run::attach(a, ui),
        SandboxCommand::Run(a) => run::run(a, ui),
        SandboxCommand::Ls(a) => ls::run(a, ui),
        SandboxCommand::Down(a) => down::run(a, ui),
        SandboxCommand::Prune(a) => prune::run(a, ui),
        SandboxCommand::Park(a) => park::run(a, ui),
        SandboxCommand::Bundle(a) => bundle::bundle(a, ui),
        SandboxCommand::Fetch(a) => bundle::fetch(a, ui),
    }
}

/// `up` in a project that is not a git repository: the box is the folder itself.
/// A git mode asked for by flag cannot be honoured and is refused (exit 2); one that
/// comes from the config only covers every folder on the machine, so it warns.
fn up_folder(
    a: UpArgs,
    cfg: &crate::config::UserConfig,
    cwd: std::path::PathBuf,
    ui: &mut Ui,
) -> Result<i32, CliError> {
    if let Some(mode) = &a.git_mode {
        return Err(CliError::new(
            ErrorKind::NotARepo,
            format!("--git {mode} requires a git repository, but this folder is not one"),
        )
        .hint("Run it in a git repository, or drop --git to sandbox this folder itself."));
    }
    if a.branch.is_some() {
        return Err(CliError::new(
            ErrorKind::NotARepo,
            "--branch requires a git repository, but this folder is not one",
        )
        .hint("Drop --branch to sandbox this folder itself."));
    }
    if cfg.git.as_deref() == Some("clone") {
        ui.warning(
            "the configured 'clone' git mode needs a git repository and this folder is not one, so the sandbox mounts the folder itself",
        );
    }
    let runner =
        crate::provision::resolve_runner(a.isolation.as_deref().or(cfg.isolation.as_deref()), cfg)?;
    let req = crate::folder::FolderRequest {
        folder: cwd,
        name: a.name.clone(),
        runner,
        template: a
            .template
            .clone()
            .or(cfg.template.clone())
            .unwrap_or_else(|| "default".into()),
        firewall: a.firewall || cfg.firewall.unwrap_or(false),
        harness: cfg.harness.unwrap_or_default(),
    };
    let done = crate::folder::up(&req, cfg, ui)?;
    let r = &done.record;
    if a.json {
        let runner = super::runner_for(r, false)?;
        let launch = runner.shell(&r.path, &r.name);
        ui.out_json(
            &CreateDocument {
                schema_version: V1,
                name: &r.name,
                branch: None,
                placeholder: false,
                path: &r.path,
                repo: &r.repo,
                base: None,
                base_ref: r.base_ref.as_deref(),
                base_commit: r.base_commit.as_deref(),
                git_mode: r.git_mode,
                runner: r.runner,
                harness: &r.harness,
                fetched: false,
                resumed: done.resumed,
                ecosystems: &r.ecosystems,
                lockfile_hash: r.lockfile_hash.as_deref(),
                setup_completed: r.setup_completed,
                setup: Vec::new(),
                submodules: 0,
                env: "absent",
                launch: Launch::from(&launch),
                warnings: &ui.warnings,
            }
            .to_value(),
        );
        return Ok(error::OK);
    }
    if a.detach {
        ui.out(&r.path.to_string_lossy());
        return Ok(error::OK);
    }
    let runner = super::runner_for(r, ui.stdin_is_tty())?;
    ui.finish();
    super::create::launch_in_session(&runner.shell(&r.path, &r.name), &done.session_path, ui)
}

/// A box found by name: in this repository, or (outside any) a folder box.
pub(crate) enum Found {
    Repo(
        crate::git::Repo,
        crate::state::Layout,
        crate::boxes::BoxEntry,
    ),
    Folder(crate::state::Layout, crate::state::Record),
}

/// Like [`find`], falling back to the current folder's boxes outside a repository.
pub(crate) fn find_any(name: &str) -> Result<Found, CliError> {
    let cwd = crate::cli::cwd()?;
    match crate::git::Repo::discover(&cwd) {
        Err(crate::git::repo::RepoError::NotARepo { .. }) => {
            let (layout, record) = crate::folder::find(&cwd, name)
                .map_err(|e| crate::cli::box_elsewhere(e.into(), name, None))?;
            Ok(Found::Folder(layout, record))
        }
        _ => {
            let (repo, layout, entry) = find(name)?;
            Ok(Found::Repo(repo, layout, entry))
        }
    }
}

pub(crate) use crate::cli::here;

/// The box NAME names in this repository (same rules as `git treebox enter`).
pub(crate) fn find(
    name: &str,
) -> Result<
    (
        crate::git::Repo,
        crate::state::Layout,
        crate::boxes::BoxEntry,
    ),
    CliError,
> {
    let (repo, layout) = here()?;
    let entry = crate::boxes::find(&repo, &layout, name).map_err(|e| {
        crate::cli::box_elsewhere(
            crate::provision::ProvisionError::from(e).into(),
            name,
            Some(&repo.common_dir),
        )
    })?;
    Ok((repo, layout, entry))
}

fn up(a: UpArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let cfg = super::load_config()?;
    let cwd = crate::cli::cwd()?;
    if matches!(
        crate::git::Repo::discover(&cwd),
        Err(crate::git::repo::RepoError::NotARepo { .. })
    ) {
        return up_folder(a, &cfg, cwd, ui);
    }
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
        firewall: a.firewall,
        template: a.template,
        ..Default::default()
    };
    let created = provision::create(&req, &cfg, ui)?;
    let path = created.plan.path.clone();
    if a.json {
        let runner = super::runner_for(&created.record, false)?;
        let launch = runner.shell(&path, &created.plan.name);
        ui.out_json(&CreateDocument::created(&created, &launch, &ui.warnings).to_value());
        return Ok(error::OK);
    }
    if a.detach {
        ui.out(&path.to_string_lossy());
        return Ok(error::OK);
    }
    let runner = super::runner_for(&created.record, ui.stdin_is_tty())?;
    ui.finish();
    super::create::launch_in_session(
        &runner.shell(&path, &created.plan.name),
        &created.session_path,
        ui,
    )
}
