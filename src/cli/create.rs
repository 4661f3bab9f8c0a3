//! `git treebox create`: provision a box, then launch the agent in it.
//!
//! Launching (here for `create`, and through [`launch`] for `enter`, `git sandbox
//! attach` and `up`) follows SPEC §7a: on a terminal with tmux, the agent runs in the
//! box's session on treebox's own socket and this terminal attaches to it (to the live
//! one, when there is one); `-d` starts the session without attaching; without a
//! terminal (and without `-d`), or without tmux, the agent is a foreground child. The
//! command exits with the agent's code (128+signal) whenever it ends while attached.

use clap::Args;

use super::error::{self, CliError, ErrorKind};
use super::json::{CreateDocument, Document, PlanDocument, V1};
use super::ui::Ui;
use crate::cmd::Cmd;
use crate::harness::Harness;
use crate::provision::{self, CreateRequest, Created};
use crate::session::detached::Started;
use crate::session::Readiness;

pub(crate) use super::launch_errors::{from_launch, from_session, need_sessions};

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
    /// Detached: start the agent in its session (tmux, on treebox's own socket) without
    /// attaching, wait until it is at its prompt, and print the box path (an agent that
    /// ends first fails it with its exit code). `git treebox enter NAME` attaches later.
    #[arg(short = 'd', long, conflicts_with_all = ["no_launch", "print", "json"])]
    pub detach: bool,
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
    /// Start the box with the main checkout's build outputs (cargo's target/, node build
    /// caches) even where the filesystem cannot clone them by reflink: copy them
    /// [default: the config's `warm`, else `auto`: clone by reflink, or skip]. On the
    /// host a reflinked target/ is cloned after create returns; cargo in the box waits
    /// for it.
    #[arg(long, conflicts_with = "no_warm")]
    pub warm: bool,
    /// Start the box without the main checkout's build outputs.
    #[arg(long)]
    pub no_warm: bool,
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
    /// Forward this environment variable (e.g. a forge token, GH_TOKEN) into the box:
    /// its value goes into the box's 0600 env file at container start (the agent's
    /// environment on the host runner), never into an image, a record or output.
    /// Repeatable. Without it, GH_TOKEN, GITHUB_TOKEN and GITLAB_TOKEN are kept out. In a
    /// container, a forwarded GH_TOKEN or GITHUB_TOKEN is also git's credential for
    /// https://github.com (through `gh auth git-credential` where the image has gh).
    #[arg(long, value_name = "ENV")]
    pub token_from: Vec<String>,
    /// With --firewall: also allow the hosts of origin's URL (and api.github.com for
    /// GitHub), so the box can push and open its pull request. Shown in the plan.
    #[arg(long)]
    pub allow_forge: bool,
    /// Containers: deny egress except the template's allowlist.
    #[arg(long)]
    pub firewall: bool,
    /// Make the box on another machine of your config (`machines`), over SSH: this
    /// repository's origin/<base> travels there as a bundle, that machine's treebox
    /// makes the box and starts its agent detached. `local`: this machine.
    #[arg(long, value_name = "MACHINE")]
    pub on: Option<String>,
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
    let on = args.on.as_deref().or(cfg.on.as_deref());
    if let Some(on) = on.filter(|on| *on != crate::config::LOCAL) {
        let unsupported = [
            (args.firewall, "--firewall"),
            (!args.token_from.is_empty(), "--token-from"),
            (args.allow_forge, "--allow-forge"),
            (args.no_fetch, "--no-fetch"),
            (args.dry_run, "--dry-run"),
            (args.print, "--print"),
            (args.no_launch, "--no-launch"),
            (!args.args.is_empty(), "-- ARGS"),
        ];
        let on = super::on::CreateOn {
            on,
            name: args.name.as_deref(),
            base: args.base.as_deref(),
            isolation: args.isolation.as_deref(),
            harness: args.harness.as_deref(),
            git_mode: args.git_mode.as_deref(),
            template: args.template.as_deref(),
            checkout: args.checkout.as_deref(),
            json: args.json,
            unsupported: unsupported.iter().find(|(on, _)| *on).map(|(_, f)| *f),
        };
        return super::on::create_on(&on, &cfg, ui);
    }
    let cwd = crate::cli::cwd()?;
    let req = CreateRequest {
        cwd,
        name: args.name.clone(),
        checkout: args.checkout.clone(),
        base: args.base.clone(),
        no_fetch: args.no_fetch,
        cold: args.cold,
        warm: super::warm_flag(args.warm, args.no_warm),
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
        token_from: args.token_from.clone(),
        allow_forge: args.allow_forge,
    };
    if args.dry_run {
        return print_plan(&req, &cfg, args.json, ui);
    }
    if args.detach {
        // Refused before anything is made: a detached agent needs a session host.
        need_sessions()?;
    }
    let created = provision::create(&req, &cfg, ui)?;
    hand_off(&created, &cfg, ui, args.print, args.json, args.detach)
}

