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

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::env::{write_exec, Run, TestEnv, TREEBOX};
use crate::stand_in::{self, Api, Request};

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
}

type Script = dyn Fn(Option<&ToolResult>) -> Step + Send + Sync;

/// The most model requests one lead may make: a CLI in a loop is a fault, not a hang.
const LEAD_REQUEST_LIMIT: usize = 200;

struct Shared {
    script: Box<Script>,
    others: Mutex<String>,
    log: Mutex<Vec<Logged>>,
    results: Mutex<Vec<ToolResult>>,
    faults: Mutex<Vec<String>>,
    ids: AtomicUsize,
    lead_requests: AtomicUsize,
    stop: AtomicBool,
}

/// A running scripted lead; stops (and closes its port) when dropped.
pub struct Lead {
    addr: SocketAddr,
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Lead {
    /// Both APIs on a free loopback port, the lead played by `script`.
    pub fn start(script: impl Fn(Option<&ToolResult>) -> Step + Send + Sync + 'static) -> Lead {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            script: Box::new(script),
            others: Mutex::new("done".to_string()),
            log: Mutex::new(Vec::new()),
            results: Mutex::new(Vec::new()),
            faults: Mutex::new(Vec::new()),
            ids: AtomicUsize::new(0),
            lead_requests: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        });
        let s = Arc::clone(&shared);
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let s = Arc::clone(&s);
                std::thread::spawn(move || {
                    let _ = serve(&s, conn);
                });
            }
        });
        Lead {
            addr,
            shared,
            thread: Some(thread),
        }
    }

    /// `http://ADDR`: Claude Code's `ANTHROPIC_BASE_URL`; Codex's `base_url` is this
    /// and `/v1`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The text every request that is not the lead's gets.
    pub fn answer_others(&self, text: &str) {
        *self.shared.others.lock().unwrap() = text.to_string();
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
                format!("{} {} [{whose}] offered: {:?}", r.method, r.path, l.offered)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Lead {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees `stop`.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn read_request(conn: &TcpStream) -> std::io::Result<Option<Request>> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 {
            break;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v);
    let body = if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        stand_in::read_chunked(&mut reader)?
    } else {
        let n: usize = header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut b = vec![0; n];
        reader.read_exact(&mut b)?;
        b
    };
    Ok(Some(Request {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }))
}

fn serve(s: &Shared, conn: TcpStream) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(30)))?;
    let Some(req) = read_request(&conn)? else {
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
    log(s, &req, lead, conv.offered.describe());
    let model = body["model"]
        .as_str()
        .unwrap_or("lead-stand-in")
        .to_string();
    let streamed = api == Api::OpenAi || body["stream"].as_bool() == Some(true);
    let reply = if lead {
        lead_reply(s, &conv)
    } else {
        Reply::Text(s.others.lock().unwrap().clone())
    };
    match (api, reply) {
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
    }
}

