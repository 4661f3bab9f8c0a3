//! Parking: stop the containers of boxes nobody has used for a while.
//!
//! A box is idle when no agent session is live and nothing of it — session activity,
//! the agent's status report, its container's start, record, git's index, HEAD or
//! reflog — has changed for the limit. A box seen
//! for the first time is never parked on that pass (it may have been made a moment ago
//! by an older treebox, or just now): the pass marks it seen instead. Called by
//! `git sandbox park`; [`last_used`] also by prune's `--idle`.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::names::Leaf;
use crate::runner::oci::Engine;
use crate::state::layout::{self, NoStateDir};
use crate::state::{session, Store};

/// A box whose container this pass stopped.
#[derive(Debug, Clone)]
pub struct Parked {
    pub name: String,
    pub repo: PathBuf,
    pub idle: Duration,
}

/// What a pass did.
#[derive(Debug, Default)]
pub struct ParkReport {
    pub parked: Vec<Parked>,
    /// Boxes seen for the first time (marked, not parked).
    pub first_seen: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ParkError {
    #[error(transparent)]
    State(#[from] NoStateDir),
    /// The engine would not stop a container.
    #[error("could not stop a container")]
    Stop(#[from] crate::cmd::CmdError),
}

/// When the box was last used: its session marker, the agent's last status report, its
/// record, and git's own files for the checkout (index, HEAD and its reflog) — in
/// `admin` (a worktree's admin dir), else in the git dir the box's `.git` names.
pub fn last_used(store: &Store, leaf: &Leaf, admin: Option<&Path>, box_path: &Path) -> SystemTime {
    let dot_git = box_path.join(".git");
    let git_dir = match admin {
        Some(a) => Some(a.to_path_buf()),
        None if dot_git.is_dir() => Some(dot_git),
        // A worktree's pointer file (read only if it is a regular file).
        None => crate::git::repo::read_plain(&dot_git)
            .and_then(|t| t.trim().strip_prefix("gitdir: ").map(PathBuf::from)),
    };
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let mut times = vec![
        session::last_activity(&store.session_path(leaf)),
        crate::runner::oci::read_status(store, leaf).map(|r| r.at),
        mtime(&store.record_path(leaf)),
    ];
    if let Some(g) = git_dir {
        for f in ["index", "HEAD", "logs/HEAD"] {
            times.push(mtime(&g.join(f)));
        }
    }
    times
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// The later of the box's last use and its container's start.
pub fn latest(used: SystemTime, started: Option<SystemTime>) -> SystemTime {
    started.map_or(used, |s| s.max(used))
}

/// Stop every running container of a box idle for at least `limit`, machine-wide.
/// `on_parked` hears of each one as it is stopped; the first container the engine
/// will not stop ends the pass with an error.
pub fn park_idle(
    limit: Duration,
    now: SystemTime,
    mut on_parked: impl FnMut(&Parked),
) -> Result<ParkReport, ParkError> {
    let mut report = ParkReport::default();
    for repo_state in layout::repo_state_dirs()? {
        for record in layout::records_in(&repo_state) {
            let (Some(c), Ok(leaf)) = (record.container.as_ref(), Leaf::parse(&record.name)) else {
                continue;
            };
            let store = Store::around_box(&record.path, repo_state.clone());
            if !store.mark_park_seen(&leaf) {
                report.first_seen.push(record.name.clone());
                continue;
            }
            let mut used = last_used(&store, &leaf, None, &record.path);
            let marker = store.session_path(&leaf);
            if session::is_live(&marker) {
                // A live session counts by its last output (an agent at work redraws
                // its screen); one treebox cannot ask (a foreground agent) is in use.
                match crate::session::activity(&marker) {
                    Some(t) => used = used.max(t),
                    None => continue,
                }
            }
            if now.duration_since(used).unwrap_or_default() < limit {
                continue;
            }
            let Some(engine) = Engine::parse(&c.engine) else {
                continue;
            };
            let started = match engine.state(&c.name) {
                Ok(Some(s)) if s.running => s.started_at,
                _ => continue,
            };
            // A container (re)started since counts as use: `enter` on a parked box.
            let idle = now
                .duration_since(latest(used, started))
                .unwrap_or_default();
            if idle < limit {
                continue;
            }
            // Stopping the container ends its sessions (SPEC §7a): end the tmux one
            // first, so no client is left attached to a dead exec.
            crate::session::end(&store.session_path(&leaf));
            engine.stop(&c.name).output()?;
            let p = Parked {
                name: record.name.clone(),
                repo: record.repo.clone(),
                idle,
            };
            on_parked(&p);
            report.parked.push(p);
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activity_is_the_latest_of_status_and_container_start() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::around_box(&d.path().join("r/.treebox/worktrees/b"), d.path().join("s"));
        let leaf = Leaf::parse("b").unwrap();
        let box_path = store.box_path(&leaf);
        // Nothing at all: never used.
        assert_eq!(
            last_used(&store, &leaf, None, &box_path),
            SystemTime::UNIX_EPOCH
        );
        // The agent reported: that is use, whatever it said.
        let dir = store.status_dir(&leaf);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("state"), "junk\n").unwrap();
        let reported = std::fs::metadata(dir.join("state"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(last_used(&store, &leaf, None, &box_path), reported);
        // A container started later wins; one started earlier does not.
        let later = reported + Duration::from_secs(60);
        let earlier = reported - Duration::from_secs(60);
        assert_eq!(latest(reported, Some(later)), later);
        assert_eq!(latest(reported, Some(earlier)), reported);
        assert_eq!(latest(reported, None), reported);
    }
}
