//! One snapshot of a repository's boxes for the dashboard, from the same sources as
//! `list` ([`crate::maintain::summary::list`] and its cache, sessions, the status
//! channel, the landed cache) plus each box's committed work
//! ([`crate::watch::diffsize`], kept by commit ids), and each box's ports (which of
//! them listen, only when asked: `runner::ports_now`). No subprocess is started.

use crate::boxes::{self, BoxEntry};
use crate::git::Repo;
use crate::maintain::summary::{self, Facts};
use crate::names::is_placeholder_branch;
use crate::state::{session, Layout};
use crate::watch::{Agent, Row};

/// This machine's listeners, read at most once for all the host boxes of one snapshot
/// (however many repositories it covers).
pub type Here = std::sync::OnceLock<Option<crate::ports::listen::Listening>>;

/// Every box of `repo`, unsorted, and their inventory entries in the same order.
pub fn rows(repo: &Repo, layout: &Layout, here: Option<&Here>) -> (Vec<Row>, Vec<BoxEntry>) {
    let listed = summary::list(repo, layout);
    let repo_path = repo.main_root.to_string_lossy().into_owned();
    let mut rows: Vec<Row> = boxes::par::map(
        &listed,
        || (),
        |(), (e, f)| row(e, f, layout, &repo_path, here),
    );
    let entries: Vec<BoxEntry> = listed.into_iter().map(|(e, _)| e).collect();
    // Each tip read once, for the landed answers and the diff sizes alike.
    let tips: Vec<_> = entries
        .iter()
        .map(|e| crate::land::landed::tip_of(e, repo))
        .collect();
    let landed = crate::land::landed::landed_all_at(&entries, &tips, repo, layout);
    let work = crate::watch::diffsize::work_all(&entries, &tips, repo, layout);
    for ((r, l), w) in rows.iter_mut().zip(landed).zip(work) {
        if r.state == "ok" && l == Some(true) {
            r.state = "landed".into();
        }
        r.landed = l;
        if let Some(w) = w {
            r.size = Some(w.size);
            r.subject = Some(w.subject);
        }
    }
    (rows, entries)
}

/// What is read fresh for one box every time (its session, the agent's report, which
/// of its ports listen), on top of the facts `list` keeps.
pub fn row(e: &BoxEntry, facts: &Facts, layout: &Layout, repo: &str, here: Option<&Here>) -> Row {
    let (live, view) = crate::cli::list::session_view(layout, &e.leaf, facts.sessioned);
    let (agent, since) = Agent::of(view.status, view.exit, live);
    let branch = e.shown_branch().map(str::to_string);
    let state = if e.record_error.is_some() {
        "bad-record"
    } else if !e.dir_exists {
        "missing"
    } else if e.record.is_none() {
        "no-record"
    } else if facts.broken {
        "broken"
    } else {
        "ok"
    };
    let now = e
        .record
        .as_ref()
        .zip(here)
        .and_then(|(r, here)| crate::runner::ports_now(r, here));
    let (listening, loopback_only, unknown) = seen(now);
    Row {
        repo: repo.to_string(),
        name: e.leaf.to_string(),
        path: e.path.to_string_lossy().into_owned(),
        placeholder: branch.as_deref().is_some_and(is_placeholder_branch),
        branch,
        kind: crate::cli::list::kind(e.record.as_ref()),
        git_mode: e.record.as_ref().map(|r| r.git_mode.to_string()),
        runner: e.record.as_ref().map(|r| r.runner.to_string()),
        harness: e.record.as_ref().map(|r| r.harness.to_string()),
        live,
        agent,
        since,
        created: e
            .record
            .as_ref()
            .and_then(|r| i64::try_from(r.created_at).ok()),
        last_commit: facts.last_commit,
        subject: None,
        size: None,
        landed: None,
        state: state.into(),
        machine: None,
        stale: false,
        ports: e
            .record
            .as_ref()
            .map(|r| r.ports.clone())
            .unwrap_or_default(),
        listening,
        loopback_only,
        unknown,
    }
}

