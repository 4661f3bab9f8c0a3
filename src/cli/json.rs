//! The JSON documents the CLI prints in `--json` mode: one serde struct per published
//! schema in `docs/schema/` (SPEC §10).
//!
//! Invariants:
//! - Each struct's fields are its schema's properties, by the same (camelCase) names;
//!   a field added here must be added to the schema too (the strict schema tests in
//!   `tests/it/schema.rs` refuse undeclared fields).
//! - Every document starts its life as a [`serde_json::Value`] ([`Document::to_value`]),
//!   so its keys print sorted, exactly as the hand-built `json!` documents did.
//! - Commands that print the same shape share one struct: `create`, `git sandbox up`
//!   and `git sandbox run --json` print [`CreateDocument`]; `teardown` and
//!   `git sandbox down` print [`RemovedDocument`].
//!
//! Called by the subcommands in `src/cli/` (and by `Ui` for the error document); the
//! engine never sees these types.

use std::path::Path;

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::cmd::Cmd;
use crate::ecosystem::Ecosystem;
use crate::harness::Harness;
use crate::plan::Plan;
use crate::provision::copy::EnvOutcome;
use crate::vocab::{GitMode, RunnerKind};

/// A document that can be printed: serialised through a [`Value`] (sorted keys).
pub trait Document: Serialize {
    fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("documents have string keys and serialisable fields")
    }
}

/// Seconds since the epoch (JSON's `statusTime`; `list`'s ages).
pub(crate) fn unix_seconds(t: std::time::SystemTime) -> i64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// `schemaVersion`: every document is version 1 (documents only gain fields).
#[derive(Debug, Clone, Copy, Default)]
pub struct V1;

impl Serialize for V1 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(1)
    }
}

/// How the `.env` fared, as the `env` field of `create` and `enter` names it.
pub fn env_word(env: &EnvOutcome) -> &'static str {
    match env {
        EnvOutcome::Copied { .. } => "copied",
        EnvOutcome::Absent => "absent",
        EnvOutcome::Refused { .. } => "refused",
        EnvOutcome::Unchanged => "unchanged",
        EnvOutcome::KeptEdited { .. } => "kept",
    }
}

/// The command that starts (or would start) the harness in the box.
#[derive(Debug, Serialize)]
pub struct Launch {
    pub argv: Vec<String>,
    pub cwd: std::path::PathBuf,
    pub command: String,
}

impl From<&Cmd> for Launch {
    fn from(c: &Cmd) -> Self {
        Launch {
            argv: c.argv(),
            cwd: c.cwd.clone().unwrap_or_default(),
            command: c.to_string(),
        }
    }
}

/// `docs/schema/create.schema.json`: `create --json`, `git sandbox up --json`,
/// `git sandbox run --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateDocument<'a> {
    pub schema_version: V1,
    pub name: &'a str,
    pub branch: Option<&'a str>,
    pub placeholder: bool,
    pub path: &'a Path,
    pub repo: &'a Path,
    pub base: Option<&'a str>,
    pub base_ref: Option<&'a str>,
    pub base_commit: Option<&'a str>,
    pub git_mode: GitMode,
    pub runner: RunnerKind,
    pub harness: Harness,
    pub fetched: bool,
    pub resumed: bool,
    pub ecosystems: &'a [Ecosystem],
    pub lockfile_hash: Option<&'a str>,
    pub setup_completed: bool,
    pub setup: Vec<SetupStep<'a>>,
    pub submodules: usize,
    pub env: &'static str,
    pub launch: Launch,
    /// The build outputs the box started with; absent for a resumed box.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warm: Option<&'a crate::plan::Warming>,
    pub warnings: &'a [String],
}

impl Document for CreateDocument<'_> {}

/// One setup step of a [`CreateDocument`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetupStep<'a> {
    pub name: &'a str,
    pub command: &'a str,
    pub ok: bool,
    pub missing_tool: bool,
    pub seconds: f64,
}

