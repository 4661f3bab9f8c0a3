//! A scripted lead agent: a stand-in of the model behind a real agent CLI (Claude Code
//! on Anthropic's Messages API, Codex on OpenAI's Responses API, both on one loopback
//! port) that drives treebox's MCP tools (SPEC §10d) as the test's script says.
//!
//! The script is a function from the last tool result the lead got back (none at the
//! start) to the next [`Step`]: call a tool, or finish with a text. The stand-in reads
//! that result out of the conversation each request carries, never from a count of
//! requests, so the CLIs' side calls, warmups and retries change nothing. A request is
//! the lead's when it offers treebox's tools; any other (a title, a summary, a real
//! agent at work inside a box) gets a plain text answer ([`Lead::answer_others`]).
//!
//! What the real CLIs need, found with Claude Code 2.1.332 and Codex 0.163:
//! - Claude Code defers MCP tools behind its `ToolSearch` tool: the request's `tools`
//!   hold `ToolSearch`, and a message lists the deferred names (`mcp__treebox__box_list`
//!   one a line). The stand-in then calls `ToolSearch` with `select:<name>` first; its
//!   result holds a `tool_reference` to the tool, which from then on is in `tools`
//!   (still marked `defer_loading`) and callable. `ENABLE_TOOL_SEARCH=false` lists the
//!   MCP tools in `tools` at once; both work.
//! - Codex puts a model its catalog marks `code_mode_only` (its default and every
//!   gpt-5.6/6.x) in code mode: one `exec` tool running JavaScript, the MCP tools
//!   deferred inside it and named nowhere in the request; `[features]` `code_mode`,
//!   `code_mode_only` and `code_mode_host = false` change nothing. gpt-5.5 gets a
//!   `tool_search` with the MCP tools deferred, unnamed too. A model the catalog does
//!   not know (the test's `model = "treebox-lead"`) gets plain function tools: a
//!   `namespace` tool `mcp__treebox` holding `box_list`…, called by a `function_call`
//!   with `name` and `namespace`. Codex hands the result back as text (`Wall time:
//!   …\nOutput:\n<the tool's text>`) and drops `isError`.
//!
//! A tool's wire name is taken from the request (`mcp__treebox__box_list`, namespace
//! `mcp__treebox` + `box_list`, `treebox.box_list`, a bare `box_list`); the script names
//! tools by their treebox name. Every request is logged, every tool result the lead
//! sent is kept ([`Lead::results`]), and what the stand-in could not do is a fault
//! ([`Lead::faults`]) rather than a hang: it then ends the lead's turn with a text.
//!
//! The stand-in on handmade requests is tested in `lead/tests.rs`; the real CLIs as the
//! lead in `lead/listing.rs` (`box_list`, a refused `box_screen`) and
//! `lead/scenario.rs` (a real Claude Code started in a box, sent a prompt, waited for).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::env::{write_exec, Run, TestEnv, TREEBOX};
use crate::stand_in::{self, Api, Request};

mod listing;
mod scenario;
mod stopping;
#[cfg(test)]
mod tests;
mod wire;

use wire::{
    anthropic_tool_message, anthropic_tool_stream, openai_tool_stream, Call, Conversation, Reply,
    Wire,
};

/// What the lead does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Call treebox's tool `tool` (`box_list`, not a CLI's spelling of it).
    Call { tool: String, arguments: Value },
    /// End the turn with this text.
    Finish(String),
}

impl Step {
    pub fn call(tool: &str, arguments: Value) -> Step {
        Step::Call {
            tool: tool.to_string(),
            arguments,
        }
    }

    pub fn finish(text: &str) -> Step {
        Step::Finish(text.to_string())
    }
}

/// One tool result the lead sent back, as the CLI worded it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// treebox's name of the tool (`box_list`).
    pub tool: String,
    /// The CLI's name of it (`mcp__treebox__box_list`, `mcp__treebox/box_list` for a
    /// namespace and a name).
    pub wire_name: String,
    /// The arguments the lead called it with.
    pub arguments: Value,
    /// The result's text as the CLI sent it (Codex's has a `Wall time` preamble).
    pub content: String,
    /// The CLI's error flag; `None` where its API carries none (Codex).
    pub is_error: Option<bool>,
    pub call_id: String,
    pub api: Api,
}