/// A box on another machine as a row: its `list --json` entry there (hostile data:
/// every field checked or dropped), `repo` this machine's repository it belongs to.
/// Its diff size and subject are not read from here.
pub fn far_row(machine: String, repo: String, b: &serde_json::Value) -> Row {
    let (live, view) = crate::cli::list::view_of(b);
    let (agent, since) = Agent::of(view.status, view.exit, live);
    let text = |k: &str| b[k].as_str().map(str::to_string);
    let (git_mode, runner) = crate::cli::list::modes_of(b);
    let harness = b["harness"]
        .as_str()
        .and_then(|h| h.parse::<crate::harness::Harness>().ok());
    let landed = b["landed"].as_bool();
    // In the dashboard's words: `unregistered` is `list`'s alone; a word no treebox of
    // this protocol says is a record that cannot be read.
    let state = match b["state"].as_str() {
        Some(s @ ("ok" | "landed" | "missing" | "no-record" | "bad-record" | "broken")) => s,
        Some("unregistered") => "ok",
        _ => "bad-record",
    };
    let (ports, now) = crate::remote::listing::far_ports(b);
    let (listening, loopback_only, unknown) = seen(now);
    Row {
        repo,
        name: text("name").unwrap_or_default(),
        path: text("path").unwrap_or_default(),
        branch: text("branch"),
        placeholder: b["placeholder"] == true,
        kind: match (git_mode, runner) {
            (Some(m), Some(r)) => crate::cli::list::kind_of(m, r),
            _ => "-".into(),
        },
        git_mode: git_mode.map(|m| m.to_string()),
        runner: runner.map(|r| r.to_string()),
        harness: harness.map(|h| h.to_string()),
        live,
        agent,
        since,
        created: None,
        last_commit: b["lastCommit"].as_i64(),
        subject: None,
        size: None,
        landed,
        state: state.into(),
        stale: b["stale"] == true,
        machine: Some(machine),
        ports,
        listening,
        loopback_only,
        unknown,
    }
}

/// Read `row`'s agent again (its session and its last report), nothing else: what a
/// change on the status channel can have moved.
/// Which of `row`'s ports listen now (a box of this machine with a block): read for the
/// selected box alone, as its pane shows them.
pub fn listening(row: &mut Row, layout: &Layout) {
    let Ok(leaf) = crate::names::Leaf::parse(&row.name) else {
        return;
    };
    if row.machine.is_some() || row.ports.is_empty() {
        return;
    }
    let Ok(Some(record)) = crate::state::Record::load(&layout.record_path(&leaf)) else {
        return;
    };
    let now = crate::runner::ports_now(&record, &std::sync::OnceLock::new());
    (row.listening, row.loopback_only, row.unknown) = seen(now);
}

/// A row's three port fields from what listens now (`None`: not read).
fn seen(now: Option<crate::runner::PortsNow>) -> (Option<Vec<u16>>, Vec<u16>, Vec<u16>) {
    match now {
        Some(n) => (Some(n.listening), n.loopback_only, n.unknown),
        None => (None, Vec::new(), Vec::new()),
    }
}

pub fn agent(row: &mut Row, layout: &Layout) {
    let Ok(leaf) = crate::names::Leaf::parse(&row.name) else {
        return;
    };
    let live = session::is_live(&layout.session_path(&leaf));
    let view = crate::cli::list::agent_view(layout, &leaf, live);
    let (agent, since) = Agent::of(view.status, view.exit, live);
    row.live = live;
    row.agent = agent;
    row.since = since;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Another machine's ports are hostile data: port numbers alone, each once, at
    /// most 64; listening ones only from the block; none at all without a block.
    #[test]
    fn a_far_box_s_ports_are_read_leniently() {
        let b = json!({
            "name": "web",
            "ports": [20000, "20001", 0, 70000, -1, 20002, 20000, null, 1.5],
            "listening": [20000, 9999, "x", 20000],
            "loopbackOnly": [20002, 22],
        });
        let r = far_row("big".into(), "/r".into(), &b);
        assert_eq!(r.ports, [20000, 20002]);
        assert_eq!(r.listening, Some(vec![20000]));
        assert_eq!(r.loopback_only, [20002]);

        // No `listening`: not read there (a container that does not run).
        let r = far_row("big".into(), "/r".into(), &json!({"ports": [20000]}));
        assert_eq!((r.ports, r.listening), (vec![20000], None));
        // Listening, but no block: nothing.
        for b in [
            json!({"listening": [20000], "loopbackOnly": [20000]}),
            json!({"ports": "20000", "listening": [20000]}),
            json!({"ports": [], "listening": []}),
        ] {
            let r = far_row("big".into(), "/r".into(), &b);
            assert!(r.ports.is_empty() && r.listening.is_none(), "{b}");
            assert!(r.loopback_only.is_empty(), "{b}");
        }
        // At most 64 read, however many it sends.
        let many: Vec<u32> = (1000..1200).collect();
        let r = far_row(
            "big".into(),
            "/r".into(),
            &json!({"ports": many, "listening": many}),
        );
        assert_eq!(r.ports.len(), 64);
        assert_eq!(r.listening.map(|l| l.len()), Some(64));
    }
}
