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

/// The value at `path` (object keys, outermost first) in the JSON document `raw`;
/// `None` where a key is missing, a value on the path is not an object, or `raw` is not
/// one JSON document. Everything off the path is scanned and skipped, never built: a
/// large file (Claude Code's `~/.claude.json` holds every project's history) costs
/// one pass and no memory beyond the value.
pub fn json_at(raw: &[u8], path: &[&str]) -> Option<serde_json::Value> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_slice(raw);
    let v = Descend(path).deserialize(&mut de).ok()??;
    de.end().ok()?;
    Some(v)
}

/// [`json_at`]'s reader: the value at a path of object keys, everything else skipped
/// unbuilt; `None` where a key is missing. A value on the path that is not an object
/// is an error.
struct Descend<'a>(&'a [&'a str]);

impl<'de> serde::de::DeserializeSeed<'de> for Descend<'_> {
    type Value = Option<serde_json::Value>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        match self.0 {
            [] => serde::Deserialize::deserialize(d).map(Some),
            _ => d.deserialize_map(self),
        }
    }
}

impl<'de> serde::de::Visitor<'de> for Descend<'_> {
    type Value = Option<serde_json::Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (first, rest) = self.0.split_first().expect("a path to descend");
        let mut found = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == *first && found.is_none() {
                found = map.next_value_seed(Descend(rest))?;
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(found)
    }
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