impl ToolResult {
    /// The tool's JSON document (treebox's text content), `Null` when there is none.
    pub fn document(&self) -> Value {
        let text = match self.content.split_once("\nOutput:\n") {
            Some((head, body)) if head.starts_with("Wall time:") => body,
            _ => &self.content,
        };
        serde_json::from_str(text.trim()).unwrap_or(Value::Null)
    }

    /// The error document's `error` (code, kind, message, hint) of a refusal.
    pub fn error(&self) -> Option<Value> {
        self.document().get("error").cloned()
    }
}

/// One request the stand-in received.
#[derive(Debug, Clone)]
pub struct Logged {
    pub request: Request,
    /// It offered treebox's tools: the lead's.
    pub lead: bool,
    /// The tools it offered by name (deferred ones marked `(deferred)`).
    pub offered: Vec<String>,
    /// When it came, since the stand-in started.
    pub at: Duration,
    /// When its answer had been written whole (`None`: not yet, or never).
    pub answered: Option<Duration>,
}

type Script = dyn Fn(Option<&ToolResult>) -> Step + Send + Sync;

/// The most model requests one lead may make: a CLI in a loop is a fault, not a hang.
const LEAD_REQUEST_LIMIT: usize = 200;

struct Shared {
    script: Box<Script>,
    others: Mutex<String>,
    /// How long an answer to a request that is not the lead's takes.
    others_after: Mutex<Duration>,
    log: Mutex<Vec<Logged>>,
    results: Mutex<Vec<ToolResult>>,
    faults: Mutex<Vec<String>>,
    ids: AtomicUsize,
    lead_requests: AtomicUsize,
    started: Instant,
    /// When each tool result first reached the stand-in (treebox's name of the tool).
    arrived: Mutex<Vec<(String, Duration)>>,
}

/// A running scripted lead; stops (and closes its port) when dropped.
pub struct Lead {
    shared: Arc<Shared>,
    server: stand_in::Listening,
}

impl Lead {
    /// Both APIs on a free loopback port, the lead played by `script`.
    pub fn start(script: impl Fn(Option<&ToolResult>) -> Step + Send + Sync + 'static) -> Lead {
        let shared = Arc::new(Shared {
            script: Box::new(script),
            others: Mutex::new("done".to_string()),
            others_after: Mutex::new(Duration::ZERO),
            log: Mutex::new(Vec::new()),
            results: Mutex::new(Vec::new()),
            faults: Mutex::new(Vec::new()),
            ids: AtomicUsize::new(0),
            lead_requests: AtomicUsize::new(0),
            started: Instant::now(),
            arrived: Mutex::new(Vec::new()),
        });
        let s = Arc::clone(&shared);
        let server = stand_in::Listening::start("127.0.0.1:0", move |conn| {
            let _ = serve(&s, conn);
        });
        Lead { shared, server }
    }

    /// `http://ADDR`: Claude Code's `ANTHROPIC_BASE_URL`; Codex's `base_url` is this
    /// and `/v1`.
    pub fn url(&self) -> String {
        format!("http://{}", self.server.addr())
    }

    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// The text every request that is not the lead's gets.
    pub fn answer_others(&self, text: &str) {
        *self.shared.others.lock().unwrap() = text.to_string();
    }

