//! The dashboard's engine room (`git treebox watch`, `git sandbox watch`; SPEC §10c).
//!
//! - [`Row`] and [`Agent`] are the pure model: one box as the dashboard shows it, built
//!   by the CLI from the same sources as `list` (the inventory and its cache, sessions,
//!   the status channel, the landed cache), plus the committed diff size
//!   ([`diffsize`], cached by box tip and base tip).
//! - [`needs`] and [`sort`] put the boxes that need the user first: waiting, exited,
//!   idle with work of its own.
//! - [`screen`] reads the selected box's screen from treebox's own tmux server
//!   (`capture-pane` without `-e`: text only; nothing runs in the box).
//! - A row can be a box on another machine of the config ([`Row::machine`]), as that
//!   machine's `list` answered, or as it last answered ([`Row::stale`]) when it cannot
//!   be asked now.
//! - [`changes`] watches the status channel (inotify) so a refresh re-reads only the
//!   boxes whose files moved; [`notify`] says when a box turns to need the user.
//!
//! Invariant: everything a box can write (its name, branch, last commit's subject,
//! screen text) is passed through [`clean`] before it is drawn: ratatui draws control
//! characters as they are. The model keeps the raw strings (JSON prints them as they
//! are, escaped by JSON).
//!
//! Called by `cli/watch` only. Never prints.

pub mod changes;
pub mod diffsize;
pub mod notify;
pub mod screen;

use crate::runner::oci::{AgentStatus, Reported};

/// What a box's agent is doing, as the dashboard shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Working,
    Waiting,
    Idle,
    /// A report the host would not take (junk, a symlink, a FIFO).
    Unknown,
    /// The session ended; the agent's exit code.
    Exited(i32),
    /// A live session that has reported nothing yet.
    Live,
    /// No session and no report.
    None,
}

impl Agent {
    /// From the status channel's last report, the session's end, and whether a session
    /// is live (what `list` reads: [`crate::cli::list`]'s agent view).
    pub fn of(status: Option<Reported>, exit: Option<i32>, live: bool) -> (Agent, Option<i64>) {
        match (status, exit) {
            (Some(r), _) => {
                let a = match r.status {
                    AgentStatus::Working => Agent::Working,
                    AgentStatus::Waiting => Agent::Waiting,
                    AgentStatus::Idle => Agent::Idle,
                    AgentStatus::Unknown => Agent::Unknown,
                };
                (a, Some(unix(r.at)))
            }
            (None, Some(code)) => (Agent::Exited(code), None),
            (None, None) if live => (Agent::Live, None),
            (None, None) => (Agent::None, None),
        }
    }

    /// The word JSON uses (`exitCode` carries an exit's code).
    pub fn word(self) -> &'static str {
        match self {
            Agent::Working => "working",
            Agent::Waiting => "waiting",
            Agent::Idle => "idle",
            Agent::Unknown => "unknown",
            Agent::Exited(_) => "exited",
            Agent::Live => "live",
            Agent::None => "none",
        }
    }
}

/// The committed work of a box against its base: commits and lines (`+120 −8`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Size {
    pub commits: usize,
    pub additions: usize,
    pub deletions: usize,
}

/// One box, as the dashboard shows it. Strings are raw (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The repository's main checkout (`git sandbox watch` groups by it).
    pub repo: String,
    pub name: String,
    pub path: String,
    pub branch: Option<String>,
    pub placeholder: bool,
    /// `wt`, `clone`, `folder`, with `@docker` / `@podman` in a container.
    pub kind: String,
    pub git_mode: Option<String>,
    pub runner: Option<String>,
    pub harness: Option<String>,
    pub live: bool,
    pub agent: Agent,
    /// When the agent made its last report (seconds since the epoch).
    pub since: Option<i64>,
    pub created: Option<i64>,
    pub last_commit: Option<i64>,
    /// The subject of the branch's last commit.
    pub subject: Option<String>,
    pub size: Option<Size>,
    pub landed: Option<bool>,
    /// `ok`, `landed`, `broken`, `missing`, … as `list` says.
    pub state: String,
    /// The machine of the config the box is on (`None`: this one); `path` is its path
    /// there.
    pub machine: Option<String>,
    /// A box of a machine that cannot be asked now, as that machine last listed it.
    pub stale: bool,
    /// The box's block of ports, for life (SPEC §7b); empty for a box without one.
    pub ports: Vec<u16>,
    /// The ports of the block listening now where this machine reaches them; `None`
    /// when the box has no block or that cannot be read (its container does not run).
    pub listening: Option<Vec<u16>>,
    /// A container box's ports listening on its own loopback alone, out of the
    /// published port's reach.
    pub loopback_only: Vec<u16>,
    /// Ports whose state cannot be told: not seen in a socket table longer than
    /// treebox reads.
    pub unknown: Vec<u16>,
}

