//! A far box's ports reached from this machine: each forwarded on the machine's shared
//! connection from this machine's loopback (SPEC §7b).
//!
//! A port keeps its number here when it is free here; else (a box of this machine has
//! the same block, or the machine is this one under another account) it gets one the
//! kernel picks, remembered beside the connection's socket so the next `open` gives the
//! same URL. A forward lasts as long as the shared connection: while a terminal is
//! attached, or a connection through it is open, and a minute after.

use crate::config::Machine;

/// The most ports of one box forwarded: a block's own cap.
pub const MAX_PORTS: usize = 64;

/// Forward `ports` (a box's block as its machine reports it: only ports from 1024 are
/// taken, at most [`MAX_PORTS`]) of `m` to this machine's loopback; for each, its port
/// here, or why it is not forwarded.
pub fn block(m: &Machine, ports: &[u16]) -> Vec<(u16, Result<u16, String>)> {
    let memo = super::ssh::control_path(m).with_extension("forwards");
    let mut known = remembered(&memo);
    let done: Vec<(u16, Result<u16, String>)> = ports
        .iter()
        .copied()
        .filter(|p| *p >= 1024)
        .take(MAX_PORTS)
        .map(|there| (there, one(m, there, known.get(&there).copied())))
        .collect();
    for (there, here) in &done {
        if let Ok(here) = here {
            known.insert(*there, *here);
        }
    }
    // A note for the next `open`: lost, it only costs the same URL.
    if let Ok(text) = serde_json::to_vec(&known) {
        let _ = crate::state::atomic::write_unsynced(&memo, &text, 0o600);
    }
    done
}

/// The ports forwarded before under other numbers (there → here), as noted beside the
/// connection's socket; nothing when the note is missing, unreadable or not ours.
fn remembered(memo: &std::path::Path) -> std::collections::BTreeMap<u16, u16> {
    crate::untrusted::read_regular(memo, 64 << 10, crate::untrusted::Links::Refuse)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Forward `there`: under the number it had here before (`known`, still the shared
/// connection's own forward, or free again), else its own number when free here, else
/// one the kernel picks.
fn one(m: &Machine, there: u16, known: Option<u16>) -> Result<u16, String> {
    let mut why = String::new();
    for here in known.into_iter().chain([there]) {
        match super::ssh::forward(m, here, there) {
            Ok(()) => return Ok(here),
            Err(e) => why = e,
        }
    }
    let free = std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("{why}; no free port here: {e}"))?
        .port();
    super::ssh::forward(m, free, there).map(|()| free)
}
