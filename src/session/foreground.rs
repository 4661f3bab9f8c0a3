//! Foreground sessions: the program (agent, shell, `git sandbox run`'s command) runs as
//! a child of the command that launched it — without tmux, or without a terminal and
//! without `-d` (SPEC §7a). That command holds the box's session marker; while the
//! child runs it also names it in a holder file (`session.fg.<pid>`: the child's pid
//! and its start time, host-owned, outside every mount), so that removing the box
//! (`teardown --force`, `down -f`) ends the program as it ends a tmux session's,
//! instead of pulling the box from under a running agent.
//!
//! Ending one checks that the pid still names the process that was started (its start
//! time in `/proc/<pid>/stat`), so a stale file never gets a pid the kernel has since
//! reused killed. Called by the CLI's launching code ([`run`]) and by
//! [`super::end`].

use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

use crate::cmd::Cmd;
use crate::state::session as marker;

/// The longest a holder file may be (a pid and a start time).
const HOLDER_MAX: u64 = 64;
/// How long a held marker may go without a holder file before [`end`] takes it that
/// no foreground program runs (a holder names its child right after starting it).
const NAMING: Duration = Duration::from_millis(500);

/// Run `cmd` in the foreground ([`Cmd::run_in_foreground`]), naming it as a holder of
/// the box whose marker is `marker` while it runs.
///
/// A command with an ender ([`Cmd::ender`]: a program in a box's container) is seen
/// through: a hang-up or termination of this process (its terminal closed) is passed
/// to the child, and once the child is gone by a signal, or was hung up on, the ender
/// ends what it left running in the box.
pub fn run(cmd: &Cmd, marker_path: &Path) -> std::io::Result<ExitStatus> {
    let mut noted: Option<Noted> = None;
    // Not the starter's agent session's variables ([`super::OUTER_SESSION_VARS`]).
    let cmd = super::OUTER_SESSION_VARS
        .iter()
        .fold(cmd.clone(), |c, v| c.env_remove(*v));
    let ends = !cmd.ender.is_empty();
    let old = ends.then(hold_on);
    let status = cmd.run_in_foreground_noting(|pid| {
        CHILD.store(pid as i32, Ordering::SeqCst);
        let path = marker::holder_path(marker_path, pid);
        if let Some(start) = start_time(pid as i32) {
            let text = format!("{pid} {start}\n");
            if crate::state::atomic::write(&path, text.as_bytes(), 0o600).is_ok() {
                noted = Some(Noted(path));
            }
        }
    });
    CHILD.store(0, Ordering::SeqCst);
    if let Some(old) = old {
        use std::os::unix::process::ExitStatusExt;
        let signalled = status.as_ref().is_ok_and(|st| st.signal().is_some());
        if signalled || CUT.swap(false, Ordering::SeqCst) {
            drop(noted.take());
            super::run_ender(&cmd);
        }
        // SAFETY: restoring the dispositions [`hold_on`] replaced.
        unsafe {
            libc::signal(libc::SIGHUP, old[0]);
            libc::signal(libc::SIGTERM, old[1]);
        }
    }
    status
}

/// The child of [`run`] while it runs (0 before and after).
static CHILD: AtomicI32 = AtomicI32::new(0);
/// Whether [`run`]'s process was hung up on or terminated while its child ran.
static CUT: AtomicBool = AtomicBool::new(false);

/// Signal handler: note the cut, and pass the signal to the child.
extern "C" fn pass_to_child(sig: libc::c_int) {
    CUT.store(true, Ordering::SeqCst);
    let child = CHILD.load(Ordering::SeqCst);
    if child > 1 {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe {
            libc::kill(child, sig);
        }
    }
}

/// Outlive a hang-up or termination, passing it to the child: the old dispositions.
fn hold_on() -> [libc::sighandler_t; 2] {
    CUT.store(false, Ordering::SeqCst);
    let handler = pass_to_child as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: installing a handler that only does atomic loads/stores and kill(2);
    // the child gets the defaults back at exec (a handler does not survive it).
    // One ignored (`nohup`) stays ignored, for the child too.
    unsafe {
        [libc::SIGHUP, libc::SIGTERM].map(|sig| {
            let old = libc::signal(sig, handler);
            if old == libc::SIG_IGN {
                libc::signal(sig, libc::SIG_IGN);
            }
            old
        })
    }
}

/// A holder file, removed when its child has ended.
struct Noted(PathBuf);

impl Drop for Noted {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A process named in a holder file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Holder {
    pid: i32,
    start: u64,
}

fn parse_holder(text: &str) -> Option<Holder> {
    let mut words = text.split_whitespace();
    let pid: i32 = words.next()?.parse().ok()?;
    let start: u64 = words.next()?.parse().ok()?;
    (pid > 1 && words.next().is_none()).then_some(Holder { pid, start })
}

fn read_holder(path: &Path) -> Option<Holder> {
    let m = std::fs::symlink_metadata(path).ok()?;
    if !m.is_file() || m.len() > HOLDER_MAX {
        return None;
    }
    parse_holder(&std::fs::read_to_string(path).ok()?)
}

/// The start time (clock ticks since boot, field 22 of `/proc/<pid>/stat`) of a
/// process that is running — not a zombie, which is as good as gone.
pub(crate) fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat)
}

