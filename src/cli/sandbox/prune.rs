//! `git sandbox prune [--idle DUR] [-f]`: remove what crashes and hand edits left
//! behind in this repository — records without a box directory, box directories
//! without a record, pins (`refs/hort/<name>/base`) of boxes that no longer exist, and
//! stray lock files — and, from anywhere, the records (and containers) of
//! repositories that no longer exist on this machine. With `--idle DUR`, also whole
//! boxes nobody has used for DUR that hold nothing to lose: no live session, a clean
//! checkout, no commits that are not pushed (worktree) or returned (clone). Idle boxes
//! (and unrecorded directories) holding something are listed as kept, with the
//! reason. It lists first; it asks on a terminal and refuses without one unless `-f`.

use std::time::{Duration, SystemTime};

use clap::Args;
use serde_json::json;

use crate::boxes;
use crate::cli::error::{self, CliError, ErrorKind};
use crate::cli::ui::Ui;
use crate::names::Leaf;
use crate::teardown;

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Also remove boxes idle this long that hold nothing to lose: e.g. 90m, 2h, 7d.
    #[arg(long, value_name = "DUR", value_parser = super::park::parse_duration)]
    pub idle: Option<Duration>,
    /// Remove without asking.
    #[arg(short, long)]
    pub force: bool,
    /// Print what was removed as JSON.
    #[arg(long)]
    pub json: bool,
}

enum Orphan {
    /// A record (and maybe a registration) whose directory is gone.
    NoDirectory(Box<boxes::BoxEntry>),
    /// A directory under the box root that no record describes (assessed: it holds
    /// nothing to lose).
    NoRecord(Box<teardown::Target>),
    /// A pin `refs/hort/<name>/base` of a box that does not exist.
    Pin(String),
    /// A lock file of a box with no record.
    Lock(std::path::PathBuf, Leaf),
    /// A whole box idle for at least `--idle`, with nothing to lose.
    Idle(Box<teardown::Target>, Duration),
    /// The bookkeeping of a repository (or folder) that no longer exists, anywhere on
    /// this machine: its records, and the containers they name.
    GoneRepo {
        state_dir: std::path::PathBuf,
        repo: std::path::PathBuf,
        records: Vec<crate::state::Record>,
    },
}

impl Orphan {
    fn describe(&self) -> String {
        match self {
            Orphan::NoDirectory(e) => format!("record of `{}` (its directory is gone)", e.leaf),
            Orphan::NoRecord(t) => format!("directory {} (no record)", t.entry.path.display()),
            Orphan::Pin(r) => format!("ref {r} (no such box)"),
            Orphan::Lock(p, _) => format!("lock file {}", p.display()),
            Orphan::Idle(t, idle) => format!(
                "box `{}` (idle {}; {})",
                t.entry.leaf,
                human(*idle),
                teardown::describe(t)
            ),
            Orphan::GoneRepo { repo, records, .. } => format!(
                "records of {} box(es) of {} (it no longer exists)",
                records.len(),
                repo.display()
            ),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Orphan::NoDirectory(_) => "record",
            Orphan::NoRecord(_) => "directory",
            Orphan::Pin(_) => "ref",
            Orphan::Lock(..) => "lock",
            Orphan::Idle(..) => "idle",
            Orphan::GoneRepo { .. } => "repo-gone",
        }
    }
}

/// `3d`, `5h`, `42m`, `7s`: the largest whole unit.
fn human(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        86_400.. => format!("{}d", s / 86_400),
        3_600.. => format!("{}h", s / 3_600),
        60.. => format!("{}m", s / 60),
        _ => format!("{s}s"),
    }
}

/// When the box was last used (see [`super::park::last_used`]).
fn last_activity(layout: &crate::state::Layout, e: &boxes::BoxEntry) -> SystemTime {
    super::park::last_used(layout, &e.leaf, e.admin_dir.as_deref(), &e.path)
}

