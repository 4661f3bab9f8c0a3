//! Has a box's work landed in its base? (SPEC §10b "Integrated means safe to remove".)
//!
//! A pure question over commits and trees, asked of one repository through libgit2
//! (which runs no hooks, filters or helpers): the box's branch tip, the commit the box
//! started from, and the refs its work would have landed in (local `<base>` and
//! `origin/<base>`). The answer, cheapest check first:
//!
//! 1. **no work**: the tip is the start point or one of its ancestors;
//! 2. **ancestry**: the tip is in a target's history (merged, fast-forwarded, or
//!    merged and later reverted — nothing of it is lost);
//! 3. **contained**: merging the box into the target would leave the target's tree as
//!    it is — the box's diff against the merge-base is already in the target's tree
//!    (squash-merged, also after the target moved on with other changes);
//! 4. **same patches**: every commit of the box has a twin of the same patch-id in the
//!    target since the merge-base (rebased or cherry-picked on the forge, as
//!    `git cherry` sees it);
//! 5. **squash patch**: the box's whole diff is one commit of the target (squash-merged,
//!    and the target later changed the same lines again).
//!
//! Anything else is not landed, with how many commits the target lacks. Work not in a
//! target is never called landed: what cannot be read, or a history past
//! [`SCAN_MAX`] commits, answers "not landed" (the safe direction; the user can still
//! force). Callers: `claude-worktree remove` (whether the branch goes with the box).
//!
//! Every walk is bounded (SPEC §8.8): ancestry and merge-bases go through
//! [`super::history`]'s capped walk first (more than
//! [`super::history::MAX_COMMITS`] commits of the box's own, or a history too large
//! to read, is an error that says so: unknown, never landed), and every diff or merge
//! of trees is counted first against one [`super::trees`] budget per verdict.

use git2::{Oid, Repository};

use super::history::{self, WalkError};
use super::trees::{Trees, MAX_ENTRIES};

/// How many commits, on the box's side and on a target's since the merge-base, the
/// patch-id checks read before giving up (then: not landed by patch).
pub const SCAN_MAX: usize = 500;

/// How far commits not in a target are counted: the capped walk's own cap.
const COUNT_MAX: usize = history::MAX_COMMITS;

/// A ref the box's work may have landed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// As the user knows it: `origin/main`, `main`.
    pub name: String,
    pub oid: Oid,
}

/// How the work landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// The tip is in the target's history: merged or fast-forwarded.
    Ancestry,
    /// The target's tree already holds the box's changes: squash-merged.
    Contained,
    /// Every commit of the box has a twin in the target: rebased or cherry-picked.
    SamePatches,
    /// The box's whole diff is one commit of the target: squash-merged.
    SquashPatch,
}

impl How {
    /// A few words for a person: "merged", "squash-merged", ….
    pub fn describe(self) -> &'static str {
        match self {
            How::Ancestry => "merged",
            How::Contained | How::SquashPatch => "squash-merged",
            How::SamePatches => "rebased or cherry-picked",
        }
    }
}

/// Commits of the box that a target lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ahead {
    pub count: usize,
    /// The target counted against (`origin/<base>` when there is one).
    pub of: String,
    /// The count stopped at its cap: at least `count`.
    pub capped: bool,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing beyond the box's start.
    NoWork,
    Landed {
        how: How,
        /// The target's name.
        into: String,
    },
    /// Work the targets do not hold; `ahead` is `None` when there is no target (or
    /// it was not counted: [`verdict_with`]).
    NotLanded { ahead: Option<Ahead> },
}

impl Verdict {
    /// Would removing the branch lose nothing?
    pub fn nothing_to_lose(&self) -> bool {
        !matches!(self, Verdict::NotLanded { .. })
    }
}

#[derive(Debug, thiserror::Error)]
#[error("could not read {what} to tell whether the work landed")]
pub struct LandedError {
    what: String,
    #[source]
    source: WalkError,
}

impl LandedError {
    /// The history or trees were past their bounds (not unreadable).
    pub fn is_too_large(&self) -> bool {
        self.source.is_too_large()
    }
}

fn ctx<E: Into<WalkError>>(what: impl Into<String>) -> impl FnOnce(E) -> LandedError {
    let what = what.into();
    move |source| LandedError {
        what,
        source: source.into(),
    }
}

/// `origin/<base>` and the local `<base>` of `repo`, those that exist, peeled to
/// commits (origin's first: it is what the forge merged into).
pub fn targets_for_base(repo: &Repository, base: &str) -> Vec<Target> {
    let mut out: Vec<Target> = Vec::new();
    for (refname, name) in [
        (
            format!("refs/remotes/origin/{base}"),
            format!("origin/{base}"),
        ),
        (format!("refs/heads/{base}"), base.to_string()),
    ] {
        let oid = repo
            .find_reference(&refname)
            .and_then(|r| r.peel_to_commit())
            .map(|c| c.id());
        if let Ok(oid) = oid {
            out.push(Target { name, oid });
        }
    }
    out
}

