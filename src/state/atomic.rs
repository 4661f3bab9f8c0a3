//! Atomic file writes: a reader sees the old file or the new one, never half of one.

use std::io::Write;
use std::path::Path;

/// Write `data` to `path` through a temporary file in the same directory, fsync it and
/// rename it into place. `mode` is applied before any byte is written.
pub fn write(path: &Path, data: &[u8], mode: u32) -> std::io::Result<()> {
    replace(path, data, mode, true)
}

/// [`write`] without the fsync: for a cache, where a file lost in a crash (empty, or
/// the old one) only costs a rebuild, and every reader still sees a whole file.
pub fn write_unsynced(path: &Path, data: &[u8], mode: u32) -> std::io::Result<()> {
    replace(path, data, mode, false)
}

fn replace(path: &Path, data: &[u8], mode: u32, sync: bool) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}-{}", std::process::id(), unique()));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        f.write_all(data)?;
        if sync {
            f.sync_all()?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    #[test]
    fn writes_with_mode_and_replaces() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        super::write(&p, b"one", 0o600).unwrap();
        super::write(&p, b"two", 0o600).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }
}
