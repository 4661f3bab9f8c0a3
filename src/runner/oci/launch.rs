//! How every program treebox starts in a box's container begins (SPEC §7, §8.9): the
//! engine's `exec` runs as root for one moment, a small launcher reads the box's 0600
//! env file (model keys, git identity, forwarded tokens), then drops to the agent's
//! identity — its uid, its one group, an empty capability bounding set, no new
//! privileges — and `exec`s the program.
//!
//! Invariants:
//! - The agent is never root and never the host user's uid ([`agent_ids`]): what it
//!   writes into its mounts is owned by another uid, so git's ownership check keeps the
//!   user's own git from running anything the box configured (SPEC §8.7).
//! - The drop happens in one step, as root: `setpriv --bounding-set` needs
//!   CAP_SETPCAP, which an unprivileged exec would not have.
//! - Secrets never travel through the engine: not `--env-file` (kept in `inspect` for
//!   the container's life), not `exec -e` (the engine's exec config, the host's argv);
//!   the launcher reads them from a file mounted read-only at [`ENV_DIR`].
//! - The launcher is a file in the box's env dir ([`LAUNCH_FILE`], host-owned, mounted
//!   read-only), not in the image, so an image built from any template runs it; it
//!   needs only `sh` and util-linux's `setpriv`. Run as `/bin/sh FILE …`, a program's
//!   command (`enter --print`) is one line (SPEC §10). [`keep_launcher`] writes it
//!   where it is missing or stale (a container made by an earlier version mounts the
//!   same directory, so it gets it too).
//!
//! Called by the runner (`Oci::exec`), `setup` (the guard check and the setup steps)
//! and `container` (the anchor, which gives the agent the box's mounts).

use std::path::PathBuf;

/// Where the box's env dir is mounted (read-only); the launcher reads [`ENV_FILE`].
pub const ENV_DIR: &str = "/run/treebox-env";
/// The env file inside, one `KEY=value` per line: what is fixed at create.
pub const ENV_FILE: &str = "/run/treebox-env/env";
/// The keys file beside it: model keys and forwarded tokens, rewritten on every `enter`
/// so a renewed key reaches the next program started in the box.
pub const KEYS_FILE: &str = "/run/treebox-env/keys";
/// The launcher beside them ([`LAUNCHER`]).
pub const LAUNCH_FILE: &str = "/run/treebox-env/launch";

/// Written by the anchor ([`ANCHOR`]) once the agent has its paths, in the
/// container's own root-owned `/run` (never a mount: nothing of the host or the agent
/// writes it); beside it, `…-failed` holds why it could not.
pub const HANDED: &str = "/run/treebox-handed";

/// The same news for the host, in the box's status dir (as the container sees it,
/// `STATUS_DIR/handed`, or `…/handed-failed` with why): a `create` that starts no agent
/// waits for it ([`super::await_handed`]), so the box it returns has its files given
/// over and its index in step. The agent could write there too, but nothing of it runs
/// before the hand-over, and the host only looks while it waits.
pub const HANDED_NOTE: &str = "handed";

/// The first process of a box's container (`$1` the agent's `uid:gid`, `$2` its
/// checkout, then the paths to hand over): as root, before anything else runs there,
/// give the agent its paths — its checkout, git data, credential copies, status dir —
/// so git's ownership check keeps the user's own git, a prompt or an editor from
/// running what the box configures (SPEC §8.7); then tell the checkout's index the
/// files' new stat data (a chown changes every ctime, and an index out of step makes
/// every host status of the box hash every tracked file), and say so ([`HANDED`]).
/// Then tell the host the same in the status dir ([`HANDED_NOTE`]: a fresh file, any
/// name planted there removed first, never written through), and idle. First of all it
/// makes the launcher's marks dir ([`super::ending::MARKS`]), so that a program's
/// launch, which waits for the hand-over, finds it and forks no `mkdir` of its own
/// (an exec of a binary this container has not read yet costs a few ms through a
/// FUSE storage driver). Done once per
/// container: a restart finds the marker. Symlinks are changed, never followed. Done
/// here rather than by an `exec` after the start, so the agent's own start (whose
/// launcher waits for the marker) overlaps it.
pub const ANCHOR: &str = r#"m=/run/treebox-handed s=/run/treebox/status/handed
mkdir -m 700 /run/treebox-run 2>/dev/null
if [ ! -e "$m" ] && [ ! -e "$m-failed" ]; then
  u=$1 c=$2; shift 2
  if err=$(chown -R -h "$u" -- "$@" 2>&1); then
    if cd "$c" 2>/dev/null; then
      g() { git -c safe.directory='*' -c core.fsmonitor=false -c core.hooksPath=/dev/null "$@"; }
      g update-index -q --refresh >/dev/null 2>&1
      i=$(g rev-parse --git-path index 2>/dev/null) && [ -f "$i" ] && chown -h "$u" -- "$i"
      cd /
    fi
    : >"$m"
  else
    printf '%s