    /// Answer every request that is not the lead's only after `delay`, as a model
    /// that takes its time (a boxed agent's turn then lasts at least that long).
    pub fn answer_others_after(&self, delay: Duration) {
        *self.shared.others_after.lock().unwrap() = delay;
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Logged> {
        self.shared.log.lock().unwrap().clone()
    }

    /// Every tool result the lead sent, in the order it first sent them.
    pub fn results(&self) -> Vec<ToolResult> {
        self.shared.results.lock().unwrap().clone()
    }

    /// The last result of treebox's tool `tool` the lead sent.
    pub fn result(&self, tool: &str) -> Option<ToolResult> {
        self.results().into_iter().rev().find(|r| r.tool == tool)
    }

    /// When the lead's first request came and each tool result first reached the
    /// stand-in, since it started: `("start", t)`, then `(tool, t)` in order.
    pub fn arrivals(&self) -> Vec<(String, Duration)> {
        self.shared.arrived.lock().unwrap().clone()
    }

    /// What the stand-in could not do as scripted (no such tool offered, a script that
    /// panicked, a lead that would not stop asking).
    pub fn faults(&self) -> Vec<String> {
        self.shared.faults.lock().unwrap().clone()
    }

    /// For a failure message: each request, whose it was, what it offered.
    pub fn describe(&self) -> String {
        self.requests()
            .iter()
            .map(|l| {
                let r = &l.request;
                let whose = if l.lead { "lead" } else { "other" };
                let answered = l.answered.map_or("unanswered".to_string(), |t| {
                    format!("answered {:.2}s", t.as_secs_f64())
                });
                format!(
                    "{:.2}s {} {} [{whose}] ({answered}) offered: {:?}",
                    l.at.as_secs_f64(),
                    r.method,
                    r.path,
                    l.offered
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn serve(s: &Shared, conn: TcpStream) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(30)))?;
    let Some(req) = stand_in::read_request(&conn)? else {
        return Ok(());
    };
    let mut out = conn;
    let api = match (req.method.as_str(), req.route()) {
        ("POST", "/v1/messages") => Api::Anthropic,
        ("POST", "/v1/responses") => Api::OpenAi,
        (method, route) => {
            log(s, &req, false, Vec::new());
            return match (method, route) {
                ("POST", "/v1/messages/count_tokens") => {
                    stand_in::json(&mut out, 200, &json!({"input_tokens": 12}))
                }
                ("GET", "/v1/models") => stand_in::json(
                    &mut out,
                    200,
                    &json!({"object": "list", "data": [], "models": []}),
                ),
                _ => stand_in::json(
                    &mut out,
                    404,
                    &json!({"type": "error", "error": {"type": "not_found_error",
                            "message": format!("lead stand-in: no {route}")}}),
                ),
            };
        }
    };
    let body = req.json();
    let conv = Conversation::read(api, &body);
    let lead = conv.is_lead();
    let logged = log(s, &req, lead, conv.offered.describe());
    let model = body["model"]
        .as_str()
        .unwrap_or("lead-stand-in")
        .to_string();
    let streamed = api == Api::OpenAi || body["stream"].as_bool() == Some(true);
    let reply = if lead {
        lead_reply(s, &conv)
    } else {
        let delay = *s.others_after.lock().unwrap();
        std::thread::sleep(delay);
        Reply::Text(s.others.lock().unwrap().clone())
    };
    let sent = match (api, reply) {
        (Api::Anthropic, Reply::Text(text)) if streamed => {
            stand_in::anthropic_stream(&mut out, &model, &text)
        }
        (Api::Anthropic, Reply::Text(text)) => {
            stand_in::json(&mut out, 200, &stand_in::anthropic_message(&model, &text))
        }
        (Api::OpenAi, Reply::Text(text)) => stand_in::openai_stream(&mut out, &model, &text),
        (Api::Anthropic, Reply::Call(call)) if streamed => {
            anthropic_tool_stream(&mut out, &model, &call)
        }
        (Api::Anthropic, Reply::Call(call)) => {
            stand_in::json(&mut out, 200, &anthropic_tool_message(&model, &call))
        }
        (Api::OpenAi, Reply::Call(call)) => openai_tool_stream(&mut out, &model, &call),
    };
    if sent.is_ok() {
        s.log.lock().unwrap()[logged].answered = Some(s.started.elapsed());
    }
    sent
}

/// Log a request; its index in the log.
fn log(s: &Shared, req: &Request, lead: bool, offered: Vec<String>) -> usize {
    let mut log = s.log.lock().unwrap();
    log.push(Logged {
        request: req.clone(),
        lead,
        offered,
        at: s.started.elapsed(),
        answered: None,
    });
    log.len() - 1
}

fn fault(s: &Shared, what: String) -> Reply {
    s.faults.lock().unwrap().push(what.clone());
    Reply::Text(format!("lead stand-in fault: {what}"))
}

/// The lead's next answer: the script's step for the last result, through the
/// request's own name for the tool (after a tool search where the tool is deferred).
fn lead_reply(s: &Shared, conv: &Conversation) -> Reply {
    let n = s.lead_requests.fetch_add(1, Ordering::SeqCst) + 1;
    if n > LEAD_REQUEST_LIMIT {
        return fault(
            s,
            format!("the lead asked more than {LEAD_REQUEST_LIMIT} times"),
        );
    }
    let history = conv.history();
    {
        let mut kept = s.results.lock().unwrap();
        let mut arrived = s.arrived.lock().unwrap();
        if arrived.is_empty() {
            arrived.push(("start".to_string(), s.started.elapsed()));
        }
        for r in &history {
            if !kept.iter().any(|k| k.call_id == r.call_id) {
                kept.push(r.clone());
                arrived.push((r.tool.clone(), s.started.elapsed()));
            }
        }
    }
    let last = history.last();
    let step = match std::panic::catch_unwind(AssertUnwindSafe(|| (s.script)(last))) {
        Ok(step) => step,
        Err(e) => {
            let why = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|m| m.to_string()))
                .unwrap_or_default();
            let after = last.map_or("the start".to_string(), |r| format!("{r:?}"));
            return fault(s, format!("the script panicked after {after}: {why}"));
        }
    };
    let (tool, arguments) = match step {
        Step::Finish(text) => return Reply::Text(text),
        Step::Call { tool, arguments } => (tool, arguments),
    };
    let id = s.ids.fetch_add(1, Ordering::SeqCst);
    if let Some(wire) = conv.offered.callable(&tool) {
        return Reply::Call(Call {
            id,
            wire: wire.clone(),
            arguments,
        });
    }
    match (conv.offered.deferred(&tool), &conv.offered.search) {
        (Some(name), Some(search)) if conv.last_call_was(search) => fault(
            s,
            format!(
                "`{search}` did not make `{name}` callable: {:?}",
                conv.offered.describe()
            ),
        ),
        (Some(name), Some(search)) => Reply::Call(Call {
            id,
            wire: Wire {
                namespace: None,
                name: search.clone(),
            },
            arguments: json!({"query": format!("select:{name}")}),
        }),
        _ => fault(
            s,
            format!(
                "the lead's request offers no `{tool}`: {:?}",
                conv.offered.describe()
            ),
        ),
    }
}

/// `git treebox mcp` in the repository, for a CLI to start; its stderr goes to
/// `mcp.err` beside the repository, the environment the CLI gave it to `mcp.env`.
fn mcp_server(env: &TestEnv) -> PathBuf {
    let script = env.root().join("treebox-mcp.sh");
    write_exec(
        &script,
        &format!(
            "#!/bin/sh\nenv > {}\nexec {TREEBOX} mcp 2>>{}\n",
            env.root().join("mcp.env").display(),
            env.root().join("mcp.err").display()
        ),
    );
    script
}

/// The real Claude Code as the lead, asked `prompt` in print mode: treebox's server
/// its only MCP server (`--strict-mcp-config`), its tools allowed.
fn claude_lead_args(env: &TestEnv, prompt: &str) -> Vec<String> {
    let mcp = json!({"mcpServers": {"treebox": {"command": mcp_server(env)}}}).to_string();
    [
        "-p",
        prompt,
        "--mcp-config",
        &mcp,
        "--strict-mcp-config",
        "--allowedTools",
        "mcp__treebox",
    ]
    .map(String::from)
    .to_vec()
}

/// `program ARGS` in the repository (at most 120 s), with `vars`.
fn run_in_repo<S: AsRef<std::ffi::OsStr>>(
    env: &TestEnv,
    program: &Path,
    args: &[S],
    vars: &[(&str, &str)],
) -> Run {
    run_in_repo_for(env, 120, program, args, vars)
}

/// [`run_in_repo`], at most `secs`.
fn run_in_repo_for<S: AsRef<std::ffi::OsStr>>(
    env: &TestEnv,
    secs: u32,
    program: &Path,
    args: &[S],
    vars: &[(&str, &str)],
) -> Run {
    let mut c = env.command("timeout", &env.repo);
    c.arg(secs.to_string()).arg(program).args(args);
    // The CLI's own temp dirs (Claude Code's `claude-<uid>`, `cc-socks`) in the test's
    // tree, gone with it, never in the machine's /tmp.
    let tmp = env.root().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    c.env("TMPDIR", &tmp);
    for (k, v) in vars {
        c.env(k, v);
    }
    Run::from_output(c.output().expect("run the agent CLI"))
}