/// The patch-ids of commits read with one repository, kept for the next verdict made
/// with it: a commit's patch-id depends on the commit alone (and the repository's
/// attributes), and every box cut from one base asks for the same commits of that
/// base. `None` for a merge (no patch of its own).
#[derive(Default)]
pub struct Patches(std::cell::RefCell<std::collections::HashMap<Oid, Option<Oid>>>);

/// Has the work at `tip` (started at `start`, when known) landed in one of `targets`?
pub fn verdict(
    repo: &Repository,
    tip: Oid,
    start: Option<Oid>,
    targets: &[Target],
) -> Result<Verdict, LandedError> {
    judge(repo, tip, start, targets, &Patches::default(), true)
}

/// [`verdict`] for a display that shows only whether the work landed: the patch-ids in
/// `known` (read with `repo`) are reused and those read are kept there, and the
/// commits not landed are not counted (`NotLanded { ahead: None }`).
pub fn verdict_with(
    repo: &Repository,
    tip: Oid,
    start: Option<Oid>,
    targets: &[Target],
    known: &Patches,
) -> Result<Verdict, LandedError> {
    judge(repo, tip, start, targets, known, false)
}

fn judge(
    repo: &Repository,
    tip: Oid,
    start: Option<Oid>,
    targets: &[Target],
    known: &Patches,
    count: bool,
) -> Result<Verdict, LandedError> {
    let trees = std::cell::RefCell::new(Trees::new(repo, MAX_ENTRIES));
    let trees = &trees;
    if let Some(s) = start {
        if within(repo, tip, s)? {
            return Ok(Verdict::NoWork);
        }
    } else if targets.iter().any(|t| t.oid == tip) {
        // Where it started is not known (a branch checked out as it was, a box
        // finished after a crash): a tip that is the base's own holds nothing of the
        // box's, and a box that has done nothing yet is not "landed".
        return Ok(Verdict::NoWork);
    }
    for t in targets {
        if within(repo, tip, t.oid)? {
            return Ok(landed(How::Ancestry, t));
        }
    }
    let box_side = Side::new(tip);
    for t in targets {
        if let Some(how) = landed_by_content(repo, tip, t, &box_side, known, trees)? {
            return Ok(landed(how, t));
        }
    }
    let counted = targets
        .iter()
        .find(|t| t.name.starts_with("origin/"))
        .or(targets.first());
    let ahead = match counted.filter(|_| count) {
        Some(t) => Some(ahead_of(repo, tip, t)?),
        None => None,
    };
    Ok(Verdict::NotLanded { ahead })
}

fn landed(how: How, t: &Target) -> Verdict {
    Verdict::Landed {
        how,
        into: t.name.clone(),
    }
}

/// Is `tip` the commit `of`, or one of its ancestors? A capped walk
/// ([`history::within`]).
fn within(repo: &Repository, tip: Oid, of: Oid) -> Result<bool, LandedError> {
    history::within(repo, tip, of).map_err(ctx(format!("the history of {of}")))
}

/// The trees of a verdict, under its one budget.
type Budget<'a, 'r> = &'a std::cell::RefCell<Trees<'r>>;

/// Refuse a diff or merge of trees `old` and `new` past the budget (each question
/// has the whole budget; counts are kept between them).
fn within_budget(trees: Budget<'_, '_>, old: Option<Oid>, new: Oid) -> Result<(), LandedError> {
    let mut t = trees.borrow_mut();
    t.fresh();
    t.changed(old, Some(new))
        .map(|_| ())
        .map_err(ctx(format!("the changes in {new}")))
}

/// The box's side of the patch-id checks, read once for every target.
struct Side {
    tip: Oid,
    /// Per merge-base: the patch-ids of the box's commits since it (`None`: a merge
    /// among them, or more than [`SCAN_MAX`]).
    cache: std::cell::RefCell<Vec<(Oid, Option<Vec<Oid>>)>>,
}

impl Side {
    fn new(tip: Oid) -> Side {
        Side {
            tip,
            cache: Default::default(),
        }
    }

    fn patches_since(
        &self,
        repo: &Repository,
        base: Oid,
        known: &Patches,
        trees: Budget<'_, '_>,
    ) -> Result<Option<Vec<Oid>>, LandedError> {
        if let Some((_, p)) = self.cache.borrow().iter().find(|(b, _)| *b == base) {
            return Ok(p.clone());
        }
        let p = commit_patches(repo, self.tip, base, true, known, trees)?;
        self.cache.borrow_mut().push((base, p.clone()));
        Ok(p)
    }
}

