//! Has a box's work landed (SPEC §10b "Integrated means safe to remove")? The check
//! itself is [`crate::git::landed`]'s; this file asks it of a box — whatever its git
//! mode, reading a clone's or sandboxed worktree's commits as hostile data
//! ([`super::BoxGit`]) — and keeps the answers of `list` and `ls` between runs.
//!
//! The answer is a function of the commits alone: the box's tip, where it started, and
//! the tips of `origin/<base>` and `<base>`. Objects are named by their content, so an
//! answer kept under those ids ([`Key`]) holds for as long as they are the ids: a
//! fetch that moves `origin/<base>` asks again, a `list` that finds nothing moved
//! reads one small file. The cache ([`crate::state::list_cache`]'s rules: host-owned,
//! anything wrong with it reads as empty) is `landed-cache.json` beside the list cache.
//! Teardown never uses it: it asks afresh.

use std::collections::HashMap;

use git2::Oid;
use serde::{Deserialize, Serialize};

use super::BoxGit;
use crate::boxes::BoxEntry;
use crate::git::landed::{self, Verdict};
use crate::git::Repo;
use crate::state::{list_cache, Layout};

/// Has `entry`'s committed work landed in its base (`origin/<base>` or `<base>`)?
/// Asked afresh; `None` when it cannot be told (no record, a folder, its git
/// unreadable).
pub fn verdict(entry: &BoxEntry, repo: &Repo) -> Option<Verdict> {
    let record = entry.record.as_ref().filter(|r| !r.base.is_empty())?;
    let git = BoxGit::open(entry, repo).ok()?;
    let Some(tip) = git.tip else {
        return Some(Verdict::NoWork);
    };
    let targets = landed::targets_for_base(&repo.git, &record.base);
    landed::verdict(&git.objects, tip, start_of(entry), &targets).ok()
}

pub(crate) fn start_of(entry: &BoxEntry) -> Option<Oid> {
    entry
        .record
        .as_ref()
        .and_then(|r| r.base_commit.as_deref())
        .and_then(|c| Oid::from_str(c).ok())
}

/// The commits an answer is a function of: the box's tip, its start, the targets'
/// tips.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
struct Key(String);

impl Key {
    fn of(tip: Oid, start: Option<Oid>, targets: &[landed::Target]) -> Key {
        let mut k = tip.to_string();
        k.push(':');
        if let Some(s) = start {
            k.push_str(&s.to_string());
        }
        for t in targets {
            k.push(':');
            k.push_str(&t.oid.to_string());
        }
        Key(k)
    }
}

/// One kept answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Kept {
    key: Key,
    /// `None`: the box has no commits of its own (nothing to land), or its history or
    /// trees are past their bounds (unknown: shown as null alike).
    landed: Option<bool>,
}

/// What `ls` shows: [`landed_all_at`], each box's tip read now (its branch ref, for a
/// worktree).
pub fn landed_all(entries: &[BoxEntry], repo: &Repo, layout: &Layout) -> Vec<Option<bool>> {
    let tips: Vec<Option<Oid>> = entries.iter().map(|e| tip_of(e, repo)).collect();
    landed_all_at(entries, &tips, repo, layout)
}

