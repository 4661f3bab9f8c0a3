//! Sessions that outlive the terminal (SPEC §7a): the agent (or `up`'s shell) runs in
//! a tmux session on treebox's own socket, executing into the box — the host runner's
//! process, or `docker`/`podman exec -it` into the container.
//!
//! - One server per state root, on `<state root>/tmux.sock` (never the user's own
//!   tmux); one session per box, named `<repo-key>/<leaf>` (see
//!   [`crate::state::session::session_name`]).
//! - The session's program is treebox's own binary in [`wrapper`] mode: it holds the
//!   box's session marker (so `list`/`ls`/`teardown` see the session as live exactly
//!   while it runs), runs the agent with the environment of the command that started
//!   the session (written to a 0600 launch file, never to argv, and never taken from
//!   the tmux server's global environment, which is whoever started the server), and
//!   writes the agent's exit code (128+signal) to a host-owned file, which tmux itself
//!   does not pass on. [`Session::attach`] reports it when the session ends while
//!   attached.
//! - Ending a session (teardown/down `--force`, park, `box_stop`) kills it and waits
//!   until the agent is gone; so is a program run in the foreground in the box
//!   ([`foreground`]: no tmux, or no terminal and no `-d`). A program in a box's
//!   container outlives its engine client: whoever waited on a client that was cut
//!   off runs the command's ender ([`Cmd::ender`], [`run_ender`]), which ends the
//!   program inside, before the session's end is reported.
//!
//! Without tmux ([`available`] false) the CLI keeps the foreground child it always had.
//! Called by `cli/` (create, enter, sandbox attach/up), [`crate::teardown`] and
//! [`crate::maintain::park`].

pub mod detached;
pub mod foreground;
mod ready;
pub mod typing;
mod wrapper;
use ready::terminal_size;
pub use ready::{last_lines, Readiness, Ready, Sign, LAST_LINES};

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cmd::{Cmd, CmdError};
use crate::state::session as marker;

pub use wrapper::{serve, wrapper_marker, ServeError, WRAPPER_ARG};

/// The variables an agent CLI gives the programs it starts about its own session
/// (Claude Code: `CLAUDECODE`, its session id, its messaging socket and token, its
/// project dir; Codex: its thread and sandbox). A program started in a box is a
/// session of its own, whoever started treebox — a person in a terminal, a Claude Code
/// running `git treebox create` through its shell, or a lead agent's MCP server — so
/// none of them reaches it, in a tmux session ([`wrapper`]) or in the foreground
/// ([`foreground`]). Logins (`CLAUDE_CODE_OAUTH_TOKEN`, API keys) stay.
pub const OUTER_SESSION_VARS: [&str; 11] = [
    "CLAUDECODE",
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_MESSAGING_SOCKET",
    "CLAUDE_CODE_MESSAGING_TOKEN",
    "CLAUDE_CODE_SSE_PORT",
    "CODEX_THREAD_ID",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CODEX_CI",
];

/// A box's tmux session (which may or may not exist right now).
#[derive(Debug, Clone)]
pub struct Session {
    marker: PathBuf,
    name: String,
    socket: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("tmux is not installed (or `{program}` does not run)")]
    NoTmux { program: String },
    #[error("{path} is not a box's session marker", path = .path.display())]
    NotAMarker { path: PathBuf },
    #[error("could not write {}", .path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot find treebox's own program to run in the session")]
    Exe(#[source] std::io::Error),
    #[error(transparent)]
    Tmux(#[from] CmdError),
    #[error("session `{name}` did not start")]
    NotStarted { name: String },
    #[error("could not start `{program}` in session `{name}`: {reason}")]
    Spawn {
        name: String,
        program: String,
        reason: String,
        not_found: bool,
    },
    #[error("session `{name}` ended without reporting the agent's exit code")]
    NoExitCode { name: String },
}

/// How an attached client came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The user detached; the session runs on.
    Detached,
    /// The program exited with this code (128+signal when killed).
    Exited(i32),
}