impl<'a> CreateDocument<'a> {
    /// The document of a box `create` (or `git sandbox up`/`run`) provisioned.
    pub fn created(c: &'a crate::provision::Created, launch: &Cmd, warnings: &'a [String]) -> Self {
        let r = &c.record;
        CreateDocument {
            schema_version: V1,
            name: &r.name,
            branch: Some(&r.branch),
            placeholder: crate::names::is_placeholder_branch(&r.branch),
            path: &r.path,
            repo: &r.repo,
            base: Some(&r.base),
            base_ref: r.base_ref.as_deref(),
            base_commit: r.base_commit.as_deref(),
            git_mode: r.git_mode,
            runner: r.runner,
            harness: r.harness,
            fetched: c.fetched,
            resumed: c.resumed,
            ecosystems: &r.ecosystems,
            lockfile_hash: r.lockfile_hash.as_deref(),
            setup_completed: r.setup_completed,
            setup: c
                .setup
                .steps
                .iter()
                .map(|s| SetupStep {
                    name: &s.name,
                    command: &s.command,
                    ok: s.ok,
                    missing_tool: s.missing_tool,
                    seconds: s.duration.as_secs_f64(),
                })
                .collect(),
            submodules: c.submodules,
            env: env_word(&c.env),
            launch: Launch::from(launch),
            warm: r.warm.as_ref(),
            warnings,
        }
    }
}

/// `docs/schema/plan.schema.json`: `create --dry-run --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanDocument<'a> {
    pub schema_version: V1,
    /// Always `true`.
    pub dry_run: bool,
    #[serde(flatten)]
    pub plan: &'a Plan,
    pub warnings: &'a [String],
}

impl Document for PlanDocument<'_> {}

/// `docs/schema/enter.schema.json`: `enter --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnterDocument<'a> {
    pub schema_version: V1,
    pub name: &'a str,
    pub repo: &'a Path,
    pub branch: &'a str,
    pub placeholder: bool,
    pub path: &'a Path,
    pub git_mode: GitMode,
    pub runner: RunnerKind,
    pub harness: &'a str,
    pub finished_setup: bool,
    /// `unchanged` or `synced`.
    pub deps: &'static str,
    pub setup_completed: bool,
    pub env: &'static str,
    /// What became of each model key, by name: `kept` or `replaced`.
    pub keys: std::collections::BTreeMap<&'a str, &'static str>,
    pub launch: Launch,
    pub warnings: &'a [String],
}

impl Document for EnterDocument<'_> {}

/// [`EnterDocument::keys`] of what `enter` did with the keys.
pub fn keys_words(
    k: &crate::runner::oci::KeysOutcome,
) -> std::collections::BTreeMap<&str, &'static str> {
    let kept = k.kept.iter().map(|n| (n.as_str(), "kept"));
    kept.chain(k.replaced.iter().map(|n| (n.as_str(), "replaced")))
        .collect()
}

/// `docs/schema/list.schema.json`: `list --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListDocument<'a> {
    pub schema_version: V1,
    pub repo: &'a Path,
    pub boxes: Vec<ListBox<'a>>,
}

impl Document for ListDocument<'_> {}

/// One box of a [`ListDocument`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListBox<'a> {
    pub name: &'a str,
    pub path: &'a str,
    pub branch: Option<&'a str>,
    pub placeholder: bool,
    pub git_mode: Option<&'a str>,
    pub runner: Option<&'a str>,
    pub harness: Option<&'a str>,
    pub last_commit: Option<i64>,
    pub deps: &'a str,
    /// `present` or `absent`.
    pub env: &'static str,
    /// `live` or `none`.
    pub session: &'static str,
    pub state: &'a str,
    #[serde(flatten)]
    pub progress: Progress<'a>,
    /// `list --dirty`: whether the box's working tree holds uncommitted changes;
    /// absent without `--dirty`, or when the box's git cannot be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty: Option<bool>,
    #[serde(flatten)]
    pub ports: BoxPorts<'a>,
}

/// A box's block of ports (SPEC §7b) and which of them listen: the same fields in
/// `list --json` and `watch --once --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BoxPorts<'a> {
    /// The block; absent for a box without one.
    #[serde(skip_serializing_if = "<[u16]>::is_empty")]
    pub ports: &'a [u16],
    /// The ports of the block listening now where this machine reaches them; absent
    /// when not read (`list` without `--ports`), not readable (a container that does
    /// not run), or there is no block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listening: Option<&'a [u16]>,
    /// A container box's ports listening on its own loopback alone, out of the
    /// published port's reach; absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loopback_only: Option<&'a [u16]>,
    /// Ports of the block whose state cannot be told: not seen listening in a socket
    /// table longer than treebox reads (about 7,000 sockets); absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<&'a [u16]>,
}