/// What `list`, `ls` and `watch` show: whether each box's work has landed (`None`:
/// unknown, or a box with no work of its own), in the boxes' order, the boxes' tips
/// being `tips` (as [`tip_of`] reads them: `list` has them from its summary cache,
/// which reads a box's branch ref again whenever the ref's file changed; `watch` reads
/// them once for this and its diff sizes). Answers are kept by [`Key`]; only boxes
/// whose commits moved are asked again, on the machine's cores. For display only:
/// teardown and prune ask afresh ([`verdict`]).
pub fn landed_all_at(
    entries: &[BoxEntry],
    tips: &[Option<Oid>],
    repo: &Repo,
    layout: &Layout,
) -> Vec<Option<bool>> {
    debug_assert_eq!(entries.len(), tips.len());
    let path = layout.landed_cache_path();
    let kept: HashMap<Key, Option<bool>> =
        list_cache::load::<Kept>(&path, &layout.box_root, &repo.common_dir)
            .into_iter()
            .map(|k| (k.key, k.landed))
            .collect();
    // The targets of each base, read once.
    let mut by_base: HashMap<&str, Vec<landed::Target>> = HashMap::new();
    let keys: Vec<Option<(Key, Oid)>> = entries
        .iter()
        .zip(tips)
        .map(|(e, tip)| {
            let r = e.record.as_ref().filter(|r| !r.base.is_empty())?;
            let tip = (*tip)?;
            let targets = by_base
                .entry(r.base.as_str())
                .or_insert_with(|| landed::targets_for_base(&repo.git, &r.base));
            Some((Key::of(tip, start_of(e), targets), tip))
        })
        .collect();
    let misses: Vec<usize> = (0..entries.len())
        .filter(|&i| keys[i].as_ref().is_some_and(|(k, _)| !kept.contains_key(k)))
        .collect();
    let main = repo.main_root.as_path();
    let asked = crate::boxes::par::map(
        &misses,
        // Each core's own handle, and the patch-ids it has read (the base's commits,
        // the same for every box cut from it).
        || {
            Repo::discover(main)
                .ok()
                .map(|r| (r, landed::Patches::default()))
        },
        |user, &i| {
            let (_, tip) = keys[i].as_ref()?;
            let (user, known) = user.as_ref()?;
            // Asked against the targets its key was made of (a fetch meanwhile must not
            // put another base's answer under this key).
            let targets = by_base.get(entries[i].record.as_ref()?.base.as_str())?;
            // A box with nothing of its own has nothing landed either: null. A history
            // or trees past their bounds is unknown, null too, and kept: a hostile
            // box is walked once per tip, not on every `list`.
            match ask(&entries[i], *tip, user, known, targets)? {
                Ok(Verdict::NoWork) => Some(None),
                Ok(v) => Some(Some(matches!(v, Verdict::Landed { .. }))),
                Err(e) if e.is_too_large() => Some(None),
                Err(_) => None,
            }
        },
    );
    let mut fresh: HashMap<&Key, Option<bool>> = HashMap::new();
    for (&i, a) in misses.iter().zip(&asked) {
        if let (Some((k, _)), Some(l)) = (&keys[i], a) {
            fresh.insert(k, *l);
        }
    }
    let out: Vec<Option<bool>> = keys
        .iter()
        .map(|k| {
            let (k, _) = k.as_ref()?;
            kept.get(k).or_else(|| fresh.get(k)).copied().flatten()
        })
        .collect();
    let used = keys
        .iter()
        .flatten()
        .filter(|(k, _)| kept.contains_key(k))
        .count();
    if (!fresh.is_empty() || used != kept.len()) && layout.repo_state.is_dir() {
        let mut all: Vec<Kept> = keys
            .iter()
            .flatten()
            .filter_map(|(k, _)| {
                let landed = kept.get(k).or_else(|| fresh.get(k)).copied()?;
                Some(Kept {
                    key: k.clone(),
                    landed,
                })
            })
            .collect();
        all.sort_by(|a, b| a.key.0.cmp(&b.key.0));
        all.dedup_by(|a, b| a.key == b.key);
        // A cache: when it cannot be written, the next `list` asks again.
        let _ = list_cache::save(&path, &layout.box_root, &repo.common_dir, &all);
    }
    out
}

/// The box's tip as `list` knows it: a worktree's branch in the user's repository, a
/// clone's (a sandboxed worktree's) as the inventory read it from its own `HEAD`.
pub(crate) fn tip_of(e: &BoxEntry, repo: &Repo) -> Option<Oid> {
    if e.owns_git() {
        return e.own_tip;
    }
    e.shown_branch().and_then(|b| repo.local_branch(b))
}

/// The verdict on `tip`: in the user's repository when it has the commit (a worktree,
/// or work fetched back), else through the box's own objects. `None`: the objects
/// could not be opened.
fn ask(
    e: &BoxEntry,
    tip: Oid,
    user: &Repo,
    known: &landed::Patches,
    targets: &[landed::Target],
) -> Option<Result<Verdict, landed::LandedError>> {
    if user.git.odb().ok()?.exists(tip) {
        return Some(landed::verdict_with(
            &user.git,
            tip,
            start_of(e),
            targets,
            known,
        ));
    }
    // The box's own objects: patch-ids kept for this store only.
    let git = BoxGit::open(e, user).ok()?;
    let own = landed::Patches::default();
    Some(landed::verdict_with(
        &git.objects,
        tip,
        start_of(e),
        targets,
        &own,
    ))
}