/// The tmux program: `$TREEBOX_TMUX`, else `tmux` on PATH.
fn program() -> OsString {
    std::env::var_os("TREEBOX_TMUX")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "tmux".into())
}

/// `tmux -V`, when tmux runs at all (asked once per process).
pub fn version() -> Option<String> {
    static VERSION: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    VERSION
        .get_or_init(|| {
            let out = Cmd::new(program()).arg("-V").output().ok()?;
            Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
        })
        .clone()
}

/// Can sessions be made on this machine: is the tmux program there, an executable
/// file (found as a shell finds it, without running it: `create -d` asks before every
/// start)? One that is there but does not run fails its first command, which says so.
pub fn available() -> bool {
    let program = program();
    let Some(name) = program.to_str() else {
        return Path::new(&program).is_file();
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    crate::cmd::find_program(name, std::env::var_os("PATH").as_deref(), &cwd).is_some()
}

/// The error for a machine without tmux.
pub fn missing() -> SessionError {
    SessionError::NoTmux {
        program: program().to_string_lossy().into_owned(),
    }
}

/// The longest socket path tmux can bind (`sun_path` holds 108 bytes, with a margin).
const SOCKET_MAX: usize = 100;
/// How long a new session may take to show its program running.
const START_LIMIT: Duration = Duration::from_secs(15);
/// How long an ended session's agent may take to go after its terminal hung up.
const END_GRACE: Duration = Duration::from_secs(5);

impl Session {
    /// The session of the box whose session marker is `marker`
    /// (`Layout::session_path`).
    pub fn for_marker(marker: &Path) -> Result<Session, SessionError> {
        let not = || SessionError::NotAMarker {
            path: marker.to_path_buf(),
        };
        Ok(Session {
            marker: marker.to_path_buf(),
            name: marker::session_name(marker).ok_or_else(not)?,
            socket: marker::socket_path(marker).ok_or_else(not)?,
        })
    }

    /// The session's name on treebox's socket.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The session's window name: the box's (the session name's last part).
    fn window_name(&self) -> &str {
        self.name.rsplit('/').next().unwrap_or(&self.name)
    }

    /// `-t` for this session, matched exactly (no prefix or pattern matching).
    fn target(&self) -> String {
        format!("={}", self.name)
    }

    /// A tmux client command on treebox's socket. `TMUX` is dropped so that a client
    /// started from inside the user's own tmux is not refused as nested.
    fn tmux(&self) -> Cmd {
        let c = Cmd::new(program()).env_remove("TMUX").cwd("/");
        // A socket path tmux cannot bind (sun_path holds 108 bytes): a named socket in
        // tmux's own directory, still one per state root.
        if self.socket.as_os_str().len() > SOCKET_MAX {
            let key = crate::state::layout::repo_key(&self.socket);
            c.args(["-L".to_string(), format!("treebox-{key}")])
        } else {
            c.arg("-S").arg(&self.socket)
        }
    }

    /// Does the session exist now (its program may be starting or ending)?
    pub fn exists(&self) -> bool {
        if self.socket.as_os_str().len() <= SOCKET_MAX && !self.socket.exists() {
            return false; // no server on treebox's socket, no session
        }
        self.tmux()
            .args(["has-session", "-t", &self.target()])
            .output()
            .is_ok()
    }

    /// Start the session detached, running `cmd` (as the runner built it, with a
    /// terminal) with this process's environment plus `cmd`'s changes. Returns once
    /// the program runs (the box's session is live) or has already ended. The caller
    /// has found no such session ([`Session::exists`]); one started since by another
    /// command makes tmux refuse the name (`SessionError::Tmux`).
    pub fn start(&self, cmd: &Cmd) -> Result<(), SessionError> {
        if !marker::is_live(&self.marker) {
            // What an earlier session left: never a running one's files (a program
            // started since holds the marker before it writes its pid).
            for stale in [
                marker::exit_path(&self.marker),
                marker::pid_path(&self.marker),
                marker::screen_path(&self.marker),
            ] {
                let _ = std::fs::remove_file(stale);
            }
        }
        // A launch file of its own: two commands starting the same box's session at
        // once never read each other's (the second one's tmux refuses the name).
        let launch = marker::launch_path(&self.marker, &launch_id());
        if let Some(dir) = launch.parent() {
            std::fs::create_dir_all(dir).map_err(|source| SessionError::Write {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        crate::state::atomic::write(&launch, &wrapper::encode(cmd), 0o600).map_err(|source| {
            SessionError::Write {
                path: launch.clone(),
                source,
            }
        })?;
        if let Some(dir) = self.socket.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let exe = std::env::current_exe().map_err(SessionError::Exe)?;
        let cwd = cmd.cwd.clone().unwrap_or_else(|| PathBuf::from("/"));
        let (cols, rows) = terminal_size();
        let new_session = confine(self.tmux())
            .args([
                "new-session",
                "-d",
                "-s",
                &self.name,
                "-n",
                self.window_name(),
            ])
            // The size of the terminal that starts it (a detached session is 80×24
            // otherwise, and what the agent draws then stays wrapped once attached).
            .args(["-x", &cols.to_string(), "-y", &rows.to_string(), "-c"])
            .arg(&cwd)
            .arg("--")
            .arg(&exe)
            .arg(WRAPPER_ARG)
            .arg(&self.marker)
            .arg(&launch)
            // The user's tmux.conf stays in force, but not the options that would
            // keep a finished session around or end a detached one (no `-t`: the
            // session just made).
            .args([";", "set-option", "destroy-unattached", "off"])
            .args([";", "set-option", "-w", "remain-on-exit", "off"])
            // The window keeps the box's name: neither tmux nor the agent renames it.
            .args([";", "set-option", "-w", "automatic-rename", "off"])
            .args([";", "set-option", "-w", "allow-rename", "off"])
            // The pane's title is the agent's to set (and tmux before 3.4 takes any
            // APC sequence, a terminal query included, as one): the status line
            // shows the clock where tmux's default shows the title.
            .args([";", "set-option", "status-right", " %H:%M %d-%b-%y"])
            // tmux 3.4 on: the agent cannot set the title at all (`-q`: older tmux
            // has no such option and says nothing).
            .args([";", "set-option", "-qp", "allow-set-title", "off"]);
        // A hook of the user's (`session-created`, `after-new-window`) could set the
        // new window's or pane's own value: those are switched off too (`-q`: tmux
        // before 3.3 has no such option, see [`confine`]).
        let started = new_session
            .args([";", "set-option", "-qw", "allow-passthrough", "off"])
            .args([";", "set-option", "-qp", "allow-passthrough", "off"])
            .output();
        if let Err(e) = started {
            let _ = std::fs::remove_file(&launch);
            return Err(e.into());
        }
        let since = Instant::now();
        let mut polls = 0u32;
        let pid_file = marker::pid_path(&self.marker);
        loop {
            // The program is running once its pid is written (it holds the marker by
            // then); a program that could not start, or has already ended, says so.
            if let Some(report) = self.exit_report() {
                return match report {
                    Report::SpawnFailed {
                        program,
                        reason,
                        not_found,
                    } => Err(SessionError::Spawn {
                        name: self.name.clone(),
                        program,
                        reason,
                        not_found,
                    }),
                    Report::Code(_) => Ok(()),
                };
            }
            if pid_file.exists() && marker::is_live(&self.marker) {
                return Ok(());
            }
            polls += 1;
            if (polls.is_multiple_of(20) && !self.exists()) || since.elapsed() > START_LIMIT {
                // The program never ran (or ran and vanished without a word).
                if self.exit_report().is_none() {
                    return Err(SessionError::NotStarted {
                        name: self.name.clone(),
                    });
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Attach this terminal to the session until the user detaches or it ends.
    pub fn attach(&self) -> Result<Ended, SessionError> {
        // A server started by an earlier treebox may not have confined itself yet.
        let mut client = confine(self.tmux())
            .args(["attach-session", "-t", &self.target()])
            .env_remove("TMUX_PANE");
        if std::env::var_os("TERM").is_none_or(|t| t.is_empty()) {
            // tmux needs to know the terminal; a plain one is the safe guess.
            client = client.env("TERM", "xterm");
        }
        let status = client.run_in_foreground();
        if self.exists() {
            return Ok(Ended::Detached);
        }
        match self.exit_report() {
            Some(Report::Code(c)) => Ok(Ended::Exited(c)),
            Some(Report::SpawnFailed {
                program,
                reason,
                not_found,
            }) => Err(SessionError::Spawn {
                name: self.name.clone(),
                program,
                reason,
                not_found,
            }),
            None => match status {
                Err(source) => Err(SessionError::Tmux(CmdError::Spawn {
                    line: client.short(),
                    source,
                })),
                Ok(_) => Err(SessionError::NoExitCode {
                    name: self.name.clone(),
                }),
            },
        }
    }

    /// End the session: kill it (its terminal hangs up, which ends the agent) and
    /// wait until the agent is gone; an agent that outlives the hang-up by
    /// [`END_GRACE`] is killed. Quietly nothing when there is no session.
    pub fn end(&self) {
        let pid_file = marker::pid_path(&self.marker);
        let had = self.exists();
        if had {
            let _ = self
                .tmux()
                .args(["kill-session", "-t", &self.target()])
                .output();
        }
        if !had && !pid_file.exists() {
            return;
        }
        if self.wait_gone(&pid_file, END_GRACE) {
            return;
        }
        // Still held: the program waits on an agent that ignored the hang-up. The pid
        // is the agent's while the marker is held (the program has not reaped it).
        let pid = crate::git::repo::read_plain(&pid_file)
            .and_then(|t| t.trim().parse::<i32>().ok())
            .filter(|p| *p > 1);
        if let (Some(pid), true) = (pid, marker::is_live(&self.marker)) {
            // SAFETY: kill(2) with a pid and a signal number touches no memory.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
            self.wait_gone(&pid_file, END_GRACE);
        }
    }

    /// Wait until the session's program has let go of the agent (its pid file gone).
    fn wait_gone(&self, pid_file: &Path, limit: Duration) -> bool {
        let since = Instant::now();
        while pid_file.exists() && marker::is_live(&self.marker) {
            if since.elapsed() > limit {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }

    /// When the session's window last showed output (tmux's `window_activity`: an
    /// agent at work redraws its screen), if the session exists.
    pub fn activity(&self) -> Option<std::time::SystemTime> {
        if !self.exists() {
            return None;
        }
        let out = self
            .tmux()
            .args(["display-message", "-p", "-t"])
            .arg(format!("{}:", self.target()))
            .arg("#{window_activity}")
            .output()
            .ok()?;
        let secs: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
        Some(std::time::UNIX_EPOCH + Duration::from_secs(secs))
    }

    /// What the session's program reported when the agent ended, if it did.
    fn exit_report(&self) -> Option<Report> {
        let text = crate::git::repo::read_plain(&marker::exit_path(&self.marker))?;
        wrapper::parse_report(&text)
    }
}

/// `tmux ARGS` prefixed with the options that keep a box's output in its pane (SPEC
/// §7a), whatever the user's `tmux.conf` says: a program in a pane neither sets the
/// terminal's clipboard (OSC 52, `set-clipboard`, a server option) nor passes
/// sequences through to it (`allow-passthrough`, a window option, tmux 3.3 on; older
/// tmux cannot switch passthrough off, and `doctor` says so). Run before the next
/// command in the same client: the server a `new-session` starts has loaded the user's
/// config by then, and no pane has written a byte.
fn confine(tmux: Cmd) -> Cmd {
    tmux.args(["set-option", "-s", "set-clipboard", "off", ";"])
        // An agent's keys as typed: Escape at once (tmux waits 500 ms for a sequence
        // by default), focus reported (Claude Code asks for it).
        .args(["set-option", "-s", "escape-time", "10", ";"])
        .args(["set-option", "-s", "focus-events", "on", ";"])
        // `-q`: tmux before 3.3 has no `allow-passthrough` and cannot switch it off
        // (`doctor` says so); it passes over the option without a word. So no
        // `tmux -V` is asked before a start.
        .args(["set-option", "-gqw", "allow-passthrough", "off", ";"])
}

/// Does the tmux whose `tmux -V` is `version` have the `allow-passthrough` option
/// (3.3 and later)? A version that does not read as `X.Y` (`tmux master`) counts as
/// new; so does a prefixed one (`tmux next-3.4`, `tmux openbsd-7.4`) by its number.
pub fn has_passthrough_option(version: &str) -> bool {
    let word = version.split_whitespace().last().unwrap_or("");
    let number = word.rsplit('-').next().unwrap_or(word);
    let mut parts = number.split('.').map(|p| {
        let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().ok()
    });
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= (3, 3),
        _ => true,
    }
}

/// A name for one start's launch file: this process and a counter.
fn launch_id() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// The longest an ender may take ([`crate::cmd::Cmd::ender`]: an engine's `exec` whose
/// script gives the program 3 s after its hang-up); a session's end waits
/// [`END_GRACE`] twice for it.
const ENDER_LIMIT: Duration = Duration::from_secs(8);

/// Run `cmd`'s ender, if it has one, for at most [`ENDER_LIMIT`]: its program was cut
/// off. Best effort: an engine that does not answer leaves the program to `down`.
pub(crate) fn run_ender(cmd: &Cmd) {
    if let Some(e) = cmd.ender_cmd() {
        let _ = e.output_within(ENDER_LIMIT);
    }
}

/// End every session of the box whose marker is `marker`: its tmux session, if it
/// has one, and any program a command runs in it in the foreground
/// ([`foreground`]). Returns the pids of programs still running afterwards (none,
/// unless the kernel would not let them go), for the caller to say so.
pub fn end(marker: &Path) -> Vec<i32> {
    if let Ok(s) = Session::for_marker(marker) {
        s.end();
    }
    foreground::end(marker, END_GRACE)
}

/// [`exit_code`] and when it was recorded.
pub fn ended(marker: &Path) -> Option<(i32, std::time::SystemTime)> {
    let code = exit_code(marker)?;
    let at = std::fs::symlink_metadata(marker::exit_path(marker))
        .and_then(|m| m.modified())
        .ok()?;
    Some((code, at))
}

/// How the agent of the box whose marker is `marker` last ended in a session: its exit
/// code (128+signal; 127/126 when it could not be started), if it has.
pub fn exit_code(marker: &Path) -> Option<i32> {
    let text = crate::git::repo::read_plain(&marker::exit_path(marker))?;
    Some(match wrapper::parse_report(&text)? {
        Report::Code(c) => c,
        Report::SpawnFailed { not_found, .. } => {
            if not_found {
                127
            } else {
                126
            }
        }
    })
}

/// When the session of the box whose marker is `marker` last showed output (for idle
/// parking); `None` without a session.
pub fn activity(marker: &Path) -> Option<std::time::SystemTime> {
    Session::for_marker(marker).ok()?.activity()
}

/// The session program's last word, from `session.exit`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Report {
    Code(i32),
    SpawnFailed {
        program: String,
        reason: String,
        not_found: bool,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passthrough_is_an_option_from_tmux_3_3() {
        for new in [
            "tmux 3.3",
            "tmux 3.3a",
            "tmux 3.4",
            "tmux 3.5a",
            "tmux 10.0",
            "tmux next-3.4",
            "tmux master",
            "tmux openbsd-7.4",
            "",
        ] {
            assert!(has_passthrough_option(new), "{new}");
        }
        for old in [
            "tmux 3.2a",
            "tmux 3.0",
            "tmux 2.9a",
            "tmux 1.8",
            "tmux next-3.2",
        ] {
            assert!(!has_passthrough_option(old), "{old}");
        }
    }
}
