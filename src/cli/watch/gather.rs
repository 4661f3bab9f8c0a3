//! One snapshot of a repository's boxes for the dashboard, from the same sources as
//! `list` ([`crate::maintain::summary::list`] and its cache, sessions, the status
//! channel, the landed cache) plus each box's committed work
//! ([`crate::watch::diffsize`], kept by commit ids). No subprocess is started.

use crate::boxes::{self, BoxEntry};
use crate::git::Repo;
use crate::maintain::summary::{self, Facts};
use crate::names::is_placeholder_branch;
use crate::state::{session, Layout};
use crate::watch::{Agent, Row};

/// Every box of `repo`, unsorted, and their inventory entries in the same order.
pub fn rows(repo: &Repo, layout: &Layout) -> (Vec<Row>, Vec<BoxEntry>) {
    let listed = summary::list(repo, layout);
    let repo_path = repo.main_root.to_string_lossy().into_owned();
    let mut rows: Vec<Row> =
        boxes::par::map(&listed, || (), |(), (e, f)| row(e, f, layout, &repo_path));
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

/// What is read fresh for one box every time (its session, the agent's report), on
/// top of the facts `list` keeps.
pub fn row(e: &BoxEntry, facts: &Facts, layout: &Layout, repo: &str) -> Row {
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
    }
}

/// Read `row`'s agent again (its session and its last report), nothing else: what a
/// change on the status channel can have moved.
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
