//! Cloning cargo's `target/` into a new box after `create` returns, under cargo's own
//! build lock.
//!
//! A large `target/` costs tenths of a second to clone by reflink (thousands of files,
//! each a create, a clone and a time set): most of a create. On the host runner the
//! clone runs in a process of its own (the *warmer*, this binary run as
//! `git-treebox __treebox-warm …`). Before `create` goes on, the warmer has made the
//! box's `target/` and its profile directories (`target/debug`, `target/release`,
//! `target/<triple>/<profile>`: those holding a `.cargo-lock` in the main checkout) and
//! holds an exclusive `flock` on each profile's `.cargo-lock`: the lock every cargo
//! command takes before it reads or writes that profile's outputs. A `cargo build`
//! started in the box meanwhile says "Blocking waiting for file lock" and then finds the
//! outputs whole. The race a copy behind `create`'s back would otherwise have (a build
//! that starts first builds cold, or reads half a tree) cannot happen.
//!
//! Crash-safe: each profile's `.fingerprint/`, what makes cargo trust an output, is
//! cloned last under a temporary name and renamed into place; a warmer killed before
//! that leaves outputs without fingerprints, and cargo rebuilds them. A failed clone
//! removes what it made (the profile directories and their lock files stay, empty).
//! The outcome is written to `warm.json` beside the box's record; `warm.lock` there
//! is held (with the warmer's pid in it) while the warmer runs, so a teardown can stop
//! it and wait for it before removing the box ([`stop`]).
//!
//! Host runner only: there, whatever runs in the box (setup, the agent) runs as the
//! user already, so the paths the warmer writes through give it nothing new. A
//! container box is warmed before its container starts, synchronously.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use fs4::fs_std::FileExt;

use super::tree::{fill, walk};
use crate::vocab::WarmMethod;

/// The first argument that turns either binary into a warmer.
pub const WARMER_ARG: &str = "__treebox-warm";

/// The file a warmer holds locked while it runs (its pid inside), in the box's
/// bookkeeping dir.
const LOCK: &str = "warm.lock";
/// The warmer's outcome, in the box's bookkeeping dir.
const OUTCOME: &str = "warm.json";
/// What a warmer is sent once the box's checkout exists: make `target/` and lock it.
const ARM: &str = "arm\n";
/// What a warmer prints once it holds every profile's lock.
const READY: &str = "locked";
/// The temporary name a profile's fingerprints are cloned under.
const FINGERPRINT_TMP: &str = ".fingerprint.treebox-warm";

/// What a warmer was asked to do: `(main checkout's target, box's target, box's
/// bookkeeping dir)`, when this process was started as one.
pub fn warmer_args() -> Option<(PathBuf, PathBuf, PathBuf)> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != WARMER_ARG {
        return None;
    }
    let mut next = || PathBuf::from(args.next().unwrap_or_default());
    Some((next(), next(), next()))
}

/// The profile directories of a cargo target dir, relative to it: those holding cargo's
/// `.cargo-lock`, at `<profile>` or `<triple>/<profile>`. Symlinks are not followed.
pub fn profiles(target: &Path) -> Vec<PathBuf> {
    let is_dir = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    let locked = |p: &Path| fs::symlink_metadata(p.join(".cargo-lock")).is_ok_and(|m| m.is_file());
    let mut out = Vec::new();
    let Ok(top) = fs::read_dir(target) else {
        return out;
    };
    for e in top.flatten() {
        let rel = PathBuf::from(e.file_name());
        let at = target.join(&rel);
        if !is_dir(&at) {
            continue;
        }
        if locked(&at) {
            out.push(rel);
            continue;
        }
        for inner in fs::read_dir(&at).into_iter().flatten().flatten() {
            let at = inner.path();
            if is_dir(&at) && locked(&at) {
                out.push(rel.join(inner.file_name()));
            }
        }
    }
    out.sort();
    out
}

/// A warmer that holds cargo's locks and waits for its go: dropping this (explicitly,
/// or when the process that started it ends) lets it clone.
#[derive(Debug)]
pub struct Warmer {
    _go: std::process::ChildStdin,
}

/// A warmer started before the box's checkout exists: it has done nothing yet, and
/// waits to be [`Pending::arm`]ed. Dropped unarmed (or when this process ends first),
/// it ends without writing anything. Started early so that its start costs nothing:
/// it runs while git makes the checkout.
#[derive(Debug)]
pub struct Pending {
    /// `None` once armed: the warmer is on its own then.
    child: Option<std::process::Child>,
}

