//! `git treebox land NAME [--squash | --rebase | --merge] [--push | --pr] [--remove]`:
//! the box's work onto its base branch (SPEC §10b).
//!
//! A front end over [`crate::land::flow`], which decides and writes (the same calls
//! `watch` and the MCP server make): this file reads the arguments, prints what
//! happened, asks whether to remove a landed box, and maps each refusal to its exit
//! code and hint ([`super::land_report`], which the MCP server's `box_land` shares, as it
//! shares the `--json` document).

use clap::Args;

use super::error::{self, CliError, ErrorKind};
use super::json::{Document, V1};
use super::land_report::LandDocument;
use super::ui::Ui;
use crate::boxes;
use crate::git::Repo;
use crate::land::flow;
use crate::land::onto::{MainCheckout, Strategy};
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

pub fn run(args: LandArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let cfg = super::load_config()?;
    let found = match super::sandbox::find(&args.name) {
        Err(e) if e.kind == ErrorKind::BoxNotFound => {
            match super::on::find_elsewhere(&cfg, &args.name)? {
                // Not here: a box on another machine, its branch brought back first.
                Some(far) => Err(far),
                None => return Err(e),
            }
        }
        other => Ok(other?),
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
    let (repo, leaf, landing, far) = match found {
        Ok((repo, layout, entry)) => {
            let leaf = entry.leaf.to_string();
            let landing = flow::prepare(&repo, &layout, &entry, ui.can_ask())
                .map_err(|e| super::land_report::from_not_ready(e, &leaf))?;
            (repo, leaf, landing, None)
        }
        Err(far) => {
            let (repo, landing) = super::far::landing(&far, ui.can_ask())?;
            (repo, far.leaf.clone(), landing, Some(far))
        }
    };

    if args.pr {
        let shown = crate::sanitize::line(&landing.branch);
        let url = landing
            .open_pr(&repo, || ui.info(&format!("pushed `{shown}` to origin")))
            .map_err(|e| super::land_report::from_pr(e, &leaf, &landing.branch, &landing.base))?;
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
        .map_err(|e| super::land_report::from_land(e, &leaf))?;
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
    let removed = match &far {
        Some(far) => settle_far(far, args.remove, ui),
        None => match super::here() {
            Ok((_, layout)) => settle_box(&repo, &layout, &leaf, args.remove, ui),
            Err(_) => false,
        },
    };
    if args.json {
        let mut doc = LandDocument::landed(&leaf, &branch, &base_name, tip, strategy, &landed);
        doc.pushed = pushed;
        doc.removed = removed;
        ui.out_json(&doc.to_value());
    }
    Ok(error::OK)
}

/// `--push` failed after landing: the work is in the local base.
fn from_push(e: PublishError, base: &str) -> CliError {
    match e {
        e @ PublishError::Push { .. } => CliError::of(ErrorKind::FetchFailed, e).hint(format!(
            "Landed here: your `{base}` holds the work; push it yourself: `git push origin {base}` (fetch and rebase first if origin moved)."
        )),
        e => super::land_report::from_publish(e, ""),
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

/// After a land of a box on another machine: removed there when asked (`--remove`,
/// or yes on a terminal), with the refusals that machine makes.
fn settle_far(far: &super::on::Far, remove: bool, ui: &mut Ui) -> bool {
    let leaf = &far.leaf;
    let go = remove
        || (ui.can_ask()
            && ui.confirm(&format!(
                "Remove box `{leaf}` on machine `{}` (landed)?",
                far.machine.name
            )));
    if !go {
        ui.info(&format!(
            "box `{leaf}` on machine `{}` is landed; remove it with `git treebox rm {}`",
            far.machine.name,
            crate::cmd::quote(leaf)
        ));
        return false;
    }
    match super::on::remove_there(far, false) {
        Ok(_) => {
            ui.info(&format!(
                "removed box `{leaf}` on machine `{}`",
                far.machine.name
            ));
            true
        }
        Err(e) => {
            ui.warning(&format!("box `{leaf}` was kept: {}", e.message));
            false
        }
    }
}

fn short(o: git2::Oid) -> String {
    o.to_string().chars().take(12).collect()
}
