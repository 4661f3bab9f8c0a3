//! A read of one box's work that gives up at a deadline (issue 38).
//!
//! [`super::bounded`] keeps libgit2 away from what the box planted, measured first;
//! what it cannot close is a race (a `.gitignore` swapped for a FIFO between the
//! measure and libgit2's `open()`, which then blocks in the kernel and cannot be
//! interrupted). So the read runs on a thread the caller can walk away from: one
//! box on a thread of its own, waited for on a channel at most [`READ_DEADLINE`]
//! ([`within`]); many boxes on long-lived readers, one per core, the caller collecting
//! their answers and calling a box unknown at its deadline, its reader left behind and
//! another started in its place ([`map_within`]: no hand-over per box, which a loaded
//! machine makes cost a wake-up each). Nothing joins an abandoned thread: the
//! binaries end in `std::process::exit`, which does not wait for threads, and the
//! thread holds nothing the rest of the command uses (its own libgit2 handles, a copy
//! of the box's entry). A child process per box would cost a fork and exec each, on
//! the listing path of every box (issue 38 rules that out).
//!
//! A process that lives on (the MCP server, `watch`) would gather a thread per read a
//! hostile box blocks, each call again: so the threads left behind are counted
//! process-wide ([`Tally`]), and with [`MAX_LEFT_BEHIND`] still running no read is
//! started at all, its answer unknown at once, until some of them end.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// The most reader threads left behind at their deadline, still running, that a
/// process keeps; past it reads are answered unknown without a thread.
pub const MAX_LEFT_BEHIND: usize = 32;

/// Threads left behind at a deadline and still running, and how many may be.
#[derive(Debug)]
struct Tally {
    count: AtomicUsize,
    max: usize,
}

impl Tally {
    fn full(&self) -> bool {
        self.count.load(Ordering::Relaxed) >= self.max
    }
}

/// This process's [`Tally`].
static TALLY: Tally = Tally {
    count: AtomicUsize::new(0),
    max: MAX_LEFT_BEHIND,
};

/// One reader thread's mark: running, done, or left behind by its caller.
#[derive(Debug)]
struct LeftBehind {
    state: AtomicU8,
    tally: &'static Tally,
}

const RUNNING: u8 = 0;
const DONE: u8 = 1;
const LEFT: u8 = 2;

impl LeftBehind {
    fn new(tally: &'static Tally) -> Arc<LeftBehind> {
        Arc::new(LeftBehind {
            state: AtomicU8::new(RUNNING),
            tally,
        })
    }

