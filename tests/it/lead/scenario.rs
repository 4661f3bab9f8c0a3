//! The whole lead scenario (issue 40's "done means"): the real Claude Code, then the
//! real Codex, as the lead agent, starts a box whose agent is the real Claude Code
//! (`box_create` with a prompt), gives it a second prompt (`box_send`), waits for that
//! turn to end (`box_wait` after `box_send`'s token) and lists the boxes (`box_list`).
//!
//! One stand-in ([`Lead`]) answers both: the lead's requests (they offer treebox's
//! tools) from the script, and the boxed agent's (they offer none) with a text after
//! [`THINK`], as a model takes its time. The boxed agent is a returning user's Claude
//! Code ([`World`]), its API that same stand-in: it reaches it through the environment
//! the lead CLI gives treebox's server, which treebox's host runner hands on to the
//! agent.
//!
//! The lead sends its second prompt [`LEAD_THINKS`] after `box_create` answers, while
//! the box's agent is in its first prompt's turn (it takes the typed prompt up a moment
//! after `box_create` answers, then [`THINK`]): `box_wait` after `box_send`'s token
//! must end with the second prompt's turn, not the first's.

use std::sync::Once;
use std::time::Duration;

use serde_json::{json, Value};

use super::{claude_lead_args, mcp_server, run_in_repo_for, Lead, Step, ToolResult};
use crate::env::{named, Run, TestEnv};
use crate::real_agents::{agents_dir, processes_of, Agent, World, CODEX_KEY_VAR};
use crate::schema::assert_valid;

/// The box the lead makes.
const BOX: &str = "worker";
/// The prompt `box_create` types, and the one `box_send` types after it.
const FIRST: &str = "FIRST-PROMPT: write the greeting";
const SECOND: &str = "SECOND-PROMPT: now write the farewell";
/// What the stand-in answers the boxed agent.
const BOXED_ANSWER: &str = "BOXED-AGENT-ANSWER";
/// What the lead says when it is done.
const DONE: &str = "LEAD-DONE: made a box, sent it a prompt, waited, listed";
/// How long the lead's `box_wait` may block.
const WAIT_S: u64 = 120;
/// How long the stand-in takes to answer the box's agent.
const THINK: Duration = Duration::from_secs(2);
/// How long the lead takes to decide on `box_send` once `box_create` has answered.
const LEAD_THINKS: Duration = Duration::from_secs(1);

/// `box_create` (a host box of Claude Code's, with [`FIRST`]), `box_send` ([`SECOND`],
/// after [`LEAD_THINKS`]),
/// `box_wait` on that box after `box_send`'s token until it is idle, `box_list`, done.
/// A refusal ends it early, for the test to show.
fn scenario() -> impl Fn(Option<&ToolResult>) -> Step + Send + Sync {
    // Once, though the script is asked again for the same step (Claude Code's tool
    // search comes between).
    let thought = Once::new();
    move |last| next_step(last, &thought)
}

fn next_step(last: Option<&ToolResult>, thought: &Once) -> Step {
    let Some(r) = last else {
        return Step::call(
            "box_create",
            json!({"name": BOX, "isolation": "host", "harness": "claude", "prompt": FIRST}),
        );
    };
    if r.error().is_some() {
        return Step::finish(&format!("LEAD-STOPPED: {} was refused", r.tool));
    }
    match r.tool.as_str() {
        "box_create" => {
            thought.call_once(|| std::thread::sleep(LEAD_THINKS));
            Step::call("box_send", json!({"name": BOX, "text": SECOND}))
        }
        "box_send" => Step::call(
            "box_wait",
            json!({"names": [BOX], "until": ["idle"], "after": r.document()["token"],
                   "timeout_s": WAIT_S}),
        ),
        "box_wait" => Step::call("box_list", json!({})),
        _ => Step::finish(DONE),
    }
}

/// A returning user whose Claude Code (the box's agent) asks `lead`'s stand-in.
fn boxed_claude_world(lead: &Lead) -> Option<World> {
    let mut w = World::new(Agent::Claude)?;
    // After the world's own stand-in's URL: the later value is the one a child gets.
    w.env_mut()
        .extra_env
        .push(("ANTHROPIC_BASE_URL".into(), lead.url()));
    lead.answer_others(BOXED_ANSWER);
    lead.answer_others_after(THINK);
    Some(w)
}

