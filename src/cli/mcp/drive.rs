//! The tools that start agents and talk to them: `box_create`, `box_send` and
//! `box_wait`, each a front end over the engine call `create -d` makes or the
//! session's own.
//!
//! - `box_create`: [`crate::provision::launch::create_detached`] (provision, start the
//!   agent detached, wait until it is ready), on a runner the user's config allows a
//!   lead agent (`"mcp": {"isolation": [...]}`, else only the one `create` would pick
//!   with no flag). Its answer is `create --json`'s document with what the start saw
//!   (`agent`; [`super::super::detached`], shared with another machine's `create`); an
//!   agent that ended before it was ready is a refusal with its exit code and last
//!   lines. With a `prompt`, the prompt is the agent's first, on its command line
//!   after `--` (typed as `box_send` types it into a session that was live already),
//!   and the answer carries a token for `box_wait`.
//! - `box_send`: [`crate::session::typing`]: a bracketed paste, then Enter. Its token
//!   is the time just before the paste: `box_wait` with `after` ignores every report
//!   older than that, so it cannot return on the idle the agent was in before.
//! - `box_wait`: looks at the named boxes (all of this repository's without names)
//!   every [`POLL`] until one is in a state asked for, the timeout passes, or the
//!   client cancels the call. A box whose session has ended is `exited`, whatever
//!   `after` says: nothing more can change in it.
//!
//! Called by [`super::tools::call`] on tokio's blocking pool.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::error::{CliError, ErrorKind};
use super::super::json::{Document, V1};
use crate::runner::oci::AgentStatus;
use crate::vocab::RunnerKind;

/// How often `box_wait` looks at its boxes.
const POLL: Duration = Duration::from_millis(100);
/// The longest `box_wait` takes.
pub(super) const WAIT_MAX_S: u64 = 3600;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct CreateInput {
    /// The box's name, also its branch (`feat/login`); a new petname without one.
    name: Option<String>,
    /// The first prompt, typed into the agent once it is ready (as `box_send` types it).
    prompt: Option<String>,
    /// The agent: `claude` or `codex` (default: the user's config, else `claude`).
    #[serde(default)]
    #[schemars(with = "Option<HarnessName>")]
    harness: Option<HarnessName>,
    /// Where the agent runs: `host`, `docker` or `podman`, among those the user's config allows a lead agent (`mcp.isolation`; default: only what `create` picks with no flag).
    #[serde(default)]
    #[schemars(with = "Option<RunnerName>")]
    isolation: Option<RunnerName>,
    /// The box's git mode: `worktree` (default) or `clone`.
    #[serde(default)]
    #[schemars(with = "Option<ModeName>")]
    mode: Option<ModeName>,
    /// The branch of origin the box starts from (default: origin's default branch, or the repository's configured base).
    base: Option<String>,
}

/// The agents a tool may name (a plain enum in the schema: some clients follow no `$ref`).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(crate = "rmcp::schemars", inline)]
enum HarnessName {
    Claude,
    Codex,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(crate = "rmcp::schemars", inline)]
enum RunnerName {
    Host,
    Docker,
    Podman,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(crate = "rmcp::schemars", inline)]
enum ModeName {
    Worktree,
    Clone,
}