/// Start a warmer for `main_target` → `box_target` (which must not exist yet when it
/// is armed), `state` being the box's bookkeeping dir. See [`Pending`].
pub fn spawn(main_target: &Path, box_target: &Path, state: &Path) -> io::Result<Pending> {
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.arg(WARMER_ARG)
        .arg(main_target)
        .arg(box_target)
        .arg(state)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches no memory of this process. Its
    // own session: a terminal's hang-up or interrupt is not the warmer's.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    Ok(Pending {
        child: Some(cmd.spawn()?),
    })
}

impl Pending {
    /// Have the warmer make the box's `target/` and take every profile's lock, and
    /// return once it holds them: from then on a cargo command in the box waits for the
    /// clone. The clone starts when the returned [`Warmer`] is dropped, so it does not
    /// compete with the rest of `create` (on XFS, the clone's log traffic would be paid
    /// by `create`'s own fsyncs); drop it before anything that might run cargo in the
    /// box. The warmer runs on in its own session after this process ends; its outcome
    /// goes to `state/warm.json`.
    pub fn arm(mut self) -> io::Result<Warmer> {
        let Some(child) = self.child.as_mut() else {
            return Err(io::Error::other("the warmer was armed already"));
        };
        let mut line = String::new();
        let asked = match child.stdin.as_mut() {
            Some(go) => go.write_all(ARM.as_bytes()).and_then(|()| go.flush()),
            None => Err(io::Error::from(io::ErrorKind::BrokenPipe)),
        };
        if asked.is_ok() {
            if let Some(out) = child.stdout.take() {
                let _ = io::BufReader::new(out).read_line(&mut line);
            }
        }
        if line.trim_end() == READY {
            if let Some(go) = child.stdin.take() {
                // Not waited for: it outlives this process (and is the init process's
                // then).
                self.child = None;
                return Ok(Warmer { _go: go });
            }
        }
        Err(io::Error::other(match line.trim() {
            "" => "the warmer did not start".to_string(),
            why => crate::sanitize::line(why),
        }))
        // Dropped: its pipe closed, it ends and is waited for.
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // Unarmed (or refused), it ends at the end of its input.
            drop(child.stdin.take());
            let _ = child.wait();
        }
    }
}

/// [`spawn`] and [`Pending::arm`] at once.
pub fn start(main_target: &Path, box_target: &Path, state: &Path) -> io::Result<Warmer> {
    spawn(main_target, box_target, state)?.arm()
}

/// The warmer's main: returns its exit code (0 when the clone is whole).
pub fn serve(main_target: &Path, box_target: &Path, state: &Path) -> i32 {
    warm(main_target, box_target, state, io::stdout(), io::stdin())
}

/// [`serve`]: once `go` says [`ARM`] (at its end before that, nothing is done), take
/// the locks and say so on `stdout` (or why it could not), then close it, and wait for
/// the end of `go` before cloning.
fn warm(
    main_target: &Path,
    box_target: &Path,
    state: &Path,
    mut stdout: impl Write,
    go: impl Read,
) -> i32 {
    let mut go = io::BufReader::new(go);
    let mut asked = String::new();
    if go.read_line(&mut asked).is_err() || asked != ARM {
        return 0;
    }
    let started = Instant::now();
    let _running = match hold_running(state) {
        Ok(f) => f,
        Err(e) => {
            let _ = writeln!(stdout, "could not lock {}: {e}", state.join(LOCK).display());
            return 1;
        }
    };
    let profiles = profiles(main_target);
    let _locks = match prepare(main_target, box_target, &profiles) {
        Ok(l) => l,
        Err(e) => {
            let _ = writeln!(stdout, "{e}");
            return 1;
        }
    };
    let _ = writeln!(stdout, "{READY}");
    let _ = stdout.flush();
    drop(stdout);
    // The starter says go by closing the pipe (or by ending).
    let mut byte = [0u8; 64];
    while matches!(go.read(&mut byte), Ok(n) if n > 0) {}
    // Behind the create that started it and the agent it launches; a cargo command
    // waiting for the clone is what makes it urgent, and by then the machine is idle.
    // SAFETY: changes this thread's priority only (the copying threads inherit it).
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 10) };
    // Made durable at the end: on XFS a directory's fsync forces the log with the
    // clone's thousands of creates in it, here in the background instead of in the
    // next fsync of whoever writes to that filesystem next (the next create's record).
    let result = clone_target(main_target, box_target, &profiles)
        .and_then(|done| File::open(box_target)?.sync_all().map(|()| done));
    if result.is_err() {
        rollback(box_target, &profiles);
    }
    let outcome = match &result {
        Ok((files, bytes)) => serde_json::json!({
            "state": "done",
            "files": files,
            "bytes": bytes,
            "seconds": started.elapsed().as_secs_f64(),
        }),
        Err(e) => serde_json::json!({
            "state": "failed",
            "error": crate::sanitize::line(&e.to_string()),
            "seconds": started.elapsed().as_secs_f64(),
        }),
    };
    let _ = crate::state::atomic::write(
        &state.join(OUTCOME),
        format!("{outcome:#}\n").as_bytes(),
        0o600,
    );
    i32::from(result.is_err())
}

