//! Session markers: is an agent running in a box right now?
//!
//! Whatever runs the agent holds a *shared* `flock` on `boxes/<leaf>/session.lock` for
//! the agent's life: in a tmux session (SPEC §7a) that is the session's own program
//! ([`crate::session`]'s wrapper, which runs the agent and outlives nothing of it); in
//! the foreground fallback, and for `git sandbox run`, the command itself. Several
//! holders may share a box. Anyone can ask whether a session is live by trying an
//! exclusive lock without waiting. The kernel drops the lock when the holder dies, so
//! a crashed session never looks live.
//!
//! Beside the marker live the files of a tmux session (all host-owned, outside every
//! mount): what to launch (`session.launch.<id>`, 0600, consumed at start), the agent's pid
//! while it runs (`session.pid`) and its exit code when it ended (`session.exit`). A
//! holder that runs its program as a foreground child (no tmux, or no terminal) names
//! that child in `session.fg.<pid>` while it runs, so removal can end it too.

use std::fs::File;
use std::path::{Path, PathBuf};

use fs4::fs_std::FileExt;

/// A held session marker; dropping it ends the session.
#[derive(Debug)]
pub struct Session {
    _file: File,
}

impl Session {
    /// Mark a session as live. Errors only when the marker cannot be made at all.
    pub fn hold(path: &Path) -> std::io::Result<Session> {
        let file = super::lock::open_lock_file(path)?;
        FileExt::lock_shared(&file)?;
        // The marker's mtime is the box's last activity (idle parking reads it).
        let _ = file.set_modified(std::time::SystemTime::now());
        Ok(Session { _file: file })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self._file.set_modified(std::time::SystemTime::now());
    }
}

/// When a session last started or ended in the box (`None`: never).
pub fn last_activity(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// A launch file (`session.launch.<id>`) of the tmux session of the box whose marker
/// is `marker`.
pub fn launch_path(marker: &Path, id: &str) -> PathBuf {
    marker.with_file_name(format!("session.launch.{id}"))
}

/// Is `path` one of the launch files of the box whose marker is `marker`?
pub fn is_launch_path(marker: &Path, path: &Path) -> bool {
    path.parent() == marker.parent()
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("session.launch."))
}

/// Where the session's program writes the agent's exit code (128+signal) when it ends.
pub fn exit_path(marker: &Path) -> PathBuf {
    marker.with_file_name("session.exit")
}

/// The status file the agent of the box whose marker is `marker` reports to
/// (`Layout::status_state_path`).
pub fn status_path(marker: &Path) -> PathBuf {
    marker.with_file_name("status").join("state")
}

/// Where the session's program keeps the pane's last screen when the agent ends (the
/// pane closes with it): the starting command shows its last lines.
pub fn screen_path(marker: &Path) -> PathBuf {
    marker.with_file_name("session.screen")
}

/// Where the session's program keeps the agent's pid while it runs.
pub fn pid_path(marker: &Path) -> PathBuf {
    marker.with_file_name("session.pid")
}

/// The file in which a foreground holder names its running child (`pid`).
pub fn holder_path(marker: &Path, pid: u32) -> PathBuf {
    marker.with_file_name(format!("session.fg.{pid}"))
}

/// The foreground holders' files of the box whose marker is `marker`.
pub fn holder_paths(marker: &Path) -> Vec<PathBuf> {
    let Some(dir) = marker.parent() else {
        return Vec::new();
    };
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with("session.fg."))
        })
        .map(|e| e.path())
        .collect()
}

/// treebox's own tmux socket, `<state root>/tmux.sock`, read off the marker's path
/// (`<root>/repos/<key>/boxes/<leaf>/session.lock`), so every box under one state root
/// shares one server and no box ever meets the user's own tmux.
pub fn socket_path(marker: &Path) -> Option<PathBuf> {
    Some(marker.ancestors().nth(5)?.join("tmux.sock"))
}

/// The tmux session name of the box whose marker is `marker`: `<repo-key>/<leaf>`,
/// with `.` (which tmux does not allow in a name) spelled `+` (which neither part
/// ever holds, so two boxes never share a name).
pub fn session_name(marker: &Path) -> Option<String> {
    let leaf = marker.parent()?;
    let key = leaf.parent()?.parent()?;
    let name = format!(
        "{}/{}",
        key.file_name()?.to_string_lossy(),
        leaf.file_name()?.to_string_lossy()
    );
    Some(name.replace('.', "+"))
}

/// Is some process holding the session marker at `path`?
pub fn is_live(path: &Path) -> bool {
    let Ok(file) = std::fs::OpenOptions::new().read(true).open(path) else {
        return false;
    };
    match FileExt::try_lock_exclusive(&file) {
        Ok(true) => {
            let _ = FileExt::unlock(&file);
            false
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_while_held() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("b/session.lock");
        assert!(!is_live(&p));
        let s = Session::hold(&p).unwrap();
        let s2 = Session::hold(&p).unwrap();
        assert!(is_live(&p));
        drop(s);
        assert!(is_live(&p));
        drop(s2);
        assert!(!is_live(&p));
    }

    #[test]
    fn names_and_socket_come_from_the_marker() {
        let m = Path::new("/st/treebox/repos/my_repo-0123456789ab/boxes/fix.1--x/session.lock");
        assert_eq!(session_name(m).unwrap(), "my_repo-0123456789ab/fix+1--x");
        assert_eq!(socket_path(m).unwrap(), Path::new("/st/treebox/tmux.sock"));
        assert_eq!(exit_path(m), m.with_file_name("session.exit"));
    }
}