    /// The caller walks away from the thread: counted until the thread ends.
    fn leave(&self) {
        self.tally.count.fetch_add(1, Ordering::Relaxed);
        if self
            .state
            .compare_exchange(RUNNING, LEFT, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // It has ended already (or was left before): nothing to count.
            self.tally.count.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The thread ends: no longer counted.
    fn finish(&self) {
        if self.state.swap(DONE, Ordering::AcqRel) == LEFT {
            self.tally.count.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Calls [`LeftBehind::finish`] when its thread ends, by returning or unwinding.
struct Finish(Arc<LeftBehind>);

impl Drop for Finish {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// How long one box's status may take before its answer is unknown. Normal boxes
/// answer in milliseconds; a monorepo's cold status in a few seconds.
pub const READ_DEADLINE: Duration = Duration::from_secs(4);

/// `f()` on a thread of its own; its answer, or `None` when it has none within
/// `limit` (it is then abandoned, still running), it panicked, or
/// [`MAX_LEFT_BEHIND`] threads are left behind already (`f` is not run).
pub fn within<R: Send + 'static>(
    limit: Duration,
    f: impl FnOnce() -> R + Send + 'static,
) -> Option<R> {
    within_tallied(&TALLY, limit, f)
}

/// [`within`], counting the threads it leaves behind in `tally`.
fn within_tallied<R: Send + 'static>(
    tally: &'static Tally,
    limit: Duration,
    f: impl FnOnce() -> R + Send + 'static,
) -> Option<R> {
    if tally.full() {
        return None;
    }
    let (tx, rx) = mpsc::sync_channel(1);
    let mark = LeftBehind::new(tally);
    let done = Finish(Arc::clone(&mark));
    let spawned = std::thread::Builder::new()
        .name("box-read".into())
        .spawn(move || {
            let _done = done;
            // The receiver may be gone (deadline passed): nobody wants the answer.
            let _ = tx.send(f());
        });
    if spawned.is_err() {
        return None;
    }
    let got = rx.recv_timeout(limit).ok();
    if got.is_none() {
        mark.leave();
    }
    got
}

/// What [`map_within`] runs per item.
type ReadFn<S, T, R> = Box<dyn Fn(&mut S, &T) -> R + Send + Sync>;

/// `f` of every item on `threads` reader threads of their own (each with its state
/// from `init`), in the items' order; `None` for an item whose read has not ended
/// `limit` after it began (or panicked). The readers take the next item as they
/// finish one, so a normal item costs no hand-over to a fresh thread; a reader past
/// the deadline is left behind, detached, and another is started in its place, so
/// the items after it are read at the usual speed.
pub fn map_within<T, S, R>(
    items: Vec<T>,
    threads: usize,
    limit: Duration,
    init: impl Fn() -> S + Send + Sync + 'static,
    f: impl Fn(&mut S, &T) -> R + Send + Sync + 'static,
) -> Vec<Option<R>>
where
    T: Send + Sync + 'static,
    S: 'static,
    R: Send + 'static,
{
    use std::sync::Mutex;
    use std::time::Instant;

    /// When an item's read began, and its reader's mark.
    type Began = Option<(Instant, Arc<LeftBehind>)>;
    struct Shared<T, S, R> {
        items: Vec<T>,
        next: AtomicUsize,
        /// When each item's read began, and by which reader.
        began: Mutex<Vec<Began>>,
        init: Box<dyn Fn() -> S + Send + Sync>,
        f: ReadFn<S, T, R>,
    }
    let n = items.len();
    if TALLY.full() {
        return std::iter::repeat_with(|| None).take(n).collect();
    }
    let shared = Arc::new(Shared {
        began: Mutex::new(vec![None; n]),
        items,
        next: AtomicUsize::new(0),
        init: Box::new(init),
        f: Box::new(f),
    });
    let (tx, rx) = mpsc::channel::<(usize, Option<R>)>();
    let start = |shared: &Arc<Shared<T, S, R>>, tx: &mpsc::Sender<(usize, Option<R>)>| {
        let (shared, tx) = (Arc::clone(shared), tx.clone());
        std::thread::Builder::new()
            .name("box-read".into())
            .spawn(move || {
                let mark = LeftBehind::new(&TALLY);
                let _done = Finish(Arc::clone(&mark));
                let mut state = (shared.init)();
                loop {
                    let i = shared.next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = shared.items.get(i) else {
                        return;
                    };
                    if let Ok(mut b) = shared.began.lock() {
                        b[i] = Some((Instant::now(), Arc::clone(&mark)));
                    }
                    let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        (shared.f)(&mut state, item)
                    }))
                    .ok();
                    let failed = got.is_none();
                    // The receiver gone: the command has its answers.
                    if tx.send((i, got)).is_err() || failed {
                        return;
                    }
                }
            })
            .is_ok()
    };
    let mut out: Vec<Option<Option<R>>> = std::iter::repeat_with(|| None).take(n).collect();
    let mut left = n;
    let mut readers = 0;
    for _ in 0..threads.clamp(1, n.max(1)) {
        readers += usize::from(start(&shared, &tx));
    }
    if readers == 0 {
        return std::iter::repeat_with(|| None).take(n).collect();
    }
    while left > 0 {
        // The next deadline: the earliest of the reads under way that have no answer.
        let now = Instant::now();
        let due = shared.began.lock().ok().and_then(|b| {
            b.iter()
                .zip(&out)
                .filter(|(_, o)| o.is_none())
                .filter_map(|(t, _)| t.as_ref().map(|(t, _)| *t + limit))
                .min()
        });
        let wait = due.map_or(limit, |d| d.saturating_duration_since(now));
        match rx.recv_timeout(wait) {
            Ok((i, got)) => {
                if out[i].is_none() {
                    out[i] = Some(got);
                    left -= 1;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let now = Instant::now();
                let late: Vec<(usize, Arc<LeftBehind>)> =
                    shared.began.lock().map_or(Vec::new(), |b| {
                        (0..n)
                            .filter(|&i| out[i].is_none())
                            .filter_map(|i| match &b[i] {
                                Some((t, mark)) if now >= *t + limit => Some((i, Arc::clone(mark))),
                                _ => None,
                            })
                            .collect()
                    });
                for (i, mark) in late {
                    out[i] = Some(None);
                    left -= 1;
                    mark.leave();
                    if !TALLY.full() {
                        // Its reader stays blocked: another takes its place.
                        start(&shared, &tx);
                        continue;
                    }
                    // No more readers: what no reader has begun is unknown.
                    let begun: Vec<bool> = shared
                        .began
                        .lock()
                        .map_or(vec![true; n], |b| b.iter().map(Option::is_some).collect());
                    for j in 0..n {
                        if out[j].is_none() && !begun[j] {
                            out[j] = Some(None);
                            left -= 1;
                        }
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    out.into_iter().map(Option::flatten).collect()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    /// One item blocks: it is `None` at its deadline, every other item is answered,
    /// and the whole takes about one deadline, not one per item after it.
    #[test]
    fn one_blocked_item_holds_neither_the_others_nor_the_caller() {
        let items: Vec<u64> = (0..40).collect();
        let t = Instant::now();
        let got = super::map_within(
            items,
            2,
            Duration::from_millis(300),
            || 0u64,
            |seen, &x| {
                *seen += 1;
                if x == 3 || x == 20 {
                    std::thread::sleep(Duration::from_secs(30));
                }
                if x == 7 {
                    panic!("boom");
                }
                x * 2
            },
        );
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        for (i, g) in got.iter().enumerate() {
            let i = i as u64;
            let want = (![3, 7, 20].contains(&i)).then_some(i * 2);
            assert_eq!(*g, want, "item {i}");
        }
        assert!(super::map_within(
            Vec::<u8>::new(),
            2,
            Duration::from_secs(1),
            || (),
            |(), _| 0
        )
        .is_empty());
    }

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

    /// Threads left behind are counted until they end; with as many as the tally
    /// keeps still running, a read is unknown at once and is never run.
    #[test]
    fn past_the_threads_left_behind_a_read_is_not_started() {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        use std::sync::Arc;
        let tally: &'static super::Tally = Box::leak(Box::new(super::Tally {
            count: AtomicUsize::new(0),
            max: 2,
        }));
        let release = Arc::new(AtomicBool::new(false));
        let blocked = || {
            let release = Arc::clone(&release);
            move || {
                while !release.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(5));
                }
                1
            }
        };
        let short = Duration::from_millis(50);
        assert_eq!(super::within_tallied(tally, short, blocked()), None);
        assert_eq!(tally.count.load(Ordering::Relaxed), 1);
        assert_eq!(super::within_tallied(tally, short, || 2), Some(2));
        assert_eq!(super::within_tallied(tally, short, blocked()), None);
        assert_eq!(tally.count.load(Ordering::Relaxed), 2);
        let ran = Arc::new(AtomicBool::new(false));
        let r = Arc::clone(&ran);
        let t = Instant::now();
        let got = super::within_tallied(tally, Duration::from_secs(5), move || {
            r.store(true, Ordering::Relaxed);
            3
        });
        assert_eq!(got, None);
        assert!(
            t.elapsed() < Duration::from_millis(500),
            "{:?}",
            t.elapsed()
        );
        assert!(!ran.load(Ordering::Relaxed), "a read past the tally ran");
        // The blocked threads end: no longer counted, reads run again.
        release.store(true, Ordering::Relaxed);
        let since = Instant::now();
        while tally.count.load(Ordering::Relaxed) > 0 {
            assert!(since.elapsed() < Duration::from_secs(5), "still counted");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(super::within_tallied(tally, short, || 4), Some(4));
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