/// `--dry-run` (of `create` and `git sandbox up`): the plan, on stderr or as JSON;
/// nothing is written.
pub(crate) fn print_plan(
    req: &CreateRequest,
    cfg: &crate::config::UserConfig,
    json: bool,
    ui: &mut Ui,
) -> Result<i32, CliError> {
    let (plan, warnings) = provision::dry_run(req, cfg)?;
    for w in &warnings {
        ui.warning(w);
    }
    if json {
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
    Ok(error::OK)
}

/// The last pipeline step: launch, print, or describe the box.
pub fn hand_off(
    created: &Created,
    cfg: &crate::config::UserConfig,
    ui: &mut Ui,
    print: bool,
    json_out: bool,
    detach: bool,
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
    let again = format!("git treebox enter {}", crate::cmd::quote(&plan.name));
    if detach {
        let agent = provision::launch::detached(created, cfg).map_err(from_launch)?;
        say_as_root(agent.as_root, ui);
        if let Some(w) = &agent.will_ask {
            ui.warning(w);
        }
        let how = Launching {
            marker: &created.session_path,
            detach,
            again,
            path: &plan.path,
            overrides: false,
            ready: agent.ready.clone(),
        };
        return self::launch(&how, |_| agent.cmd.clone(), ui);
    }
    let in_session = super::runner_for(&created.record, true)?;
    let mut how = Launching {
        marker: &created.session_path,
        detach,
        again,
        path: &plan.path,
        overrides: false,
        ready: provision::launch::ready_for(plan.harness, &plan.launch_argv, &created.session_path),
    };
    let as_root = as_root_env(
        plan.harness,
        created.record.runner,
        cfg.harness_allows_root(plan.harness),
        ui,
    );
    if let Some(w) = crate::provision::host_trust::will_ask(
        plan.harness,
        &created.record.repo,
        created.main_trusted,
    ) {
        ui.warning(&w);
        how.ready.will_ask();
    }
    self::launch(
        &how,
        |tty| {
            with_env(
                match tty {
                    true => in_session.exec(&plan.path, &plan.name, &plan.launch_argv),
                    false => launch.clone(),
                },
                as_root,
            )
        },
        ui,
    )
}

/// How a launching command meets the box's session.
pub struct Launching<'a> {
    /// The box's session marker (`Layout::session_path`).
    pub marker: &'a std::path::Path,
    /// `-d`: start the session, do not attach.
    pub detach: bool,
    /// The command that attaches to the session later.
    pub again: String,
    /// The box, printed on stdout by a detached start.
    pub path: &'a std::path::Path,
    /// The command asked for a program or arguments of its own (`--harness`, `-- ARGS`),
    /// which a live session, re-attached, does not take.
    pub overrides: bool,
    /// How to tell that the program it starts is ready for a person.
    pub ready: crate::session::Ready,
}

