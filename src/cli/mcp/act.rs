//! The tools that change boxes: `box_stop`, `box_remove` and `box_land`, each the
//! engine call its command makes, with that command's refusals and never a force.
//!
//! - `box_stop`: [`crate::session::end`], as `down`, `teardown` and `park` end a
//!   session: the tmux session is killed, its terminal hangs up, the agent ends as when
//!   the user quits it (one that outlives the hang-up is killed). A box without a live
//!   session is no error: there is nothing to stop, and `stopped: false` says so.
//! - `box_remove`: `git sandbox down NAME` without `-f` and without a terminal:
//!   whatever stands against the removal ([`crate::teardown::objections`]) refuses it
//!   with `down`'s words ([`super::super::teardown::down_refusal`]), and nothing is
//!   removed; else [`crate::teardown::remove_as_decided`], unforced.
//! - `box_land`: `git treebox land NAME` ([`crate::land::flow`]: prepare, then onto),
//!   with neither `--push`, `--pr` nor `--remove`, only when the user's config says
//!   `"mcp": {"land": true}`; its document and refusals are `land`'s
//!   ([`super::super::land_report`]).
//!
//! Called by [`super::tools::call`] on tokio's blocking pool.

use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::error::{CliError, ErrorKind};
use super::super::json::{Document, V1};
use super::super::land_report::{self, LandDocument};
use super::super::sandbox::down_unasked;
use crate::land::onto::Strategy;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct StopInput {
    /// The box: its name, its current branch, or a unique part of either.
    name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct RemoveInput {
    /// The box, named whole: its name or its branch (a part of either is refused, as `git sandbox down` refuses it without a terminal).
    name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct LandInput {
    /// The box: its name, its current branch, or a unique part of either.
    name: String,
    /// How the work lands: `squash` (one new commit; the default unless the user's config `land` names another), `rebase` (the box's commits replayed), or `merge` (a merge commit).
    #[serde(default)]
    #[schemars(with = "LandStrategy")]
    strategy: Option<LandStrategy>,
}

/// `land`'s strategies, as a tool may name them (a plain enum in the input schema:
/// some clients follow no `$ref`).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(crate = "rmcp::schemars", inline)]
enum LandStrategy {
    Squash,
    Rebase,
    Merge,
}

impl From<LandStrategy> for Strategy {
    fn from(s: LandStrategy) -> Strategy {
        match s {
            LandStrategy::Squash => Strategy::Squash,
            LandStrategy::Rebase => Strategy::Rebase,
            LandStrategy::Merge => Strategy::Merge,
        }
    }
}

/// `docs/schema/stop.schema.json`: what `box_stop` answers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct StopDocument<'a> {
    schema_version: V1,
    name: &'a str,
    /// A live session was ended now; `false`: there was none.
    stopped: bool,
}

impl Document for StopDocument<'_> {}

/// `box_stop`: end the box's agent session, if it has a live one.
pub(super) fn stop(dir: &std::path::Path, a: StopInput) -> Result<Value, CliError> {
    let _cfg = super::super::load_config()?;
    let (_, layout, entry) = super::super::sandbox::find_at(dir, &a.name)?;
    let name = entry.leaf.to_string();
    let marker = layout.session_path(&entry.leaf);
    let live = crate::state::session::is_live(&marker);
    // Called live or not: a session still starting or ending goes too.
    let left = crate::session::end(&marker);
    if !left.is_empty() {
        let pids: Vec<String> = left.iter().map(i32::to_string).collect();
        return Err(CliError::new(
            ErrorKind::Runtime,
            format!(
                "the agent of box `{name}` (pid {}) did not end when killed",
                pids.join(", ")
            ),
        )
        .hint(format!("Look at it with `ps -p {}`.", pids.join(","))));
    }
    Ok(StopDocument {
        schema_version: V1,
        name: &name,
        stopped: live,
    }
    .to_value())
}

/// `box_remove`: `git sandbox down NAME`, unforced, off a terminal.
pub(super) fn remove(dir: &std::path::Path, a: RemoveInput) -> Result<Value, CliError> {
    down_unasked(dir, &a.name, false, None)
}

/// `box_land`: `git treebox land NAME [--squash | --rebase | --merge]`, when allowed.
pub(super) fn land(dir: &std::path::Path, a: LandInput) -> Result<Value, CliError> {
    let cfg = super::super::load_config()?;
    if !cfg.mcp.land {
        let file = crate::config::user_config_path().map_or_else(
            || "your treebox config".to_string(),
            |p| crate::cmd::quote(&p.to_string_lossy()),
        );
        return Err(CliError::new(
            ErrorKind::NotAllowed,
            "landing through `git treebox mcp` is not allowed by your config",
        )
        .hint(format!(
            "Landing is the user's call: they allow it by adding `\"mcp\": {{\"land\": true}}` to {file}, or land the box themselves with `git treebox land {}`.",
            crate::cmd::quote(&a.name)
        )));
    }
    let (repo, layout, entry) = super::super::sandbox::find_at(dir, &a.name)?;
    let leaf = entry.leaf.to_string();
    let strategy = a
        .strategy
        .map_or_else(|| cfg.land.unwrap_or_default(), Strategy::from);
    let landing = crate::land::flow::prepare(&repo, &layout, &entry, false)
        .map_err(|e| land_report::from_not_ready(e, &leaf))?;
    let landed = landing
        .onto(&repo, strategy)
        .map_err(|e| land_report::from_land(e, &leaf))?;
    let doc = LandDocument::landed(
        &leaf,
        &landing.branch,
        &landing.base,
        landing.tip,
        strategy,
        &landed,
    );
    Ok(doc.to_value())
}
