//! `git treebox diff NAME [--stat] [--json]`: what a box changed since its base.
//!
//! Three-dot, as `git diff origin/<base>...` would show it, plus the box's uncommitted
//! work (staged, unstaged, untracked); for worktree, clone and sandboxed boxes alike.
//! Everything is read by [`crate::land::diff`] as hostile data (nothing the box
//! configured runs); here it is printed: the patch as bytes into a pipe (ready for
//! `git apply`, or the user's own pager: `git treebox diff NAME | delta`), escaped on
//! a terminal, where a box's bytes could otherwise rewrite the screen.

use clap::Args;

use super::error::{self, CliError, ErrorKind};
use super::json::{Document, V1};
use super::ui::Ui;
use crate::land::diff::{self, DiffError};
use crate::land::OpenError;
use serde::Serialize;

#[derive(Debug, Clone, Args)]
pub struct DiffArgs {
    /// The box: its name, its current branch, or a unique part of either.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Only the files changed and how much (`git diff --stat`), not the patch.
    #[arg(long)]
    pub stat: bool,
    /// Print the diff as JSON: commits, files with their counts, and the patch (not
    /// with --stat).
    #[arg(long)]
    pub json: bool,
    /// Print straight to the terminal, without your pager (`GIT_PAGER`, your own
    /// `core.pager`, `PAGER`, else `less`; on a terminal only, fed text with every
    /// control character escaped).
    #[arg(long)]
    pub no_pager: bool,
}

fn from_diff(e: DiffError, name: &str) -> CliError {
    let kind = match &e {
        DiffError::Open(OpenError::NoRecord { .. }) => ErrorKind::NotABox,
        DiffError::Open(OpenError::Unreadable { .. }) => ErrorKind::CheckoutBroken,
        DiffError::Open(OpenError::Foreign { .. }) => ErrorKind::ForeignObjects,
        DiffError::Open(OpenError::Objects { .. }) | DiffError::Git { .. } => ErrorKind::Repo,
        DiffError::NoBase { .. } => ErrorKind::BaseNotFound,
    };
    let hint = match kind {
        ErrorKind::CheckoutBroken | ErrorKind::ForeignObjects => Some(format!(
            "`git treebox list` shows it as broken; remove it with `git treebox teardown --force {}`.",
            crate::cmd::quote(name)
        )),
        ErrorKind::BaseNotFound => Some("Fetch origin (`git fetch origin`), then run it again.".into()),
        _ => None,
    };
    let e = CliError::of(kind, e);
    match hint {
        Some(h) => e.hint(h),
        None => e,
    }
}

/// The box NAME names, and what it changed (the patch too unless `stat`).
fn read(
    dir: &std::path::Path,
    name: &str,
    stat: bool,
) -> Result<(String, diff::BoxDiff), CliError> {
    let _cfg = super::load_config()?;
    let (repo, _, entry) = super::sandbox::find_at(dir, name)?;
    let name = entry.leaf.to_string();
    let d = diff::diff(&entry, &repo, !stat).map_err(|e| from_diff(e, &name))?;
    Ok((name, d))
}

/// `diff --json`'s document of box `name`'s diff.
fn document(name: &str, d: &diff::BoxDiff) -> serde_json::Value {
    let patch = d.patch.as_deref().map(String::from_utf8_lossy);
    DiffDocument {
        schema_version: V1,
        name,
        branch: d.branch.as_deref(),
        tip: d.tip.map(|t| t.to_string()),
        against: &d.against,
        merge_base: d.merge_base.map(|m| m.to_string()),
        too_large: d.too_large.map(|t| DiffTooLarge {
            what: t.what,
            limit: t.limit,
        }),
        commits: d
            .commits
            .iter()
            .map(|c| DiffCommit {
                id: c.id.to_string(),
                subject: &c.subject,
            })
            .collect(),
        commits_cut: d.commits_cut,
        uncommitted: d.uncommitted,
        worktree_read: d.worktree_read,
        files: d
            .files
            .iter()
            .map(|f| DiffFile {
                path: &f.path,
                old_path: f.old_path.as_deref(),
                status: f.status,
                additions: f.additions,
                deletions: f.deletions,
                binary: f.binary,
                flag: f.flaw.map(|f| f.as_str()),
            })
            .collect(),
        patch: patch.as_deref(),
        patch_cut: d.patch_cut,
    }
    .to_value()
}

/// `diff NAME --json` (with `--stat`: `stat`)'s document, in the repository of `dir`:
/// what the MCP server's `box_diff` answers.
pub(crate) fn json(
    dir: &std::path::Path,
    name: &str,
    stat: bool,
) -> Result<serde_json::Value, CliError> {
    let (name, d) = read(dir, name, stat)?;
    Ok(document(&name, &d))
}

