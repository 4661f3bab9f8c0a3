//! `git sandbox …`: the box-first front end over the same engine and state.
//!
//! `up NAME` provisions exactly like `git treebox create NAME --no-launch`, then opens
//! a shell in the box (`-d`: in its session, not attached; `--json`: none). A box made by either front end is seen, entered and
//! removed by the other. `down` keeps its own manners (SPEC §2): naming the box is the
//! decision, and it asks only when something would be lost that the user may not know
//! about — a clone holding commits the repository lacks, or a live session.
//!
//! Each subcommand is its own file (its Args and `run`); this one holds the clap tree
//! and the box lookups they share: `find` and `find_any`, `target` (a box ready
//! to run in, for `attach` and `run`) and `own_git_box` (for `bundle` and `fetch`).

mod attach;
mod bundle;
mod down;
pub(crate) mod fetch;
pub(crate) mod ls;
pub(crate) use down::down_unasked;
mod park;
mod prune;
mod run;
mod up;
pub mod watch;

use clap::{Parser, Subcommand};

use super::error::{CliError, ErrorKind};
use super::ui::Ui;
use super::GlobalOpts;

/// Sandboxes for coding agents, box first: bring one up, work in it, take it down.
///
/// In a container (docker, podman) a worktree box is a sandboxed worktree: a worktree
/// of a bare clone of its own, kept in treebox's state directory and borrowing this
/// repository's objects. The container sees that worktree and bare clone at their host
/// paths, this repository's objects read-only, and nothing else of its git dir. The
/// box's branch lives in the bare clone (this repository gets only the pin
/// refs/hort/NAME/base); its work comes back by a push to origin from inside (the
/// pre-push guard still binds) or by `git sandbox fetch NAME` into
/// refs/hort/NAME/incoming. `down` asks before removing work that neither this
/// repository nor origin has, and refuses without a terminal unless -f.
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
    ///
    /// On a terminal the shell runs in the box's session (tmux, on treebox's own socket)
    /// and this terminal attaches to it; without a terminal it is a foreground child. `-d`
    /// starts it in the session without attaching. While the shell runs the box is live:
    /// `git sandbox down NAME` asks, or without a terminal refuses (exit 5), unless -f.
    /// `--json` provisions only: no shell, no session.
    Up(up::UpArgs),
    /// Attach to a box's live session (its agent, or a shell), or open a login shell in it.
    Attach(attach::AttachArgs),
    /// Run a command in a box (no shell) and exit with its code.
    Run(run::RunArgs),
    /// List every box on this machine, across repositories.
    Ls(ls::LsArgs),
    /// A live dashboard of every box on this machine, grouped by repository.
    ///
    /// The screen and keys of `git treebox watch`, over every repository that has boxes
    /// (a REPO column; rows grouped by it, needs-me first within each).
    ///
    /// Exit codes: 0 on q; 2 when this is not a terminal (use --once) or --json lacks
    /// --once; 1 when the terminal cannot be drawn on.
    Watch(crate::cli::watch::WatchArgs),
    /// Remove a box; asks only when uncommitted or unreturned work or a live session would be lost.
    Down(down::DownArgs),
    /// Stop containers idle for a while (they start again on next use).
    Park(park::ParkArgs),
    /// Remove leftovers (records without a box, boxes without a record, stale pins, locks,
    /// records of repositories that are gone) and, with `--idle`, unused boxes that hold
    /// nothing to lose.
    Prune(prune::PruneArgs),
    /// Write a git bundle of a clone's, sandboxed worktree's or far box's branch.
    Bundle(bundle::BundleArgs),
    /// Import a clone's, sandboxed worktree's or far box's branch into
    /// refs/hort/<name>/incoming.
    Fetch(fetch::FetchArgs),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(crate::cli::completions::CompletionsArgs),
}

impl SandboxCommand {
    /// Whether the command was asked for JSON output.
    pub fn json(&self) -> bool {
        match self {
            SandboxCommand::Ls(a) => a.json,
            SandboxCommand::Watch(a) => a.json,
            SandboxCommand::Bundle(a) => a.json,
            SandboxCommand::Fetch(a) => a.json,
            SandboxCommand::Prune(a) => a.json,
            SandboxCommand::Park(a) => a.json,
            SandboxCommand::Down(a) => a.json,
            SandboxCommand::Up(a) => a.json,
            SandboxCommand::Attach(_) | SandboxCommand::Run(_) | SandboxCommand::Completions(_) => {
                false
            }
        }
    }
}

pub fn run(cli: SandboxCli, ui: &mut Ui) -> Result<i32, CliError> {
    match cli.command {
        SandboxCommand::Up(a) => up::run(a, ui),
        SandboxCommand::Attach(a) => attach::run(a, ui),
        SandboxCommand::Run(a) => run::run(a, ui),
        SandboxCommand::Ls(a) => ls::run(a, ui),
        SandboxCommand::Watch(a) => watch::run(a, ui),
        SandboxCommand::Down(a) => down::run(a, ui),
        SandboxCommand::Prune(a) => prune::run(a, ui),
        SandboxCommand::Park(a) => park::run(a, ui),
        SandboxCommand::Bundle(a) => bundle::run(a, ui),
        SandboxCommand::Fetch(a) => fetch::run(a, ui),
        SandboxCommand::Completions(a) => {
            use clap::CommandFactory;
            crate::cli::completions::run(a, ui, "git-sandbox", SandboxCli::command())
        }
    }
}

