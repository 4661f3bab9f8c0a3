//! Clone mode (SPEC §6): a box that is its own repository, for agents that commit,
//! branch and push alone while the user's repository is never written by them.
//!
//! - `git clone --shared` borrows the user's object store (alternates), so the clone
//!   costs about what a worktree costs; it has its own writable `.git`.
//! - NAME becomes a branch in the clone only: the user's repository gets no
//!   `refs/heads/NAME`.
//! - Remotes: `origin` is the user's `origin` URL (none when the repository has none);
//!   `hort-base` is the user's repository, fetch only — its push URL cannot resolve, so
//!   a push through it fails and writes nothing.
//! - A pin `refs/hort/<name>/base` in the user's repository (written with libgit2)
//!   names the commit the clone started from, so `git gc` there never drops an object
//!   the clone borrows. Removing the box removes exactly that pin.
//!
//! The clone is made and checked out before the box ever runs; after that, the host
//! reads it only through libgit2.

use std::path::Path;

use crate::cmd::CmdError;
use crate::git::{GitCli, Repo};
use crate::plan::Checkout;

pub use crate::boxes::{clone_head, open_clone, OwnGit};

/// The fetch-only remote naming the user's repository.
pub const BASE_REMOTE: &str = "hort-base";

/// A push URL that cannot resolve: pushes through `hort-base` fail.
pub const NO_PUSH_URL: &str = "/dev/null/hort-base-is-fetch-only";

