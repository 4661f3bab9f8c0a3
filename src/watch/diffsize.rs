//! A box's committed work against its base, as the dashboard shows it (`+120 −8`, and
//! how many commits), with its last commit's subject.
//!
//! Read as `git treebox diff` reads it ([`crate::land::BoxGit`]: libgit2 over the
//! stores treebox gave the box; nothing the box configured runs), but committed work
//! only: the merge-base of the box's tip and `origin/<base>` (else `<base>`, else the
//! commit it started from) against the tip. No working tree is read (the pane reads the
//! selected box's, alone).
//!
//! The answer is a function of two commit ids, the box's tip and the base's, so it is
//! kept under them ([`Key`]) in `watch-cache.json` beside the list cache
//! ([`crate::state::list_cache`]'s rules: host-owned, anything wrong reads as empty):
//! a refresh where nothing moved reads one small file. Callers: `cli/watch`.
//!
//! Bounded (SPEC §8.8): the commits are counted with the capped walk
//! ([`crate::git::history`]) before libgit2's merge-base is asked, and the trees'
//! changes are counted against an entry budget ([`crate::git::trees`]) before they
//! are diffed. Past either, the box's work is too large: kept as such (so a refresh
//! does not walk it again) and shown unknown.

use std::collections::HashMap;

use git2::Oid;
use serde::{Deserialize, Serialize};

use super::Size;
use crate::boxes::BoxEntry;
use crate::git::history::{self, WalkError};
use crate::git::landed;
use crate::git::trees::{Trees, MAX_ENTRIES};
use crate::git::Repo;
use crate::land::landed::start_of;
use crate::land::BoxGit;
use crate::state::{list_cache, Layout};

/// At most this many commits are counted (a longer history is too large).
pub const MAX_COUNT: usize = history::MAX_COMMITS;

/// A tip's commit object larger than this is not read for its subject.
const MAX_COMMIT_BYTES: usize = 1 << 20;

/// The box's tip and the base's: what an answer depends on.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
struct Key(String);

/// One kept answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Kept {
    key: Key,
    size: Size,
    subject: String,
    /// Past the walk's or the trees' bounds: shown unknown, not read again.
    #[serde(default)]
    too_large: bool,
}

/// What the dashboard shows of a box's committed work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Work {
    pub size: Size,
    /// The first line of the tip's message, as the box wrote it (raw).
    pub subject: String,
}

/// Each box's committed work (`None`: no record, no tip, no base, or unreadable), in
/// the boxes' order. Kept answers are reused; only boxes whose tip or base moved are
/// read again, on the machine's cores.
/// `tips` are the boxes' tips ([`crate::land::landed::tip_of`]), in their order.
pub fn work_all(
    entries: &[BoxEntry],
    tips: &[Option<Oid>],
    repo: &Repo,
    layout: &Layout,
) -> Vec<Option<Work>> {
    let path = layout.watch_cache_path();
    let kept: HashMap<Key, Option<(Size, String)>> =
        list_cache::load::<Kept>(&path, &layout.box_root, &repo.common_dir)
            .into_iter()
            .map(|k| (k.key, (!k.too_large).then_some((k.size, k.subject))))
            .collect();
    let mut bases: HashMap<&str, Option<Oid>> = HashMap::new();
    let keys: Vec<Option<(Key, Oid, Oid)>> = entries
        .iter()
        .zip(tips)
        .map(|(e, tip)| {
            let r = e.record.as_ref()?;
            let tip = (*tip)?;
            let base = bases
                .entry(r.base.as_str())
                .or_insert_with(|| {
                    landed::targets_for_base(&repo.git, &r.base)
                        .first()
                        .map(|t| t.oid)
                })
                .or_else(|| start_of(e))?;
            Some((Key(format!("{tip}:{base}")), tip, base))
        })
        .collect();
    let misses: Vec<usize> = (0..entries.len())
        .filter(|&i| {
            keys[i]
                .as_ref()
                .is_some_and(|(k, ..)| !kept.contains_key(k))
        })
        .collect();
    let main = repo.main_root.as_path();
    let asked = crate::boxes::par::map(
        &misses,
        || Repo::discover(main).ok(),
        |user, &i| {
            let (_, tip, base) = keys[i].as_ref()?;
            read(&entries[i], *tip, *base, user.as_ref()?)
        },
    );
    let mut fresh: HashMap<&Key, Option<(Size, String)>> = HashMap::new();
    for (&i, a) in misses.iter().zip(asked) {
        if let (Some((k, ..)), Some(w)) = (&keys[i], a) {
            fresh.insert(k, w.map(|w| (w.size, w.subject)));
        }
    }
    let out: Vec<Option<Work>> = keys
        .iter()
        .map(|k| {
            let (k, ..) = k.as_ref()?;
            let (size, subject) = kept.get(k).or_else(|| fresh.get(k))?.clone()?;
            Some(Work { size, subject })
        })
        .collect();
    let used = keys
        .iter()
        .flatten()
        .filter(|(k, ..)| kept.contains_key(k))
        .count();
    if (!fresh.is_empty() || used != kept.len()) && layout.repo_state.is_dir() {
        let mut all: Vec<Kept> = keys
            .iter()
            .flatten()
            .filter_map(|(k, ..)| {
                let w = kept.get(k).or_else(|| fresh.get(k))?.clone();
                let too_large = w.is_none();
                let (size, subject) = w.unwrap_or_default();
                Some(Kept {
                    key: k.clone(),
                    size,
                    subject,
                    too_large,
                })
            })
            .collect();
        all.sort_by(|a, b| a.key.0.cmp(&b.key.0));
        all.dedup_by(|a, b| a.key == b.key);
        // A cache: when it cannot be written, the next refresh reads again.
        let _ = list_cache::save(&path, &layout.box_root, &repo.common_dir, &all);
    }
    out
}