fn log(s: &Shared, req: &Request, lead: bool, offered: Vec<String>) {
    s.log.lock().unwrap().push(Logged {
        request: req.clone(),
        lead,
        offered,
    });
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
        for r in &history {
            if !kept.iter().any(|k| k.call_id == r.call_id) {
                kept.push(r.clone());
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

/// A tool as a request names it: a name, in a namespace for Codex's namespace tools.
#[derive(Debug, Clone, PartialEq)]
struct Wire {
    namespace: Option<String>,
    name: String,
}

impl Wire {
    fn full(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.clone(),
        }
    }

    /// treebox's name of this tool, when it is one of treebox's.
    fn treebox_tool(&self) -> Option<String> {
        if self
            .namespace
            .as_deref()
            .is_some_and(|ns| ns.to_ascii_lowercase().contains("treebox"))
        {
            return Some(self.name.clone());
        }
        treebox_tool(&self.name)
    }
}

/// `mcp__treebox__box_list`, `treebox.box_list`, `treebox/box_list`, `box_list`:
/// `box_list`.
fn treebox_tool(name: &str) -> Option<String> {
    if name.to_ascii_lowercase().contains("treebox") {
        let cut = ["__", ".", "/", ":"]
            .iter()
            .filter_map(|sep| name.rfind(sep).map(|i| i + sep.len()))
            .max()?;
        let short = &name[cut..];
        return (!short.is_empty() && !short.to_ascii_lowercase().contains("treebox"))
            .then(|| short.to_string());
    }
    name.starts_with("box_").then(|| name.to_string())
}

/// The tools a request offers.
#[derive(Debug, Default)]
struct Offered {
    callable: Vec<Wire>,
    /// treebox's tools the request names as loadable through `search`.
    deferred: Vec<String>,
    /// The tool that loads deferred tools (Claude Code's `ToolSearch`).
    search: Option<String>,
}

impl Offered {
    fn callable(&self, tool: &str) -> Option<&Wire> {
        self.callable
            .iter()
            .find(|w| w.treebox_tool().as_deref() == Some(tool))
    }

    fn deferred(&self, tool: &str) -> Option<&String> {
        self.deferred
            .iter()
            .find(|d| treebox_tool(d).as_deref() == Some(tool))
    }

    fn describe(&self) -> Vec<String> {
        let now = self.callable.iter().map(Wire::full);
        let later = self.deferred.iter().map(|d| format!("{d} (deferred)"));
        now.chain(later).collect()
    }
}

/// What a model request carries: the tools it offers, the calls made and their results.
struct Conversation {
    api: Api,
    offered: Offered,
    calls: Vec<(String, Wire, Value)>,
    /// (call id, text, error flag), in the conversation's order.
    results: Vec<(String, String, Option<bool>)>,
}

impl Conversation {
    fn read(api: Api, body: &Value) -> Conversation {
        let mut c = Conversation {
            api,
            offered: Offered::default(),
            calls: Vec::new(),
            results: Vec::new(),
        };
        match api {
            Api::Anthropic => c.read_anthropic(body),
            Api::OpenAi => c.read_openai(body),
        }
        c
    }

    fn read_anthropic(&mut self, body: &Value) {
        let mut texts = Vec::new();
        collect_texts(&body["system"], &mut texts);
        // The tools a tool search loaded: `tool_reference`s in its results.
        let mut loaded = Vec::new();
        for m in array(&body["messages"]) {
            let blocks = match &m["content"] {
                Value::Array(b) => b.as_slice(),
                other => std::slice::from_ref(other),
            };
            for b in blocks {
                match b["type"].as_str() {
                    Some("tool_use") => self.calls.push((
                        b["id"].as_str().unwrap_or("").to_string(),
                        Wire {
                            namespace: None,
                            name: b["name"].as_str().unwrap_or("").to_string(),
                        },
                        b["input"].clone(),
                    )),
                    Some("tool_result") => {
                        let mut text = Vec::new();
                        collect_texts(&b["content"], &mut text);
                        self.results.push((
                            b["tool_use_id"].as_str().unwrap_or("").to_string(),
                            text.concat(),
                            Some(b["is_error"].as_bool().unwrap_or(false)),
                        ));
                        loaded.extend(
                            array(&b["content"])
                                .iter()
                                .filter(|c| c["type"] == "tool_reference")
                                .filter_map(|c| c["tool_name"].as_str())
                                .map(str::to_string),
                        );
                    }
                    _ => collect_texts(b, &mut texts),
                }
            }
        }
        let mut deferred = Vec::new();
        for t in array(&body["tools"]) {
            let Some(name) = t["name"].as_str() else {
                continue;
            };
            // A `defer_loading` tool is callable once a tool search has loaded it.
            if t["defer_loading"].as_bool() != Some(true) || loaded.iter().any(|l| l == name) {
                self.offered.callable.push(Wire {
                    namespace: None,
                    name: name.to_string(),
                });
            } else {
                deferred.push(name);
            }
            let lower = name.to_ascii_lowercase();
            if lower.contains("toolsearch") || lower.contains("tool_search") {
                self.offered.search = Some(name.to_string());
            }
        }
        if self.offered.search.is_none() {
            return;
        }
        // The deferred tools not in `tools` are listed one a line in a message from
        // the system.
        let listed = texts
            .iter()
            .flat_map(|t| t.lines())
            .map(str::trim)
            .filter(|name| {
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_-.:/".contains(c))
            });
        for name in deferred.into_iter().chain(listed) {
            let known = self.offered.callable.iter().any(|w| w.name == name)
                || self.offered.deferred.iter().any(|d| d == name);
            if !known && treebox_tool(name).is_some() {
                self.offered.deferred.push(name.to_string());
            }
        }
    }

    fn read_openai(&mut self, body: &Value) {
        let mut tools: Vec<Value> = array(&body["tools"]).to_vec();
        for item in array(&body["input"]) {
            match item["type"].as_str() {
                // Code mode's tools come as an input item.
                Some("additional_tools") => tools.extend(array(&item["tools"]).iter().cloned()),
                Some("function_call") => {
                    let arguments = item["arguments"]
                        .as_str()
                        .and_then(|a| serde_json::from_str(a).ok())
                        .unwrap_or(Value::Null);
                    self.calls.push((
                        item["call_id"].as_str().unwrap_or("").to_string(),
                        Wire {
                            namespace: item["namespace"].as_str().map(str::to_string),
                            name: item["name"].as_str().unwrap_or("").to_string(),
                        },
                        arguments,
                    ));
                }
                Some("function_call_output") => {
                    // A string, a list of content items, or (an older Codex)
                    // `{content, success}`.
                    let output = &item["output"];
                    let mut text = Vec::new();
                    collect_texts(output.get("content").unwrap_or(output), &mut text);
                    self.results.push((
                        item["call_id"].as_str().unwrap_or("").to_string(),
                        text.concat(),
                        output["success"].as_bool().map(|ok| !ok),
                    ));
                }
                _ => {}
            }
        }
        for t in &tools {
            let Some(name) = t["name"].as_str() else {
                continue;
            };
            if t["type"] == "namespace" {
                for inner in array(&t["tools"]) {
                    if let Some(n) = inner["name"].as_str() {
                        self.offered.callable.push(Wire {
                            namespace: Some(name.to_string()),
                            name: n.to_string(),
                        });
                    }
                }
            } else {
                self.offered.callable.push(Wire {
                    namespace: None,
                    name: name.to_string(),
                });
            }
        }
    }

    /// The request offers treebox's tools, now or through a search.
    fn is_lead(&self) -> bool {
        !self.offered.deferred.is_empty()
            || self
                .offered
                .callable
                .iter()
                .any(|w| w.treebox_tool().is_some())
    }

    /// The results of treebox's tools, in order (a tool search's are the stand-in's own
    /// business, not the script's).
    fn history(&self) -> Vec<ToolResult> {
        self.results
            .iter()
            .filter_map(|(id, content, is_error)| {
                let (_, wire, arguments) = self.calls.iter().find(|(c, _, _)| c == id)?;
                Some(ToolResult {
                    tool: wire.treebox_tool()?,
                    wire_name: wire.full(),
                    arguments: arguments.clone(),
                    content: content.clone(),
                    is_error: *is_error,
                    call_id: id.clone(),
                    api: self.api,
                })
            })
            .collect()
    }

    /// The conversation's last result is one of `tool`'s.
    fn last_call_was(&self, tool: &str) -> bool {
        self.results.last().is_some_and(|(id, _, _)| {
            self.calls
                .iter()
                .any(|(c, w, _)| c == id && w.namespace.is_none() && w.name == tool)
        })
    }
}

fn array(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// The texts of a string, a text block, or a list of them.
fn collect_texts(v: &Value, into: &mut Vec<String>) {
    match v {
        Value::String(s) => into.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| collect_texts(i, into)),
        Value::Object(o) => {
            if let Some(Value::String(t)) = o.get("text") {
                into.push(t.clone());
            }
        }
        _ => {}
    }
}

enum Reply {
    Text(String),
    Call(Call),
}

struct Call {
    id: usize,
    wire: Wire,
    arguments: Value,
}

fn anthropic_tool_message(model: &str, call: &Call) -> Value {
    json!({
        "id": format!("msg_lead_{}", call.id),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "tool_use", "id": format!("toolu_lead_{}", call.id),
                     "name": call.wire.name, "input": call.arguments}],
        "stop_reason": "tool_use",
        "stop_sequence": null,
        "usage": {"input_tokens": 12, "output_tokens": 5}
    })
}

