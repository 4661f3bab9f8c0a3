//! The command lines: `git treebox …` (agent-first) and `git sandbox …` (box-first).
//!
//! clap definitions live here, one file per subcommand (its Args and `run`). This is the
//! only layer that prints (through [`ui::Ui`]) and picks exit codes ([`error`]).

pub mod claude_worktree;
pub mod completions;
pub mod create;
pub(crate) mod detached;
mod devcontainer;
pub mod diff;
pub mod doctor;
pub mod enter;
pub mod error;
mod far;
mod forward;
pub mod json;
pub mod land;
mod land_report;
mod launch_errors;
pub mod list;
pub mod mcp;
pub(crate) mod on;
mod ports;
pub(crate) mod remote;
mod safe_json;
pub mod sandbox;
pub mod teardown;
pub mod template;
pub mod ui;
pub mod watch;

use clap::{Args, Parser, Subcommand};

use error::{CliError, ErrorKind};
use ui::{ColorChoice, Ui, UiOptions};

/// Output options shared by every subcommand.
#[derive(Debug, Clone, Args, Default)]
pub struct GlobalOpts {
    /// Less output on stderr (warnings and errors only).
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// More output on stderr (per-stage timings even off a terminal).
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// When to colour stderr.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,
}

/// A box for every coding agent: a git worktree cut from a fresh origin/<base>, with
/// .env and dependencies in place and a guard against pushing placeholder branches.
///
/// The agent is launched with its own permission prompts off — `claude
/// --dangerously-skip-permissions`, `codex --dangerously-bypass-approvals-and-sandbox`
/// — so it works unattended: the box is the boundary. On the host runner that boundary
/// is only a directory (the agent runs as you); with `--isolation docker` or `podman`
/// it is a container that cannot touch the host or your repository.
///
/// Every box has a pre-push guard (its own `core.hooksPath`) that refuses to push
/// `treebox/*` placeholder branches and runs the repository's own hooks behind it.
/// A hook manager run in a box is kept behind the guard when the box is next opened.
/// `pre-commit install` refuses inside a box; there, run `GIT_CONFIG_COUNT=1
/// GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0= pre-commit install` (the
/// `README` in `git rev-parse --git-path hooks` says why).
#[derive(Debug, Parser)]
#[command(
    name = "git-treebox",
    bin_name = "git treebox",
    version,
    propagate_version = true
)]
pub struct TreeboxCli {
    #[command(flatten)]
    pub global: GlobalOpts,
    #[command(subcommand)]
    pub command: TreeboxCommand,
}

#[derive(Debug, Subcommand)]
pub enum TreeboxCommand {
    /// Provision a box and launch the agent in it.
    Create(create::CreateArgs),
    /// Enter a box: finish or refresh its setup, then launch the agent in it.
    Enter(enter::EnterArgs),
    /// List this repository's boxes.
    #[command(visible_alias = "ls")]
    List(list::ListArgs),
    /// Show what a box changed since its base: its commits and uncommitted work.
    Diff(diff::DiffArgs),
    /// Open a box's dev server in your browser: the first of its ports that listens.
    ///
    /// Each box holds a block of ports for life (config "ports"); its programs get
    /// TREEBOX_PORT, TREEBOX_PORTS and TREEBOX_HOST (the address to bind). The URL is
    /// printed, and opened with the desktop's opener when there is one (not over SSH,
    /// not in a script). A box on another machine has its ports forwarded here first,
    /// over that machine's shared SSH connection.
    ///
    /// Exit codes: 3 when the box has no ports or nothing listens on them; 2 for a
    /// port that is not the box's; 4 when a far box's port could not be forwarded.
    Open(ports::OpenArgs),
    /// A live dashboard of this repository's boxes: who works, who waits, one key to jump in.
    ///
    /// Rows come needs-me first (waiting, exited, idle with commits of its own); a pane
    /// shows the selected box's screen, uncommitted changes and recent commits. Keys:
    /// arrows or j/k move, Enter attaches (detaching comes back), Tab jumps to the next
    /// box that needs you, n creates, d diffs, l lands, x removes (teardown's
    /// refusals), / filters, ? lists keys, q quits. A bell and a notification when an
    /// agent waits, finishes a turn or exits non-zero (--no-notify, config "notify").
    ///
    /// Exit codes: 0 on q; 2 when this is not a terminal (use --once) or --json lacks
    /// --once; 1 when the terminal cannot be drawn on.
    Watch(watch::WatchArgs),
    /// Put a box's work onto its base branch (squash, rebase or merge), or open a pull
    /// request of it.
    Land(land::LandArgs),
    /// Remove boxes without losing work by accident.
    #[command(visible_alias = "rm")]
    Teardown(teardown::TeardownArgs),
    /// Check the machine and the repository.
    Doctor(doctor::DoctorArgs),
    /// Operator-owned container templates.
    #[command(subcommand)]
    Template(template::TemplateCommand),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::CompletionsArgs),
    /// Claude Code's worktree backend: its WorktreeCreate / WorktreeRemove hooks.
    #[command(subcommand)]
    ClaudeWorktree(claude_worktree::ClaudeWorktreeCommand),
    /// An MCP server over stdio for a lead agent: this repository's boxes as tools.
    ///
    /// Started by the agent's client, never by hand: `claude mcp add treebox -- git
    /// treebox mcp` (Claude Code), or `[mcp_servers.treebox]` with `command = "git"`
    /// and `args = ["treebox", "mcp"]` in ~/.codex/config.toml (Codex). It speaks on
    /// stdin and stdout only (no port, no socket) and serves the repository of the
    /// directory it starts in (--all: every repository `git sandbox ls` knows). Tools:
    /// box_create (a box and its agent, detached, with a first prompt), box_send (type
    /// a prompt), box_wait (until an agent is idle, waiting or exited), box_list (as
    /// `list --json`), box_diff (as `diff --json`), box_screen (an agent's last screen
    /// lines), box_stop, box_remove (never forced) and box_land (where the config
    /// allows it). A refusal is a tool result with isError and the CLI's error document
    /// (exit code, kind, message, hint).
    ///
    /// Exit codes: 0 when the client closes the connection; 2 outside a repository,
    /// with a broken config, or inside a box (a lead agent there must not drive boxes).
    Mcp(mcp::McpArgs),
    /// Print the version.
    Version,
}

