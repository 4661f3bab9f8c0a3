//! Boxes whose git data is their own, apart from the user's repository: a clone
//! (its `.git`) and a sandboxed worktree (a worktree of its own bare clone, SPEC §6).
//!
//! The box writes that git data, so the host reads it as hostile: through libgit2
//! only, after [`crate::git::repo::plain_git_dir`] has said no read can block, and —
//! for a sandboxed worktree — only at the paths the record names (the bare clone, and
//! its registration `<bare>/worktrees/<leaf>`), never where a `.git` pointer file or a
//! `commondir` the box rewrote would lead.

use std::path::{Path, PathBuf};

use crate::git::repo::{canonical, read_plain};
use crate::state::Record;
use crate::vocab::GitMode;

/// Where a box keeps its own git data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnGit {
    /// The repository's git dir: the clone's `.git`, or the bare clone.
    pub common: PathBuf,
    /// Where the checkout's HEAD and index are: the clone's `.git` again, or the
    /// worktree's registration in the bare clone.
    pub head_dir: PathBuf,
    /// The checkout.
    pub workdir: PathBuf,
}

impl OwnGit {
    /// The clone at `path`.
    pub fn clone_at(path: &Path) -> OwnGit {
        OwnGit {
            common: path.join(".git"),
            head_dir: path.join(".git"),
            workdir: path.to_path_buf(),
        }
    }

    /// A box's own git data, as its record names it; `None` for a worktree of the
    /// user's repository and a folder.
    pub fn of(record: &Record) -> Option<OwnGit> {
        match record.git_mode {
            GitMode::Clone => Some(OwnGit::clone_at(&record.path)),
            GitMode::Worktree => record.bare_clone.as_ref().map(|bare| OwnGit {
                common: bare.clone(),
                head_dir: bare.join("worktrees").join(&record.name),
                workdir: record.path.clone(),
            }),
            GitMode::Folder => None,
        }
    }

    /// A sandboxed worktree (rather than a clone).
    pub fn is_worktree(&self) -> bool {
        self.head_dir != self.common
    }

    /// Can every git dir a read opens be read without blocking, and does the
    /// registration point back at the bare clone (its `commondir` is `../..`)?
    /// And is none of it hostile as `list` judges it (a box `broken`)? Without that, a
    /// symlink out (the bare's `config`, the registration's `HEAD`, linked to the
    /// user's) would be read through by libgit2, and junk misread: `down` saw a box
    /// on the user's branch with nothing to lose, `bundle` nothing to bundle.
    ///
    /// One judgement, [`super::registration::hostile_own_git`] (which walks the git
    /// dirs with [`crate::git::repo::plain_git_dir`] and checks `commondir`): `list`
    /// asks it per box.
    pub fn readable(&self) -> bool {
        let is_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
        is_dir(&self.common)
            && (!self.is_worktree() || is_dir(&self.head_dir))
            && super::registration::hostile_own_git(self).is_none()
    }

    /// The registration's `commondir` names the bare clone (as `git worktree add`
    /// writes it, or as an absolute path to it).
    pub fn commondir_ok(&self) -> bool {
        read_plain(&self.head_dir.join("commondir")).is_some_and(|t| {
            let t = t.trim_end_matches(['\n', '\r']);
            t == "../.." || canonical(Path::new(t)) == canonical(&self.common)
        })
    }

    /// The checkout as libgit2 sees it (HEAD, index and work tree), when
    /// [`Self::readable`].
    pub fn open(&self) -> Option<git2::Repository> {
        if !self.readable() {
            return None;
        }
        if !self.is_worktree() {
            return git2::Repository::open(&self.workdir).ok();
        }
        let repo = git2::Repository::open(&self.head_dir).ok()?;
        repo.set_workdir(&self.workdir, false).ok()?;
        Some(repo)
    }

    /// The branch and tip checked out now (libgit2; runs nothing). An unborn branch
    /// (no commits yet) is named with no tip.
    pub fn head(&self) -> Option<(Option<String>, Option<git2::Oid>)> {
        self.head_and_time().map(|(b, tip, _)| (b, tip))
    }

    /// [`Self::head`], and the tip's commit time (seconds since the epoch), from one
    /// open of the box's git data (what `list` shows).
    pub fn head_and_time(&self) -> Option<(Option<String>, Option<git2::Oid>, Option<i64>)> {
        let r = self.open()?;
        let Ok(head) = r.head() else {
            let unborn = r
                .find_reference("HEAD")
                .ok()
                .and_then(|h| h.symbolic_target().ok().flatten().map(str::to_string))
                .and_then(|t| t.strip_prefix("refs/heads/").map(str::to_string));
            return Some((unborn, None, None));
        };
        let branch = head
            .shorthand()
            .ok()
            .map(str::to_string)
            .filter(|_| head.is_branch());
        let tip = head.target();
        let time = tip
            .and_then(|t| r.find_commit(t).ok())
            .map(|c| c.time().seconds());
        Some((branch, tip, time))
    }
}