fn anthropic_tool_stream(out: &mut TcpStream, model: &str, call: &Call) -> std::io::Result<()> {
    stand_in::sse_head(out)?;
    stand_in::event(
        out,
        "message_start",
        json!({"type": "message_start", "message": {
            "id": format!("msg_lead_{}", call.id), "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 12, "output_tokens": 1}
        }}),
    )?;
    stand_in::event(
        out,
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": format!("toolu_lead_{}", call.id),
            "name": call.wire.name, "input": {}
        }}),
    )?;
    stand_in::event(
        out,
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": call.arguments.to_string()
        }}),
    )?;
    stand_in::event(
        out,
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    )?;
    stand_in::event(
        out,
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
               "usage": {"output_tokens": 5}}),
    )?;
    stand_in::event(out, "message_stop", json!({"type": "message_stop"}))
}

fn openai_tool_stream(out: &mut TcpStream, model: &str, call: &Call) -> std::io::Result<()> {
    let item_id = format!("fc_lead_{}", call.id);
    let arguments = call.arguments.to_string();
    let item = |status: &str, arguments: &str| {
        let mut item = json!({
            "id": item_id, "type": "function_call", "status": status,
            "call_id": format!("call_lead_{}", call.id),
            "name": call.wire.name, "arguments": arguments
        });
        if let Some(ns) = &call.wire.namespace {
            item["namespace"] = json!(ns);
        }
        item
    };
    let response = |status: &str, output: Value| {
        json!({"id": format!("resp_lead_{}", call.id), "object": "response", "created_at": 0,
               "status": status, "model": model, "output": output})
    };
    stand_in::sse_head(out)?;
    stand_in::event(
        out,
        "response.created",
        json!({"type": "response.created", "response": response("in_progress", json!([]))}),
    )?;
    stand_in::event(
        out,
        "response.output_item.added",
        json!({"type": "response.output_item.added", "output_index": 0,
               "item": item("in_progress", "")}),
    )?;
    stand_in::event(
        out,
        "response.function_call_arguments.delta",
        json!({"type": "response.function_call_arguments.delta", "item_id": item_id,
               "output_index": 0, "delta": arguments}),
    )?;
    stand_in::event(
        out,
        "response.function_call_arguments.done",
        json!({"type": "response.function_call_arguments.done", "item_id": item_id,
               "output_index": 0, "arguments": arguments}),
    )?;
    let done = item("completed", &arguments);
    stand_in::event(
        out,
        "response.output_item.done",
        json!({"type": "response.output_item.done", "output_index": 0, "item": done.clone()}),
    )?;
    let mut completed = response("completed", json!([done]));
    completed["usage"] = json!({
        "input_tokens": 12, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 17
    });
    stand_in::event(
        out,
        "response.completed",
        json!({"type": "response.completed", "response": completed}),
    )
}

