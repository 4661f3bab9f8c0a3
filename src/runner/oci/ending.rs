//! Ending a program in a box's container whose engine client was cut off (SPEC §7a).
//!
//! The engine's `exec` client is only a window: killed — its tmux session ended by
//! `box_stop`, the session or its server killed, the terminal of a foreground run
//! closed — it goes, and the program it started in the container runs on, unseen
//! and untyped-to, because the engine passes no hang-up on. So every program the
//! launcher starts carries a mark: before it drops to the agent, the launcher writes
//! its pid, start time and the agent's uid to `/run/treebox-run/<mark>`, in the
//! container's own root-owned `/run` (never a mount: neither the agent nor the host
//! writes there). Whoever waited on the client and saw it cut off runs [`END_FILE`]
//! with that mark, as root in the container ([`ender`]): it hangs up on the program's
//! session — what a closing terminal does to a program on the host — then kills what
//! is left after a grace.
//!
//! Invariants:
//! - Only processes of the agent's uid are signalled, and only those of the marked
//!   program's session or process group, or descended from it while it still runs
//!   (its start time checked, so a reused pid is never taken for it); a program that
//!   made a session of its own and left its parent behind is the container's to end
//!   (`down`).
//! - The mark is a word treebox made ([`mark`]), checked again by the script before
//!   it names a file.
//!
//! Called by the runner (`agent_exec`), which gives every command it builds its
//! [`crate::cmd::Cmd::ender`]; run by [`crate::session`].

use std::sync::atomic::{AtomicU32, Ordering};

/// Where the box's env dir has the ender ([`ENDER`]), beside the launcher; its name
/// there, [`END_NAME`].
pub const END_FILE: &str = "/run/treebox-env/end";
pub const END_NAME: &str = "end";

/// Where the launcher keeps its marks, in the container's own `/run`.
pub const MARKS: &str = "/run/treebox-run";

/// `$1`: a mark. End the program the launcher started under it: a hang-up (and a
/// continue, for a stopped one) to every process of its session, its group and, while
/// it runs, its descendants — of the agent's uid alone — then, after 3 s, a kill of
/// those left and of any they started since. Exits 0 once none is left (or the mark
/// names nothing), 1 when some would not go. With `$2` `live` (the launcher's watcher
/// of a held program, whose stdin ends also when the program ended by itself), only a
/// program still running is ended: what one left running on purpose is not.
pub const ENDER: &str = r#"case ${1-} in ''|*[!0-9a-z-]*) exit 2 ;; esac
f=/run/treebox-run/$1
[ -f "$f" ] || exit 0
read -r p s u <"$f" || exit 0
rm -f -- "$f"
case "$p/$s/$u" in *[!0-9/]*|/*|*//*|*/) exit 0 ;; esac
started() {
  t=; l=
  read -r l <"/proc/$1/stat" 2>/dev/null || return 1
  l=${l##*) }
  set -- $l
  [ "$1" != Z ] && [ "$1" != X ] && t=${20}
}
alive=
started "$p" && [ "$t" = "$s" ] && alive=1
[ "${2-}" = live ] && [ -z "$alive" ] && exit 0
e=
members() {
  more=1
  while [ -n "$more" ]; do
    more=
    for d in /proc/[0-9]*; do
      q=${d#/proc/}
      case " $e $$ " in *" $q "*) continue ;; esac
      l=
      read -r l <"$d/stat" 2>/dev/null || continue
      l=${l##*) }
      set -- $l
      [ "$1" = Z ] && continue
      if [ "$3" = "$p" ] || [ "$4" = "$p" ]; then :
      elif [ -n "$alive" ] && case " $e " in *" $2 "*) true ;; *) false ;; esac; then :
      else continue; fi
      o=
      while read -r k v _; do [ "$k" = Uid: ] && o=$v && break; done <"$d/status" 2>/dev/null
      [ "$o" = "$u" ] || continue
      e="$e $q" more=1
    done
  done
}
members
[ -n "$e" ] || exit 0
kill -HUP $e 2>/dev/null
kill -CONT $e 2>/dev/null
n=0
while [ "$n" -lt 40 ]; do
  left=
  for q in $e; do started "$q" && left=1; done
  [ -z "$left" ] && exit 0
  if [ "$n" = 30 ]; then members; kill -KILL $e 2>/dev/null; fi
  sleep 0.1
  n=$((n + 1))
done
exit 1"#;

