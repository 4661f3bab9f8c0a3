//! The tools of `git treebox mcp`: each one's name, description and input schema (from
//! its input struct, closed to undeclared fields: no tool takes a flag the CLI would
//! not let a lead agent pass), and the blocking call behind it.
//!
//! Every call reads the repository of the server's directory afresh, exactly as the
//! command would: `box_list` is `list --json`'s document, `box_diff` `diff --json`'s,
//! both built by the functions those commands print ([`super::super::list::json`],
//! [`super::super::diff::json`]); `box_screen` reads the agent's pane as `watch` does.
//! The tools that start agents and talk to them (`box_create`, `box_send`,
//! `box_wait`) are in [`super::drive`], those that change boxes (`box_stop`,
//! `box_remove`, `box_land`) in [`super::act`]. A refusal is the command's own [`CliError`], with its exit code and hint.
//!
//! Called by [`super::server`] on tokio's blocking pool.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use rmcp::schemars::JsonSchema;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::Value;

use super::super::error::{CliError, ErrorKind};
use super::super::json::{Document, V1};
use super::scope::Scope;
use super::{act, drive};

/// How many screen lines `box_screen` returns without `lines`, and at most.
pub(super) const SCREEN_LINES: u32 = 40;
pub(super) const SCREEN_LINES_MAX: u32 = 200;

/// `box_list` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct ListInput {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct DiffInput {
    /// The box: its name, its current branch, or a unique part of either (as `git treebox diff NAME` takes it).
    name: String,
    /// Only the files changed and their counts, without the patch (`--stat`).
    #[serde(default)]
    stat: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct ScreenInput {
    /// The box: its name, its current branch, or a unique part of either.
    name: String,
    /// How many of the screen's last lines that hold anything (default 40).
    #[schemars(range(min = 1, max = 200))]
    lines: Option<u32>,
}

/// `docs/schema/screen.schema.json`: what `box_screen` answers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ScreenDocument<'a> {
    schema_version: V1,
    name: &'a str,
    /// The last lines that hold anything, oldest first, each with its control
    /// characters escaped.
    lines: &'a [String],
}

impl Document for ScreenDocument<'_> {}

/// The tools: a closed vocabulary, spelled only by [`ToolName::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ToolName {
    Create,
    List,
    Send,
    Wait,
    Diff,
    Screen,
    Stop,
    Remove,
    Land,
}

impl ToolName {
    /// In the order `tools/list` gives them.
    const ALL: [ToolName; 9] = [
        ToolName::Create,
        ToolName::List,
        ToolName::Send,
        ToolName::Wait,
        ToolName::Diff,
        ToolName::Screen,
        ToolName::Stop,
        ToolName::Remove,
        ToolName::Land,
    ];

