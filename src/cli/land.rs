//! `git treebox land NAME [--squash | --rebase | --merge] [--push | --pr] [--remove]`:
//! the box's work onto its base branch (SPEC §10b).
//!
//! A front end over [`crate::land::flow`], which decides and writes (the same calls
//! `watch` and the MCP server make): this file reads the arguments, prints what
//! happened, asks whether to remove a landed box, and maps each refusal to its exit
//! code and hint ([`super::land_pr`] for the publishing ones).

use clap::Args;
use serde::Serialize;

use super::error::{self, CliError, ErrorKind};
use super::json::{Document, V1};
use super::ui::Ui;
use crate::boxes;
use crate::git::Repo;
use crate::land::flow::{self, NotReady};
use crate::land::onto::{LandError, MainCheckout, Strategy};
use crate::land::publish::PublishError;
use crate::state::Layout;

#[derive(Debug, Clone, Args)]
#[command(group = clap::ArgGroup::new("strategy").multiple(false))]
#[command(group = clap::ArgGroup::new("publish").multiple(false))]
pub struct LandArgs {
    /// The box: its name, its current branch, or a unique part of either.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// One new commit on the base with the box's whole change, listing its commits
    /// (the default, unless the config's `land` says otherwise).
    #[arg(long, group = "strategy")]
    pub squash: bool,
    /// The box's commits replayed onto the base, authors kept (a fast-forward when the
    /// base has not moved).
    #[arg(long, group = "strategy")]
    pub rebase: bool,
    /// A merge commit of the base and the box's branch.
    #[arg(long, group = "strategy")]
    pub merge: bool,
    /// After landing, push the base to origin.
    #[arg(long, group = "publish")]
    pub push: bool,
    /// Do not land here: push the box's branch and open a pull request with `gh`.
    #[arg(long, group = "publish", conflicts_with = "strategy")]
    pub pr: bool,
    /// Remove the box after landing, without asking (it asks on a terminal otherwise).
    #[arg(long)]
    pub remove: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `docs/schema/land.schema.json`: `git treebox land --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LandDocument<'a> {
    pub schema_version: V1,
    pub name: &'a str,
    pub branch: &'a str,
    pub base: &'a str,
    /// `squash`, `rebase`, `merge`, or `pr`.
    pub strategy: &'a str,
    /// `landed`, `already-landed` or `pr-opened`.
    pub outcome: &'a str,
    /// The box's tip that landed (for a clone: `refs/hort/<name>/incoming`'s).
    pub tip: String,
    /// The base before and after (absent with `--pr`; `old` absent where there was no
    /// local base).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<String>,
    pub commits: usize,
    pub pushed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pr_url: Option<String>,
    pub removed: bool,
}

impl Document for LandDocument<'_> {}

pub fn run(args: LandArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let cfg = super::load_config()?;
    let (repo, layout, entry) = super::sandbox::find(&args.name)?;
    let leaf = entry.leaf.to_string();
    let strategy = if args.squash {
        Strategy::Squash
    } else if args.rebase {
        Strategy::Rebase
    } else if args.merge {
        Strategy::Merge
    } else {
        cfg.land.unwrap_or_default()
    };
    let landing = flow::prepare(&repo, &layout, &entry, ui.can_ask())
        .map_err(|e| from_not_ready(e, &leaf))?;

    if args.pr {
        let shown = crate::sanitize::line(&landing.branch);
        let url = landing
            .open_pr(&repo, || ui.info(&format!("pushed `{shown}` to origin")))
            .map_err(|e| super::land_pr::from_pr(e, &leaf, &landing.branch, &landing.base))?;
        ui.info(&format!(
            "opened a pull request of `{shown}` onto `{}`",
            landing.base
        ));
        if args.json {
            let doc = LandDocument {
                schema_version: V1,
                name: &leaf,
                branch: &landing.branch,
                base: &landing.base,
                strategy: "pr",
                outcome: "pr-opened",
                tip: landing.tip.to_string(),
                old: None,
                new: None,
                commits: 0,
                pushed: true,
                pr_url: Some(url),
                removed: false,
            };
            ui.out_json(&doc.to_value());
        } else {
            ui.out(&url);
        }
        return Ok(error::OK);
    }

    let base_name = &landing.base;
    let landed = landing
        .onto(&repo, strategy)
        .map_err(|e| from_land(e, &leaf))?;
    match &landed.composed {
        Some(c) => {
            ui.info(&format!(
                "landed {} commit(s) of `{}` onto `{base_name}` ({}{}): {}",
                c.commits,
                crate::sanitize::line(&landing.branch),
                strategy.as_str(),
                if c.fast_forward {
                    ", a fast-forward"
                } else {
                    ""
                },
                short(c.new)
            ));
            if landed.main == MainCheckout::FollowsBase {
                ui.info(&format!(
                    "your checkout of `{base_name}` is up to date with it"
                ));
            }
        }
        None => ui.info(&format!(
            "nothing to land: box `{leaf}`'s work is already in `{base_name}`"
        )),
    }
    let pushed = args.push && {
        landing
            .push_base(&repo, &landed.base)
            .map_err(|e| from_push(e, &landed.base.name))?;
        ui.info(&format!("pushed `{}` to origin", landed.base.name));
        true
    };
    let (branch, tip, base_name) = (landing.branch.clone(), landing.tip, landing.base.clone());
    // The box's lock goes before it is settled (teardown takes it again).
    drop(landing);
    let removed = settle_box(&repo, &layout, &leaf, args.remove, ui);
    if args.json {
        let doc = LandDocument {
            schema_version: V1,
            name: &leaf,
            branch: &branch,
            base: &base_name,
            strategy: strategy.as_str(),
            outcome: if landed.composed.is_some() {
                "landed"
            } else {
                "already-landed"
            },
            tip: tip.to_string(),
            old: landed.base.old.map(|o| o.to_string()),
            new: landed.composed.as_ref().map(|c| c.new.to_string()),
            commits: landed.composed.as_ref().map_or(0, |c| c.commits),
            pushed,
            pr_url: None,
            removed,
        };
        ui.out_json(&doc.to_value());
    }
    Ok(error::OK)
}

/// A refusal before anything was written, as the user sees it: its kind (exit code)
/// and the step that fixes it.
fn from_not_ready(e: NotReady, leaf: &str) -> CliError {
    let q = crate::cmd::quote(leaf);
    match e {
        NotReady::NoRecord { .. } => CliError::of(ErrorKind::NotABox, e),
        NotReady::Provision(p) => CliError::from(p),
        NotReady::Unreviewable(r) => super::land_pr::refused(r, leaf),
        NotReady::SessionLive { .. } => CliError::of(ErrorKind::SessionLive, e).hint(format!(
            "Let the agent finish and exit (`git treebox enter {q}`, then quit it), then run `git treebox land {q}` again."
        )),
        NotReady::Dirty { ref path, .. } => {
            let hint = format!(
                "Commit them in {} (or remove them), then land again; `git treebox diff {q}` shows them.",
                path.display()
            );
            CliError::of(ErrorKind::Dirty, e).hint(hint)
        }
        NotReady::Unreturned { .. } => CliError::of(ErrorKind::Unreturned, e).hint(format!(
            "Put it on the box's branch, or drop it there, then land again; `git sandbox bundle {q}` keeps a copy of the branch."
        )),
        NotReady::NoBranch { .. } => CliError::of(ErrorKind::NoBranch, e).hint(
            "Commit its work on a branch there (`git switch -c <name>`), then land again.",
        ),
        NotReady::Open { .. } => CliError::of(ErrorKind::Repo, e),
        NotReady::Back(b) => super::sandbox::from_back(b, leaf),
    }
}

/// `--push` failed after landing: the work is in the local base.
fn from_push(e: PublishError, base: &str) -> CliError {
    match e {
        e @ PublishError::Push { .. } => CliError::of(ErrorKind::FetchFailed, e).hint(format!(
            "Landed here: your `{base}` holds the work; push it yourself: `git push origin {base}` (fetch and rebase first if origin moved)."
        )),
        e => super::land_pr::from_publish(e, ""),
    }
}

/// After a land: remove the box when asked (`--remove`), or ask on a terminal —
/// only when it is now landed and holds nothing else ([`crate::teardown`]'s rule).
fn settle_box(repo: &Repo, layout: &Layout, leaf: &str, remove: bool, ui: &mut Ui) -> bool {
    let Some(entry) = boxes::exact(repo, layout, leaf) else {
        return false;
    };
    let t = crate::teardown::target(entry, repo, layout);
    let quoted = crate::cmd::quote(leaf);
    if !t.landed_clean() {
        if remove {
            ui.warning(&format!(
                "box `{leaf}` was kept: {} (remove it with `git treebox teardown {quoted}`)",
                crate::teardown::describe(&t)
            ));
        }
        return false;
    }
    let go = remove || (ui.can_ask() && ui.confirm(&format!("Remove box `{leaf}` (landed)?")));
    if !go {
        ui.info(&format!(
            "box `{leaf}` is landed; remove it with `git treebox teardown {quoted}`"
        ));
        return false;
    }
    match crate::teardown::remove_if_unchanged(repo, layout, &t, false) {
        Ok(_) => {
            ui.info(&format!("removed box `{leaf}`"));
            true
        }
        Err(e) => {
            ui.warning(&format!(
                "box `{leaf}` was kept: {}",
                crate::sanitize::chain(&e)
            ));
            false
        }
    }
}

fn short(o: git2::Oid) -> String {
    o.to_string().chars().take(12).collect()
}

/// A landing failure as the user sees it: its kind (exit code) and the step that
/// fixes it.
fn from_land(e: LandError, leaf: &str) -> CliError {
    let e = match e {
        LandError::Refused(r) => return super::land_pr::refused(r, leaf),
        e => e,
    };
    let q = crate::cmd::quote(leaf);
    let (kind, hint) = match &e {
        LandError::NoBase { base } => (
            ErrorKind::BaseNotFound,
            format!("Fetch origin (`git fetch origin`); if `{base}` is gone, land onto a branch that exists by recreating the box from it."),
        ),
        LandError::Diverged { base, .. } => (
            ErrorKind::Diverged,
            format!("Reconcile them first (`git switch {base} && git pull --rebase`), then land again."),
        ),
        LandError::CheckedOutElsewhere { path, .. } => (
            ErrorKind::BranchCheckedOut,
            format!("Switch that worktree to another branch (`git -C {} switch --detach`), then land again.", crate::cmd::quote(&path.to_string_lossy())),
        ),
        LandError::CheckoutInTheWay { .. } => (
            ErrorKind::Dirty,
            "Move the untracked files git names above out of the way (or commit them), then land again; nothing was changed.".into(),
        ),
        LandError::DirtyCheckout { .. } => (
            ErrorKind::Dirty,
            "Commit or stash your changes (`git stash`), then land again; nothing was changed.".into(),
        ),
        LandError::Conflict { base, .. } | LandError::Unrelated { base } => (
            ErrorKind::LandConflict,
            format!("Nothing was changed. Rebase the box onto `{base}` inside it (`git treebox enter {q}`, then `git rebase origin/{base}`), or land with `--pr` and resolve it there."),
        ),
        LandError::BaseMoved { .. } => (
            ErrorKind::Changed,
            format!("Run `git treebox land {q}` again."),
        ),
        LandError::CheckoutBehind { old, new, .. } => (
            ErrorKind::Runtime,
            format!("Bring your checkout along once its changes are out of the way: `git read-tree -m -u {old} {new}`."),
        ),
        LandError::AlreadyIn { .. }
        | LandError::Git(_)
        | LandError::Cmd(_)
        | LandError::Refused(_) => {
            (ErrorKind::Repo, String::new())
        }
    };
    let e = CliError::of(kind, e);
    if hint.is_empty() {
        e
    } else {
        e.hint(hint)
    }
}
