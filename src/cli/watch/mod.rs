//! `git treebox watch` (this repository's boxes) and `git sandbox watch` (every
//! repository's): the dashboard (SPEC §10c, issue 31).
//!
//! The rows come from [`gather`] (the sources `list` reads), ordered needs-me first
//! ([`crate::watch::sort`]). `--once --json` prints one snapshot ([`json`]).
//!
//! Called by [`crate::cli`] (`git treebox watch`) and `cli/sandbox/watch.rs`.

pub mod actions;
pub mod app;
pub mod bell;
pub mod gather;
pub mod json;
pub mod live;
pub mod refresh;
pub mod view;

use clap::Args;

use super::error::{self, CliError, ErrorKind};
use super::ui::Ui;
use crate::cli::json::{Document, V1};
use crate::watch::Row;

#[derive(Debug, Clone, Args)]
pub struct WatchArgs {
    /// Print one snapshot and exit (instead of the live screen): the screen as text
    /// (80×24), or with --json the rows as data.
    #[arg(long)]
    pub once: bool,
    /// With --once: print the snapshot as JSON (see docs/schema/watch.schema.json).
    #[arg(long)]
    pub json: bool,
    /// No bell and no desktop notifications (config: `"notify": false`).
    #[arg(long)]
    pub no_notify: bool,
}

/// Where the rows come from: this repository, or every repository on the machine.
pub enum Scope {
    Repo(crate::git::Repo, crate::state::Layout),
    Machine,
}

/// One snapshot of every box in `scope`, needs-me first.
pub fn snapshot(scope: &Scope) -> Result<Vec<Row>, CliError> {
    let mut rows = match scope {
        Scope::Repo(repo, layout) => gather::rows(repo, layout).0,
        Scope::Machine => {
            let mut all = Vec::new();
            for (repo, layout) in super::sandbox::watch::repos()? {
                all.extend(gather::rows(&repo, &layout).0);
            }
            all
        }
    };
    match scope {
        Scope::Repo(..) => crate::watch::sort(&mut rows),
        Scope::Machine => crate::watch::sort_grouped(&mut rows),
    }
    Ok(rows)
}

/// `git treebox watch`.
pub fn run(args: WatchArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let cfg = super::load_config()?;
    let (repo, layout) = super::here()?;
    watch(Scope::Repo(repo, layout), args, &cfg, ui)
}

/// The title line of the screen.
fn title_of(scope: &Scope) -> String {
    match scope {
        Scope::Repo(repo, _) => format!("git treebox watch · {}", repo.main_root.display()),
        Scope::Machine => "git sandbox watch · every repository".to_string(),
    }
}

/// The dashboard over `scope`.
pub fn watch(
    scope: Scope,
    args: WatchArgs,
    cfg: &crate::config::UserConfig,
    ui: &mut Ui,
) -> Result<i32, CliError> {
    if args.json && !args.once {
        let bin = match scope {
            Scope::Repo(..) => "git treebox",
            Scope::Machine => "git sandbox",
        };
        return Err(CliError::new(
            ErrorKind::Usage,
            "`watch --json` prints one snapshot, so it needs `--once`",
        )
        .hint(format!("Run `{bin} watch --once --json`.")));
    }
    if !args.once {
        let title = title_of(&scope);
        let notify = !args.no_notify && cfg.notify != Some(false);
        return live::run(scope, title, ui, notify);
    }
    let rows = snapshot(&scope)?;
    if args.json {
        let doc = json::WatchDocument {
            schema_version: V1,
            time: crate::state::record::now() as i64,
            boxes: rows.iter().map(json::WatchBox::of).collect(),
        };
        ui.out_json(&doc.to_value());
        return Ok(error::OK);
    }
    // The screen, drawn once as text (80×24, no colour), with the first box's pane.
    let mut app = app::App::new(title_of(&scope), false);
    app.grouped = matches!(scope, Scope::Machine);
    app.tmux = crate::session::available();
    app.now = crate::state::record::now() as i64;
    app.set_rows(rows);
    app.details = app.selected_row().map(|r| refresh::details(r, app.tmux));
    ui.out(&view::text(&app, 80, 24));
    Ok(error::OK)
}