    fn as_str(self) -> &'static str {
        match self {
            ToolName::Create => "box_create",
            ToolName::List => "box_list",
            ToolName::Send => "box_send",
            ToolName::Wait => "box_wait",
            ToolName::Diff => "box_diff",
            ToolName::Screen => "box_screen",
            ToolName::Stop => "box_stop",
            ToolName::Remove => "box_remove",
            ToolName::Land => "box_land",
        }
    }

    fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// Its definition: name, description, input schema, and what it may change.
    fn definition(self) -> Tool {
        let name = self.as_str();
        let t = match self {
            ToolName::Create => tool::<drive::CreateInput>(
                name,
                "Make a box (a git worktree or clone of this repository, cut from a fresh \
                 origin/<base>, optionally in a container) and start its agent (Claude \
                 Code or Codex) detached in a session, as `git treebox create -d` does; \
                 answers once the agent is ready or has failed. With `prompt`, the agent \
                 starts with it as its first prompt and the answer's `token` is for \
                 `box_wait`. \
                 Only on the runners the user's config allows (`mcp.isolation`). Answers \
                 `create --json`'s document with `agent` (what the start saw); an agent \
                 that exits before it is ready is an error with its exit code and last \
                 lines.",
            ),
            ToolName::Send => tool::<drive::SendInput>(
                name,
                "Type a prompt into a box's agent and submit it: pasted as a bracketed \
                 paste (a newline is part of the prompt, not Enter), then Enter. Nothing \
                 in the text is read as a key or an escape; control characters other than \
                 newline and tab are refused. The box needs a live agent session. Answers \
                 a `token`: pass it to `box_wait` as `after` to wait for the end of this \
                 prompt's turn.",
            ),
            ToolName::Wait => tool::<drive::WaitInput>(
                name,
                "Block until one of the boxes (`names`, else every box with a live agent) \
                 is in one of the states of `until` — `idle` (its turn done, at its \
                 prompt), `waiting` (it asks a person something), `exited` (its session \
                 ended) — or `timeout_s` passes, and say which boxes (`reached`) or \
                 `timedOut`. With `after` (a `box_send` token), a state reported before \
                 that prompt was typed does not count.",
            ),
            ToolName::List => tool::<ListInput>(
                name,
                "The boxes of this repository, as `git treebox list --json` prints them: \
                 each box's name, branch, path, git mode, runner, harness, whether its \
                 agent's session is live, what the agent last reported (working, waiting, \
                 idle) or its exit code, and whether its work has landed.",
            ),
            ToolName::Diff => tool::<DiffInput>(
                name,
                "What a box changed since its base, as `git treebox diff NAME --json` \
                 prints it: its commits, each changed file with its counts, whether it \
                 holds uncommitted work, and the patch (not with `stat`). Read as hostile \
                 data: a field the box makes unreadable is reported as such \
                 (`worktreeRead: false`, `tooLarge`).",
            ),
            ToolName::Screen => tool::<ScreenInput>(
                name,
                "The last lines of a box's agent session screen (default 40, at most \
                 200), control characters escaped, as `git treebox watch` shows them. A \
                 box with no live session is refused.",
            ),
            ToolName::Stop => tool::<act::StopInput>(
                name,
                "End a box's agent session, as the user would by quitting the agent, so \
                 a finished box can be landed or removed; its checkout and work stay. \
                 Answers `stopped: true` when a live session was ended, `false` when \
                 the box had none (nothing done).",
            ),
            ToolName::Remove => tool::<act::RemoveInput>(
                name,
                "Remove a box, as `git sandbox down NAME` does without `-f` and without \
                 a terminal: refused (exit code 5, `needs-confirmation`, nothing removed) \
                 while it has uncommitted or untracked changes, commits the repository \
                 does not have, or a live session; a box whose work has landed goes. \
                 Never forced. Answers `down --json`'s document.",
            ),
            ToolName::Land => tool::<act::LandInput>(
                name,
                "Land a box's work onto its base branch, as `git treebox land NAME` does \
                 (no push, no pull request, the box kept), only when the user's config \
                 allows it (`\"mcp\": {\"land\": true}`). Refused, nothing written, for a \
                 live agent session (stop it first), uncommitted work, or a conflict \
                 with the base. Answers `land --json`'s document.",
            ),
        };
        let hints = match self {
            ToolName::List | ToolName::Diff | ToolName::Screen | ToolName::Wait => {
                ToolAnnotations::new().read_only(true).destructive(false)
            }
            // A new box, or typing into one: nothing of anyone's work is lost.
            ToolName::Create | ToolName::Send => ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false),
            // Ending an agent loses nothing of its work; again, it does nothing.
            ToolName::Stop => ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(true),
            ToolName::Remove => ToolAnnotations::new()
                .read_only(false)
                .destructive(true)
                .idempotent(false),
            // It adds to the base branch; what the base held stays in its history.
            ToolName::Land => ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false),
        };
        t.annotate(hints.open_world(false))
    }
}

/// The tools, in the order `tools/list` gives them.
pub(super) fn all() -> Vec<Tool> {
    ToolName::ALL
        .into_iter()
        .map(ToolName::definition)
        .collect()
}

/// A tool taking `T`. Its schema always has `properties` (an empty object for
/// `box_list`): some clients refuse an object schema without them.
fn tool<T: JsonSchema + 'static>(name: &'static str, description: &'static str) -> Tool {
    let mut t = Tool::new(name, description, Arc::new(JsonObject::new())).with_input_schema::<T>();
    let mut schema = (*t.input_schema).clone();
    let properties = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(p) = properties {
        p.insert(
            "repo".into(),
            serde_json::json!({
                "description": REPO_DESCRIPTION,
                "type": "string",
            }),
        );
    }
    t.input_schema = Arc::new(schema);
    t
}

/// Every tool's `repo` ([`super::scope`]).
const REPO_DESCRIPTION: &str = "The repository: the absolute path of its main checkout, as `box_list` shows it. Only needed when the server serves every repository (`git treebox mcp --all`), where `box_create`, and `box_wait` without `names`, need it and a box name found in several repositories is refused without it; a server of one repository takes only that one.";

