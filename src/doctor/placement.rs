//! Where container boxes' checkouts sit, as the `boxes` check reports it: a container
//! box made before checkouts moved out of the working tree (its checkout still under
//! `<repo>/.treebox/worktrees/`, where the user's own tools walk), with the way out;
//! and a checkouts root on another file system than the repository, where warming a
//! new box cannot share the main checkout's build outputs by reflink.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{Check, Status};
use crate::boxes::BoxEntry;
use crate::git::repo::Repo;
use crate::state::Layout;

/// The advisory about placement, if there is one to give.
pub(super) fn check(repo: &Repo, layout: &Layout, all: &[BoxEntry]) -> Option<Check> {
    let inside: Vec<String> = all
        .iter()
        .filter(|e| e.record.as_ref().is_some_and(|r| layout.in_working_tree(r)))
        .map(|e| e.leaf.to_string())
        .collect();
    if let Some(first) = inside.first() {
        let q = crate::cmd::quote(first);
        return Some(
            Check::new(
                "boxes",
                Status::Advisory,
                format!(
                    "container box(es) whose checkout sits in your working tree (made before checkouts moved out of it): {}; your own test runners and tools walk into .treebox/worktrees/ and can run what the agent wrote",
                    inside.join(", ")
                ),
            )
            .hint(format!(
                "Bring its work back (`git sandbox fetch {q}`), then `git sandbox down {q}` and create it again: a new container box's checkout lives under {}.",
                layout.checkout_root.display()
            )),
        );
    }
    if !same_file_system(&repo.main_root, &layout.checkout_root) {
        return Some(
            Check::new(
                "boxes",
                Status::Advisory,
                format!(
                    "container boxes' checkouts ({}) are on another file system than the repository: a new box's build outputs are copied, not shared by reflink",
                    layout.checkout_root.display()
                ),
            )
            .hint("Set XDG_DATA_HOME to a directory on the repository's file system (e.g. `export XDG_DATA_HOME=~/src/.local-share`) to warm container boxes at reflink speed."),
        );
    }
    None
}

/// Are `a` and `b` (or, for a path not made yet, its nearest existing parent) on one
/// file system? True when either cannot be read: nothing to warn about then.
fn same_file_system(a: &Path, b: &Path) -> bool {
    let dev = |p: &Path| {
        p.ancestors()
            .find_map(|d| std::fs::metadata(d).ok())
            .map(|m| m.dev())
    };
    match (dev(a), dev(b)) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_not_made_yet_is_judged_by_its_nearest_parent() {
        let d = tempfile::tempdir().unwrap();
        assert!(same_file_system(d.path(), &d.path().join("not/yet/made")));
        // /proc is a file system of its own on Linux.
        if Path::new("/proc/self").exists() {
            assert!(!same_file_system(
                d.path(),
                Path::new("/proc/self/not-there")
            ));
        }
    }
}
