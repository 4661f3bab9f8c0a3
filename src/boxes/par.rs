//! Per-box reads spread over the machine's cores, results in the boxes' order.
//!
//! `list` and `ls` read a few small files (and, for `ls`, a libgit2 status) per box;
//! with hundreds of boxes the reads, not the output, are the time. Threads take the
//! next box from a shared counter (so one slow box does not hold up a whole chunk)
//! and every result lands at its box's index: the output order never depends on the
//! threads. Each thread gets its own state from `init` (a libgit2 handle is not
//! shareable between threads).

use std::sync::atomic::{AtomicUsize, Ordering};

/// Below this many items per thread, starting a thread costs more than it saves.
const MIN_PER_THREAD: usize = 16;

/// The machine's cores, asked once per process (the answer reads the cgroup's CPU
/// limits: files).
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `f` applied to every item, in the items' order, on up to
/// `available_parallelism` threads; each thread's state starts as `init()`.
pub fn map<T, R, S>(
    items: &[T],
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R>
where
    T: Sync,
    R: Send,
{
    let threads = cores().min(items.len() / MIN_PER_THREAD).max(1);
    if threads == 1 {
        let mut state = init();
        return items.iter().map(|t| f(&mut state, t)).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut state = init();
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return done;
            };
            done.push((i, f(&mut state, item)));
        }
    };
    let parts: Vec<Vec<(usize, R)>> = std::thread::scope(|s| {
        // The calling thread works too: one thread fewer to start.
        let others: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        let mut parts = vec![work()];
        for h in others {
            match h.join() {
                Ok(p) => parts.push(p),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        parts
    });
    let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    for (i, r) in parts.into_iter().flatten() {
        slots[i] = Some(r);
    }
    slots
        .into_iter()
        .map(|r| r.expect("every index is taken by exactly one thread"))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_the_order_and_covers_every_item() {
        let items: Vec<usize> = (0..1000).collect();
        let out = super::map(
            &items,
            || 0usize,
            |seen, &x| {
                *seen += 1;
                x * 2
            },
        );
        assert_eq!(out, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        let few = super::map(&items[..3], || (), |(), &x| x + 1);
        assert_eq!(few, vec![1, 2, 3]);
        assert!(super::map(&[] as &[u8], || (), |(), _| 0).is_empty());
    }
}