#[derive(Debug, thiserror::Error)]
pub enum CloneError {
    #[error("git clone failed")]
    Clone(#[source] CmdError),
    #[error("could not check out `{branch}` in the clone")]
    Checkout {
        branch: String,
        #[source]
        source: CmdError,
    },
    #[error("could not set up the clone's remotes")]
    Remotes(#[source] git2::Error),
    #[error("could not write the pin {name}")]
    Pin {
        name: String,
        #[source]
        source: git2::Error,
    },
}

/// The pin ref for a box.
pub fn pin_ref(leaf: &str) -> String {
    format!("refs/hort/{leaf}/base")
}

/// The quarantined import ref for a box's returned work.
pub fn incoming_ref(leaf: &str) -> String {
    format!("refs/hort/{leaf}/incoming")
}

/// Make the clone at `path` and check out the plan's branch in it.
/// Returns the commit the clone's branch starts at (none for an [`Checkout::Unborn`]
/// branch: the repository has no commits yet).
pub fn make_clone(
    repo: &Repo,
    path: &Path,
    checkout: &Checkout,
    base_commit: Option<&str>,
) -> Result<Option<git2::Oid>, CloneError> {
    // The user's repository may carry config a box wrote (worktree boxes share it):
    // pin its upload-pack like every other fetch-like command.
    let git = GitCli::for_repo(&repo.common_dir, None);
    git.cmd(&repo.main_root)
        // No template: the clone's .git gets no sample hooks, only what git needs.
        .args([
            "clone",
            "--shared",
            "--no-checkout",
            "--quiet",
            "--template=",
        ])
        .arg(format!(
            "--upload-pack={}",
            git.upload_pack_arg("origin")
                .map(|a| a.trim_start_matches("--upload-pack=").to_string())
                .unwrap_or_else(|| "git-upload-pack".into())
        ))
        .arg("--")
        .arg(repo.main_root.as_os_str())
        .arg(path.as_os_str())
        .output()
        .map_err(CloneError::Clone)?;
    set_remotes(repo, path).map_err(CloneError::Remotes)?;
    let (branch, start) = match checkout {
        Checkout::NewBranch { branch, start } => (
            branch.clone(),
            base_commit
                .and_then(|c| git2::Oid::from_str(c).ok())
                .or_else(|| repo.git.refname_to_id(start).ok()),
        ),
        Checkout::ExistingLocal { branch } => (branch.clone(), repo.local_branch(branch)),
        Checkout::FromRemote { branch, .. } => (branch.clone(), repo.remote_branch(branch)),
        Checkout::Resume { branch } => (branch.clone(), None),
        Checkout::Unborn { branch } => {
            check_out(path, branch, None, false)?;
            return Ok(None);
        }
    };
    let Some(start) = start else {
        return Err(CloneError::Checkout {
            branch,
            source: CmdError::Failed {
                line: "resolve start commit".into(),
                status: std::os::unix::process::ExitStatusExt::from_raw(256),
                stderr: "the start commit is not in the repository".into(),
            },
        });
    };
    // `-B`: `git clone` already made the repository's current branch in the clone,
    // and a brand-new clone has nothing on it to lose.
    check_out(path, &branch, Some(start), true)?;
    Ok(Some(start))
}

/// `git checkout -b BRANCH [START]` in a clone this run made or is repairing (`-B`
/// when `reset`): its own config is what `git clone` and treebox wrote. Without a
/// start the branch is unborn.
fn check_out(
    path: &Path,
    branch: &str,
    start: Option<git2::Oid>,
    reset: bool,
) -> Result<(), CloneError> {
    let clone_git = GitCli::for_repo(&path.join(".git"), None);
    let mut c = clone_git.cmd(path).args([
        "checkout",
        "--quiet",
        "--no-track",
        if reset { "-B" } else { "-b" },
        branch,
    ]);
    if let Some(start) = start {
        c = c.arg(start.to_string());
    }
    c.output().map_err(|source| CloneError::Checkout {
        branch: branch.to_string(),
        source,
    })?;
    Ok(())
}

/// Make an interrupted clone whole (see `repair_checkout`): re-clone when its `.git`
/// is missing, set its remotes, check out its branch, write its pin. Returns whether
/// anything was done.
pub fn repair(
    repo: &Repo,
    path: &Path,
    leaf: &str,
    checkout: &Checkout,
    base_commit: Option<&str>,
) -> Result<bool, CloneError> {
    let git_dir = path.join(".git");
    if !std::fs::symlink_metadata(&git_dir).is_ok_and(|m| m.is_dir()) {
        let _ = std::fs::remove_dir_all(path);
        if let Some(start) = make_clone(repo, path, checkout, base_commit)? {
            write_pin(repo, leaf, start)?;
        }
        return Ok(true);
    }
    // Always: a kill between renaming `origin` to `hort-base` and setting its push
    // URL leaves a `hort-base` that could push into the user's repository.
    let unsafe_base = git2::Repository::open(path)
        .map_err(CloneError::Remotes)?
        .find_remote(BASE_REMOTE)
        .map_or(true, |r| r.pushurl_bytes() != Some(NO_PUSH_URL.as_bytes()));
    set_remotes(repo, path).map_err(CloneError::Remotes)?;
    let mut changed = unsafe_base;
    let branch = checkout.branch();
    let start = match checkout {
        Checkout::ExistingLocal { branch } => repo.local_branch(branch),
        Checkout::FromRemote { branch, .. } => repo.remote_branch(branch),
        _ => base_commit.and_then(|c| git2::Oid::from_str(c).ok()),
    };
    let on_branch = clone_head(path).and_then(|(b, _)| b).as_deref() == Some(branch);
    if !on_branch {
        match (start, checkout) {
            (Some(start), _) => check_out(path, branch, Some(start), true)?,
            (None, Checkout::Unborn { .. }) => check_out(path, branch, None, false)?,
            (None, _) => return Ok(changed),
        }
        changed = true;
    }
    if let Some(start) = start {
        if repo.git.refname_to_id(&pin_ref(leaf)).ok() != Some(start) {
            write_pin(repo, leaf, start)?;
            changed = true;
        }
    }
    Ok(changed)
}

/// `origin` → `hort-base` (fetch only), and `origin` = the user's origin URL.
fn set_remotes(repo: &Repo, path: &Path) -> Result<(), git2::Error> {
    let clone = git2::Repository::open(path)?;
    if clone.find_remote(BASE_REMOTE).is_err() {
        if clone.find_remote("origin").is_ok() {
            let problems = clone.remote_rename("origin", BASE_REMOTE)?;
            drop(problems);
        } else {
            clone.remote(BASE_REMOTE, &repo.main_root.to_string_lossy())?;
        }
    }
    clone.remote_set_pushurl(BASE_REMOTE, Some(NO_PUSH_URL))?;
    let origin_url = repo
        .git
        .find_remote("origin")
        .ok()
        .and_then(|r| r.url().ok().map(str::to_string));
    if let Some(url) = origin_url {
        if clone.find_remote("origin").is_err() {
            clone.remote("origin", &url)?;
        }
    }
    Ok(())
}

/// Pin the clone's start commit in the user's repository (no-op when there is none).
pub fn write_pin(repo: &Repo, leaf: &str, start: git2::Oid) -> Result<(), CloneError> {
    let name = pin_ref(leaf);
    repo.git
        .reference(
            &name,
            start,
            true,
            "treebox: pin the objects a clone borrows",
        )
        .map(|_| ())
        .map_err(|source| CloneError::Pin { name, source })
}

/// Remove a box's pin from the repository at `common_dir`. Its incoming ref stays:
/// that is work the user fetched back, and theirs now (`refs/hort` keeps no reflog,
/// so deleting it would leave the commits to the next `git gc`).
pub fn remove_pin(common_dir: &Path, leaf: &str) -> Result<(), git2::Error> {
    let repo = git2::Repository::open(common_dir)?;
    let found = repo.find_reference(&pin_ref(leaf));
    match found {
        Ok(mut r) => r.delete(),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("could not read the clone at {}", .path.display())]
    Open {
        path: std::path::PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("the clone has no branch checked out")]
    NoBranch,
    /// The box's git data holds hostile files (the box is `broken`).
    #[error("{} holds a FIFO, a device, a link, junk or a file past its size cap where git keeps a file: the box is broken", .path.display())]
    Broken { path: std::path::PathBuf },
    #[error("nothing to bundle: the box's branch has no commits beyond the repository's")]
    Empty,
    #[error("could not pack the box's commits")]
    Pack(#[source] git2::Error),
    #[error(transparent)]
    Import(CmdError),
    /// The box's git dir reaches object stores treebox did not give it.
    #[error(transparent)]
    ForeignObjects(crate::git::objects::ForeignObjects),
    #[error("could not write {}", .path.display())]
    Write {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// An object the box would bring back is over the cap, or its new trees or
    /// commits are too many to check (SPEC §8.10).
    #[error(transparent)]
    TooLarge(crate::git::blobs::Oversized),
    #[error("the box has more than {0} commits the repository lacks: too many to bring back")]
    TooManyCommits(usize),
    /// Fetching would move `incoming` off commits nothing else in the repository keeps.
    #[error("{incoming} holds {old}, which no branch or tag of the repository keeps, and `{branch}` does not build on it: fetching would drop it")]
    WouldDrop {
        incoming: String,
        old: git2::Oid,
        branch: String,
    },
}

/// Refuse to move `refs/hort/<leaf>/incoming` to `bundle`'s tip when the commit it
/// names now would be kept by nothing: not the new tip's ancestor (asked of `both`, a
/// repository with the box's objects and the user's: the box's own git data, which
/// has both when the box built on it) and not on any local branch
/// or tag of the user's repository. A fetch of another branch of the box, or after a
/// rewrite in it, would otherwise lose work brought back earlier and not merged yet.
pub fn check_incoming_kept(
    repo: &Repo,
    leaf: &str,
    both: Option<&git2::Repository>,
    bundle: &Bundle,
) -> Result<(), BundleError> {
    let incoming = incoming_ref(leaf);
    let Ok(old) = repo.git.refname_to_id(&incoming) else {
        return Ok(());
    };
    if old == bundle.tip {
        return Ok(());
    }
    let builds_on = both
        .and_then(|r| crate::git::history::within(r, old, bundle.tip).ok())
        .unwrap_or(false);
    if builds_on {
        return Ok(());
    }
    let kept = repo
        .git
        .references()
        .map(|refs| {
            refs.flatten()
                .filter(|r| {
                    let name = r.name_bytes();
                    name.starts_with(b"refs/heads/") || name.starts_with(b"refs/tags/")
                })
                .filter_map(|r| r.peel_to_commit().ok().map(|c| c.id()))
                .any(|tip| tip == old || repo.git.graph_descendant_of(tip, old).unwrap_or(false))
        })
        .unwrap_or(false);
    if kept {
        return Ok(());
    }
    Err(BundleError::WouldDrop {
        incoming,
        old,
        branch: bundle.branch.clone(),
    })
}

/// What a bundle holds.
#[derive(Debug, Clone)]
pub struct Bundle {
    pub path: std::path::PathBuf,
    pub branch: String,
    pub tip: git2::Oid,
    /// Commits the receiving repository must already have.
    pub prerequisites: Vec<git2::Oid>,
    pub commits: usize,
}

/// Refuse a box whose git dir (a clone's `.git`, a sandboxed worktree's bare clone)
/// reaches object stores other than its own and the user's
/// (`<user_common_dir>/objects`, which treebox wrote into its alternates): see
/// [`crate::git::objects`].
pub fn check_clone_stores(own: &OwnGit, user_common_dir: &Path) -> Result<(), BundleError> {
    // A sandboxed worktree is read from its registration: a `commondir` there naming
    // anything but the bare clone (the user's git dir, another box's) would lead the
    // read to refs and objects the box was never given — refused like a `commondir`
    // in the bare clone, not merely found unreadable.
    let commondir = own.head_dir.join("commondir");
    if own.is_worktree() && std::fs::symlink_metadata(&commondir).is_ok() {
        let plain = std::fs::symlink_metadata(&commondir).is_ok_and(|m| m.is_file());
        if !plain || !own.commondir_ok() {
            return Err(BundleError::ForeignObjects(
                crate::git::objects::ForeignObjects {
                    path: commondir,
                    why: "points the repository at another git dir".into(),
                },
            ));
        }
    }
    crate::git::objects::check_stores(&own.common, &user_common_dir.join("objects"))
        .map_err(BundleError::ForeignObjects)
}

/// Write a git bundle (v2) of the box's branch to `out`, with libgit2 only, and no
/// git process ever under the box's own config. `own` is a clone or a sandboxed
/// worktree ([`OwnGit`]). Objects are read from the box's own store and the user's
/// alone ([`crate::git::objects::box_odb`]), after [`check_clone_stores`] (and checked
/// again once packed, before anything is written). Commits the user's repository
/// already has are left out and named as prerequisites.
pub fn write_bundle(
    own: &OwnGit,
    user_common_dir: &Path,
    out: &Path,
) -> Result<Bundle, BundleError> {
    // First: a FIFO at the alternates is a hostile store, not merely an unreadable one.
    check_clone_stores(own, user_common_dir)?;
    let open_err = |source| BundleError::Open {
        path: own.workdir.clone(),
        source,
    };
    if !own.readable() {
        let path = crate::boxes::hostile_own_git(own).unwrap_or_else(|| own.common.clone());
        return Err(BundleError::Broken { path });
    }
    let clone = own
        .open()
        .ok_or_else(|| open_err(git2::Error::from_str("it cannot be opened")))?;
    let head = match clone.head() {
        Ok(h) => h,
        // No commits yet: nothing to bring back.
        Err(e) if e.code() == git2::ErrorCode::UnbornBranch => return Err(BundleError::Empty),
        Err(_) => return Err(BundleError::NoBranch),
    };
    if !head.is_branch() {
        return Err(BundleError::NoBranch);
    }
    let branch = head
        .shorthand()
        .map_err(|_| BundleError::NoBranch)?
        .to_string();
    let tip = head.target().ok_or(BundleError::NoBranch)?;
    // The refs are the clone's; its objects come from the two stores it was given.
    let clone = crate::git::objects::box_odb(&own.common, &user_common_dir.join("objects"))
        .map_err(open_err)?;
    let user = git2::Repository::open(user_common_dir).ok();
    let user_odb = user.as_ref().and_then(|u| u.odb().ok());
    let in_user = |oid: git2::Oid| user_odb.as_ref().is_some_and(|o| o.exists(oid));
    if in_user(tip) {
        return Err(BundleError::Empty);
    }
    // Walk the box's new commits; stop at commits the user's repository has.
    let mut walk = clone.revwalk().map_err(BundleError::Pack)?;
    walk.push(tip).map_err(BundleError::Pack)?;
    let mut new_commits = Vec::new();
    let mut prerequisites = Vec::new();
    let mut stack = vec![tip];
    let mut seen = std::collections::HashSet::new();
    // Bounded: at most MAX_READ new commits, each read only once its header says it
    // is within the cap, and then every new blob's size from its header.
    let cap = crate::git::blobs::cap_for(user_common_dir);
    let too_large = |e: crate::git::blobs::Oversized| match e {
        crate::git::blobs::Oversized::Git(e) => BundleError::Pack(e),
        e => BundleError::TooLarge(e),
    };
    while let Some(oid) = stack.pop() {
        if !seen.insert(oid) {
            continue;
        }
        if in_user(oid) {
            prerequisites.push(oid);
            continue;
        }
        new_commits.push(oid);
        if new_commits.len() > crate::git::history::MAX_READ {
            return Err(BundleError::TooManyCommits(crate::git::history::MAX_READ));
        }
        crate::git::blobs::header_within(&clone, oid, cap).map_err(too_large)?;
        let c = clone.find_commit(oid).map_err(BundleError::Pack)?;
        stack.extend(c.parent_ids());
    }
    crate::git::blobs::check_new(&clone, &new_commits, &in_user, cap).map_err(too_large)?;
    let mut hide = clone.revwalk().map_err(BundleError::Pack)?;
    hide.push(tip).map_err(BundleError::Pack)?;
    for p in &prerequisites {
        hide.hide(*p).map_err(BundleError::Pack)?;
    }
    let mut pb = clone.packbuilder().map_err(BundleError::Pack)?;
    pb.insert_walk(&mut hide).map_err(BundleError::Pack)?;
    let mut pack = git2::Buf::new();
    pb.write_buf(&mut pack).map_err(BundleError::Pack)?;
    // A store swapped while it was read is refused too.
    check_clone_stores(own, user_common_dir)?;
    let mut data = b"# v2 git bundle\n".to_vec();
    for p in &prerequisites {
        data.extend_from_slice(format!("-{p}\n").as_bytes());
    }
    data.extend_from_slice(format!("{tip} refs/heads/{branch}\n\n").as_bytes());
    data.extend_from_slice(&pack);
    crate::state::atomic::write(out, &data, 0o644).map_err(|source| BundleError::Write {
        path: out.to_path_buf(),
        source,
    })?;
    Ok(Bundle {
        path: out.to_path_buf(),
        branch,
        tip,
        prerequisites,
        commits: new_commits.len(),
    })
}

/// Import a bundle of box `leaf` (whose own git data is `own`) into
/// `refs/hort/<leaf>/incoming` of the user's repository — a quarantined ref, never a
/// branch. git runs in the user's repository (with the usual pins), never in the box,
/// and `git fetch` from a bundle file adds only the objects the bundle holds (its
/// prerequisites must already be there). The clone's stores are checked once more
/// first: whatever wrote the bundle, a box reaching another store imports nothing.
pub fn import_bundle(
    repo: &Repo,
    leaf: &str,
    own: &OwnGit,
    user_common_dir: &Path,
    bundle: &Bundle,
) -> Result<(), BundleError> {
    check_clone_stores(own, user_common_dir)?;
    let git = GitCli::for_repo(&repo.common_dir, None);
    git.cmd(&repo.main_root)
        .args(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head"])
        .arg(bundle.path.as_os_str())
        .arg(format!(
            "+refs/heads/{}:{}",
            bundle.branch,
            incoming_ref(leaf)
        ))
        .output()
        .map(|_| ())
        .map_err(BundleError::Import)
}
