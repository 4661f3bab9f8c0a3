//! Which object stores a box's git dir reaches (SPEC §8.4).
//!
//! A box owns its git dir, so it can make the host read objects from anywhere: an
//! extra line in `objects/info/alternates`, an `objects` (or `objects/pack`, or one
//! pack file) that is a symlink to another repository's, a `commondir` file, an
//! `http-alternates`. A host-side read that follows them (a bundle written with
//! libgit2, which loads alternates) would carry another repository's commits into the
//! user's, where the box can then read them.
//!
//! [`check_stores`] refuses every such route before the host reads the store, and
//! [`box_odb`] opens only the two stores treebox gave the box: its own `objects` and
//! the one it borrows (the user's, written by `git clone --shared`). libgit2 still
//! reads the alternates file of the box's own store, which is why the check comes
//! first (and is repeated once the read is done, so a file swapped back in the
//! meantime is caught too).
//!
//! Used by `provision::clone` (bundle and fetch-back) for clones and for the bare
//! clones of sandboxed worktrees alike.

use std::path::{Path, PathBuf};

/// At most this many entries under `objects/` are looked at; a store with more is
/// refused rather than walked forever.
const BUDGET: usize = 1_000_000;

/// The largest alternates file read; treebox writes one short line.
const MAX_ALTERNATES: u64 = 64 * 1024;

/// A git dir whose object store reaches beyond what treebox gave it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} {why}: the host would read objects the box was never given", .path.display())]
pub struct ForeignObjects {
    /// The file or directory that does it.
    pub path: PathBuf,
    /// What is wrong with it, e.g. `names another object store`.
    pub why: String,
}

/// Refuse unless the object stores of `git_dir` are its own `objects` directory
/// (real directories and regular files only, no symlink anywhere) and, through
/// `objects/info/alternates`, `borrowed` alone (compared as canonical paths). No
/// `commondir`, no `http-alternates`. A missing git dir or `objects` holds nothing
/// foreign (reading it fails on its own). Reads nothing that could block: the
/// alternates file is read only when it is a regular file.
pub fn check_stores(git_dir: &Path, borrowed: &Path) -> Result<(), ForeignObjects> {
    let refuse = |path: PathBuf, why: &str| {
        Err(ForeignObjects {
            path,
            why: why.to_string(),
        })
    };
    let lstat = |p: &Path| std::fs::symlink_metadata(p).ok();
    // Nothing there, nothing foreign to read: opening it fails on its own.
    match lstat(git_dir) {
        Some(m) if m.is_dir() => {}
        Some(_) => return refuse(git_dir.to_path_buf(), "is not a plain directory"),
        None => return Ok(()),
    }
    let commondir = git_dir.join("commondir");
    if lstat(&commondir).is_some() {
        return refuse(commondir, "points the repository at another git dir");
    }
    let objects = git_dir.join("objects");
    match lstat(&objects) {
        Some(m) if m.is_dir() => {}
        Some(_) => return refuse(objects, "is not a plain directory"),
        None => return Ok(()),
    }
    let http = objects.join("info/http-alternates");
    if lstat(&http).is_some() {
        return refuse(http, "names another object store");
    }
    // Everything under objects/: directories and regular files, nothing else.
    let mut budget = BUDGET;
    let mut stack = vec![objects.clone()];
    while let Some(dir) = stack.pop() {
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(_) => return refuse(dir, "cannot be read"),
        };
        for e in rd {
            let Ok(e) = e else {
                return refuse(dir, "cannot be read");
            };
            budget = match budget.checked_sub(1) {
                Some(b) => b,
                None => return refuse(objects, "holds too many entries to check"),
            };
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => {}
                Ok(t) if t.is_symlink() => return refuse(p, "is a symlink"),
                _ => return refuse(p, "is not a regular file"),
            }
        }
    }
    let alternates = objects.join("info/alternates");
    let Some(meta) = lstat(&alternates) else {
        return Ok(());
    };
    if !meta.is_file() {
        return refuse(alternates, "is not a regular file");
    }
    if meta.len() > MAX_ALTERNATES {
        return refuse(alternates, "is too large to be treebox's");
    }
    // Measured again on the file opened: one swapped in since is not read whole.
    use crate::untrusted::{read_regular, Links, Unread};
    let text = match read_regular(&alternates, MAX_ALTERNATES, Links::Refuse) {
        Ok(text) => text,
        Err(Unread::TooLarge) => return refuse(alternates, "is too large to be treebox's"),
        Err(_) => return refuse(alternates, "cannot be read"),
    };
    let want = std::fs::canonicalize(borrowed).ok();
    // Lines as git and libgit2 split them; blank lines and comments name nothing.
    for line in text.split(|b| *b == b'\n' || *b == b'\r') {
        if line.is_empty() || line.starts_with(b"#") {
            continue;
        }
        let Ok(line) = std::str::from_utf8(line) else {
            return refuse(alternates, "names another object store");
        };
        // git reads any relative line against the objects directory, libgit2 only
        // one starting with `.` (others against its working directory): take only
        // the lines both read alike.
        if !line.starts_with('/') && !line.starts_with('.') {
            return refuse(alternates, "names an object store by an ambiguous path");
        }
        let named = objects.join(line);
        let canon = std::fs::canonicalize(&named).ok();
        if canon.is_none() || canon != want {
            return refuse(
                alternates,
                &format!(
                    "names another object store ({})",
                    crate::sanitize::line(line)
                ),
            );
        }
    }
    Ok(())
}

