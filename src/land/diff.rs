//! `git treebox diff`: what a box changed since its base — its commits and its
//! uncommitted work — against the merge-base with `origin/<base>` (else `<base>`, else
//! the commit it started from): git's three-dot diff, plus the working tree.
//!
//! Read through [`super::BoxGit`]: libgit2 over the stores treebox gave the box, with no
//! git dir of the box's behind it. Nothing the box configured runs (textconv, an
//! external diff, a pager, filter drivers, fsmonitor: libgit2 has none of them), files
//! past [`MAX_FILE`] are shown as binary rather than read into memory, and a history
//! past [`MAX_COMMITS`] is cut (and says so). The patch is bytes as the box wrote
//! them: the CLI escapes them for a terminal.
//!
//! Every walk of the box's history or trees is bounded first (SPEC §8.8): the
//! merge-base and the commits go through [`crate::git::history`]'s capped walk
//! (more than [`history::MAX_COMMITS`] commits of the box's own, or a history too
//! large to read), the trees through [`crate::git::trees`]' count (what the diff
//! would list, within [`trees::budget_for`] the merge-base's own tree; that bounds
//! the tip's whole tree, which the uncommitted check walks, too). Over either, the
//! diff says what was too large ([`BoxDiff::too_large`]) and lists nothing: libgit2
//! is not asked.

use git2::{Delta, DiffFormat, DiffOptions, Oid};

use super::BoxGit;
use crate::boxes::BoxEntry;
use crate::git::history::{self, WalkError};
use crate::git::landed;
use crate::git::trees::{self, Trees};
use crate::git::Repo;

/// A file larger than this is compared by id only (shown as binary).
pub const MAX_FILE: u64 = 8 << 20;
/// At most this many commits are listed.
pub const MAX_COMMITS: usize = 1000;

/// One commit of the box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub id: Oid,
    /// The first line of its message, as the box wrote it.
    pub subject: String,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The path now (the old one for a deletion).
    pub path: String,
    /// The path before a rename or copy.
    pub old_path: Option<String>,
    /// `added`, `deleted`, `modified`, `renamed`, `copied`, `typechange`.
    pub status: &'static str,
    pub additions: usize,
    pub deletions: usize,
    pub binary: bool,
    /// A path `land` refuses to write ([`super::scan`]): under `.treebox/`, or holding
    /// terminal controls (judged on its bytes; never set on a deletion).
    pub flaw: Option<super::scan::PathFlaw>,
}

/// A bound the box's work is past: nothing was compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge {
    /// `commits`, `tree entries`, or `seconds` (the comparison was given up on).
    pub what: &'static str,
    pub limit: u64,
}

impl TooLarge {
    /// The bound `e` is past; `None` for a failure to read.
    pub fn of(e: &WalkError) -> Option<TooLarge> {
        match e {
            WalkError::TooLarge(n) => Some(TooLarge {
                what: "commits",
                limit: *n as u64,
            }),
            WalkError::TooManyEntries(n) => Some(TooLarge {
                what: "tree entries",
                limit: *n,
            }),
            WalkError::Git(_) => None,
        }
    }
}

/// What a box changed.
#[derive(Debug, Clone)]
pub struct BoxDiff {
    pub branch: Option<String>,
    pub tip: Option<Oid>,
    /// What the diff is against: `origin/main`, `main`, or the start commit's id.
    pub against: String,
    /// `None` only when the history is too large to walk ([`Self::too_large`]).
    pub merge_base: Option<Oid>,
    /// Past a bound: then no file is listed (and with a history too large, no commit
    /// either), and the checkout is not read.
    pub too_large: Option<TooLarge>,
    /// Newest first; at most [`MAX_COMMITS`].
    pub commits: Vec<Commit>,
    /// More commits than were listed.
    pub commits_cut: bool,
    /// The working tree (or index) differs from the tip.
    pub uncommitted: bool,
    /// The checkout could be read (else: commits only).
    pub worktree_read: bool,
    pub files: Vec<FileChange>,
    /// git's `--stat` text.
    pub stat: String,
    /// The patch (unified, `git diff` style), when asked for.
    pub patch: Option<Vec<u8>>,
    /// The patch stops at [`MAX_PATCH`] bytes: more followed.
    pub patch_cut: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error(transparent)]
    Open(#[from] super::OpenError),
    #[error("box `{leaf}` has nothing to compare against: neither origin/{base} nor {base} exists, and its record has no start commit")]
    NoBase { leaf: String, base: String },
    #[error("could not compute box `{leaf}`'s diff")]
    Git {
        leaf: String,
        #[source]
        source: git2::Error,
    },
}