/// How far a box's agent and its work have got: the same fields in `list` and
/// `git sandbox ls` ([`ListBox`], [`SandboxLsBox`]).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress<'a> {
    /// The agent's last report (`working`, `waiting`, `idle`, `unknown`); `None` when
    /// it has reported nothing.
    pub status: Option<&'a str>,
    /// When it reported, in seconds since the epoch.
    pub status_time: Option<i64>,
    /// The agent's exit code (128+signal) once its session has ended; `None` while
    /// live, or when it never ran in one.
    pub exit_code: Option<i32>,
    /// Its committed work is in its base (`origin/<base>` or `<base>`): merged,
    /// rebased or squash-merged. `None` when it has no work of its own or it cannot
    /// be told.
    pub landed: Option<bool>,
}

impl Progress<'_> {
    pub fn of(
        status: Option<crate::runner::oci::Reported>,
        exit_code: Option<i32>,
        landed: Option<bool>,
    ) -> Progress<'static> {
        Progress {
            status: status.map(|s| s.status.as_str()),
            status_time: status.map(|s| unix_seconds(s.at)),
            exit_code,
            landed,
        }
    }
}

/// `docs/schema/teardown.schema.json` and `sandbox-down.schema.json`: `teardown --json`
/// and `git sandbox down --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemovedDocument<'a> {
    pub schema_version: V1,
    pub repo: &'a Path,
    pub warnings: &'a [String],
    pub removed: Vec<RemovedBox<'a>>,
}

impl Document for RemovedDocument<'_> {}

/// One removed box of a [`RemovedDocument`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemovedBox<'a> {
    pub name: &'a str,
    pub path: &'a Path,
    pub branch: Option<&'a str>,
    pub branch_deleted: bool,
    pub pruned_only: bool,
}

impl<'a> RemovedDocument<'a> {
    pub fn new(
        repo: &'a Path,
        warnings: &'a [String],
        removed: &'a [crate::teardown::Removed],
    ) -> Self {
        RemovedDocument {
            schema_version: V1,
            repo,
            warnings,
            removed: removed
                .iter()
                .map(|r| RemovedBox {
                    name: &r.leaf,
                    path: &r.path,
                    branch: r.branch.as_deref(),
                    branch_deleted: r.branch_deleted,
                    pruned_only: r.pruned_only,
                })
                .collect(),
        }
    }
}

/// `docs/schema/doctor.schema.json`: `doctor --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DoctorDocument<'a> {
    pub schema_version: V1,
    /// No check failed.
    pub ok: bool,
    pub checks: Vec<DoctorCheck<'a>>,
}

impl Document for DoctorDocument<'_> {}

/// One check of a [`DoctorDocument`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DoctorCheck<'a> {
    pub name: &'a str,
    pub status: &'a str,
    pub summary: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<&'a str>,
}

/// `docs/schema/template-list.schema.json`: `template list --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateListDocument<'a> {
    pub schema_version: V1,
    pub user_dir: Option<String>,
    pub templates: Vec<TemplateEntry<'a>>,
}

impl Document for TemplateListDocument<'_> {}

/// One template of a [`TemplateListDocument`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateEntry<'a> {
    pub name: &'a str,
    pub source: &'a str,
    pub path: Option<String>,
    pub overrides_bundled: bool,
    pub ok: bool,
    pub problems: &'a [String],
}

/// `docs/schema/template-path.schema.json`: `template path --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplatePathDocument<'a> {
    pub schema_version: V1,
    pub name: &'a str,
    pub source: &'a str,
    pub path: String,
}

impl Document for TemplatePathDocument<'_> {}

/// `docs/schema/sandbox-ls.schema.json`: `git sandbox ls --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxLsDocument<'a> {
    pub schema_version: V1,
    pub boxes: Vec<SandboxLsBox<'a>>,
    /// The machines of the config not asked this time; absent when all answered.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub unreachable: &'a [crate::remote::listing::Unreached],
}

