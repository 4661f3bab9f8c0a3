//! Copying one directory tree into a box: walked without following a symlink, files
//! cloned (FICLONE) or copied in parallel with their mode and times, symlinks recreated,
//! hard links inside the tree kept, under a temporary name renamed into place; a failure
//! removes everything made.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::{self, File, FileTimes, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::plan::Warming;
use crate::vocab::WarmMethod;

#[cfg(target_os = "linux")]
pub(super) fn clone_into(src: &File, dst: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: both descriptors are open for the duration of the call; FICLONE reads
    // none of our memory.
    let r = unsafe { libc::ioctl(dst.as_raw_fd(), libc::FICLONE, src.as_raw_fd()) };
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn clone_into(_: &File, _: &File) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// The filesystem's name, for the message that says why nothing was cloned.
pub(super) fn open_source(p: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(p)
}

/// What [`apply`] brought in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Warmed {
    pub dirs: Vec<PathBuf>,
    pub files: u64,
    pub bytes: u64,
}

/// One entry of a directory being copied, relative to its top.
pub(super) enum Entry {
    Dir(PathBuf, u32),
    File {
        rel: PathBuf,
        meta: fs::Metadata,
        key: Option<(u64, u64)>,
    },
    Link(PathBuf, PathBuf),
}

/// Bring the planned directories into the box. `progress(done, total)` is called now and
/// then from this thread while files are copied. On error nothing it made is left.
pub fn apply(
    main_root: &Path,
    box_path: &Path,
    warming: &Warming,
    progress: &mut dyn FnMut(u64, u64),
) -> io::Result<Warmed> {
    let Some(method) = warming.method else {
        return Ok(Warmed::default());
    };
    let mut made: Vec<PathBuf> = Vec::new();
    let mut out = Warmed::default();
    for rel in &warming.dirs {
        let dst = box_path.join(rel);
        if fs::symlink_metadata(&dst).is_ok() {
            // The checkout has it (tracked content): not ours to replace.
            continue;
        }
        match copy_dir(main_root, box_path, rel, method, progress, &mut made) {
            Ok((files, bytes)) => {
                out.dirs.push(rel.clone());
                out.files += files;
                out.bytes += bytes;
            }
            Err(e) => {
                for p in made.iter().rev() {
                    let _ = super::super::rollback::make_writable_and_remove(p);
                }
                return Err(e);
            }
        }
    }
    Ok(out)
}

/// Copy `main_root/rel` to `box_path/rel`; every path it creates is pushed to `made`
/// (the temporary copy first, then the parents and the final name) so a caller can undo.
fn copy_dir(
    main_root: &Path,
    box_path: &Path,
    rel: &Path,
    method: WarmMethod,
    progress: &mut dyn FnMut(u64, u64),
    made: &mut Vec<PathBuf>,
) -> io::Result<(u64, u64)> {
    let src = main_root.join(rel);
    let dst = box_path.join(rel);
    let parent = dst.parent().unwrap_or(box_path);
    // Parents inside the box (`.next` for `.next/cache`): made here, never through a link.
    let mut at = box_path.to_path_buf();
    for c in rel.parent().into_iter().flat_map(Path::components) {
        at.push(c);
        match fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(io::Error::other(format!(
                    "{} is not a directory",
                    at.display()
                )))
            }
            Err(_) => {
                fs::create_dir(&at)?;
                made.push(at.clone());
            }
        }
    }
    let leaf = dst.file_name().unwrap_or(OsStr::new("warm"));
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(leaf);
    tmp_name.push(".treebox-warm");
    let tmp = parent.join(tmp_name);
    let entries = walk(&src, &|_| false)?;
    fs::create_dir(&tmp)?;
    made.push(tmp.clone());
    let (files, bytes) = fill(&src, &tmp, &entries, &|_| false, false, method, progress)?;
    fs::rename(&tmp, &dst)?;
    made.pop();
    made.push(dst);
    Ok((files, bytes))
}