/// The diff of `entry` (a box of `repo`); with `patch`, the patch text too.
pub fn diff(entry: &BoxEntry, repo: &Repo, patch: bool) -> Result<BoxDiff, DiffError> {
    let git = BoxGit::open(entry, repo)?;
    let record = entry.record.as_ref().expect("BoxGit::open needs a record");
    let start = record
        .base_commit
        .as_deref()
        .and_then(|c| Oid::from_str(c).ok());
    let of = Of {
        leaf: entry.leaf.to_string(),
        base: &record.base,
        start,
    };
    diff_of(
        repo,
        git,
        &of,
        patch,
        || worktree_within(entry),
        || BoxGit::open(entry, repo),
    )
}

/// The diff of a box on another machine whose branch `branch` was brought back to
/// `tip` (its `incoming`): its commits since `base` (else since `start`, the commit it
/// was sent), read from the user's repository; its checkout there is not read.
pub fn diff_far(
    repo: &Repo,
    of: &Of,
    branch: &str,
    tip: Oid,
    patch: bool,
) -> Result<BoxDiff, DiffError> {
    let objects =
        git2::Repository::open_bare(&repo.common_dir).map_err(|source| DiffError::Git {
            leaf: of.leaf.clone(),
            source,
        })?;
    let git = BoxGit::of_commit(objects, branch, tip);
    diff_of(
        repo,
        git,
        of,
        patch,
        || false,
        || unreachable!("no checkout is read"),
    )
}

/// Which box a diff is of, and what it is against.
pub struct Of<'a> {
    pub leaf: String,
    /// Its base branch.
    pub base: &'a str,
    /// The commit it started from, when known.
    pub start: Option<Oid>,
}

/// [`diff`] of a box's opened git; `checkout_ok`: whether its checkout may be read
/// (asked only once its commits are); `reopen`: its git again, to read its commits
/// alone when reading the checkout ran out of time.
fn diff_of(
    repo: &Repo,
    git: BoxGit,
    of: &Of,
    patch: bool,
    checkout_ok: impl FnOnce() -> bool,
    reopen: impl FnOnce() -> Result<BoxGit, super::OpenError>,
) -> Result<BoxDiff, DiffError> {
    let leaf = of.leaf.clone();
    let fail = |source| DiffError::Git {
        leaf: leaf.clone(),
        source,
    };
    let targets = landed::targets_for_base(&repo.git, of.base);
    let (against, against_oid) = match (targets.first(), of.start) {
        (Some(t), _) => (t.name.clone(), t.oid),
        (None, Some(s)) => (s.to_string(), s),
        (None, None) => {
            return Err(DiffError::NoBase {
                leaf,
                base: of.base.to_string(),
            })
        }
    };
    let o = &git.objects;
    let walked = |e: WalkError| match TooLarge::of(&e) {
        Some(t) => Ok(t),
        None => Err(fail(match e {
            WalkError::Git(g) => g,
            other => git2::Error::from_str(&other.to_string()),
        })),
    };
    let (branch, tip) = (git.branch.clone(), git.tip);
    let too_large = |merge_base, commits, commits_cut, t| BoxDiff {
        branch: branch.clone(),
        tip,
        against: against.clone(),
        merge_base,
        too_large: Some(t),
        commits,
        commits_cut,
        uncommitted: false,
        worktree_read: false,
        files: Vec::new(),
        stat: String::new(),
        patch: None,
        patch_cut: false,
    };
    let merge_base = match tip {
        Some(tip) => match history::merge_base(o, tip, against_oid) {
            Ok(Some(mb)) => mb,
            Ok(None) => {
                return Err(fail(git2::Error::new(
                    git2::ErrorCode::NotFound,
                    git2::ErrorClass::Merge,
                    "no merge base found",
                )))
            }
            Err(e) => return Ok(too_large(None, Vec::new(), true, walked(e)?)),
        },
        None => against_oid,
    };
    let (commits, commits_cut) = match tip {
        Some(tip) => match commits_since(o, tip, merge_base) {
            Ok(c) => c,
            Err(e) => return Ok(too_large(Some(merge_base), Vec::new(), true, walked(e)?)),
        },
        None => (Vec::new(), false),
    };
    let base_tree = o
        .find_commit(merge_base)
        .and_then(|c| c.tree())
        .map_err(fail)?
        .id();
    let tip_tree = match tip {
        Some(t) => Some(o.find_commit(t).and_then(|c| c.tree()).map_err(fail)?.id()),
        None => None,
    };
    if let Some(tip_tree) = tip_tree {
        if let Err(e) = trees_fit(o, base_tree, tip_tree) {
            return Ok(too_large(
                Some(merge_base),
                commits,
                commits_cut,
                walked(e)?,
            ));
        }
    }
    // The work tree is compared only when the box's status reads within its bounds
    // and names nothing libgit2 must not open or hash whole; then on a thread given
    // up at [`COMPARE_DEADLINE`] (what was swapped in after the status, a FIFO, blocks
    // there, not here), else the commits alone.
    // Attached only then: libgit2 reads attributes from an attached work tree even
    // for a diff of two trees (a FIFO `.gitattributes` would block that too).
    let worktree = checkout_ok() && git.with_checkout().map_err(fail)?;
    let compare_on = |o: git2::Repository, worktree: bool| {
        crate::boxes::deadline::within(COMPARE_DEADLINE, move || {
            compare(&o, base_tree, tip_tree, worktree, patch)
        })
    };
    let mut worktree_read = worktree;
    let mut got = compare_on(git.objects, worktree);
    if got.is_none() && worktree {
        worktree_read = false;
        got = compare_on(reopen()?.objects, false);
    }
    let Some(compared) = got else {
        let t = TooLarge {
            what: "seconds",
            limit: COMPARE_DEADLINE.as_secs(),
        };
        return Ok(too_large(Some(merge_base), commits, commits_cut, t));
    };
    let c = compared.map_err(fail)?;
    Ok(BoxDiff {
        branch,
        tip,
        against,
        merge_base: Some(merge_base),
        too_large: None,
        commits,
        commits_cut,
        uncommitted: c.uncommitted,
        worktree_read,
        files: c.files,
        stat: c.stat,
        patch: c.patch,
        patch_cut: c.patch_cut,
    })
}

