//! Stage 2: make the box's checkout (worktree mode: `git worktree add`).
//!
//! Runs before the box exists, so the git CLI is safe here (with the usual pins).
//! New branches never track `origin/<base>`: a fresh box is not "ahead of origin".

use std::path::Path;

use crate::cmd::CmdError;
use crate::git::GitCli;
use crate::plan::Checkout;

/// `git worktree add` as the plan says. `base_commit` is the exact commit resolved at
/// planning time, so a concurrent fetch cannot move the start point.
pub fn add_worktree(
    git: &GitCli,
    main_root: &Path,
    path: &Path,
    checkout: &Checkout,
    base_commit: Option<&str>,
) -> Result<(), CmdError> {
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

/// Undo a checkout made by this run: remove the worktree and, when this run created
/// it, the branch. Best effort: used only on the way out of a failed create.
pub fn remove_worktree(git: &GitCli, main_root: &Path, path: &Path, branch: Option<&str>) {
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