/// Take `state/warm.lock` for the warmer's lifetime and write its pid in it.
fn hold_running(state: &Path) -> io::Result<File> {
    fs::create_dir_all(state)?;
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o600)
        .open(state.join(LOCK))?;
    if !FileExt::try_lock_exclusive(&f)? {
        return Err(io::Error::other("another warmer holds it"));
    }
    f.set_len(0)?;
    writeln!(f, "{}", std::process::id())?;
    Ok(f)
}

/// Make `box_target` and its profile directories, and lock each profile's
/// `.cargo-lock` (made new here, as cargo makes it). Returns the held locks.
fn prepare(main_target: &Path, box_target: &Path, profiles: &[PathBuf]) -> io::Result<Vec<File>> {
    if profiles.is_empty() {
        return Err(io::Error::other(format!(
            "{} holds no cargo profile",
            main_target.display()
        )));
    }
    fs::create_dir(box_target)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", box_target.display())))?;
    // Made here, so ours to remove if the locks cannot all be had: the starter then
    // clones in the foreground, into a box without a half-made target/.
    lock_profiles(main_target, box_target, profiles).inspect_err(|_| {
        let _ = super::super::rollback::make_writable_and_remove(box_target);
    })
}

/// Make each profile directory in the new `box_target` and lock its `.cargo-lock`.
fn lock_profiles(
    main_target: &Path,
    box_target: &Path,
    profiles: &[PathBuf],
) -> io::Result<Vec<File>> {
    let mode = |p: &Path| fs::symlink_metadata(p).map_or(0o755, |m| m.mode() & 0o7777);
    let mut locks = Vec::new();
    for p in profiles {
        let mut at = box_target.to_path_buf();
        for c in p.components() {
            at.push(c);
            if fs::symlink_metadata(&at).is_err() {
                fs::create_dir(&at)?;
            }
        }
        let lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(mode(&main_target.join(p).join(".cargo-lock")) & 0o777)
            .open(at.join(".cargo-lock"))?;
        if !FileExt::try_lock_exclusive(&lock)? {
            return Err(io::Error::other(format!(
                "{} is locked already",
                at.join(".cargo-lock").display()
            )));
        }
        locks.push(lock);
    }
    let _ = fs::set_permissions(
        box_target,
        fs::Permissions::from_mode(mode(main_target) | 0o700),
    );
    Ok(locks)
}

