//! The entry point another machine's treebox calls over SSH:
//! `git-treebox __treebox-remote`. It reads one JSON request from stdin (at most
//! [`MAX_REQUEST`] bytes), answers one framed document on stdout ([`super::frame`]),
//! and exits 0; a request it does not take is answered with an `error` document.
//! Nothing of the request reaches a shell or a command line.

use std::io::{Read, Write};

use serde_json::{json, Value};

/// The largest request read.
pub const MAX_REQUEST: u64 = 1 << 20;

/// Serve one request on this process's stdin and stdout; the exit code.
pub fn serve_stdio() -> i32 {
    let mut raw = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_REQUEST + 1)
        .read_to_end(&mut raw);
    let doc = match read {
        Err(e) => refusal(&format!("could not read the request: {e}")),
        Ok(_) if raw.len() as u64 > MAX_REQUEST => {
            refusal(&format!("the request is over {MAX_REQUEST} bytes"))
        }
        Ok(_) => match serde_json::from_slice::<Value>(&raw) {
            Ok(request) => answer(&request),
            Err(_) => refusal("the request is not JSON"),
        },
    };
    let mut out = std::io::stdout().lock();
    let framed = super::frame::write(super::PROTOCOL, &doc);
    if out.write_all(&framed).and_then(|()| out.flush()).is_err() {
        return 1;
    }
    0
}

/// The answer to one request.
fn answer(request: &Value) -> Value {
    match request["op"].as_str() {
        Some("hello") => super::hello::answer(),
        Some(op) => refusal(&format!(
            "this treebox ({}) takes no request `{}`",
            env!("CARGO_PKG_VERSION"),
            crate::sanitize::line(op)
        )),
        None => refusal("the request names no `op`"),
    }
}

fn refusal(message: &str) -> Value {
    json!({
        "schemaVersion": 1,
        "version": env!("CARGO_PKG_VERSION"),
        "error": {"message": message},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_answered_or_refused() {
        assert_eq!(
            answer(&json!({"op": "hello"}))["protocol"],
            super::super::PROTOCOL
        );
        let e = answer(&json!({"op": "rm -rf /"}));
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no request"),
            "{e}"
        );
        assert!(answer(&json!([]))["error"].is_object());
    }
}
