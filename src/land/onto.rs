//! Putting a box's work onto its base branch (SPEC §10b, `git treebox land`).
//!
//! Everything happens in the user's repository, where the box's commits already are
//! (a worktree's branch) or have been fetched back to (`refs/hort/<name>/incoming`, the
//! only tip trusted for a clone or a sandboxed worktree). The order:
//!
//! 1. [`base_of`]: the base as it stands — local `<base>`, fast-forwarded to
//!    `origin/<base>` when it is behind; a local base that has diverged is refused.
//! 2. [`checkout_check`]: a base checked out in another worktree is refused, and so is
//!    the main checkout on the base with uncommitted changes to tracked files.
//! 3. [`compose`]: the new base commit, made in memory — libgit2 merges the trees (no
//!    merge driver, filter or hook runs, and the box's `.gitattributes` can name only
//!    libgit2's built-in drivers); `git commit-tree` writes the commit, so the user's
//!    identity and commit signing apply. A conflict leaves nothing behind but loose
//!    objects no ref names. What lands is what a reviewer would land (SPEC §8.11,
//!    [`super::scan`]): a tree or a commit of the history that lands writing a path
//!    under `.treebox/` or with terminal controls is refused; a replayed commit's
//!    message and author are made plain ([`crate::sanitize::message`]); a rebase never
//!    fast-forwards onto commits whose text carries controls (it replays them), and a
//!    merge, whose second parent brings the box's commits in as they are, refuses them
//!    (naming the commit: `--squash` and `--rebase` land the same work made plain). The
//!    box's history is walked at most [`scan::COMMIT_BUDGET`] commits deep ([`scan::history`],
//!    the capped walk of [`crate::git::history`], before libgit2's merge-base), and every
//!    tree is counted against [`crate::git::trees`]' budget before it is walked, merged
//!    or cherry-picked ([`Scan::on`], [`Scan::fits`]): over either, refused as too large.
//! 4. [`move_base`]: `git update-ref <base> NEW OLD` — a base that moved meanwhile
//!    fails cleanly — then the main checkout, when it is on the base, is brought
//!    along with `git read-tree -m -u OLD NEW` (a fast-forward of its files).
//!
//! Git runs through [`GitCli`]: exec-shaped keys a box may have planted in the shared
//! config are pinned to the user's own values. Callers: `cli/land.rs`.

use std::path::{Path, PathBuf};

use git2::{Oid, Repository};

use crate::cmd::CmdError;
use crate::git::cli::GitCli;
use crate::git::repo::read_plain;
use crate::git::Repo;
use crate::land::scan::{self, Refusal, Scan};

/// How the box's commits become the base's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// One new commit on the base with the box's whole change (the default).
    #[default]
    Squash,
    /// The box's commits replayed one by one onto the base (a fast-forward when the
    /// base has not moved since the box started); merge commits are left out, as
    /// `git rebase` leaves them out.
    Rebase,
    /// A merge commit of the base and the box's tip (always one, even where a
    /// fast-forward would do).
    Merge,
}

impl Strategy {
    pub const NAMES: [&'static str; 3] = ["squash", "rebase", "merge"];

    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Squash => "squash",
            Strategy::Rebase => "rebase",
            Strategy::Merge => "merge",
        }
    }
}

impl std::str::FromStr for Strategy {
    type Err = crate::vocab::UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "squash" => Ok(Strategy::Squash),
            "rebase" => Ok(Strategy::Rebase),
            "merge" => Ok(Strategy::Merge),
            _ => Err(crate::vocab::UnknownName {
                what: "land strategy",
                value: s.to_string(),
                expected: "squash, rebase, merge",
            }),
        }
    }
}

