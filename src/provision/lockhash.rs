//! The lockfile hash: one SHA-256 over the detected ecosystems' manifests and lockfiles,
//! kept in a box's record so `enter` can tell when setup must run again.
//!
//! Invariants: box content is hostile input — files are read without following
//! symlinks, only regular files, at most [`HASH_FILE_CAP`] bytes each; the framing makes
//! moving bytes between files change the hash. Callers: `apply`, `enter`, `folder`, the
//! container stage.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::ecosystem::Ecosystem;

/// Files larger than this are hashed as a "too large" marker plus their length.
pub const HASH_FILE_CAP: u64 = 64 * 1024 * 1024;

/// What hashing saw at one path.
enum FileState {
    /// Missing, a symlink, or not a regular file.
    Absent,
    /// A regular file that could not be opened or read.
    Unreadable,
    /// Larger than the cap; only its length is hashed.
    TooLarge(u64),
    Bytes(Vec<u8>),
}

/// Read a regular file without following symlinks, reading at most `cap` bytes.
///
/// The file is checked with `lstat` and, once open, `fstat` must name the same inode,
/// so a symlink swapped in between the two is not followed into.
fn read_regular_capped(path: &Path, cap: u64) -> FileState {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return FileState::Absent,
        Err(_) => return FileState::Unreadable,
    };
    if !meta.file_type().is_file() {
        return FileState::Absent;
    }
    if meta.len() > cap {
        return FileState::TooLarge(meta.len());
    }
    let Ok(file) = File::open(path) else {
        return FileState::Unreadable;
    };
    let Ok(fmeta) = file.metadata() else {
        return FileState::Unreadable;
    };
    if !fmeta.file_type().is_file() || fmeta.dev() != meta.dev() || fmeta.ino() != meta.ino() {
        return FileState::Absent;
    }
    let mut buf = Vec::new();
    match file.take(cap.saturating_add(1)).read_to_end(&mut buf) {
        Ok(n) if n as u64 > cap => FileState::TooLarge(fmeta.len().max(n as u64)),
        Ok(_) => FileState::Bytes(buf),
        Err(_) => FileState::Unreadable,
    }
}

