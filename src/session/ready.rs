//! Whether a program just started in a session is ready for a person ([`Ready`]): the
//! sign it gives (Claude Code's prompt on screen or its `SessionStart` report, Codex's
//! prompt on screen), the
//! screens that wait for a person instead, and what it left on its screen when it
//! ended. `create -d`/`enter -d` wait on [`super::Session::wait_ready`].

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::{exit_code, Session};
use crate::state::session as marker;

/// With a reported sign, the screen is read on every this-many turns of 10 ms; when
/// the prompt may show first ([`Sign::Reported`]'s `shows`), every [`PROMPT_EVERY`].
const SCREEN_EVERY: u32 = 10;
const PROMPT_EVERY: u32 = 3;

impl Session {
    /// Wait until the program just started is ready for a person's prompt (`ready`
    /// says how to tell), it ends, or `limit` passes.
    pub fn wait_ready(
        &self,
        ready: &Ready,
        since: std::time::SystemTime,
        limit: Duration,
    ) -> Readiness {
        let started = since;
        let since = Instant::now();
        let mut seen_before = false;
        // A report is a file's time, cheap to look at often; the screen is a tmux
        // client each time, read every [`SCREEN_EVERY`]th turn (a fork per 10 ms would
        // compete with the agent's own start on a small machine).
        let (reported, every) = match &ready.sign {
            Sign::Reported { shows, .. } if !shows.is_empty() => (true, PROMPT_EVERY),
            Sign::Reported { .. } => (true, SCREEN_EVERY),
            _ => (false, 1),
        };
        let mut turn = 0u32;
        loop {
            if let Some(code) = exit_code(&self.marker) {
                return Readiness::Exited {
                    code,
                    last: self.last_lines(LAST_LINES),
                };
            }
            let look = turn.is_multiple_of(every);
            turn = turn.wrapping_add(1);
            let wants_screen = !ready.asks.is_empty()
                || match &ready.sign {
                    Sign::Shows(_) => true,
                    Sign::Reported { shows, .. } => !shows.is_empty(),
                    Sign::Started => false,
                };
            let screen = if look && wants_screen {
                self.screen()
            } else {
                None
            };
            if let Some(what) = screen
                .as_deref()
                .and_then(|s| ready.asks.iter().find(|a| s.contains(a.as_str())))
            {
                return Readiness::Asks {
                    what: what.clone(),
                    last: last_lines(screen.as_deref().unwrap_or(""), LAST_LINES),
                };
            }
            let is_ready = match &ready.sign {
                Sign::Started => true,
                Sign::Reported { path, shows } => {
                    std::fs::symlink_metadata(path)
                        .and_then(|m| m.modified())
                        .is_ok_and(|t| t >= started)
                        || (!shows.is_empty()
                            && screen
                                .as_deref()
                                .is_some_and(|s| shows.iter().all(|w| s.contains(w.as_str()))))
                }
                Sign::Shows(words) => {
                    let shows = screen
                        .as_deref()
                        .is_some_and(|s| words.iter().all(|w| s.contains(w.as_str())));
                    let twice = shows && seen_before;
                    seen_before = shows;
                    twice
                }
            };
            if is_ready {
                return Readiness::Ready;
            }
            if since.elapsed() > limit {
                let last = self
                    .screen()
                    .map(|s| last_lines(&s, LAST_LINES))
                    .unwrap_or_default();
                return Readiness::NotYet { last };
            }
            let pause = if seen_before {
                250
            } else if reported {
                10
            } else {
                50
            };
            std::thread::sleep(Duration::from_millis(pause));
        }
    }

