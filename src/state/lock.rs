//! One lock per box name (SPEC §5).
//!
//! `create`, `enter` (while provisioning) and `teardown` hold the box's lock; a second
//! operation on the same name fails at once with [`LockError::Held`] (exit 5) instead of
//! waiting or racing. The lock is an `flock` on `locks/<leaf>.lock`; the kernel drops it
//! when the process dies, so a `kill -9` never leaves a box locked.
//!
//! Lock files are removed when their box is removed, so they do not pile up. Unlinking a
//! lock file races with a process that opened it just before: after locking, the holder
//! checks that the path still names the very file it locked, and retries otherwise.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use fs4::fs_std::FileExt;

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("box `{leaf}` is busy: another treebox command holds its lock")]
    Held { leaf: String, path: PathBuf },
    #[error("could not lock {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A held box lock; dropping it releases the lock (the file stays).
#[derive(Debug)]
pub struct BoxLock {
    file: File,
    path: PathBuf,
}

impl BoxLock {
    /// Take the lock at `path` without waiting.
    pub fn try_acquire(path: &Path, leaf: &str) -> Result<BoxLock, LockError> {
        let io = |source| LockError::Io {
            path: path.to_path_buf(),
            source,
        };
        for _ in 0..16 {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(io)?;
            }
            let file = match std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
            {
                Ok(f) => f,
                // The directory was removed with its last lock just now: make it again.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io(e)),
            };
            if !FileExt::try_lock_exclusive(&file).map_err(io)? {
                return Err(LockError::Held {
                    leaf: leaf.to_string(),
                    path: path.to_path_buf(),
                });
            }
            // Still the file the path names? (Not unlinked by a teardown in between.)
            let held = file.metadata().map_err(io)?;
            match std::fs::metadata(path) {
                Ok(now) if now.ino() == held.ino() && now.dev() == held.dev() => {
                    return Ok(BoxLock {
                        file,
                        path: path.to_path_buf(),
                    })
                }
                _ => continue,
            }
        }
        Err(LockError::Held {
            leaf: leaf.to_string(),
            path: path.to_path_buf(),
        })
    }

    /// Release the lock and delete its file (the box is gone or was never made).
    pub fn release_and_remove(self) {
        // Unlink while still holding the lock, so nobody can lock this inode and
        // believe it is current.
        let _ = std::fs::remove_file(&self.path);
        let _ = FileExt::unlock(&self.file);
        // The (empty) directory stays: removing it would race with a concurrent
        // acquirer between its mkdir and its open.
    }
}

/// Open (making it and its directory if need be) the file behind a lock.
pub(crate) fn open_lock_file(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
}

/// A short, waited-for exclusive lock, for the repository- and machine-wide steps
/// that must not overlap:
///
/// - worktree registrations: git itself races when worktrees are added or removed
///   concurrently (`worktree add` reads every admin dir under `<common>/worktrees/`
///   and fails on one another process has half made or half removed);
/// - fetches of one repository (they race on `refs/remotes/origin/*` locks);
/// - image builds on one engine.
#[derive(Debug)]
pub struct WaitedLock {
    _file: File,
}

impl WaitedLock {
    pub fn acquire(path: &Path) -> std::io::Result<WaitedLock> {
        let file = open_lock_file(path)?;
        FileExt::lock_exclusive(&file)?;
        Ok(WaitedLock { _file: file })
    }

    /// The lock if nobody holds it now; `None` without waiting when somebody does.
    pub fn try_acquire(path: &Path) -> std::io::Result<Option<WaitedLock>> {
        let file = open_lock_file(path)?;
        Ok(FileExt::try_lock_exclusive(&file)?.then_some(WaitedLock { _file: file }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_acquire_is_held_and_release_removes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("locks/x.lock");
        let a = BoxLock::try_acquire(&p, "x").unwrap();
        assert!(matches!(
            BoxLock::try_acquire(&p, "x"),
            Err(LockError::Held { .. })
        ));
        a.release_and_remove();
        assert!(!p.exists());
        let b = BoxLock::try_acquire(&p, "x").unwrap();
        drop(b);
        assert!(p.exists());
        BoxLock::try_acquire(&p, "x").unwrap();
    }

    #[test]
    fn a_waited_lock_can_be_tried_without_waiting() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("build-docker.lock");
        let held = WaitedLock::acquire(&p).unwrap();
        assert!(WaitedLock::try_acquire(&p).unwrap().is_none());
        drop(held);
        let tried = WaitedLock::try_acquire(&p).unwrap();
        assert!(tried.is_some());
        assert!(
            WaitedLock::try_acquire(&p).unwrap().is_none(),
            "held by the try"
        );
    }
}