/// Copy the walked `entries` of `src` into the existing directory `dst`: directories
/// (except those `premade` says exist already), symlinks, then files in parallel, then
/// hard links, then directory modes. With `keep_existing`, whatever is already at a
/// path (something else wrote it meanwhile) is kept, not an error. Returns the files and
/// bytes copied. On error what it made stays: the caller removes it.
pub(super) fn fill(
    src: &Path,
    dst: &Path,
    entries: &[Entry],
    premade: &dyn Fn(&Path) -> bool,
    keep_existing: bool,
    method: WarmMethod,
    progress: &mut dyn FnMut(u64, u64),
) -> io::Result<(u64, u64)> {
    let kept = |r: io::Result<()>| match r {
        Err(e) if keep_existing && e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        r => r,
    };
    let mut dir_modes = Vec::new();
    for e in entries {
        match e {
            Entry::Dir(r, mode) => {
                if !premade(r) {
                    let made = fs::create_dir(dst.join(r));
                    let is_dir = || fs::symlink_metadata(dst.join(r)).is_ok_and(|m| m.is_dir());
                    if !(keep_existing && made.is_err() && is_dir()) {
                        made?;
                    }
                }
                dir_modes.push((dst.join(r), *mode));
            }
            Entry::Link(r, target) => kept(std::os::unix::fs::symlink(target, dst.join(r)))?,
            Entry::File { .. } => {}
        }
    }
    // Hard links inside the tree stay hard links: the first path is copied, the rest
    // link to it.
    let mut first: HashMap<(u64, u64), &Path> = HashMap::new();
    let mut copies: Vec<(&Path, &fs::Metadata)> = Vec::new();
    let mut links: Vec<(&Path, &Path)> = Vec::new();
    let mut total = 0u64;
    for e in entries {
        if let Entry::File { rel, key, meta } = e {
            match key.and_then(|k| first.get(&k).copied()) {
                Some(orig) => links.push((orig, rel)),
                None => {
                    if let Some(k) = key {
                        first.insert(*k, rel);
                    }
                    copies.push((rel, meta));
                    total += meta.len();
                }
            }
        }
    }
    let done = AtomicU64::new(0);
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let error: Mutex<Option<io::Error>> = Mutex::new(None);
    // Cloning and creating files wait on the filesystem more than on a core.
    let workers = std::thread::available_parallelism()
        .map(|n| n.get() * 4)
        .unwrap_or(8)
        .clamp(4, 16);
    let umask = current_umask();
    // Woken by each worker as it ends (between the progress lines a copy shows), so the
    // end of the copy is seen at once, not at the next tick. Counted, not asked of the
    // threads: one that has woken this one may not have finished yet.
    let waiter = std::thread::current();
    let ended = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= copies.len() || failed.load(Ordering::Relaxed) {
                            break;
                        }
                        let (r, meta) = copies[i];
                        match copy_file(&src.join(r), &dst.join(r), method, meta, umask) {
                            Ok(n) => {
                                done.fetch_add(n, Ordering::Relaxed);
                            }
                            Err(e) if keep_existing && e.kind() == io::ErrorKind::AlreadyExists => {
                            }
                            Err(e) => {
                                failed.store(true, Ordering::Relaxed);
                                let mut slot = error.lock().unwrap_or_else(|p| p.into_inner());
                                slot.get_or_insert(io::Error::new(
                                    e.kind(),
                                    format!("{}: {e}", src.join(r).display()),
                                ));
                            }
                        }
                    }
                    ended.fetch_add(1, Ordering::Release);
                    waiter.unpark();
                })
            })
            .collect();
        while ended.load(Ordering::Acquire) < handles.len() {
            progress(done.load(Ordering::Relaxed), total);
            std::thread::park_timeout(Duration::from_millis(100));
        }
    });
    if let Some(e) = error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    progress(total, total);
    for (orig, rel) in links {
        kept(fs::hard_link(dst.join(orig), dst.join(rel)))?;
    }
    // Directory modes last: a read-only directory is filled before it is closed.
    for (d, mode) in dir_modes.iter().rev() {
        fs::set_permissions(d, fs::Permissions::from_mode(*mode & 0o7777))?;
    }
    Ok((copies.len() as u64, total))
}

