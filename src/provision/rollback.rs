//! Rollback and cleanup: undo a checkout `create` made when a later stage fails, tell a
//! full disk from other failures, and remove a throwaway cache Go made read-only.
//!
//! Invariant: only what this run made is removed (a resumed checkout is kept). Callers:
//! `apply`.

use std::path::Path;

use crate::names::Leaf;
use crate::plan::{Checkout, Plan};
use crate::vocab::GitMode;

use super::request::Context;
use super::{checkout, clone, Reporter};

/// Is the filesystem that would hold `path` (nearly) full? Asked after a failure, to
/// name the cause git's own message leaves out.
pub(super) fn disk_full(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let mut p = path;
    while !p.exists() {
        match p.parent() {
            Some(parent) => p = parent,
            None => return false,
        }
    }
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: statvfs writes into the zeroed struct we own; the path is NUL-terminated.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            return false;
        }
        (st.f_bavail as u64).saturating_mul(st.f_frsize as u64) < 1024 * 1024
    }
}

/// Go's module cache is read-only by design; make it writable so it can be removed.
pub(super) fn make_writable_and_remove(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fn walk(p: &Path) {
        if let Ok(m) = std::fs::symlink_metadata(p) {
            if m.is_dir() {
                let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700));
                if let Ok(rd) = std::fs::read_dir(p) {
                    for e in rd.flatten() {
                        walk(&e.path());
                    }
                }
            }
        }
    }
    walk(dir);
    std::fs::remove_dir_all(dir)
}

/// Undo the checkout `apply` made (a resumed one is kept) and the box's bookkeeping.
pub(super) fn undo_checkout(
    plan: &Plan,
    ctx: &Context,
    leaf: &Leaf,
    made_checkout: bool,
    reporter: &mut dyn Reporter,
) {
    let sandboxed = plan.git_mode == GitMode::Worktree && plan.runner.is_container();
    if made_checkout && (plan.git_mode == GitMode::Clone || sandboxed) {
        // The bare clone of a sandboxed worktree goes with the box's bookkeeping below.
        let _ = std::fs::remove_dir_all(&plan.path);
        let _ = clone::remove_pin(&ctx.repo.common_dir, &plan.name);
    } else if made_checkout {
        let _registration = crate::state::WaitedLock::acquire(&ctx.layout.registration_lock_path());
        let created_branch = record_created_branch(&plan.checkout);
        let (git, common) = (&ctx.git, &ctx.repo.common_dir);
        checkout::remove_worktree(git, common, &ctx.repo.main_root, &plan.path, created_branch);
    }
    let _ = std::fs::remove_dir_all(ctx.layout.box_state(leaf));
    reporter.note(format!("rolled back box `{leaf}`"));
}

fn record_created_branch(c: &Checkout) -> Option<&str> {
    match c {
        Checkout::NewBranch { branch, .. }
        | Checkout::FromRemote { branch, .. }
        | Checkout::Unborn { branch } => Some(branch),
        _ => None,
    }
}
