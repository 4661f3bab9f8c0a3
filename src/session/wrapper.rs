//! The program a tmux session runs: treebox's own binary, called as
//! `git-treebox __treebox-session <marker> <launch file>` (both binaries answer to it before parsing
//! their command line, see `cli::treebox_main`).
//!
//! It holds the box's session marker while the agent runs, reads (and removes) the
//! launch file [`super::Session::start`] wrote — the program, its working directory
//! and the whole environment of the command that started the session — runs the
//! program on the session's terminal, and writes its exit code to `session.exit`.
//! Only the terminal's own variables (`TERM`, `TMUX`, `TMUX_PANE`) come from the pane.
//! It outlives hang-ups and interrupts itself (they are the agent's to handle), so
//! the code it records is always the agent's.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use super::Report;
use crate::cmd::Cmd;
use crate::state::session as marker;

/// The first argument that turns either binary into a session's program.
pub const WRAPPER_ARG: &str = "__treebox-session";

/// The first line of a launch file.
const MAGIC: &[u8] = b"treebox-session 2";

/// Variables describing the terminal: the pane's own, never the starter's.
const TERMINAL_VARS: [&str; 3] = ["TERM", "TMUX", "TMUX_PANE"];

/// The marker this process was asked to serve, when it was started as a session's
/// program (`<exe> __treebox-session <marker>`).
pub fn wrapper_marker() -> Option<(PathBuf, PathBuf)> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != WRAPPER_ARG {
        return None;
    }
    let marker = PathBuf::from(args.next().unwrap_or_default());
    let launch = PathBuf::from(args.next().unwrap_or_default());
    Some((marker, launch))
}

/// The launch file for `cmd`: NUL-separated fields — the magic line, the working
/// directory, the number of argv words, the words, the number of the ender's words
/// ([`Cmd::ender`]), those words, then `KEY=VALUE` for every variable of this
/// process's environment with `cmd`'s changes applied.
pub(super) fn encode(cmd: &Cmd) -> Vec<u8> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| !cmd.env_remove.contains(k))
        .filter(|(k, _)| !TERMINAL_VARS.iter().any(|t| k == OsStr::new(t)))
        .filter(|(k, _)| !super::OUTER_SESSION_VARS.iter().any(|t| k == OsStr::new(t)))
        .collect();
    for (k, v) in &cmd.env {
        env.retain(|(ek, _)| ek != k);
        env.push((k.clone(), v.clone()));
    }
    let argv: Vec<OsString> = std::iter::once(cmd.program.clone())
        .chain(cmd.args.iter().cloned())
        .collect();
    let mut out = Vec::new();
    let mut field = |b: &[u8]| {
        out.extend_from_slice(b);
        out.push(0);
    };
    field(MAGIC);
    field(
        cmd.cwd
            .as_deref()
            .unwrap_or(Path::new("/"))
            .as_os_str()
            .as_bytes(),
    );
    field(argv.len().to_string().as_bytes());
    for a in &argv {
        field(a.as_bytes());
    }
    field(cmd.ender.len().to_string().as_bytes());
    for a in &cmd.ender {
        field(a.as_bytes());
    }
    for (k, v) in &env {
        let mut kv = k.as_bytes().to_vec();
        kv.push(b'=');
        kv.extend_from_slice(v.as_bytes());
        field(&kv);
    }
    out
}

/// What a launch file says to run.
#[derive(Debug, PartialEq, Eq)]
struct Launch {
    cwd: PathBuf,
    argv: Vec<OsString>,
    ender: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
}

fn decode(data: &[u8]) -> Option<Launch> {
    let mut fields = data.split(|b| *b == 0);
    if fields.next()? != MAGIC {
        return None;
    }
    let cwd = PathBuf::from(OsStr::from_bytes(fields.next()?));
    let n: usize = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
    let mut argv = Vec::with_capacity(n);
    for _ in 0..n {
        argv.push(OsString::from_vec(fields.next()?.to_vec()));
    }
    if argv.is_empty() {
        return None;
    }
    let n: usize = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
    let mut ender = Vec::with_capacity(n.min(64));
    for _ in 0..n {
        ender.push(OsString::from_vec(fields.next()?.to_vec()));
    }
    let env = fields
        .filter(|f| !f.is_empty())
        .filter_map(|f| {
            let eq = f.iter().position(|b| *b == b'=')?;
            Some((
                OsString::from_vec(f[..eq].to_vec()),
                OsString::from_vec(f[eq + 1..].to_vec()),
            ))
        })
        .collect();
    Some(Launch {
        cwd,
        argv,
        ender,
        env,
    })
}

