//! `git sandbox down NAME [-f]`: naming the box is the decision.
//!
//! It asks only when something would be lost that the user may not know about:
//! uncommitted or untracked changes (or a checkout whose changes cannot be read),
//! commits that neither the repository nor origin has (a clone's unreturned work, a
//! worktree whose branch was deleted) — unless that work has landed in its base
//! (squash-merged, rebased on the forge) — or a live session. Without a terminal it refuses only in those cases (exit 5) unless
//! `-f`. Nothing is removed on refusal.

use clap::Args;

use crate::cli::error::{self, CliError, ErrorKind};
use crate::cli::json::{Document, RemovedDocument};
use crate::cli::ui::Ui;
use crate::teardown;

#[derive(Debug, Args)]
pub struct DownArgs {
    /// The box.
    ///
    /// Its name or its branch, whole: a part of a name is asked about on a terminal,
    /// and refused without one (`-f` or not).
    pub name: String,
    /// Remove without asking, even with uncommitted or unreturned work or a live session
    /// (which is ended: its agent or shell goes first).
    #[arg(short, long)]
    pub force: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: DownArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let _cfg = crate::cli::load_config()?;
    let (repo, layout, entry) = match super::find_any(&a.name)? {
        super::Found::Repo(repo, layout, entry) => (repo, layout, *entry),
        super::Found::Folder(layout, record) => return down_folder(&a, &layout, &record, ui),
    };
    // Naming the box is the decision (SPEC §2): a part of a name is not naming it.
    if !entry.is_named(&a.name) {
        let leaf = entry.leaf.to_string();
        let question = format!(
            "`{}` is a part of box `{leaf}`'s name",
            crate::sanitize::line(&a.name)
        );
        if ui.can_ask() {
            if !ui.confirm(&format!("{question}; tear that box down?")) {
                ui.info("nothing removed");
                return Ok(error::OK);
            }
        } else {
            return Err(
                CliError::new(ErrorKind::NeedsConfirmation, question).hint(format!(
                    "Name the box whole: `git sandbox down {}`.",
                    crate::cmd::quote(&leaf)
                )),
            );
        }
    }
    let t = teardown::target_for(entry, &repo, &layout, a.force);
    let name = t.entry.leaf.to_string();
    let mut reasons = Vec::new();
    match t.assessment.dirty {
        Some(true) => reasons.push("it has uncommitted or untracked changes"),
        None if t.entry.dir_exists => reasons.push("its changes cannot be read"),
        _ => {}
    }
    // Landed work is not lost; another branch, a tag or the stash in the box may be.
    let unreturned = match t.is_landed() {
        true => t.assessment.unreturned_other,
        false => t.assessment.unreturned,
    };
    if unreturned == Some(true) {
        reasons.push("it holds commits the repository does not have");
    }
    if t.assessment.orphaned && !t.is_landed() {
        reasons.push("it holds commits that neither the repository nor origin has");
    }
    if t.live {
        reasons.push("a session is live in it (an agent, or a shell)");
    }
    if !a.force && !reasons.is_empty() {
        let question = format!("box `{name}`: {}", reasons.join(", and "));
        if ui.can_ask() {
            let ask = format!("{}; tear it down anyway?", crate::sanitize::line(&question));
            if !ui.confirm(&ask) {
                ui.info("nothing removed");
                return Ok(error::OK);
            }
        } else {
            let mut e = CliError::new(ErrorKind::NeedsConfirmation, question).hint(format!(
                "Remove it anyway with `git sandbox down -f {}`.",
                crate::cmd::quote(&name)
            ));
            if unreturned == Some(true) {
                // `fetch` brings the box's current branch; when the repository has that
                // one, the work is on another branch, a tag or the stash.
                let current_returned = crate::land::back::own_git(&t.entry)
                    .head()
                    .and_then(|(_, tip)| tip)
                    .is_some_and(|tip| repo.git.odb().is_ok_and(|o| o.exists(tip)));
                e = e.hint(if current_returned {
                    format!(
                        "Or bring the work back first: it is not on the box's current branch, which is what `git sandbox fetch` brings; in the box, switch to the branch that holds it (`git stash branch <name>` for a stash), then `git sandbox fetch {}`.",
                        crate::cmd::quote(&name)
                    )
                } else {
                    format!(
                        "Or bring the work back first: `git sandbox fetch {}`.",
                        crate::cmd::quote(&name)
                    )
                });
            }
            return Err(e);
        }
    }
    let r = teardown::remove_as_decided(&repo, &layout, &t, false, a.force)
        .map_err(crate::cli::teardown::from_teardown)?;
    if a.json {
        let doc = RemovedDocument::new(&repo.main_root, &ui.warnings, std::slice::from_ref(&r));
        ui.out_json(&doc.to_value());
    } else {
        ui.info(&format!("removed box `{}`", r.leaf));
    }
    Ok(error::OK)
}

/// A folder box: ask only for a live session; remove its container and bookkeeping,
/// never the folder.
fn down_folder(
    a: &DownArgs,
    layout: &crate::state::Layout,
    record: &crate::state::Record,
    ui: &mut Ui,
) -> Result<i32, CliError> {
    let leaf =
        crate::names::Leaf::parse(&record.name).map_err(crate::provision::ProvisionError::from)?;
    if !a.force && crate::state::session::is_live(&layout.session_path(&leaf)) {
        return Err(CliError::new(
            ErrorKind::NeedsConfirmation,
            format!(
                "box `{}`: a session is live in it (an agent, or a shell)",
                record.name
            ),
        )
        .hint(format!(
            "Remove it anyway with `git sandbox down -f {}`.",
            crate::cmd::quote(&record.name)
        )));
    }
    // Forced or not live: a session that remains (starting, ending) ends with the box.
    let left = crate::session::end(&layout.session_path(&leaf));
    if !left.is_empty() {
        return Err(crate::cli::teardown::from_teardown(
            teardown::TeardownError::Outlived {
                leaf: record.name.clone(),
                pids: left,
            },
        ));
    }
    crate::folder::remove(layout, record)?;
    if a.json {
        // Only bookkeeping went: the folder itself stays.
        let removed = teardown::Removed {
            leaf: record.name.clone(),
            path: record.path.clone(),
            branch: None,
            branch_deleted: false,
            pruned_only: true,
        };
        let removed = [removed];
        let doc = RemovedDocument::new(&record.repo, &ui.warnings, &removed);
        ui.out_json(&doc.to_value());
    } else {
        ui.info(&format!(
            "removed box `{}` (the folder itself stays)",
            record.name
        ));
    }
    Ok(error::OK)
}
