//! Telling the user a box needs them while the dashboard runs: the bell, and the
//! desktop's notifier or the terminal's notification escapes
//! ([`crate::watch::notify`] decides which, and when). Off with `--no-notify` or
//! `"notify": false` in the config.

use std::io::Write;
use std::time::{Duration, Instant};

use super::app::key_of;
use crate::watch::notify::{escapes, event, post, Channel, RateLimit};
use crate::watch::Row;

/// At most one notification per box this often.
pub const GAP: Duration = Duration::from_secs(30);

pub struct Bell {
    on: bool,
    channel: Channel,
    limit: RateLimit,
}

impl Bell {
    pub fn new(on: bool) -> Bell {
        Bell {
            on,
            channel: Channel::detect(),
            limit: RateLimit::new(GAP),
        }
    }

    /// Compare the rows shown (`before`) with a new snapshot and notify what turned.
    pub fn ring(&mut self, before: &[Row], after: &[Row]) {
        if !self.on || before.is_empty() {
            return;
        }
        let now = Instant::now();
        let mut out = String::new();
        for r in after {
            let key = key_of(r);
            let Some(old) = before.iter().find(|b| key_of(b) == key) else {
                continue; // a box seen for the first time says nothing
            };
            let Some(e) = event(old.agent, r.agent) else {
                continue;
            };
            if !self.limit.allow(&key, now) {
                continue;
            }
            let body = format!("{} {}", r.name, e.says());
            out.push('\x07');
            match self.channel {
                Channel::NotifySend => post("treebox", &body),
                Channel::Escape { tmux } => out.push_str(&escapes("treebox", &body, tmux)),
            }
        }
        if !out.is_empty() {
            let mut stdout = std::io::stdout();
            let _ = stdout.write_all(out.as_bytes());
            let _ = stdout.flush();
        }
    }
}
