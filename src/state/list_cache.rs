//! The summary cache of `list` on disk: one file per repository, a JSON header line
//! then one JSON line per box ([`Header`]), in its state dir ([`super::Layout::list_cache_path`]), outside every box's mounts.
//!
//! A cache, never a source of truth: a file that is missing, unreadable, not a regular
//! file, over [`MAX_BYTES`], of another format, written by another build of treebox or
//! for another repository reads as empty (never an error). A write replaces the whole
//! file (temp file + rename, mode 0600): concurrent writers leave one writer's whole
//! file. What is cached, and when it still holds, is `maintain::summary`'s; this module
//! only knows the file and the identity of a file ([`Stamp`]).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The document's format; a change in what is kept or how it is judged bumps it.
pub const FORMAT: u32 = 6;
/// Largest cache read (a few KiB per box).
pub const MAX_BYTES: u64 = 32 << 20;

/// A file's identity as `lstat` gives it: device, inode, mode (type and permissions),
/// size, mtime and ctime (seconds, nanoseconds). The ctime cannot be set by an
/// unprivileged process: a file rewritten in place, its size kept and its mtime set
/// back, still has a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp(pub [i64; 8]);

impl Stamp {
    pub fn of(m: &std::fs::Metadata) -> Stamp {
        // Device and inode numbers are 64-bit; kept bit for bit.
        Stamp([
            m.dev() as i64,
            m.ino() as i64,
            i64::from(m.mode()),
            m.size() as i64,
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        ])
    }

    /// The identity of what is at `path` now, without following a final symlink;
    /// `None` when `lstat` fails.
    pub fn lstat(path: &Path) -> Option<Stamp> {
        std::fs::symlink_metadata(path).ok().map(|m| Stamp::of(&m))
    }

    /// [`Stamp::of`] the `stat` the C library fills.
    fn of_stat(st: &libc::stat) -> Stamp {
        Stamp([
            st.st_dev as i64,
            st.st_ino as i64,
            i64::from(st.st_mode),
            st.st_size,
            st.st_mtime,
            st.st_mtime_nsec,
            st.st_ctime,
            st.st_ctime_nsec,
        ])
    }

    fn kind(&self) -> u32 {
        (self.0[2] as u32) & libc::S_IFMT
    }

    pub fn is_dir(&self) -> bool {
        self.kind() == libc::S_IFDIR
    }

    pub fn is_file(&self) -> bool {
        self.kind() == libc::S_IFREG
    }

    /// The ctime, in nanoseconds since the epoch.
    pub fn ctime_ns(&self) -> i128 {
        i128::from(self.0[6]) * 1_000_000_000 + i128::from(self.0[7])
    }
}

/// A directory held open, to take the identities of paths under it with a walk from
/// it instead of from `/`: most of an `lstat`'s cost is the walk, and a kept box's
/// inputs are all under a few directories. A path under it is walked as it would be
/// from the directory's full path (symlinks on the way followed, the last one not).
pub struct Dir(std::os::fd::OwnedFd);

impl Dir {
    /// The directory at `path` (following symlinks, as a walk through it would).
    pub fn open(path: &Path) -> Option<Dir> {
        use std::os::unix::fs::OpenOptionsExt;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(path)
            .ok()?;
        Some(Dir(f.into()))
    }

    /// [`Stamp::lstat`] of `rel` under this directory (`buf`: room for the C string).
    pub fn lstat(&self, rel: &str, buf: &mut Vec<u8>) -> Option<Stamp> {
        use std::os::fd::AsRawFd;
        if rel.is_empty() || rel.as_bytes().contains(&0) {
            return None;
        }
        buf.clear();
        buf.extend_from_slice(rel.as_bytes());
        buf.push(0);
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: a valid descriptor, a NUL-terminated path without an inner NUL, and
        // room for one `stat`, which the call fills when it returns 0.
        let rc = unsafe {
            libc::fstatat(
                self.0.as_raw_fd(),
                buf.as_ptr().cast(),
                st.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        // SAFETY: filled, see above.
        (rc == 0).then(|| Stamp::of_stat(unsafe { st.assume_init_ref() }))
    }
}

/// The identities of a box's inputs, in order, as one digest (the first 16 bytes of a
/// SHA-256 of each [`Stamp`]'s fields): a kept box stores its inputs' paths and this,
/// not eight numbers per path, so the cache is half the size and quicker to parse.
/// Stamps are made by the kernel, never chosen by a box, and any change to one changes
/// the digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identities([u8; 16]);

impl Identities {
    /// The digest of `stamps`, in order.
    pub fn of<'a>(stamps: impl IntoIterator<Item = &'a Stamp>) -> Identities {
        let mut d = Digester::default();
        for s in stamps {
            d.add(s);
        }
        d.done()
    }
}

/// [`Identities::of`], a stamp at a time.
#[derive(Default)]
pub struct Digester(Sha256);

impl Digester {
    pub fn add(&mut self, s: &Stamp) {
        for v in s.0 {
            self.0.update(v.to_le_bytes());
        }
    }