/// A host box made without an agent (no session).
fn host_box(env: &TestEnv, name: &str) {
    env.treebox(&[
        "create",
        name,
        "--isolation",
        "host",
        "--no-launch",
        "--no-fetch",
    ])
    .ok();
}

/// `git treebox mcp` in the repository, for a CLI to start; its stderr goes to
/// `mcp.err` beside the repository.
fn mcp_server(env: &TestEnv) -> PathBuf {
    let script = env.root().join("treebox-mcp.sh");
    write_exec(
        &script,
        &format!(
            "#!/bin/sh\nexec {TREEBOX} mcp 2>>{}\n",
            env.root().join("mcp.err").display()
        ),
    );
    script
}

/// `program ARGS` in the repository (at most 120 s), with `vars`.
fn run_in_repo(env: &TestEnv, program: &Path, args: &[&str], vars: &[(&str, &str)]) -> Run {
    let mut c = env.command("timeout", &env.repo);
    c.arg("120").arg(program).args(args);
    for (k, v) in vars {
        c.env(k, v);
    }
    Run::from_output(c.output().expect("run the agent CLI"))
}

/// The processes still working in the test's directory (the CLI, its MCP server),
/// once they have had 10 s to go.
fn left_running(env: &TestEnv) -> Vec<i32> {
    let root = env.root();
    let mine = || {
        crate::env::processes_where(|p| {
            std::fs::read_link(p.join("cwd")).is_ok_and(|cwd| cwd.starts_with(&root))
        })
    };
    let since = Instant::now();
    while !mine().is_empty() && since.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    mine()
}

/// What the lead says when it is done.
const DONE: &str = "LEAD-DONE: listed the boxes and read a screen";

/// `box_list`, then `box_screen` on the first box it lists, then done.
fn list_then_screen(last: Option<&ToolResult>) -> Step {
    match last {
        None => Step::call("box_list", json!({})),
        Some(r) if r.tool == "box_list" => Step::call(
            "box_screen",
            json!({"name": r.document()["boxes"][0]["name"]}),
        ),
        Some(_) => Step::finish(DONE),
    }
}

