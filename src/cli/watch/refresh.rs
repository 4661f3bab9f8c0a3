//! The refresher thread: what the screen shows, kept current without reading every
//! box all the time.
//!
//! - A full snapshot ([`super::snapshot`]: what `list` reads, through the same cache,
//!   so boxes whose files did not change are not read again) at least every [`TICK`]:
//!   commits and exits do not touch the status channel.
//! - Between them, the status channel's changes from the kernel
//!   ([`crate::watch::changes`]): only the boxes whose status or session files moved
//!   have their agent re-read, each at most once per [`DEBOUNCE`].
//! - The selected box's details (its screen, uncommitted changes, recent commits),
//!   for that box alone, after every full snapshot and when the selection moves.
//! - The config's machines' boxes ([`super::far_snapshot`]) from a thread of their own
//!   every [`FAR_TICK`] (and on `r`): a machine that is slow to answer holds up its
//!   own rows, within the listing's deadline, never this thread or the screen. Each
//!   snapshot shows the machines' rows as last gathered.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::app::{key_of, Details};
use super::live::{open, Msg};
use super::Scope;
use crate::state::Layout;
use crate::watch::changes::{Changes, Debounce};
use crate::watch::Row;

/// The longest a commit or an exit may wait to show.
pub const TICK: Duration = Duration::from_millis(1500);

/// A box's status is re-read at most this often, however fast it writes.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// How often the thread looks for the screen's requests while it waits.
const POLL: Duration = Duration::from_millis(50);

/// How often the config's machines are asked again (each ask starts a treebox there).
pub const FAR_TICK: Duration = Duration::from_secs(5);

/// How many of a box's screen lines the pane can show, at most.
const SCREEN_LINES: usize = 60;

/// What the screen asks of the refresher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// The selection moved: its details, now.
    Details,
    /// Everything, now (`r`, after an action).
    Full,
}

/// The machines' rows as last gathered, and a count of the gatherings.
#[derive(Default)]
struct Far {
    gathered: u64,
    rows: Vec<Row>,
    /// The machines not asked this time.
    unreached: Vec<String>,
}

/// Start the machines' thread (none without machines): it gathers their rows into
/// `far` every [`FAR_TICK`], and at once when nudged; it ends with the nudger.
fn spawn_far(
    far_scope: super::FarScope,
    machines: Vec<crate::config::Machine>,
    far: Arc<Mutex<Far>>,
) -> Option<Sender<()>> {
    if machines.is_empty() {
        return None;
    }
    let (nudge, nudged) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || loop {
        let got = super::far_snapshot(&far_scope, &machines, false);
        {
            let mut f = far.lock().expect("never poisoned");
            f.gathered += 1;
            f.rows = got.rows;
            f.unreached = got.unreached.into_iter().map(|u| u.machine).collect();
        }
        match nudged.recv_timeout(FAR_TICK) {
            Ok(()) => while nudged.try_recv().is_ok() {},
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
        }
    });
    Some(nudge)
}

