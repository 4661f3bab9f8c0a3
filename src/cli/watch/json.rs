//! `docs/schema/watch.schema.json`: `git treebox watch --once --json` and
//! `git sandbox watch --once --json`, one snapshot of the dashboard's rows in its order
//! (needs-me first). Kept beside the dashboard rather than in [`crate::cli::json`]; the
//! same invariants hold (fields are the schema's properties, camelCase, tested strictly
//! in `tests/it/schema.rs`).

use serde::Serialize;

use crate::cli::json::{Document, V1};
use crate::watch::{needs, Row};

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WatchDocument<'a> {
    pub schema_version: V1,
    /// When the snapshot was taken, in seconds since the epoch.
    pub time: i64,
    pub boxes: Vec<WatchBox<'a>>,
    /// The machines of the config not asked this time; absent when every one answered.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub unreachable: &'a [crate::remote::listing::Unreached],
}

impl Document for WatchDocument<'_> {}

/// One row of a [`WatchDocument`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WatchBox<'a> {
    /// The repository's main checkout.
    pub repo: &'a str,
    pub name: &'a str,
    pub path: &'a str,
    pub branch: Option<&'a str>,
    pub placeholder: bool,
    /// `wt`, `clone`, `folder`, with `@docker` / `@podman`.
    #[serde(rename = "box")]
    pub kind: &'a str,
    pub git_mode: Option<&'a str>,
    pub runner: Option<&'a str>,
    pub harness: Option<&'a str>,
    /// `live` or `none`.
    pub session: &'static str,
    /// `working`, `waiting`, `idle`, `unknown`, `exited`, `live`, `none`.
    pub agent: &'static str,
    /// When the agent last reported, in seconds since the epoch.
    pub agent_time: Option<i64>,
    /// With `agent: exited`, its exit code (128+signal).
    pub exit_code: Option<i32>,
    pub created: Option<i64>,
    pub last_commit: Option<i64>,
    /// The first line of the last commit's message.
    pub subject: Option<&'a str>,
    /// Commits, added and deleted lines against the base (committed work only).
    pub commits: Option<usize>,
    pub additions: Option<usize>,
    pub deletions: Option<usize>,
    pub landed: Option<bool>,
    pub state: &'a str,
    /// `waiting`, `exited`, `idle-with-commits`, or `None`.
    pub needs_me: Option<&'static str>,
    /// The machine of the config the box is on; absent: this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<&'a str>,
    /// A box of a machine that cannot be asked now, as it last listed it; absent
    /// otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
    /// The box's block of ports, as in `list --json`.
    #[serde(flatten)]
    pub ports: crate::cli::json::BoxPorts<'a>,
}

impl<'a> WatchBox<'a> {
    pub fn of(r: &'a Row) -> WatchBox<'a> {
        WatchBox {
            repo: &r.repo,
            name: &r.name,
            path: &r.path,
            branch: r.branch.as_deref(),
            placeholder: r.placeholder,
            kind: &r.kind,
            git_mode: r.git_mode.as_deref(),
            runner: r.runner.as_deref(),
            harness: r.harness.as_deref(),
            session: if r.live { "live" } else { "none" },
            agent: r.agent.word(),
            agent_time: r.since,
            exit_code: match r.agent {
                crate::watch::Agent::Exited(c) => Some(c),
                _ => None,
            },
            created: r.created,
            last_commit: r.last_commit,
            subject: r.subject.as_deref(),
            commits: r.size.map(|s| s.commits),
            additions: r.size.map(|s| s.additions),
            deletions: r.size.map(|s| s.deletions),
            landed: r.landed,
            state: &r.state,
            needs_me: needs(r).map(|n| n.word()),
            machine: r.machine.as_deref(),
            stale: r.stale,
            ports: crate::cli::json::BoxPorts {
                ports: &r.ports,
                listening: r.listening.as_deref(),
                loopback_only: Some(r.loopback_only.as_slice()).filter(|l| !l.is_empty()),
                unknown: Some(r.unknown.as_slice()).filter(|l| !l.is_empty()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::tests::row;
    use crate::watch::Agent;

    /// `ports`, `listening` and `loopbackOnly` as `list --json` has them: absent without
    /// a block, `listening` absent when not read, `loopbackOnly` absent when empty.
    #[test]
    fn ports_appear_as_list_json_has_them() {
        let mut r = row("web", Agent::Idle);
        let v = serde_json::to_value(WatchBox::of(&r)).unwrap();
        for k in ["ports", "listening", "loopbackOnly"] {
            assert!(v.get(k).is_none(), "{k}: {v}");
        }
        r.ports = vec![20000, 20001, 20002];
        let v = serde_json::to_value(WatchBox::of(&r)).unwrap();
        assert_eq!(v["ports"], serde_json::json!([20000, 20001, 20002]));
        assert!(v.get("listening").is_none() && v.get("loopbackOnly").is_none());
        r.listening = Some(Vec::new());
        let v = serde_json::to_value(WatchBox::of(&r)).unwrap();
        assert_eq!(v["listening"], serde_json::json!([]));
        assert!(v.get("loopbackOnly").is_none(), "{v}");
        r.listening = Some(vec![20000]);
        r.loopback_only = vec![20001];
        let v = serde_json::to_value(WatchBox::of(&r)).unwrap();
        assert_eq!(v["listening"], serde_json::json!([20000]));
        assert_eq!(v["loopbackOnly"], serde_json::json!([20001]));
        assert!(v.get("unknown").is_none(), "{v}");
        r.unknown = vec![20002];
        let v = serde_json::to_value(WatchBox::of(&r)).unwrap();
        assert_eq!(v["unknown"], serde_json::json!([20002]));
    }
}
