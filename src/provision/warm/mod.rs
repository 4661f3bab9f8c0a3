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
//!   the main checkout or another box (a reflink is copy-on-write). [`stage`] holds the
//!   main checkout's cargo locks around it, as the background clone does.
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

use background::Pending;
pub use background::{serve, stop, unfinished, warmer_args, Warmer, WARMER_ARG};
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

/// What [`prestart`] set going while git makes the box's checkout, for [`stage`].
#[derive(Debug, Default)]
pub struct Prepared {
    /// The warmer of a background clone, waiting to be armed (started on a thread: a
    /// fork and exec the checkout need not wait for).
    pending: Option<std::thread::JoinHandle<Option<Pending>>>,
    /// The main checkout's side of [`keep_freshness`].
    survey: Option<std::thread::JoinHandle<Result<Survey, git2::Error>>>,
}

/// Set going what [`stage`] needs of the main checkout before the box's checkout
/// exists, so that it runs while git makes the checkout: the warmer of a background
/// clone (see [`background`]; it does nothing until `stage` arms it), and the survey of
/// the main checkout's files for [`keep_freshness`]. Nothing when the plan warms
/// nothing; what did not start, `stage` does itself.
pub(super) fn prestart(plan: &crate::plan::Plan, repo: &Repo, box_state: &Path) -> Prepared {
    if plan.warm.method.is_none() || plan.warm.dirs.is_empty() {
        return Prepared::default();
    }
    let target = Path::new(CARGO_TARGET);
    let pending = plan
        .warm
        .background
        .then(|| {
            let (main_target, box_target, state) = (
                repo.main_root.join(target),
                plan.path.join(target),
                box_state.to_path_buf(),
            );
            std::thread::Builder::new()
                .spawn(move || background::spawn(&main_target, &box_target, &state).ok())
                .ok()
        })
        .flatten();
    let (root, index) = (repo.main_root.clone(), repo.git.path().join("index"));
    let survey = std::thread::Builder::new()
        .spawn(move || survey(&root, &index))
        .ok();
    Prepared { pending, survey }
}

impl Drop for Prepared {
    /// A warmer never armed is waited for (see [`Pending`]).
    fn drop(&mut self) {
        if let Some(h) = self.pending.take() {
            let _ = h.join();
        }
    }
}

impl Prepared {
    /// The warmer, once started (`None` where it could not be).
    fn warmer(&mut self) -> Option<Pending> {
        self.pending.take().and_then(|h| h.join().ok().flatten())
    }

    /// [`keep_freshness`] of the box at `box_path` (its index at `box_index`) against
    /// the survey, waited for (or made now, where it did not start).
    fn keep_freshness(
        &mut self,
        repo: &Repo,
        box_path: &Path,
        box_index: &Path,
    ) -> Result<usize, git2::Error> {
        let main = match self.survey.take().map(std::thread::JoinHandle::join) {
            Some(Ok(s)) => s,
            _ => survey(&repo.main_root, &repo.git.path().join("index")),
        }?;
        keep_freshness(&main, box_path, box_index)
    }
}