/// The object database of the git dir `git_dir` made of the stores treebox gave it
/// only: its own `objects` and `borrowed`, never a `commondir` or a config it wrote.
/// Call [`check_stores`] first: libgit2 reads the alternates file of `objects`.
pub fn box_odb(git_dir: &Path, borrowed: &Path) -> Result<git2::Repository, git2::Error> {
    let odb = git2::Odb::new()?;
    let as_str = |p: &Path| {
        p.to_str()
            .map(str::to_string)
            .ok_or_else(|| git2::Error::from_str("a path that is not UTF-8"))
    };
    odb.add_disk_alternate(&as_str(&git_dir.join("objects"))?)?;
    if borrowed.is_dir() {
        odb.add_disk_alternate(&as_str(borrowed)?)?;
    }
    git2::Repository::from_odb(odb)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(root: &Path, name: &str) -> PathBuf {
        let git = root.join(name);
        std::fs::create_dir_all(git.join("objects/info")).unwrap();
        std::fs::create_dir_all(git.join("objects/pack")).unwrap();
        git
    }

    #[test]
    fn only_the_borrowed_store_is_allowed() {
        let t = tempfile::tempdir().unwrap();
        let user = store(t.path(), "user");
        let other = store(t.path(), "other");
        let bx = store(t.path(), "box");
        let borrowed = user.join("objects");
        let alt = bx.join("objects/info/alternates");
        check_stores(&bx, &borrowed).unwrap();
        std::fs::write(&alt, format!("{}\n", borrowed.display())).unwrap();
        check_stores(&bx, &borrowed).unwrap();
        // Relative, and through a `..`: the same store is still fine.
        std::fs::write(&alt, "../../user/objects\n# note\n\n").unwrap();
        check_stores(&bx, &borrowed).unwrap();
        std::fs::write(
            &alt,
            format!(
                "{}\n{}\n",
                borrowed.display(),
                other.join("objects").display()
            ),
        )
        .unwrap();
        let e = check_stores(&bx, &borrowed).unwrap_err();
        assert_eq!(e.path, alt);
        assert!(e.why.contains("another object store"), "{e}");
        std::fs::write(&alt, "../../other/objects\r\n").unwrap();
        check_stores(&bx, &borrowed).unwrap_err();
        std::fs::write(&alt, "/nonexistent/objects\n").unwrap();
        check_stores(&bx, &borrowed).unwrap_err();
    }

    #[test]
    fn links_fifos_and_redirections_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let user = store(t.path(), "user");
        let other = store(t.path(), "other");
        let borrowed = user.join("objects");
        let fresh = |name: &str| store(t.path(), name);

        let bx = fresh("link-objects");
        std::fs::remove_dir_all(bx.join("objects")).unwrap();
        std::os::unix::fs::symlink(other.join("objects"), bx.join("objects")).unwrap();
        assert_eq!(
            check_stores(&bx, &borrowed).unwrap_err().path,
            bx.join("objects")
        );

        let bx = fresh("link-pack");
        std::fs::remove_dir_all(bx.join("objects/pack")).unwrap();
        std::os::unix::fs::symlink(other.join("objects/pack"), bx.join("objects/pack")).unwrap();
        check_stores(&bx, &borrowed).unwrap_err();

        let bx = fresh("fifo");
        let alt = bx.join("objects/info/alternates");
        let c = std::ffi::CString::new(alt.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let e = check_stores(&bx, &borrowed).unwrap_err();
        assert_eq!(e.path, alt);

        let bx = fresh("link-alternates");
        let elsewhere = t.path().join("alt.txt");
        std::fs::write(&elsewhere, format!("{}\n", borrowed.display())).unwrap();
        std::os::unix::fs::symlink(&elsewhere, bx.join("objects/info/alternates")).unwrap();
        check_stores(&bx, &borrowed).unwrap_err();

        let bx = fresh("commondir");
        std::fs::write(bx.join("commondir"), format!("{}\n", other.display())).unwrap();
        check_stores(&bx, &borrowed).unwrap_err();

        let bx = fresh("http");
        std::fs::write(bx.join("objects/info/http-alternates"), "http://x/\n").unwrap();
        check_stores(&bx, &borrowed).unwrap_err();

        let bx = fresh("link-git");
        let link = t.path().join("linked-git");
        std::os::unix::fs::symlink(&other, &link).unwrap();
        check_stores(&link, &borrowed).unwrap_err();
        check_stores(&bx, &borrowed).unwrap();
    }
}