/// Checks 3 to 5 against one target.
fn landed_by_content(
    repo: &Repository,
    tip: Oid,
    t: &Target,
    side: &Side,
    known: &Patches,
    trees: Budget<'_, '_>,
) -> Result<Option<How>, LandedError> {
    let mb = match history::merge_base(repo, tip, t.oid) {
        Ok(Some(mb)) => mb,
        // Unrelated histories: nothing of the box can be in this target.
        Ok(None) => return Ok(None),
        Err(e) => return Err(ctx(format!("the merge-base with {}", t.name))(e)),
    };
    let tree = |oid: Oid| {
        repo.find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(ctx(format!("the tree of {oid}")))
    };
    let (base_tree, tip_tree, target_tree) = (tree(mb)?, tree(tip)?, tree(t.oid)?);
    // The box's side of the merge and of the squash patch, counted first.
    within_budget(trees, Some(base_tree.id()), tip_tree.id())?;
    // 3. Merging the box in changes nothing of the target's tree. Computed in memory:
    // nothing is written to the object store.
    let merged = repo
        .merge_trees(&base_tree, &target_tree, &tip_tree, None)
        .map_err(ctx(format!("a merge into {}", t.name)))?;
    if !merged.has_conflicts() {
        let diff = repo
            .diff_tree_to_index(Some(&target_tree), Some(&merged), None)
            .map_err(ctx(format!("a merge into {}", t.name)))?;
        if diff.deltas().len() == 0 {
            return Ok(Some(How::Contained));
        }
    }
    // 4 and 5: patch-ids of the target's commits since the merge-base.
    let Some(theirs) = commit_patches(repo, t.oid, mb, false, known, trees)? else {
        return Ok(None);
    };
    if theirs.is_empty() {
        return Ok(None);
    }
    if let Some(ours) = side.patches_since(repo, mb, known, trees)? {
        if !ours.is_empty() && ours.iter().all(|p| theirs.contains(p)) {
            return Ok(Some(How::SamePatches));
        }
    }
    let whole = patch_id(repo, Some(&base_tree), &tip_tree)?;
    Ok(theirs.contains(&whole).then_some(How::SquashPatch))
}

/// The patch-ids of the commits in `since..tip`, or `None` when there are more than
/// [`SCAN_MAX`] — or, when `strict`, when one is a merge (its changes are not a patch
/// of its own). Merges on a target's side are passed over.
fn commit_patches(
    repo: &Repository,
    tip: Oid,
    since: Oid,
    strict: bool,
    known: &Patches,
    trees: Budget<'_, '_>,
) -> Result<Option<Vec<Oid>>, LandedError> {
    let what = || format!("the commits between {since} and {tip}");
    // The capped walk: libgit2's revwalk would mark the whole history first.
    let commits = match history::since(repo, tip, &[since], SCAN_MAX) {
        Ok(c) => c,
        Err(e) if e.is_too_large() => return Ok(None),
        Err(e) => return Err(ctx(what())(e)),
    };
    let mut out = Vec::new();
    for oid in commits {
        let kept = known.0.borrow().get(&oid).copied();
        let patch = match kept {
            Some(p) => p,
            None => {
                let p = commit_patch(repo, oid, trees)?;
                known.0.borrow_mut().insert(oid, p);
                p
            }
        };
        match patch {
            Some(p) => out.push(p),
            None if strict => return Ok(None),
            None => {}
        }
    }
    Ok(Some(out))
}

/// The patch-id of commit `oid` against its parent; `None` for a merge.
fn commit_patch(
    repo: &Repository,
    oid: Oid,
    trees: Budget<'_, '_>,
) -> Result<Option<Oid>, LandedError> {
    let c = repo
        .find_commit(oid)
        .map_err(ctx(format!("commit {oid}")))?;
    if c.parent_count() > 1 {
        return Ok(None);
    }
    let parent = match c.parent(0) {
        Ok(p) => Some(p.tree().map_err(ctx(format!("the tree of {}", p.id())))?),
        Err(_) => None,
    };
    let tree = c.tree().map_err(ctx(format!("the tree of {oid}")))?;
    // A commit too large to diff has no patch-id here, as a merge has none: the box's
    // patches are then not compared, the target's is passed over.
    match within_budget(trees, parent.as_ref().map(|p| p.id()), tree.id()) {
        Err(e) if e.is_too_large() => return Ok(None),
        r => r?,
    }
    patch_id(repo, parent.as_ref(), &tree).map(Some)
}

fn patch_id(
    repo: &Repository,
    old: Option<&git2::Tree<'_>>,
    new: &git2::Tree<'_>,
) -> Result<Oid, LandedError> {
    let what = || format!("the diff to {}", new.id());
    repo.diff_tree_to_tree(old, Some(new), None)
        .and_then(|d| d.patchid(None))
        .map_err(ctx(what()))
}

fn ahead_of(repo: &Repository, tip: Oid, t: &Target) -> Result<Ahead, LandedError> {
    let what = || format!("the commits not in {}", t.name);
    let (count, capped) = match history::since(repo, tip, &[t.oid], COUNT_MAX) {
        Ok(v) => (v.len(), false),
        Err(WalkError::TooLarge(n)) if n == COUNT_MAX => (COUNT_MAX, true),
        Err(e) => return Err(ctx(what())(e)),
    };
    Ok(Ahead {
        count,
        of: t.name.clone(),
        capped,
    })
}

#[cfg(test)]
mod tests;
