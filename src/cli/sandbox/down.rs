//! `git sandbox down NAME [-f]`: naming the box is the decision.
//!
//! A front end: what stands against removing the box is the engine's
//! ([`teardown::objections`]), the refusal's words [`crate::cli::teardown`]'s — both
//! shared with the MCP server's `box_remove`, which is this command without `-f` and
//! without a terminal.
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
    let cfg = crate::cli::load_config()?;
    let found = match super::find_any(&a.name) {
        // Not here: on another machine of the config, taken down there.
        Err(e) if e.kind == crate::cli::error::ErrorKind::BoxNotFound => {
            return match crate::cli::on::find_elsewhere(&cfg, &a.name)? {
                Some(far) => {
                    let doc = crate::cli::on::remove_there(&far, a.force)?;
                    crate::cli::on::say_removed(&far, &doc, a.json, ui);
                    Ok(error::OK)
                }
                None => Err(e),
            };
        }
        other => other?,
    };
    let (repo, layout, entry) = match found {
        super::Found::Repo(repo, layout, entry) => (repo, layout, *entry),
        super::Found::Folder(layout, record) => return down_folder(&a, &layout, &record, ui),
    };
    // Naming the box is the decision (SPEC §2): a part of a name is not naming it.
    if !entry.is_named(&a.name) {
        let leaf = entry.leaf.to_string();
        if !ui.can_ask() {
            return Err(crate::cli::teardown::not_named_whole(&a.name, &leaf));
        }
        let question = crate::cli::teardown::part_of_name(&a.name, &leaf);
        if !ui.confirm(&format!("{question}; tear that box down?")) {
            ui.info("nothing removed");
            return Ok(error::OK);
        }
    }
    let t = teardown::target_for(entry, &repo, &layout, a.force);
    let objections = teardown::objections::objections(&t);
    if !a.force && !objections.is_empty() {
        if !ui.can_ask() {
            return Err(crate::cli::teardown::down_refusal(&t, &objections, &repo));
        }
        let question = teardown::objections::describe(&t.entry.leaf.to_string(), &objections);
        let ask = format!("{}; tear it down anyway?", crate::sanitize::line(&question));
        if !ui.confirm(&ask) {
            ui.info("nothing removed");
            return Ok(error::OK);
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

/// `git sandbox down NAME` with no terminal to ask on, in the repository of `dir`: the
/// box named whole, refused (5) while anything stands against its removal unless
/// `force`; `down --json`'s document. What the MCP server's `box_remove` (never
/// forced) and another machine's `remove` request do.
pub(crate) fn down_unasked(
    dir: &std::path::Path,
    name: &str,
    force: bool,
    returned: Option<&[git2::Oid]>,
) -> Result<serde_json::Value, CliError> {
    use crate::cli::json::{Document, RemovedDocument};
    let _cfg = crate::cli::load_config()?;
    let (repo, layout, entry) = super::find_at(dir, name)?;
    if !entry.is_named(name) {
        return Err(crate::cli::teardown::not_named_whole(
            name,
            &entry.leaf.to_string(),
        ));
    }
    let mut t = teardown::target_for(entry, &repo, &layout, force);
    // A box of a laptop's repository made here, asked by that laptop: its work is
    // returned once the laptop has it (these commits, fetched back there).
    if let Some(returned) = returned {
        teardown::returned_elsewhere(&mut t, &repo, returned);
    }
    let objections = teardown::objections::objections(&t);
    if !force && !objections.is_empty() {
        return Err(crate::cli::teardown::down_refusal(&t, &objections, &repo));
    }
    let r = teardown::remove_as_decided(&repo, &layout, &t, false, force)
        .map_err(crate::cli::teardown::from_teardown)?;
    let doc = RemovedDocument::new(&repo.main_root, &[], std::slice::from_ref(&r));
    Ok(doc.to_value())
}