impl Document for SandboxLsDocument<'_> {}

/// One box of a [`SandboxLsDocument`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxLsBox<'a> {
    /// The machine of the config the box is on; absent: this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<&'a str>,
    pub name: &'a str,
    pub repo: &'a str,
    pub path: &'a str,
    pub state: &'a str,
    pub git_mode: Option<&'a str>,
    pub mode: &'a str,
    pub branch: Option<&'a str>,
    pub dirty: Option<bool>,
    pub runner: Option<&'a str>,
    #[serde(flatten)]
    pub progress: Progress<'a>,
    /// A box of a machine not asked now, as it last listed it; absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
}

/// `docs/schema/sandbox-bundle.schema.json`: `git sandbox bundle --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleDocument<'a> {
    pub schema_version: V1,
    pub name: &'a str,
    pub path: &'a Path,
    pub branch: &'a str,
    pub tip: String,
    pub commits: usize,
    pub prerequisites: Vec<String>,
}

impl Document for BundleDocument<'_> {}

/// `docs/schema/sandbox-fetch.schema.json`: `git sandbox fetch --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FetchDocument<'a> {
    pub schema_version: V1,
    pub name: &'a str,
    /// The ref the box's commits were imported under.
    #[serde(rename = "ref")]
    pub reference: &'a str,
    pub branch: &'a str,
    pub tip: String,
    pub commits: usize,
}

impl Document for FetchDocument<'_> {}

/// `docs/schema/sandbox-prune.schema.json`: `git sandbox prune --json`.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneDocument {
    pub schema_version: V1,
    pub removed: Vec<Pruned>,
}

impl Document for PruneDocument {}

/// One leftover a [`PruneDocument`] reports removed.
#[derive(Debug, Serialize)]
pub struct Pruned {
    pub kind: &'static str,
    pub what: String,
}

/// `docs/schema/sandbox-park.schema.json`: `git sandbox park --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParkDocument<'a> {
    pub schema_version: V1,
    pub parked: &'a [Parked],
    pub first_seen: &'a [String],
}

impl Document for ParkDocument<'_> {}

/// One container a [`ParkDocument`] reports stopped.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Parked {
    pub name: String,
    pub repo: std::path::PathBuf,
    pub idle_seconds: u64,
}

/// `docs/schema/error.schema.json`: the one object on stderr when a `--json` command
/// fails.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorDocument<'a> {
    pub schema_version: V1,
    pub error: ErrorBody<'a>,
}

impl Document for ErrorDocument<'_> {}

/// The `error` object of an [`ErrorDocument`].
#[derive(Debug, Serialize)]
pub struct ErrorBody<'a> {
    pub code: i32,
    pub kind: &'a str,
    /// What failed, then each cause, joined by ": " ([`super::error::CliError::chain`]).
    pub message: &'a str,
    /// The hints, joined by a space; absent when there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl<'a> ErrorDocument<'a> {
    pub fn new(code: i32, kind: &'a str, message: &'a str, hints: &[String]) -> Self {
        ErrorDocument {
            schema_version: V1,
            error: ErrorBody {
                code,
                kind,
                message,
                hint: (!hints.is_empty()).then(|| hints.join(" ")),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_version_is_one() {
        assert_eq!(serde_json::to_value(V1).unwrap(), serde_json::json!(1));
    }

    #[test]
    fn error_document_matches_the_hand_built_one() {
        let hints = vec!["a".to_string(), "b".to_string()];
        let doc = ErrorDocument::new(3, "not-found", "no such box", &hints).to_value();
        assert_eq!(
            doc,
            serde_json::json!({"schemaVersion": 1, "error": {
                "code": 3, "kind": "not-found", "message": "no such box", "hint": "a b"}})
        );
        let bare = ErrorDocument::new(1, "x", "y", &[]).to_value();
        assert!(bare["error"].get("hint").is_none());
    }

    #[test]
    fn prune_document_with_nothing_removed() {
        assert_eq!(
            PruneDocument::default().to_value().to_string(),
            r#"{"removed":[],"schemaVersion":1}"#
        );
    }
}