impl From<RunnerName> for RunnerKind {
    fn from(r: RunnerName) -> RunnerKind {
        match r {
            RunnerName::Host => RunnerKind::Host,
            RunnerName::Docker => RunnerKind::Docker,
            RunnerName::Podman => RunnerKind::Podman,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct SendInput {
    /// The box: its name, its current branch, or a unique part of either.
    name: String,
    /// The prompt, typed as a paste and submitted with Enter. Newlines and tabs are part of it; any other control character is refused.
    text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct WaitInput {
    /// The boxes to wait on (names, branches, or unique parts of either); all of this repository's boxes without it.
    names: Option<Vec<String>>,
    /// The states that end the wait: `idle` (at its prompt, its turn done), `waiting` (it asks a person something), `exited` (its session has ended).
    #[schemars(with = "Vec<Until>", length(min = 1))]
    until: Vec<Until>,
    /// A token from `box_send` or `box_create`: a state the agent reported before that prompt was typed does not end the wait.
    after: Option<String>,
    /// The longest to wait, in seconds (1 to 3600). Mind the client's own timeout for a tool call.
    #[schemars(range(min = 1, max = 3600))]
    timeout_s: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(crate = "rmcp::schemars", inline)]
enum Until {
    Idle,
    Waiting,
    Exited,
}

/// `docs/schema/send.schema.json`: what `box_send` answers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SentDocument<'a> {
    schema_version: V1,
    name: &'a str,
    /// For `box_wait`'s `after`.
    token: String,
}

impl Document for SentDocument<'_> {}

/// `docs/schema/wait.schema.json`: what `box_wait` answers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct WaitedDocument {
    schema_version: V1,
    /// The timeout passed with no box in a state asked for.
    timed_out: bool,
    /// The boxes in a state asked for when the wait ended (empty on a timeout).
    reached: Vec<Reached>,
    /// How long the wait took, in seconds.
    seconds: f64,
}

impl Document for WaitedDocument {}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Reached {
    name: String,
    state: Until,
    /// The agent's exit code, for `exited` (absent when the box's session left none).
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
}

/// `box_create`.
pub(super) fn create(dir: &Path, a: CreateInput) -> Result<Value, CliError> {
    let cfg = super::super::load_config()?;
    if let Some(p) = &a.prompt {
        check_prompt(p)?;
    }
    let runner = allowed_runner(a.isolation.map(RunnerKind::from), &cfg)?;
    let req = crate::provision::CreateRequest {
        cwd: dir.to_path_buf(),
        name: a.name.clone(),
        base: a.base.clone(),
        harness: a.harness.map(|h| match h {
            HarnessName::Claude => crate::harness::Harness::Claude,
            HarnessName::Codex => crate::harness::Harness::Codex,
        }),
        isolation: Some(runner.as_str().to_string()),
        git_mode: a.mode.map(|m| {
            match m {
                ModeName::Worktree => "worktree",
                ModeName::Clone => "clone",
            }
            .to_string()
        }),
        launch: true,
        // The first prompt goes on the agent's command line (after `--`, so nothing in
        // it is read as an option): the agent takes it once it is up, where a paste
        // right after its start could come before it reads its terminal as a prompt
        // box (a newline in it then submitting early).
        extra_args: a
            .prompt
            .iter()
            .flat_map(|p| ["--".to_string(), p.clone()])
            .collect(),
        ..Default::default()
    };
    // A new agent has taken no prompt yet: its turn ends once it has taken one and
    // ended as many turns as it took.
    let before = Token::now(Some(0));
    let made = super::super::detached::create(&req, &cfg)?;
    let token = match (&a.prompt, made.start.state) {
        // At its prompt, or at a screen for a person: it takes the prompt once up.
        (Some(_), "ready" | "asks" | "notReady") => Some(before.to_string()),
        // Its session was live already (a box that existed): the prompt is typed.
        (Some(p), "alreadyRunning") => Some(type_into(
            &made.created.plan.name,
            &made.created.session_path,
            p,
        )?),
        _ => None,
    };
    Ok(made.document(token))
}

/// The runner `box_create` uses: the one asked for, or `create`'s pick with no flag,
/// or the first the user listed; refused unless the user allows it.
fn allowed_runner(
    asked: Option<RunnerKind>,
    cfg: &crate::config::UserConfig,
) -> Result<RunnerKind, CliError> {
    let default = crate::provision::request::resolve_runner(cfg.isolation.as_deref(), cfg)
        .map_err(CliError::from)?;
    let allowed = cfg.mcp.isolation.clone().unwrap_or_else(|| vec![default]);
    let runner = match asked {
        Some(r) => r,
        None if allowed.contains(&default) => default,
        None => allowed[0],
    };
    if allowed.contains(&runner) {
        return Ok(runner);
    }
    let list: Vec<&str> = allowed.iter().map(|r| r.as_str()).collect();
    let file = crate::config::user_config_path().map_or_else(
        || "your treebox config".to_string(),
        |p| crate::cmd::quote(&p.to_string_lossy()),
    );
    Err(CliError::new(
        ErrorKind::NotAllowed,
        format!(
            "starting an agent on `{runner}` through `git treebox mcp` is not allowed by your config (allowed: {})",
            list.join(", ")
        ),
    )
    .hint(format!(
        "Ask for one of {}; the user allows more runners with `\"mcp\": {{\"isolation\": [...]}}` in {file}.",
        list.join(", ")
    )))
}

/// `box_send`.
pub(super) fn send(dir: &Path, a: SendInput) -> Result<Value, CliError> {
    let _cfg = super::super::load_config()?;
    check_prompt(&a.text)?;
    let (_, layout, entry) = super::super::sandbox::find_at(dir, &a.name)?;
    let name = entry.leaf.to_string();
    let marker = layout.session_path(&entry.leaf);
    let token = type_into(&name, &marker, &a.text)?;
    Ok(SentDocument {
        schema_version: V1,
        name: &name,
        token,
    }
    .to_value())
}

/// A prompt that cannot be typed: usage (2), nothing sent.
fn check_prompt(text: &str) -> Result<(), CliError> {
    crate::session::typing::check(text).map_err(|e| {
        CliError::new(ErrorKind::Usage, format!("cannot type this prompt: {e}"))
            .hint("Send plain text: newlines and tabs are kept, other control characters and key names are not typed.")
    })
}

/// Type `text` into the live session of box `name`; the token for `box_wait`.
fn type_into(name: &str, marker: &Path, text: &str) -> Result<String, CliError> {
    let session =
        crate::session::Session::for_marker(marker).map_err(super::super::create::from_session)?;
    if !crate::state::session::is_live(marker) || !session.exists() {
        let q = crate::cmd::quote(name);
        return Err(CliError::new(
            ErrorKind::NoSession,
            format!(
                "box `{}` has no live agent session to type into",
                crate::sanitize::line(name)
            ),
        )
        .hint(format!(
            "Its agent is not running: `box_list` shows its exit code; the user restarts it with `git treebox enter -d {q}`."
        )));
    }
    // The prompts the agent has taken so far (its hooks count them): the turn of this
    // one ends once it has taken more and ended as many turns as it took.
    let status_dir = crate::state::session::status_path(marker)
        .parent()
        .map(Path::to_path_buf);
    let prompts = status_dir
        .as_deref()
        .and_then(crate::runner::oci::status::read_turns_in)
        .map(|t| t.prompts);
    let token = Token::now(prompts);
    session
        .type_prompt(text)
        .map_err(super::super::create::from_session)?;
    Ok(token.to_string())
}

/// What `box_send` hands out: the moment just before the prompt was typed (`t` and
/// nanoseconds since the epoch), and how many prompts the agent had taken then (`p`
/// and the count), where its hooks count them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Token {
    at: u128,
    prompts: Option<u64>,
}

impl Token {
    fn now(prompts: Option<u64>) -> Token {
        Token {
            at: nanos(SystemTime::now()),
            prompts,
        }
    }

