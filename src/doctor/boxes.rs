//! The `boxes` check: boxes of this repository that are broken — their `.git` lost, or
//! their registration holding files git would hang on or misread (a FIFO, a symlink,
//! junk). Read as `list` reads them (files and libgit2 only), so it never hangs.

use super::{Check, Status};
use crate::git::repo::Repo;

pub(super) fn check_boxes(repo: &Repo) -> Check {
    let Ok(layout) = crate::state::Layout::new(&repo.main_root, &repo.common_dir) else {
        return Check::new("boxes", Status::Advisory, "not checked: no state directory");
    };
    let all = crate::boxes::inventory(repo, &layout);
    let broken: Vec<String> = all
        .iter()
        .filter(|e| e.is_broken())
        .map(|e| e.leaf.to_string())
        .collect();
    match broken.first() {
        None => Check::new(
            "boxes",
            Status::Ok,
            format!("{} box(es), none broken", all.len()),
        ),
        Some(first) => Check::new(
            "boxes",
            Status::Advisory,
            format!(
                "broken box(es): {}; commands on them are refused, other boxes work",
                broken.join(", ")
            ),
        )
        .hint(format!(
            "Copy out what you need, then remove it: `git treebox teardown --force {}`.",
            crate::cmd::quote(first)
        )),
    }
}
