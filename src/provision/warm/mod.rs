//! Warm build outputs: a new box starts with the main checkout's build outputs for the
//! ecosystems it detects (cargo's `target/`; for node the build caches an install does not
//! restore: `.next/cache`, `.turbo`, `.parcel-cache`, `.nx/cache`), so the agent's first
//! build is incremental, not cold. Never `.venv` (its absolute paths break; uv rebuilds it
//! from the cache) and nothing for go (its build cache is already shared).
//!
//! - [`plan`] picks the directories (real directories git ignores, no symlink on the way)
//!   and, by cloning one file into an unnamed temporary file (`O_TMPFILE`, nothing
//!   visible is written), whether the box's filesystem clones by reflink. `auto` warms
//!   only then; `copy` copies where it cannot clone; `off` does nothing.
//! - [`apply`] copies each directory into the box under a temporary name, files in
//!   parallel (cloned, or copied), mode and times kept, symlinks as symlinks (never
//!   followed), hard links inside the tree kept; then renames it into place. All or
//!   nothing: a failure removes every directory it made. Nothing is shared writable with
//!   the main checkout or another box (a reflink is copy-on-write).
//! - [`keep_freshness`] gives each tracked file of the box that is byte-for-byte the main
//!   checkout's (git's own stat-clean test, same blob) the main file's modification time,
//!   and refreshes the box's index to match. Build tools that compare times (cargo) then
//!   judge the copied outputs exactly as they would in the main checkout; a file that
//!   differs keeps its new time, so what depends on it is rebuilt.
//!
//! - [`background`]: on the host, a reflinked `target/` is cloned after `create` returns
//!   by a process that holds cargo's build lock of every profile from before `create`
//!   returns, so a cargo command in the box waits for the clone instead of racing it.
//!
//! Runs at create time only, before anything has run in the box (the background clone
//! included: it holds its locks from then on).
//!
//! [`tree`] copies a directory tree; this module decides and drives.

mod background;
mod tree;

use std::ffi::OsStr;
use std::fs::{self, FileTimes, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use crate::ecosystem::Ecosystem;
use crate::git::Repo;
pub use crate::plan::Warming;
use crate::vocab::{RunnerKind, Warm, WarmMethod};

pub use background::{outcome, serve, stop, warmer_args, Warmer, WARMER_ARG};
pub use tree::{apply, Warmed};
use tree::{clone_into, open_source};

/// The build caches of node projects that a lockfile install does not bring back.
const NODE_DIRS: &[&str] = &[".next/cache", ".turbo", ".parcel-cache", ".nx/cache"];

/// The directories an ecosystem's build leaves behind that are worth bringing in.
fn outputs(eco: Ecosystem) -> &'static [&'static str] {
    match eco {
        Ecosystem::Cargo => &[CARGO_TARGET],
        Ecosystem::Npm | Ecosystem::Pnpm => NODE_DIRS,
        Ecosystem::Uv | Ecosystem::Go => &[],
    }
}

/// Decide what a new box at `box_path`, run by `runner`, is warmed with. Writes nothing.
pub fn plan(
    repo: &Repo,
    ecosystems: &[Ecosystem],
    mode: Warm,
    box_path: &Path,
    runner: RunnerKind,
) -> Warming {
    if mode == Warm::Off {
        return Warming::none(mode);
    }
    let root = &repo.main_root;
    let mut dirs: Vec<PathBuf> = Vec::new();
    for eco in ecosystems {
        for rel in outputs(*eco) {
            let rel = PathBuf::from(rel);
            if !dirs.contains(&rel)
                && real_dir(root, &rel)
                && repo.git.is_path_ignored(&rel).unwrap_or(false)
            {
                dirs.push(rel);
            }
        }
    }
    if dirs.is_empty() {
        return Warming::none(mode);
    }
    let probe_dir = box_path
        .ancestors()
        .find(|p| p.is_dir())
        .unwrap_or(root)
        .to_path_buf();
    // Empty directories only: nothing worth bringing in.
    let Some(sample) = dirs.iter().find_map(|d| sample_file(&root.join(d))) else {
        return Warming::none(mode);
    };
    let cloned = probe(&sample, &probe_dir);
    let method = match (&cloned, mode) {
        (Ok(()), _) => Some(WarmMethod::Reflink),
        (Err(_), Warm::Copy) => Some(WarmMethod::Copy),
        (Err(_), _) => None,
    };
    let skipped = match (&cloned, method) {
        (Err(e), None) => Some(format!(
            "the box's {} filesystem cannot clone files ({}); `--warm` copies them anyway",
            fs_name(&probe_dir),
            crate::sanitize::line(&e.to_string())
        )),
        _ => None,
    };
    // On the host, cargo's `target/` is cloned behind cargo's own lock after create
    // returns (see `background`); a byte copy stays in the foreground, with progress.
    let background = method == Some(WarmMethod::Reflink)
        && runner == RunnerKind::Host
        && dirs.iter().any(|d| d == Path::new(CARGO_TARGET))
        && !background::profiles(&root.join(CARGO_TARGET)).is_empty();
    Warming {
        mode,
        dirs,
        method,
        skipped,
        background,
    }
}