    fn parse(s: &str) -> Option<Token> {
        let rest = s.strip_prefix('t')?;
        let (at, prompts) = match rest.split_once('p') {
            Some((at, p)) => (at, Some(p)),
            None => (rest, None),
        };
        let number = |d: &str| {
            (!d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                .then(|| d.parse::<u128>().ok())
                .flatten()
        };
        Some(Token {
            at: number(at)?,
            prompts: match prompts {
                Some(p) => Some(u64::try_from(number(p)?).ok()?),
                None => None,
            },
        })
    }
}

/// `t` in nanoseconds since the epoch.
fn nanos(t: SystemTime) -> u128 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "t{}", self.at)?;
        match self.prompts {
            Some(p) => write!(f, "p{p}"),
            None => Ok(()),
        }
    }
}

/// `box_wait`; `cancelled` says when the client has given up on the call.
pub(super) fn wait(
    dir: &Path,
    a: WaitInput,
    cancelled: &dyn Fn() -> bool,
) -> Result<Value, CliError> {
    let _cfg = super::super::load_config()?;
    let usage = |m: String, h: &str| CliError::new(ErrorKind::Usage, m).hint(h.to_string());
    if !(1..=WAIT_MAX_S).contains(&a.timeout_s) {
        return Err(usage(
            format!(
                "`timeout_s` must be between 1 and {WAIT_MAX_S}, not {}",
                a.timeout_s
            ),
            "Wait again after a timeout: the answer says `timedOut`.",
        ));
    }
    if a.until.is_empty() {
        return Err(usage(
            "`until` names no state".into(),
            "Name one or more of `idle`, `waiting`, `exited`.",
        ));
    }
    let after = match &a.after {
        None => None,
        Some(t) => Some(Token::parse(t).ok_or_else(|| {
            usage(
                format!("`after` is not a token: `{}`", crate::sanitize::line(t)),
                "Pass the `token` a `box_send` or `box_create` answered, as it is.",
            )
        })?),
    };
    let watched = watched_boxes(dir, a.names.as_deref())?;
    let since = Instant::now();
    let limit = Duration::from_secs(a.timeout_s);
    loop {
        let reached: Vec<Reached> = watched
            .iter()
            .filter_map(|w| w.state(after))
            .filter(|r| a.until.contains(&r.state))
            .collect();
        let done = !reached.is_empty();
        if done || since.elapsed() >= limit || cancelled() {
            return Ok(WaitedDocument {
                schema_version: V1,
                timed_out: !done,
                reached,
                seconds: (since.elapsed().as_millis() as f64) / 1000.0,
            }
            .to_value());
        }
        std::thread::sleep(POLL.min(limit.saturating_sub(since.elapsed())));
    }
}

