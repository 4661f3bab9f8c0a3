//! A read of one box's work that gives up at a deadline (issue 38).
//!
//! [`super::bounded`] keeps libgit2 away from what the box planted, measured first;
//! what it cannot close is a race (a `.gitignore` swapped for a FIFO between the
//! measure and libgit2's `open()`, which then blocks in the kernel and cannot be
//! interrupted). So the read runs on a thread of its own, and the caller waits for
//! it on a channel at most [`READ_DEADLINE`]: past it, the answer is `None` (the
//! caller's `unknown`) and the thread is left behind, detached. Nothing joins it:
//! the binaries end in `std::process::exit`, which does not wait for threads, and
//! the thread holds nothing the rest of the command uses (its own libgit2 handles,
//! a copy of the box's entry). A thread per box costs tens of microseconds, noise
//! beside the status it runs; a child process per box would cost a fork and exec
//! each, on the listing path of every box (issue 38 rules that out).

use std::sync::mpsc;
use std::time::Duration;

/// How long one box's status may take before its answer is unknown. Normal boxes
/// answer in milliseconds; a monorepo's cold status in a few seconds.
pub const READ_DEADLINE: Duration = Duration::from_secs(4);

/// `f()` on a thread of its own; its answer, or `None` when it has none within
/// `limit` (it is then abandoned, still running) or it panicked.
pub fn within<R: Send + 'static>(
    limit: Duration,
    f: impl FnOnce() -> R + Send + 'static,
) -> Option<R> {
    let (tx, rx) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("box-read".into())
        .spawn(move || {
            // The receiver may be gone (deadline passed): nobody wants the answer.
            let _ = tx.send(f());
        });
    if spawned.is_err() {
        return None;
    }
    rx.recv_timeout(limit).ok()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    #[test]
    fn a_read_past_its_deadline_is_none_and_does_not_hold_the_caller() {
        let t = Instant::now();
        let got = super::within(Duration::from_millis(100), || {
            std::thread::sleep(Duration::from_secs(30));
            1
        });
        assert_eq!(got, None);
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert_eq!(super::within(Duration::from_secs(5), || 7), Some(7));
        assert_eq!(
            super::within(Duration::from_secs(5), || -> u8 { panic!("boom") }),
            None
        );
    }

    /// A FIFO blocks `open()` in the kernel: the read is abandoned, the caller goes on.
    #[test]
    fn a_read_blocked_opening_a_fifo_is_abandoned() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let t = Instant::now();
        let read = fifo.clone();
        let got = super::within(Duration::from_millis(200), move || {
            std::fs::read(&read).map(|b| b.len()).ok()
        });
        assert_eq!(got, None);
        assert!(t.elapsed() < Duration::from_secs(5));
        // Let the abandoned thread go (a writer meets the reader blocked in open).
        drop(std::fs::OpenOptions::new().write(true).open(&fifo).unwrap());
    }
}