/// Entry point of `git-treebox`: returns the process exit code.
pub fn treebox_main() -> i32 {
    crate::git::read_any_owner();
    if let Some((marker, launch)) = crate::session::wrapper_marker() {
        return create::serve_session(&marker, &launch);
    }
    if let Some((main_target, box_target, state)) = crate::provision::warm::warmer_args() {
        return crate::provision::warm::serve(&main_target, &box_target, &state);
    }
    // Another machine's treebox asking over SSH (issue 41): its request is on stdin.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).map(|a| a.as_os_str()) == Some(crate::remote::ENTRY_ARG.as_ref()) {
        return match args.len() {
            2 => remote::serve(),
            _ => remote::serve_terminal(&args[2..]),
        };
    }
    let cli = match TreeboxCli::try_parse() {
        Ok(c) => c,
        Err(e) => return clap_exit(e),
    };
    let json = match &cli.command {
        TreeboxCommand::Create(a) => a.json,
        TreeboxCommand::Enter(a) => a.json,
        TreeboxCommand::List(a) => a.json,
        TreeboxCommand::Diff(a) => a.json,
        TreeboxCommand::Watch(a) => a.json,
        TreeboxCommand::Land(a) => a.json,
        TreeboxCommand::Teardown(a) => a.json,
        TreeboxCommand::Doctor(a) => a.json,
        TreeboxCommand::Template(t) => t.json(),
        TreeboxCommand::Version
        | TreeboxCommand::Open(_)
        | TreeboxCommand::Completions(_)
        | TreeboxCommand::ClaudeWorktree(_)
        | TreeboxCommand::Mcp(_) => false,
    };
    let mut ui = Ui::new(options(&cli.global, json));
    let result = match cli.command {
        // The MCP server takes the process's stdin and stdout for itself: `main` runs
        // it, nothing dispatches to it (so `git sandbox`, whose `watch` dispatches
        // `land`, does not carry the server in its binary).
        TreeboxCommand::Mcp(args) => mcp::run(args, &mut ui),
        command => dispatch(command, &mut ui),
    };
    finish(result, &mut ui)
}

/// Run one `git treebox` command: what `main` does after parsing, and what `watch`'s
/// actions run (`l` lands through `land`'s own rules), so no front end names
/// another's module.
pub(crate) fn dispatch(command: TreeboxCommand, ui: &mut Ui) -> Result<i32, CliError> {
    match command {
        TreeboxCommand::Create(args) => create::run(args, ui),
        TreeboxCommand::Enter(args) => enter::run(args, ui),
        TreeboxCommand::List(args) => list::run(args, ui),
        TreeboxCommand::Diff(args) => diff::run(args, ui),
        TreeboxCommand::Open(args) => ports::run(args, ui),
        TreeboxCommand::Watch(args) => watch::run(args, ui),
        TreeboxCommand::Land(args) => land::run(args, ui),
        TreeboxCommand::Teardown(args) => teardown::run(args, ui),
        TreeboxCommand::Doctor(args) => doctor::run(args, ui),
        TreeboxCommand::Template(cmd) => template::run(cmd, ui),
        TreeboxCommand::ClaudeWorktree(cmd) => claude_worktree::run(cmd, ui),
        TreeboxCommand::Mcp(_) => Err(CliError::new(
            ErrorKind::Usage,
            "`git treebox mcp` runs only as a command of its own",
        )
        .hint("Start it from your agent's MCP settings: `git treebox mcp`.")),
        TreeboxCommand::Completions(args) => {
            use clap::CommandFactory;
            completions::run(args, ui, "git-treebox", TreeboxCli::command())
        }
        TreeboxCommand::Version => {
            ui.out(&format!("git-treebox {}", env!("CARGO_PKG_VERSION")));
            Ok(error::OK)
        }
    }
}