/// A box `box_wait` looks at.
struct Watched {
    name: String,
    layout: crate::state::Layout,
    leaf: crate::names::Leaf,
}

/// The boxes named (each found as `diff` finds it), or every box of this repository
/// whose agent's session is live now (a box no agent ever ran in would end a wait
/// for `exited` at once).
fn watched_boxes(dir: &Path, names: Option<&[String]>) -> Result<Vec<Watched>, CliError> {
    let (repo, layout) = super::super::here_at(dir)?;
    let entries = match names {
        Some(names) if !names.is_empty() => names
            .iter()
            .map(|n| super::super::sandbox::find_at(dir, n).map(|(_, _, e)| e))
            .collect::<Result<Vec<_>, _>>()?,
        _ => crate::boxes::inventory(&repo, &layout)
            .into_iter()
            .filter(|e| crate::state::session::is_live(&layout.session_path(&e.leaf)))
            .collect(),
    };
    if entries.is_empty() {
        return Err(CliError::new(
            ErrorKind::NoSession,
            "no box of this repository has a live agent session to wait on",
        )
        .hint("Name the boxes with `names`, or start one with `box_create`."));
    }
    Ok(entries
        .into_iter()
        .map(|e| Watched {
            name: e.leaf.to_string(),
            layout: layout.clone(),
            leaf: e.leaf,
        })
        .collect())
}

impl Watched {
    /// Has the agent ended the turn of the prompt `after` was handed out for? Where
    /// its hooks count prompts and turns: it has taken that prompt (more than the
    /// token's count) and ended as many turns as it took prompts, so a prompt typed
    /// while an earlier turn ran, queued behind it, does not end at that turn's end.
    /// Without counts (a token or an agent from before them), its report's time alone
    /// says.
    fn turn_done(&self, after: Option<Token>) -> bool {
        let Some(before) = after.and_then(|t| t.prompts) else {
            return true;
        };
        match crate::runner::oci::status::read_turns(&self.layout, &self.leaf) {
            Some(t) => t.prompts > before && t.stops >= t.prompts,
            None => true,
        }
    }

    /// Where the box's agent is now, as `box_wait` counts it: its report (when made
    /// after `after`) while its session is live; `exited` once it has none.
    fn state(&self, after: Option<Token>) -> Option<Reached> {
        let marker = self.layout.session_path(&self.leaf);
        let reached = |state, exit_code| Reached {
            name: self.name.clone(),
            state,
            exit_code,
        };
        if !crate::state::session::is_live(&marker) {
            return Some(reached(Until::Exited, crate::session::exit_code(&marker)));
        }
        let report = crate::runner::oci::read_status(&self.layout, &self.leaf)?;
        if after.is_some_and(|t| nanos(report.at) < t.at) {
            return None;
        }
        match report.status {
            AgentStatus::Idle if !self.turn_done(after) => None,
            AgentStatus::Idle => Some(reached(Until::Idle, None)),
            AgentStatus::Waiting => Some(reached(Until::Waiting, None)),
            AgentStatus::Working | AgentStatus::Unknown => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_reads_back() {
        let a = Token {
            at: 1_700_000_000_123_456_789,
            prompts: None,
        };
        assert_eq!(a.to_string(), "t1700000000123456789");
        assert_eq!(Token::parse(&a.to_string()), Some(a));
        let b = Token {
            prompts: Some(3),
            ..a
        };
        assert_eq!(b.to_string(), "t1700000000123456789p3");
        assert_eq!(Token::parse(&b.to_string()), Some(b));
        for bad in [
            "", "t", "1700", "t-1", "t12a", "T12", "t 1", "t12p", "tp3", "t1p-1", "t1p1p2",
        ] {
            assert_eq!(Token::parse(bad), None, "{bad}");
        }
    }
}
