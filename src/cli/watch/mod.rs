//! `git treebox watch` (this repository's boxes) and `git sandbox watch` (every
//! repository's): the dashboard (SPEC §10c, issue 31).
//!
//! The rows come from [`gather`] (the sources `list` reads), ordered needs-me first
//! ([`crate::watch::sort`]), and from the config's machines ([`far_snapshot`]: what
//! `list` asks them, within its deadline; in the live screen on a thread of its own,
//! so a slow machine never holds the screen). `--once --json` prints one snapshot
//! ([`json`]).
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

impl Scope {
    /// What to ask the config's machines about for this scope.
    pub fn far(&self) -> FarScope {
        match self {
            Scope::Repo(repo, _) => FarScope::Repo(
                crate::remote::boxes::key_for(repo),
                repo.main_root.to_string_lossy().into_owned(),
            ),
            Scope::Machine => FarScope::Machine,
        }
    }

    /// Sort rows as this scope's screen orders them.
    pub fn sort(&self, rows: &mut [Row]) {
        match self {
            Scope::Repo(..) => crate::watch::sort(rows),
            Scope::Machine => crate::watch::sort_grouped(rows),
        }
    }
}

/// What the dashboard asks the config's machines about: one repository (its key
/// there, its main checkout here), or every repository `git sandbox ls` knows.
#[derive(Debug, Clone)]
pub enum FarScope {
    Repo(String, String),
    Machine,
}

/// The boxes of a [`FarScope`] on the config's machines, as rows.
#[derive(Debug, Default)]
pub struct FarRows {
    /// Unsorted; a machine not asked now gives the rows it last listed, stale.
    pub rows: Vec<Row>,
    /// One line per machine not asked (or why none could be).
    pub warnings: Vec<String>,
    pub unreached: Vec<crate::remote::listing::Unreached>,
}

/// The boxes of `far` on `machines`, each machine asked at once within a listing's
/// deadline (with which ports listen there when `ports`).
pub fn far_snapshot(far: &FarScope, machines: &[crate::config::Machine], ports: bool) -> FarRows {
    if machines.is_empty() {
        return FarRows::default();
    }
    let listing = match far {
        FarScope::Repo(key, root) => super::on::far_boxes(
            machines,
            &[(key.clone(), root.clone())],
            crate::remote::listing::LISTING,
            ports,
        ),
        FarScope::Machine => match super::on::boxes_of_known_repos(machines, ports) {
            Ok(l) => l,
            Err(e) => {
                return FarRows {
                    warnings: vec![actions::line(&e)],
                    ..FarRows::default()
                }
            }
        },
    };
    FarRows {
        warnings: super::list::far_warnings(&listing),
        rows: listing
            .boxes
            .into_iter()
            .map(|(m, repo, b)| gather::far_row(m, repo, &b))
            .collect(),
        unreached: listing.unreached,
    }
}

/// One snapshot of every box of this machine in `scope`, needs-me first; with which
/// of each box's ports listen when `ports` (`watch --once`: a socket table costs
/// milliseconds a box, too much for every refresh of the live screen, which reads the
/// selected box's alone).
pub fn snapshot(scope: &Scope, ports: bool) -> Result<Vec<Row>, CliError> {
    let here = gather::Here::new();
    let here = ports.then_some(&here);
    let mut rows = match scope {
        Scope::Repo(repo, layout) => gather::rows(repo, layout, here).0,
        Scope::Machine => {
            let mut all = Vec::new();
            for (repo, layout) in super::sandbox::watch::repos()? {
                all.extend(gather::rows(&repo, &layout, here).0);
            }
            all
        }
    };
    scope.sort(&mut rows);
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
        return live::run(scope, title, &cfg.machines, ui, notify);
    }
    // This machine's boxes and the machines' together, each machine named.
    let mut rows = snapshot(&scope, true)?;
    let far = far_snapshot(&scope.far(), &cfg.machines, true);
    rows.extend(far.rows);
    scope.sort(&mut rows);
    for w in &far.warnings {
        ui.warning(w);
    }
    if args.json {
        let doc = json::WatchDocument {
            schema_version: V1,
            time: crate::state::record::now() as i64,
            boxes: rows.iter().map(json::WatchBox::of).collect(),
            unreachable: &far.unreached,
        };
        ui.out_json(&doc.to_value());
        return Ok(error::OK);
    }
    // The screen, drawn once as text (80×24, no colour), with the first box's pane.
    let mut app = app::App::new(title_of(&scope), false);
    app.grouped = matches!(scope, Scope::Machine);
    app.machines = !cfg.machines.is_empty();
    app.unreached = far.unreached.into_iter().map(|u| u.machine).collect();
    app.tmux = crate::session::available();
    app.now = crate::state::record::now() as i64;
    app.set_rows(rows);
    app.details = app.selected_row().map(|r| refresh::details(r, app.tmux));
    ui.out(&view::text(&app, 80, 24));
    Ok(error::OK)
}