/// How long comparing a box's trees (and work tree) may take: a large change of a
/// monorepo in a few seconds; a box that makes the comparison read a blob over and
/// over (thousands of paths naming one large blob) is given up on.
pub const COMPARE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

/// The patch text kept at most; past it the patch is cut (and says so).
pub const MAX_PATCH: usize = 64 << 20;

/// What comparing the trees (and work tree) found.
struct Compared {
    files: Vec<FileChange>,
    stat: String,
    patch: Option<Vec<u8>>,
    patch_cut: bool,
    uncommitted: bool,
}

/// The diff from the tree `base` to the tree `tip` (`worktree`: to the box's work
/// tree and index, which `o` has attached), with the patch text when asked.
fn compare(
    o: &git2::Repository,
    base: Oid,
    tip: Option<Oid>,
    worktree: bool,
    patch: bool,
) -> Result<Compared, git2::Error> {
    let base_tree = o.find_tree(base)?;
    let tip_tree = tip.map(|t| o.find_tree(t)).transpose()?;
    let mut d = if worktree {
        o.diff_tree_to_workdir_with_index(Some(&base_tree), Some(&mut options()))
    } else {
        o.diff_tree_to_tree(Some(&base_tree), tip_tree.as_ref(), Some(&mut options()))
    }?;
    d.find_similar(None)?;
    let uncommitted = worktree
        && o.diff_tree_to_workdir_with_index(tip_tree.as_ref(), Some(&mut options()))?
            .deltas()
            .len()
            > 0;
    let stat = d
        .stats()
        .and_then(|s| s.to_buf(git2::DiffStatsFormat::FULL, 80))?;
    let stat = String::from_utf8_lossy(&stat).into_owned();
    let (patch, patch_cut) = match patch {
        true => {
            let (text, cut) = patch_text(&d)?;
            (Some(text), cut)
        }
        false => (None, false),
    };
    Ok(Compared {
        files: files(&d)?,
        stat,
        patch,
        patch_cut,
        uncommitted,
    })
}