/// Entry point of `git-sandbox`.
pub fn sandbox_main() -> i32 {
    crate::git::read_any_owner();
    if let Some((marker, launch)) = crate::session::wrapper_marker() {
        return create::serve_session(&marker, &launch);
    }
    if let Some((main_target, box_target, state)) = crate::provision::warm::warmer_args() {
        return crate::provision::warm::serve(&main_target, &box_target, &state);
    }
    let cli = match sandbox::SandboxCli::try_parse() {
        Ok(c) => c,
        Err(e) => return clap_exit(e),
    };
    let mut ui = Ui::new(options(&cli.global, cli.command.json()));
    let result = sandbox::run(cli, &mut ui);
    finish(result, &mut ui)
}

pub(crate) fn options(g: &GlobalOpts, json: bool) -> UiOptions {
    UiOptions {
        json,
        quiet: g.quiet,
        verbose: g.verbose,
        color: g.color,
    }
}

pub(crate) fn finish(result: Result<i32, CliError>, ui: &mut Ui) -> i32 {
    match result {
        Ok(code) => code,
        Err(e) => {
            ui.error(&e);
            e.code()
        }
    }
}

/// clap's own errors: help and version are success on stdout; usage errors exit 2
/// (as one JSON object on stderr when `--json` was asked for).
fn clap_exit(e: clap::Error) -> i32 {
    use clap::error::ErrorKind as ClapKind;
    if matches!(e.kind(), ClapKind::DisplayHelp | ClapKind::DisplayVersion) {
        let _ = e.print();
        return error::OK;
    }
    // Up to a `--`, everything after it is the agent's.
    let json = std::env::args()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json");
    if json {
        let text = e.kind().as_str().unwrap_or("invalid usage").to_string();
        let detail = e.to_string();
        let first = detail
            .lines()
            .next()
            .map(|l| l.trim_start_matches("error: ").to_string())
            .unwrap_or(text);
        let mut ui = Ui::new(UiOptions {
            json: true,
            ..Default::default()
        });
        ui.error(&CliError::new(ErrorKind::Usage, first).hint("Run with --help for usage."));
    } else {
        let _ = e.print();
    }
    error::USAGE
}

/// Load the user config, mapping failures to exit 2.
pub(crate) fn load_config() -> Result<crate::config::UserConfig, CliError> {
    crate::config::UserConfig::load()
        .map_err(|e| CliError::from(crate::provision::ProvisionError::from(e)))
}

/// The runner a box was recorded with. `tty`: give a container exec a terminal (only
/// when launching interactively; printed commands stay valid off a terminal).
pub(crate) fn runner_for(
    record: &crate::state::Record,
    tty: bool,
) -> Result<Box<dyn crate::runner::Runner>, CliError> {
    crate::runner::for_record(record, tty).ok_or_else(|| {
        create::from_launch(crate::provision::launch::LaunchError::NoContainer {
            name: record.name.clone(),
            runner: record.runner,
        })
    })
}

/// `--warm` / `--no-warm` as a warm mode; neither: the config decides.
pub(crate) fn warm_flag(warm: bool, no_warm: bool) -> Option<crate::vocab::Warm> {
    match (warm, no_warm) {
        (true, _) => Some(crate::vocab::Warm::Copy),
        (_, true) => Some(crate::vocab::Warm::Off),
        _ => None,
    }
}

/// The current directory, or an error saying it is gone.
pub(crate) fn cwd() -> Result<std::path::PathBuf, CliError> {
    std::env::current_dir()
        .map_err(|e| CliError::new(ErrorKind::Cwd, "no current directory").caused_by(e))
}

/// The repository of the current directory and its bookkeeping layout.
pub(crate) fn here() -> Result<(crate::git::Repo, crate::state::Layout), CliError> {
    here_at(&cwd()?)
}

/// [`here`] for the repository of `dir` (the MCP server's `--all` acts in others).
pub(crate) fn here_at(
    dir: &std::path::Path,
) -> Result<(crate::git::Repo, crate::state::Layout), CliError> {
    let repo = crate::git::Repo::discover(dir).map_err(crate::provision::ProvisionError::from)?;
    let layout = crate::provision::enter::layout_for(&repo, None)?;
    Ok((repo, layout))
}

/// A box not found in this repository may live in another one on this machine: when
/// it does, say where instead of the generic hint.
pub(crate) fn box_elsewhere(
    mut e: error::CliError,
    name: &str,
    common_dir: Option<&std::path::Path>,
) -> error::CliError {
    if e.kind != ErrorKind::BoxNotFound {
        return e;
    }
    if let Some(repo) = crate::boxes::elsewhere(name, common_dir).first() {
        let shown = repo.to_string_lossy();
        if !repo.exists() {
            e.hints = vec![format!(
                "Box `{}` belonged to {}, which no longer exists: `git sandbox prune` removes what is left of it.",
                crate::sanitize::line(name),
                crate::sanitize::line(&shown)
            )];
            return e;
        }
        e.hints = vec![format!(
            "Box `{}` belongs to {}: run the command there (`cd {}`).",
            crate::sanitize::line(name),
            crate::sanitize::line(&shown),
            crate::cmd::quote(&shown)
        )];
    }
    e
}
