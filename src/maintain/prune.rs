//! Pruning: find what crashes and hand edits left behind, and remove it.
//!
//! In a repository: records without a box directory, box directories without a record,
//! pins (`refs/hort/<name>/base`) of boxes that no longer exist, stray lock files, and
//! (with an idle limit) whole boxes nobody has used whose work has landed in their
//! base (or who have none; with `--pushed`, also those whose work is on origin or
//! fetched back) and that hold nothing else to lose. From
//! anywhere: the bookkeeping (and containers) of repositories that no longer exist, and
//! their container boxes' checkouts (which sit outside the repository, under the
//! checkouts root) once each is assessed to hold nothing: no uncommitted change, no
//! commit beyond the one it was cut from.
//! [`scan`] only looks; [`remove`] acts on one finding and decides again under the
//! box's lock, so work that appeared since is kept. Called by `git sandbox prune`.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use crate::boxes;
use crate::git::Repo;
use crate::names::Leaf;
use crate::state::layout;
use crate::state::Layout;
use crate::teardown::{self, TeardownError};

/// Something prune would remove.
pub enum Orphan {
    /// A record (and maybe a registration) whose directory is gone.
    NoDirectory(Box<boxes::BoxEntry>),
    /// A directory under the box root that no record describes (assessed: it holds
    /// nothing to lose).
    NoRecord(Box<teardown::Target>),
    /// A pin `refs/hort/<name>/base` of a box that does not exist.
    Pin(String),
    /// A lock file of a box with no record.
    Lock(PathBuf, Leaf),
    /// A whole box idle for at least `--idle`, with nothing to lose.
    Idle(Box<teardown::Target>, Duration),
    /// The bookkeeping of a repository (or folder) that no longer exists, anywhere on
    /// this machine: its records, and the containers they name.
    GoneRepo {
        state_dir: PathBuf,
        repo: PathBuf,
        records: Vec<crate::state::Record>,
    },
}

