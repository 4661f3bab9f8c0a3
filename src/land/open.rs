//! A box's git, opened the way a host reads hostile data (SPEC §8.1, §8.4, §8.8).
//!
//! What is read: the box's branch tip (a worktree's from the user's repository, a
//! clone's or sandboxed worktree's from its own `HEAD`, read by treebox under the size
//! caps), its commits and trees through an object database made only of the stores
//! treebox gave the box ([`crate::git::objects::box_odb`], after
//! [`crate::provision::clone::check_clone_stores`]), and — when the checkout is there —
//! its index (size-capped) and working tree. The repository handle has no git dir:
//! nothing of the box's config, attributes file under its git dir, hooks or alternates
//! beyond the checked ones is consulted, and libgit2 runs no filter, textconv,
//! external diff, pager or fsmonitor. Callers: `land::diff`, `land::landed`.

use std::path::{Path, PathBuf};

use git2::Oid;

use crate::boxes::{BoxEntry, OwnGit};
use crate::git::caps::Caps;
use crate::git::Repo;

/// A box's git, opened for reading (see the module doc).
pub struct BoxGit {
    /// Objects only: the box's own store (a clone's, a sandboxed worktree's bare clone)
    /// and the user's. No refs, no config of the box.
    pub objects: git2::Repository,
    /// The branch checked out now, when it is one.
    pub branch: Option<String>,
    /// Its tip; `None` on an unborn branch.
    pub tip: Option<Oid>,
    /// The checkout and its index file, when both are there and within their caps.
    checkout: Option<(PathBuf, PathBuf)>,
}

/// Why a box's git was not read.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("box `{leaf}` has no record, so its base is unknown")]
    NoRecord { leaf: String },
    #[error("box `{leaf}`'s git data cannot be read safely (it is broken)")]
    Unreadable { leaf: String },
    #[error("box `{leaf}`'s git data reaches object stores it was not given")]
    Foreign {
        leaf: String,
        #[source]
        source: crate::provision::clone::BundleError,
    },
    #[error("could not read box `{leaf}`'s objects")]
    Objects {
        leaf: String,
        #[source]
        source: git2::Error,
    },
}

impl BoxGit {
    /// Open `entry`'s git (a box of `repo`).
    pub fn open(entry: &BoxEntry, repo: &Repo) -> Result<BoxGit, OpenError> {
        let leaf = || entry.leaf.to_string();
        let Some(record) = entry.record.as_ref() else {
            return Err(OpenError::NoRecord { leaf: leaf() });
        };
        let caps = Caps::of(&repo.common_dir);
        let user_objects = repo.common_dir.join("objects");
        if let Some(own) = OwnGit::of(record) {
            return open_own(entry, repo, &own).map_err(|e| e.named(leaf()));
        }
        let objects = odb_repo(&[&user_objects]).map_err(|source| OpenError::Objects {
            leaf: leaf(),
            source,
        })?;
        // A worktree of the user's repository: its registration says what it has
        // checked out (read under the caps); without one, the recorded branch.
        let admin = entry
            .admin_dir
            .as_ref()
            .filter(|a| crate::git::repo::plain_git_dir(a, &caps));
        let (branch, tip) = match admin.and_then(|a| crate::git::repo::read_plain(&a.join("HEAD")))
        {
            Some(head) => match head.trim().strip_prefix("ref: ") {
                Some(r) => {
                    let b = r.strip_prefix("refs/heads/").unwrap_or(r).to_string();
                    let tip = repo.local_branch(&b);
                    (Some(b), tip)
                }
                None => (None, Oid::from_str(head.trim()).ok()),
            },
            None => {
                let b = entry.shown_branch().map(str::to_string);
                let tip = b.as_deref().and_then(|b| repo.local_branch(b));
                (b, tip)
            }
        };
        let checkout = admin
            .filter(|_| entry.dir_exists)
            .and_then(|a| index_within(&a.join("index"), &caps))
            .map(|index| (entry.path.clone(), index));
        Ok(BoxGit {
            objects,
            branch,
            tip,
            checkout,
        })
    }

    /// Attach the checkout (working tree and index) to [`Self::objects`]; false when
    /// there is none to read.
    /// The git of a box whose work is already in `objects` (a box on another
    /// machine, brought back): `branch` at `tip`, no checkout.
    pub fn of_commit(objects: git2::Repository, branch: &str, tip: Oid) -> BoxGit {
        BoxGit {
            objects,
            branch: Some(branch.to_string()),
            tip: Some(tip),
            checkout: None,
        }
    }