/// The create stage: bring the plan's build outputs into the new box at `plan.path`,
/// say (once per repository) why nothing was brought in, and return what happened for
/// the record. A failure is a warning: the box builds from scratch. With
/// `plan.warm.background`, `target/` is handed to a warmer (`background`) that holds
/// cargo's locks before this returns; `box_state` is the box's bookkeeping dir, where
/// the warmer says how it ended. The warmer clones once the returned [`Warmer`] is
/// dropped: before setup runs, or when create is done. `prepared` is what [`prestart`]
/// set going during the checkout; `box_git_dir` holds the box's index.
#[allow(clippy::too_many_arguments)]
pub(super) fn stage(
    plan: &crate::plan::Plan,
    repo: &Repo,
    repo_state: &Path,
    box_state: &Path,
    box_git_dir: &Path,
    mut prepared: Prepared,
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
    let box_index = box_git_dir.join("index");
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
            let armed = match prepared.warmer() {
                Some(p) => p.arm(),
                None => background::start(&main_target, &box_target, box_state),
            };
            match armed {
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
    let mut waited = false;
    let main_locks = background::lock_main_for_copy(&repo.main_root, &foreground.dirs, &mut |p| {
        waited = true;
        reporter.note(format!(
            "warm: waiting for cargo in the main checkout ({} is locked)",
            p.display()
        ));
        reporter.stage("warm: waiting for cargo in the main checkout");
    });
    if waited {
        reporter.stage("warm");
    }
    let mut shown = started;
    let result = main_locks.and_then(|_locks| {
        apply(&repo.main_root, &plan.path, &foreground, &mut |n, total| {
            if method == WarmMethod::Copy && shown.elapsed() > Duration::from_millis(250) {
                shown = std::time::Instant::now();
                reporter.stage(&format!(
                    "warm: copied {} of {}",
                    tree::size(n),
                    tree::size(total)
                ));
            }
        })
    });
    match result {
        Ok(w) => {
            let mut dirs = w.dirs;
            if behind {
                dirs.insert(0, PathBuf::from(CARGO_TARGET));
            }
            if !dirs.is_empty() {
                // Errors only cost git a re-read of the files on its next status.
                let _ = prepared.keep_freshness(repo, &plan.path, &box_index);
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
                let _ = prepared.keep_freshness(repo, &plan.path, &box_index);
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

/// The main checkout's side of [`keep_freshness`], read while git makes the box's
/// checkout: each regular file its index tracks (stage 0), with its blob, mode, size,
/// time, and whether git's stat-clean test holds for it. Sorted by path, as an index is.
#[derive(Debug)]
pub struct Survey {
    root: PathBuf,
    files: Vec<MainFile>,
}

#[derive(Debug)]
struct MainFile {
    path: Vec<u8>,
    id: git2::Oid,
    mode: u32,
    len: u64,
    modified: std::time::SystemTime,
    /// Same size and time as when the index last saw it, and not changed in the
    /// instant the index was written (racy): git would not read it again.
    clean: bool,
}

/// An index entry [`keep_freshness`] looks at: a regular file at stage 0 (not a link, a
/// submodule or a conflict).
fn regular_file(e: &git2::IndexEntry) -> bool {
    (e.flags >> 12) & 0x3 == 0 && (e.mode == 0o100644 || e.mode == 0o100755)
}

/// Read the main checkout at `root` whose index is `index_path` (see [`Survey`]).
pub fn survey(root: &Path, index_path: &Path) -> Result<Survey, git2::Error> {
    let index = git2::Index::open(index_path)?;
    let index_time = fs::metadata(index_path)
        .and_then(|m| m.modified())
        .unwrap_or(UNIX_EPOCH);
    let files = index
        .iter()
        .filter(regular_file)
        .filter_map(|e| {
            let m = fs::symlink_metadata(root.join(OsStr::from_bytes(&e.path))).ok()?;
            let modified = m.modified().ok()?;
            let clean = m.len() == u64::from(e.file_size)
                && m.mtime() == i64::from(e.mtime.seconds())
                && m.mtime_nsec() == i64::from(e.mtime.nanoseconds())
                && modified < index_time;
            m.is_file().then_some(MainFile {
                id: e.id,
                mode: e.mode,
                len: m.len(),
                modified,
                clean,
                path: e.path,
            })
        })
        .collect();
    Ok(Survey {
        root: root.to_path_buf(),
        files,
    })
}

impl Survey {
    fn get(&self, path: &[u8]) -> Option<&MainFile> {
        self.files
            .binary_search_by(|f| f.path.as_slice().cmp(path))
            .ok()
            .map(|i| &self.files[i])
    }
}

/// Give each tracked file of the box at `box_path` that is the main checkout's, byte
/// for byte, the main file's modification time, and write the box's index (at
/// `box_index`) to match. Returns how many files were given their time. Errors leave
/// the box usable (its index is merely stale by stat, which git repairs on its next
/// status).
pub fn keep_freshness(
    main: &Survey,
    box_path: &Path,
    box_index: &Path,
) -> Result<usize, git2::Error> {
    let mut index = git2::Index::open(box_index)?;
    // The candidates: regular files at stage 0 (not links, submodules or conflicts)
    // with the main checkout's blob and mode.
    let candidates: Vec<(git2::IndexEntry, &MainFile)> = index
        .iter()
        .filter(regular_file)
        .filter_map(|e| {
            let m = main.get(&e.path)?;
            (m.id == e.id && m.mode == e.mode).then_some((e, m))
        })
        .collect();
    // A few system calls per file, most of them metadata writes: on two threads or
    // more where there are enough files to pay for them; the index takes the entries
    // as they come.
    let budget = std::sync::atomic::AtomicU64::new(64 << 20);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4)
        .min(candidates.len() / 64)
        .max(1);
    let chunk = candidates.len().div_ceil(threads).max(1);
    let mut parts: Vec<Vec<_>> = Vec::with_capacity(threads);
    let mut rest = candidates.into_iter().peekable();
    while rest.peek().is_some() {
        parts.push(rest.by_ref().take(chunk).collect());
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let added = std::thread::scope(|s| {
        for part in parts {
            let (budget, tx) = (&budget, tx.clone());
            s.spawn(move || {
                for (entry, m) in part {
                    if let Some(e) = keep_time(&main.root, box_path, entry, m, budget) {
                        if tx.send(e).is_err() {
                            return;
                        }
                    }
                }
            });
        }
        drop(tx);
        let mut n = 0;
        for e in rx {
            index.add(&e)?;
            n += 1;
        }
        Ok::<usize, git2::Error>(n)
    })?;
    if added > 0 {
        index.write()?;
    }
    Ok(added)
}

/// One file of [`keep_freshness`]: when the box's file at `entry` holds the bytes of the
/// main checkout's (`main`), give it the main file's modification time and return the
/// entry with the box file's new stat.
fn keep_time(
    main_root: &Path,
    box_path: &Path,
    mut entry: git2::IndexEntry,
    main: &MainFile,
    budget: &std::sync::atomic::AtomicU64,
) -> Option<git2::IndexEntry> {
    let rel = Path::new(OsStr::from_bytes(&entry.path));
    // A file git would read again (a fresh clone's files are racy) is compared byte
    // for byte, within a budget.
    if !main.clean && !same_bytes(&main_root.join(rel), &box_path.join(rel), main.len, budget) {
        return None;
    }
    let file = open_source(&box_path.join(rel)).ok()?;
    let before = file.metadata().ok()?;
    if !before.is_file() || before.len() != main.len {
        return None;
    }
    file.set_times(FileTimes::new().set_modified(main.modified))
        .ok()?;
    let now = file.metadata().ok()?;
    entry.mtime = git2::IndexTime::new(now.mtime() as i32, now.mtime_nsec() as u32);
    entry.ctime = git2::IndexTime::new(now.ctime() as i32, now.ctime_nsec() as u32);
    entry.dev = now.dev() as u32;
    entry.ino = now.ino() as u32;
    Some(entry)
}

/// Do the main checkout's file (`len` bytes long, a regular file when last looked at)
/// and the box's hold the same bytes? Read only regular files of that size up to 1 MiB,
/// while `budget` (bytes read) lasts; anything else counts as different.
fn same_bytes(main: &Path, boxed: &Path, len: u64, budget: &std::sync::atomic::AtomicU64) -> bool {
    use std::sync::atomic::Ordering;
    if len > 1 << 20 {
        return false;
    }
    let taken = budget.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
        left.checked_sub(len * 2)
    });
    if taken.is_err() {
        return false;
    }
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
        use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
        let d = tempfile::tempdir().unwrap();
        let (a, b, c) = (d.path().join("a"), d.path().join("b"), d.path().join("c"));
        fs::write(&a, b"same\n").unwrap();
        fs::write(&b, b"same\n").unwrap();
        fs::write(&c, b"diff\n").unwrap();
        let meta = fs::symlink_metadata(&a).unwrap();
        let budget = AtomicU64::new(1 << 20);
        assert!(same_bytes(&a, &b, meta.len(), &budget));
        assert_eq!(budget.load(Relaxed), (1 << 20) - 10, "both files count");
        assert!(!same_bytes(&a, &c, meta.len(), &budget));
        // A link in the box is never read through.
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        assert!(!same_bytes(&a, &link, meta.len(), &budget));
        // Out of budget: counted as different, nothing read.
        let empty = AtomicU64::new(4);
        assert!(!same_bytes(&a, &b, meta.len(), &empty));
        assert_eq!(empty.load(Relaxed), 4);
        // Over 1 MiB: never compared.
        let big = d.path().join("big");
        fs::write(&big, vec![0u8; (1 << 20) + 1]).unwrap();
        let big_meta = fs::symlink_metadata(&big).unwrap();
        let plenty = AtomicU64::new(u64::MAX / 4);
        assert!(!same_bytes(&big, &big, big_meta.len(), &plenty));
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
