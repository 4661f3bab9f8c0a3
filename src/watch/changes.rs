//! Which boxes' status channels changed, from the kernel (inotify) rather than by
//! reading every box: the dashboard re-reads only those boxes' agents between its
//! full refreshes.
//!
//! - One inotify instance; one watch per box on its status directory (where the
//!   agent's hooks write `state`) and one on its bookkeeping directory (where the
//!   session's marker and exit report live), both host-owned. A box cannot make the
//!   host follow a link: watches are added with `IN_DONT_FOLLOW | IN_ONLYDIR`.
//! - Debounced per box ([`Debounce`]): a box is re-read at most once per
//!   [`Debounce::gap`], however fast it writes, so one flapping box cannot cause a
//!   storm; its last change is never lost (it is re-read when the gap ends).
//! - Where inotify is not available, [`Changes::new`] is `None` and the dashboard's
//!   timer alone refreshes.
//!
//! Called by `cli/watch`'s refresher.

use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// An inotify instance and what each watch is for.
pub struct Changes {
    fd: i32,
    /// Watch descriptor → the key of the box it watches.
    keys: HashMap<i32, String>,
    /// Watched directories (so a directory is watched once).
    watched: HashMap<std::path::PathBuf, i32>,
}

impl Changes {
    /// A new instance; `None` where the kernel has no inotify (or refuses one).
    pub fn new() -> Option<Changes> {
        // SAFETY: inotify_init1 takes flags and returns a descriptor or -1.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        (fd >= 0).then(|| Changes {
            fd,
            keys: HashMap::new(),
            watched: HashMap::new(),
        })
    }

    /// Watch `dir` for the box `key` (quietly nothing when it does not exist yet, is
    /// not a directory, or the kernel's watch limit is reached: the timer still sees it).
    pub fn watch(&mut self, dir: &Path, key: &str) {
        if self.watched.contains_key(dir) {
            return;
        }
        let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
            return;
        };
        let mask = libc::IN_CLOSE_WRITE
            | libc::IN_MOVED_TO
            | libc::IN_CREATE
            | libc::IN_DELETE
            | libc::IN_ATTRIB
            | libc::IN_DONT_FOLLOW
            | libc::IN_ONLYDIR;
        // SAFETY: the path is a NUL-terminated string that outlives the call.
        let wd = unsafe { libc::inotify_add_watch(self.fd, c.as_ptr(), mask) };
        if wd >= 0 {
            self.keys.insert(wd, key.to_string());
            self.watched.insert(dir.to_path_buf(), wd);
        }
    }

    /// Wait up to `limit` for changes; the keys of the boxes that changed (each once).
    pub fn wait(&mut self, limit: Duration) -> Vec<String> {
        let mut pfd = libc::pollfd {
            fd: self.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = i32::try_from(limit.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: one pollfd, valid for the call.
        let ready = unsafe { libc::poll(&mut pfd, 1, ms) };
        if ready <= 0 {
            return Vec::new();
        }
        let mut out: Vec<String> = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            // SAFETY: the buffer is valid for its length.
            let n = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            let n = n as usize;
            let mut at = 0;
            let head = std::mem::size_of::<libc::inotify_event>();
            while at + head <= n {
                // SAFETY: the kernel writes whole events; read_unaligned copes with the
                // buffer's alignment.
                let ev: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
                if ev.mask & libc::IN_IGNORED != 0 {
                    // The directory went (a box removed): forget the watch.
                    if let Some(k) = self.keys.remove(&ev.wd) {
                        self.watched.retain(|_, wd| *wd != ev.wd);
                        out.push(k);
                    }
                } else if let Some(k) = self.keys.get(&ev.wd) {
                    if !out.contains(k) {
                        out.push(k.clone());
                    }
                }
                at += head + ev.len as usize;
            }
        }
        out
    }
}

impl Drop for Changes {
    fn drop(&mut self) {
        // SAFETY: the descriptor is ours and closed once.
        unsafe {
            libc::close(self.fd);
        }
    }
}

/// Per-box debouncing: a box is re-read at most once per `gap`.
#[derive(Debug)]
pub struct Debounce {
    gap: Duration,
    last: HashMap<String, Instant>,
    /// Boxes that changed within their gap, to re-read once it ends.
    waiting: HashMap<String, Instant>,
}

impl Debounce {
    pub fn new(gap: Duration) -> Debounce {
        Debounce {
            gap,
            last: HashMap::new(),
            waiting: HashMap::new(),
        }
    }

    pub fn gap(&self) -> Duration {
        self.gap
    }

    /// Boxes that changed at `now`: those to re-read now (the rest wait for their gap).
    pub fn changed(&mut self, keys: Vec<String>, now: Instant) -> Vec<String> {
        for k in keys {
            let due = self.last.get(&k).map_or(now, |t| *t + self.gap);
            self.waiting
                .entry(k)
                .and_modify(|d| *d = (*d).min(due))
                .or_insert(due);
        }
        self.due(now)
    }

    /// Boxes whose gap has ended (marked read at `now`).
    pub fn due(&mut self, now: Instant) -> Vec<String> {
        let ready: Vec<String> = self
            .waiting
            .iter()
            .filter(|(_, due)| **due <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for k in &ready {
            self.waiting.remove(k);
            self.last.insert(k.clone(), now);
        }
        ready
    }

    /// How long until the next waiting box is due (`None`: none waits).
    pub fn next_in(&self, now: Instant) -> Option<Duration> {
        self.waiting
            .values()
            .min()
            .map(|d| d.saturating_duration_since(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flapping_box_is_read_once_per_gap_and_its_last_change_is_kept() {
        let gap = Duration::from_millis(200);
        let mut d = Debounce::new(gap);
        let t0 = Instant::now();
        assert_eq!(d.changed(vec!["a".into()], t0), ["a"]);
        // 50 more writes within the gap: nothing now, one read when it ends.
        for i in 1..=50 {
            let now = t0 + Duration::from_millis(i * 2);
            assert!(d.changed(vec!["a".into()], now).is_empty());
        }
        // Another box is not held up by the flapping one.
        assert_eq!(
            d.changed(vec!["b".into()], t0 + Duration::from_millis(100)),
            ["b"]
        );
        assert_eq!(
            d.next_in(t0 + Duration::from_millis(150)),
            Some(Duration::from_millis(50))
        );
        assert_eq!(d.due(t0 + gap), ["a"]);
        assert_eq!(d.next_in(t0 + gap), None);
    }

    #[test]
    fn inotify_reports_the_box_whose_directory_changed() {
        let Some(mut c) = Changes::new() else {
            return; // no inotify on this kernel
        };
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        c.watch(&a, "box-a");
        c.watch(&b, "box-b");
        assert!(c.wait(Duration::from_millis(10)).is_empty());
        std::fs::write(a.join("state"), "waiting\n").unwrap();
        std::fs::write(a.join("state"), "idle\n").unwrap();
        assert_eq!(c.wait(Duration::from_secs(2)), ["box-a"]);
        // A symlink is never followed to a watch.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&b, &link).unwrap();
        c.watch(&link, "box-link");
        std::fs::write(b.join("state"), "working\n").unwrap();
        assert_eq!(c.wait(Duration::from_secs(2)), ["box-b"]);
    }
}