/// Cargo's build outputs, relative to the repository's top.
const CARGO_TARGET: &str = "target";

/// `root/rel` is a directory, and no component of `rel` is a symlink.
fn real_dir(root: &Path, rel: &Path) -> bool {
    let mut at = root.to_path_buf();
    for c in rel.components() {
        let Component::Normal(c) = c else {
            return false;
        };
        at.push(c);
        if !fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir()) {
            return false;
        }
    }
    true
}

/// A non-empty regular file somewhere under `dir` (a short, bounded search).
fn sample_file(dir: &Path) -> Option<PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    let mut budget = 2_000usize;
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).ok()?.flatten() {
            budget = budget.checked_sub(1)?;
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_file() && e.metadata().is_ok_and(|m| m.len() > 0) {
                return Some(e.path());
            }
            if kind.is_dir() {
                stack.push(e.path());
            }
        }
    }
    None
}

/// Clone `sample` into an unnamed temporary file in `dir`: does this filesystem clone?
fn probe(sample: &Path, dir: &Path) -> io::Result<()> {
    let src = open_source(sample)?;
    let dst = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(0o600)
        .open(dir)?;
    clone_into(&src, &dst)
}

/// Clone `src`'s data into `dst` (FICLONE): no data is written, blocks are shared
/// copy-on-write.
fn fs_name(dir: &Path) -> &'static str {
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return "unknown";
    };
    // SAFETY: `st` is plain data statfs fills; `c` is a valid C string.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return "unknown";
    }
    #[allow(clippy::unnecessary_cast)]
    match st.f_type as i64 {
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x0102_1994 => "tmpfs",
        0x794C_7630 => "overlay",
        0x2FC1_2FC1 => "zfs",
        0xCA45_1A4E => "bcachefs",
        0x6969 => "nfs",
        _ => "unknown",
    }
}