' "$err" | head -c 4000 >"$m-failed"
  fi
  if [ -d "${s%/*}" ]; then
    rm -rf -- "$s" "$s-failed"
    if [ -e "$m" ]; then (set -C; : >"$s"); else (set -C; cat -- "$m-failed" >"$s-failed"); fi
  fi 2>/dev/null
fi
exec sleep infinity"#;

/// The uid the agent's account gets in an image, unless it is the host user's.
pub const AGENT_UID: u32 = 1000;

/// The launcher: `--mark MARK` first when whoever starts the program may have to end
/// it (then, just before the drop, it writes its pid, start time and the agent's uid
/// to `MARKS/MARK`, see [`super::ending`]), then `--held` when its stdin is held open
/// by whoever waits on it, for as long as it waits (then a watcher, as root, reads
/// that stdin to its end with the shell's own `read` — the engine's client or its
/// caller gone — and runs the ender for a program still running; the program's own
/// stdin is `/dev/null`), then `--handed` when the container's anchor hands the agent
/// its paths (then it waits for [`HANDED`], and refuses when the hand-over failed),
/// then
/// `$1` uid, `$2` gid, `$3` home, then `KEY=value` words up to `--`, then the program
/// and its arguments. Exported are the env file's lines, then the caller's words (so
/// a setup step's own variables win), then HOME/USER/LOGNAME; a `TERM` the image has
/// no terminfo for becomes `xterm-256color`.
const LAUNCHER: &str = r#"k= w=
if [ "${1-}" = --mark ]; then k=$2; shift 2; fi
if [ "${1-}" = --held ]; then w=1; shift; fi
if [ "${1-}" = --handed ]; then
  shift
  n=0
  until [ -e /run/treebox-handed ]; do
    if [ -e /run/treebox-handed-failed ]; then
      printf 'treebox: the files of the box could not be given to the agent: %s\n' "$(head -c 4000 /run/treebox-handed-failed)" >&2
      exit 126
    fi
    n=$((n + 1))
    [ "$n" -le 60000 ] || { echo "treebox: the files of the box were not given to the agent within 10 minutes" >&2; exit 126; }
    sleep 0.01
  done
fi
for f in /run/treebox-env/env /run/treebox-env/keys; do
  [ -r "$f" ] || continue
  while IFS= read -r l || [ -n "$l" ]; do
    case $l in [A-Za-z_]*=*) export "$l" ;; esac
  done < "$f"
