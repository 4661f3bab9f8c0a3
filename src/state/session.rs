//! Session markers: is an agent running in a box right now?
//!
//! `create` and `enter` hold a *shared* `flock` on `boxes/<leaf>/session.lock` for the
//! life of the agent they launched; several sessions may share a box. Anyone can ask
//! whether a session is live by trying an exclusive lock without waiting. The kernel
//! drops the lock when the process dies, so a crashed session never looks live.

use std::fs::File;
use std::path::Path;

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
}
