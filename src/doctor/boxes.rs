//! The `boxes` check: boxes of this repository that are unsafe — a container worktree
//! made by an earlier version, whose container mounts the user's git dir read-write
//! (SPEC §6), or any container made before the launcher, whose agent may be root and
//! whose keys are in the engine's config (SPEC §7, §8.9) — or broken — their `.git` lost, or their registration holding files git
//! would hang on or misread (a FIFO, a symlink, junk) — and boxes whose background
//! clone of `target/` failed or was cut short (an advisory), and where container boxes'
//! checkouts sit ([`super::placement`]). Read as `list` reads them
//! (files and libgit2 only), so it never hangs.

use super::{Check, Status};
use crate::git::repo::Repo;

pub(super) fn check_boxes(repo: &Repo) -> Check {
    let Ok(layout) = crate::state::Layout::new(&repo.main_root, &repo.common_dir) else {
        return Check::new("boxes", Status::Advisory, "not checked: no state directory");
    };
    let all = crate::boxes::inventory(repo, &layout);
    let unsafe_boxes: Vec<String> = all
        .iter()
        .filter(|e| e.record.as_ref().is_some_and(|r| r.mounts_user_git()))
        .map(|e| e.leaf.to_string())
        .collect();
    if let Some(first) = unsafe_boxes.first() {
        let q = crate::cmd::quote(first);
        return Check::new(
            "boxes",
            Status::Fail,
            format!(
                "unsafe box(es): {}; made by an earlier version, their container can write your repository's git dir (config, hooks, refs)",
                unsafe_boxes.join(", ")
            ),
        )
        .hint(format!(
            "Its branch is already in your repository: commit in the box, then `git treebox teardown {q}` and `git treebox create --checkout {q}` (a sandboxed worktree)."
        ));
    }
    // A container of an earlier version: its agent may be root (or the host user, whose
    // own git then trusts the box's config), and its keys sit in the engine's config.
    let earlier: Vec<String> = all
        .iter()
        .filter(|e| {
            e.record
                .as_ref()
                .and_then(|r| r.container.as_ref())
                .is_some_and(|c| !c.launcher)
        })
        .map(|e| e.leaf.to_string())
        .collect();
    if let Some(first) = earlier.first() {
        let q = crate::cmd::quote(first);
        return Check::new(
            "boxes",
            Status::Fail,
            format!(
                "box(es) whose container was made by an earlier version: {}; the agent there runs as root or as you, and the model keys and forwarded tokens sit in the container's config (`inspect`)",
                earlier.join(", ")
            ),
        )
        .hint(format!(
            "Bring its work back (`git sandbox fetch {q}`), then `git treebox teardown {q}` and create it again: the new container runs the agent as a user of its own and reads keys from a mounted file."
        ));
    }
    // A container box's checkout in the working tree, where the user's own tools walk.
    if let Some(advice) = super::placement::check(repo, &layout, &all) {
        return advice;
    }
    // A hook manager run in a box writes over the guard: until the box is opened
    // again, a placeholder push from it goes through.
    let exe = crate::provision::guard::find_guard_exe().ok();
    let unguarded: Vec<String> = all
        .iter()
        .filter(|e| !e.is_broken() && e.dir_exists)
        .filter(|e| {
            let Some(r) = e.record.as_ref().filter(|r| r.checkout_completed) else {
                return false;
            };
            exe.as_deref().is_some_and(|exe| {
                crate::provision::guard::guard_armed(repo, &layout, r, exe) == Some(false)
            })
        })
        .map(|e| e.leaf.to_string())
        .collect();
    if let Some(first) = unguarded.first() {
        return Check::new(
            "boxes",
            Status::Advisory,
            format!(
                "box(es) whose pre-push guard is not in place (a hook manager wrote over it, the box's own core.hooksPath switched it off, or treebox was upgraded since): {}",
                unguarded.join(", ")
            ),
        )
        .hint(format!(
            "Opening the box puts the guard back, keeping a hook manager's hooks running behind it: `git treebox enter {}` (it says when the box's own config prevents it).",
            crate::cmd::quote(first)
        ));
    }
    let broken: Vec<String> = all
        .iter()
        .filter(|e| e.is_broken())
        .map(|e| e.leaf.to_string())
        .collect();
    // A background clone of `target/` that failed, or whose warmer ended without
    // saying how: the box builds cold, once.
    let cold: Vec<String> = all
        .iter()
        .filter(|e| !e.is_broken())
        .filter_map(|e| {
            let background = e
                .record
                .as_ref()
                .and_then(|r| r.warm.as_ref())
                .is_some_and(|w| w.background);
            crate::provision::warm::unfinished(&layout.box_state(&e.leaf), background)
                .map(|why| format!("{} ({})", e.leaf, crate::sanitize::line(&why)))
        })
        .collect();
    match broken.first() {
        None if !cold.is_empty() => Check::new(
            "boxes",
            Status::Advisory,
            format!(
                "{} box(es), none broken; the clone of target/ did not finish in: {}",
                all.len(),
                cold.join(", ")
            ),
        )
        .hint("Nothing is wrong in those boxes: their first cargo build compiles what the clone did not bring."),
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