/// The process's umask (read by setting it and setting it back, before the copying
/// threads start).
fn current_umask() -> u32 {
    // SAFETY: umask cannot fail; it is set straight back to what it was.
    let old = unsafe { libc::umask(0o022) };
    unsafe { libc::umask(old) };
    old as u32
}

/// Everything under `top`, parents before children, except what `skip` names (by its
/// path relative to `top`: neither it nor what is under it is listed); symlinks are
/// listed, not followed; anything that is neither a file, a directory nor a symlink (a
/// socket, a FIFO) is left out.
pub(super) fn walk(top: &Path, skip: &dyn Fn(&Path) -> bool) -> io::Result<Vec<Entry>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel_dir) = stack.pop() {
        for e in fs::read_dir(top.join(&rel_dir))? {
            let e = e?;
            let rel = rel_dir.join(e.file_name());
            if skip(&rel) {
                continue;
            }
            let m = e.metadata()?;
            let kind = m.file_type();
            if kind.is_dir() {
                out.push(Entry::Dir(rel.clone(), m.mode()));
                stack.push(rel);
            } else if kind.is_symlink() {
                out.push(Entry::Link(rel, fs::read_link(e.path())?));
            } else if kind.is_file() {
                out.push(Entry::File {
                    rel,
                    key: (m.nlink() > 1).then(|| (m.dev(), m.ino())),
                    meta: m,
                });
            }
        }
    }
    Ok(out)
}

/// Copy one file: clone it, or (method `copy`) clone it where possible and copy the
/// bytes otherwise. Mode and times are the source's. Returns its length.
///
/// `meta` is the walk's `lstat` of `src` (a regular file then): a file swapped for
/// something else since makes the clone or the copy fail, and the whole warm with it.
/// The new file is made with its final mode; only bits the `umask` took are set again.
fn copy_file(
    src: &Path,
    dst: &Path,
    method: WarmMethod,
    meta: &fs::Metadata,
    umask: u32,
) -> io::Result<u64> {
    let from = open_source(src)?;
    let mode = meta.mode() & 0o7777;
    let mut to = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(mode & 0o777)
        .open(dst)?;
    match (clone_into(&from, &to), method) {
        (Ok(()), _) => {}
        (Err(e), WarmMethod::Reflink) => return Err(e),
        (Err(_), WarmMethod::Copy) => {
            let mut from = &from;
            io::copy(&mut from, &mut to)?;
        }
    }
    if mode & (umask | 0o7000) != 0 {
        to.set_permissions(fs::Permissions::from_mode(mode))?;
    }
    let times = FileTimes::new()
        .set_accessed(meta.accessed()?)
        .set_modified(meta.modified()?);
    to.set_times(times)?;
    Ok(meta.len())
}

