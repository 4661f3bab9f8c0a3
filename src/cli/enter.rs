//! `git treebox enter REF`: bring a box up to date, then launch the agent in it — or,
//! on a terminal, attach to the agent's live session (SPEC §7a); `-d` starts the
//! session without attaching. Launching is [`super::create::launch`].

use super::json::{env_word, Document, EnterDocument, Launch, V1};
use clap::Args;

use super::error::{self, CliError, ErrorKind};
use super::ui::Ui;
use crate::harness::Harness;
use crate::provision::enter::{self, Deps, EnterRequest};

#[derive(Debug, Clone, Args)]
pub struct EnterArgs {
    /// The box: its name, its current branch, or a unique part of either.
    #[arg(value_name = "REF")]
    pub reference: String,
    /// Which agent to launch, this session only (the box keeps its own).
    #[arg(long, value_parser = ["claude", "codex"])]
    pub harness: Option<String>,
    /// Must match the box's recorded runner (a box never changes runner).
    #[arg(long, value_parser = ["host", "docker", "podman", "auto"])]
    pub isolation: Option<String>,
    /// Must match the box's recorded git mode.
    #[arg(long = "git", value_name = "MODE", value_parser = ["worktree", "clone"])]
    pub git_mode: Option<String>,
    /// Re-sync dependencies with throwaway caches, even when unchanged.
    #[arg(long)]
    pub cold: bool,
    /// Print the launch command as one shell-quoted line instead of launching.
    #[arg(long, conflicts_with = "json")]
    pub print: bool,
    /// Detached: start the agent in the box's session (tmux) without attaching, unless
    /// one is live already; wait until it is at its prompt; print the box path.
    #[arg(short = 'd', long, conflicts_with_all = ["print", "json"])]
    pub detach: bool,
    /// Print the result as JSON instead of launching.
    #[arg(long)]
    pub json: bool,
    /// Extra arguments for the agent, appended verbatim (after `--`).
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

pub fn run(args: EnterArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let cfg = super::load_config()?;
    match here(&args, &cfg, ui) {
        // Not here: on another machine of the config, enter it there.
        Err(e) if e.kind == ErrorKind::BoxNotFound && !args.print && !args.json => {
            match super::on::find_elsewhere(&cfg, &args.reference)? {
                Some(far) => {
                    // Its dev servers reach this machine's browser while it is entered.
                    super::forward::forward_far(&far, ui);
                    super::on::on_terminal(
                        &far,
                        crate::remote::terminal::Verb::Enter {
                            detach: args.detach,
                        },
                        ui,
                    )
                }
                None => Err(e),
            }
        }
        other => other,
    }
}

/// `enter` of a box of this machine.
fn here(args: &EnterArgs, cfg: &crate::config::UserConfig, ui: &mut Ui) -> Result<i32, CliError> {
    let cwd = crate::cli::cwd()?;
    let req = EnterRequest {
        cwd,
        reference: args.reference.clone(),
        isolation: args.isolation.clone(),
        git_mode: args.git_mode.clone(),
        harness: args
            .harness
            .as_deref()
            .and_then(|h| h.parse::<Harness>().ok()),
        cold: args.cold,
        extra_args: args.args.clone(),
        state_root: None,
    };
    if args.detach {
        super::create::need_sessions()?;
    }
    if !args.print && !args.json {
        if let Some(code) = rejoin(args, ui)? {
            return Ok(code);
        }
    }
    let entered = enter::enter(&req, cfg, ui).map_err(|e| {
        let here = crate::git::Repo::discover(&req.cwd).ok();
        super::box_elsewhere(
            e.into(),
            &args.reference,
            here.as_ref().map(|r| r.common_dir.as_path()),
        )
    })?;
    for name in &entered.keys.kept {
        ui.info(&format!(
            "kept the box's {name}: this shell has none (set it to replace it, or set it empty to clear it)"
        ));
    }
    for name in &entered.keys.replaced {
        ui.info(&format!("{name}: this shell's value replaces the box's"));
    }
    let launching = !args.print && !args.json;
    let runner = super::runner_for(&entered.record, launching && ui.stdin_is_tty())?;
    let r = &entered.record;
    let launch = runner.exec(&r.path, &r.name, &entered.launch_argv);
    if args.json {
        let doc = EnterDocument {
            schema_version: V1,
            name: &r.name,
            repo: &r.repo,
            branch: &entered.branch,
            placeholder: crate::names::is_placeholder_branch(&entered.branch),
            path: &r.path,
            git_mode: r.git_mode,
            runner: r.runner,
            harness: entered.harness.as_str(),
            finished_setup: entered.finished_setup,
            deps: match entered.deps {
                Deps::Unchanged => "unchanged",
                Deps::Synced { .. } => "synced",
            },
            setup_completed: r.setup_completed,
            env: env_word(&entered.env),
            keys: super::json::keys_words(&entered.keys),
            launch: Launch::from(&launch),
            warnings: &ui.warnings,
        }
        .to_value();
        ui.out_json(&doc);
        return Ok(error::OK);
    }
    if args.print {
        ui.out(&launch.to_string());
        return Ok(error::OK);
    }
    let in_session = super::runner_for(r, true)?;
    let mut how = super::create::Launching {
        marker: &entered.session_path,
        detach: args.detach,
        again: format!("git treebox enter {}", crate::cmd::quote(&r.name)),
        path: &r.path,
        overrides: args.harness.is_some() || !args.args.is_empty(),
        ready: crate::provision::launch::ready_for(
            entered.harness,
            &entered.launch_argv,
            &entered.session_path,
        ),
    };
    let as_root = super::create::as_root_env(
        entered.harness,
        r.runner,
        cfg.harness_allows_root(entered.harness),
        ui,
    );
    if let Some(w) =
        crate::provision::host_trust::will_ask(entered.harness, &r.repo, entered.main_trusted)
    {
        ui.warning(&w);
        how.ready.will_ask();
    }
    super::create::launch(
        &how,
        |tty| {
            super::create::with_env(
                match tty {
                    true => in_session.exec(&r.path, &r.name, &entered.launch_argv),
                    false => launch.clone(),
                },
                as_root,
            )
        },
        ui,
    )
}

/// The box's agent session, when one is live and this command would attach to it (or,
/// with `-d`, leave it be): joined as it is, without touching the box — no setup
/// re-sync under a running agent. `None`: no live session (or no box by that name, which
/// the full path reports), so the agent is launched as usual; also when flags must be
/// checked against the box first (`--isolation`, `--git`) or ask for a re-sync
/// (`--cold`): the full path does that, and joins the live session at its end all the
/// same. Off a terminal (no `-d`) a live session is refused (5), flags or not, before
/// anything is touched, rather than joined by a second, foreground agent.
fn rejoin(args: &EnterArgs, ui: &mut Ui) -> Result<Option<i32>, CliError> {
    use crate::session::Session;
    let joins = args.detach || (ui.stdin_is_tty() && crate::session::available());
    if !joins && !crate::session::available() {
        return Ok(None);
    }
    let Ok((repo, layout)) = super::here() else {
        return Ok(None);
    };
    let Ok(entry) = crate::boxes::find(&repo, &layout, &args.reference) else {
        return Ok(None);
    };
    let marker = layout.session_path(&entry.leaf);
    let Ok(session) = Session::for_marker(&marker) else {
        return Ok(None);
    };
    if !session.exists() {
        return Ok(None);
    }
    if !joins {
        // Off a terminal there is nothing to attach to it: a second agent beside the
        // live one (SPEC §7a: re-attach, or start one when none is live) is refused.
        let leaf = crate::cmd::quote(entry.leaf.as_str());
        return Err(CliError::new(
            ErrorKind::SessionLive,
            format!(
                "box `{}` has a live agent session, and there is no terminal to attach it to",
                entry.leaf
            ),
        )
        .hint(format!(
            "Attach on a terminal with `git treebox enter {leaf}`, or end it: `git treebox teardown --force {leaf}`."
        )));
    }
    if args.isolation.is_some() || args.git_mode.is_some() || args.cold {
        return Ok(None);
    }
    let how = super::create::Launching {
        marker: &marker,
        detach: args.detach,
        again: format!(
            "git treebox enter {}",
            crate::cmd::quote(entry.leaf.as_str())
        ),
        path: &entry.path,
        overrides: args.harness.is_some() || !args.args.is_empty(),
        // Joined, not started.
        ready: crate::session::Ready::started(),
    };
    if how.overrides {
        ui.warning(&format!(
            "session `{}` is already running: attaching to it as it is (the agent and arguments asked for are not used)",
            session.name()
        ));
    }
    // Should the agent end in the meantime, attaching reports its exit code.
    super::create::join(&session, &how, true, ui).map(Some)
}