/// Whether the box's work tree may be handed to libgit2's diff: its status reads
/// within the bounds of [`crate::boxes::bounded`], and no path it names as changed
/// is a FIFO, a device or a socket, or a file over [`crate::boxes::bounded::MAX_HASHED`]
/// (which libgit2 would hash whole).
fn worktree_within(entry: &BoxEntry) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Some(changed) = crate::boxes::changes_of(entry) else {
        return false;
    };
    changed.iter().all(|(path, _)| {
        let p = entry.path.join(std::ffi::OsStr::from_bytes(path));
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_file() => m.len() <= crate::boxes::bounded::MAX_HASHED,
            Ok(m) => m.is_dir() || m.file_type().is_symlink(),
            Err(_) => true, // deleted
        }
    })
}

/// The trees libgit2 will diff, counted first (each tree object read once): what
/// differs between `base` and `tip`, within [`trees::budget_for`] the base's tree.
/// That bounds the tip's whole tree too (the uncommitted check walks it against the
/// index): each of its entries is the base's or counted as differing, so it holds at
/// most the base's entries and the budget.
fn trees_fit(o: &git2::Repository, base: Oid, tip: Oid) -> Result<(), WalkError> {
    let own = Trees::new(o, u64::MAX).entries(base)?;
    Trees::new(o, trees::budget_for(own)).changed(Some(base), Some(tip))?;
    Ok(())
}

fn options() -> DiffOptions {
    let mut opts = DiffOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .show_untracked_content(true)
        .include_typechange(true)
        .max_size(MAX_FILE as i64);
    opts
}

/// The box's commits since `since`, newest first, at most [`MAX_COMMITS`] of them:
/// counted by the capped walk first (libgit2's revwalk with a hidden commit reads the
/// whole history before its first commit), then in libgit2's order.
fn commits_since(
    o: &git2::Repository,
    tip: Oid,
    since: Oid,
) -> Result<(Vec<Commit>, bool), WalkError> {
    history::since(o, tip, &[since], history::MAX_COMMITS)?;
    let mut walk = o.revwalk()?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME)?;
    walk.push(tip)?;
    walk.hide(since)?;
    let mut out = Vec::new();
    for id in walk {
        if out.len() == MAX_COMMITS {
            return Ok((out, true));
        }
        let id = id?;
        let c = o.find_commit(id)?;
        let subject = String::from_utf8_lossy(c.message_bytes())
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        out.push(Commit { id, subject });
    }
    Ok((out, false))
}

/// The patch, at most [`MAX_PATCH`] bytes of it (and whether it was cut there).
fn patch_text(d: &git2::Diff<'_>) -> Result<(Vec<u8>, bool), git2::Error> {
    let mut out = Vec::new();
    let mut cut = false;
    let printed = d.print(DiffFormat::Patch, |_, _, line| {
        if out.len() + line.content().len() + 1 > MAX_PATCH {
            cut = true;
            return false;
        }
        if matches!(line.origin(), '+' | '-' | ' ') {
            out.push(line.origin() as u8);
        }
        out.extend_from_slice(line.content());
        true
    });
    match printed {
        Ok(()) => Ok((out, false)),
        // The callback stopped it: the text so far.
        Err(_) if cut => Ok((out, true)),
        Err(e) => Err(e),
    }
}

fn files(d: &git2::Diff<'_>) -> Result<Vec<FileChange>, git2::Error> {
    let mut out = Vec::new();
    for (i, delta) in d.deltas().enumerate() {
        let path = |f: git2::DiffFile<'_>| f.path().map(|p| p.to_string_lossy().into_owned());
        let written = delta
            .new_file()
            .path_bytes()
            .or(delta.old_file().path_bytes());
        let new = path(delta.new_file());
        let old = path(delta.old_file());
        let status = match delta.status() {
            Delta::Added | Delta::Untracked => "added",
            Delta::Deleted => "deleted",
            Delta::Renamed => "renamed",
            Delta::Copied => "copied",
            Delta::Typechange => "typechange",
            _ => "modified",
        };
        let (additions, deletions, binary) = match git2::Patch::from_diff(d, i)? {
            Some(p) => {
                let (_, a, r) = p.line_stats()?;
                (a, r, p.delta().flags().is_binary())
            }
            None => (0, 0, true),
        };
        out.push(FileChange {
            path: new.clone().or(old.clone()).unwrap_or_default(),
            old_path: old
                .filter(|o| matches!(status, "renamed" | "copied") && Some(o) != new.as_ref()),
            status,
            additions,
            deletions,
            binary,
            flaw: written
                .filter(|_| status != "deleted")
                .and_then(super::scan::path_flaw),
        });
    }
    Ok(out)
}