/// Why a box needs the user, most urgent first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Need {
    /// The agent asks a question.
    Waiting,
    /// The agent ended.
    Exited,
    /// The agent finished its turn and the box holds work its base lacks.
    IdleWithCommits,
}

impl Need {
    pub fn word(self) -> &'static str {
        match self {
            Need::Waiting => "waiting",
            Need::Exited => "exited",
            Need::IdleWithCommits => "idle-with-commits",
        }
    }
}

/// Does `row` need the user, and why? Never for a stale row: what its agent did then
/// is no news now.
pub fn needs(row: &Row) -> Option<Need> {
    if row.stale {
        return None;
    }
    match row.agent {
        Agent::Waiting => Some(Need::Waiting),
        Agent::Exited(_) => Some(Need::Exited),
        Agent::Idle if row.size.is_some_and(|s| s.commits > 0) && row.landed != Some(true) => {
            Some(Need::IdleWithCommits)
        }
        _ => None,
    }
}

/// Needs-me order: waiting, exited, idle with commits, then the rest; within each,
/// the repository and the name.
pub fn sort(rows: &mut [Row]) {
    rows.sort_by(|a, b| (rank(a), &a.repo, &a.name).cmp(&(rank(b), &b.repo, &b.name)));
}

/// `git sandbox watch`'s order: grouped by repository, needs-me first within each.
pub fn sort_grouped(rows: &mut [Row]) {
    rows.sort_by(|a, b| (&a.repo, rank(a), &a.name).cmp(&(&b.repo, rank(b), &b.name)));
}

fn rank(r: &Row) -> u8 {
    needs(r).map_or(3, |n| n as u8)
}

