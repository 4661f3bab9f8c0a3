//! Reading a file that a box, a repository or anyone but treebox may have written.
//!
//! One rule for every such read: open without blocking (`O_NONBLOCK`: a FIFO planted at
//! the path is never waited on), judge the file that was opened (a regular file, not
//! what a `stat` saw before something was swapped in), read at most a cap, and follow
//! a symlink at the last component only where the caller says git would.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// May the last component of the path be a symlink?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Followed, as git follows them (config includes).
    Follow,
    /// Refused: the read fails with [`Unread::NotRegular`].
    Refuse,
}

/// Why a file was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// Nothing at the path.
    Absent,
    /// A directory, FIFO, device, socket, or a link where links are refused.
    NotRegular,
    /// Larger than the cap.
    TooLarge,
    /// Any other error opening or reading it.
    Failed,
}

/// The bytes of the regular file at `path`, at most `cap` of them.
pub fn read_regular(path: &Path, cap: u64, links: Links) -> Result<Vec<u8>, Unread> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if links == Links::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| match (e.kind(), e.raw_os_error()) {
            (std::io::ErrorKind::NotFound, _) => Unread::Absent,
            // O_NOFOLLOW on a link.
            (_, Some(libc::ELOOP)) => Unread::NotRegular,
            _ => Unread::Failed,
        })?;
    let meta = file.metadata().map_err(|_| Unread::Failed)?;
    if !meta.is_file() {
        return Err(Unread::NotRegular);
    }
    if meta.len() > cap {
        return Err(Unread::TooLarge);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|_| Unread::Failed)?;
    if bytes.len() as u64 > cap {
        return Err(Unread::TooLarge);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fifo(path: &Path) {
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn only_a_small_regular_file_is_read_and_links_only_when_asked() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("f");
        std::fs::write(&file, "text\n").unwrap();
        assert_eq!(
            read_regular(&file, 5, Links::Refuse),
            Ok(b"text\n".to_vec())
        );
        assert_eq!(read_regular(&file, 4, Links::Refuse), Err(Unread::TooLarge));
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(
            read_regular(&link, 64, Links::Refuse),
            Err(Unread::NotRegular)
        );
        assert_eq!(
            read_regular(&link, 64, Links::Follow),
            Ok(b"text\n".to_vec())
        );
        let pipe = d.path().join("fifo");
        fifo(&pipe);
        assert_eq!(
            read_regular(&pipe, 64, Links::Follow),
            Err(Unread::NotRegular)
        );
        assert_eq!(
            read_regular(d.path(), 64, Links::Follow),
            Err(Unread::NotRegular)
        );
        assert_eq!(
            read_regular(&d.path().join("none"), 64, Links::Follow),
            Err(Unread::Absent)
        );
    }
}