done
u=$1 g=$2 h=$3
shift 3
while [ $# -gt 0 ] && [ "$1" != -- ]; do export "$1"; shift; done
[ $# -gt 0 ] && shift
export HOME="$h" USER=agent LOGNAME=agent
if [ -n "${TERM-}" ]; then
  i=${TERM%"${TERM#?}"} ok=
  for d in /etc/terminfo /lib/terminfo /usr/share/terminfo /usr/lib/terminfo; do [ -e "$d/$i/$TERM" ] && ok=1; done
  [ -n "$ok" ] || export TERM=xterm-256color
fi
umask 002
command -v setpriv >/dev/null 2>&1 || { echo "treebox: setpriv (util-linux) is missing from the box's image" >&2; exit 127; }
case $k in *[!0-9a-z-]*) k= ;; esac
if [ -n "$k" ] && { [ -d /run/treebox-run ] || mkdir -m 700 /run/treebox-run 2>/dev/null; }; then
  l= t=
  read -r l </proc/$$/stat
  f22() { t=${20-}; }
  f22 ${l##*) }
  x=$t
  for m in /run/treebox-run/*; do
    [ -f "$m" ] || continue
    p= s= l= t=
    read -r p s _ <"$m"
    case $p in *[!0-9]*|'') ;; *) read -r l <"/proc/$p/stat" && f22 ${l##*) } ;; esac
    [ -n "$t" ] && [ "$t" = "$s" ] || rm -f -- "$m"
  done 2>/dev/null
  t=$x
  (umask 077; printf '%s %s %s\n' "$$" "$t" "$u" >"/run/treebox-run/$k") 2>/dev/null
fi
if [ -n "$w" ] && [ -n "$k" ] && [ -f "/run/treebox-run/$k" ]; then
  exec 3<&0
  (exec 0<&3 3<&-; while read -r _; do :; done; exec /bin/sh /run/treebox-env/end "$k" live) >/dev/null 2>&1 &
  exec 0</dev/null 3<&-
fi
exec setpriv --reuid "$u" --regid "$g" --groups "$g" --inh-caps -all --bounding-set -all --no-new-privs -- "$@""#;

/// The identity programs run as in a box's container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub uid: u32,
    pub gid: u32,
    pub home: PathBuf,
}

impl Identity {
    /// `uid:gid`, as the record keeps it.
    pub fn user(&self) -> String {
        format!("{}:{}", self.uid, self.gid)
    }

    /// The identity a record's `user` (`uid:gid`) and `home` name; `None` when `user`
    /// is not numeric.
    pub fn parse(user: &str, home: &std::path::Path) -> Option<Identity> {
        let (u, g) = user.split_once(':')?;
        Some(Identity {
            uid: u.parse().ok()?,
            gid: g.parse().ok()?,
            home: home.to_path_buf(),
        })
    }

    /// Is this an identity the launcher may drop to for a host user `host_uid`?
    pub fn allowed(&self, host_uid: u32) -> bool {
        self.uid != 0 && self.uid != host_uid
    }
}

/// The agent's uid and gid for a host user `host_uid:host_gid`: [`AGENT_UID`] (the
/// next uid when that is the host user's own), in the host user's group so that what
/// the agent writes stays readable for the user. A group below 1000 is a system
/// group in the image (Debian's `staff`, 50, may write `/usr/local`): then, and for
/// root's group, the agent gets a group of its own.
pub fn agent_ids(host_uid: u32, host_gid: u32) -> (u32, u32) {
    let uid = if host_uid == AGENT_UID {
        AGENT_UID + 1
    } else {
        AGENT_UID
    };
    let gid = if host_gid >= 1000 { host_gid } else { uid };
    (uid, gid)
}

/// `argv` wrapped in the launcher, with `env` set for it alone (not secrets: those
/// come from the env file). The result runs as root through the engine's `exec`.
/// `mark`: the program's mark, for its ender ([`super::ending`]); `handed`: the
/// container's anchor hands the agent its paths, which the launcher waits for
/// ([`ANCHOR`]); `held`: the caller holds the program's stdin open while it waits on it
/// and gives it nothing ([`crate::cmd::Cmd::hold_stdin`]), so the program ends with
/// its caller even when no one is left to run its ender (a `create` killed during a
/// setup step).
pub fn wrap(
    id: &Identity,
    mark: Option<&str>,
    held: bool,
    handed: bool,
    env: &[(String, String)],
    argv: &[String],
) -> Vec<String> {
    let mut out: Vec<String> = vec!["/bin/sh".into(), LAUNCH_FILE.into()];
    if let Some(m) = mark {
        out.extend(["--mark".into(), m.to_string()]);
        if held {
            out.push("--held".into());
        }
    }
    if handed {
        out.push("--handed".into());
    }
    out.extend([
        id.uid.to_string(),
        id.gid.to_string(),
        id.home.to_string_lossy().into_owned(),
    ]);
    out.extend(
        env.iter()
            .filter(|(k, _)| valid_key(k))
            .map(|(k, v)| format!("{k}={v}")),
    );
    out.push("--".into());
    out.extend(argv.iter().cloned());
    out
}

/// Write the launcher at `path` (the host side of [`LAUNCH_FILE`]), and the ender
/// beside it ([`super::ending::END_FILE`]), unless they already hold this version's:
/// read first, so the hot path of `run` and `attach` writes nothing.
pub fn keep_launcher(path: &std::path::Path) -> std::io::Result<()> {
    use crate::untrusted::{read_regular, Links};
    let end = path.with_file_name(super::ending::END_NAME);
    for (path, text) in [(path, LAUNCHER), (end.as_path(), super::ending::ENDER)] {
        if !read_regular(path, 1 << 16, Links::Refuse).is_ok_and(|b| b == text.as_bytes()) {
            crate::state::atomic::write(path, text.as_bytes(), 0o600)?;
        }
    }
    Ok(())
}

/// A name the env file and the launcher take: the one rule for a box's variable names
/// ([`crate::names::env_name_ok`]).
pub fn valid_key(k: &str) -> bool {
    crate::names::env_name_ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_moved;

    #[test]
    fn the_agent_is_never_root_nor_the_host_user() {
        for (host, want) in [
            ((0, 0), (1000, 1000)),
            ((1000, 1000), (1001, 1000)),
            ((1001, 1001), (1000, 1001)),
            ((1001, 100), (1000, 1000)),
            ((501, 50), (1000, 1000)),
        ] {
            let got = agent_ids(host.0, host.1);
            assert_eq!(got, want, "host {host:?}");
            let id = Identity {
                uid: got.0,
                gid: got.1,
                home: "/home/agent".into(),
            };
            assert!(id.allowed(host.0));
        }
        let root = Identity::parse("0:0", std::path::Path::new("/root")).unwrap();
        assert!(!root.allowed(1000));
        let same = Identity::parse("1000:1000", std::path::Path::new("/h")).unwrap();
        assert!(!same.allowed(1000));
        assert_eq!(Identity::parse("agent", std::path::Path::new("/h")), None);
    }

    #[test]
    fn wrap_puts_words_before_the_separator_and_drops_bad_names() {
        let id = Identity {
            uid: 1000,
            gid: 1000,
            home: "/home/agent".into(),
        };
        let handed = wrap(&id, Some("1-2-3"), false, true, &[], &["true".into()]);
        assert_eq!(
            handed[1..6],
            [LAUNCH_FILE, "--mark", "1-2-3", "--handed", "1000"]
        );
        let held = wrap(&id, Some("1-2-3"), true, true, &[], &["true".into()]);
        assert_eq!(
            held[1..7],
            [LAUNCH_FILE, "--mark", "1-2-3", "--held", "--handed", "1000"]
        );
        // Held means nothing without a mark (the watcher ends a marked program).
        assert_eq!(wrap(&id, None, true, false, &[], &[])[2], "1000");
        let argv = wrap(
            &id,
            None,
            false,
            false,
            &[
                ("UV_CACHE_DIR".into(), "/c".into()),
                ("BAD NAME".into(), "x".into()),
            ],
            &["uv".into(), "sync".into()],
        );
        assert_eq!(argv[0], "/bin/sh");
        assert_eq!(
            &argv[1..],
            [
                LAUNCH_FILE,
                "1000",
                "1000",
                "/home/agent",
                "UV_CACHE_DIR=/c",
                "--",
                "uv",
                "sync"
            ]
        );
        assert!(valid_key("GIT_CONFIG_KEY_0") && !valid_key("0X") && !valid_key(""));
        assert!(LAUNCHER.contains(&format!("\nfor f in {ENV_FILE} {KEYS_FILE}; do\n")));
        assert!(LAUNCHER.contains(&format!("until [ -e {HANDED} ]")));
        assert!(LAUNCHER.contains(&format!(
            "exec /bin/sh {} \"$k\" live",
            super::super::ending::END_FILE
        )));
        assert!(LAUNCHER.contains(&format!("[ -e {HANDED}-failed ]")));
        assert!(ANCHOR.starts_with(&format!(
            "m={HANDED} s={}/{HANDED_NOTE}\n",
            super::super::STATUS_DIR
        )));
        assert_eq!(ENV_FILE.rsplit_once('/').map(|p| p.0), Some(ENV_DIR));
        assert_eq!(KEYS_FILE.rsplit_once('/').map(|p| p.0), Some(ENV_DIR));
        assert_eq!(LAUNCH_FILE.rsplit_once('/').map(|p| p.0), Some(ENV_DIR));
    }

    /// The launcher's mark: its pid, start time and the agent's uid, in a file only
    /// root may read; marks of programs that have ended are swept, a running one's
    /// stays, and a mark word outside the ender's letters writes nothing.
    #[test]
    fn the_launcher_marks_its_program_and_sweeps_ended_ones() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        let marks = root.join("treebox-run");
        std::fs::create_dir(&marks).unwrap();
        let me = std::process::id();
        let my_start = crate::session::foreground::start_time(me as i32).unwrap();
        std::fs::write(marks.join("live"), format!("{me} {my_start} 1000\n")).unwrap();
        std::fs::write(marks.join("ended"), format!("{me} 1 1000\n")).unwrap();
        std::fs::write(marks.join("junk"), "x y z\n").unwrap();
        // The drop is the last line: here an exit, after the mark is written.
        let (pre, _) = LAUNCHER.rsplit_once("exec setpriv").unwrap();
        let script = format!("{pre}exit 0");
        let words = ["1000", "1000", "/home/agent", "--", "true"];
        let (code, err) = run_moved(&script, root, &[&["--mark", "1-2-3"][..], &words].concat());
        assert_eq!(code, 0, "{err}");
        let mark = std::fs::read_to_string(marks.join("1-2-3")).unwrap();
        let fields: Vec<&str> = mark.split_whitespace().collect();
        assert_eq!(fields.len(), 3, "{mark:?}");
        assert!(fields[0].parse::<u32>().is_ok() && fields[1].parse::<u64>().is_ok());
        assert_eq!(fields[2], "1000");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(marks.join("1-2-3"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(marks.join("live").exists());
        assert!(!marks.join("ended").exists() && !marks.join("junk").exists());
        // A word the ender would refuse: no mark at all.
        let (code, _) = run_moved(&script, root, &[&["--mark", "../x"][..], &words].concat());
        assert_eq!(code, 0);
        let mut names: Vec<String> = std::fs::read_dir(&marks)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["1-2-3", "live"]);
    }

    /// A held launch: its watcher reads the held stdin to its end, then ends the program
    /// if it still runs (its caller gone), and leaves alone what a program that ended
    /// by itself left running.
    #[test]
    fn a_held_program_ends_with_its_caller_but_not_what_it_left_on_purpose() {
        use std::io::Read;
        use std::process::{Command, Stdio};
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        let moved = |s: &str| s.replace("/run/", &format!("{}/", root.display()));
        std::fs::create_dir(root.join("treebox-env")).unwrap();
        std::fs::write(
            root.join("treebox-env")
                .join(super::super::ending::END_NAME),
            moved(super::super::ending::ENDER),
        )
        .unwrap();
        // As this process's uid (the ender signals only the mark's), the drop a plain
        // exec.
        let (pre, _) = LAUNCHER.rsplit_once("exec setpriv").unwrap();
        let script = moved(&format!("{pre}exec \"$@\""));
        let uid = unsafe { libc::geteuid() }.to_string();
        let launch = |mark: &str, program: &[&str]| {
            use std::os::unix::process::CommandExt;
            // Its own group, as an engine's `exec` makes it.
            Command::new("sh")
                .process_group(0)
                .arg("-c")
                .arg(&script)
                .arg("sh")
                .args(["--mark", mark, "--held", &uid, &uid, "/tmp", "--"])
                .args(program)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        };
        let wait = |child: &mut std::process::Child| {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            loop {
                if let Some(st) = child.try_wait().unwrap() {
                    return Some(st);
                }
                if std::time::Instant::now() > deadline {
                    return None;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        };
        // Cut off: the held stdin closes while the program runs; it is hung up on.
        let mut cut = launch("1-1-1", &["sleep", "30"]);
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(cut.try_wait().unwrap().is_none());
        drop(cut.stdin.take());
        let st = wait(&mut cut);
        if st.is_none() {
            let _ = cut.kill();
        }
        assert!(st.is_some_and(|s| !s.success()), "{st:?}");
        // Ended by itself, leaving a process on purpose: its stdin then closes, and the
        // process it left runs on. The program's own stdin was never the held one.
        let mut done = launch(
            "1-1-2",
            &[
                "sh",
                "-c",
                "sleep 30 >/dev/null 2>&1 & echo $!; read -r x || echo eof",
            ],
        );
        let mut out = String::new();
        let mut so = done.stdout.take().unwrap();
        let st = wait(&mut done);
        so.read_to_string(&mut out).unwrap();
        assert!(st.is_some_and(|s| s.success()), "{st:?}");
        let mut lines = out.lines();
        let left: i32 = lines.next().unwrap().parse().unwrap();
        assert_eq!(lines.next(), Some("eof"));
        drop(done.stdin.take());
        std::thread::sleep(std::time::Duration::from_millis(500));
        let alive = crate::session::foreground::start_time(left).is_some();
        // SAFETY: the test's own background `sleep`.
        unsafe {
            libc::kill(left, libc::SIGKILL);
        }
        assert!(alive, "what the program left running was ended");
    }

    #[test]
    fn the_launcher_is_written_once_and_mended_when_changed() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("launch");
        keep_launcher(&p).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), LAUNCHER);
        let end = d.path().join("end");
        assert_eq!(
            std::fs::read_to_string(&end).unwrap(),
            super::super::ending::ENDER
        );
        assert_eq!(
            super::super::ending::END_FILE,
            format!("{ENV_DIR}/{}", super::super::ending::END_NAME)
        );
        let ino = std::fs::metadata(&p).unwrap().ino();
        keep_launcher(&p).unwrap();
        assert_eq!(
            std::fs::metadata(&p).unwrap().ino(),
            ino,
            "rewritten unchanged"
        );
        std::fs::write(&p, "old").unwrap();
        keep_launcher(&p).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), LAUNCHER);
    }

    #[test]
    fn the_anchor_tells_the_container_and_the_host_once() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        let status = root.join("treebox/status");
        std::fs::create_dir_all(&status).unwrap();
        let mine = format!("{}:{}", unsafe { libc::getuid() }, unsafe {
            libc::getgid()
        });
        let checkout = root.join("checkout");
        std::fs::create_dir(&checkout).unwrap();
        // A note planted by an agent of an earlier container is replaced, never
        // written through.
        let outside = root.join("outside");
        std::fs::write(&outside, "keep").unwrap();
        std::os::unix::fs::symlink(&outside, status.join(HANDED_NOTE)).unwrap();
        let c = checkout.to_str().unwrap();
        let (code, _) = run_moved(ANCHOR, root, &[&mine, c, c, status.to_str().unwrap()]);
        assert_eq!(code, 0);
        assert!(root.join("treebox-handed").is_file());
        // The launcher's marks dir is there before any launch (root's alone).
        use std::os::unix::fs::PermissionsExt;
        let marks = std::fs::metadata(root.join("treebox-run")).unwrap();
        assert!(marks.is_dir());
        assert_eq!(marks.permissions().mode() & 0o777, 0o700);
        let note = std::fs::symlink_metadata(status.join(HANDED_NOTE)).unwrap();
        assert!(note.is_file(), "the host's note is a file of its own");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
        // Once per container: a restart says nothing again.
        std::fs::remove_file(status.join(HANDED_NOTE)).unwrap();
        run_moved(ANCHOR, root, &[&mine, c, c]);
        assert!(!status.join(HANDED_NOTE).exists());

        // A path that cannot be given: both are told why, and nothing says done.
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        let status = root.join("treebox/status");
        std::fs::create_dir_all(&status).unwrap();
        let gone = root.join("gone");
        let (code, _) = run_moved(ANCHOR, root, &[&mine, c, gone.to_str().unwrap()]);
        assert_eq!(code, 0, "the anchor idles whatever happened");
        assert!(!root.join("treebox-handed").exists());
        assert!(!status.join(HANDED_NOTE).exists());
        let why = std::fs::read_to_string(root.join("treebox-handed-failed")).unwrap();
        assert!(why.contains("gone"), "{why}");
        assert_eq!(
            std::fs::read_to_string(status.join(format!("{HANDED_NOTE}-failed"))).unwrap(),
            why
        );
        assert_eq!(
            super::super::handed::read(&status),
            super::super::handed::Handed::Failed(why.trim().to_string())
        );

        // The launcher refuses with that reason, and goes on once the hand-over is done.
        let waited = LAUNCHER.split_once("\nfor f in").unwrap().0.to_string() + "\necho on";
        let (code, err) = run_moved(&waited, root, &["--handed"]);
        assert_eq!(code, 126, "{err}");
        assert!(
            err.contains("could not be given to the agent") && err.contains("gone"),
            "{err}"
        );
        std::fs::remove_file(root.join("treebox-handed-failed")).unwrap();
        std::fs::write(root.join("treebox-handed"), "").unwrap();
        assert_eq!(run_moved(&waited, root, &["--handed"]), (0, String::new()));
    }
}