/// The CLI ran [`list_then_screen`] to its end: `box_list` answered with `list --json`'s
/// document, `box_screen` on `alpha` refused (no session: code 3), exit 0, nothing left
/// running. `flagged`: the CLI passes the tools' error flag to the model.
#[track_caller]
fn drove_list_then_screen(lead: &Lead, env: &TestEnv, what: &str, run: &Run, flagged: bool) {
    let said = || {
        let err = std::fs::read_to_string(env.root().join("mcp.err")).unwrap_or_default();
        format!(
            "{what}: {run:?}\nmcp.err: {err}\nrequests:\n{}",
            lead.describe()
        )
    };
    assert_eq!(lead.faults(), Vec::<String>::new(), "{}", said());
    assert_eq!(run.code, 0, "{}", said());
    assert!(run.stdout.contains(DONE), "{}", said());
    let results = lead.results();
    let tools: Vec<&str> = results.iter().map(|r| r.tool.as_str()).collect();
    assert_eq!(tools, ["box_list", "box_screen"], "{}", said());
    let (list, screen) = (&results[0], &results[1]);
    assert_eq!(lead.result("box_screen").as_ref(), Some(screen));

    let doc = list.document();
    crate::schema::assert_valid("list", &doc, what);
    assert_eq!(doc, env.treebox(&["list", "--json"]).ok().json(), "{what}");
    assert_eq!(crate::env::named(&doc, "boxes", "alpha")["session"], "none");
    assert_eq!(list.is_error, flagged.then_some(false), "{what}: {list:?}");

    assert_eq!(screen.arguments, json!({"name": "alpha"}), "{what}");
    assert_eq!(
        screen.is_error,
        flagged.then_some(true),
        "{what}: {screen:?}"
    );
    crate::schema::assert_valid("error", &screen.document(), what);
    let e = screen.error().unwrap_or_default();
    assert_eq!(
        (e["code"].clone(), e["kind"].clone()),
        (json!(3), json!("no-session")),
        "{what}: {screen:?}"
    );
    assert!(
        e["hint"]
            .as_str()
            .is_some_and(|h| h.contains("git treebox enter -d alpha")),
        "{what}: {e}"
    );
    assert_eq!(left_running(env), Vec::<i32>::new(), "{what} left these");
}

/// The real Claude Code as the lead (`claude -p` with treebox's server from
/// `--mcp-config`), with its tool search on (the MCP tools deferred behind
/// `ToolSearch`) and off (`ENABLE_TOOL_SEARCH=false`).
#[test]
fn lead_the_real_claude_lists_the_boxes_and_reads_a_refused_screen() {
    let Some(dir) = crate::real_agents::agents_dir("claude") else {
        return;
    };
    for tool_search in [None, Some("false")] {
        let env = TestEnv::new();
        host_box(&env, "alpha");
        let lead = Lead::start(list_then_screen);
        let mcp = json!({"mcpServers": {"treebox": {"command": mcp_server(&env)}}}).to_string();
        let url = lead.url();
        let mut vars = vec![
            ("ANTHROPIC_BASE_URL", url.as_str()),
            ("ANTHROPIC_API_KEY", "sk-ant-stand-in-0123456789abcdefghij"),
        ];
        if let Some(v) = tool_search {
            vars.push(("ENABLE_TOOL_SEARCH", v));
        }
        let run = run_in_repo(
            &env,
            &dir.join("claude"),
            &[
                "-p",
                "List the treebox boxes, then read the first one's screen.",
                "--mcp-config",
                &mcp,
                "--strict-mcp-config",
                "--allowedTools",
                "mcp__treebox",
            ],
            &vars,
        );
        let what = format!("claude (ENABLE_TOOL_SEARCH={tool_search:?})");
        drove_list_then_screen(&lead, &env, &what, &run, true);
        if tool_search == Some("false") {
            let deferred = lead
                .requests()
                .iter()
                .any(|l| l.offered.iter().any(|o| o.ends_with("(deferred)")));
            assert!(!deferred, "{what}: tools deferred:\n{}", lead.describe());
        }
    }
}