    pub fn done(self) -> Identities {
        let mut out = [0u8; 16];
        out.copy_from_slice(&self.0.finalize()[..16]);
        Identities(out)
    }
}

impl Serialize for Identities {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(self.0))
    }
}

impl<'de> Deserialize<'de> for Identities {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Identities, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        let mut out = [0u8; 16];
        hex::decode_to_slice(text.as_bytes(), &mut out)
            .map_err(|_| serde::de::Error::custom("not 32 hex digits"))?;
        Ok(Identities(out))
    }
}

/// The document's first line; each line after it is one box (compact JSON: a value
/// never holds a raw newline), so the boxes can be parsed apart, on several cores,
/// without a pass over the whole document first.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Header {
    format: u32,
    /// The program that wrote it: another build (an upgrade, a rebuild) judges anew.
    program: Option<Stamp>,
    box_root: PathBuf,
    /// The checkouts root of container boxes, for a cache that names paths under it
    /// (`list`'s); `None` for the caches kept by commit ids.
    checkout_root: Option<PathBuf>,
    common_dir: PathBuf,
}

/// A cache as read: its boxes' lines, not yet parsed ([`Lines::boxes`]).
pub struct Lines(Vec<u8>);

impl Lines {
    /// Each box's line (its JSON), in the file's order.
    pub fn boxes(&self) -> Vec<&[u8]> {
        self.0
            .split(|b| *b == b'\n')
            .skip(1)
            .filter(|l| !l.is_empty())
            .collect()
    }
}

/// The identity of the running program's file.
fn program() -> Option<Stamp> {
    std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::metadata(p).ok())
        .map(|m| Stamp::of(&m))
}

/// The cache at `path`, when it is one this program wrote for this repository (its
/// box root and git dir); its boxes unparsed.
pub fn load_lines(path: &Path, box_root: &Path, common_dir: &Path) -> Option<Lines> {
    load_lines_rooted(path, box_root, None, common_dir)
}

/// [`load_lines`] of a cache that names paths under the checkouts root too (written by
/// [`save_rooted`] with the same roots).
pub fn load_lines_rooted(
    path: &Path,
    box_root: &Path,
    checkout_root: Option<&Path>,
    common_dir: &Path,
) -> Option<Lines> {
    let bytes = read_capped(path)?;
    let first = bytes.split(|b| *b == b'\n').next()?;
    let h: Header = serde_json::from_slice(first).ok()?;
    (h.format == FORMAT
        && h.program.is_some()
        && h.program == program()
        && h.box_root == box_root
        && h.checkout_root.as_deref() == checkout_root
        && h.common_dir == common_dir)
        .then_some(Lines(bytes))
}

/// The cached boxes at `path` ([`load_lines`]), all parsed; none when one fails.
pub fn load<T: DeserializeOwned>(path: &Path, box_root: &Path, common_dir: &Path) -> Vec<T> {
    load_lines(path, box_root, common_dir)
        .and_then(|l| {
            l.boxes()
                .iter()
                .map(|b| serde_json::from_slice(b).ok())
                .collect::<Option<Vec<T>>>()
        })
        .unwrap_or_default()
}

/// Replace the cache at `path` with `boxes` (temp file + rename; not synced: a file
/// lost in a crash only costs a rebuild).
pub fn save<T: Serialize>(
    path: &Path,
    box_root: &Path,
    common_dir: &Path,
    boxes: &[T],
) -> std::io::Result<()> {
    save_rooted(path, box_root, None, common_dir, boxes)
}