/// The create stage: bring the plan's build outputs into the new box at `plan.path`,
/// say (once per repository) why nothing was brought in, and return what happened for
/// the record. A failure is a warning: the box builds from scratch. With
/// `plan.warm.background`, `target/` is handed to a warmer (`background`) that holds
/// cargo's locks before this returns; `box_state` is the box's bookkeeping dir, where
/// the warmer says how it ended. The warmer clones once the returned [`Warmer`] is
/// dropped: before setup runs, or when create is done.
pub(super) fn stage(
    plan: &crate::plan::Plan,
    repo: &Repo,
    repo_state: &Path,
    box_state: &Path,
    reporter: &mut dyn super::Reporter,
    warnings: &mut Vec<String>,
) -> (Warming, Option<Warmer>) {
    let mut done = plan.warm.clone();
    if let Some(why) = &plan.warm.skipped {
        let marker = repo_state.join("warm-skipped");
        if fs::read(&marker).ok().as_deref() != Some(why.as_bytes()) {
            reporter.note(format!("warm build outputs skipped: {why}"));
            let _ = crate::state::atomic::write(&marker, why.as_bytes(), 0o600);
        }
        done.dirs.clear();
        return (done, None);
    }
    let Some(method) = plan.warm.method else {
        return (done, None);
    };
    reporter.stage("warm");
    let started = std::time::Instant::now();
    // The warmer first: it holds cargo's locks before anything can run in the box, and
    // clones once create lets it (see `Warmer`).
    let mut foreground = plan.warm.clone();
    let mut warmer = None;
    if plan.warm.background {
        let target = Path::new(CARGO_TARGET);
        let (main_target, box_target) = (repo.main_root.join(target), plan.path.join(target));
        if fs::symlink_metadata(&box_target).is_ok() {
            // The checkout has it (tracked content): not ours to replace.
        } else {
            match background::start(&main_target, &box_target, box_state) {
                Ok(w) => {
                    foreground.dirs.retain(|d| d != target);
                    warmer = Some(w);
                }
                // Done here instead, as a copy in the foreground would be.
                Err(e) => reporter.note(format!(
                    "warm: {} is cloned now (no background clone: {})",
                    target.display(),
                    crate::sanitize::line(&e.to_string())
                )),
            }
        }
    }
    let behind = warmer.is_some();
    done.background = behind;
    let mut shown = started;
    let result = apply(&repo.main_root, &plan.path, &foreground, &mut |n, total| {
        if method == WarmMethod::Copy && shown.elapsed() > Duration::from_millis(250) {
            shown = std::time::Instant::now();
            reporter.stage(&format!("warm: copied {} of {}", size(n), size(total)));
        }
    });
    match result {
        Ok(w) => {
            let mut dirs = w.dirs;
            if behind {
                dirs.insert(0, PathBuf::from(CARGO_TARGET));
            }
            if !dirs.is_empty() {
                // Errors only cost git a re-read of the files on its next status.
                let _ = keep_freshness(repo, &plan.path);
            }
            done.dirs = dirs;
            if done.dirs.is_empty() {
                done.method = None;
            }
        }
        Err(e) => {
            let e = crate::sanitize::line(&e.to_string());
            if behind {
                // The warmer's clone goes on: cargo's outputs still come in.
                warnings.push(format!(
                    "warm: {} not brought in ({e}); target/ still is",
                    foreground.listed()
                ));
                let _ = keep_freshness(repo, &plan.path);
                done.dirs = vec![PathBuf::from(CARGO_TARGET)];
            } else {
                warnings.push(format!(
                    "warm: the build outputs were not brought in ({e}); the box builds from scratch"
                ));
                done.dirs.clear();
                done.method = None;
            }
            done.skipped = Some(format!("the copy failed: {e}"));
        }
    }
    reporter.stage_done("warm", started.elapsed());
    (done, warmer)
}

/// A byte count for a progress line.
fn size(n: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if n as f64 >= 1024.0 * MIB {
        format!("{:.1} GiB", n as f64 / (1024.0 * MIB))
    } else {
        format!("{:.0} MiB", n as f64 / MIB)
    }
}

/// Give each tracked file of the box that is the main checkout's, byte for byte, the
/// main file's modification time, and write the box's index to match. Returns how many
/// files were given their time. Errors leave the box usable (its index is merely stale
/// by stat, which git repairs on its next status).
pub fn keep_freshness(repo: &Repo, box_path: &Path) -> Result<usize, git2::Error> {
    let main_index = repo.git.index()?;
    let index_time = fs::metadata(repo.git.path().join("index"))
        .and_then(|m| m.modified())
        .unwrap_or(UNIX_EPOCH);
    let boxed = git2::Repository::open(box_path)?;
    let mut index = boxed.index()?;
    let mut updated = Vec::new();
    let mut budget: u64 = 64 << 20;
    for mut entry in index.iter() {
        // Regular files at stage 0 only (not links, submodules or conflicts).
        let stage = (entry.flags >> 12) & 0x3;
        if stage != 0 || (entry.mode != 0o100644 && entry.mode != 0o100755) {
            continue;
        }
        let rel = Path::new(OsStr::from_bytes(&entry.path));
        let Some(main) = main_index.get_path(rel, 0) else {
            continue;
        };
        if main.id != entry.id || main.mode != entry.mode {
            continue;
        }
        let Ok(m) = fs::symlink_metadata(repo.main_root.join(rel)) else {
            continue;
        };
        // git's stat-clean test: same size and time as when the index last saw it, and
        // not changed in the same instant the index was written (racy). A file that
        // fails it (a fresh clone's files are racy) is compared byte for byte, within a
        // budget.
        let clean = m.is_file()
            && m.len() == u64::from(main.file_size)
            && m.mtime() == i64::from(main.mtime.seconds())
            && m.mtime_nsec() == i64::from(main.mtime.nanoseconds())
            && m.modified().is_ok_and(|t| t < index_time);
        if !clean
            && !same_bytes(
                &repo.main_root.join(rel),
                &box_path.join(rel),
                &m,
                &mut budget,
            )
        {
            continue;
        }
        let Ok(file) = open_source(&box_path.join(rel)) else {
            continue;
        };
        let Ok(modified) = m.modified() else { continue };
        if file
            .metadata()
            .is_ok_and(|b| b.is_file() && b.len() == m.len())
            && file
                .set_times(FileTimes::new().set_modified(modified))
                .is_ok()
        {
            if let Ok(now) = file.metadata() {
                entry.mtime = git2::IndexTime::new(now.mtime() as i32, now.mtime_nsec() as u32);
                entry.ctime = git2::IndexTime::new(now.ctime() as i32, now.ctime_nsec() as u32);
                entry.dev = now.dev() as u32;
                entry.ino = now.ino() as u32;
                updated.push(entry);
            }
        }
    }
    let n = updated.len();
    for e in &updated {
        index.add(e)?;
    }
    if n > 0 {
        index.write()?;
    }
    Ok(n)
}