pub fn run(args: DiffArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let (name, d) = match read(&super::cwd()?, &args.name, args.stat) {
        Err(e) if e.kind == ErrorKind::BoxNotFound => {
            // Not here: a box on another machine, its branch brought back first.
            let cfg = super::load_config()?;
            let Some(far) = super::on::find_elsewhere(&cfg, &args.name)? else {
                return Err(e);
            };
            let (d, dirty) = super::far::diff(&far, args.stat)?;
            if dirty != Some(false) {
                ui.warning(&format!(
                    "box `{}` on machine `{}` {}: this is its committed work, brought back into {}",
                    far.leaf,
                    far.machine.name,
                    if dirty.is_some() {
                        "has uncommitted work"
                    } else {
                        "may have uncommitted work"
                    },
                    crate::provision::clone::incoming_ref(&far.leaf)
                ));
            }
            (far.leaf.clone(), d)
        }
        other => other?,
    };
    if args.json {
        ui.out_json(&document(&name, &d));
        return Ok(error::OK);
    }
    let n = d.commits.len();
    let shown_branch = d
        .branch
        .as_deref()
        .map(|b| format!(" on `{}`", crate::sanitize::line(b)))
        .unwrap_or_default();
    if let (None, Some(t)) = (d.merge_base, d.too_large) {
        ui.info(&format!(
            "box `{}`{shown_branch}: more than {} {} since {}",
            crate::sanitize::line(&name),
            t.limit,
            t.what,
            d.against
        ));
    } else {
        header(&d, &name, &shown_branch, n, ui);
    }
    if let Some(t) = d.too_large.filter(|t| t.what == "seconds") {
        // The comparison was given up on: said, with the way to look at it.
        let q = crate::cmd::quote(&name);
        ui.warning(&format!(
            "the box's work took too long to compare (over {} {}): nothing is listed; look at it inside the box (`git treebox enter {q}`)",
            t.limit, t.what
        ));
        return Ok(error::OK);
    }
    if let Some(t) = d.too_large {
        // Nothing was compared: said, with the way to look at it.
        let q = crate::cmd::quote(&name);
        ui.warning(&format!(
            "the box's work is too large to compare (over {} {}): nothing is listed, and `git treebox land {q}` refuses it; look at it inside the box (`git treebox enter {q}`)",
            t.limit, t.what
        ));
        return Ok(error::OK);
    }
    warn_flawed(&d, &name, ui);
    if d.patch_cut && !args.stat {
        ui.warning(&format!(
            "the patch is cut at {} MiB; `--stat` lists every file",
            diff::MAX_PATCH >> 20
        ));
    }
    let text: &[u8] = match (&d.patch, args.stat) {
        (Some(p), false) => p,
        _ => d.stat.as_bytes(),
    };
    if text.is_empty() {
        return Ok(error::OK);
    }
    if ui.stdout_is_tty() {
        let plain = crate::sanitize::text(&String::from_utf8_lossy(text));
        let plain = plain.trim_end_matches('\n');
        let paged = crate::land::pager::user_pager()
            .filter(|_| !args.no_pager)
            .is_some_and(|p| crate::land::pager::page(&p, plain).is_ok());
        if !paged {
            ui.out(plain);
        }
    } else if ui.out_copy(&mut &text[..]).is_err() {
        // A closed pipe (the pager quit): quiet.
        return Ok(error::OK);
    }
    Ok(error::OK)
}

/// Each path `land` would refuse (SPEC §8.11), said before the patch.
fn warn_flawed(d: &diff::BoxDiff, name: &str, ui: &mut Ui) {
    use crate::land::scan::PathFlaw;
    for f in &d.files {
        let shown = crate::sanitize::line(&f.path);
        match f.flaw {
            Some(PathFlaw::BoxesRoot) => ui.warning(&format!(
                "`{shown}` is under `.treebox/`, the boxes' own directory: `git treebox land {}` refuses it",
                crate::cmd::quote(name)
            )),
            Some(PathFlaw::Controls) => ui.warning(&format!(
                "`{shown}` holds terminal control characters: `git treebox land {}` refuses it",
                crate::cmd::quote(name)
            )),
            None => {}
        }
    }
}

/// The first line: the box, its commits since what, and its checkout.
fn header(d: &diff::BoxDiff, name: &str, shown_branch: &str, n: usize, ui: &mut Ui) {
    ui.info(&format!(
        "box `{}`{}: {n}{} commit{} since {} ({}){}",
        crate::sanitize::line(name),
        shown_branch,
        if d.commits_cut { "+" } else { "" },
        if n == 1 { "" } else { "s" },
        d.against,
        d.merge_base
            .map(|m| m.to_string()[..12].to_string())
            .unwrap_or_else(|| "merge-base not read".into()),
        match (d.worktree_read, d.uncommitted) {
            (false, _) => ", its checkout not read",
            (true, true) => ", and uncommitted work",
            (true, false) => "",
        }
    ));
}

/// `docs/schema/diff.schema.json`: `diff --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffDocument<'a> {
    pub schema_version: V1,
    pub name: &'a str,
    pub branch: Option<&'a str>,
    /// The box's tip; `None` on an unborn branch.
    pub tip: Option<String>,
    /// What the diff is against: `origin/<base>`, `<base>`, or the start commit.
    pub against: &'a str,
    /// `None` only when the history is too large to walk.
    pub merge_base: Option<String>,
    /// The bound the box's work is past (then nothing is listed); `None` within them.
    pub too_large: Option<DiffTooLarge>,
    /// Newest first.
    pub commits: Vec<DiffCommit<'a>>,
    /// More commits than listed.
    pub commits_cut: bool,
    pub uncommitted: bool,
    /// The checkout was read (else the diff is of commits only).
    pub worktree_read: bool,
    pub files: Vec<DiffFile<'a>>,
    /// The patch (UTF-8, invalid bytes replaced); absent with `--stat`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<&'a str>,
    /// The patch stops at its size cap: more followed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub patch_cut: bool,
}

impl Document for DiffDocument<'_> {}

/// What a [`DiffDocument`]'s box is too large in: `commits` or `tree entries`, and
/// the bound.
#[derive(Debug, Serialize)]
pub struct DiffTooLarge {
    pub what: &'static str,
    pub limit: u64,
}

/// One commit of a [`DiffDocument`].
#[derive(Debug, Serialize)]
pub struct DiffCommit<'a> {
    pub id: String,
    pub subject: &'a str,
}

/// One changed file of a [`DiffDocument`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffFile<'a> {
    pub path: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<&'a str>,
    pub status: &'a str,
    pub additions: usize,
    pub deletions: usize,
    pub binary: bool,
    /// `boxes-root` or `controls`: a path `land` refuses to write.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flag: Option<&'a str>,
}