/// Clone everything but the profiles' lock files in place, then each profile's
/// fingerprints under a temporary name renamed into place. Returns the files and bytes
/// cloned.
fn clone_target(
    main_target: &Path,
    box_target: &Path,
    profiles: &[PathBuf],
) -> io::Result<(u64, u64)> {
    let later = |rel: &Path| {
        profiles
            .iter()
            .any(|p| rel == p.join(".fingerprint") || rel == p.join(".cargo-lock"))
    };
    let premade = |rel: &Path| profiles.iter().any(|p| p.starts_with(rel));
    // The main checkout's profiles hold still while they are read: a cargo build there
    // waits (as it would for another cargo), and one running now is waited for, so no
    // output is cloned half-written or out of step with its fingerprint.
    let _main_locks = lock_main_profiles(main_target, profiles, &mut |_| {})?;
    let entries = walk(main_target, &later)?;
    // Outside the profiles cargo writes without its lock (`cargo fetch`, run by setup
    // meanwhile, writes `target/.rustc_info.json`): what is there already is kept.
    let (mut files, mut bytes) = fill(
        main_target,
        box_target,
        &entries,
        &premade,
        true,
        WarmMethod::Reflink,
        &mut |_, _| {},
    )?;
    for p in profiles {
        let src = main_target.join(p).join(".fingerprint");
        let Ok(meta) = fs::symlink_metadata(&src) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let tmp = box_target.join(p).join(FINGERPRINT_TMP);
        let entries = walk(&src, &|_| false)?;
        fs::create_dir(&tmp)?;
        let (f, b) = fill(
            &src,
            &tmp,
            &entries,
            &|_| false,
            false,
            WarmMethod::Reflink,
            &mut |_, _| {},
        )?;
        fs::set_permissions(&tmp, fs::Permissions::from_mode(meta.mode() & 0o7777))?;
        rename_noreplace(&tmp, &box_target.join(p).join(".fingerprint"))?;
        files += f;
        bytes += b;
    }
    Ok((files, bytes))
}

/// The main checkout's cargo locks a copy of `dirs` (relative to `main_root`) reads
/// under, as the warmer reads: each profile's, where `target/` is among them; `waiting`
/// hears of a profile (`target/<profile>`) a build there holds, before it is waited for.
pub fn lock_main_for_copy(
    main_root: &Path,
    dirs: &[PathBuf],
    waiting: &mut dyn FnMut(&Path),
) -> io::Result<Vec<File>> {
    let target = Path::new(super::CARGO_TARGET);
    if !dirs.iter().any(|d| d == target) {
        return Ok(Vec::new());
    }
    let main_target = main_root.join(target);
    lock_main_profiles(&main_target, &profiles(&main_target), &mut |p| {
        waiting(&target.join(p))
    })
}

/// Lock each of the main checkout's `profiles` (under `main_target`) as cargo does, so
/// that none of their outputs is read half-written or out of step with its
/// fingerprints: a build there that holds one is waited for, and `waiting` hears of
/// that profile first. The locks last as long as the returned files.
fn lock_main_profiles(
    main_target: &Path,
    profiles: &[PathBuf],
    waiting: &mut dyn FnMut(&Path),
) -> io::Result<Vec<File>> {
    profiles
        .iter()
        .map(|p| lock_main(&main_target.join(p).join(".cargo-lock"), &mut || waiting(p)))
        .collect()
}

/// Lock the main checkout's `.cargo-lock` at `path` as cargo does, waiting (after
/// `waiting`) for a build that holds it. Opened for reading, without following a link
/// or creating anything.
fn lock_main(path: &Path, waiting: &mut dyn FnMut()) -> io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(io::Error::other(format!(
            "{} is not a file",
            path.display()
        )));
    }
    if !FileExt::try_lock_exclusive(&f)? {
        waiting();
        FileExt::lock_exclusive(&f)?;
    }
    Ok(f)
}

/// Rename `from` to `to` unless `to` exists (never onto an empty directory either).
fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
    };
    let (a, b) = (c(from)?, c(to)?);
    // SAFETY: both are valid C strings for the duration of the call.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Undo a failed clone: the fingerprints first (without them nothing left is trusted),
/// then everything but the profile directories and their lock files.
fn rollback(box_target: &Path, profiles: &[PathBuf]) {
    for p in profiles {
        let _ = super::super::rollback::make_writable_and_remove(
            &box_target.join(p).join(FINGERPRINT_TMP),
        );
        let _ = super::super::rollback::make_writable_and_remove(
            &box_target.join(p).join(".fingerprint"),
        );
    }
    clear(box_target, Path::new(""), profiles);
}

fn clear(dir: &Path, rel: &Path, profiles: &[PathBuf]) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let r = rel.join(e.file_name());
        let path = e.path();
        if profiles.iter().any(|p| p.starts_with(&r)) {
            clear(&path, &r, profiles);
        } else if !profiles.iter().any(|p| r == p.join(".cargo-lock")) {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = super::super::rollback::make_writable_and_remove(&path);
            } else {
                let _ = fs::remove_file(&path);
            }
        }
    }
}

