//! The refresher thread: a snapshot of the rows at least every [`TICK`] (commits and
//! exits do not touch the status channel), at once when woken (a key asked, the
//! selection moved), and the selected box's details (its screen, uncommitted changes
//! and recent commits: read for that box alone).
//!
//! A full snapshot reads what `list` reads, through the same cache: boxes whose files
//! did not change are not read again.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::app::Details;
use super::live::{open, Msg};
use super::Scope;
use crate::watch::Row;

/// The longest a change may wait to show.
pub const TICK: Duration = Duration::from_millis(1500);

/// How many of a box's screen lines the pane can show, at most.
const SCREEN_LINES: usize = 60;

/// Start the refresher; it ends when the screen's receiver is gone.
pub fn spawn(
    scope: Scope,
    tx: Sender<Msg>,
    wake: Receiver<()>,
    selected: Arc<Mutex<Option<String>>>,
    tmux: bool,
) {
    std::thread::spawn(move || loop {
        let rows = match super::snapshot(&scope) {
            Ok(r) => r,
            Err(e) => {
                let _ = tx.send(Msg::Done(super::actions::line(&e), true));
                Vec::new()
            }
        };
        let key = selected
            .lock()
            .expect("the selection lock is never poisoned")
            .clone();
        let row = key
            .as_ref()
            .and_then(|k| rows.iter().find(|r| &super::app::key_of(r) == k))
            .or(rows.first())
            .cloned();
        if tx.send(Msg::Rows(rows)).is_err() {
            return;
        }
        if let Some(row) = row {
            if tx.send(Msg::Details(details(&row, tmux))).is_err() {
                return;
            }
        }
        match wake.recv_timeout(TICK) {
            Ok(()) | Err(RecvTimeoutError::Timeout) => {
                // Several wakes at once are one refresh.
                while wake.try_recv().is_ok() {}
            }
            Err(RecvTimeoutError::Disconnected) => return,
        }
    });
}

/// What the pane shows of `row`: its screen (from treebox's tmux server), and what it
/// changed since its base, committed and not.
pub fn details(row: &Row, tmux: bool) -> Details {
    let mut d = Details {
        key: super::app::key_of(row),
        ..Details::default()
    };
    let Ok((repo, layout)) = open(&row.repo) else {
        d.error = Some("its repository cannot be read".into());
        return d;
    };
    let Ok(leaf) = crate::names::Leaf::parse(&row.name) else {
        return d;
    };
    if tmux {
        d.screen = crate::watch::screen::last_lines(&layout, &leaf, SCREEN_LINES);
    }
    let Some(entry) = crate::boxes::exact(&repo, &layout, leaf.as_str()) else {
        return d;
    };
    match crate::land::diff::diff(&entry, &repo, false) {
        Ok(diff) => {
            d.uncommitted = diff.worktree_read.then_some(diff.uncommitted);
            d.commits = diff.commits.iter().map(|c| c.subject.clone()).collect();
            d.files = diff
                .files
                .iter()
                .map(|f| (f.path.clone(), f.additions, f.deletions))
                .collect();
        }
        Err(e) => d.error = Some(crate::sanitize::chain(&e)),
    }
    d
}