/// Why the work could not be landed. Nothing was changed, except where a variant
/// says otherwise.
#[derive(Debug, thiserror::Error)]
pub enum LandError {
    #[error("the base branch `{base}` exists neither here nor on origin")]
    NoBase { base: String },
    #[error("your `{base}` ({local}) and origin's ({origin}) have diverged: landing onto either would leave the other behind")]
    Diverged {
        base: String,
        local: String,
        origin: String,
    },
    #[error("`{base}` is checked out in another worktree, {}", .path.display())]
    CheckedOutElsewhere { base: String, path: PathBuf },
    #[error("your checkout of `{base}` has uncommitted changes")]
    DirtyCheckout { base: String },
    #[error("the box's work is already in `{base}`: nothing to land")]
    AlreadyIn { base: String },
    #[error("the box's branch and `{base}` share no history")]
    Unrelated { base: String },
    #[error("landing onto `{base}` conflicts in {}", conflict_list(.files))]
    Conflict { base: String, files: Vec<String> },
    #[error("`{base}` moved while landing (it is no longer {old}); nothing was changed")]
    BaseMoved { base: String, old: String },
    #[error("your checkout of `{base}` could not take the box's work without losing something of yours (an untracked file where the work adds one?)")]
    CheckoutInTheWay {
        base: String,
        #[source]
        source: CmdError,
    },
    #[error(
        "`{base}` now holds the box's work, but your checkout of it could not be brought along"
    )]
    CheckoutBehind {
        base: String,
        old: Oid,
        new: Oid,
        #[source]
        source: CmdError,
    },
    #[error("could not read the repository")]
    Git(#[from] git2::Error),
    #[error("git failed")]
    Cmd(#[from] CmdError),
    /// What would land is not what a reviewer would land (SPEC §8.11).
    #[error(transparent)]
    Refused(#[from] Refusal),
}

fn conflict_list(files: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut s = files
        .iter()
        .take(SHOWN)
        .map(|f| format!("`{f}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if files.len() > SHOWN {
        s.push_str(&format!(" and {} more", files.len() - SHOWN));
    }
    s
}

/// The base as the work will land on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    /// The branch name (`main`).
    pub name: String,
    /// Local `refs/heads/<name>` now; `None` when there is none yet.
    pub old: Option<Oid>,
    /// The commit the work lands on: the local base, or origin's when the local one
    /// is behind it (or missing).
    pub onto: Oid,
}

impl Base {
    pub fn refname(&self) -> String {
        format!("refs/heads/{}", self.name)
    }
}

/// Where `base` stands: local and origin's, reconciled (see [`Base::onto`]).
pub fn base_of(repo: &Repo, base: &str) -> Result<Base, LandError> {
    let local = repo.local_branch(base);
    let origin = repo.remote_branch(base);
    let onto = match (local, origin) {
        (None, None) => {
            return Err(LandError::NoBase {
                base: base.to_string(),
            })
        }
        (Some(l), None) => l,
        (None, Some(o)) => o,
        // Uncapped on purpose: the user's own refs (no box writes `refs/heads` or
        // `refs/remotes` of the user's repository), and a cap would refuse a user far
        // behind origin.
        (Some(l), Some(o)) if l == o || repo.git.graph_descendant_of(o, l)? => o,
        (Some(l), Some(o)) if repo.git.graph_descendant_of(l, o)? => l,
        (Some(l), Some(o)) => {
            return Err(LandError::Diverged {
                base: base.to_string(),
                local: short(l),
                origin: short(o),
            })
        }
    };
    Ok(Base {
        name: base.to_string(),
        old: local,
        onto,
    })
}

/// What landing will do to the main checkout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MainCheckout {
    /// It is on the base, clean: its files follow the base.
    FollowsBase,
    /// It is on another branch (or detached): only the ref moves.
    Elsewhere,
}

/// Refuse a base checked out in a worktree other than the main checkout, and a main
/// checkout on the base with uncommitted changes to tracked files (untracked files
/// stay; `read-tree` refuses to overwrite one).
pub fn checkout_check(repo: &Repo, git: &GitCli, base: &str) -> Result<MainCheckout, LandError> {
    let full = format!("ref: refs/heads/{base}");
    if let Some(path) = checked_out_elsewhere(&repo.common_dir, &full) {
        return Err(LandError::CheckedOutElsewhere {
            base: base.to_string(),
            path,
        });
    }
    if repo.main_branch().as_deref() != Some(base) {
        return Ok(MainCheckout::Elsewhere);
    }
    let status = git
        .cmd(&repo.main_root)
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()?;
    if !status.stdout.is_empty() {
        return Err(LandError::DirtyCheckout {
            base: base.to_string(),
        });
    }
    Ok(MainCheckout::FollowsBase)
}

/// The worktree (other than the main one) whose `HEAD` is `head_line`, by the
/// registrations under `<common>/worktrees/` (read size-capped, as plain files).
fn checked_out_elsewhere(common_dir: &Path, head_line: &str) -> Option<PathBuf> {
    let dir = std::fs::read_dir(common_dir.join("worktrees")).ok()?;
    dir.flatten().find_map(|e| {
        let head = read_plain(&e.path().join("HEAD"))?;
        (head.trim() == head_line).then(|| {
            read_plain(&e.path().join("gitdir"))
                .map(|g| PathBuf::from(g.trim()))
                .and_then(|g| g.parent().map(Path::to_path_buf))
                .unwrap_or_else(|| e.path())
        })
    })
}

/// The box's work as it lands: its tip and where its name comes from.
#[derive(Debug, Clone)]
pub struct Work<'a> {
    pub tip: Oid,
    /// The box's branch as it is now (for messages).
    pub branch: &'a str,
    pub leaf: &'a str,
}