/// Stop the box's warmer, if one runs (its bookkeeping dir is `state`), and wait until
/// it has ended: before a teardown removes the box.
pub fn stop(state: &Path) {
    let Ok(mut f) = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(state.join(LOCK))
    else {
        return;
    };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return;
    }
    if FileExt::try_lock_exclusive(&f).unwrap_or(true) {
        return;
    }
    // Held: its holder is alive, and wrote its pid once it held it.
    let mut text = String::new();
    let _ = Read::by_ref(&mut f).take(32).read_to_string(&mut text);
    if let Ok(pid) = text.trim().parse::<i32>() {
        if pid > 1 {
            // SAFETY: a plain signal to the process that holds the lock.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
    }
    let _ = FileExt::lock_exclusive(&f);
}

/// How a box's warmer ended, from its `warm.json`: `None` while it runs or when there
/// was none; `Some(Err(why))` when its clone failed.
pub fn outcome(state: &Path) -> Option<Result<(), String>> {
    let text = crate::untrusted::read_regular(
        &state.join(OUTCOME),
        64 * 1024,
        crate::untrusted::Links::Refuse,
    )
    .ok()?;
    let doc: serde_json::Value = serde_json::from_slice(&text).ok()?;
    match doc["state"].as_str()? {
        "done" => Some(Ok(())),
        _ => Some(Err(doc["error"].as_str().unwrap_or("failed").to_string())),
    }
}

/// Why the clone of `target/` for the box with bookkeeping `state` did not finish, if
/// it did not: its warmer said it failed (`warm.json`), or, for a box whose record says
/// its clone went to the `background`, the warmer ended without saying how (killed, or
/// the machine went down, mid-clone: see [`cut_short`]). `None` when it finished, still
/// runs, or never went to the background. What is left either way is safe (no
/// fingerprints, so cargo rebuilds), only not warm.
pub fn unfinished(state: &Path, background: bool) -> Option<String> {
    match outcome(state) {
        Some(Err(why)) => Some(why),
        Some(Ok(())) => None,
        None => (background && cut_short(state))
            .then(|| "cut short: its warmer ended before the clone did".to_string()),
    }
}