/// [`save`], for a cache keyed by the checkouts root too ([`load_lines_rooted`]).
pub fn save_rooted<T: Serialize>(
    path: &Path,
    box_root: &Path,
    checkout_root: Option<&Path>,
    common_dir: &Path,
    boxes: &[T],
) -> std::io::Result<()> {
    let header = Header {
        format: FORMAT,
        program: program(),
        box_root: box_root.to_path_buf(),
        checkout_root: checkout_root.map(Path::to_path_buf),
        common_dir: common_dir.to_path_buf(),
    };
    let mut bytes = serde_json::to_vec(&header).map_err(std::io::Error::other)?;
    for b in boxes {
        bytes.push(b'\n');
        serde_json::to_writer(&mut bytes, b).map_err(std::io::Error::other)?;
    }
    bytes.push(b'\n');
    if bytes.len() as u64 > MAX_BYTES {
        // Too big to be read back: leave no cache rather than one never used.
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    super::atomic::write_unsynced(path, &bytes, 0o600)
}

/// The bytes of the regular file at `path`, at most [`MAX_BYTES`]: never a link
/// followed, never a FIFO waited on ([`crate::untrusted::read_regular`]).
fn read_capped(path: &Path) -> Option<Vec<u8>> {
    crate::untrusted::read_regular(path, MAX_BYTES, crate::untrusted::Links::Refuse).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_what_it_did_not_write() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("list-cache.json");
        let (root, common) = (Path::new("/r/.treebox/worktrees"), Path::new("/r/.git"));
        assert!(load::<u32>(&p, root, common).is_empty());
        save(&p, root, common, &[1u32, 2, 3]).unwrap();
        assert_eq!(load::<u32>(&p, root, common), vec![1, 2, 3]);
        // Another repository's, another type's: empty.
        assert!(load::<u32>(&p, root, Path::new("/s/.git")).is_empty());
        assert!(load::<String>(&p, root, common).is_empty());
        // Truncated, junk, a link to a good one, a FIFO: empty, and replaced whole.
        let good = std::fs::read(&p).unwrap();
        std::fs::write(&p, &good[..good.len() / 2]).unwrap();
        assert!(load::<u32>(&p, root, common).is_empty());
        std::fs::write(&p, b"\0\xff junk").unwrap();
        assert!(load::<u32>(&p, root, common).is_empty());
        let elsewhere = d.path().join("elsewhere.json");
        std::fs::write(&elsewhere, &good).unwrap();
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &p).unwrap();
        assert!(load::<u32>(&p, root, common).is_empty());
        save(&p, root, common, &[4u32]).unwrap();
        assert!(std::fs::symlink_metadata(&p).unwrap().file_type().is_file());
        assert_eq!(
            std::fs::read(&elsewhere).unwrap(),
            good,
            "the link's target is untouched"
        );
        std::fs::remove_file(&p).unwrap();
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string; mkfifo only creates the FIFO.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(load::<u32>(&p, root, common).is_empty());
    }

    #[test]
    fn a_cache_keyed_by_the_checkouts_root_is_read_with_that_root_only() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("list-cache.json");
        let (root, common) = (Path::new("/r/.treebox/worktrees"), Path::new("/r/.git"));
        let (k, other) = (Path::new("/d/checkouts/r-1"), Path::new("/e/checkouts/r-1"));
        save_rooted(&p, root, Some(k), common, &[1u32]).unwrap();
        assert!(load_lines_rooted(&p, root, Some(k), common).is_some());
        assert!(load_lines_rooted(&p, root, Some(other), common).is_none());
        assert!(
            load_lines(&p, root, common).is_none(),
            "a cache of one root only"
        );
        save(&p, root, common, &[1u32]).unwrap();
        assert!(load_lines_rooted(&p, root, Some(k), common).is_none());
    }

    #[test]
    fn a_stamp_taken_from_an_open_directory_is_lstats() {
        let d = tempfile::tempdir().unwrap();
        let sub = d.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("f"), b"x").unwrap();
        std::os::unix::fs::symlink("f", sub.join("link")).unwrap();
        std::os::unix::fs::symlink(&sub, d.path().join("via")).unwrap();
        let dir = Dir::open(d.path()).unwrap();
        let mut buf = Vec::new();
        for rel in ["sub", "sub/f", "sub/link", "via", "via/f"] {
            let want = Stamp::lstat(&d.path().join(rel));
            assert!(want.is_some(), "{rel}");
            assert_eq!(dir.lstat(rel, &mut buf), want, "{rel}");
        }
        // A final symlink is not followed; one on the way is.
        assert_ne!(
            dir.lstat("sub/link", &mut buf),
            dir.lstat("sub/f", &mut buf)
        );
        assert_eq!(dir.lstat("via/f", &mut buf), dir.lstat("sub/f", &mut buf));
        for rel in ["", "absent", "sub/f/under-a-file", "a\0b"] {
            assert_eq!(dir.lstat(rel, &mut buf), None, "{rel:?}");
        }
    }

    #[test]
    fn identities_change_with_any_stamp_and_round_trip() {
        let a = Stamp([1, 2, 0o100644, 4, 5, 6, 7, 8]);
        let mut b = a;
        b.0[7] += 1;
        let one = Identities::of([&a, &a]);
        assert_eq!(one, Identities::of([&a, &a]));
        assert_ne!(one, Identities::of([&a, &b]));
        assert_ne!(one, Identities::of([&a]));
        let text = serde_json::to_string(&one).unwrap();
        assert_eq!(text.len(), 34, "{text}");
        assert_eq!(serde_json::from_str::<Identities>(&text).unwrap(), one);
        for bad in ["\"\"", "\"zz\"", "1", "\"0123\""] {
            assert!(serde_json::from_str::<Identities>(bad).is_err(), "{bad}");
        }
    }
}