/// What the pane says of a box's ports, in parts: `ports 20000 20001 20002`, then
/// `listening 20000` when some listen, then `20001! on its loopback only` when some
/// listen on a container's own loopback, out of reach (`list`'s `!`), then `20002?
/// cannot be told` for those not seen in a socket table read in part (`list`'s `?`).
/// Empty for a box without ports.
pub fn ports_parts(row: &Row) -> Vec<String> {
    if row.ports.is_empty() {
        return Vec::new();
    }
    let words = |ps: &[u16], mark: &str| {
        ps.iter()
            .map(|p| format!("{p}{mark}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut parts = vec![format!("ports {}", words(&row.ports, ""))];
    if let Some(l) = row.listening.as_deref().filter(|l| !l.is_empty()) {
        parts.push(format!("listening {}", words(l, "")));
    }
    if !row.loopback_only.is_empty() {
        parts.push(format!(
            "{} on its loopback only",
            words(&row.loopback_only, "!")
        ));
    }
    if !row.unknown.is_empty() {
        parts.push(format!("{} cannot be told", words(&row.unknown, "?")));
    }
    parts
}

/// Text a box wrote, safe to draw: every control character (C0, C1 — U+009B is a
/// CSI — DEL, newlines) and every bidirectional control (U+202A–U+202E,
/// U+2066–U+2069, …) shown escaped ([`crate::sanitize::line`]).
pub fn clean(s: &str) -> String {
    crate::sanitize::line(s)
}

/// Seconds since the epoch.
pub fn unix(t: std::time::SystemTime) -> i64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn row(name: &str, agent: Agent) -> Row {
        Row {
            repo: "/r".into(),
            name: name.into(),
            path: format!("/r/.treebox/worktrees/{name}"),
            branch: Some(name.into()),
            placeholder: false,
            kind: "wt".into(),
            git_mode: Some("worktree".into()),
            runner: Some("host".into()),
            harness: Some("claude".into()),
            live: true,
            agent,
            since: None,
            created: None,
            last_commit: None,
            subject: None,
            size: None,
            landed: None,
            state: "ok".into(),
            machine: None,
            stale: false,
            ports: Vec::new(),
            listening: None,
            loopback_only: Vec::new(),
            unknown: Vec::new(),
        }
    }

    #[test]
    fn needs_me_first_in_order() {
        let mut idle_work = row("c-idle-work", Agent::Idle);
        idle_work.size = Some(Size {
            commits: 2,
            additions: 10,
            deletions: 1,
        });
        let mut idle_landed = idle_work.clone();
        idle_landed.name = "b-idle-landed".into();
        idle_landed.landed = Some(true);
        let mut rows = vec![
            row("a-working", Agent::Working),
            idle_landed,
            idle_work,
            row("z-exited", Agent::Exited(1)),
            row("y-waiting", Agent::Waiting),
            row("d-idle", Agent::Idle),
        ];
        sort(&mut rows);
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "y-waiting",
                "z-exited",
                "c-idle-work",
                "a-working",
                "b-idle-landed",
                "d-idle"
            ]
        );
        assert_eq!(needs(&rows[2]), Some(Need::IdleWithCommits));
        assert_eq!(needs(&rows[4]), None);
        // What a machine that cannot be asked last said needs no one now.
        let mut stale = row("far", Agent::Waiting);
        stale.machine = Some("big".into());
        assert_eq!(needs(&stale), Some(Need::Waiting));
        stale.stale = true;
        assert_eq!(needs(&stale), None);
    }

    #[test]
    fn grouped_by_repository_needs_me_first_within() {
        let mut rows = vec![
            row("b", Agent::Working),
            row("a", Agent::Waiting),
            row("c", Agent::Waiting),
        ];
        rows[2].repo = "/q".into();
        rows[0].repo = "/q".into();
        sort_grouped(&mut rows);
        let seen: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r.repo.as_str(), r.name.as_str()))
            .collect();
        assert_eq!(seen, [("/q", "c"), ("/q", "b"), ("/r", "a")]);
    }

    #[test]
    fn clean_escapes_c0_c1_and_bidi() {
        for (hostile, shown) in [
            ("a\u{1b}]0;pwned\u{7}b", "a\\u{1b}]0;pwned\\u{7}b"),
            ("x\u{9b}31m", "x\\u{9b}31m"),
            ("\u{85}\u{9d}", "\\u{85}\\u{9d}"),
            ("fix\u{202e}gnp.exe", "fix\\u{202e}gnp.exe"),
            (
                "\u{202a}\u{202b}\u{202c}\u{202d}",
                "\\u{202a}\\u{202b}\\u{202c}\\u{202d}",
            ),
            (
                "\u{2066}a\u{2067}\u{2068}\u{2069}",
                "\\u{2066}a\\u{2067}\\u{2068}\\u{2069}",
            ),
            ("tab\there\r\n", "tab\\there\\r\\n"),
            ("del\u{7f}", "del\\u{7f}"),
            ("fix/ünïcode-✓", "fix/ünïcode-✓"),
        ] {
            let c = clean(hostile);
            assert_eq!(c, shown);
            assert!(!c.chars().any(|ch| ch.is_control()), "{c:?}");
        }
    }

    #[test]
    fn ports_in_parts() {
        let mut r = row("web", Agent::Idle);
        assert!(ports_parts(&r).is_empty());
        r.listening = Some(vec![20000]);
        assert!(ports_parts(&r).is_empty(), "no block, no line");
        r.ports = vec![20000, 20001, 20002];
        r.listening = None;
        assert_eq!(ports_parts(&r), ["ports 20000 20001 20002"]);
        r.listening = Some(Vec::new());
        assert_eq!(ports_parts(&r), ["ports 20000 20001 20002"]);
        r.listening = Some(vec![20000, 20002]);
        r.loopback_only = vec![20001];
        assert_eq!(
            ports_parts(&r),
            [
                "ports 20000 20001 20002",
                "listening 20000 20002",
                "20001! on its loopback only"
            ]
        );
        r.listening = Some(Vec::new());
        assert_eq!(
            ports_parts(&r),
            ["ports 20000 20001 20002", "20001! on its loopback only"]
        );
        r.loopback_only = Vec::new();
        r.unknown = vec![20001, 20002];
        assert_eq!(
            ports_parts(&r),
            ["ports 20000 20001 20002", "20001? 20002? cannot be told"]
        );
    }

    #[test]
    fn agent_from_what_list_reads() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(100);
        let r = Reported {
            status: AgentStatus::Waiting,
            at,
        };
        assert_eq!(Agent::of(Some(r), None, true), (Agent::Waiting, Some(100)));
        assert_eq!(Agent::of(None, Some(2), false), (Agent::Exited(2), None));
        assert_eq!(Agent::of(None, None, true), (Agent::Live, None));
        assert_eq!(Agent::of(None, None, false), (Agent::None, None));
    }
}