/// Why removing an idle box would lose something, if it would.
fn at_stake(t: &teardown::Target) -> Option<String> {
    let a = &t.assessment;
    // Commits no remote has are at stake, unless the base already holds them; a
    // clone's are at stake only while the repository lacks them.
    let unpushed = !t.entry.is_clone()
        && a.unpushed.is_some_and(|n| n > 0)
        && !a.empty
        && a.merged != Some(true);
    let at_stake = t.live || a.dirty != Some(false) || a.unreturned == Some(true) || unpushed;
    at_stake.then(|| teardown::describe(t))
}

/// Bookkeeping whose repository (or folder) is gone, machine-wide: every record of a
/// state dir names a repository path that no longer exists.
fn gone_repos() -> Vec<Orphan> {
    let Ok(root) = crate::state::layout::state_root() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(root.join("repos"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for state_dir in dirs {
        let records: Vec<crate::state::Record> = std::fs::read_dir(state_dir.join("boxes"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|b| {
                crate::state::Record::load(&b.path().join("record.json"))
                    .ok()
                    .flatten()
            })
            .collect();
        let Some(first) = records.first() else {
            continue;
        };
        let gone = records
            .iter()
            .all(|r| !r.repo.exists() && !r.common_dir.exists() && !r.path.exists());
        if gone {
            out.push(Orphan::GoneRepo {
                repo: first.repo.clone(),
                state_dir,
                records,
            });
        }
    }
    out
}

pub fn run(a: PruneArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let _cfg = crate::cli::load_config()?;
    let mut orphans = Vec::new();
    let mut kept = Vec::new();
    let outside = matches!(
        crate::git::Repo::discover(&crate::cli::cwd()?),
        Err(crate::git::repo::RepoError::NotARepo { .. })
    );
    let ctx = match outside {
        true => None,
        false => Some(super::here()?),
    };
    if let Some((repo, layout)) = &ctx {
        here_orphans(&a, repo, layout, &mut orphans, &mut kept);
    }
    orphans.extend(gone_repos());
    for k in &kept {
        ui.info(&format!("  kept {k}"));
    }
    remove_orphans(&a, ctx.as_ref(), orphans, ui)
}

/// This repository's leftovers (and, with `--idle`, its idle boxes).
fn here_orphans(
    a: &PruneArgs,
    repo: &crate::git::Repo,
    layout: &crate::state::Layout,
    orphans: &mut Vec<Orphan>,
    kept: &mut Vec<String>,
) {
    let all = boxes::inventory(repo, layout);
    for e in &all {
        if !e.dir_exists {
            orphans.push(Orphan::NoDirectory(Box::new(e.clone())));
        } else if e.record.is_none() && e.record_error.is_none() {
            // A directory nobody recorded may still hold someone's work.
            let t = teardown::target(e.clone(), repo, layout);
            match at_stake(&t) {
                Some(why) => {
                    kept.push(format!("directory {} (no record): {why}", e.path.display()))
                }
                None => orphans.push(Orphan::NoRecord(Box::new(t))),
            }
        }
    }
    if let Some(limit) = a.idle {
        let now = SystemTime::now();
        for e in all.iter().filter(|e| e.dir_exists && e.record.is_some()) {
            let idle = now
                .duration_since(last_activity(layout, e))
                .unwrap_or_default();
            if idle < limit {
                continue;
            }
            let t = teardown::target(e.clone(), repo, layout);
            match at_stake(&t) {
                Some(why) => kept.push(format!("box `{}` (idle {}): {why}", e.leaf, human(idle))),
                None => orphans.push(Orphan::Idle(Box::new(t), idle)),
            }
        }
    }
    let known: std::collections::HashSet<String> = all.iter().map(|e| e.leaf.to_string()).collect();
    // Only pins: an incoming ref is work the user fetched back, never a leftover.
    if let Ok(refs) = repo.git.references_glob("refs/hort/*/base") {
        for r in refs.flatten() {
            let Ok(name) = r.name() else { continue };
            let leaf = name
                .strip_prefix("refs/hort/")
                .and_then(|rest| rest.strip_suffix("/base"))
                .unwrap_or("");
            if !known.contains(leaf) {
                orphans.push(Orphan::Pin(name.to_string()));
            }
        }
    }
    if let Ok(rd) = std::fs::read_dir(layout.repo_state.join("locks")) {
        for f in rd.flatten() {
            let n = f.file_name().to_string_lossy().into_owned();
            let Some(leaf) = n.strip_suffix(".lock").and_then(|l| Leaf::parse(l).ok()) else {
                continue;
            };
            if !all.iter().any(|e| e.leaf == leaf) {
                orphans.push(Orphan::Lock(f.path(), leaf));
            }
        }
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
            ui.out_json(&json!({"schemaVersion": 1, "removed": []}));
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
            .hint("Pass -f to remove them: `git sandbox prune -f`."));
        }
        if !ui.confirm(&format!("Remove these {} leftover(s)?", orphans.len())) {
            ui.info("nothing removed");
            return Ok(error::OK);
        }
    }
    let mut removed = Vec::new();
    for o in &orphans {
        if let Orphan::GoneRepo {
            state_dir, records, ..
        } = o
        {
            // The containers first: with the engine down, keep the records to retry.
            let mut all_gone = true;
            for c in records.iter().filter_map(|r| r.container.as_ref()) {
                if let Err(e) = crate::container::remove(c) {
                    ui.warning(&format!("kept {}: {e}", state_dir.display()));
                    all_gone = false;
                }
            }
            if !all_gone {
                continue;
            }
            std::fs::remove_dir_all(state_dir).map_err(|e| {
                CliError::new(
                    ErrorKind::Prune,
                    format!("could not remove {}: {e}", state_dir.display()),
                )
            })?;
            removed.push(json!({"kind": o.kind(), "what": o.describe()}));
            continue;
        }
        let Some((repo, layout)) = ctx else {
            continue;
        };
        match o {
            Orphan::GoneRepo { .. } => {}
            Orphan::NoDirectory(e) => {
                let t = teardown::target((**e).clone(), repo, layout);
                match teardown::remove(repo, layout, &t, false) {
                    Ok(_) => {}
                    Err(teardown::TeardownError::Lock(_)) => {
                        ui.warning(&format!("kept the record of `{}`: it is in use", e.leaf));
                        continue;
                    }
                    Err(e) => return Err(crate::cli::teardown::from_teardown(e)),
                }
            }
            Orphan::NoRecord(t) | Orphan::Idle(t, _) => {
                // Decided again under the box's lock: work that appeared since (or an
                // agent started since) stays.
                let what = match &t.entry.record {
                    Some(_) => format!("box `{}`", t.entry.leaf),
                    None => t.entry.path.display().to_string(),
                };
                match teardown::remove_if_unchanged(repo, layout, t, false) {
                    Ok(_) => {}
                    Err(teardown::TeardownError::Lock(_)) => {
                        ui.warning(&format!("kept {what}: it is in use"));
                        continue;
                    }
                    Err(teardown::TeardownError::Changed { now, .. }) => {
                        ui.warning(&format!("kept {what}: since asked, {now}"));
                        continue;
                    }
                    Err(e) => return Err(crate::cli::teardown::from_teardown(e)),
                }
            }
            Orphan::Pin(name) => {
                if let Ok(mut r) = repo.git.find_reference(name) {
                    r.delete().map_err(|e| {
                        CliError::new(ErrorKind::Prune, format!("could not delete {name}: {e}"))
                    })?;
                }
            }
            Orphan::Lock(path, leaf) => {
                // A lock someone holds is not stray: leave it, and do not say it went.
                match crate::state::BoxLock::try_acquire(path, leaf.as_str()) {
                    Ok(l) => l.release_and_remove(),
                    Err(_) => continue,
                }
            }
        }
        removed.push(json!({"kind": o.kind(), "what": o.describe()}));
    }
    if a.json {
        ui.out_json(&json!({"schemaVersion": 1, "removed": removed}));
    } else {
        ui.info(&format!("removed {} leftover(s)", removed.len()));
    }
    Ok(error::OK)
}
