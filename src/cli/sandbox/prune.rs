//! `git sandbox prune [--idle DUR] [-f]`: remove what crashes and hand edits left
//! behind in this repository — records without a box directory, box directories
//! without a record, pins (`refs/hort/<name>/base`) of boxes that no longer exist, and
//! stray lock files — and, from anywhere, the records (and containers) of
//! repositories that no longer exist on this machine. With `--idle DUR`, also whole
//! boxes nobody has used for DUR that hold nothing to lose: no live session, a clean
//! checkout, no commits that are not pushed (worktree) or returned (clone). Idle boxes
//! (and unrecorded directories) holding something are listed as kept, with the
//! reason. It lists first; it asks on a terminal and refuses without one unless `-f`.
//! Finding and removing are [`crate::maintain::prune`]'s; this file asks and prints.

use std::time::Duration;

use clap::Args;

use crate::cli::error::{self, CliError, ErrorKind};
use crate::cli::json::{Document, PruneDocument, Pruned, V1};
use crate::cli::ui::Ui;
use crate::maintain::prune::{self, Orphan};

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Also remove boxes idle this long whose work has landed in their base (or who
    /// have none) and that hold nothing else to lose: e.g. 90m, 2h, 7d.
    #[arg(long, value_name = "DUR", value_parser = super::park::parse_duration)]
    pub idle: Option<Duration>,
    /// With --idle, also remove idle boxes whose work is on origin (a worktree's
    /// branch pushed) or fetched back into the repository (a clone's), though it has
    /// not landed in their base. Without it they are kept, and said so.
    #[arg(long, requires = "idle")]
    pub pushed: bool,
    /// Remove without asking.
    #[arg(short, long)]
    pub force: bool,
    /// Print what was removed as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: PruneArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let _cfg = crate::cli::load_config()?;
    let outside = matches!(
        crate::git::Repo::discover(&crate::cli::cwd()?),
        Err(crate::git::repo::RepoError::NotARepo { .. })
    );
    let ctx = match outside {
        true => None,
        false => Some(super::here()?),
    };
    let found = prune::scan(a.idle, a.pushed, ctx.as_ref().map(|(r, l)| (r, l)));
    for k in &found.kept {
        ui.info(&format!("  kept {k}"));
    }
    remove_orphans(&a, ctx.as_ref(), found.orphans, ui)
}

fn from_prune(e: prune::PruneError) -> CliError {
    match e {
        prune::PruneError::Teardown(e) => crate::cli::teardown::from_teardown(e),
        e => CliError::of(ErrorKind::Prune, e),
    }
}

fn remove_orphans(
    a: &PruneArgs,
    ctx: Option<&(crate::git::Repo, crate::state::Layout)>,
    orphans: Vec<Orphan>,
    ui: &mut Ui,
) -> Result<i32, CliError> {
    if orphans.is_empty() {
        ui.info("nothing to prune");
        if a.json {
            ui.out_json(&PruneDocument::default().to_value());
        }
        return Ok(error::OK);
    }
    for o in &orphans {
        ui.info(&format!("  {}", o.describe()));
    }
    if !a.force {
        if !ui.can_ask() {
            return Err(CliError::new(
                ErrorKind::NeedsConfirmation,
                format!(
                    "{} leftover(s) to remove, and there is no terminal to ask",
                    orphans.len()
                ),
            )
            .hint(match a.idle {
                Some(idle) => format!(
                    "Pass -f to remove them: `git sandbox prune -f --idle {}`.",
                    super::park::duration_word(idle)
                ),
                None => "Pass -f to remove them: `git sandbox prune -f`.".to_string(),
            }));
        }
        if !ui.confirm(&format!("Remove these {} leftover(s)?", orphans.len())) {
            ui.info("nothing removed");
            return Ok(error::OK);
        }
    }
    let mut removed = Vec::new();
    let here = ctx.map(|(r, l)| (r, l));
    for o in &orphans {
        match prune::remove(o, here).map_err(from_prune)? {
            prune::Outcome::Removed => {}
            prune::Outcome::Skipped => continue,
            prune::Outcome::Kept(why) => {
                for w in &why {
                    ui.warning(w);
                }
                continue;
            }
        }
        removed.push(Pruned {
            kind: o.kind(),
            what: o.describe(),
        });
    }
    if a.json {
        let doc = PruneDocument {
            schema_version: V1,
            removed,
        };
        ui.out_json(&doc.to_value());
    } else {
        ui.info(&format!("removed {} leftover(s)", removed.len()));
    }
    Ok(error::OK)
}