/// The work between `base` and `tip`: in the user's repository when it has the tip (a
/// worktree, or work fetched back), else through the box's own objects. `None`:
/// unreadable (asked again next time); `Some(None)`: too large (kept as such).
fn read(e: &BoxEntry, tip: Oid, base: Oid, user: &Repo) -> Option<Option<Work>> {
    let told = |r: Result<Work, WalkError>| match r {
        Ok(w) => Some(Some(w)),
        Err(e) if e.is_too_large() => Some(None),
        Err(_) => None,
    };
    if user.git.odb().ok()?.exists(tip) {
        return told(measure(&user.git, tip, base));
    }
    let git = BoxGit::open(e, user).ok()?;
    told(measure(&git.objects, tip, base))
}

/// Commits from the merge-base of `tip` and `base` to `tip`, and their lines; too
/// large past [`MAX_COUNT`] commits or [`MAX_ENTRIES`] changed entries.
pub fn measure(o: &git2::Repository, tip: Oid, base: Oid) -> Result<Work, WalkError> {
    // The capped walk first: libgit2's merge-base and revwalk have no bound.
    let commits = history::since(o, tip, &[base], MAX_COUNT)?.len();
    let merge_base = o.merge_base(tip, base)?;
    let (size, _) = o.odb()?.read_header(tip)?;
    if size > MAX_COMMIT_BYTES {
        return Err(WalkError::TooLarge(MAX_COUNT));
    }
    let tip_commit = o.find_commit(tip)?;
    let from = o.find_commit(merge_base)?.tree()?;
    let to = tip_commit.tree()?;
    Trees::new(o, MAX_ENTRIES).changed(Some(from.id()), Some(to.id()))?;
    let mut opts = git2::DiffOptions::new();
    opts.max_size(i64::try_from(crate::land::diff::MAX_FILE).unwrap_or(i64::MAX));
    let stats = o
        .diff_tree_to_tree(Some(&from), Some(&to), Some(&mut opts))?
        .stats()?;
    let subject = String::from_utf8_lossy(tip_commit.message_bytes())
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    Ok(Work {
        size: Size {
            commits,
            additions: stats.insertions(),
            deletions: stats.deletions(),
        },
        subject,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_committed_work_since_the_merge_base() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let sig = git2::Signature::new("t", "t@e", &git2::Time::new(1, 0)).unwrap();
        let commit = |parent: Option<Oid>, text: &str, msg: &str| {
            let blob = repo.blob(text.as_bytes()).unwrap();
            let mut tb = repo.treebuilder(None).unwrap();
            tb.insert("f", blob, 0o100644).unwrap();
            let tree = repo.find_tree(tb.write().unwrap()).unwrap();
            let parents: Vec<git2::Commit> = parent
                .iter()
                .map(|p| repo.find_commit(*p).unwrap())
                .collect();
            let refs: Vec<&git2::Commit> = parents.iter().collect();
            repo.commit(None, &sig, &sig, msg, &tree, &refs).unwrap()
        };
        let base = commit(None, "a\nb\nc\n", "start");
        let one = commit(Some(base), "a\nB\nc\nd\n", "one");
        let two = commit(Some(one), "a\nB\nc\nd\ne\n", "two: \u{9b}31m\nbody");
        let moved_base = commit(Some(base), "a\nb\nc\n\n", "elsewhere");
        let w = measure(&repo, two, moved_base).unwrap();
        assert_eq!(
            w.size,
            Size {
                commits: 2,
                additions: 3,
                deletions: 1
            }
        );
        assert_eq!(w.subject, "two: \u{9b}31m");
        let none = measure(&repo, base, base).unwrap();
        assert_eq!(none.size.commits, 0);
    }

    /// Past the capped walk or the trees' budget, the work is too large: told in
    /// bounded time, never walked whole.
    #[test]
    fn too_many_commits_or_entries_are_too_large() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let sig = git2::Signature::new("t", "t@e", &git2::Time::new(1, 0)).unwrap();
        let empty = repo.treebuilder(None).unwrap().write().unwrap();
        let commit = |parent: Option<Oid>, tree: Oid| {
            let tree = repo.find_tree(tree).unwrap();
            let parents: Vec<git2::Commit> = parent
                .iter()
                .map(|p| repo.find_commit(*p).unwrap())
                .collect();
            let refs: Vec<&git2::Commit> = parents.iter().collect();
            repo.commit(None, &sig, &sig, "c", &tree, &refs).unwrap()
        };
        let base = commit(None, empty);
        let began = std::time::Instant::now();
        let mut tip = base;
        for _ in 0..MAX_COUNT {
            tip = commit(Some(tip), empty);
        }
        assert_eq!(measure(&repo, tip, base).unwrap().size.commits, MAX_COUNT);
        let over = commit(Some(tip), empty);
        assert!(measure(&repo, over, base).unwrap_err().is_too_large());
        // 4 M files in 23 tree objects.
        let blob = repo.blob(b"x").unwrap();
        let mut tb = repo.treebuilder(None).unwrap();
        tb.insert("f", blob, 0o100644).unwrap();
        let mut t = tb.write().unwrap();
        for _ in 0..22 {
            let mut tb = repo.treebuilder(None).unwrap();
            tb.insert("a", t, 0o040000).unwrap();
            tb.insert("b", t, 0o040000).unwrap();
            t = tb.write().unwrap();
        }
        let bomb = commit(Some(base), t);
        assert!(measure(&repo, bomb, base).unwrap_err().is_too_large());
        assert!(began.elapsed() < std::time::Duration::from_secs(30));
    }
}