/// Field 22 of a `/proc/<pid>/stat` line, unless the process is a zombie. The
/// command name (field 2) may hold spaces and parentheses: the fields after it
/// start after its last `)`.
fn parse_stat(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is field 3 (the state); field 22 is fields[19].
    if matches!(fields.first(), Some(&"Z") | Some(&"X") | None) {
        return None;
    }
    fields.get(19)?.parse().ok()
}

/// Is the process `h` names running now?
fn running(h: Holder) -> bool {
    start_time(h.pid) == Some(h.start)
}

fn signal(h: Holder, sig: libc::c_int) {
    if !running(h) {
        return;
    }
    // SAFETY: kill(2) with a pid and a signal number touches no memory. The pid was
    // checked to be the process that was started (its start time); `-pid` is the
    // group it leads, should it have made one (an interactive shell does), else ESRCH.
    unsafe {
        libc::kill(h.pid, sig);
        libc::kill(-h.pid, sig);
    }
}

fn wait_gone(holders: &[Holder], limit: Duration) -> bool {
    let since = Instant::now();
    loop {
        if !holders.iter().any(|h| running(*h)) {
            return true;
        }
        if since.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// End every foreground program running in the box whose marker is `marker`: a
/// termination, then after `grace` a kill. Returns the pids of those still running
/// after that (none, unless the kernel would not let them go).
pub fn end(marker_path: &Path, grace: Duration) -> Vec<i32> {
    let mut paths = marker::holder_paths(marker_path);
    let since = Instant::now();
    // A holder that has just started its program names it a moment later (it holds
    // the marker first): wait that moment rather than leave the program running.
    while paths.is_empty() && marker::is_live(marker_path) && since.elapsed() < NAMING {
        std::thread::sleep(Duration::from_millis(10));
        paths = marker::holder_paths(marker_path);
    }
    let mut holders = Vec::new();
    for path in paths {
        match read_holder(&path) {
            Some(h) if running(h) => holders.push(h),
            // Its program has ended (or the file is junk): nothing to end.
            _ => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    if holders.is_empty() {
        return Vec::new();
    }
    for h in &holders {
        signal(*h, libc::SIGTERM);
    }
    if !wait_gone(&holders, grace) {
        for h in &holders {
            signal(*h, libc::SIGKILL);
        }
        wait_gone(&holders, grace);
    }
    holders
        .iter()
        .filter(|h| running(**h))
        .map(|h| h.pid)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_files_parse_strictly() {
        assert_eq!(
            parse_holder("4242 987654\n"),
            Some(Holder {
                pid: 4242,
                start: 987654
            })
        );
        for bad in ["", "4242", "1 5", "0 5", "-3 5", "x 5", "42 5 6", "42 -5"] {
            assert_eq!(parse_holder(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn stat_lines_give_the_start_time_unless_a_zombie() {
        let line =
            "77 (a (weird) name) S 1 77 77 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000 10";
        assert_eq!(parse_stat(line), Some(123456));
        let zombie = line.replace(") S 1", ") Z 1");
        assert_eq!(parse_stat(&zombie), None);
        assert_eq!(parse_stat("garbage"), None);
        // This process is running; its own start time reads back.
        assert!(start_time(std::process::id() as i32).is_some());
    }

    #[test]
    fn ending_kills_the_named_child_and_spares_a_stale_file() {
        let d = tempfile::tempdir().unwrap();
        let m = d.path().join("b/session.lock");
        std::fs::create_dir_all(m.parent().unwrap()).unwrap();
        let marker_for_thread = m.clone();
        // A child that ignores terminations (once it says so): the kill after the
        // grace ends it.
        let ready = d.path().join("ready");
        let cmd = Cmd::new("sh").args([
            "-c",
            "trap '' TERM; : > \"$1\"; while :; do sleep 0.05; done",
            "sh",
            &ready.to_string_lossy(),
        ]);
        let waiter = std::thread::spawn(move || run(&cmd, &marker_for_thread).unwrap());
        let since = Instant::now();
        while marker::holder_paths(&m).is_empty() || !ready.exists() {
            assert!(since.elapsed() < Duration::from_secs(10), "never started");
            std::thread::sleep(Duration::from_millis(10));
        }
        // A stale file naming this very process with another start time: not touched.
        let stale = marker::holder_path(&m, std::process::id());
        std::fs::write(&stale, format!("{} 1\n", std::process::id())).unwrap();
        let left = end(&m, Duration::from_millis(300));
        assert!(left.is_empty(), "{left:?}");
        let status = waiter.join().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        // Every holder file is gone: the child's (its runner removed it) and the stale one.
        assert!(marker::holder_paths(&m).is_empty());
    }
}
