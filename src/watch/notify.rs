//! When a box turns to need the user, and how to tell them (SPEC §10c).
//!
//! - [`event`]: the transitions that notify — an agent turning `waiting`, finishing a
//!   turn (`working` → `idle`: with permissions bypassed Claude rarely asks, and Codex
//!   never reports `waiting`), or exiting non-zero. A box seen for the first time
//!   notifies nothing (the dashboard just started).
//! - [`RateLimit`]: at most one notification per box per [`RateLimit::gap`].
//! - [`Channel`]: `notify-send` only with a local display (`DISPLAY` or
//!   `WAYLAND_DISPLAY` set, and neither `SSH_CONNECTION` nor `SSH_TTY`: over SSH it
//!   would reach the wrong desktop) and the program on PATH; otherwise the terminal's
//!   own notification escapes, OSC 9 and OSC 777, wrapped for tmux's passthrough when
//!   the dashboard runs inside the user's tmux. The bell rings either way.
//!
//! The text is the box's name, cleaned, with the escapes' separators removed: a box
//! cannot end the escape early or add to it. Pure, except [`Channel::detect`]'s look
//! at PATH and [`post`]. The CLI writes the escapes.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::Agent;
use crate::cmd::Cmd;

/// Why a box notifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Waiting,
    TurnEnded,
    Failed(i32),
}

impl Event {
    pub fn says(self) -> String {
        match self {
            Event::Waiting => "is waiting for you".into(),
            Event::TurnEnded => "finished its turn".into(),
            Event::Failed(code) => format!("exited {code}"),
        }
    }
}

/// What changed from `before` to `after` that the user should hear about.
pub fn event(before: Agent, after: Agent) -> Option<Event> {
    match (before, after) {
        (Agent::Waiting, Agent::Waiting) => None,
        (_, Agent::Waiting) => Some(Event::Waiting),
        (Agent::Working, Agent::Idle) => Some(Event::TurnEnded),
        (Agent::Exited(_), Agent::Exited(_)) => None,
        (_, Agent::Exited(code)) if code != 0 => Some(Event::Failed(code)),
        _ => None,
    }
}

/// At most one notification per box per gap.
#[derive(Debug)]
pub struct RateLimit {
    gap: Duration,
    last: HashMap<String, Instant>,
}

impl RateLimit {
    pub fn new(gap: Duration) -> RateLimit {
        RateLimit {
            gap,
            last: HashMap::new(),
        }
    }

    pub fn gap(&self) -> Duration {
        self.gap
    }

    /// May box `key` notify at `now` (and if so, it has)?
    pub fn allow(&mut self, key: &str, now: Instant) -> bool {
        if self.last.get(key).is_some_and(|t| now < *t + self.gap) {
            return false;
        }
        self.last.insert(key.to_string(), now);
        true
    }
}

/// How a notification reaches the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// The desktop's notifier (a local display).
    NotifySend,
    /// The terminal's escapes; inside tmux, wrapped for its passthrough.
    Escape { tmux: bool },
}

impl Channel {
    /// From the environment: `display` (DISPLAY or WAYLAND_DISPLAY set), `ssh`
    /// (SSH_CONNECTION or SSH_TTY set), `tmux` (TMUX set), and whether `notify-send`
    /// is on PATH.
    pub fn choose(display: bool, ssh: bool, tmux: bool, notify_send: bool) -> Channel {
        if display && !ssh && notify_send {
            Channel::NotifySend
        } else {
            Channel::Escape { tmux }
        }
    }

    /// [`Self::choose`] for this process.
    pub fn detect() -> Channel {
        let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
        let on_path = crate::cmd::on_path("notify-send");
        Channel::choose(
            set("DISPLAY") || set("WAYLAND_DISPLAY"),
            set("SSH_CONNECTION") || set("SSH_TTY"),
            set("TMUX"),
            on_path,
        )
    }
}

/// A box's text made fit for an escape's field: cleaned, and without `;` (OSC 777's
/// separator) or `\` (a string terminator's start once escaped).
fn field(s: &str) -> String {
    super::clean(s).replace([';', '\\'], " ")
}