/// Start the refresher; it ends when the screen's receiver is gone.
pub fn spawn(
    scope: Scope,
    machines: Vec<crate::config::Machine>,
    tx: Sender<Msg>,
    wake: Receiver<Wake>,
    selected: Arc<Mutex<Option<String>>>,
    tmux: bool,
) {
    std::thread::spawn(move || {
        let far = Arc::new(Mutex::new(Far::default()));
        let nudge = spawn_far(scope.far(), machines, far.clone());
        let mut r = Refresher {
            scope,
            tx,
            selected,
            tmux,
            changes: Changes::new(),
            debounce: Debounce::new(DEBOUNCE),
            rows: Vec::new(),
            layouts: HashMap::new(),
            far,
            far_seen: 0,
            far_rows: Vec::new(),
        };
        let mut full_at = Instant::now();
        let mut details = true;
        loop {
            if Instant::now() >= full_at {
                if !r.full() {
                    return;
                }
                full_at = Instant::now() + TICK;
                details = true;
            }
            if details {
                if !r.details() {
                    return;
                }
                details = false;
            }
            let now = Instant::now();
            let limit = r
                .debounce
                .next_in(now)
                .unwrap_or(TICK)
                .min(full_at.saturating_duration_since(now))
                .min(POLL);
            let changed = match r.changes.as_mut() {
                Some(c) => c.wait(limit),
                None => {
                    std::thread::sleep(limit);
                    Vec::new()
                }
            };
            loop {
                match wake.try_recv() {
                    Ok(Wake::Details) => details = true,
                    Ok(Wake::Full) => {
                        full_at = Instant::now();
                        if let Some(n) = &nudge {
                            let _ = n.send(());
                        }
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return,
                }
            }
            if !r.far_news() {
                return;
            }
            let ready = r.debounce.changed(changed, Instant::now());
            if !ready.is_empty() {
                match r.agents(&ready) {
                    None => return,
                    Some(selected_changed) => details |= selected_changed,
                }
            }
        }
    });
}

struct Refresher {
    scope: Scope,
    tx: Sender<Msg>,
    selected: Arc<Mutex<Option<String>>>,
    tmux: bool,
    changes: Option<Changes>,
    debounce: Debounce,
    rows: Vec<Row>,
    /// Each repository's layout, by its path.
    layouts: HashMap<String, Layout>,
    /// What the machines' thread gathered, how many gatherings were taken, and the
    /// rows of the last one taken.
    far: Arc<Mutex<Far>>,
    far_seen: u64,
    far_rows: Vec<Row>,
}

impl Refresher {
    fn layout(&mut self, repo: &str) -> Option<Layout> {
        if !self.layouts.contains_key(repo) {
            let (_, layout) = open(repo).ok()?;
            self.layouts.insert(repo.to_string(), layout);
        }
        self.layouts.get(repo).cloned()
    }

    /// The machines' rows, when their thread gathered them anew since last looked:
    /// shown with this machine's; false once the screen is gone.
    fn far_news(&mut self) -> bool {
        let (rows, unreached) = {
            let f = self.far.lock().expect("never poisoned");
            if f.gathered == self.far_seen {
                return true;
            }
            self.far_seen = f.gathered;
            (f.rows.clone(), f.unreached.clone())
        };
        self.far_rows = rows;
        let mut all: Vec<Row> = std::mem::take(&mut self.rows)
            .into_iter()
            .filter(|r| r.machine.is_none())
            .chain(self.far_rows.iter().cloned())
            .collect();
        self.scope.sort(&mut all);
        self.rows = all;
        self.tx.send(Msg::Unreached(unreached)).is_ok()
            && self.tx.send(Msg::Rows(self.rows.clone())).is_ok()
    }

    /// A full snapshot; false once the screen is gone.
    fn full(&mut self) -> bool {
        let mut rows = match super::snapshot(&self.scope, false) {
            Ok(r) => r,
            Err(e) => {
                let _ = self.tx.send(Msg::Trouble(super::actions::line(&e)));
                Vec::new()
            }
        };
        rows.extend(self.far_rows.iter().cloned());
        self.scope.sort(&mut rows);
        self.rows = rows;
        if self.changes.is_some() {
            // This machine's boxes: the machines' have no files here.
            let boxes: Vec<(String, String, String)> = self
                .rows
                .iter()
                .filter(|r| r.machine.is_none())
                .map(|r| (r.repo.clone(), r.name.clone(), key_of(r)))
                .collect();
            for (repo, name, key) in boxes {
                let (Some(layout), Ok(leaf)) =
                    (self.layout(&repo), crate::names::Leaf::parse(&name))
                else {
                    continue;
                };
                let c = self.changes.as_mut().expect("checked above");
                c.watch(&layout.status_dir(&leaf), &key);
                c.watch(&layout.box_state(&leaf), &key);
            }
        }
        self.tx.send(Msg::Rows(self.rows.clone())).is_ok()
    }

    /// Re-read the agents of the boxes `keys` names; whether the selected one was
    /// among them (`None` once the screen is gone).
    fn agents(&mut self, keys: &[String]) -> Option<bool> {
        let mut rows = std::mem::take(&mut self.rows);
        for row in rows
            .iter_mut()
            .filter(|r| r.machine.is_none() && keys.contains(&key_of(r)))
        {
            if let Some(layout) = self.layout(&row.repo) {
                super::gather::agent(row, &layout);
            }
        }
        self.scope.sort(&mut rows);
        self.rows = rows;
        self.tx.send(Msg::Rows(self.rows.clone())).ok()?;
        let selected = self.selected.lock().expect("never poisoned").clone();
        Some(selected.is_some_and(|s| keys.contains(&s)))
    }

    /// The selected box's details (and which of its ports listen, read for it alone:
    /// a socket table costs milliseconds); false once the screen is gone.
    fn details(&mut self) -> bool {
        let key = self.selected.lock().expect("never poisoned").clone();
        let at = key
            .as_ref()
            .and_then(|k| self.rows.iter().position(|r| &key_of(r) == k))
            .or((!self.rows.is_empty()).then_some(0));
        let Some(at) = at else {
            return true;
        };
        let before = self.rows[at].listening.clone();
        if let Some(layout) = self.layout(&self.rows[at].repo.clone()) {
            super::gather::listening(&mut self.rows[at], &layout);
        }
        if self.rows[at].listening != before && self.tx.send(Msg::Rows(self.rows.clone())).is_err()
        {
            return false;
        }
        self.tx
            .send(Msg::Details(details(&self.rows[at], self.tmux)))
            .is_ok()
    }
}

/// What the pane shows of `row`: its screen (from treebox's tmux server), and what it
/// changed since its base, committed and not.
pub fn details(row: &Row, tmux: bool) -> Details {
    let mut d = Details {
        key: key_of(row),
        ..Details::default()
    };
    if let Some(m) = &row.machine {
        d.error = Some(format!(
            "on machine `{}`: its screen and changes are not shown here yet",
            crate::watch::clean(m)
        ));
        return d;
    }
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