    /// The pane's screen now, as plain text (`capture-pane` without `-e`: no
    /// colours or other sequences); `None` without the session.
    pub fn screen(&self) -> Option<String> {
        let out = self
            .tmux()
            .args(["capture-pane", "-p", "-J", "-t"])
            .arg(format!("{}:", self.target()))
            .output()
            .ok()?;
        Some(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The last `n` lines the agent left on its screen when it ended (kept by the
    /// session's program), made safe to print.
    pub fn last_lines(&self, n: usize) -> Vec<String> {
        let path = marker::screen_path(&self.marker);
        let text = std::fs::read(&path).unwrap_or_default();
        last_lines(&String::from_utf8_lossy(&text), n)
    }
}

/// How many of an agent's last lines a command shows.
pub const LAST_LINES: usize = 12;

/// The last `n` lines of a screen that hold anything, each made safe to print (a box's
/// output: no control sequences reach the user's terminal).
pub fn last_lines(screen: &str, n: usize) -> Vec<String> {
    let lines: Vec<&str> = screen
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .skip_while(|l| l.trim().is_empty())
        .collect();
    let mut kept: Vec<String> = lines
        .into_iter()
        .take(n)
        .map(crate::sanitize::line)
        .collect();
    kept.reverse();
    kept
}

/// How to tell that a program just started in a session is ready for a person, and
/// what on its screen means it waits for one instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ready {
    pub sign: Sign,
    /// Words of screens that wait for a person (a trust or login dialog): seen, the
    /// wait ends at once.
    pub asks: Vec<String>,
    /// Ready, it still waits for a person: it was known before it started that it
    /// would ask something (a trust it was not given) and its sign can come first
    /// (Codex draws its prompt, then its question over it). See [`Ready::will_ask`].
    pub still_asks: bool,
}

impl Ready {
    /// Ready once it runs (a shell; a program treebox knows no sign of).
    pub fn started() -> Ready {
        Ready {
            sign: Sign::Started,
            asks: Vec::new(),
            still_asks: false,
        }
    }

    /// The program will ask a person something before it takes work. A reported sign
    /// comes only after that question is answered (Claude Code's `SessionStart`), so
    /// only a sign on the screen leaves it [`Ready::still_asks`].
    pub fn will_ask(&mut self) {
        self.still_asks = !matches!(self.sign, Sign::Reported { .. });
    }
}

/// The sign of a program at its prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sign {
    /// Running is ready.
    Started,
    /// The agent reported it is up (touched `path` since it started: Claude Code's
    /// `SessionStart` hook does, through the writer's `up`), or its screen shows all
    /// of `shows` (its prompt, which Claude Code draws before it runs that hook; its
    /// dialogs come before the prompt, never over it, so once is enough). Either
    /// comes only after any question it asks a person is answered.
    Reported { path: PathBuf, shows: Vec<String> },
    /// Its screen shows all of these, twice in a row (a dialog drawn over the prompt a
    /// moment later is seen).
    Shows(Vec<String>),
}

/// What [`Session::wait_ready`] saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    Ready,
    /// The program ended first: its exit code (128+signal) and last lines.
    Exited {
        code: i32,
        last: Vec<String>,
    },
    /// Its screen waits for a person: the words seen, and its last lines.
    Asks {
        what: String,
        last: Vec<String>,
    },
    /// Neither, within the limit: its screen's last lines (it may be waiting at a
    /// screen no one will answer).
    NotYet {
        last: Vec<String>,
    },
}

/// The size of the terminal this command runs in (columns, rows), else `$COLUMNS` and
/// `$LINES`, else 200×50: a session started detached is drawn at that size.
pub(super) fn terminal_size() -> (u16, u16) {
    for fd in [libc::STDOUT_FILENO, libc::STDERR_FILENO, libc::STDIN_FILENO] {
        // SAFETY: TIOCGWINSZ writes one winsize into the struct we own; a descriptor
        // that is no terminal fails with ENOTTY and writes nothing.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        if unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) } == 0
            && ws.ws_col > 0
            && ws.ws_row > 0
        {
            return (ws.ws_col, ws.ws_row);
        }
    }
    let var = |k: &str| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.trim().parse::<u16>().ok())
            .filter(|n| (10..=1000).contains(n))
    };
    (var("COLUMNS").unwrap_or(200), var("LINES").unwrap_or(50))
}
