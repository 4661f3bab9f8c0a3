//! The scripted lead on handmade requests: each API's conversation read and answered,
//! a deferred tool searched for, the answers to requests that are not the lead's, and
//! what it cannot do as a fault.

use super::listing::{list_then_screen, DONE};
use super::*;

/// `POST path body`: the answer's body.
fn post(lead: &Lead, path: &str, body: &Value) -> String {
    let out = stand_in::post(lead.addr(), path, &body.to_string());
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
        let body = json!({"model": "m", "stream": true, "tools": offered, "messages": messages});
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
    let side = json!({"model": "m", "stream": true, "tools": tools(&["Bash"]), "messages": [go]});
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
    let loaded = search(json!([{"type": "tool_reference", "tool_name": "mcp__treebox__box_list"}]));
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
fn others_are_answered_after_their_delay_and_each_request_is_timed() {
    let lead = Lead::start(list_then_screen);
    lead.answer_others("SLOW");
    lead.answer_others_after(Duration::from_millis(300));
    let body = json!({"model": "m", "stream": true, "tools": tools(&["Bash"]),
        "messages": [{"role": "user", "content": "hi"}]});
    let since = Instant::now();
    let said = anthropic_answer(&post(&lead, "/v1/messages", &body)).unwrap_err();
    assert!(since.elapsed() >= Duration::from_millis(300));
    assert_eq!(said, "SLOW");
    // The lead's own requests are never held; each result's arrival is timed.
    let lead_body = json!({"model": "m", "stream": true,
        "tools": tools(&["mcp__treebox__box_list"]), "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "mcp__treebox__box_list", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "{}"}]}]});
    let since = Instant::now();
    post(&lead, "/v1/messages", &lead_body);
    assert!(since.elapsed() < Duration::from_millis(300));
    let log = lead.requests();
    let (other, mine) = (&log[0], &log[1]);
    let held = other.answered.unwrap() - other.at;
    assert!(held >= Duration::from_millis(300), "{held:?}");
    assert!(mine.answered.unwrap() >= mine.at);
    let arrivals: Vec<String> = lead.arrivals().into_iter().map(|(t, _)| t).collect();
    assert_eq!(arrivals, ["start", "box_list"]);
}
