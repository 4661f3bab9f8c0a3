//! Starting a box's agent detached and waiting until it is ready: what `create -d`,
//! `enter -d`, `git sandbox up -d`, `watch`'s `n` and the MCP server's `box_create` all
//! do, here once. The front ends only word what [`start`] saw.
//!
//! A session already running (another command started it) is joined, not started
//! again: [`Started::AlreadyRunning`]. Otherwise the program starts in a new session
//! and [`super::Session::wait_ready`] watches for its sign; one that waits at a screen
//! for a person (seen, or known before it started) is reported `waiting` on the box's
//! status channel by the host, which the agent's own hooks never report.

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::{Readiness, Ready, Session, SessionError};
use crate::cmd::Cmd;

/// How long a new agent may take to be ready before a start says it is not.
pub const READY_LIMIT: Duration = Duration::from_secs(45);

/// What [`start`] came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Started {
    /// The box's session was already running: it was left as it is (the program and
    /// arguments asked for were not used).
    AlreadyRunning,
    /// Started now, and what the wait saw.
    Now(Readiness),
}

/// Start `cmd` (the runner's launch, with a terminal) detached in the session of the
/// box whose marker is `marker`, and wait up to `limit` for it to be ready as `ready`
/// says. The wait's outcome is the caller's to word; `waiting` is already reported
/// when the agent sits at a screen for a person.
pub fn start(
    marker: &Path,
    cmd: &Cmd,
    ready: &Ready,
    limit: Duration,
) -> Result<Started, SessionError> {
    let session = Session::for_marker(marker)?;
    if session.exists() {
        return Ok(Started::AlreadyRunning);
    }
    let since = SystemTime::now();
    if let Err(e) = session.start(cmd) {
        // Another command started it a moment ago: that one stands.
        if matches!(e, SessionError::Tmux(_)) && session.exists() {
            return Ok(Started::AlreadyRunning);
        }
        return Err(e);
    }
    let seen = session.wait_ready(ready, since, limit);
    let waits = match &seen {
        Readiness::Ready => ready.still_asks,
        Readiness::Asks { .. } => true,
        Readiness::Exited { .. } | Readiness::NotYet { .. } => false,
    };
    if waits {
        report_waiting(marker);
    }
    Ok(Started::Now(seen))
}

/// Report `waiting` for the box whose session marker is `marker`, from the host: its
/// agent sits at a screen that waits for a person (a launch saw it, or knew it would),
/// which the agent's own hooks do not report. Written as the box's writer writes: a
/// new file (never opened through a link the box put there) renamed over `state`.
/// Best effort: a status dir this user may not write (a container box's, given to its
/// agent) keeps what the agent reported.
pub fn report_waiting(marker: &Path) {
    let state = crate::state::session::status_path(marker);
    let _ = crate::state::atomic::write_unsynced(&state, b"waiting\n", 0o644);
}