/// The terminal's notification escapes for `title` / `body`: OSC 9 (iTerm2, kitty,
/// WezTerm, Windows Terminal) and OSC 777 (rxvt, foot, Ghostty, VTE), each ended by
/// BEL; inside tmux, each wrapped in tmux's DCS passthrough (its ESCs doubled), which
/// reaches the terminal only where the user's tmux allows passthrough.
pub fn escapes(title: &str, body: &str, tmux: bool) -> String {
    let (title, body) = (field(title), field(body));
    let seqs = [
        format!("\x1b]9;{title}: {body}\x07"),
        format!("\x1b]777;notify;{title};{body}\x07"),
    ];
    seqs.iter()
        .map(|s| {
            if tmux {
                format!("\x1bPtmux;{}\x1b\\", s.replace('\x1b', "\x1b\x1b"))
            } else {
                s.clone()
            }
        })
        .collect()
}

/// `notify-send` naming the box (the text passed as arguments, never through a shell).
pub fn notify_send(title: &str, body: &str) -> Cmd {
    Cmd::new("notify-send")
        .args(["--app-name=treebox", "--"])
        .arg(super::clean(title))
        .arg(super::clean(body))
}

/// Post a desktop notification with [`notify_send`], off the caller's thread: a
/// notifier that hangs (no session bus) holds nothing up, and its failure is nobody's.
pub fn post(title: &str, body: &str) {
    let cmd = notify_send(title, body);
    std::thread::spawn(move || {
        let _ = cmd.output();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifies_on_waiting_turn_end_and_failure_only() {
        assert_eq!(event(Agent::Working, Agent::Waiting), Some(Event::Waiting));
        assert_eq!(event(Agent::Idle, Agent::Waiting), Some(Event::Waiting));
        assert_eq!(event(Agent::Waiting, Agent::Waiting), None);
        assert_eq!(event(Agent::Working, Agent::Idle), Some(Event::TurnEnded));
        assert_eq!(event(Agent::Live, Agent::Idle), None);
        assert_eq!(
            event(Agent::Working, Agent::Exited(2)),
            Some(Event::Failed(2))
        );
        assert_eq!(event(Agent::Working, Agent::Exited(0)), None);
        assert_eq!(event(Agent::Exited(2), Agent::Exited(2)), None);
        assert_eq!(event(Agent::Idle, Agent::Working), None);
    }

    #[test]
    fn one_notification_per_box_per_gap() {
        let mut r = RateLimit::new(Duration::from_secs(30));
        let t = Instant::now();
        assert!(r.allow("a", t));
        assert!(!r.allow("a", t + Duration::from_secs(5)));
        assert!(r.allow("b", t + Duration::from_secs(5)));
        assert!(r.allow("a", t + Duration::from_secs(31)));
    }

    #[test]
    fn notify_send_only_with_a_local_display() {
        use Channel::*;
        assert_eq!(Channel::choose(true, false, false, true), NotifySend);
        assert_eq!(
            Channel::choose(true, true, false, true),
            Escape { tmux: false }
        );
        assert_eq!(
            Channel::choose(false, false, true, true),
            Escape { tmux: true }
        );
        assert_eq!(
            Channel::choose(true, false, false, false),
            Escape { tmux: false }
        );
    }

    #[test]
    fn escapes_carry_no_box_controls_and_pass_tmux_wrapped() {
        let e = escapes("treebox", "ev\u{1b}\\il;x\u{7}\u{9c} is waiting", false);
        let body = "ev u{1b} il x u{7} u{9c} is waiting";
        assert_eq!(
            e,
            format!("\x1b]9;treebox: {body}\x07\x1b]777;notify;treebox;{body}\x07")
        );
        let t = escapes("treebox", "a", true);
        assert!(
            t.starts_with("\x1bPtmux;\x1b\x1b]9;treebox: a\x07\x1b\\"),
            "{t:?}"
        );
        assert_eq!(t.matches("\x1bPtmux;").count(), 2);
    }
}