/// The real Codex as the lead (`codex exec`, treebox's server an `mcp_servers` entry),
/// on a model its catalog does not know, so that the MCP tools are function tools
/// rather than code mode's JavaScript.
#[test]
fn lead_the_real_codex_lists_the_boxes_and_reads_a_refused_screen() {
    let Some(dir) = crate::real_agents::agents_dir("codex") else {
        return;
    };
    let env = TestEnv::new();
    host_box(&env, "alpha");
    let lead = Lead::start(list_then_screen);
    let config = format!(
        "model_provider = \"stand-in\"\nmodel = \"treebox-lead\"\n\n[model_providers.stand-in]\nname = \"stand-in\"\nbase_url = \"{url}/v1\"\nwire_api = \"responses\"\nenv_key = \"{key}\"\n\n[features]\ndaemon_auto_start = false\n\n[mcp_servers.treebox]\ncommand = \"{server}\"\n",
        url = lead.url(),
        key = crate::real_agents::CODEX_KEY_VAR,
        server = mcp_server(&env).display(),
    );
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    std::fs::write(env.home.join(".codex/config.toml"), config).unwrap();
    let run = run_in_repo(
        &env,
        &dir.join("codex"),
        &[
            "exec",
            "--skip-git-repo-check",
            "List the treebox boxes, then read the first one's screen.",
        ],
        &[(crate::real_agents::CODEX_KEY_VAR, "sk-stand-in-openai")],
    );
    // Codex hands the model a tool's text and not its error flag.
    drove_list_then_screen(&lead, &env, "codex", &run, false);
    let list = lead.result("box_list").unwrap();
    assert!(list.wire_name.contains("treebox"), "{list:?}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `POST path body`: the answer's body.
    fn post(lead: &Lead, path: &str, body: &Value) -> String {
        let body = body.to_string();
        let mut c = TcpStream::connect(lead.addr()).unwrap();
        write!(
            c,
            "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut out = String::new();
        c.read_to_string(&mut out).unwrap();
        out.split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or(out)
    }

    /// The `data:` of each event of an event stream.
    fn events(stream: &str) -> Vec<Value> {
        stream
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    /// Anthropic: the tool_use block a streamed answer calls (its id, name, input), or
    /// its text.
    fn anthropic_answer(stream: &str) -> Result<(String, String, Value), String> {
        let ev = events(stream);
        let stop = ev
            .iter()
            .find(|e| e["type"] == "message_delta")
            .map(|e| e["delta"]["stop_reason"].clone())
            .unwrap();
        let start = ev
            .iter()
            .find(|e| e["type"] == "content_block_start")
            .unwrap();
        let delta = ev
            .iter()
            .find(|e| e["type"] == "content_block_delta")
            .unwrap();
        if start["content_block"]["type"] == "tool_use" {
            assert_eq!(stop, "tool_use");
            let block = &start["content_block"];
            let input = serde_json::from_str(delta["delta"]["partial_json"].as_str().unwrap());
            Ok((
                block["id"].as_str().unwrap().to_string(),
                block["name"].as_str().unwrap().to_string(),
                input.unwrap(),
            ))
        } else {
            assert_eq!(stop, "end_turn");
            Err(delta["delta"]["text"].as_str().unwrap().to_string())
        }
    }

    fn tools(names: &[&str]) -> Value {
        names
            .iter()
            .map(|n| json!({"name": n, "input_schema": {"type": "object"}}))
            .collect()
    }

    #[test]
    fn the_lead_plays_its_script_on_claudes_api_from_the_results_it_is_sent() {
        let lead = Lead::start(list_then_screen);
        lead.answer_others("OTHER");
        let offered = tools(&["Bash", "mcp__treebox__box_list", "mcp__treebox__box_screen"]);
        let go = json!({"role": "user", "content": "go"});
        let ask = |messages: Vec<Value>| {
            let body =
                json!({"model": "m", "stream": true, "tools": offered, "messages": messages});
            anthropic_answer(&post(&lead, "/v1/messages?beta=true", &body))
        };
        let (id, name, input) = ask(vec![go.clone()]).unwrap();
        assert_eq!(
            (name.as_str(), input),
            ("mcp__treebox__box_list", json!({}))
        );
        // A retry of the same request: the same step, whatever the count.
        let (again, name, _) = ask(vec![go.clone()]).unwrap();
        assert_eq!(name, "mcp__treebox__box_list");
        assert_ne!(again, id, "every call has an id of its own");

        let listed = json!({"boxes": [{"name": "alpha"}]}).to_string();
        let mut messages = vec![
            go.clone(),
            json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": id, "name": "mcp__treebox__box_list", "input": {}}]}),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": [{"type": "text", "text": listed}]}]}),
        ];
        let (screen_id, name, input) = ask(messages.clone()).unwrap();
        assert_eq!(
            (name.as_str(), input),
            ("mcp__treebox__box_screen", json!({"name": "alpha"}))
        );

        // Not the lead's (no treebox tool), streamed or not: the others' text.
        let side =
            json!({"model": "m", "stream": true, "tools": tools(&["Bash"]), "messages": [go]});
        let side = post(&lead, "/v1/messages", &side);
        assert_eq!(anthropic_answer(&side), Err("OTHER".to_string()));
        let title = post(
            &lead,
            "/v1/messages",
            &json!({"model": "m", "messages": []}),
        );
        assert!(title.contains(r#""text":"OTHER""#), "{title}");
        let count = post(&lead, "/v1/messages/count_tokens", &json!({}));
        assert!(count.contains("input_tokens"), "{count}");

        let refused = json!({"error": {"code": 3, "kind": "no-session"}, "schemaVersion": 1});
        messages.push(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": screen_id, "name": "mcp__treebox__box_screen", "input": {"name": "alpha"}}]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": screen_id, "content": refused.to_string(), "is_error": true},
            {"type": "text", "text": "a reminder"}]}));
        assert_eq!(ask(messages), Err(DONE.to_string()));

        let results = lead.results();
        assert_eq!(results.len(), 2, "{results:#?}");
        assert_eq!(results[0].tool, "box_list");
        assert_eq!(
            results[0].document(),
            serde_json::from_str::<Value>(&listed).unwrap()
        );
        assert_eq!(results[0].is_error, Some(false));
        assert_eq!(results[1].wire_name, "mcp__treebox__box_screen");
        assert_eq!(results[1].arguments, json!({"name": "alpha"}));
        assert_eq!(results[1].is_error, Some(true));
        assert_eq!(results[1].error().unwrap()["code"], 3);
        let leads = lead.requests().iter().filter(|l| l.lead).count();
        assert_eq!((leads, lead.requests().len()), (4, 7));
        assert_eq!(lead.faults(), Vec::<String>::new());
    }

    #[test]
    fn a_deferred_tool_is_searched_for_first() {
        let lead = Lead::start(list_then_screen);
        let listing = "Deferred tools, load them with ToolSearch:\nWebFetch\nmcp__treebox__box_list\nmcp__treebox__box_screen\n";
        let first = json!({"model": "m", "stream": true,
            "tools": tools(&["Bash", "ToolSearch"]),
            "messages": [{"role": "user", "content": [{"type": "text", "text": listing}, {"type": "text", "text": "go"}]}]});
        let (id, name, input) = anthropic_answer(&post(&lead, "/v1/messages", &first)).unwrap();
        assert_eq!(
            (name.as_str(), input),
            (
                "ToolSearch",
                json!({"query": "select:mcp__treebox__box_list"})
            )
        );
        // Loaded (a `tool_reference` in the search's result, the tool in `tools` still
        // marked `defer_loading`): the step is the same, and the call goes through.
        let search = |result: Value| {
            let mut next = first.clone();
            next["tools"] = json!([
                {"name": "Bash", "input_schema": {"type": "object"}},
                {"name": "ToolSearch", "input_schema": {"type": "object"}},
                {"name": "DeferredToolPlaceholder", "input_schema": {"type": "object"}, "defer_loading": true},
                {"name": "mcp__treebox__box_list", "input_schema": {"type": "object"}, "defer_loading": true}
            ]);
            let messages = next["messages"].as_array_mut().unwrap();
            messages.push(json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": id, "name": "ToolSearch", "input": {"query": "select:mcp__treebox__box_list"}}]}));
            messages.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": result},
                {"type": "text", "text": "Tool loaded."}]}));
            anthropic_answer(&post(&lead, "/v1/messages", &next))
        };
        let loaded =
            search(json!([{"type": "tool_reference", "tool_name": "mcp__treebox__box_list"}]));
        assert_eq!(loaded.unwrap().1, "mcp__treebox__box_list");
        assert_eq!(
            lead.results(),
            Vec::<ToolResult>::new(),
            "a search is no result"
        );
        // A search that loaded nothing is a fault, not a loop.
        let said = search(json!("No matching deferred tools found")).unwrap_err();
        assert!(said.contains("fault"), "{said}");
        assert_eq!(lead.faults().len(), 1, "{:?}", lead.faults());
        assert!(lead.faults()[0].contains("mcp__treebox__box_list"));
    }

    #[test]
    fn the_lead_plays_its_script_on_codexs_api_through_a_namespace() {
        let lead = Lead::start(list_then_screen);
        lead.answer_others("OTHER");
        let offered = json!([
            {"type": "function", "name": "exec_command", "parameters": {}},
            {"type": "namespace", "name": "mcp__treebox", "description": "",
             "tools": [{"type": "function", "name": "box_list", "parameters": {}},
                       {"type": "function", "name": "box_screen", "parameters": {}}]}
        ]);
        let go = json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]});
        let ask = |input: Vec<Value>| {
            let body = json!({"model": "m", "stream": true, "tools": offered, "input": input});
            let ev = events(&post(&lead, "/v1/responses", &body));
            let done = ev
                .iter()
                .find(|e| e["type"] == "response.output_item.done")
                .unwrap();
            assert!(ev.iter().any(|e| e["type"] == "response.completed"));
            done["item"].clone()
        };
        let call = ask(vec![go.clone()]);
        assert_eq!(call["type"], "function_call");
        assert_eq!(
            (&call["namespace"], &call["name"]),
            (&json!("mcp__treebox"), &json!("box_list"))
        );
        assert_eq!(call["arguments"], "{}");
        let output = format!(
            "Wall time: 0.0031 seconds\nOutput:\n{}",
            json!({"boxes": [{"name": "alpha"}]})
        );
        let input = vec![
            go.clone(),
            call.clone(),
            json!({"type": "function_call_output", "call_id": call["call_id"], "output": output}),
        ];
        let screen = ask(input);
        assert_eq!(screen["name"], "box_screen");
        assert_eq!(screen["arguments"], json!({"name": "alpha"}).to_string());
        // Code mode (an `exec` tool, the MCP tools in it and unnamed) is not the lead.
        let code_mode = json!({"model": "m", "stream": true, "input": [
            {"type": "additional_tools", "tools": [{"type": "namespace", "name": "functions",
              "tools": [{"type": "custom", "name": "exec"}]}]}, go]});
        let text = post(&lead, "/v1/responses", &code_mode);
        assert!(
            text.contains("OTHER") && !text.contains("function_call"),
            "{text}"
        );

        let results = lead.results();
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].wire_name, "mcp__treebox/box_list");
        assert_eq!(results[0].is_error, None);
        assert_eq!(results[0].document()["boxes"][0]["name"], "alpha");
        let models = {
            let mut c = TcpStream::connect(lead.addr()).unwrap();
            write!(c, "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
            let mut out = String::new();
            c.read_to_string(&mut out).unwrap();
            out
        };
        assert!(models.starts_with("HTTP/1.1 200"), "{models}");
    }

    #[test]
    fn a_tool_not_offered_or_a_panicking_script_is_a_fault_that_ends_the_turn() {
        let lead = Lead::start(|last| match last {
            None => Step::call("box_create", json!({"name": "w"})),
            Some(_) => panic!("no result expected"),
        });
        let body = json!({"model": "m", "stream": true,
            "tools": tools(&["mcp__treebox__box_list"]), "messages": []});
        let said = anthropic_answer(&post(&lead, "/v1/messages", &body)).unwrap_err();
        assert!(said.contains("offers no `box_create`"), "{said}");
        let mut body = body;
        body["messages"] = json!([
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "mcp__treebox__box_list", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "{}"}]}
        ]);
        let said = anthropic_answer(&post(&lead, "/v1/messages", &body)).unwrap_err();
        assert!(
            said.contains("panicked") && said.contains("no result expected"),
            "{said}"
        );
        assert_eq!(lead.faults().len(), 2, "{:?}", lead.faults());
    }

    #[test]
    fn treebox_tools_are_known_by_any_spelling() {
        for name in [
            "mcp__treebox__box_list",
            "treebox.box_list",
            "treebox/box_list",
            "mcp:treebox:box_list",
            "box_list",
        ] {
            assert_eq!(treebox_tool(name).as_deref(), Some("box_list"), "{name}");
        }
        for name in [
            "Bash",
            "ToolSearch",
            "mcp__other__box",
            "treebox",
            "mcp__treebox__",
        ] {
            assert_eq!(treebox_tool(name), None, "{name}");
        }
        let w = Wire {
            namespace: Some("mcp__treebox".into()),
            name: "box_wait".into(),
        };
        assert_eq!(w.treebox_tool().as_deref(), Some("box_wait"));
    }
}