/// SPEC §7 "Unattended": Claude Code started as root on the host runner refuses
/// `--dangerously-skip-permissions` and exits. Said before launching, with the ways
/// out; with the user's opt-in (`harnesses.claude.allowRoot`) the launch gets
/// `IS_SANDBOX=1`, said too (`allowed`: the opt-in, from the config the command
/// loaded). The variable to set, if any.
pub(crate) fn as_root_env(
    harness: crate::harness::Harness,
    runner: crate::vocab::RunnerKind,
    allowed: bool,
    ui: &mut Ui,
) -> Option<(&'static str, &'static str)> {
    let as_root = provision::launch::as_root(harness, runner, allowed);
    say_as_root(as_root, ui);
    (as_root == crate::harness::AsRoot::OptedIn).then_some(("IS_SANDBOX", "1"))
}

/// What the user hears of [`crate::harness::AsRoot`] before a launch.
fn say_as_root(as_root: crate::harness::AsRoot, ui: &mut Ui) {
    use crate::harness::AsRoot;
    match as_root {
        AsRoot::Fine => {}
        AsRoot::OptedIn => {
            ui.info("Claude Code runs as root on the host with IS_SANDBOX=1 (config `harnesses.claude.allowRoot`): its own root check is off");
        }
        AsRoot::Refuses => {
            ui.warning("Claude Code refuses to run as root with --dangerously-skip-permissions and will exit: tell it this machine is a sandbox with `\"harnesses\": {\"claude\": {\"allowRoot\": true}}` in the config (it then starts with IS_SANDBOX=1), run treebox as a user who is not root, or give the box a container (`--isolation docker`)");
        }
    }
}

/// `cmd` with `var` set, if any.
pub(crate) fn with_env(cmd: Cmd, var: Option<(&'static str, &'static str)>) -> Cmd {
    match var {
        Some((k, v)) => cmd.env(k, v),
        None => cmd,
    }
}

/// Launch the program `build(tty)` builds (`tty`: it will have a terminal) as SPEC §7a
/// says: detached, attached through tmux (re-attaching to a live session instead of
/// starting a second program), or as a foreground child without a terminal or tmux.
pub fn launch(how: &Launching, build: impl Fn(bool) -> Cmd, ui: &mut Ui) -> Result<i32, CliError> {
    use crate::session::Session;
    let build = |tty: bool| build(tty).without_git_dispatch();
    let tmux = how.detach || (ui.stdin_is_tty() && crate::session::available());
    if !tmux {
        ui.finish();
        return launch_in_session(&build(ui.stdin_is_tty()), how.marker, ui);
    }
    let session = Session::for_marker(how.marker).map_err(from_session)?;
    if how.detach {
        let started = crate::session::detached::start(
            how.marker,
            &build(true),
            &how.ready,
            crate::session::detached::READY_LIMIT,
        )
        .map_err(from_session)?;
        let live = started == Started::AlreadyRunning;
        if live {
            already_running(&session, how, ui);
        }
        if let Started::Now(seen) = started {
            if let Some(code) = word_readiness(seen, how, ui) {
                return Ok(code);
            }
        }
        return join(&session, how, live, ui);
    }
    let live = session.exists();
    if live {
        already_running(&session, how, ui);
    }
    let mut started_here = false;
    if !live {
        match session.start(&build(true)) {
            Ok(()) => started_here = true,
            // Another command started it a moment ago: join that one.
            Err(e) => {
                if !matches!(e, crate::session::SessionError::Tmux(_)) || !session.exists() {
                    return Err(from_session(e));
                }
            }
        }
    }
    let code = join(&session, how, live, ui)?;
    if started_here && code != error::OK {
        // The pane closed with the agent: what it said last is gone from the terminal.
        show_last_lines(&session, ui);
    }
    Ok(code)
}

/// A live session is joined as it is: said when the command asked for a program or
/// arguments of its own.
fn already_running(session: &crate::session::Session, how: &Launching, ui: &mut Ui) {
    if how.overrides {
        ui.warning(&format!(
            "session `{}` is already running: {} it as it is (the agent and arguments asked for are not used)",
            session.name(),
            if how.detach { "leaving" } else { "attaching to" }
        ));
    }
}

