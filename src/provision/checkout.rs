//! Stage 2: make the box's checkout (worktree mode: `git worktree add`).
//!
//! Runs before the box exists, so the git CLI is safe here (with the usual pins).
//! New branches never track `origin/<base>`: a fresh box is not "ahead of origin".
//!
//! `git worktree add` reads every registration under `<common>/worktrees/`, and hangs
//! on one a box filled with a FIFO. Then the worktree is registered by hand — the
//! files `worktree add` writes — and checked out with git run in it alone, which
//! reads no other registration: one hostile box does not block every other.

use std::path::Path;

use crate::cmd::CmdError;
use crate::git::GitCli;
use crate::plan::Checkout;

/// `git worktree add` as the plan says. `base_commit` is the exact commit resolved at
/// planning time, so a concurrent fetch cannot move the start point.
pub fn add_worktree(
    git: &GitCli,
    common_dir: &Path,
    main_root: &Path,
    path: &Path,
    checkout: &Checkout,
    base_commit: Option<&str>,
) -> Result<(), CmdError> {
    if super::repair::blocking_registration(common_dir).is_some() {
        return add_by_hand(git, common_dir, main_root, path, checkout, base_commit);
    }
    let c = git.cmd(main_root).args(["worktree", "add", "--quiet"]);
    let c = match checkout {
        Checkout::NewBranch { branch, start } => c
            .args(["--no-track", "-b", branch])
            .arg(path.as_os_str())
            .arg(base_commit.unwrap_or(start)),
        Checkout::ExistingLocal { branch } => c.arg(path.as_os_str()).arg(branch),
        Checkout::FromRemote { branch, remote_ref } => c
            .args(["--track", "-b", branch])
            .arg(path.as_os_str())
            .arg(remote_ref),
        Checkout::Resume { .. } => return Ok(()),
        // Planned for clones only: a worktree needs a commit to check out.
        Checkout::Unborn { branch } => c.args(["--orphan", "-b", branch]).arg(path.as_os_str()),
    };
    c.output().map(|_| ())
}

/// What `git worktree add` does, without reading other registrations: the branch
/// (`update-ref`/`branch` read none), the admin dir (marked `initializing` until
/// whole, as git does), the `.git` pointer, then `read-tree -u` in the new worktree.
fn add_by_hand(
    git: &GitCli,
    common_dir: &Path,
    main_root: &Path,
    path: &Path,
    checkout: &Checkout,
    base_commit: Option<&str>,
) -> Result<(), CmdError> {
    let branch = match checkout {
        Checkout::NewBranch { branch, start } => {
            let full = format!("refs/heads/{branch}");
            let at = base_commit.unwrap_or(start);
            let c = git.cmd(main_root).args(["update-ref", &full, at, ""]);
            c.output()?;
            branch
        }
        Checkout::FromRemote { branch, remote_ref } => {
            let c = git.cmd(main_root).args(["branch", "--quiet", "--track"]);
            c.arg(branch).arg(remote_ref).output()?;
            branch
        }
        Checkout::ExistingLocal { branch } | Checkout::Unborn { branch } => branch,
        Checkout::Resume { .. } => return Ok(()),
    };
    let written = || -> std::io::Result<()> {
        let id = path.file_name().ok_or(std::io::ErrorKind::InvalidInput)?;
        let admin = std::path::absolute(common_dir.join("worktrees").join(id))?;
        let path = std::path::absolute(path)?;
        std::fs::create_dir_all(admin.parent().unwrap_or(&admin))?;
        // Never into a registration that exists: that name is another box's.
        std::fs::create_dir(&admin)?;
        std::fs::write(admin.join("locked"), "initializing\n")?;
        std::fs::write(admin.join("commondir"), "../..\n")?;
        let dotgit = path.join(".git");
        let mut gitdir = dotgit.clone().into_os_string().into_encoded_bytes();
        gitdir.push(b'\n');
        std::fs::write(admin.join("gitdir"), gitdir)?;
        std::fs::write(admin.join("HEAD"), format!("ref: refs/heads/{branch}\n"))?;
        std::fs::create_dir_all(&path)?;
        let mut pointer = b"gitdir: ".to_vec();
        pointer.extend(admin.clone().into_os_string().into_encoded_bytes());
        pointer.push(b'\n');
        std::fs::write(&dotgit, pointer)
    };
    written().map_err(|source| CmdError::Spawn {
        line: format!("register the worktree {} by hand", path.display()),
        source,
    })?;
    if !matches!(checkout, Checkout::Unborn { .. }) {
        let c = git.cmd(path).args(["read-tree", "--reset", "-u", "HEAD"]);
        c.output()?;
    }
    let admin = common_dir
        .join("worktrees")
        .join(path.file_name().unwrap_or_default());
    let _ = std::fs::remove_file(admin.join("locked"));
    Ok(())
}

/// Undo a checkout made by this run: remove the worktree and, when this run created
/// it, the branch. Best effort: used only on the way out of a failed create. With a
/// registration git would hang on, without git's worktree commands.
pub fn remove_worktree(
    git: &GitCli,
    common_dir: &Path,
    main_root: &Path,
    path: &Path,
    branch: Option<&str>,
) {
    if super::repair::blocking_registration(common_dir).is_some() {
        let admin = common_dir
            .join("worktrees")
            .join(path.file_name().unwrap_or_default());
        let ours = crate::git::repo::read_plain(&admin.join("gitdir"))
            .is_some_and(|t| Path::new(t.trim_end()) == path.join(".git"));
        let _ = std::fs::remove_dir_all(path);
        if ours {
            let _ = std::fs::remove_dir_all(&admin);
        }
        if let Some(b) = branch {
            let full = format!("refs/heads/{b}");
            let _ = git
                .cmd(main_root)
                .args(["update-ref", "-d", &full])
                .output();
        }
        return;
    }
    let _ = git
        .cmd(main_root)
        .args(["worktree", "remove", "--force", "--force"])
        .arg(path.as_os_str())
        .output();
    if path.exists() {
        let _ = std::fs::remove_dir_all(path);
        let _ = git.cmd(main_root).args(["worktree", "prune"]).output();
    }
    if let Some(b) = branch {
        let _ = git.cmd(main_root).args(["branch", "-D", "--", b]).output();
    }
}
