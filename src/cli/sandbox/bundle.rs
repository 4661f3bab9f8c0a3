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
use crate::land::back;
use crate::maintain;
use crate::provision::clone;

#[derive(Debug, Args)]
pub struct BundleArgs {
    /// The clone box, the sandboxed worktree, or a box on another machine of your
    /// config (any mode: its branch comes back as a bundle, checked here).
    pub name: String,
    /// Where to write the bundle [default: the box's bookkeeping dir].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: BundleArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let (repo, layout, entry) = match super::own_git_box(&a.name) {
        Ok(found) => found,
        // Not here: a box on another machine, its bundle brought from there.
        Err(e) if e.kind == ErrorKind::BoxNotFound => {
            let cfg = crate::cli::load_config()?;
            return match crate::cli::on::find_elsewhere(&cfg, &a.name)? {
                Some(far) => far_bundle(&far, a, ui),
                None => Err(e),
            };
        }
        Err(e) => return Err(e),
    };
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
    let b = write(&repo, &layout, &entry, a.output.clone())?;
    say(&a, entry.leaf.as_str(), &b, ui);
    Ok(error::OK)
}

/// `bundle` of a box on another machine: checked here, kept at `-o` (`-`: stdout).
fn far_bundle(far: &crate::cli::on::Far, a: BundleArgs, ui: &mut Ui) -> Result<i32, CliError> {
    if a.output.as_deref() == Some(std::path::Path::new("-")) {
        let b = crate::cli::far::bundle(far, None)?;
        let copied = maintain::bundle::open(&b.path).and_then(|mut f| ui.out_copy(&mut f));
        maintain::bundle::discard(&b.path);
        copied.map_err(|e| {
            CliError::new(ErrorKind::Io, "could not write the bundle to stdout").caused_by(e)
        })?;
        return Ok(error::OK);
    }
    let b = crate::cli::far::bundle(far, a.output.as_deref())?;
    say(&a, &far.leaf, &b, ui);
    Ok(error::OK)
}

/// What `bundle` says of the bundle it wrote.
fn say(a: &BundleArgs, leaf: &str, b: &clone::Bundle, ui: &mut Ui) {
    if a.json {
        let doc = BundleDocument {
            schema_version: V1,
            name: leaf,
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
}

/// Write the box's bundle ([`back::write_bundle`]), its failure as the user sees it.
pub(super) fn write(
    repo: &crate::git::Repo,
    layout: &crate::state::Layout,
    entry: &crate::boxes::BoxEntry,
    output: Option<PathBuf>,
) -> Result<clone::Bundle, CliError> {
    back::write_bundle(repo, layout, entry, output)
        .map_err(|e| crate::cli::land_report::from_back(e, entry.leaf.as_str()))
}
