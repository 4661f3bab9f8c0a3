//! `git sandbox fetch NAME`: import a clone's (a sandboxed worktree's) branch into
//! `refs/hort/<name>/incoming` of the user's repository — a quarantined ref the user
//! inspects and merges as they like.
//!
//! The engine is [`crate::land::back::fetch_back`]: the box's work bundled aside
//! (libgit2; no git runs under the clone's config) and imported from the bundle.
//! Fetching again when nothing changed is a success that says so. Called from
//! `sandbox::run`.

use crate::cli::json::{Document, FetchDocument, V1};
use clap::Args;

use crate::cli::error::{self, CliError};
use crate::cli::ui::Ui;
use crate::provision::clone;

#[derive(Debug, Args)]
pub struct FetchArgs {
    /// The clone box, the sandboxed worktree, or a box on another machine of your
    /// config (any mode: its branch comes back as a bundle, checked here).
    pub name: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: FetchArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let (leaf, back) = match super::own_git_box(&a.name) {
        Ok((repo, layout, entry)) => {
            let back = crate::land::back::fetch_back(&repo, &layout, &entry)
                .map_err(|e| crate::cli::land_report::from_back(e, entry.leaf.as_str()))?;
            (entry.leaf.to_string(), back)
        }
        // Not here: a box on another machine, its branch brought back from there.
        Err(e) if e.kind == crate::cli::error::ErrorKind::BoxNotFound => {
            let cfg = crate::cli::load_config()?;
            match crate::cli::on::find_elsewhere(&cfg, &a.name)? {
                Some(far) => (far.leaf.clone(), crate::cli::far::fetch(&far)?),
                None => return Err(e),
            }
        }
        Err(e) => return Err(e),
    };
    let incoming = clone::incoming_ref(&leaf);
    if a.json {
        let doc = FetchDocument {
            schema_version: V1,
            name: &leaf,
            reference: &incoming,
            branch: &back.branch,
            tip: back.tip.to_string(),
            commits: back.commits,
        };
        ui.out_json(&doc.to_value());
    } else if back.commits == 0 {
        ui.info(&format!(
            "nothing new: {incoming} is already at `{}`'s tip",
            back.branch
        ));
        ui.out(&incoming);
    } else {
        ui.info(&format!(
            "fetched {} commit(s) of `{}` into {incoming}; see them with `git log {incoming}`",
            back.commits, back.branch
        ));
        ui.out(&incoming);
    }
    Ok(error::OK)
}
