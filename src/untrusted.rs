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
/// one JSON object ([`json_pick`] of one path).
pub fn json_at(raw: &[u8], path: &[&str]) -> Option<serde_json::Value> {
    json_pick(raw, &[path])?.pop()?
}

/// The values at `paths` (each a path of object keys, outermost first) in the JSON
/// document `raw`, in one pass: `None` for a path whose key is missing or runs through
/// a value that is not an object; the whole answer `None` when `raw` is not one JSON
/// object. Everything off the paths is scanned and skipped, never built: a large file
/// (Claude Code's `~/.claude.json` holds every project's history) costs one pass and
/// no memory beyond the values. Where a key repeats, its first value counts.
pub fn json_pick(raw: &[u8], paths: &[&[&str]]) -> Option<Vec<Option<serde_json::Value>>> {
    use serde::de::DeserializeSeed;
    let mut out = vec![None; paths.len()];
    let mut de = serde_json::Deserializer::from_slice(raw);
    let pick = Pick {
        paths,
        live: (0..paths.len()).collect(),
        depth: 0,
        out: &mut out,
    };
    let object = pick.deserialize(&mut de).ok()?;
    de.end().ok()?;
    object.then_some(out)
}

/// [`json_pick`]'s reader at one depth: `live` are the paths that lead here. Says
/// whether the value was an object.
struct Pick<'p, 'o> {
    paths: &'p [&'p [&'p str]],
    live: Vec<usize>,
    depth: usize,
    out: &'o mut Vec<Option<serde_json::Value>>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Pick<'_, '_> {
    type Value = bool;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Pick<'_, '_> {
    type Value = bool;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let Pick {
            paths,
            live,
            depth,
            out,
        } = self;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let here: Vec<usize> = live
                .iter()
                .copied()
                .filter(|&i| paths[i].get(depth) == Some(&key.as_ref()) && out[i].is_none())
                .collect();
            if here.is_empty() {
                map.next_value::<serde::de::IgnoredAny>()?;
            } else if here.iter().any(|&i| paths[i].len() == depth + 1) {
                // A path ends here: the value is built, and any longer path that goes
                // on through it is answered from it.
                let v: serde_json::Value = map.next_value()?;
                for i in here {
                    let below = paths[i][depth + 1..]
                        .iter()
                        .try_fold(&v, |at, k| at.as_object()?.get(*k));
                    out[i] = below.cloned();
                }
            } else {
                map.next_value_seed(Pick {
                    paths,
                    live: here,
                    depth: depth + 1,
                    out: &mut *out,
                })?;
            }
        }
        Ok(true)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(false)
    }

    fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_str<E>(self, _: &str) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::mkfifo as fifo;

    #[test]
    fn json_pick_keeps_the_values_on_its_paths_alone() {
        use serde_json::json;
        let raw = br#"{"a": 1, "big": [1, {"x": "y"}], "p": {"/r": {"t": true, "h": [1, 2], "m": ["db"]}, "/o": {"t": false}, "/s": 3}, "a": 2}"#;
        let got = json_pick(
            raw,
            &[
                &["a"],
                &["p", "/r", "t"],
                &["p", "/r", "m"],
                &["p", "/o", "t"],
                &["p", "/s", "t"],
                &["p", "/none", "t"],
                &["big", "x"],
            ],
        )
        .unwrap();
        assert_eq!(
            got,
            [
                Some(json!(1)),
                Some(json!(true)),
                Some(json!(["db"])),
                Some(json!(false)),
                None,
                None,
                None
            ]
        );
        // A path through a value kept whole for a shorter one.
        assert_eq!(
            json_pick(raw, &[&["p", "/r"], &["p", "/r", "m"]]).unwrap(),
            [
                Some(json!({"t": true, "h": [1, 2], "m": ["db"]})),
                Some(json!(["db"]))
            ]
        );
        assert_eq!(json_at(raw, &["p", "/r", "t"]), Some(json!(true)));
        // Not one JSON object: no answer at all.
        for bad in [&b"[1]"[..], b"3", b"{\"a\": 1} 2", b"{\"a\": ", b""] {
            assert_eq!(
                json_pick(bad, &[&["a"]]),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
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
