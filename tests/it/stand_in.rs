//! Stand-ins of the model APIs the real agent CLIs call: Anthropic's Messages API
//! (Claude Code) and OpenAI's Responses API (Codex), on this machine only.
//!
//! std::net, a thread per connection, one request per connection (`Connection:
//! close`). Every request is logged (method, path, headers, body) so a test can assert
//! the agent really called it. Each answer is the text the test chose ([`StandIn::
//! answer`]), so the test can find it on the agent's screen. A test can [`StandIn::
//! hold`] the answers: a model request then waits until [`StandIn::release`], which
//! lets the test see the agent `working` for as long as it needs (never on a clock).
//!
//! Bound to loopback for host boxes ([`StandIn::anthropic`], [`StandIn::openai`]);
//! container tests bind the engine bridge's gateway with the `_on` constructors.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Which API the stand-in speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `POST /v1/messages` (streaming or not), `POST /v1/messages/count_tokens`.
    Anthropic,
    /// `POST /v1/responses` (streaming), `GET /v1/models`.
    OpenAi,
}

/// One request the stand-in received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// The path with its query (`/v1/messages?beta=true`).
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The path without its query.
    pub fn route(&self) -> &str {
        self.path.split('?').next().unwrap_or("")
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

struct Shared {
    api: Api,
    answer: Mutex<String>,
    log: Mutex<Vec<Request>>,
    /// While true, model requests wait (at most [`HOLD_LIMIT`]).
    held: Mutex<bool>,
    released: Condvar,
}

/// The longest a held answer waits for [`StandIn::release`]: a test that forgets to
/// release still ends.
const HOLD_LIMIT: Duration = Duration::from_secs(120);

/// A loopback HTTP server of the test's own: a thread accepting connections, each
/// answered on a thread of its own by `serve`; stopped (its port closed, its thread
/// joined) when dropped. Under both stand-ins ([`StandIn`], `lead::Lead`).
pub(crate) struct Listening {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Listening {
    /// Bind `addr` and answer every connection with `serve`.
    pub(crate) fn start(
        addr: &str,
        serve: impl Fn(TcpStream) + Send + Sync + 'static,
    ) -> Listening {
        let listener = TcpListener::bind(addr).unwrap_or_else(|e| panic!("bind {addr}: {e}"));
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (stopped, serve) = (Arc::clone(&stop), Arc::new(serve));
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let serve = Arc::clone(&serve);
                std::thread::spawn(move || serve(conn));
            }
        });
        Listening {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees `stop`.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `POST path` with a JSON `body` to the server at `addr`: the whole answer, head
/// and body (each connection carries one request).
pub(crate) fn post(addr: SocketAddr, path: &str, body: &str) -> String {
    let mut c = TcpStream::connect(addr).unwrap();
    write!(
        c,
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    c.read_to_string(&mut out).unwrap();
    out
}

/// A running stand-in; stops (and closes its port) when dropped.
pub struct StandIn {
    shared: Arc<Shared>,
    // Dropped after `drop` released any held answer.
    server: Listening,
}

impl StandIn {
    /// Anthropic's Messages API on loopback (a free port).
    pub fn anthropic(answer: &str) -> StandIn {
        StandIn::anthropic_on("127.0.0.1:0", answer)
    }

    /// OpenAI's Responses API on loopback (a free port).
    pub fn openai(answer: &str) -> StandIn {
        StandIn::openai_on("127.0.0.1:0", answer)
    }

    /// Anthropic's Messages API on `addr` (e.g. the docker bridge's gateway, port 0).
    pub fn anthropic_on(addr: &str, answer: &str) -> StandIn {
        StandIn::start(Api::Anthropic, addr, answer)
    }

    /// OpenAI's Responses API on `addr`.
    pub fn openai_on(addr: &str, answer: &str) -> StandIn {
        StandIn::start(Api::OpenAi, addr, answer)
    }

    fn start(api: Api, addr: &str, answer: &str) -> StandIn {
        let shared = Arc::new(Shared {
            api,
            answer: Mutex::new(answer.to_string()),
            log: Mutex::new(Vec::new()),
            held: Mutex::new(false),
            released: Condvar::new(),
        });
        let s = Arc::clone(&shared);
        let server = Listening::start(addr, move |conn| {
            let _ = serve(&s, conn);
        });
        StandIn { shared, server }
    }

    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// `http://ADDR` (Claude Code's `ANTHROPIC_BASE_URL`).
    pub fn url(&self) -> String {
        format!("http://{}", self.server.addr())
    }

    /// The text of the next answers.
    pub fn answer(&self, text: &str) {
        *self.shared.answer.lock().unwrap() = text.to_string();
    }

    /// Hold model answers until [`StandIn::release`].
    pub fn hold(&self) {
        *self.shared.held.lock().unwrap() = true;
    }

    /// Let held (and later) answers go.
    pub fn release(&self) {
        *self.shared.held.lock().unwrap() = false;
        self.shared.released.notify_all();
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.log.lock().unwrap().clone()
    }

    /// The model requests so far (the ones answered with [`StandIn::answer`]'s text).
    pub fn model_requests(&self) -> Vec<Request> {
        let route = match self.shared.api {
            Api::Anthropic => "/v1/messages",
            Api::OpenAi => "/v1/responses",
        };
        self.requests()
            .into_iter()
            .filter(|r| r.method == "POST" && r.route() == route)
            .collect()
    }

    /// What was asked, for a failure message: method, path, the start of the body.
    pub fn describe(&self) -> String {
        self.requests()
            .iter()
            .map(|r| {
                let body: String = r.body.chars().take(200).collect();
                format!("{} {} {body}", r.method, r.path)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        // A held answer goes; then the server stops (dropped after this).
        self.release();
    }
}

/// One HTTP request read off `conn` (its line, headers and body, chunked or not);
/// `None` when the client sent nothing.
pub(crate) fn read_request(conn: &TcpStream) -> std::io::Result<Option<Request>> {
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
        read_chunked(&mut reader)?
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
    s.log.lock().unwrap().push(req.clone());
    let mut out = conn;
    let route = req.route().to_string();
    match (s.api, req.method.as_str(), route.as_str()) {
        (Api::Anthropic, "POST", "/v1/messages/count_tokens") => {
            json(&mut out, 200, &serde_json::json!({"input_tokens": 12}))
        }
        (Api::Anthropic, "POST", "/v1/messages") => {
            wait_if_held(s);
            let text = s.answer.lock().unwrap().clone();
            let ask = req.json();
            let model = ask["model"]
                .as_str()
                .unwrap_or("claude-stand-in")
                .to_string();
            if ask["stream"].as_bool() == Some(true) {
                anthropic_stream(&mut out, &model, &text)
            } else {
                json(&mut out, 200, &anthropic_message(&model, &text))
            }
        }
        (Api::OpenAi, "POST", "/v1/responses") => {
            wait_if_held(s);
            let text = s.answer.lock().unwrap().clone();
            let model = req.json()["model"]
                .as_str()
                .unwrap_or("gpt-stand-in")
                .to_string();
            openai_stream(&mut out, &model, &text)
        }
        (Api::OpenAi, "GET", "/v1/models") => json(
            &mut out,
            200,
            &serde_json::json!({"object": "list", "data": [], "models": []}),
        ),
        _ => json(
            &mut out,
            404,
            &serde_json::json!({
                "type": "error",
                "error": {"type": "not_found_error", "message": format!("stand-in: no {route}")}
            }),
        ),
    }
}

fn wait_if_held(s: &Shared) {
    let held = s.held.lock().unwrap();
    let _unused = s
        .released
        .wait_timeout_while(held, HOLD_LIMIT, |h| *h)
        .unwrap();
}

pub(crate) fn read_chunked(r: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        r.read_line(&mut size)?;
        let n =
            usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
        if n == 0 {
            let mut end = String::new();
            r.read_line(&mut end)?;
            return Ok(body);
        }
        let mut chunk = vec![0; n + 2];
        r.read_exact(&mut chunk)?;
        body.extend_from_slice(&chunk[..n]);
    }
}

pub(crate) fn json(out: &mut TcpStream, status: u16, v: &serde_json::Value) -> std::io::Result<()> {
    let body = v.to_string();
    let reason = if status == 200 { "OK" } else { "Not Found" };
    write!(
        out,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    out.flush()
}

pub(crate) fn sse_head(out: &mut TcpStream) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"
    )
}

pub(crate) fn event(
    out: &mut TcpStream,
    name: &str,
    data: serde_json::Value,
) -> std::io::Result<()> {
    write!(out, "event: {name}\ndata: {data}\n\n")?;
    out.flush()
}

pub(crate) fn anthropic_message(model: &str, text: &str) -> serde_json::Value {
    serde_json::json!({
        "id": "msg_stand_in",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": null,
        "usage": {"input_tokens": 12, "output_tokens": 5}
    })
}

pub(crate) fn anthropic_stream(
    out: &mut TcpStream,
    model: &str,
    text: &str,
) -> std::io::Result<()> {
    use serde_json::json;
    sse_head(out)?;
    event(
        out,
        "message_start",
        json!({"type": "message_start", "message": {
            "id": "msg_stand_in", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 12, "output_tokens": 1}
        }}),
    )?;
    event(
        out,
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    )?;
    event(
        out,
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
    )?;
    event(
        out,
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    )?;
    event(
        out,
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
               "usage": {"output_tokens": 5}}),
    )?;
    event(out, "message_stop", json!({"type": "message_stop"}))
}