/// What a detached start's wait saw, as the user hears it. One that ends first is a
/// failure with its exit code (never 0) and its last lines (`Some(code)`); one still
/// not ready after [`crate::session::detached::READY_LIMIT`] is a warning with what its
/// screen shows.
fn word_readiness(seen: Readiness, how: &Launching, ui: &mut Ui) -> Option<i32> {
    match seen {
        Readiness::Ready => None,
        Readiness::Exited { code, last } => {
            print_lines(&last, ui);
            ui.error(
                &CliError::new(
                    ErrorKind::AgentExited,
                    format!("the agent exited with code {code} before it was ready"),
                )
                .hint(format!(
                    "Start it on a terminal to see it: `{}` (its last lines are above).",
                    how.again
                )),
            );
            Some(if code == error::OK {
                error::RUNTIME
            } else {
                code
            })
        }
        Readiness::Asks { what, last } => {
            print_lines(&last, ui);
            ui.warning(&format!(
                "the agent waits at a screen for a person (\"{what}\", its last lines are above): answer it with `{}`",
                how.again
            ));
            None
        }
        Readiness::NotYet { last } => {
            print_lines(&last, ui);
            ui.warning(&format!(
                "the agent is not at its prompt after {} s: it may be waiting at a screen for a person (its last lines are above); look with `{}`",
                crate::session::detached::READY_LIMIT.as_secs(),
                how.again
            ));
            None
        }
    }
}

fn show_last_lines(session: &crate::session::Session, ui: &mut Ui) {
    print_lines(&session.last_lines(crate::session::LAST_LINES), ui);
}

fn print_lines(lines: &[String], ui: &mut Ui) {
    if lines.is_empty() {
        return;
    }
    ui.info("the agent's last lines:");
    for l in lines {
        ui.info(&format!("  | {l}"));
    }
}

/// Attach to `session` (or, with `-d`, say it runs and print the box path); `live`: it
/// was running before this command.
pub fn join(
    session: &crate::session::Session,
    how: &Launching,
    live: bool,
    ui: &mut Ui,
) -> Result<i32, CliError> {
    use crate::session::Ended;
    if how.detach {
        ui.info(&format!(
            "{} in session `{}`; attach with `{}`",
            if live { "already running" } else { "started" },
            session.name(),
            how.again
        ));
        ui.out(&how.path.to_string_lossy());
        return Ok(error::OK);
    }
    ui.finish();
    match session.attach().map_err(from_session)? {
        Ended::Exited(code) => Ok(code),
        Ended::Detached => {
            ui.info(&format!(
                "detached; session `{}` runs on. Attach again with `{}`",
                session.name(),
                how.again
            ));
            Ok(error::OK)
        }
    }
}

/// The program of a tmux session (`<exe> __treebox-session <marker> <launch>`): run the agent,
/// record its exit code, exit with it.
pub fn serve_session(marker: &std::path::Path, launch: &std::path::Path) -> i32 {
    match crate::session::serve(marker, launch) {
        Ok(code) => code,
        Err(e) => {
            let code = match &e {
                crate::session::ServeError::Spawn { source, .. }
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    127
                }
                crate::session::ServeError::Spawn { .. } => 126,
                _ => error::RUNTIME,
            };
            let mut ui = Ui::new(super::ui::UiOptions::default());
            ui.error(&CliError::of(ErrorKind::Launch, e));
            code
        }
    }
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
    launch_child(cmd, session)
}

/// Run the agent with the terminal, and exit with its code (128+signal when killed);
/// see [`Cmd::run_in_foreground`]. While it runs it is named as the session's holder
/// of the box whose marker is `marker`, so `teardown --force` / `down -f` end it
/// ([`crate::session::foreground`]).
fn launch_child(cmd: &Cmd, marker: &std::path::Path) -> Result<i32, CliError> {
    let status = crate::session::foreground::run(cmd, marker);
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
