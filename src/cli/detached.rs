//! A box made and its agent started detached, answered as a document: what the MCP
//! server's `box_create` and another machine's `create` request (issue 41) both do,
//! over [`crate::provision::launch::create_detached`].
//!
//! The document (`docs/schema/box-create.schema.json`) is `create --json`'s (`box`),
//! what the start saw (`agent`), and, when the front end typed a first prompt, its
//! token. An agent that ended before it was ready is a refusal with its exit code and
//! last lines.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::error::{CliError, ErrorKind};
use super::json::{CreateDocument, Document, V1};
use crate::provision::launch::AgentLaunch;
use crate::provision::{CreateRequest, Created};
use crate::session::{detached::Started, Readiness};

/// A box just made, its agent started.
pub(crate) struct Made {
    pub created: Created,
    pub launch: AgentLaunch,
    pub start: AgentStart,
    pub warnings: Vec<String>,
}

impl Made {
    /// The document, with `token` when a first prompt was typed.
    pub fn document(&self, token: Option<String>) -> Value {
        CreatedDocument {
            schema_version: V1,
            created: CreateDocument::created(&self.created, &self.launch.cmd, &self.warnings),
            agent: &self.start,
            token,
        }
        .to_value()
    }
}

/// `create -d` of `req`: provision, start the agent detached, wait until it is ready.
/// `again`: how the user starts the agent themselves, for the refusal of one that
/// exited (`git treebox enter NAME`).
pub(crate) fn create(
    req: &CreateRequest,
    cfg: &crate::config::UserConfig,
) -> Result<Made, CliError> {
    let mut warnings = Warnings(Vec::new());
    let (created, launch, started) =
        crate::provision::launch::create_detached(req, cfg, &mut warnings)
            .map_err(super::create::from_launch)?;
    let start = agent_start(&created.plan.name, &launch, started)?;
    Ok(Made {
        created,
        launch,
        start,
        warnings: warnings.0,
    })
}

/// `docs/schema/box-create.schema.json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CreatedDocument<'a> {
    schema_version: V1,
    /// The box: `create --json`'s document, as it is.
    #[serde(rename = "box")]
    created: CreateDocument<'a>,
    agent: &'a AgentStart,
    /// `box_send`'s token for the first prompt, when one was typed.
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<String>,
}

impl Document for CreatedDocument<'_> {}

/// What starting the agent came to.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AgentStart {
    /// `ready` (at its prompt), `asks` (it waits at a screen for a person), `notReady`
    /// (neither within the wait), `alreadyRunning` (the box's session was live).
    pub state: &'static str,
    /// The screen's words that wait for a person (`asks`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asks: Option<String>,
    /// The screen's last lines (`asks`, `notReady`).
    pub last_lines: Vec<String>,
    /// Warnings about the launch (a trust the agent will ask for, root).
    pub warnings: Vec<String>,
}

/// Provisioning's warnings, kept for the answer.
struct Warnings(Vec<String>);

impl crate::provision::Reporter for Warnings {
    fn stage(&mut self, _: &str) {}
    fn stage_done(&mut self, _: &str, _: Duration) {}
    fn warn(&mut self, message: String) {
        self.0.push(message);
    }
    fn note(&mut self, _: String) {}
}

/// What the start saw; an agent that ended first is a refusal with its exit code and
/// last lines.
fn agent_start(name: &str, agent: &AgentLaunch, started: Started) -> Result<AgentStart, CliError> {
    let mut warnings: Vec<String> = agent.will_ask.iter().cloned().collect();
    if agent.as_root == crate::harness::AsRoot::Refuses {
        warnings.push(
            "Claude Code refuses to run as root with --dangerously-skip-permissions: the user allows it with `\"harnesses\": {\"claude\": {\"allowRoot\": true}}`".into(),
        );
    }
    let (state, asks, last_lines) = match started {
        Started::AlreadyRunning => ("alreadyRunning", None, Vec::new()),
        Started::Now(Readiness::Ready) => ("ready", None, Vec::new()),
        Started::Now(Readiness::Asks { what, last }) => ("asks", Some(what), last),
        Started::Now(Readiness::NotYet { last }) => ("notReady", None, last),
        Started::Now(Readiness::Exited { code, last }) => {
            let q = crate::cmd::quote(name);
            let mut e = CliError::new(
                ErrorKind::AgentExited,
                format!("the agent of box `{name}` exited with code {code} before it was ready"),
            )
            .hint(format!(
                "Its last lines are below; start it on a terminal with `git treebox enter {q}`, or remove the box."
            ));
            if !last.is_empty() {
                e = e.caused_by(std::io::Error::other(format!(
                    "its last lines:\n{}",
                    last.join("\n")
                )));
            }
            for w in warnings {
                e = e.hint(w);
            }
            return Err(e);
        }
    };
    Ok(AgentStart {
        state,
        asks,
        last_lines,
        warnings,
    })
}
