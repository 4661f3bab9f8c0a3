//! `git sandbox bundle NAME [-o FILE]`: write a git bundle of a clone's (a sandboxed worktree's) branch,
//! bringing its work back without trusting the box.
//!
//! The bundle is written by [`crate::land::back`] (libgit2; no git runs under the
//! clone's config). Called from
//! `sandbox::run`; the box is found by `sandbox::own_git_box`.

use std::path::PathBuf;

use crate::cli::json::{BundleDocument, Document, V1};
use clap::Args;

use crate::cli::error::{self, CliError, ErrorKind};
use crate::cli::ui::Ui;
use crate::land::back::{self, BackError};
use crate::maintain;
use crate::provision::clone::{self, BundleError};

#[derive(Debug, Args)]
pub struct BundleArgs {
    /// The clone box, or the sandboxed worktree.
    pub name: String,
    /// Where to write the bundle [default: the box's bookkeeping dir].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: BundleArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let (repo, layout, entry) = super::own_git_box(&a.name)?;
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

/// Write the box's bundle ([`back::write_bundle`]), its failure as the user sees it.
pub(super) fn write(
    repo: &crate::git::Repo,
    layout: &crate::state::Layout,
    entry: &crate::boxes::BoxEntry,
    output: Option<PathBuf>,
) -> Result<clone::Bundle, CliError> {
    back::write_bundle(repo, layout, entry, output).map_err(|e| from_back(e, entry.leaf.as_str()))
}

/// A bringing-back failure as the user sees it.
pub(crate) fn from_back(e: BackError, leaf: &str) -> CliError {
    match e {
        BackError::Bundle(e) => from_bundle(e, leaf),
        e @ BackError::Dir { .. } => CliError::of(ErrorKind::Io, e),
    }
}

fn from_bundle(e: BundleError, leaf: &str) -> CliError {
    let msg = crate::sanitize::line(&e.to_string());
    let out = match e {
        BundleError::ForeignObjects(_) => CliError::new(ErrorKind::ForeignObjects, msg).hint(format!(
            "Nothing was read or imported. Look at what the box wrote there; to remove the box: `git sandbox down -f {}`.",
            crate::cmd::quote(leaf)
        )),
        BundleError::Import(_) => CliError::new(ErrorKind::Fetch, msg),
        // As `enter` and `run` refuse a broken box: 5, nothing read.
        BundleError::Broken { .. } => CliError::new(ErrorKind::BlockingRegistration, msg).hint(format!(
            "Nothing was read. Copy out what you need, then remove it: `git sandbox down -f {}`.",
            crate::cmd::quote(leaf)
        )),
        BundleError::WouldDrop { ref incoming, .. } => CliError::new(ErrorKind::IncomingUnkept, msg.clone()).hint(format!(
            "Keep it first — merge it, or `git branch <name> {incoming}` — then fetch again.",
        )),
        BundleError::TooLarge(_) | BundleError::TooManyCommits(_) => CliError::new(ErrorKind::TooLarge, msg).hint(format!(
            "Nothing was fetched. Drop it from the box's branch (in the box: `git log --stat`, then rewrite the commit that added it) and try again, or remove the box: `git sandbox down -f {}`.",
            crate::cmd::quote(leaf)
        )),
        BundleError::Empty => CliError::new(ErrorKind::NothingToBundle, msg)
            .hint("This takes the box's current branch: commit there first, or, for work on another branch, switch to it in the box."),
        BundleError::NoBranch => CliError::new(ErrorKind::NoBranch, msg).hint(
            "Put the work on a branch in the box first (`git switch -c <name>` there), then run this again.",
        ),
        _ => CliError::new(ErrorKind::Bundle, msg),
    };
    out.caused_by(e)
}
