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

/// [`write`], the new file given to `owner` (uid, gid) before it is renamed into place:
/// a file treebox writes into a container box's checkout belongs to the box's agent,
/// as everything else there does. Where this process may not give a file away (it is
/// not root), the file keeps its owner and gets `owner`'s group with read access for
/// the group, which the agent has when its group is the user's.
pub fn write_owned(
    path: &Path,
    data: &[u8],
    mode: u32,
    owner: Option<(u32, u32)>,
) -> std::io::Result<()> {
    let Some((uid, gid)) = owner else {
        return write(path, data, mode);
    };
    replace_with(path, data, mode, true, &|f: &std::fs::File| {
        if std::os::unix::fs::fchown(f, Some(uid), Some(gid)).is_ok() {
            return Ok(());
        }
        use std::os::unix::fs::PermissionsExt;
        std::os::unix::fs::fchown(f, None, Some(gid))?;
        f.set_permissions(std::fs::Permissions::from_mode(mode | 0o040))
    })
}

fn replace(path: &Path, data: &[u8], mode: u32, sync: bool) -> std::io::Result<()> {
    replace_with(path, data, mode, sync, &|_| Ok(()))
}

type Prepare<'a> = &'a dyn Fn(&std::fs::File) -> std::io::Result<()>;

fn replace_with(
    path: &Path,
    data: &[u8],
    mode: u32,
    sync: bool,
    prepare: Prepare<'_>,
) -> std::io::Result<()> {
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
        prepare(&f)?;
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
