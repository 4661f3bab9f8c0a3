//! Checks and repairs of an existing box's checkout: finish an interrupted one
//! (`repair_checkout`), refuse one whose `.git` is gone ([`check_checkout`]), and
//! spot a worktree registration git would hang on.
//!
//! Invariant: git is never run in a checkout that may have run code (a completed one).
//! Callers: `apply::create`, `enter`, the CLI's `run`.

use std::path::{Path, PathBuf};

use crate::git::{GitCli, Repo};
use crate::plan::Checkout;
use crate::state::{Layout, Record};
use crate::vocab::GitMode;

use super::{checkout, clone, ProvisionError};

/// Finish the checkout of an interrupted box in place, so that what follows (guard,
/// `.env`, setup) works on a whole checkout. Only boxes whose setup never completed
/// are touched, and only their checkout, which no agent has used yet:
///
/// - worktree: a registration `git worktree add` left half made (still marked
///   `initializing`, or without an index) is removed and the worktree added again, on
///   the branch the interrupted run made (or from the recorded base commit);
/// - clone: a clone without its `.git` is made again; then its remotes, its branch and
///   its pin are made sure of.
pub(crate) fn repair_checkout(
    repo: &Repo,
    layout: &Layout,
    record: &Record,
) -> Result<bool, ProvisionError> {
    // A whole checkout may have run code: never run git in it again.
    if record.setup_completed || record.checkout_completed {
        return Ok(false);
    }
    let path = &record.path;
    if let Some(bare) = &record.bare_clone {
        // Nothing has run in it yet: make both again rather than judge half of each.
        for dir in [path, bare] {
            if std::fs::symlink_metadata(dir).is_ok() {
                std::fs::remove_dir_all(dir)
                    .map_err(super::error::io_err("could not remove", dir))?;
            }
        }
        super::sandboxed::make(
            repo,
            bare,
            path,
            &record.name,
            &recorded_checkout(repo, record),
            record.base_commit.as_deref(),
        )?;
        return Ok(true);
    }
    if record.git_mode == GitMode::Clone {
        return Ok(clone::repair(
            repo,
            path,
            &record.name,
            &recorded_checkout(repo, record),
            record.base_commit.as_deref(),
        )?);
    }
    let git = GitCli::for_repo(&repo.common_dir, None);
    let admin = repo.worktree_admin_dir(path);
    let half_made = match &admin {
        Some(a) => {
            // A box can write its registration: read as git keeps it, one short line.
            let locked = crate::git::repo::read_plain(&a.join("locked")).unwrap_or_default();
            locked.trim() == "initializing" || !a.join("index").exists() || !path.is_dir()
        }
        // A directory with nothing of git in it: the kill came before registration.
        None => {
            // Or during it: an admin dir made, marked `initializing`, not yet naming
            // the checkout. It goes, as git's own half-made one would.
            let named = repo
                .common_dir
                .join("worktrees")
                .join(path.file_name().unwrap_or_default());
            let locked = crate::git::repo::read_plain(&named.join("locked")).unwrap_or_default();
            if locked.trim() == "initializing" && !named.join("gitdir").exists() {
                let _ = std::fs::remove_dir_all(&named);
            }
            path.is_dir()
                && std::fs::read_dir(path)
                    .map(|mut d| d.next().is_none())
                    .unwrap_or(false)
        }
    };
    if !half_made {
        return Ok(false);
    }
    {
        let _registration = crate::state::WaitedLock::acquire(&layout.registration_lock_path());
        if let Some(a) = &admin {
            let _ = std::fs::remove_dir_all(a);
        }
        let _ = std::fs::remove_dir_all(path);
        let checkout = if repo.local_branch(&record.branch).is_some() {
            Checkout::ExistingLocal {
                branch: record.branch.clone(),
            }
        } else {
            Checkout::NewBranch {
                branch: record.branch.clone(),
                start: record.base_ref.clone().unwrap_or_default(),
            }
        };
        checkout::add_worktree(&git, repo, path, &checkout, record.base_commit.as_deref())
            .map_err(ProvisionError::Checkout)?;
    }
    Ok(true)
}

/// The checkout an interrupted create of a box that owns its git was making, from its
/// record.
fn recorded_checkout(repo: &Repo, record: &Record) -> Checkout {
    let branch = record.branch.clone();
    match (&record.base_commit, record.created_branch) {
        (Some(_), _) => Checkout::NewBranch {
            branch,
            start: record.base_ref.clone().unwrap_or_default(),
        },
        // Made with no base: from origin's branch, or with no commits at all.
        (None, true) if repo.remote_branch(&branch).is_some() => Checkout::FromRemote {
            remote_ref: format!("refs/remotes/origin/{branch}"),
            branch,
        },
        (None, true) => Checkout::Unborn { branch },
        (None, false) => Checkout::ExistingLocal { branch },
    }
}

/// A worktree registration whose files a read would block on (a FIFO a box planted in
/// its own admin dir): git itself would hang on it in `worktree add` and `fetch`.
pub fn blocking_registration(common_dir: &Path) -> Option<PathBuf> {
    let rd = std::fs::read_dir(common_dir.join("worktrees")).ok()?;
    let caps = crate::git::caps::Caps::of(common_dir);
    rd.flatten()
        .map(|e| e.path())
        .find(|admin| crate::boxes::registration_blocks(admin, &caps))
}

/// Refuse to run anything in a box whose `.git` is gone or is the wrong kind (a clone
/// has a directory, a worktree a pointer file): git run there would walk up to the
/// user's own repository, which the box sits inside. Folder boxes have no `.git`.
/// A worktree box whose registration holds hostile files (a FIFO, a symlink, junk) is
/// refused too: git there would hang or misread it.
pub fn check_checkout(record: &Record) -> Result<(), ProvisionError> {
    if let Some(admin) = crate::boxes::hostile_registration(record) {
        return Err(ProvisionError::BlockingRegistration {
            leaf: record.name.clone(),
            own: crate::boxes::OwnGit::of(record).is_some(),
            admin,
        });
    }
    if crate::boxes::checkout_intact(record) {
        return Ok(());
    }
    Err(ProvisionError::CheckoutBroken {
        leaf: record.name.clone(),
        path: record.path.clone(),
        repo: record.repo.clone(),
        clone: record.git_mode == GitMode::Clone,
    })
}
