//! The `hooks` check: does the repository configure pre-commit without its hooks being
//! installed? Then commits run none of them, in the main checkout and in every box
//! (boxes run the repository's own hooks behind the guard, so they run what the main
//! checkout runs). Inside a box `pre-commit install` refuses (the guard sets
//! `core.hooksPath`), so the hint names the command that works there too.
//!
//! Reads two paths with `lstat`/`stat` and the repository's config through libgit2;
//! nothing of the repository is run.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use super::{Check, Status};
use crate::git::repo::Repo;
use crate::provision::guard::PRE_COMMIT_IN_A_BOX;

/// pre-commit's configuration file, at the top of the checkout.
const PRE_COMMIT_CONFIG: &str = ".pre-commit-config.yaml";

pub(super) fn check_hooks(repo: &Repo) -> Check {
    let config = repo.main_root.join(PRE_COMMIT_CONFIG);
    if !std::fs::symlink_metadata(&config).is_ok_and(|m| m.is_file()) {
        return Check::new("hooks", Status::Ok, "no pre-commit configuration to check");
    }
    let hook = repo_hooks_dir(repo).join("pre-commit");
    let installed =
        std::fs::metadata(&hook).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if installed {
        return Check::new(
            "hooks",
            Status::Ok,
            format!(
                "pre-commit hook installed at {}; boxes run it behind the guard",
                hook.display()
            ),
        );
    }
    Check::new(
        "hooks",
        Status::Advisory,
        format!(
            "{PRE_COMMIT_CONFIG} is here but no pre-commit hook is installed ({}): commits here and in every box run none of its hooks",
            hook.display()
        ),
    )
    .hint(format!(
        "Run `pre-commit install` in the main checkout (inside a box it refuses; there: `{PRE_COMMIT_IN_A_BOX}`)."
    ))
}

/// Where git runs the repository's hooks from in the main checkout: `core.hooksPath`
/// (relative to the checkout, `~/` expanded by libgit2), else `<common-dir>/hooks`.
fn repo_hooks_dir(repo: &Repo) -> PathBuf {
    let set = repo
        .git
        .config()
        .and_then(|c| c.get_path("core.hooksPath"))
        .ok()
        .filter(|p| !p.as_os_str().is_empty());
    match set {
        Some(p) => repo.main_root.join(p),
        None => repo.common_dir.join("hooks"),
    }
}