/// A fresh mark for one program: this process, a counter and the clock, in the
/// letters [`ENDER`] takes.
pub fn mark() -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// The argv, run as root in the container, that ends the program marked `mark`.
pub fn ender(engine: super::Engine, container: &str, mark: &str) -> Vec<std::ffi::OsString> {
    engine
        .exec_as_root(container, &["/bin/sh".into(), END_FILE.into(), mark.into()])
        .argv()
        .into_iter()
        .map(Into::into)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::path::Path;
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    /// [`crate::testing::run_moved`]'s status.
    fn run_moved(script: &str, root: &Path, args: &[&str]) -> i32 {
        crate::testing::run_moved(script, root, args).0
    }

    /// A session of its own running `script`, as the engine's exec starts a program.
    fn session(script: &str) -> Child {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script);
        // SAFETY: setsid(2) in the child before exec touches no Rust state.
        unsafe {
            c.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        c.spawn().unwrap()
    }

    /// The start time of a running process, as the launcher writes it in a mark.
    fn start_time(pid: u32) -> String {
        crate::session::foreground::start_time(pid as i32)
            .unwrap()
            .to_string()
    }

    fn running(pid: i32) -> bool {
        crate::session::foreground::start_time(pid).is_some()
    }

    /// The pids a program wrote, one per line, once it has written `n`.
    fn pids(file: &Path, n: usize) -> Vec<i32> {
        let since = Instant::now();
        loop {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            let got: Vec<i32> = text.lines().filter_map(|l| l.parse().ok()).collect();
            if got.len() >= n {
                return got;
            }
            assert!(since.elapsed() < Duration::from_secs(10), "{text:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn the_ender_ends_the_marked_session_and_its_descendants_only() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir(root.join("treebox-run")).unwrap();
        let uid = unsafe { libc::getuid() };
        let out = root.join("pids");
        let o = out.display();
        // The marked program: a child in its session, one deaf to the hang-up, and one
        // that made a session of its own while its parent runs.
        let mut marked = session(&format!(
            "echo $$ >>{o}; sleep 300 & echo $! >>{o}; \
             (trap '' HUP; echo $(exec sh -c 'echo $PPID') >>{o}; while :; do sleep 0.05; done) & \
             setsid sh -c 'echo $$ >>{o}; exec sleep 300' & \
             wait"
        ));
        let all = pids(&out, 4);
        // Another program of the box, a session of its own: spared.
        let mut other = session("exec sleep 300");
        let mark = "77-0-5";
        std::fs::write(
            root.join("treebox-run").join(mark),
            format!("{} {} {uid}\n", marked.id(), start_time(marked.id())),
        )
        .unwrap();
        let since = Instant::now();
        assert_eq!(run_moved(ENDER, root, &[mark]), 0);
        assert!(since.elapsed() < Duration::from_secs(5));
        let _ = marked.wait();
        for p in &all {
            assert!(!running(*p), "{p} of {all:?} left running");
        }
        assert!(running(other.id() as i32), "another session was ended");
        assert!(!root.join("treebox-run").join(mark).exists());
        // Again: the mark is gone, nothing to do.
        assert_eq!(run_moved(ENDER, root, &[mark]), 0);
        other.kill().unwrap();
        let _ = other.wait();
    }

    #[test]
    fn the_ender_takes_only_its_own_words_and_spares_other_uids() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        let marks = root.join("treebox-run");
        std::fs::create_dir(&marks).unwrap();
        for bad in ["", "../x", "A", "a b", "x/y"] {
            assert_eq!(run_moved(ENDER, root, &[bad]), 2, "{bad:?}");
        }
        // A mark of another uid than the program's: nothing is signalled.
        let mut child = session("exec sleep 300");
        let uid = unsafe { libc::getuid() } + 4242;
        std::fs::write(
            marks.join("1-1-1"),
            format!("{} {} {uid}\n", child.id(), start_time(child.id())),
        )
        .unwrap();
        assert_eq!(run_moved(ENDER, root, &["1-1-1"]), 0);
        assert!(running(child.id() as i32));
        // Junk in a mark: nothing.
        std::fs::write(marks.join("1-1-2"), format!("{} x 0\n", child.id())).unwrap();
        assert_eq!(run_moved(ENDER, root, &["1-1-2"]), 0);
        assert!(running(child.id() as i32));
        child.kill().unwrap();
        let _ = child.wait();
        let m = mark();
        assert!(m.bytes().all(|b| b.is_ascii_digit() || b == b'-'), "{m}");
        assert_ne!(m, mark());
    }
}