/// `session.exit`: `<code>`, or `spawn <127|126> <program>\t<reason>` when the program
/// could not be started at all.
pub(super) fn parse_report(text: &str) -> Option<Report> {
    let line = text.lines().next()?.trim_end();
    if let Some(rest) = line.strip_prefix("spawn ") {
        let (code, rest) = rest.split_once(' ')?;
        let (program, reason) = rest.split_once('\t').unwrap_or((rest, ""));
        return Some(Report::SpawnFailed {
            program: program.to_string(),
            reason: reason.to_string(),
            not_found: code == "127",
        });
    }
    line.trim().parse().ok().map(Report::Code)
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("could not read the session's launch file {}", .0.display())]
    Launch(PathBuf),
    #[error("could not hold the session marker {}", .path.display())]
    Marker {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not start `{program}`")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
}

/// Whether a hang-up or termination was passed on to the process group already.
static PASSED_ON: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The agent's pid, once it runs (0 before).
static CHILD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Signal handler: pass the first hang-up or termination on to the process group
/// (this process included, which then ignores it: only the first one is passed on),
/// and to the agent's own group should it have made one (an interactive shell does).
extern "C" fn pass_on(sig: libc::c_int) {
    if !PASSED_ON.swap(true, std::sync::atomic::Ordering::SeqCst) {
        let child = CHILD.load(std::sync::atomic::Ordering::SeqCst);
        // SAFETY: kill(2) is async-signal-safe; a group that does not exist is ESRCH.
        unsafe {
            libc::kill(0, sig);
            if child > 1 {
                libc::kill(-child, sig);
            }
        }
    }
}