/// The commit that becomes the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Composed {
    pub new: Oid,
    /// The box's commits that landed (merge commits of the box not counted).
    pub commits: usize,
    /// The base simply moves to the box's tip (rebase of a box the base did not move
    /// past).
    pub fast_forward: bool,
}

/// Make the new base commit (see the module doc); nothing but unreferenced objects is
/// written.
pub fn compose(
    repo: &Repo,
    git: &GitCli,
    strategy: Strategy,
    base: &Base,
    work: &Work,
) -> Result<Composed, LandError> {
    let r = &repo.git;
    let already = || LandError::AlreadyIn {
        base: base.name.clone(),
    };
    if work.tip == base.onto {
        return Err(already());
    }
    // Bounded before any merge-base walk: the box's side of the history, capped
    // (git::history); libgit2's merge-base below reads what that walk read, about.
    let history = scan::history(r, Some(base.onto), work.tip)?;
    if history.is_empty() {
        return Err(already());
    }
    let merge_base = r.merge_base(base.onto, work.tip).map_err(|e| {
        if e.code() == git2::ErrorCode::NotFound {
            LandError::Unrelated {
                base: base.name.clone(),
            }
        } else {
            e.into()
        }
    })?;
    let commits: Vec<Oid> = history
        .iter()
        .filter(|(_, merge)| !merge)
        .map(|(id, _)| *id)
        .collect();
    let all: Vec<Oid> = history.iter().map(|(id, _)| *id).collect();
    // Every tree below is counted against a budget scaled with the base's own tree
    // before it is walked, merged or cherry-picked.
    let mut scan = Scan::on(r, Some(base.onto))?;
    let sign = signs(r);
    let onto = r.find_commit(base.onto)?;
    let tip = r.find_commit(work.tip)?;
    // The box's own change, before libgit2 merges (and so expands) anything of it.
    let start = r.find_commit(merge_base)?.tree_id();
    scan.tree(Some(start), tip.tree_id(), None)?;
    match strategy {
        Strategy::Squash | Strategy::Merge => {
            if strategy == Strategy::Merge {
                // The box's commits become the base's history as they are.
                if let Some((id, field)) = scan.commits(&all)? {
                    return Err(Refusal::ControlText {
                        commit: scan::short(id),
                        field,
                    }
                    .into());
                }
            }
            scan.fits(&[start, onto.tree_id(), tip.tree_id()])?;
            let mut index = r.merge_commits(&onto, &tip, None)?;
            let tree = write_merged(r, &mut index, &base.name)?;
            if strategy == Strategy::Squash && tree == onto.tree_id() {
                return Err(already());
            }
            scan.tree(Some(onto.tree_id()), tree, None)?;
            let message = if strategy == Strategy::Squash {
                squash_message(r, work, &commits)
            } else {
                format!(
                    "Merge branch '{}' (box {})\n",
                    crate::sanitize::line(work.branch),
                    work.leaf
                )
            };
            let parents: Vec<Oid> = if strategy == Strategy::Squash {
                vec![base.onto]
            } else {
                vec![base.onto, work.tip]
            };
            let new = commit_tree(git, &repo.main_root, tree, &parents, &message, None, sign)?;
            Ok(Composed {
                new,
                commits: commits.len(),
                fast_forward: false,
            })
        }
        // A fast-forward, unless a commit's text carries controls: then replayed.
        Strategy::Rebase if merge_base == base.onto && scan.commits(&all)?.is_none() => {
            Ok(Composed {
                new: work.tip,
                commits: commits.len(),
                fast_forward: true,
            })
        }
        Strategy::Rebase => {
            let mut current = onto;
            let mut landed = 0;
            for id in &commits {
                let c = r.find_commit(*id)?;
                // The commit's parent may be a merge no check walked: all three sides.
                let parent = c.parent(0).ok().map(|p| p.tree_id());
                let sides: Vec<Oid> = parent
                    .into_iter()
                    .chain([current.tree_id(), c.tree_id()])
                    .collect();
                scan.fits(&sides)?;
                let mut index = r.cherrypick_commit(&c, &current, 0, None)?;
                let tree = write_merged(r, &mut index, &base.name)?;
                if tree == current.tree_id() {
                    // Already in the base (a commit cherry-picked there before).
                    continue;
                }
                scan.tree(Some(current.tree_id()), tree, Some(*id))?;
                let author = Author::plain(&c.author());
                let new = commit_tree(
                    git,
                    &repo.main_root,
                    tree,
                    &[current.id()],
                    &crate::sanitize::message(&String::from_utf8_lossy(c.message_bytes())),
                    Some(&author),
                    sign,
                )?;
                current = r.find_commit(new)?;
                landed += 1;
            }
            if current.id() == base.onto {
                return Err(already());
            }
            Ok(Composed {
                new: current.id(),
                commits: landed,
                fast_forward: false,
            })
        }
    }
}

