//! Names treebox gives its hooks directories in a repository's git data: on-disk
//! layout that `provision::guard` writes (the guard and its hook links) and that
//! `runner::oci` mounts read-only into a box's container. One spelling, here; and the
//! note beside the guard that says what the directory is.

/// Name of the hooks directory inside a worktree's private git dir.
pub const HOOKS_DIR_NAME: &str = "treebox-hooks";

/// Name of the note beside the guard in every hooks dir: what the directory is, and
/// how to install a hook manager that refuses to run while `core.hooksPath` is set.
pub const HOOKS_README_NAME: &str = "README";

/// The command that installs pre-commit's hooks from inside a box. `pre-commit install`
/// refuses whenever `git config core.hooksPath` prints anything; this hides the box's
/// value from that one question (for this one command) and changes nothing else:
/// pre-commit then writes where git keeps the repository's hooks
/// (`git rev-parse --git-common-dir`/hooks), and the guard runs them.
pub const PRE_COMMIT_IN_A_BOX: &str =
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0= pre-commit install";

/// The note written beside the guard ([`HOOKS_README_NAME`]).
fn note() -> String {
    format!(
        "This directory is treebox's pre-push guard for one box: git runs hooks from here\n\
         because the box's core.hooksPath names it. Every hook name here is the guard. As\n\
         pre-push it refuses to push treebox/* placeholder branches (rename first:\n\
         git branch -m <name>); then, for every hook, it runs the repository's own hook of\n\
         the same name (chained/ holds hooks a hook manager wrote here, moved aside).\n\
         \n\
         pre-commit: `pre-commit install` refuses while core.hooksPath is set, and the\n\
         `git config --unset-all core.hooksPath` it suggests does nothing here. In a box,\n\
         install pre-commit's hooks with\n\
         \n    {PRE_COMMIT_IN_A_BOX}\n\n\
         They go where git keeps the repository's hooks, and the guard runs them. Do not\n\
         unset the box's core.hooksPath: that switches the guard off.\n"
    )
}

/// Write the note into the hooks dir `hooks` unless it is already there, whole,
/// through [`super::atomic`]'s temp file and rename, so whatever stands at its name, a
/// link included, is replaced, never followed. Nothing is written when `hooks` is not
/// a plain directory.
pub fn write_note(hooks: &std::path::Path) -> std::io::Result<()> {
    use std::fs;
    if !fs::symlink_metadata(hooks).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    let path = hooks.join(HOOKS_README_NAME);
    let text = note();
    let current = fs::symlink_metadata(&path)
        .ok()
        .filter(|m| m.is_file() && m.len() == text.len() as u64)
        .and_then(|_| fs::read(&path).ok());
    if current.as_deref() == Some(text.as_bytes()) {
        return Ok(());
    }
    // A note: regenerated on every open, so not worth an fsync.
    super::atomic::write_unsynced(&path, text.as_bytes(), 0o644)
}