/// Run the session's program for `marker` and return its exit code (what this
/// process should exit with). The exit code also goes to `session.exit`.
pub fn serve(marker_path: &Path, launch_path: &Path) -> Result<i32, ServeError> {
    if !marker::is_launch_path(marker_path, launch_path) {
        return Err(ServeError::Launch(launch_path.to_path_buf()));
    }
    let _held = marker::Session::hold(marker_path).map_err(|source| ServeError::Marker {
        path: marker_path.to_path_buf(),
        source,
    })?;
    let exit_path = marker::exit_path(marker_path);
    let pid_path = marker::pid_path(marker_path);
    let data = std::fs::symlink_metadata(launch_path)
        .ok()
        .filter(|m| m.is_file() && m.len() <= 4 << 20)
        .and_then(|_| std::fs::read(launch_path).ok());
    let _ = std::fs::remove_file(launch_path);
    let Some(launch) = data.as_deref().and_then(decode) else {
        let _ = crate::state::atomic::write(&exit_path, b"1\n", 0o600);
        return Err(ServeError::Launch(launch_path.to_path_buf()));
    };
    let mut c = Cmd::new(&launch.argv[0])
        .args(&launch.argv[1..])
        .cwd(&launch.cwd)
        .to_command();
    c.env_clear().envs(launch.env.iter().map(|(k, v)| (k, v)));
    // The command that started the session ran elsewhere (the main checkout): its
    // `PWD` would name that directory to the agent, which runs in the box.
    c.env("PWD", &launch.cwd);
    for t in TERMINAL_VARS {
        if let Some(v) = std::env::var_os(t) {
            c.env(t, v);
        }
    }
    // Interrupts from the terminal reach the whole process group: they are the
    // agent's, so this process ignores them. A hang-up (the session was killed, or its
    // server) or a termination reaches this process alone, as the session's leader:
    // it is passed on to the process group once, and this process stays to record how
    // the agent ended.
    // SAFETY: setting a signal disposition is async-signal-safe and touches no Rust
    // state; the child gets the defaults back before it runs the program.
    const SIGNALS: [libc::c_int; 4] = [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGTERM];
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGQUIT, libc::SIG_IGN);
        let pass_on = pass_on as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGHUP, pass_on);
        libc::signal(libc::SIGTERM, pass_on);
        use std::os::unix::process::CommandExt;
        c.pre_exec(|| {
            for s in SIGNALS {
                libc::signal(s, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    let program = launch.argv[0].to_string_lossy().into_owned();
    let mut child = match c.spawn() {
        Ok(child) => child,
        Err(source) => {
            let code = if source.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
            let line = format!(
                "spawn {code} {}\t{source}\n",
                program.replace(['\t', '\n'], " ")
            );
            let _ = crate::state::atomic::write(&exit_path, line.as_bytes(), 0o600);
            return Err(ServeError::Spawn { program, source });
        }
    };
    CHILD.store(child.id() as i32, std::sync::atomic::Ordering::SeqCst);
    let _ = crate::state::atomic::write(&pid_path, format!("{}\n", child.id()).as_bytes(), 0o600);
    let status = child.wait();
    // Cut off (its client killed, or this process hung up on): what it started
    // elsewhere may run on, and its ender ends it. The pid is reaped by now, so the
    // file names none while that runs (an `end` waiting on it kills no reused pid).
    let signalled = status.as_ref().is_ok_and(|st| {
        use std::os::unix::process::ExitStatusExt;
        st.signal().is_some()
    });
    if !launch.ender.is_empty()
        && (signalled || PASSED_ON.load(std::sync::atomic::Ordering::SeqCst))
    {
        let _ = crate::state::atomic::write(&pid_path, b"0\n", 0o600);
        super::run_ender(&ender_cmd(&launch));
    }
    let code = match status {
        Ok(st) => crate::cmd::exit_code(st),
        Err(_) => 1,
    };
    // Before the exit code: whoever sees the code finds the screen beside it.
    keep_screen(&marker::screen_path(marker_path));
    let _ = crate::state::atomic::write(&exit_path, format!("{code}\n").as_bytes(), 0o600);
    let _ = std::fs::remove_file(&pid_path);
    Ok(code)
}

/// The launch's ender, with the launch's environment in place of this process's (the
/// tmux server's).
fn ender_cmd(launch: &Launch) -> Cmd {
    let mut c = Cmd::new("true")
        .cwd(&launch.cwd)
        .with_ender(launch.ender.clone());
    for (k, _) in std::env::vars_os() {
        if !launch.env.iter().any(|(lk, _)| *lk == k) {
            c = c.env_remove(k);
        }
    }
    for (k, v) in &launch.env {
        c = c.env(k, v);
    }
    c
}

/// The most of a pane's screen kept (a screen is rows × columns; a huge one is cut).
const MAX_SCREEN_BYTES: usize = 256 << 10;

/// Keep the pane's screen as the agent left it, at `path` (0600): the pane closes when
/// this program ends, and with it the agent's last words (a refusal, a login screen).
/// This process runs in the pane, so `$TMUX` names the server and `$TMUX_PANE` the
/// pane. Best effort: no tmux, no screen kept.
fn keep_screen(path: &Path) {
    let Some(pane) = std::env::var_os("TMUX_PANE").filter(|p| !p.is_empty()) else {
        return;
    };
    if std::env::var_os("TMUX").is_none_or(|t| t.is_empty()) {
        return;
    }
    let shown = Cmd::new(super::program())
        .args(["capture-pane", "-p", "-J", "-t"])
        .arg(pane)
        .cwd("/")
        .output();
    if let Ok(out) = shown {
        let screen = &out.stdout[..out.stdout.len().min(MAX_SCREEN_BYTES)];
        let _ = crate::state::atomic::write(path, screen, 0o600);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_files_round_trip_any_bytes() {
        let cmd = Cmd::new("claude")
            .args(["--x", "a b", ""])
            .with_ender(vec!["docker".into(), "exec".into(), "".into()])
            .env("TREEBOX_BOX", "fix")
            .env("ODD", OsString::from_vec(b"\xff=\n".to_vec()))
            .env_remove("HOME")
            .cwd("/r/box");
        let got = decode(&encode(&cmd)).unwrap();
        assert_eq!(got.cwd, Path::new("/r/box"));
        assert_eq!(got.argv, ["claude", "--x", "a b", ""].map(OsString::from));
        assert_eq!(got.ender, ["docker", "exec", ""].map(OsString::from));
        let ender = ender_cmd(&got).ender_cmd().unwrap();
        assert_eq!(ender.argv(), ["docker", "exec", ""]);
        assert!(ender
            .env
            .iter()
            .any(|(k, v)| k == "TREEBOX_BOX" && v == "fix"));
        assert!(ender.env_remove.iter().any(|k| k == "HOME") || std::env::var_os("HOME").is_none());
        assert_eq!(
            decode(&encode(&Cmd::new("x"))).unwrap().ender,
            Vec::<OsString>::new()
        );
        let get = |k: &str| {
            got.env
                .iter()
                .find(|(ek, _)| ek == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(get("TREEBOX_BOX").unwrap(), "fix");
        assert_eq!(get("ODD").unwrap(), OsString::from_vec(b"\xff=\n".to_vec()));
        assert!(get("HOME").is_none());
        assert!(get("TERM").is_none());
        assert!(decode(b"something else\x00/\x001\x00x\x00").is_none());
    }

    #[test]
    fn reports() {
        assert_eq!(parse_report("0\n"), Some(Report::Code(0)));
        assert_eq!(parse_report("137\n"), Some(Report::Code(137)));
        assert_eq!(
            parse_report("spawn 127 claude\tNo such file or directory (os error 2)\n"),
            Some(Report::SpawnFailed {
                program: "claude".into(),
                reason: "No such file or directory (os error 2)".into(),
                not_found: true,
            })
        );
        assert_eq!(parse_report(""), None);
        assert_eq!(parse_report("junk"), None);
    }
}
