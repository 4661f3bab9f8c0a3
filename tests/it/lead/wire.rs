//! The wire side of the scripted lead: what a model request says (the tools it offers,
//! now or deferred behind a tool search, the calls made and their results, on either
//! API) and how the lead's tool call is written back (Anthropic's `tool_use` block,
//! OpenAI's `function_call` item, streamed as the CLIs read them).

use std::net::TcpStream;

use serde_json::{json, Value};

use super::ToolResult;
use crate::stand_in::{self, Api};

/// A tool as a request names it: a name, in a namespace for Codex's namespace tools.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Wire {
    pub(super) namespace: Option<String>,
    pub(super) name: String,
}

impl Wire {
    pub(super) fn full(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.clone(),
        }
    }

    /// treebox's name of this tool, when it is one of treebox's.
    pub(super) fn treebox_tool(&self) -> Option<String> {
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
pub(super) fn treebox_tool(name: &str) -> Option<String> {
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
pub(super) struct Offered {
    callable: Vec<Wire>,
    /// treebox's tools the request names as loadable through `search`.
    deferred: Vec<String>,
    /// The tool that loads deferred tools (Claude Code's `ToolSearch`).
    pub(super) search: Option<String>,
}

impl Offered {
    pub(super) fn callable(&self, tool: &str) -> Option<&Wire> {
        self.callable
            .iter()
            .find(|w| w.treebox_tool().as_deref() == Some(tool))
    }

    pub(super) fn deferred(&self, tool: &str) -> Option<&String> {
        self.deferred
            .iter()
            .find(|d| treebox_tool(d).as_deref() == Some(tool))
    }

    pub(super) fn describe(&self) -> Vec<String> {
        let now = self.callable.iter().map(Wire::full);
        let later = self.deferred.iter().map(|d| format!("{d} (deferred)"));
        now.chain(later).collect()
    }
}

/// What a model request carries: the tools it offers, the calls made and their results.
pub(super) struct Conversation {
    api: Api,
    pub(super) offered: Offered,
    calls: Vec<(String, Wire, Value)>,
    /// (call id, text, error flag), in the conversation's order.
    results: Vec<(String, String, Option<bool>)>,
}

impl Conversation {
    pub(super) fn read(api: Api, body: &Value) -> Conversation {
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
    pub(super) fn is_lead(&self) -> bool {
        !self.offered.deferred.is_empty()
            || self
                .offered
                .callable
                .iter()
                .any(|w| w.treebox_tool().is_some())
    }

    /// The results of treebox's tools, in order (a tool search's are the stand-in's own
    /// business, not the script's).
    pub(super) fn history(&self) -> Vec<ToolResult> {
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
    pub(super) fn last_call_was(&self, tool: &str) -> bool {
        self.results.last().is_some_and(|(id, _, _)| {
            self.calls
                .iter()
                .any(|(c, w, _)| c == id && w.namespace.is_none() && w.name == tool)
        })
    }
}

pub(super) fn array(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// The texts of a string, a text block, or a list of them.
pub(super) fn collect_texts(v: &Value, into: &mut Vec<String>) {
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

/// The stand-in's answer to a model request.
pub(super) enum Reply {
    Text(String),
    Call(Call),
}

/// A tool call the lead makes: its number, the tool as the request named it, its
/// arguments.
pub(super) struct Call {
    pub(super) id: usize,
    pub(super) wire: Wire,
    pub(super) arguments: Value,
}

pub(super) fn anthropic_tool_message(model: &str, call: &Call) -> Value {
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

pub(super) fn anthropic_tool_stream(
    out: &mut TcpStream,
    model: &str,
    call: &Call,
) -> std::io::Result<()> {
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

pub(super) fn openai_tool_stream(
    out: &mut TcpStream,
    model: &str,
    call: &Call,
) -> std::io::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
