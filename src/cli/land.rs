//! `git treebox land NAME [--squash | --rebase | --merge] [--push | --pr] [--remove]`:
//! the box's work onto its base branch (SPEC §10b).
//!
//! In order, nothing written before the last refusal: the box must exist with a
//! record, have no live agent and no uncommitted work (its checkout, and for a clone
//! or sandboxed worktree its other branches, tags and stash); origin is fetched; a
//! clone's or sandboxed worktree's branch is fetched back into
//! `refs/hort/<name>/incoming` (the only tip of it the host trusts). Then either
//! [`crate::land::onto`] makes and moves the base (`--push` publishes it), or `--pr`
//! pushes the box's branch as it is now and opens a pull request with `gh`
//! ([`super::land_pr`]). Host pushes run no hooks, so the guard's decision is asked
//! here. The box's lock is held throughout, so `enter` and `teardown` wait.

use clap::Args;
use serde::Serialize;

use super::error::{self, CliError, ErrorKind};
use super::json::{Document, V1};
use super::ui::Ui;
use crate::boxes::{self, BoxEntry};
use crate::git::cli::GitCli;
use crate::git::Repo;
use crate::land::onto::{self, Base, LandError, MainCheckout, Strategy, Work};
use crate::land::publish::{self, PublishError};
use crate::land::scan;
use crate::state::{BoxLock, Layout};

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
    let Some(record) = entry.record.clone() else {
        return Err(CliError::new(
            ErrorKind::NotABox,
            format!("`{leaf}` has no record, so its base is unknown"),
        ));
    };
    let strategy = if args.squash {
        Strategy::Squash
    } else if args.rebase {
        Strategy::Rebase
    } else if args.merge {
        Strategy::Merge
    } else {
        cfg.land.unwrap_or_default()
    };
    let lock = BoxLock::try_acquire(&layout.lock_path(&entry.leaf), &leaf)
        .map_err(|e| CliError::from(crate::provision::ProvisionError::from(e)))?;
    refuse_too_large(&entry, &repo, &record.base)?;
    refuse_unready(&entry, &repo, &layout)?;

    let git = GitCli::for_repo(&repo.common_dir, None);
    crate::provision::fetch::fetch_origin(&git, &repo.main_root, &layout.repo_state, ui.can_ask())
        .map_err(|e| CliError::from(crate::provision::ProvisionError::from(e)))?;
    let (branch, tip) = box_tip(&entry, &repo, &layout)?;
    let base_name = record.base.clone();

    if args.pr {
        let url = super::land_pr::open(&repo, &git, &entry, &branch, tip, &base_name, ui)?;
        drop(lock);
        if args.json {
            let doc = LandDocument {
                schema_version: V1,
                name: &leaf,
                branch: &branch,
                base: &base_name,
                strategy: "pr",
                outcome: "pr-opened",
                tip: tip.to_string(),
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

    let base = onto::base_of(&repo, &base_name).map_err(|e| from_land(e, &leaf))?;
    let work = Work {
        tip,
        branch: &branch,
        leaf: &leaf,
    };
    let main = onto::checkout_check(&repo, &git, &base_name).map_err(|e| from_land(e, &leaf))?;
    let (composed, outcome) = match onto::compose(&repo, &git, strategy, &base, &work) {
        Ok(c) => (Some(c), "landed"),
        Err(LandError::AlreadyIn { .. }) => (None, "already-landed"),
        Err(e) => return Err(from_land(e, &leaf)),
    };
    let mut new = None;
    if let Some(c) = &composed {
        onto::move_base(&repo, &git, &base, c.new, &leaf, main).map_err(|e| from_land(e, &leaf))?;
        new = Some(c.new);
        ui.info(&format!(
            "landed {} commit(s) of `{}` onto `{base_name}` ({}{}): {}",
            c.commits,
            crate::sanitize::line(&branch),
            strategy.as_str(),
            if c.fast_forward {
                ", a fast-forward"
            } else {
                ""
            },
            short(c.new)
        ));
        if main == MainCheckout::FollowsBase {
            ui.info(&format!(
                "your checkout of `{base_name}` is up to date with it"
            ));
        }
    } else {
        ui.info(&format!(
            "nothing to land: box `{leaf}`'s work is already in `{base_name}`"
        ));
    }
    let pushed = args.push && push_base(&repo, &git, &base, ui)?;
    drop(lock);
    let removed = settle_box(&repo, &layout, &leaf, args.remove, ui);
    if args.json {
        let doc = LandDocument {
            schema_version: V1,
            name: &leaf,
            branch: &branch,
            base: &base_name,
            strategy: strategy.as_str(),
            outcome,
            tip: tip.to_string(),
            old: base.old.map(|o| o.to_string()),
            new: new.map(|n| n.to_string()),
            commits: composed.as_ref().map_or(0, |c| c.commits),
            pushed,
            pr_url: None,
            removed,
        };
        ui.out_json(&doc.to_value());
    }
    Ok(error::OK)
}

/// Refuse (5, `unreviewable`) a box whose history or tip tree is past land's bounds,
/// judged from its commits alone ([`scan::tip_fits`], through the box's objects as
/// `diff` reads them) before its checkout's status is read; nothing is written.
fn refuse_too_large(entry: &BoxEntry, repo: &Repo, base: &str) -> Result<(), CliError> {
    let Ok(git) = crate::land::BoxGit::open(entry, repo) else {
        return Ok(());
    };
    let Some(tip) = git.tip else {
        return Ok(());
    };
    let onto = crate::git::landed::targets_for_base(&repo.git, base)
        .first()
        .map(|t| t.oid);
    scan::tip_fits(&git.objects, onto, tip)
        .map_err(|r| super::land_pr::refused(r, &entry.leaf.to_string()))
}

/// Refuse (5) a box with a live agent or uncommitted work; nothing is written.
fn refuse_unready(entry: &BoxEntry, repo: &Repo, layout: &Layout) -> Result<(), CliError> {
    let name = entry.leaf.to_string();
    if crate::state::session::is_live(&layout.session_path(&entry.leaf)) {
        return Err(CliError::new(
            ErrorKind::SessionLive,
            format!("box `{name}` has a live agent session: its work may still change"),
        )
        .hint(format!(
            "Let the agent finish and exit (`git treebox enter {0}`, then quit it), then run `git treebox land {0}` again.",
            crate::cmd::quote(&name)
        )));
    }
    // A sandboxed worktree lands from its bare clone, its checkout gone or not.
    if !entry.git_left() {
        return Err(crate::provision::ProvisionError::BoxMissing {
            leaf: name,
            path: entry.path.clone(),
        }
        .into());
    }
    let a = boxes::assess(entry, repo);
    if a.dirty != Some(false) {
        return Err(CliError::new(
            ErrorKind::Dirty,
            format!(
                "box `{name}` has {}",
                if a.dirty.is_none() {
                    "a checkout whose changes cannot be read"
                } else {
                    "uncommitted changes (untracked files count)"
                }
            ),
        )
        .hint(format!(
            "Commit them in {} (or remove them), then land again; `git treebox diff {}` shows them.",
            entry.path.display(),
            crate::cmd::quote(&name)
        )));
    }
    if a.unreturned_other == Some(true) {
        return Err(CliError::new(
            ErrorKind::Unreturned,
            format!("box `{name}` holds work outside its branch (another branch, a tag or a stash)"),
        )
        .hint(format!(
            "Put it on the box's branch, or drop it there, then land again; `git sandbox bundle {}` keeps a copy of the branch.",
            crate::cmd::quote(&name)
        )));
    }
    Ok(())
}

/// The box's branch and tip as the host trusts them: a worktree's from the user's
/// repository, a clone's (a sandboxed worktree's) fetched back first.
fn box_tip(
    entry: &BoxEntry,
    repo: &Repo,
    layout: &Layout,
) -> Result<(String, git2::Oid), CliError> {
    if entry.owns_git() {
        let back = super::sandbox::fetch::fetch_back(repo, layout, entry)?;
        return Ok((back.branch, back.tip));
    }
    let git =
        crate::land::BoxGit::open(entry, repo).map_err(|e| CliError::of(ErrorKind::Repo, e))?;
    match (git.branch, git.tip) {
        (Some(b), Some(t)) => Ok((b, t)),
        _ => Err(CliError::new(
            ErrorKind::NoBranch,
            format!("box `{}` has no commits on a branch to land", entry.leaf),
        )
        .hint("Commit its work on a branch there (`git switch -c <name>`), then land again.")),
    }
}

/// `--push`: the base to origin, the guard asked first (host pushes run no hooks).
fn push_base(repo: &Repo, git: &GitCli, base: &Base, ui: &mut Ui) -> Result<bool, CliError> {
    let refname = base.refname();
    let err = |e| super::land_pr::from_publish(e, "");
    publish::guard_allows(&refname, &refname).map_err(err)?;
    publish::push(repo, git, &refname, &refname).map_err(|source| {
        CliError::of(
            ErrorKind::FetchFailed,
            PublishError::Push {
                branch: base.name.clone(),
                source,
            },
        )
        .hint(format!(
            "Landed here: your `{0}` holds the work; push it yourself: `git push origin {0}` (fetch and rebase first if origin moved).",
            base.name
        ))
    })?;
    ui.info(&format!("pushed `{}` to origin", base.name));
    Ok(true)
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