pub(crate) fn openai_stream(out: &mut TcpStream, model: &str, text: &str) -> std::io::Result<()> {
    use serde_json::json;
    sse_head(out)?;
    let response = |status: &str, output: serde_json::Value| {
        json!({"id": "resp_stand_in", "object": "response", "created_at": 0,
               "status": status, "model": model, "output": output})
    };
    event(
        out,
        "response.created",
        json!({"type": "response.created", "response": response("in_progress", json!([]))}),
    )?;
    event(
        out,
        "response.output_item.added",
        json!({"type": "response.output_item.added", "output_index": 0, "item": {
            "id": "msg_stand_in", "type": "message", "role": "assistant",
            "status": "in_progress", "content": []
        }}),
    )?;
    event(
        out,
        "response.content_part.added",
        json!({"type": "response.content_part.added", "item_id": "msg_stand_in",
               "output_index": 0, "content_index": 0,
               "part": {"type": "output_text", "text": "", "annotations": []}}),
    )?;
    event(
        out,
        "response.output_text.delta",
        json!({"type": "response.output_text.delta", "item_id": "msg_stand_in",
               "output_index": 0, "content_index": 0, "delta": text}),
    )?;
    event(
        out,
        "response.output_text.done",
        json!({"type": "response.output_text.done", "item_id": "msg_stand_in",
               "output_index": 0, "content_index": 0, "text": text}),
    )?;
    let done = json!({"id": "msg_stand_in", "type": "message", "role": "assistant",
                      "status": "completed",
                      "content": [{"type": "output_text", "text": text, "annotations": []}]});
    event(
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
    event(
        out,
        "response.completed",
        json!({"type": "response.completed", "response": completed}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stand_ins_answer_and_log() {
        let a = StandIn::anthropic("MARK-1");
        let r = post(
            a.addr(),
            "/v1/messages?beta=true",
            r#"{"model":"m","stream":true}"#,
        );
        for ev in [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ] {
            assert!(r.contains(&format!("event: {ev}\n")), "{r}");
        }
        assert!(r.contains("MARK-1") && r.contains("end_turn"), "{r}");
        let r = post(a.addr(), "/v1/messages", r#"{"model":"m"}"#);
        assert!(r.contains(r#""text":"MARK-1""#), "{r}");
        let r = post(a.addr(), "/v1/messages/count_tokens", "{}");
        assert!(r.contains("input_tokens"), "{r}");
        assert_eq!(a.model_requests().len(), 2);
        assert_eq!(a.requests().len(), 3);

        let o = StandIn::openai("MARK-2");
        let r = post(o.addr(), "/v1/responses", r#"{"model":"g","stream":true}"#);
        assert!(r.contains("event: response.completed\n"), "{r}");
        assert!(r.contains("MARK-2"), "{r}");
        assert_eq!(o.model_requests()[0].json()["model"], "g");
    }
}