    pub(crate) fn with_checkout(&self) -> Result<bool, git2::Error> {
        let Some((workdir, index)) = &self.checkout else {
            return Ok(false);
        };
        let mut index = git2::Index::open(index)?;
        self.objects.set_index(&mut index)?;
        self.objects.set_workdir(workdir, false)?;
        Ok(true)
    }
}

/// A clone's or sandboxed worktree's git: only at the paths its record names, after
/// the hostile-file judgement and the object-store check.
fn open_own(entry: &BoxEntry, repo: &Repo, own: &OwnGit) -> Result<BoxGit, Unnamed> {
    if !entry.dir_exists || !own.readable() {
        return Err(Unnamed::Unreadable);
    }
    crate::provision::clone::check_clone_stores(own, &repo.common_dir).map_err(Unnamed::Foreign)?;
    let (branch, tip) = own.head().ok_or(Unnamed::Unreadable)?;
    let own_objects = own.common.join("objects");
    let user_objects = repo.common_dir.join("objects");
    let objects = odb_repo(&[&own_objects, &user_objects]).map_err(Unnamed::Objects)?;
    let checkout =
        index_within(&own.head_dir.join("index"), &own.caps).map(|i| (own.workdir.clone(), i));
    Ok(BoxGit {
        objects,
        branch,
        tip,
        checkout,
    })
}

/// [`OpenError`] before the box's name is put on it.
enum Unnamed {
    Unreadable,
    Foreign(crate::provision::clone::BundleError),
    Objects(git2::Error),
}

impl Unnamed {
    fn named(self, leaf: String) -> OpenError {
        match self {
            Unnamed::Unreadable => OpenError::Unreadable { leaf },
            Unnamed::Foreign(source) => OpenError::Foreign { leaf, source },
            Unnamed::Objects(source) => OpenError::Objects { leaf, source },
        }
    }
}

/// A repository handle made of these object stores alone (no git dir, no refs, no
/// config but the user's global one).
fn odb_repo(stores: &[&Path]) -> Result<git2::Repository, git2::Error> {
    let odb = git2::Odb::new()?;
    for s in stores {
        let s = s
            .to_str()
            .ok_or_else(|| git2::Error::from_str("a path that is not UTF-8"))?;
        odb.add_disk_alternate(s)?;
    }
    git2::Repository::from_odb(odb)
}

/// `path`, when it is a regular file within the index cap.
fn index_within(path: &Path, caps: &Caps) -> Option<PathBuf> {
    std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.is_file() && m.len() <= caps.of_file("index"))
        .map(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::git;

    /// The handle with no git dir still diffs a working tree: tracked changes,
    /// untracked files, under the box's attributes (which name drivers that never run).
    #[test]
    fn an_objects_only_handle_diffs_a_checkout() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        git(r, &["init", "-q", "-b", "main"]);
        std::fs::write(r.join("a.txt"), "one\n").unwrap();
        std::fs::write(r.join(".gitattributes"), "*.txt diff=evil filter=evil\n").unwrap();
        git(r, &["add", "."]);
        git(r, &["commit", "-q", "-m", "one"]);
        let marker = r.join("ran");
        let cmd = format!("touch {}", marker.display());
        for key in [
            "diff.evil.textconv",
            "filter.evil.clean",
            "filter.evil.smudge",
            "diff.external",
            "core.fsmonitor",
        ] {
            git(r, &["config", key, &cmd]);
        }
        std::fs::write(r.join("a.txt"), "two\n").unwrap();
        std::fs::write(r.join("new.txt"), "new\n").unwrap();
        let head = Oid::from_str(&git(r, &["rev-parse", "HEAD"])).unwrap();
        let g = BoxGit {
            objects: odb_repo(&[&r.join(".git/objects")]).unwrap(),
            branch: Some("main".into()),
            tip: Some(head),
            checkout: Some((r.to_path_buf(), r.join(".git/index"))),
        };
        assert!(g.with_checkout().unwrap());
        let tree = g.objects.find_commit(head).unwrap().tree().unwrap();
        let mut opts = git2::DiffOptions::new();
        opts.include_untracked(true).show_untracked_content(true);
        let diff = g
            .objects
            .diff_tree_to_workdir_with_index(Some(&tree), Some(&mut opts))
            .unwrap();
        let mut text = Vec::new();
        diff.print(git2::DiffFormat::Patch, |_, _, l| {
            text.push(l.origin() as u8);
            text.extend_from_slice(l.content());
            true
        })
        .unwrap();
        let text = String::from_utf8_lossy(&text);
        assert!(
            text.contains("-one") && text.contains("+two") && text.contains("+new"),
            "{text}"
        );
        assert!(!marker.exists(), "a driver the box configured ran");
    }
}