/// Do the main checkout's file (`main_meta`: its `lstat`) and the box's hold the same
/// bytes? Read only regular files of equal size up to 1 MiB, while `budget` (bytes
/// read) lasts; anything else counts as different.
fn same_bytes(main: &Path, boxed: &Path, main_meta: &fs::Metadata, budget: &mut u64) -> bool {
    let len = main_meta.len();
    if !main_meta.is_file() || len > 1 << 20 || len * 2 > *budget {
        return false;
    }
    *budget -= len * 2;
    let read = |p: &Path| -> Option<Vec<u8>> {
        let mut f = open_source(p).ok()?;
        let m = f.metadata().ok()?;
        if !m.is_file() || m.len() != len {
            return None;
        }
        let mut buf = Vec::with_capacity(len as usize);
        std::io::Read::read_to_end(&mut f, &mut buf).ok()?;
        Some(buf)
    };
    matches!((read(main), read(boxed)), (Some(a), Some(b)) if a == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan to warm `target/` by `method` (also for [`super::tree`]'s tests).
    pub(in crate::provision::warm) fn warming(method: WarmMethod) -> Warming {
        Warming {
            mode: Warm::Copy,
            dirs: vec![PathBuf::from("target")],
            method: Some(method),
            skipped: None,
            background: false,
        }
    }

    /// The racily clean path of `keep_freshness`: equal bytes only, small regular files
    /// only, within the budget.
    #[test]
    fn same_bytes_reads_small_regular_files_within_the_budget() {
        let d = tempfile::tempdir().unwrap();
        let (a, b, c) = (d.path().join("a"), d.path().join("b"), d.path().join("c"));
        fs::write(&a, b"same\n").unwrap();
        fs::write(&b, b"same\n").unwrap();
        fs::write(&c, b"diff\n").unwrap();
        let meta = fs::symlink_metadata(&a).unwrap();
        let mut budget = 1 << 20;
        assert!(same_bytes(&a, &b, &meta, &mut budget));
        assert_eq!(budget, (1 << 20) - 10, "both files count");
        assert!(!same_bytes(&a, &c, &meta, &mut budget));
        // A link in the box is never read through.
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        assert!(!same_bytes(&a, &link, &meta, &mut budget));
        // Out of budget: counted as different, nothing read.
        let mut empty = 4;
        assert!(!same_bytes(&a, &b, &meta, &mut empty));
        assert_eq!(empty, 4);
        // Over 1 MiB: never compared.
        let big = d.path().join("big");
        fs::write(&big, vec![0u8; (1 << 20) + 1]).unwrap();
        let big_meta = fs::symlink_metadata(&big).unwrap();
        let mut plenty = u64::MAX / 4;
        assert!(!same_bytes(&big, &big, &big_meta, &mut plenty));
    }

    #[test]
    fn describe_says_what_and_how() {
        assert_eq!(
            warming(WarmMethod::Reflink).describe(),
            "warm: clone target/ by reflink"
        );
        assert_eq!(
            Warming::none(Warm::Off).describe(),
            "warm build outputs: off"
        );
        let skipped = Warming {
            method: None,
            skipped: Some("why".into()),
            ..warming(WarmMethod::Copy)
        };
        assert_eq!(skipped.describe(), "warm: skipped (why)");
    }
}