/// Feed a length-prefixed byte string.
fn frame(h: &mut Sha256, bytes: &[u8]) {
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// SHA-256 (hex) over the detected ecosystems' manifest + lockfile (pyproject.toml +
/// uv.lock, package.json + pnpm-lock.yaml, package.json + package-lock.json, go.mod +
/// go.sum, Cargo.toml + Cargo.lock), in that fixed order whatever the order of `ecos`.
///
/// Each file is framed as its name, then a presence/length marker, then its bytes, so
/// moving bytes between files changes the hash. Files are read without following
/// symlinks (a symlink or non-regular file hashes as absent) and with a size cap
/// ([`HASH_FILE_CAP`]; a larger file hashes as a "too large" marker plus its length).
/// `None` when `ecos` is empty.
pub fn lockfile_hash(root: &Path, ecos: &[Ecosystem]) -> Option<String> {
    lockfile_hash_capped(root, ecos, HASH_FILE_CAP)
}

fn lockfile_hash_capped(root: &Path, ecos: &[Ecosystem], cap: u64) -> Option<String> {
    if ecos.is_empty() {
        return None;
    }
    let mut ecos = ecos.to_vec();
    ecos.sort();
    ecos.dedup();
    let mut h = Sha256::new();
    h.update(b"treebox-lockfile-hash-v1\0");
    for eco in ecos {
        frame(&mut h, eco.as_str().as_bytes());
        for name in [eco.manifest(), eco.lockfile()] {
            frame(&mut h, name.as_bytes());
            match read_regular_capped(&root.join(name), cap) {
                FileState::Absent => h.update(b"A"),
                FileState::Unreadable => h.update(b"U"),
                FileState::TooLarge(len) => {
                    h.update(b"L");
                    h.update(len.to_le_bytes());
                }
                FileState::Bytes(bytes) => {
                    h.update(b"P");
                    frame(&mut h, &bytes);
                }
            }
        }
    }
    let digest = h.finalize();
    Some(hex::encode(digest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn write(root: &Path, name: &str, data: &[u8]) {
        fs::write(root.join(name), data).unwrap();
    }

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    fn cargo_box(manifest: &[u8], lock: &[u8]) -> tempfile::TempDir {
        let d = tmp();
        write(d.path(), "Cargo.toml", manifest);
        write(d.path(), "Cargo.lock", lock);
        d
    }

    #[test]
    fn hash_none_without_ecosystems() {
        assert_eq!(lockfile_hash(tmp().path(), &[]), None);
    }

    #[test]
    fn hash_is_stable_hex() {
        let d = cargo_box(b"[package]", b"lock");
        let a = lockfile_hash(d.path(), &[Ecosystem::Cargo]).unwrap();
        let b = lockfile_hash(d.path(), &[Ecosystem::Cargo]).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.len(), 64);
        assert!(a
            .bytes()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }

    #[test]
    fn hash_changes_with_one_lockfile_byte() {
        let a = cargo_box(b"m", b"lock-a");
        let b = cargo_box(b"m", b"lock-b");
        assert_ne!(
            lockfile_hash(a.path(), &[Ecosystem::Cargo]),
            lockfile_hash(b.path(), &[Ecosystem::Cargo])
        );
    }

    #[test]
    fn hash_changes_when_bytes_move_between_files() {
        let a = cargo_box(b"ab", b"c");
        let b = cargo_box(b"a", b"bc");
        assert_ne!(
            lockfile_hash(a.path(), &[Ecosystem::Cargo]),
            lockfile_hash(b.path(), &[Ecosystem::Cargo])
        );
    }

    #[test]
    fn hash_distinguishes_absent_from_empty() {
        let a = cargo_box(b"", b"x");
        let b = tmp();
        write(b.path(), "Cargo.lock", b"x");
        assert_ne!(
            lockfile_hash(a.path(), &[Ecosystem::Cargo]),
            lockfile_hash(b.path(), &[Ecosystem::Cargo])
        );
    }

    #[test]
    fn hash_ignores_unrelated_files_and_input_order() {
        let d = cargo_box(b"m", b"l");
        write(d.path(), "uv.lock", b"u");
        let before = lockfile_hash(d.path(), &[Ecosystem::Cargo, Ecosystem::Uv]);
        write(d.path(), "README.md", b"hello");
        write(d.path(), "package.json", b"{}");
        fs::create_dir(d.path().join("src")).unwrap();
        write(&d.path().join("src"), "Cargo.lock", b"nested");
        assert_eq!(
            lockfile_hash(d.path(), &[Ecosystem::Uv, Ecosystem::Cargo, Ecosystem::Uv]),
            before
        );
    }

    #[test]
    fn hash_treats_symlink_as_absent() {
        let outside = tmp();
        write(outside.path(), "secret", b"content");
        let linked = tmp();
        write(linked.path(), "Cargo.lock", b"l");
        symlink(
            outside.path().join("secret"),
            linked.path().join("Cargo.toml"),
        )
        .unwrap();
        let plain = tmp();
        write(plain.path(), "Cargo.lock", b"l");
        let h = lockfile_hash(linked.path(), &[Ecosystem::Cargo]);
        assert_eq!(h, lockfile_hash(plain.path(), &[Ecosystem::Cargo]));
        // And the target's content does not matter.
        write(outside.path(), "secret", b"changed");
        assert_eq!(h, lockfile_hash(linked.path(), &[Ecosystem::Cargo]));
    }

    #[test]
    fn hash_caps_large_files_by_length() {
        let a = cargo_box(b"m", b"0123456789");
        let b = cargo_box(b"m", b"abcdefghij");
        let c = cargo_box(b"m", b"abcdefghijk");
        let h = |d: &tempfile::TempDir| lockfile_hash_capped(d.path(), &[Ecosystem::Cargo], 4);
        assert_eq!(h(&a), h(&b), "same length over the cap hashes the same");
        assert_ne!(h(&a), h(&c), "different length over the cap differs");
        assert_ne!(
            h(&a),
            lockfile_hash_capped(a.path(), &[Ecosystem::Cargo], 1024)
        );
    }
}