/// A box found by name: in this repository, or (outside any) a folder box.
pub(crate) enum Found {
    Repo(
        crate::git::Repo,
        crate::state::Layout,
        Box<crate::boxes::BoxEntry>,
    ),
    Folder(crate::state::Layout, Box<crate::state::Record>),
}

/// Like [`find`], falling back to the current folder's boxes outside a repository.
pub(crate) fn find_any(name: &str) -> Result<Found, CliError> {
    let cwd = crate::cli::cwd()?;
    match crate::git::Repo::discover(&cwd) {
        Err(crate::git::repo::RepoError::NotARepo { .. }) => {
            let (layout, record) = crate::folder::find(&cwd, name)
                .map_err(|e| crate::cli::box_elsewhere(e.into(), name, None))?;
            Ok(Found::Folder(layout, Box::new(record)))
        }
        _ => {
            let (repo, layout, entry) = find(name)?;
            Ok(Found::Repo(repo, layout, Box::new(entry)))
        }
    }
}

pub(crate) use crate::cli::here;

/// A box of this repository: the repository, its bookkeeping and the box.
pub(crate) type InRepo = (
    crate::git::Repo,
    crate::state::Layout,
    crate::boxes::BoxEntry,
);

/// The box NAME names in this repository (same rules as `git treebox enter`).
pub(crate) fn find(name: &str) -> Result<InRepo, CliError> {
    find_at(&crate::cli::cwd()?, name)
}

/// [`find`] in the repository of `dir`.
pub(crate) fn find_at(dir: &std::path::Path, name: &str) -> Result<InRepo, CliError> {
    let (repo, layout) = crate::cli::here_at(dir)?;
    let entry = crate::boxes::find(&repo, &layout, name).map_err(|e| {
        crate::cli::box_elsewhere(
            crate::provision::ProvisionError::from(e).into(),
            name,
            Some(&repo.common_dir),
        )
    })?;
    Ok((repo, layout, entry))
}

/// The box's runner, with its container started first (after a park or a reboot),
/// and where the box is (for the working directory and the session marker).
struct Target {
    runner: Box<dyn crate::runner::Runner>,
    record: crate::state::Record,
    path: std::path::PathBuf,
    leaf: String,
    session: std::path::PathBuf,
}

/// The box NAME names, its checkout checked and its container running.
fn target(name: &str, tty: bool) -> Result<Target, CliError> {
    let (repo, layout, mut record) = match find_any(name)? {
        Found::Repo(repo, layout, entry) => {
            if !entry.dir_exists {
                return Err(crate::provision::ProvisionError::BoxMissing {
                    leaf: entry.leaf.to_string(),
                    path: entry.path.clone(),
                }
                .into());
            }
            let Some(record) = entry.record.clone() else {
                return Err(crate::provision::ProvisionError::NoRecord {
                    leaf: entry.leaf.to_string(),
                    path: entry.path.clone(),
                }
                .into());
            };
            (Some(repo), layout, record)
        }
        Found::Folder(layout, record) => (None, layout, *record),
    };
    let leaf =
        crate::names::Leaf::parse(&record.name).map_err(crate::provision::ProvisionError::from)?;
    crate::provision::check_checkout(&record)?;
    if let Some(repo) = &repo {
        // A hook manager may have written over the guard: put it back (its hooks run
        // behind the guard, so nothing is lost). The box's own config can stop that
        // (an include setting core.hooksPath): its choice; `enter` and `doctor` say so.
        let _ = crate::provision::guard::keep_guard(repo, &layout, &record);
    }
    if let Some(before) = record.container.clone() {
        let cfg = crate::cli::load_config()?;
        let now =
            crate::runner::oci::ensure_running(repo.as_ref(), &layout, &record, &cfg.allowlist)
                .map_err(crate::provision::ProvisionError::from)?;
        if now != before {
            // Started or remade: remember the new container for the fast path.
            record.container = Some(now);
            let _ = record.save(&layout.record_path(&leaf));
        }
    }
    Ok(Target {
        runner: crate::cli::runner_for(&record, tty)?,
        path: record.path.clone(),
        session: layout.session_path(&leaf),
        leaf: leaf.to_string(),
        record,
    })
}

/// The target's runner, giving a container exec a terminal or not (`tty`).
fn target_runner(t: &Target, tty: bool) -> Result<Box<dyn crate::runner::Runner>, CliError> {
    crate::cli::runner_for(&t.record, tty)
}

/// The box NAME names — a clone, or a sandboxed worktree, whose branch lives in git
/// data of its own — with that git data present (for `bundle` and `fetch`): a clone's
/// checkout, a sandboxed worktree's bare clone (its checkout may be gone).
fn own_git_box(name: &str) -> Result<InRepo, CliError> {
    let (repo, layout, entry) = find(name)?;
    if !entry.owns_git() {
        return Err(CliError::new(
            ErrorKind::NotAClone,
            format!(
                "box `{}` is a worktree: its commits are already in the repository",
                entry.leaf
            ),
        )
        .hint(format!(
            "Its branch is `{}`; use it directly.",
            entry.shown_branch().unwrap_or("?")
        )));
    }
    // A sandboxed worktree's commits outlive its checkout, in its bare clone.
    if !entry.git_left() {
        return Err(crate::provision::ProvisionError::BoxMissing {
            leaf: entry.leaf.to_string(),
            path: entry.path.clone(),
        }
        .into());
    }
    Ok((repo, layout, entry))
}
