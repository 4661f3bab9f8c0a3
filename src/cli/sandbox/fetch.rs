//! `git sandbox fetch NAME`: import a clone's (a sandboxed worktree's) branch into
//! `refs/hort/<name>/incoming` of the user's repository — a quarantined ref the user
//! inspects and merges as they like.
//!
//! The box's work is bundled aside with `bundle::write` (libgit2; no git runs
//! under the clone's config) and imported from the bundle. Fetching again when nothing
//! changed is a success that says so. Called from `sandbox::run`.

use crate::cli::json::{Document, FetchDocument, V1};
use clap::Args;

use crate::cli::error::{self, CliError, ErrorKind};
use crate::cli::ui::Ui;
use crate::maintain;
use crate::provision::clone;

#[derive(Debug, Args)]
pub struct FetchArgs {
    /// The clone box, or the sandboxed worktree.
    pub name: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: FetchArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let (repo, layout, entry) = super::own_git_box(&a.name)?;
    let incoming = clone::incoming_ref(entry.leaf.as_str());
    let back = fetch_back(&repo, &layout, &entry)?;
    if a.json {
        let doc = FetchDocument {
            schema_version: V1,
            name: entry.leaf.as_str(),
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

/// A clone's (a sandboxed worktree's) branch, brought back into
/// `refs/hort/<name>/incoming`.
pub(crate) struct FetchedBack {
    /// The box's branch, as its own git names it now.
    pub branch: String,
    /// `incoming`'s commit: the only tip of the box the host trusts.
    pub tip: git2::Oid,
    /// Commits brought in now (0: `incoming` was already there).
    pub commits: usize,
}

/// Bring a clone box's (a sandboxed worktree's) current branch into
/// `refs/hort/<name>/incoming` (see the module doc); also for `git treebox land`.
pub(crate) fn fetch_back(
    repo: &crate::git::Repo,
    layout: &crate::state::Layout,
    entry: &crate::boxes::BoxEntry,
) -> Result<FetchedBack, CliError> {
    let incoming = clone::incoming_ref(entry.leaf.as_str());
    // Its own file: a bundle the user made with `bundle` (the default path) stays.
    let tmp = layout.scratch_path(&entry.leaf, &format!("{}.fetch.bundle", entry.leaf));
    let b = match super::bundle::write(repo, layout, entry, Some(tmp)) {
        Ok(b) => b,
        Err(e) if e.kind == ErrorKind::NothingToBundle => {
            // Already fetched: the repository has the tip, and incoming names it.
            if let Some((Some(branch), Some(tip))) = super::own_git(entry).head() {
                if repo.git.refname_to_id(&incoming).ok() == Some(tip) {
                    return Ok(FetchedBack {
                        branch,
                        tip,
                        commits: 0,
                    });
                }
            }
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    let common = super::bundle::user_common_dir(repo, entry);
    let own = super::own_git(entry);
    if let Err(e) = clone::check_incoming_kept(repo, entry.leaf.as_str(), &own, &b) {
        maintain::bundle::discard(&b.path);
        return Err(super::bundle::from_bundle(e, entry.leaf.as_str()));
    }
    let imported = clone::import_bundle(repo, entry.leaf.as_str(), &own, &common, &b);
    maintain::bundle::discard(&b.path);
    imported.map_err(|e| super::bundle::from_bundle(e, entry.leaf.as_str()))?;
    Ok(FetchedBack {
        branch: b.branch,
        tip: b.tip,
        commits: b.commits,
    })
}