/// Did the warmer of the box with bookkeeping `state` end without saying how? Its
/// `warm.lock` is there and nobody holds it, and it wrote no `warm.json`. Meaningful only
/// where the record says the clone went to the background: such a warmer took that
/// lock before create returned (one that could not start leaves `background` false).
fn cut_short(state: &Path) -> bool {
    if fs::symlink_metadata(state.join(OUTCOME)).is_ok() {
        return false;
    }
    let Ok(f) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(state.join(LOCK))
    else {
        return false;
    };
    f.metadata().is_ok_and(|m| m.is_file()) && FileExt::try_lock_shared(&f).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cargo target dir: a debug profile with outputs and fingerprints, a release
    /// profile, a cross profile, and a `doc/` that is no profile.
    fn target(root: &Path) {
        for p in ["debug", "release", "x86_64-unknown-linux-gnu/debug"] {
            fs::create_dir_all(root.join(p).join("deps")).unwrap();
            fs::write(root.join(p).join(".cargo-lock"), b"").unwrap();
            fs::write(root.join(p).join("deps/libx.rlib"), vec![1u8; 9000]).unwrap();
            fs::create_dir_all(root.join(p).join(".fingerprint/x-1")).unwrap();
            fs::write(root.join(p).join(".fingerprint/x-1/lib-x"), b"abc").unwrap();
        }
        fs::create_dir_all(root.join("doc")).unwrap();
        fs::write(root.join("doc/index.html"), b"<html>").unwrap();
        fs::write(root.join("CACHEDIR.TAG"), b"Signature").unwrap();
        std::os::unix::fs::symlink("debug", root.join("alias")).unwrap();
    }

    /// A temp dir with a main checkout's target dir (see [`target`]), and where a box's
    /// target dir and bookkeeping go: `(dir, main target, box target, state)`.
    fn warming() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let (main, boxed, state) = (
            d.path().join("main"),
            d.path().join("box/target"),
            d.path().join("state"),
        );
        target(&main);
        fs::create_dir_all(boxed.parent().unwrap()).unwrap();
        (d, main, boxed, state)
    }

    /// Every path under `top` (directories too, links not followed), relative, sorted.
    fn listing(top: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut stack = vec![top.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for e in fs::read_dir(&dir).unwrap().flatten() {
                out.push(e.path().strip_prefix(top).unwrap().to_path_buf());
                if e.file_type().unwrap().is_dir() {
                    stack.push(e.path());
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn the_profiles_are_the_directories_cargo_locks() {
        let d = tempfile::tempdir().unwrap();
        target(d.path());
        assert_eq!(
            profiles(d.path()),
            vec![
                PathBuf::from("debug"),
                PathBuf::from("release"),
                PathBuf::from("x86_64-unknown-linux-gnu/debug"),
            ],
            "a symlink to a profile is not one"
        );
        assert!(profiles(&d.path().join("absent")).is_empty());
    }

    /// The warmer's main, in process: whole (where the filesystem clones) or, where it
    /// cannot, nothing but the empty locked profile directories, and the reason.
    #[test]
    fn a_warmer_clones_everything_or_leaves_only_the_profiles() {
        let (d, main, boxed, state) = warming();
        let mut said = Vec::new();
        let code = warm(&main, &boxed, &state, &mut said, ARM.as_bytes());
        let outcome = outcome(&state).expect("an outcome is written");
        let left: Vec<PathBuf> = listing(&boxed)
            .into_iter()
            .filter(|p| !boxed.join(p).is_dir())
            .collect();
        assert_eq!(said, b"locked\n");
        match outcome {
            Ok(()) => {
                assert_eq!(code, 0);
                for p in ["debug", "release", "x86_64-unknown-linux-gnu/debug"] {
                    let p = Path::new(p);
                    assert_eq!(
                        fs::read(boxed.join(p).join(".fingerprint/x-1/lib-x")).unwrap(),
                        b"abc"
                    );
                    assert!(!boxed.join(p).join(FINGERPRINT_TMP).exists());
                    assert_eq!(
                        fs::read(boxed.join(p).join("deps/libx.rlib"))
                            .unwrap()
                            .len(),
                        9000
                    );
                }
                assert_eq!(fs::read(boxed.join("doc/index.html")).unwrap(), b"<html>");
                assert_eq!(
                    fs::read_link(boxed.join("alias")).unwrap(),
                    Path::new("debug")
                );
            }
            Err(why) => {
                assert_eq!(code, 1);
                assert!(!why.is_empty());
                assert_eq!(
                    left,
                    vec![
                        PathBuf::from("debug/.cargo-lock"),
                        PathBuf::from("release/.cargo-lock"),
                        PathBuf::from("x86_64-unknown-linux-gnu/debug/.cargo-lock"),
                    ],
                    "only the profiles' locks are left"
                );
            }
        }
        // The main checkout's own is as it was.
        assert_eq!(
            fs::read(main.join("debug/.fingerprint/x-1/lib-x")).unwrap(),
            b"abc"
        );
        // A second warmer for the same box refuses: its target/ exists.
        let mut said = Vec::new();
        let again = warm(
            &main,
            &boxed,
            &d.path().join("state2"),
            &mut said,
            ARM.as_bytes(),
        );
        assert_eq!(again, 1);
        assert!(String::from_utf8_lossy(&said).contains("File exists"));
    }

    /// A warmer whose create ended before the checkout was made (its pipe closed
    /// unarmed, or anything but the word) does nothing at all.
    #[test]
    fn an_unarmed_warmer_writes_nothing() {
        let (d, main, boxed, state) = warming();
        for go in [&b""[..], b"ar", b"arm", b"armed\n"] {
            let mut said = Vec::new();
            assert_eq!(warm(&main, &boxed, &state, &mut said, go), 0);
            assert!(said.is_empty());
            assert!(!boxed.exists(), "no target/");
            assert!(!state.exists(), "no bookkeeping");
        }
        assert_eq!(listing(&d.path().join("box")), Vec::<PathBuf>::new());
    }

    /// A build running in the main checkout (holding its profile's lock) is waited for:
    /// nothing is read from its outputs until it lets go.
    #[test]
    fn a_warmer_waits_for_a_build_in_the_main_checkout() {
        let (_d, main, boxed, state) = warming();
        let building = File::open(main.join("release/.cargo-lock")).unwrap();
        FileExt::lock_exclusive(&building).unwrap();
        let (m, b, st) = (main.clone(), boxed.clone(), state.clone());
        let warmer = std::thread::spawn(move || warm(&m, &b, &st, io::sink(), ARM.as_bytes()));
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(!warmer.is_finished(), "the warmer waits for the main build");
        assert!(outcome(&state).is_none());
        assert!(
            !boxed.join("debug/deps").exists(),
            "nothing is cloned while it waits"
        );
        // Meanwhile cargo writes outside the profiles without its lock (`cargo fetch`
        // writes `.rustc_info.json`): kept, and no reason to fail.
        fs::write(boxed.join("CACHEDIR.TAG"), b"cargo's own").unwrap();
        FileExt::unlock(&building).unwrap();
        warmer.join().unwrap();
        match outcome(&state).expect("then it goes on") {
            Ok(()) => {
                assert_eq!(
                    fs::read(boxed.join("CACHEDIR.TAG")).unwrap(),
                    b"cargo's own"
                );
                assert!(boxed.join("debug/.fingerprint/x-1/lib-x").is_file());
            }
            // This filesystem cannot clone: only the locked profiles are left.
            Err(_) => assert!(!boxed.join("debug/deps").exists()),
        }
    }

    #[test]
    fn a_failed_clone_is_undone_fingerprints_first() {
        let d = tempfile::tempdir().unwrap();
        let boxed = d.path().join("target");
        target(&boxed);
        fs::create_dir_all(boxed.join("debug").join(FINGERPRINT_TMP)).unwrap();
        let profiles = profiles(&boxed);
        rollback(&boxed, &profiles);
        let left = listing(&boxed);
        let want: Vec<PathBuf> = [
            "debug",
            "debug/.cargo-lock",
            "release",
            "release/.cargo-lock",
            "x86_64-unknown-linux-gnu",
            "x86_64-unknown-linux-gnu/debug",
            "x86_64-unknown-linux-gnu/debug/.cargo-lock",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(left, want);
    }

    /// A teardown stops a running warmer and waits for it: here the holder of
    /// `warm.lock` is `flock -o` (it holds the lock itself, not the command it runs).
    #[test]
    fn stop_ends_the_holder_and_waits_for_it() {
        let d = tempfile::tempdir().unwrap();
        let lock = d.path().join(LOCK);
        fs::write(&lock, b"").unwrap();
        let Ok(mut holder) = Command::new("sh")
            .arg("-c")
            .arg("echo $$ > \"$1\"; exec flock -o \"$1\" sleep 20")
            .arg("sh")
            .arg(&lock)
            // Its own group, to end the `sleep` that outlives `flock` below; and none of
            // the test's output handles, which that `sleep` would keep open until then.
            .process_group(0)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
        else {
            return;
        };
        // Wait until it holds the lock.
        let f = File::open(&lock).unwrap();
        let start = Instant::now();
        while FileExt::try_lock_exclusive(&f).unwrap() {
            FileExt::unlock(&f).unwrap();
            assert!(start.elapsed().as_secs() < 10, "flock never took the lock");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        stop(d.path());
        let status = holder.wait().unwrap();
        // SAFETY: a plain kill(2) of the group this test made.
        unsafe { libc::kill(-(holder.id() as i32), libc::SIGKILL) };
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
        assert!(FileExt::try_lock_exclusive(&f).unwrap(), "released");
        // Nobody holds it: nothing to stop, and no wait.
        FileExt::unlock(&f).unwrap();
        stop(d.path());
        stop(&d.path().join("absent"));
    }

    /// A warmer that ended without an outcome is told from one still running (its lock
    /// held) and from one that said how it ended.
    #[test]
    fn a_warmer_gone_without_an_outcome_is_cut_short() {
        let d = tempfile::tempdir().unwrap();
        assert!(!cut_short(d.path()), "no warmer was ever started");
        let lock = File::create(d.path().join(LOCK)).unwrap();
        assert!(cut_short(d.path()));
        FileExt::lock_exclusive(&lock).unwrap();
        assert!(!cut_short(d.path()), "still running");
        FileExt::unlock(&lock).unwrap();
        fs::write(d.path().join(OUTCOME), "{\"state\": \"done\"}\n").unwrap();
        assert!(!cut_short(d.path()), "it said how it ended");
        assert_eq!(unfinished(d.path(), true), None);
        fs::remove_file(d.path().join(OUTCOME)).unwrap();
        assert!(unfinished(d.path(), true).is_some_and(|w| w.starts_with("cut short")));
        assert_eq!(
            unfinished(d.path(), false),
            None,
            "never went to the background"
        );
    }
}
