//! `git treebox create`: provision a box, then launch the agent in it.

use clap::Args;

use super::error::{self, CliError, ErrorKind};
use super::json::{CreateDocument, Document, PlanDocument, V1};
use super::ui::Ui;
use crate::cmd::Cmd;
use crate::harness::Harness;
use crate::provision::{self, CreateRequest, Created};

#[derive(Debug, Clone, Args)]
pub struct CreateArgs {
    /// Branch to create and work on (`fix/JIRA-12-login` → box `fix--JIRA-12-login`):
    /// letters, digits, '.', '_', '-', with '/' between segments. Two names that differ
    /// only by case are one box. Without it, a petname box on a placeholder branch
    /// `treebox/<petname>`.
    pub name: Option<String>,
    /// Work on an existing local or origin/ branch instead of creating one.
    #[arg(long, value_name = "BRANCH")]
    pub checkout: Option<String>,
    /// Base branch to cut the box from [default: the configured `base`, else origin's
    /// default branch (origin/HEAD), else main].
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// Do not fetch origin first (the base may be stale).
    #[arg(long)]
    pub no_fetch: bool,
    /// Provision only; do not launch the agent.
    #[arg(long)]
    pub no_launch: bool,
    /// Provision, then print the launch command as one shell-quoted line.
    #[arg(long, conflicts_with_all = ["json", "no_launch"])]
    pub print: bool,
    /// Provision, then print the result as JSON (does not launch).
    #[arg(long)]
    pub json: bool,
    /// Print the plan and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Install dependencies with throwaway caches instead of the shared ones.
    #[arg(long)]
    pub cold: bool,
    /// Which agent to launch.
    #[arg(long, value_parser = ["claude", "codex"])]
    pub harness: Option<String>,
    /// Where the agent runs.
    #[arg(long, value_parser = ["host", "docker", "podman", "auto"])]
    pub isolation: Option<String>,
    /// How the box's checkout is made.
    ///
    /// `worktree` (default): on the host runner, a worktree of this repository on branch
    /// NAME. In a container, a sandboxed worktree: a worktree of a bare clone of its own
    /// (in treebox's state directory, borrowing this repository's objects), where branch
    /// NAME lives; this repository gets only refs/hort/NAME/base. `clone`: a clone with
    /// its own .git, the branch in it. The work of both comes back by a push to origin
    /// from inside (guarded) or `git sandbox fetch NAME` (into refs/hort/NAME/incoming).
    #[arg(long = "git", value_name = "MODE", value_parser = ["worktree", "clone"])]
    pub git_mode: Option<String>,
    /// Container template (operator-owned; see `git treebox template list`).
    #[arg(long, value_name = "NAME")]
    pub template: Option<String>,
    /// Containers: deny egress except the template's allowlist.
    #[arg(long)]
    pub firewall: bool,
    /// Extra arguments for the agent, appended verbatim (after `--`).
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

fn seed() -> Option<u64> {
    std::env::var("TREEBOX_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

pub fn run(args: CreateArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let cfg = super::load_config()?;
    let cwd = crate::cli::cwd()?;
    let req = CreateRequest {
        cwd,
        name: args.name.clone(),
        checkout: args.checkout.clone(),
        base: args.base.clone(),
        no_fetch: args.no_fetch,
        cold: args.cold,
        harness: args
            .harness
            .as_deref()
            .and_then(|h| h.parse::<Harness>().ok()),
        isolation: args.isolation.clone(),
        git_mode: args.git_mode.clone(),
        launch: !(args.no_launch || args.print || args.json),
        extra_args: args.args.clone(),
        seed: seed(),
        interactive: ui.stderr_is_tty() && !args.json,
        state_root: None,
        template: args.template.clone(),
        firewall: args.firewall,
    };
    if args.dry_run {
        let (plan, warnings) = provision::dry_run(&req, &cfg)?;
        for w in &warnings {
            ui.warning(w);
        }
        if args.json {
            let doc = PlanDocument {
                schema_version: V1,
                dry_run: true,
                plan: &plan,
                warnings: &ui.warnings,
            };
            ui.out_json(&doc.to_value());
        } else {
            ui.info(&format!(
                "would create box `{}` on branch `{}`:",
                plan.name, plan.branch
            ));
            for line in plan.describe() {
                ui.info(&format!("  {line}"));
            }
        }
        return Ok(error::OK);
    }
    let created = provision::create(&req, &cfg, ui)?;
    hand_off(&created, ui, args.print, args.json)
}

/// The last pipeline step: launch, print, or describe the box.
pub fn hand_off(
    created: &Created,
    ui: &mut Ui,
    print: bool,
    json_out: bool,
) -> Result<i32, CliError> {
    let plan = &created.plan;
    let launching = plan.launch && !print && !json_out;
    let runner = super::runner_for(&created.record, launching && ui.stdin_is_tty())?;
    let launch = runner.exec(&plan.path, &plan.name, &plan.launch_argv);
    if json_out {
        ui.out_json(&CreateDocument::created(created, &launch, &ui.warnings).to_value());
        return Ok(error::OK);
    }
    if print {
        ui.out(&launch.to_string());
        return Ok(error::OK);
    }
    if !plan.launch {
        ui.info(&format!(
            "box `{}` ready on branch `{}`",
            plan.name, created.record.branch
        ));
        ui.out(&plan.path.to_string_lossy());
        return Ok(error::OK);
    }
    ui.finish();
    launch_in_session(&launch, &created.session_path, ui)
}

/// Launch the agent while holding the box's session marker, so `list` shows the
/// session as live and `teardown` will not pull the box from under it.
pub fn launch_in_session(
    cmd: &Cmd,
    session: &std::path::Path,
    ui: &mut Ui,
) -> Result<i32, CliError> {
    let _session = match crate::state::session::Session::hold(session) {
        Ok(s) => Some(s),
        Err(e) => {
            ui.warning(&format!(
                "could not mark the session as live ({}): {e}",
                session.display()
            ));
            None
        }
    };
    launch_child(cmd)
}

/// Run the agent with the terminal, and exit with its code (128+signal when killed);
/// see [`Cmd::run_in_foreground`].
pub fn launch_child(cmd: &Cmd) -> Result<i32, CliError> {
    let status = cmd.run_in_foreground();
    match status {
        Ok(st) => Ok(crate::cmd::exit_code(st)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(CliError::new(
            ErrorKind::HarnessMissing,
            format!("could not start `{}`: not found on PATH", cmd.argv()[0]),
        )
        .hint("Install the agent CLI, or point `harnesses.<name>.program` in the config at it.")
        .hint(format!("To start it yourself later: {cmd}"))),
        Err(e) => {
            Err(CliError::new(ErrorKind::Launch, format!("could not start `{cmd}`")).caused_by(e))
        }
    }
}