impl Orphan {
    /// One line saying what it is, for the list shown before asking.
    pub fn describe(&self) -> String {
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

    /// Its kind in `git sandbox prune --json`.
    pub fn kind(&self) -> &'static str {
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
fn last_activity(layout: &Layout, e: &boxes::BoxEntry) -> SystemTime {
    super::park::last_used(layout, &e.leaf, e.admin_dir.as_deref(), &e.path)
}

/// Why removing an idle box would lose something, if it would. An idle box goes when
/// its work has landed in its base, or it has none; with `pushed`, also when its work
/// is somewhere else already (on origin, or fetched back into the repository) without
/// having landed.
fn at_stake(t: &teardown::Target, pushed: bool) -> Option<String> {
    let a = &t.assessment;
    if t.live || a.dirty != Some(false) {
        return Some(teardown::describe(t));
    }
    // No commits beyond its start (nor elsewhere in the box), or landed.
    let no_work = matches!(t.landed, Some(crate::git::landed::Verdict::NoWork))
        && a.unreturned != Some(true)
        && !a.orphaned;
    if t.landed_clean() || a.empty || no_work {
        return None;
    }
    let elsewhere = match t.entry.owns_git() {
        // A clone's (a sandboxed worktree's) commits: while the repository lacks them,
        // the box is their only copy.
        true => a.unreturned == Some(false),
        // A worktree's: on a remote-tracking ref of the repository.
        false => a.unpushed == Some(0) && !a.orphaned,
    };
    match (elsewhere, pushed) {
        (true, true) => None,
        (true, false) => Some(format!(
            "{}; its work is elsewhere but not landed (`--pushed` would remove it)",
            teardown::describe(t)
        )),
        (false, _) => Some(teardown::describe(t)),
    }
}

/// Why the checkout of `r` (a box of a repository that is gone) must stay, if it must:
/// it exists, under the checkouts root (a box's checkout inside the repository went
/// with it), and holds uncommitted changes or commits of its own — or cannot be read
/// well enough to tell. `None`: nothing there, or nothing to lose.
fn checkout_at_stake(r: &crate::state::Record) -> Option<String> {
    if std::fs::symlink_metadata(&r.path).is_err() || layout::moved_box_of(&r.path).is_none() {
        return None;
    }
    let shown = r.path.display();
    let Ok(leaf) = Leaf::parse(&r.name) else {
        return Some(format!("{shown}: its record names no box"));
    };
    let entry = boxes::BoxEntry {
        leaf,
        path: r.path.clone(),
        record: Some(r.clone()),
        record_error: None,
        admin_dir: None,
        branch: None,
        dir_exists: true,
        own_tip_time: None,
        own_tip: None,
        seen: None,
    };
    let Some(own) = boxes::OwnGit::of(r) else {
        return Some(format!("{shown}: not a checkout treebox can assess"));
    };
    match boxes::dirt(&entry, None).dirty {
        Some(false) => {}
        Some(true) => return Some(format!("{shown} has uncommitted changes")),
        None => return Some(format!("{shown} could not be assessed")),
    }
    let tip = own.head().and_then(|(_, tip)| tip);
    let base = r
        .base_commit
        .as_deref()
        .and_then(|c| git2::Oid::from_str(c).ok());
    match tip.is_some() && tip == base {
        true => None,
        false => Some(format!("{shown} holds commits of its own")),
    }
}

/// Bookkeeping whose repository (or folder) is gone, machine-wide: every record of a
/// state dir names a repository path that no longer exists (a container box's
/// checkout under the checkouts root outlives it, and is assessed by [`remove`]).
fn gone_repos() -> Vec<Orphan> {
    let Ok(dirs) = layout::repo_state_dirs() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for state_dir in dirs {
        let records = layout::records_in(&state_dir);
        let Some(first) = records.first() else {
            continue;
        };
        let gone = records.iter().all(|r| {
            !r.repo.exists()
                && !r.common_dir.exists()
                && (!r.path.exists() || layout::moved_box_of(&r.path).is_some())
        });
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

/// What a scan found: what to remove, and what it keeps (with the reason).
#[derive(Default)]
pub struct Scan {
    pub orphans: Vec<Orphan>,
    pub kept: Vec<String>,
}

/// Find the leftovers of the repository `here` (if any) and, machine-wide, those of
/// repositories that are gone. With `idle`, idle boxes holding nothing are leftovers.
pub fn scan(idle: Option<Duration>, pushed: bool, here: Option<(&Repo, &Layout)>) -> Scan {
    let mut s = Scan::default();
    if let Some((repo, layout)) = here {
        here_orphans(idle, pushed, repo, layout, &mut s.orphans, &mut s.kept);
    }
    s.orphans.extend(gone_repos());
    s
}

/// This repository's leftovers (and, with `--idle`, its idle boxes).
fn here_orphans(
    idle: Option<Duration>,
    pushed: bool,
    repo: &Repo,
    layout: &Layout,
    orphans: &mut Vec<Orphan>,
    kept: &mut Vec<String>,
) {
    let all = boxes::inventory(repo, layout);
    for e in &all {
        if !e.dir_exists {
            // A sandboxed worktree's commits outlive its checkout, in its bare clone:
            // while the repository lacks them, that record is their only way back.
            if e.git_left() {
                let t = teardown::target(e.clone(), repo, layout);
                if t.assessment.unreturned != Some(false) {
                    kept.push(format!(
                        "record of `{}` (its directory is gone): its bare clone holds commits the repository lacks; `git sandbox fetch {}` brings them back",
                        e.leaf,
                        crate::cmd::quote(e.leaf.as_str())
                    ));
                    continue;
                }
            }
            orphans.push(Orphan::NoDirectory(Box::new(e.clone())));
        } else if e.record.is_none() && e.record_error.is_none() {
            // A directory nobody recorded may still hold someone's work.
            // No record, so no base to have landed in: what is elsewhere may go.
            let t = teardown::target(e.clone(), repo, layout);
            match at_stake(&t, true) {
                Some(why) => {
                    kept.push(format!("directory {} (no record): {why}", e.path.display()))
                }
                None => orphans.push(Orphan::NoRecord(Box::new(t))),
            }
        }
    }
    if let Some(limit) = idle {
        let now = SystemTime::now();
        for e in all.iter().filter(|e| e.dir_exists && e.record.is_some()) {
            let idle = now
                .duration_since(last_activity(layout, e))
                .unwrap_or_default();
            if idle < limit {
                continue;
            }
            let t = teardown::target(e.clone(), repo, layout);
            match at_stake(&t, pushed) {
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
    for (path, leaf) in layout.lock_files() {
        if !all.iter().any(|e| e.leaf == leaf) {
            orphans.push(Orphan::Lock(path, leaf));
        }
    }
}

/// What became of one finding.
#[derive(Debug)]
pub enum Outcome {
    Removed,
    /// Left in place, for these reasons (to show as warnings).
    Kept(Vec<String>),
    /// Left in place without a word: a lock someone holds is not stray, and a finding
    /// of a repository needs that repository.
    Skipped,
}

#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    #[error(transparent)]
    Teardown(#[from] TeardownError),
    #[error("could not remove {}", .path.display())]
    RemoveState {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not delete {name}")]
    DeleteRef { name: String, source: git2::Error },
}

/// Remove one finding of [`scan`]; `here` is the repository it was scanned in.
pub fn remove(o: &Orphan, here: Option<(&Repo, &Layout)>) -> Result<Outcome, PruneError> {
    if let Orphan::GoneRepo {
        state_dir, records, ..
    } = o
    {
        // A checkout that outlived its repository may hold the only copy of some work:
        // then nothing of the repository goes (its record is the way back to it).
        let at_stake: Vec<String> = records.iter().filter_map(checkout_at_stake).collect();
        if !at_stake.is_empty() {
            return Ok(Outcome::Kept(
                at_stake
                    .into_iter()
                    .map(|why| {
                        format!(
                            "kept {}: {why}; copy out what you need, then remove it by hand",
                            state_dir.display()
                        )
                    })
                    .collect(),
            ));
        }
        // The containers first: with the engine down, keep the records to retry.
        let mut kept = Vec::new();
        for r in records {
            if let Err(e) = crate::runner::oci::remove_box_containers(r) {
                kept.push(format!(
                    "kept {}: {}",
                    state_dir.display(),
                    crate::sanitize::chain(&e)
                ));
            }
        }
        if !kept.is_empty() {
            return Ok(Outcome::Kept(kept));
        }
        // The checkouts assessed above, under the checkouts root (nothing else).
        for r in records
            .iter()
            .filter(|r| layout::moved_box_of(&r.path).is_some())
        {
            teardown::remove_tree(&r.path).map_err(|source| PruneError::RemoveState {
                path: r.path.clone(),
                source,
            })?;
            if let Some(root) = r.path.parent() {
                // Its repository's checkouts root, once empty.
                let _ = std::fs::remove_dir(root);
            }
        }
        layout::remove_repo_state(state_dir).map_err(|source| PruneError::RemoveState {
            path: state_dir.clone(),
            source,
        })?;
        return Ok(Outcome::Removed);
    }
    let Some((repo, layout)) = here else {
        return Ok(Outcome::Skipped);
    };
    match o {
        Orphan::GoneRepo { .. } => {}
        Orphan::NoDirectory(e) => {
            let t = teardown::target((**e).clone(), repo, layout);
            match teardown::remove(repo, layout, &t, false) {
                Ok(_) => {}
                Err(TeardownError::Lock(_)) => {
                    return Ok(Outcome::Kept(vec![format!(
                        "kept the record of `{}`: it is in use",
                        e.leaf
                    )]));
                }
                Err(e) => return Err(e.into()),
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
                Err(TeardownError::Lock(_)) => {
                    return Ok(Outcome::Kept(vec![format!("kept {what}: it is in use")]));
                }
                Err(TeardownError::Changed { now, .. }) => {
                    return Ok(Outcome::Kept(vec![format!(
                        "kept {what}: since asked, {now}"
                    )]));
                }
                Err(e) => return Err(e.into()),
            }
        }
        Orphan::Pin(name) => {
            if let Ok(mut r) = repo.git.find_reference(name) {
                r.delete().map_err(|source| PruneError::DeleteRef {
                    name: name.clone(),
                    source,
                })?;
            }
        }
        Orphan::Lock(path, leaf) => {
            // A lock someone holds is not stray: leave it, and do not say it went.
            match crate::state::BoxLock::try_acquire(path, leaf.as_str()) {
                Ok(l) => l.release_and_remove(),
                Err(_) => return Ok(Outcome::Skipped),
            }
        }
    }
    Ok(Outcome::Removed)
}