/// Call tool `name` with `args`, as the command would run: its document, or its
/// refusal. `None` when there is no such tool.
/// In the repository of `scope` the call names (its `repo`, else its box's);
/// `cancelled` says when the client has given up on the call (`box_wait` stops).
pub(super) fn call(
    name: &str,
    mut args: JsonObject,
    scope: &Scope,
    cancelled: &dyn Fn() -> bool,
) -> Option<Result<Value, CliError>> {
    let tool = ToolName::parse(name)?;
    Some(repo_arg(name, &mut args).and_then(|repo| {
        let repo = repo.as_deref();
        if tool == ToolName::List && repo.is_none() && scope.is_all() {
            return input::<ListInput>(name, args).and_then(|_| super::super::sandbox::ls::json());
        }
        // The box a call names: its `name` (not `box_create`'s, a box to make), else
        // the first of `box_wait`'s `names`.
        let named = (tool != ToolName::Create)
            .then(|| args.get("name"))
            .flatten()
            .or_else(|| args.get("names").and_then(|n| n.get(0)))
            .and_then(Value::as_str)
            .map(str::to_string);
        let dir = scope.dir(repo, named.as_deref())?;
        let dir = dir.as_path();
        match tool {
            ToolName::Create => input(name, args).and_then(|a| drive::create(dir, a)),
            ToolName::Send => input(name, args).and_then(|a| drive::send(dir, a)),
            ToolName::Wait => input(name, args).and_then(|a| drive::wait(dir, a, cancelled)),
            ToolName::List => {
                input::<ListInput>(name, args).and_then(|_| super::super::list::json(dir, false))
            }
            ToolName::Diff => input::<DiffInput>(name, args)
                .and_then(|a| super::super::diff::json(dir, &a.name, a.stat)),
            ToolName::Screen => input::<ScreenInput>(name, args).and_then(|a| screen(dir, a)),
            ToolName::Stop => input(name, args).and_then(|a| act::stop(dir, a)),
            ToolName::Remove => input(name, args).and_then(|a| act::remove(dir, a)),
            ToolName::Land => input(name, args).and_then(|a| act::land(dir, a)),
        }
    }))
}

/// Every tool's `repo`, taken out of its arguments: a string, or absent.
fn repo_arg(name: &str, args: &mut JsonObject) -> Result<Option<String>, CliError> {
    match args.remove("repo") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(CliError::new(
            ErrorKind::Usage,
            format!("invalid arguments to `{name}`: `repo` must be a path"),
        )
        .hint("`tools/list` gives each tool's input schema.")),
    }
}

/// The arguments of tool `name`, or a usage refusal (exit 2) saying what is wrong.
fn input<T: DeserializeOwned>(name: &str, args: JsonObject) -> Result<T, CliError> {
    serde_json::from_value(Value::Object(args)).map_err(|e| {
        CliError::new(
            ErrorKind::Usage,
            format!("invalid arguments to `{name}`: {e}"),
        )
        .hint("`tools/list` gives each tool's input schema.")
    })
}

/// `box_screen`: the box's live pane, its last lines, sanitised.
fn screen(dir: &std::path::Path, a: ScreenInput) -> Result<Value, CliError> {
    let n = a.lines.unwrap_or(SCREEN_LINES);
    if !(1..=SCREEN_LINES_MAX).contains(&n) {
        return Err(CliError::new(
            ErrorKind::Usage,
            format!("`lines` must be between 1 and {SCREEN_LINES_MAX}, not {n}"),
        )
        .hint(format!("Leave it out for the last {SCREEN_LINES} lines.")));
    }
    let _cfg = super::super::load_config()?;
    let (_, layout, entry) = super::super::sandbox::find_at(dir, &a.name)?;
    let name = entry.leaf.to_string();
    let live = crate::state::session::is_live(&layout.session_path(&entry.leaf));
    let lines = live
        .then(|| crate::watch::screen::last_lines(&layout, &entry.leaf, n as usize))
        .flatten()
        .ok_or_else(|| {
            let q = crate::cmd::quote(&name);
            CliError::new(
                ErrorKind::NoSession,
                format!(
                    "box `{}` has no live agent session to read",
                    crate::sanitize::line(&name)
                ),
            )
            .hint(format!(
                "Start its agent with `git treebox enter -d {q}`; `git treebox list` shows which boxes have one."
            ))
        })?;
    Ok(ScreenDocument {
        schema_version: V1,
        name: &name,
        lines: &lines,
    }
    .to_value())
}