/// The merged index as a tree; a conflict names its files.
fn write_merged(r: &Repository, index: &mut git2::Index, base: &str) -> Result<Oid, LandError> {
    if index.has_conflicts() {
        let mut files: Vec<String> = index
            .conflicts()?
            .flatten()
            .filter_map(|c| c.our.or(c.their).or(c.ancestor))
            .map(|e| crate::sanitize::line(&String::from_utf8_lossy(&e.path)))
            .collect();
        files.sort();
        files.dedup();
        return Err(LandError::Conflict {
            base: base.to_string(),
            files,
        });
    }
    Ok(index.write_tree_to(r)?)
}

/// A squash commit's message: one commit keeps its own; several are listed under the
/// branch's name. The box's text is made plain (no control characters).
fn squash_message(r: &Repository, work: &Work, commits: &[Oid]) -> String {
    let text = |id: &Oid| {
        r.find_commit(*id)
            .map(|c| String::from_utf8_lossy(c.message_bytes()).into_owned())
            .unwrap_or_default()
    };
    if let [only] = commits {
        let m = crate::sanitize::message(text(only).trim_end());
        return format!("{m}\n");
    }
    let mut m = format!(
        "{} ({} commits, box {})\n\n",
        crate::sanitize::line(work.branch),
        commits.len(),
        work.leaf
    );
    for id in commits {
        let t = text(id);
        let subject = t.lines().next().unwrap_or("").trim();
        m.push_str(&format!("* {}\n", crate::sanitize::line(subject)));
    }
    m
}

/// A replayed commit's author, made plain (no control character reaches `git log`).
struct Author {
    name: String,
    email: String,
    when: git2::Time,
}

