//! `git sandbox bundle NAME [-o FILE]` and `git sandbox fetch NAME`: bringing a clone
//! box's work back without trusting the box.
//!
//! The bundle is written with libgit2 (no git runs under the clone's config); `fetch`
//! imports it into `refs/hort/<name>/incoming` of the user's repository — a
//! quarantined ref the user inspects and merges as they like.

use std::path::PathBuf;

use crate::cli::json::{BundleDocument, Document, FetchDocument, V1};
use clap::Args;

use crate::cli::error::{self, CliError, ErrorKind};
use crate::cli::ui::Ui;
use crate::maintain;
use crate::provision::clone::{self, BundleError};

#[derive(Debug, Args)]
pub struct BundleArgs {
    /// The clone box.
    pub name: String,
    /// Where to write the bundle [default: the box's bookkeeping dir].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct FetchArgs {
    /// The clone box.
    pub name: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

fn from_bundle(e: BundleError) -> CliError {
    let msg = crate::sanitize::line(&e.to_string());
    let out = match e {
        BundleError::Empty => CliError::new(ErrorKind::NothingToBundle, msg)
            .hint("Commit in the box first; the repository already has everything else."),
        BundleError::NoBranch => CliError::new(ErrorKind::NoBranch, msg).hint(
            "Put the work on a branch in the box first (`git switch -c <name>` there), then run this again.",
        ),
        _ => CliError::new(ErrorKind::Bundle, msg),
    };
    out.caused_by(e)
}

fn clone_box(
    name: &str,
) -> Result<
    (
        crate::git::Repo,
        crate::state::Layout,
        crate::boxes::BoxEntry,
    ),
    CliError,
> {
    let (repo, layout, entry) = super::find(name)?;
    if !entry.is_clone() {
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
    if !entry.dir_exists {
        return Err(crate::provision::ProvisionError::BoxMissing {
            leaf: entry.leaf.to_string(),
            path: entry.path.clone(),
        }
        .into());
    }
    Ok((repo, layout, entry))
}

fn write(
    repo: &crate::git::Repo,
    layout: &crate::state::Layout,
    entry: &crate::boxes::BoxEntry,
    output: Option<PathBuf>,
) -> Result<clone::Bundle, CliError> {
    // Absolute, like every other path treebox reports; a directory gets the default
    // file name inside it.
    let file_name = format!("{}.bundle", entry.leaf);
    let output = output.map(|o| std::path::absolute(&o).unwrap_or(o));
    let out = match output {
        Some(o) if o.is_dir() => o.join(&file_name),
        Some(o) => o,
        None => layout.scratch_path(&entry.leaf, &file_name),
    };
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        maintain::bundle::make_dir(dir).map_err(|e| {
            CliError::new(ErrorKind::Io, format!("could not create {}", dir.display())).caused_by(e)
        })?;
    }
    let common = entry
        .record
        .as_ref()
        .map(|r| r.common_dir.clone())
        .unwrap_or_else(|| repo.common_dir.clone());
    clone::write_bundle(&entry.path, &common, &out).map_err(from_bundle)
}

pub fn bundle(a: BundleArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let (repo, layout, entry) = clone_box(&a.name)?;
    if a.output.as_deref() == Some(std::path::Path::new("-")) {
        // To stdout, like `git bundle create -`: written aside first, then copied.
        let tmp = layout.scratch_path(&entry.leaf, "stdout.bundle");
        let b = write(&repo, &layout, &entry, Some(tmp.clone()))?;
        let copied = maintain::bundle::open(&tmp).and_then(|mut f| ui.out_copy(&mut f));
        maintain::bundle::discard(&tmp);
        copied.map_err(|e| {
            CliError::new(ErrorKind::Io, "could not write the bundle to stdout").caused_by(e)
        })?;
        ui.info(&format!(
            "bundled {} commit(s) of `{}`",
            b.commits, b.branch
        ));
        return Ok(error::OK);
    }
    let b = write(&repo, &layout, &entry, a.output)?;
    if a.json {
        let doc = BundleDocument {
            schema_version: V1,
            name: entry.leaf.as_str(),
            path: &b.path,
            branch: &b.branch,
            tip: b.tip.to_string(),
            commits: b.commits,
            prerequisites: b.prerequisites.iter().map(|p| p.to_string()).collect(),
        };
        ui.out_json(&doc.to_value());
    } else {
        ui.info(&format!(
            "bundled {} commit(s) of `{}`",
            b.commits, b.branch
        ));
        ui.out(&b.path.to_string_lossy());
    }
    Ok(error::OK)
}

pub fn fetch(a: FetchArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let (repo, layout, entry) = clone_box(&a.name)?;
    let incoming = clone::incoming_ref(entry.leaf.as_str());
    // Its own file: a bundle the user made with `bundle` (the default path) stays.
    let tmp = layout.scratch_path(&entry.leaf, &format!("{}.fetch.bundle", entry.leaf));
    let b = match write(&repo, &layout, &entry, Some(tmp)) {
        Ok(b) => b,
        Err(e) if e.kind == ErrorKind::NothingToBundle => {
            // Already fetched: the repository has the tip, and incoming names it.
            if let Some((Some(branch), Some(tip))) = clone::clone_head(&entry.path) {
                if repo.git.refname_to_id(&incoming).ok() == Some(tip) {
                    if a.json {
                        let doc = FetchDocument {
                            schema_version: V1,
                            name: entry.leaf.as_str(),
                            reference: &incoming,
                            branch: &branch,
                            tip: tip.to_string(),
                            commits: 0,
                        };
                        ui.out_json(&doc.to_value());
                    } else {
                        ui.info(&format!(
                            "nothing new: {incoming} is already at `{branch}`'s tip"
                        ));
                        ui.out(&incoming);
                    }
                    return Ok(error::OK);
                }
            }
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    clone::import_bundle(&repo, entry.leaf.as_str(), &b)
        .map_err(|e| CliError::new(ErrorKind::Fetch, crate::sanitize::line(&e.to_string())))?;
    maintain::bundle::discard(&b.path);
    if a.json {
        let doc = FetchDocument {
            schema_version: V1,
            name: entry.leaf.as_str(),
            reference: &incoming,
            branch: &b.branch,
            tip: b.tip.to_string(),
            commits: b.commits,
        };
        ui.out_json(&doc.to_value());
    } else {
        ui.info(&format!(
            "fetched {} commit(s) of `{}` into {incoming}; see them with `git log {incoming}`",
            b.commits, b.branch
        ));
        ui.out(&incoming);
    }
    Ok(error::OK)
}