/// How long each tool call took as the stand-in saw it: from the request that called
/// it to the one that brought its result back.
fn timeline(lead: &Lead) -> String {
    let arrivals = lead.arrivals();
    arrivals
        .windows(2)
        .map(|w| format!("{} {:.1}s", w[1].0, (w[1].1 - w[0].1).as_secs_f64()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The lead ran [`scenario`] to its end and the box's agent took both prompts:
/// `flagged`, the CLI passes a tool's error flag to the model.
#[track_caller]
fn drove_the_scenario(lead: &Lead, w: &World, what: &str, run: &Run, flagged: bool) {
    let env = w.env();
    let said = || {
        let err = std::fs::read_to_string(env.root().join("mcp.err")).unwrap_or_default();
        // What the box's hooks reported last, and the prompts and turn ends they
        // counted (`p`, `s`): which hook came when, should the status be off.
        let status = env.box_state(BOX).join("status");
        // Read as treebox reads them: the box's to write (a FIFO, a huge file).
        let read = |f: &str| {
            treebox::untrusted::read_regular(
                &status.join(f),
                4096,
                treebox::untrusted::Links::Refuse,
            )
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
        };
        format!(
            "{what}: {run:?}\nmcp.err: {err}\ntimeline: {}\nstatus: {:?}, turns: {:?}\nscreen of {BOX}:\n{}\nrequests:\n{}",
            timeline(lead),
            read("state"),
            read("turns"),
            w.screen(BOX),
            lead.describe()
        )
    };
    eprintln!("{what}: tool calls took {}", timeline(lead));
    assert_eq!(lead.faults(), Vec::<String>::new(), "{}", said());
    assert_eq!(run.code, 0, "{}", said());
    assert!(run.stdout.contains(DONE), "{}", said());
    let results = lead.results();
    let tools: Vec<&str> = results.iter().map(|r| r.tool.as_str()).collect();
    assert_eq!(
        tools,
        ["box_create", "box_send", "box_wait", "box_list"],
        "{}",
        said()
    );
    for r in &results {
        assert_eq!(r.is_error, flagged.then_some(false), "{what}: {r:?}");
    }
    let doc = |i: usize| results[i].document();

    let created = doc(0);
    assert_valid("box-create", &created, what);
    assert_eq!(created["box"]["name"], BOX, "{what}: {created}");
    assert_eq!(created["box"]["runner"], "host", "{what}: {created}");
    assert_eq!(created["agent"]["state"], "ready", "{what}: {created}");
    assert!(created["token"].is_string(), "{what}: {created}");

    let sent = doc(1);
    assert_valid("send", &sent, what);
    assert_eq!(sent["name"], BOX, "{what}: {sent}");
    let token = sent["token"].as_str().expect("box_send's token");
    assert_ne!(Some(token), created["token"].as_str(), "{what}");

    let wait = &results[2];
    assert_eq!(wait.arguments["after"], token, "{what}: {wait:?}");
    let waited = wait.document();
    assert_valid("wait", &waited, what);
    assert_eq!(waited["timedOut"], false, "{}\n{waited}", said());
    assert_eq!(
        waited["reached"],
        json!([{"name": BOX, "state": "idle"}]),
        "{}",
        said()
    );

    let listed = doc(3);
    assert_valid("list", &listed, what);
    let row = named(&listed, "boxes", BOX);
    assert_eq!(
        (&row["session"], &row["status"]),
        (&json!("live"), &json!("idle")),
        "{row}\n{}",
        said()
    );

    // The box's agent asked the stand-in with each prompt, from the box (its requests
    // name the box's directory), and the second prompt's answer was written before
    // `box_wait` said the box was idle: the wait ended with that prompt's turn.
    let path = env.box_path(BOX).to_string_lossy().into_owned();
    let answered = |text: &str| {
        lead.requests()
            .iter()
            .filter(|l| !l.lead && l.request.body.contains(text))
            .filter(|l| l.request.body.contains(&path))
            .filter_map(|l| l.answered)
            .min()
    };
    let waited_at = lead
        .arrivals()
        .into_iter()
        .find(|(tool, _)| tool == "box_wait")
        .map(|(_, t)| t)
        .unwrap();
    let first = answered(FIRST).unwrap_or_else(|| panic!("{what}: first prompt\n{}", said()));
    assert!(first < waited_at, "{}", said());
    assert!(
        answered(SECOND).is_some_and(|t| t < waited_at),
        "{what}: box_wait (its result here at {:.2}s) ended before the second prompt's \
         turn did\n{}",
        waited_at.as_secs_f64(),
        said()
    );
}

/// After the lead: the box is there, its agent idle at its prompt; then its session
/// goes, and with it every process of the test's user.
fn the_box_outlives_the_lead(w: &World, what: &str) {
    let env = w.env();
    let listed = env.treebox(&["list", "--json"]).ok().json();
    let row = named(&listed, "boxes", BOX);
    assert_eq!(row["session"], "live", "{what}: {row}");
    assert_eq!(row["status"], "idle", "{what}: {row}");
    // At its prompt, both answers on the screen and no turn running.
    let screen = w.screen(BOX);
    assert!(Agent::Claude.ready(&screen), "{what}: {screen}");
    assert_eq!(screen.matches(BOXED_ANSWER).count(), 2, "{what}: {screen}");
    assert!(!screen.contains("esc to interrupt"), "{what}: {screen}");
    env.treebox(&["teardown", "--force", BOX]).ok();
    w.wait(BOX, "the processes of the test's user to end", 30, || {
        processes_of(&env.home).is_empty()
    });
}

/// What the lead CLI handed treebox's server (`mcp.env`), as `NAME=value` lines.
fn server_env(env: &TestEnv) -> Vec<String> {
    std::fs::read_to_string(env.root().join("mcp.env"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The real Claude Code as the lead (`claude -p`, treebox's server from
/// `--mcp-config`), the box's agent the real Claude Code too. Claude Code hands its
/// MCP servers its whole environment: the boxed agent's API settings come along.
#[test]
fn lead_the_real_claude_starts_a_real_claude_box_sends_waits_and_lists() {
    let Some(dir) = agents_dir("claude") else {
        return;
    };
    let lead = Lead::start(scenario());
    let Some(w) = boxed_claude_world(&lead) else {
        return;
    };
    let env = w.env();
    let args = claude_lead_args(
        env,
        "Start a box with a prompt, send it a second one, wait for it, list the boxes.",
    );
    let run = run_in_repo_for(env, 300, &dir.join("claude"), &args, &[]);
    drove_the_scenario(&lead, &w, "claude", &run, true);
    let url = format!("ANTHROPIC_BASE_URL={}", lead.url());
    assert!(server_env(env).contains(&url), "{:?}", server_env(env));
    the_box_outlives_the_lead(&w, "claude");
}

/// The real Codex as the lead (`codex exec`, treebox's server an `mcp_servers` entry),
/// the box's agent the real Claude Code. Codex starts an MCP server with a few
/// variables of its own environment only (HOME, PATH, USER, LANG, TERM, TMPDIR, …):
/// the entry's `env_vars` names the others the server and its agents need, the boxed
/// agent's API settings and the test's XDG and git ones. `tool_timeout_sec` lifts
/// Codex's 60 s limit on a tool call (docs/mcp.md).
#[test]
fn lead_the_real_codex_starts_a_real_claude_box_sends_waits_and_lists() {
    let Some(dir) = agents_dir("codex") else {
        return;
    };
    let lead = Lead::start(scenario());
    let Some(w) = boxed_claude_world(&lead) else {
        return;
    };
    let env = w.env();
    let mut forward: Vec<String> = [
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_NOSYSTEM",
    ]
    .map(String::from)
    .into();
    for (k, _) in &env.extra_env {
        if !forward.contains(k) {
            forward.push(k.clone());
        }
    }
    let config = format!(
        "model_provider = \"stand-in\"\nmodel = \"treebox-lead\"\n\n[model_providers.stand-in]\nname = \"stand-in\"\nbase_url = \"{url}/v1\"\nwire_api = \"responses\"\nenv_key = \"{CODEX_KEY_VAR}\"\n\n[features]\ndaemon_auto_start = false\n\n[mcp_servers.treebox]\ncommand = \"{server}\"\ntool_timeout_sec = 300\nenv_vars = {vars}\n",
        url = lead.url(),
        server = mcp_server(env).display(),
        vars = Value::from(forward.clone()),
    );
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    std::fs::write(env.home.join(".codex/config.toml"), config).unwrap();
    let run = run_in_repo_for(
        env,
        300,
        &dir.join("codex"),
        &[
            "exec",
            "--skip-git-repo-check",
            "Start a box with a prompt, send it a second one, wait for it, list the boxes.",
        ],
        &[(CODEX_KEY_VAR, "sk-stand-in-openai")],
    );
    // Codex hands the model a tool's text and not its error flag.
    drove_the_scenario(&lead, &w, "codex", &run, false);
    let got = server_env(env);
    for k in &forward {
        assert!(
            got.iter().any(|l| l.starts_with(&format!("{k}="))),
            "{k} did not reach the server: {got:?}"
        );
    }
    the_box_outlives_the_lead(&w, "codex");
}