impl Author {
    fn plain(a: &git2::Signature) -> Author {
        let plain = |b: &[u8]| crate::sanitize::line(&String::from_utf8_lossy(b));
        Author {
            name: plain(a.name_bytes()),
            email: plain(a.email_bytes()),
            when: a.when(),
        }
    }
}

/// `git commit-tree`: the user's identity as committer (and author, unless `author` is
/// kept from a replayed commit), the user's signing settings.
fn commit_tree(
    git: &GitCli,
    dir: &Path,
    tree: Oid,
    parents: &[Oid],
    message: &str,
    author: Option<&Author>,
    sign: bool,
) -> Result<Oid, LandError> {
    let mut c = git.cmd(dir).arg("commit-tree").arg(tree.to_string());
    for p in parents {
        c = c.arg("-p").arg(p.to_string());
    }
    c = c.args(["-F", "-"]);
    if sign {
        c = c.arg("-S");
    }
    if let Some(a) = author {
        let when = a.when;
        let off = when.offset_minutes();
        let sign = if off < 0 { '-' } else { '+' };
        c = c
            .env("GIT_AUTHOR_NAME", &a.name)
            .env("GIT_AUTHOR_EMAIL", &a.email)
            .env(
                "GIT_AUTHOR_DATE",
                format!(
                    "@{} {sign}{:02}{:02}",
                    when.seconds(),
                    off.abs() / 60,
                    off.abs() % 60
                ),
            );
    }
    let out = c.stdin_bytes(message.as_bytes().to_vec()).output()?;
    let id = String::from_utf8_lossy(&out.stdout);
    Ok(Oid::from_str(id.trim())?)
}

/// Does the user sign their commits (`commit.gpgSign`)? `commit-tree` signs only when
/// told (unlike `commit`, it ignores the setting); `user.signingKey` names the key.
fn signs(r: &Repository) -> bool {
    r.config()
        .and_then(|c| c.get_bool("commit.gpgsign"))
        .unwrap_or(false)
}

/// Move the base from `base.old` to `new`, and bring the main checkout along when it is
/// on the base ([`MainCheckout::FollowsBase`]).
pub fn move_base(
    repo: &Repo,
    git: &GitCli,
    base: &Base,
    new: Oid,
    leaf: &str,
    main: MainCheckout,
) -> Result<(), LandError> {
    let old = base.old.map(|o| o.to_string()).unwrap_or_default();
    // The checkout's files must follow without loss (an untracked file of the user's
    // where the work adds one, a change made since the check): asked before the base
    // moves, so a refusal changes nothing.
    let follow = |dry: bool| {
        let mut c = git.cmd(&repo.main_root).args(["read-tree", "-m", "-u"]);
        if dry {
            c = c.arg("--dry-run");
        }
        c.arg(old.as_str()).arg(new.to_string()).output()
    };
    let follows = main == MainCheckout::FollowsBase && base.old.is_some();
    if follows {
        follow(true).map_err(|source| LandError::CheckoutInTheWay {
            base: base.name.clone(),
            source,
        })?;
    }
    let moved = git
        .cmd(&repo.main_root)
        .args(["update-ref", "-m"])
        .arg(format!("treebox land: {leaf}"))
        .arg(base.refname())
        .arg(new.to_string())
        .arg(&old)
        .output();
    if moved.is_err() {
        return Err(LandError::BaseMoved {
            base: base.name.clone(),
            old: if old.is_empty() {
                "absent".into()
            } else {
                short_str(&old)
            },
        });
    }
    if let (true, Some(old)) = (follows, base.old) {
        follow(false).map_err(|source| LandError::CheckoutBehind {
            base: base.name.clone(),
            old,
            new,
            source,
        })?;
    }
    Ok(())
}

fn short(o: Oid) -> String {
    short_str(&o.to_string())
}

fn short_str(s: &str) -> String {
    s.chars().take(12).collect()
}

#[cfg(test)]
mod tests;