/// A byte count for a progress line.
pub(super) fn size(n: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if n as f64 >= 1024.0 * MIB {
        format!("{:.1} GiB", n as f64 / (1024.0 * MIB))
    } else {
        format!("{:.0} MiB", n as f64 / MIB)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::warming;
    use super::*;
    use std::time::UNIX_EPOCH;

    fn tree(root: &Path) {
        fs::create_dir_all(root.join("debug/deps")).unwrap();
        fs::write(root.join("debug/deps/libx.rlib"), vec![7u8; 70_000]).unwrap();
        fs::write(root.join("debug/tool"), b"#!/bin/sh\n").unwrap();
        fs::set_permissions(root.join("debug/tool"), fs::Permissions::from_mode(0o755)).unwrap();
        fs::hard_link(root.join("debug/tool"), root.join("debug/deps/tool-1")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("debug/link")).unwrap();
        let old = UNIX_EPOCH + Duration::from_secs(1_600_000_000);
        File::options()
            .write(true)
            .open(root.join("debug/deps/libx.rlib"))
            .unwrap()
            .set_modified(old)
            .unwrap();
    }

    #[test]
    fn a_copy_keeps_bytes_modes_times_links_and_hard_links() {
        let d = tempfile::tempdir().unwrap();
        let main = d.path().join("main");
        let boxp = d.path().join("box");
        fs::create_dir_all(&boxp).unwrap();
        tree(&main.join("target"));
        let mut calls = 0;
        let w = apply(&main, &boxp, &warming(WarmMethod::Copy), &mut |_, _| {
            calls += 1
        })
        .unwrap();
        assert_eq!(w.dirs, vec![PathBuf::from("target")]);
        assert_eq!(w.files, 2, "the hard link is a link, not a copy");
        let t = boxp.join("target/debug");
        assert_eq!(
            fs::read(t.join("deps/libx.rlib")).unwrap(),
            vec![7u8; 70_000]
        );
        let src = fs::metadata(main.join("target/debug/deps/libx.rlib")).unwrap();
        let got = fs::metadata(t.join("deps/libx.rlib")).unwrap();
        assert_eq!(got.modified().unwrap(), src.modified().unwrap());
        assert_ne!(got.ino(), src.ino(), "never shared with the main checkout");
        assert_eq!(fs::metadata(t.join("tool")).unwrap().mode() & 0o777, 0o755);
        assert_eq!(
            fs::metadata(t.join("tool")).unwrap().ino(),
            fs::metadata(t.join("deps/tool-1")).unwrap().ino()
        );
        assert_eq!(
            fs::read_link(t.join("link")).unwrap(),
            Path::new("/etc/passwd")
        );
        assert!(calls > 0);
        assert!(!boxp.join(".target.treebox-warm").exists());
    }

    #[test]
    fn a_failed_copy_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let main = d.path().join("main");
        let boxp = d.path().join("box");
        fs::create_dir_all(&boxp).unwrap();
        tree(&main.join(".next/cache"));
        // Reflink only, on a filesystem that (here, in a temp dir) may not clone: either
        // it clones and all is there, or it fails and nothing is.
        let w = Warming {
            dirs: vec![PathBuf::from(".next/cache")],
            ..warming(WarmMethod::Reflink)
        };
        match apply(&main, &boxp, &w, &mut |_, _| {}) {
            Ok(done) => assert_eq!(done.files, 2),
            Err(_) => assert_eq!(fs::read_dir(&boxp).unwrap().count(), 0, "nothing left"),
        }
    }

    #[test]
    fn a_failure_in_a_later_directory_removes_the_earlier_ones_too() {
        let d = tempfile::tempdir().unwrap();
        let main = d.path().join("main");
        let boxp = d.path().join("box");
        tree(&main.join(".turbo"));
        tree(&main.join(".next/cache"));
        // `.next` in the box is a file: `.next/cache` cannot be made.
        fs::create_dir_all(&boxp).unwrap();
        fs::write(boxp.join(".next"), b"a file").unwrap();
        let w = Warming {
            dirs: vec![PathBuf::from(".turbo"), PathBuf::from(".next/cache")],
            ..warming(WarmMethod::Copy)
        };
        assert!(apply(&main, &boxp, &w, &mut |_, _| {}).is_err());
        let left: Vec<_> = fs::read_dir(&boxp)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![OsStr::new(".next").to_owned()]);
    }

    #[test]
    fn an_existing_directory_in_the_box_is_left_alone() {
        let d = tempfile::tempdir().unwrap();
        let main = d.path().join("main");
        let boxp = d.path().join("box");
        tree(&main.join("target"));
        fs::create_dir_all(boxp.join("target")).unwrap();
        fs::write(boxp.join("target/tracked"), b"mine").unwrap();
        let w = apply(&main, &boxp, &warming(WarmMethod::Copy), &mut |_, _| {}).unwrap();
        assert!(w.dirs.is_empty());
        assert_eq!(fs::read_dir(boxp.join("target")).unwrap().count(), 1);
    }
}
