//! `git treebox mcp`'s tools that start agents and talk to them (issue 40's second
//! slice): `box_create`, `box_send`, `box_wait`, over the built binary's stdio with
//! rmcp's client ([`crate::mcp::Served`]).
//!
//! The box's agent here is [`PASTE_AGENT`], a program in the box's real tmux session
//! standing in for Claude Code where the test must see every byte typed: it asks the
//! terminal for bracketed paste as Claude Code does, reports `idle` through treebox's
//! own status hooks when it is up (Claude Code's `SessionStart`), records what it
//! reads in raw mode, and takes an Enter outside a paste as a prompt submitted
//! (`working`, then `idle` once its turn ends, each counted as Claude Code's hooks
//! count them: `submit`, `stop`). The real Claude Code and Codex driving these tools as the
//! lead are in `lead.rs`.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::env::{named, write_exec, TestEnv};
use crate::mcp::{harmless, host_box, Served};
use crate::schema::assert_valid;

/// The stand-in agent; see the module doc. `$HOME/typed` gets each byte read, in hex;
/// `$HOME/writer` the status writer it reports through, `$HOME/agent-env` its
/// environment, `$HOME/first-prompt` the prompt it was started with (after `--`, as
/// Claude Code takes one); `$HOME/turns` a line per
/// prompt submitted, `$HOME/ended` a line per turn ended; a turn takes
/// `$HOME/turn-seconds` (default 0.3).
const PASTE_AGENT: &str = r#"#!/bin/sh
settings= prev= first= rest=
for a in "$@"; do
  if [ -n "$rest" ]; then first=$a; fi
  [ "$a" = -- ] && rest=1
  [ "$prev" = --settings ] && settings=$a; prev=$a
done
writer=$(dirname "$settings")/status
printf '%s\n' "$writer" > "$HOME/writer"
env > "$HOME/agent-env"
printf '\033[?2004hpaste-agent> '
stty raw -echo
sh "$writer" idle up
turn=$(cat "$HOME/turn-seconds" 2>/dev/null || echo 0.3)
if [ -n "$first" ]; then
  printf '%s' "$first" > "$HOME/first-prompt"
  echo submitted >> "$HOME/turns"
  sh "$writer" working submit
  (sleep "$turn"; echo ended >> "$HOME/ended"; sh "$writer" idle stop) &
fi
last=
paste=0
while :; do
  c=$(dd bs=1 count=1 2>/dev/null | od -An -tx1 | tr -d ' \n')
  [ -n "$c" ] || exit 0
  printf '%s ' "$c" >> "$HOME/typed"
  last=$(printf '%s' "$last$c" | tail -c 12)
  case $last in
    1b5b3230307e) paste=1 ;;
    1b5b3230317e) paste=0 ;;
  esac
  if [ "$c" = 0d ] && [ "$paste" = 0 ]; then
    echo submitted >> "$HOME/turns"
    sh "$writer" working submit
    turn=$(cat "$HOME/turn-seconds" 2>/dev/null || echo 0.3)
    (sleep "$turn"; echo ended >> "$HOME/ended"; sh "$writer" idle stop) &
  fi
done
"#;

/// A user whose Claude Code is [`PASTE_AGENT`].
fn with_paste_agent(env: &TestEnv, extra_config: &str) {
    let agent = env.root().join("paste-agent");
    write_exec(&agent, PASTE_AGENT);
    env.write_config(&format!(
        r#"{{"harnesses": {{"claude": {{"program": "{}"}}}}{extra_config}}}"#,
        agent.display()
    ));
}

/// The bytes the agent has read, as hex words.
fn typed(env: &TestEnv) -> String {
    std::fs::read_to_string(env.home.join("typed")).unwrap_or_default()
}

/// `text` as [`PASTE_AGENT`] records it.
fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x} ")).collect()
}

/// Wait (at most 10 s) until `f` holds.
#[track_caller]
fn until(what: &str, f: impl Fn() -> bool) {
    let since = Instant::now();
    while !f() {
        assert!(
            since.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn mcp_box_create_starts_the_agent_with_its_first_prompt() {
    let env = TestEnv::new();
    with_paste_agent(&env, "");
    let served = Served::start(&env);
    let prompt = "--fix the login bug\nthen run\tthe tests";
    let doc = served.answer(
        "box_create",
        json!({"name": "one", "prompt": prompt, "harness": "claude"}),
    );
    assert_valid("box-create", &doc, "box_create");
    assert_valid("create", &doc["box"], "box_create's box");
    assert_eq!(doc["box"]["name"], "one");
    assert_eq!(doc["box"]["runner"], "host");
    assert_eq!(doc["box"]["harness"], "claude");
    assert_eq!(doc["agent"]["state"], "ready", "{doc}");
    let token = doc["token"].as_str().expect("a token for the prompt");

    // The prompt is the agent's first, whole (a leading `-` is no option): one turn,
    // and box_wait returns at its end.
    until("the first prompt to be taken", || {
        std::fs::read_to_string(env.home.join("first-prompt")).is_ok_and(|p| p == prompt)
    });
    let waited = served.answer(
        "box_wait",
        json!({"names": ["one"], "until": ["idle"], "after": token, "timeout_s": 20}),
    );
    assert_valid("wait", &waited, "box_wait");
    assert_eq!(waited["timedOut"], false, "{waited}");
    assert_eq!(waited["reached"], json!([{"name": "one", "state": "idle"}]));
    assert_eq!(
        std::fs::read_to_string(env.home.join("ended")).unwrap(),
        "ended\n",
        "box_wait returned before the prompt's turn ended"
    );
    assert_eq!(typed(&env), "", "nothing was typed");

    // It is the box `create -d` makes: listed, its session live, its agent idle.
    let listed = served.answer("box_list", json!({}));
    let one = named(&listed, "boxes", "one");
    assert_eq!(one["session"], "live", "{one}");
    assert_eq!(one["status"], "idle", "{one}");
}

#[test]
fn mcp_box_send_types_a_prompt_and_refuses_controls_and_dead_sessions() {
    let env = TestEnv::new();
    with_paste_agent(&env, "");
    let served = Served::start(&env);
    let doc = served.answer("box_create", json!({"name": "two"}));
    assert_eq!(doc["agent"]["state"], "ready", "{doc}");
    assert!(doc.get("token").is_none(), "no prompt, no token: {doc}");

    let sent = served.answer(
        "box_send",
        json!({"name": "two", "text": "C-c Enter $(id)"}),
    );
    assert_valid("send", &sent, "box_send");
    assert_eq!(sent["name"], "two");
    let token = sent["token"].as_str().unwrap().to_string();
    // Key names and shell words are text like any other.
    let pasted = format!(
        "1b 5b 32 30 30 7e {}1b 5b 32 30 31 7e 0d ",
        hex("C-c Enter $(id)")
    );
    until("the prompt to be typed", || typed(&env) == pasted);
    let waited = served.answer(
        "box_wait",
        json!({"names": ["two"], "until": ["idle"], "after": token, "timeout_s": 20}),
    );
    assert_eq!(waited["reached"][0]["state"], "idle", "{waited}");

    // Escapes, carriage returns and other controls: refused, nothing typed.
    for bad in [
        "\u{1b}[201~rm -rf /\r",
        "a\rb",
        "x\u{3}",
        "\u{9b}201~",
        "  \n",
    ] {
        let e = served.refusal("box_send", json!({"name": "two", "text": bad}));
        assert_eq!(e["code"], 2, "{bad:?}: {e}");
        harmless(&Value::String(e["message"].as_str().unwrap().into()));
    }
    let e = served.refusal(
        "box_send",
        json!({"name": "two", "text": "x".repeat(64 * 1024 + 1)}),
    );
    assert_eq!(e["code"], 2, "{e}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(typed(&env), pasted, "a refused prompt typed something");

    // A box without a live session: not found (3), with the way to start it.
    host_box(&env, "quiet");
    let e = served.refusal("box_send", json!({"name": "quiet", "text": "hello"}));
    assert_eq!(e["code"], 3, "{e}");
    assert_eq!(e["kind"], "no-session", "{e}");
    assert!(e["hint"].as_str().unwrap().contains("enter -d"), "{e}");
    let e = served.refusal("box_send", json!({"name": "nosuch", "text": "hello"}));
    assert_eq!(e["code"], 3, "{e}");
}

#[test]
fn mcp_box_wait_wakes_within_a_second_and_returns_at_its_timeout() {
    let env = TestEnv::new();
    with_paste_agent(&env, "");
    let served = Served::start(&env);
    served.answer("box_create", json!({"name": "three"}));
    let writer = std::fs::read_to_string(env.home.join("writer")).unwrap();
    let writer = writer.trim().to_string();

    // The agent is idle since it started: without `after` that ends the wait at once,
    // with a later token it does not.
    let now = served.answer("box_wait", json!({"until": ["idle"], "timeout_s": 5}));
    assert_eq!(now["reached"], json!([{"name": "three", "state": "idle"}]));
    assert!(now["seconds"].as_f64().unwrap() < 1.0, "{now}");
    let sent = served.answer("box_send", json!({"name": "three", "text": "go"}));
    let token = sent["token"].as_str().unwrap().to_string();
    until("the turn to end", || {
        std::fs::read_to_string(env.home.join("turns")).is_ok()
    });
    std::thread::sleep(Duration::from_millis(600));
    let stale = json!({"until": ["waiting"], "after": token, "timeout_s": 1});
    let since = Instant::now();
    let out = served.answer("box_wait", stale);
    let took = since.elapsed();
    assert_eq!(out["timedOut"], true, "{out}");
    assert_eq!(out["reached"], json!([]));
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(3),
        "a 1 s timeout took {took:?}"
    );

    // A report made during the wait wakes it within a second.
    let token = served.answer("box_send", json!({"name": "three", "text": "again"}))["token"]
        .as_str()
        .unwrap()
        .to_string();
    std::thread::sleep(Duration::from_millis(600));
    let reported = std::sync::Arc::new(std::sync::Mutex::new(None::<Instant>));
    let report = {
        let reported = reported.clone();
        let writer = writer.clone();
        let home = env.home.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            let ok = std::process::Command::new("sh")
                .arg(&writer)
                .arg("waiting")
                .env("HOME", home)
                .status()
                .unwrap()
                .success();
            assert!(ok);
            *reported.lock().unwrap() = Some(Instant::now());
        })
    };
    let out = served.answer(
        "box_wait",
        json!({"names": ["three"], "until": ["waiting"], "after": token, "timeout_s": 20}),
    );
    let woke = Instant::now();
    report.join().unwrap();
    assert_eq!(
        out["reached"],
        json!([{"name": "three", "state": "waiting"}])
    );
    let at = reported.lock().unwrap().expect("reported");
    assert!(
        woke.duration_since(at) < Duration::from_secs(1),
        "woke {:?} after the report",
        woke.duration_since(at)
    );

    // An ended session is `exited`, whatever `after` says.
    assert_eq!(
        served.answer("box_stop", json!({"name": "three"}))["stopped"],
        true
    );
    let out = served.answer(
        "box_wait",
        json!({"names": ["three"], "until": ["idle", "exited"], "after": token, "timeout_s": 5}),
    );
    assert_eq!(out["reached"][0]["state"], "exited", "{out}");

    // Bad arguments: usage (2); nothing to wait on: no session (3).
    for bad in [
        json!({"until": [], "timeout_s": 5}),
        json!({"until": ["idle"], "timeout_s": 0}),
        json!({"until": ["idle"], "timeout_s": 3601}),
        json!({"until": ["working"], "timeout_s": 5}),
        json!({"until": ["idle"], "after": "yesterday", "timeout_s": 5}),
        json!({"until": ["idle"]}),
    ] {
        let e = served.refusal("box_wait", bad.clone());
        assert_eq!(e["code"], 2, "{bad}: {e}");
    }
    let e = served.refusal("box_wait", json!({"until": ["idle"], "timeout_s": 5}));
    assert_eq!(e["kind"], "no-session", "{e}");
    let e = served.refusal(
        "box_wait",
        json!({"names": ["nosuch"], "until": ["idle"], "timeout_s": 5}),
    );
    assert_eq!(e["code"], 3, "{e}");
}

#[test]
fn mcp_box_create_is_held_to_the_runners_the_user_allows() {
    let env = TestEnv::new();
    with_paste_agent(&env, "");
    let served = Served::start(&env);
    let before = env.snapshot();
    // Nothing in the config: only what `create` picks with no flag (here the host).
    for isolation in ["docker", "podman"] {
        let e = served.refusal(
            "box_create",
            json!({"name": "boxed", "isolation": isolation}),
        );
        assert_eq!(e["code"], 2, "{e}");
        assert_eq!(e["kind"], "not-allowed", "{e}");
        assert!(
            e["message"].as_str().unwrap().contains("allowed: host"),
            "{e}"
        );
        assert!(e["hint"].as_str().unwrap().contains("mcp"), "{e}");
    }
    // The user allows containers only: the host is refused, asked for or not.
    with_paste_agent(&env, r#", "mcp": {"isolation": ["docker"]}"#);
    let e = served.refusal("box_create", json!({"name": "free", "isolation": "host"}));
    assert_eq!(e["kind"], "not-allowed", "{e}");
    // Arguments no tool takes: `--force`-like flags, a template, unknown values.
    for bad in [
        json!({"name": "x", "force": true}),
        json!({"name": "x", "template": "/tmp/t"}),
        json!({"name": "x", "isolation": "vm"}),
        json!({"name": "x", "harness": "aider"}),
        json!({"name": "x", "mode": "folder"}),
        json!({"name": "x", "prompt": "go\u{1b}[201~"}),
    ] {
        let e = served.refusal("box_create", bad.clone());
        assert_eq!(e["code"], 2, "{bad}: {e}");
    }
    assert_eq!(
        env.snapshot(),
        before,
        "a refused box_create wrote something"
    );
}

#[test]
fn mcp_box_create_reports_an_agent_that_exits_before_it_is_ready() {
    let mut env = TestEnv::new();
    env.extra_env.push(("FAKE_EXIT".into(), "3".into()));
    let served = Served::start(&env);
    let e = served.refusal("box_create", json!({"name": "dies", "isolation": "host"}));
    assert_eq!(e["kind"], "agent-exited", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("exited with code 3"),
        "{e}"
    );
    assert!(e["hint"].as_str().unwrap().contains("enter"), "{e}");
    // The box stays, as `create -d` leaves it, its agent's exit code listed.
    let listed = served.answer("box_list", json!({}));
    assert_eq!(named(&listed, "boxes", "dies")["exitCode"], 3, "{listed}");
    assert!(Path::new(&env.box_path("dies")).is_dir());
}

/// The real Claude Code and Codex as the box's agent (a user's returning setup, each
/// against its stand-in API): `box_create` with a two-line prompt brings each up and
/// types the prompt as one prompt, `box_wait` returns on the idle that ends that turn
/// (not the one before it), and `box_send` types a second prompt the same way.
#[test]
fn mcp_typed_prompts_reach_the_real_agents_as_one_prompt_each() {
    use crate::real_agents::{Agent, World};
    for agent in [Agent::Claude, Agent::Codex] {
        let Some(w) = World::new(agent) else {
            return;
        };
        let name = agent.name();
        let leaf = format!("lead-made-{name}");
        let served = Served::start(w.env());
        w.api.answer(&format!("FIRST-ANSWER-{name}"));
        let doc = served.answer(
            "box_create",
            json!({"name": leaf, "harness": name, "isolation": "host",
                   "prompt": "first line of the prompt\nsecond line, same prompt"}),
        );
        assert_eq!(doc["agent"]["state"], "ready", "{name}: {doc}");
        let token = doc["token"].as_str().expect("a token").to_string();
        let waited = served.answer(
            "box_wait",
            json!({"names": [leaf], "until": ["idle", "waiting", "exited"], "after": token, "timeout_s": 120}),
        );
        assert_eq!(
            waited["reached"],
            json!([{"name": leaf, "state": "idle"}]),
            "{name}: {waited}\n{}",
            w.screen(&leaf)
        );
        w.wait(&leaf, "the first answer on the screen", 30, || {
            w.screen(&leaf).contains(&format!("FIRST-ANSWER-{name}"))
        });
        let asked = |text: &str| {
            w.api
                .model_requests()
                .iter()
                .filter(|r| r.body.contains(text))
                .count()
        };
        assert!(
            asked("first line of the prompt\\nsecond line, same prompt") > 0,
            "{name}: the two lines did not reach the model as one prompt:\n{}",
            w.api.describe()
        );

        w.api.answer(&format!("SECOND-ANSWER-{name}"));
        let sent = served.answer(
            "box_send",
            json!({"name": leaf, "text": "and now\nthe second prompt"}),
        );
        let waited = served.answer(
            "box_wait",
            json!({"names": [leaf], "until": ["idle"], "after": sent["token"], "timeout_s": 120}),
        );
        assert_eq!(waited["timedOut"], false, "{name}: {waited}");
        w.wait(&leaf, "the second answer on the screen", 30, || {
            w.screen(&leaf).contains(&format!("SECOND-ANSWER-{name}"))
        });
        assert!(
            asked("and now\\nthe second prompt") > 0,
            "{name}: {}",
            w.api.describe()
        );
        assert_eq!(
            served.answer("box_stop", json!({"name": leaf}))["stopped"],
            true
        );
    }
}

/// `git treebox mcp --all`: every repository `git sandbox ls` knows, each tool's `repo`
/// picking one; a box name alone where it is found in exactly one; a server of one
/// repository takes no other.
#[test]
fn mcp_all_serves_every_repository_and_repo_picks_one() {
    let env = TestEnv::new();
    with_paste_agent(&env, "");
    let second = env.root().join("second");
    env.git(
        &env.root(),
        &["clone", "-q", &env.origin.to_string_lossy(), "second"],
    );
    host_box(&env, "same");
    host_box(&env, "only-first");
    env.treebox_in(
        &second,
        &[
            "create",
            "same",
            "--isolation",
            "host",
            "--no-launch",
            "--no-fetch",
        ],
    )
    .ok();
    let first = env.repo.canonicalize().unwrap();
    let second = second.canonicalize().unwrap();
    let (first_s, second_s) = (first.to_string_lossy(), second.to_string_lossy());

    let one = Served::start(&env);
    let e = one.refusal("box_list", json!({"repo": second_s}));
    assert_eq!(e["code"], 2, "{e}");
    assert!(e["hint"].as_str().unwrap().contains("--all"), "{e}");
    assert_eq!(
        one.answer("box_list", json!({"repo": first_s}))["repo"],
        first_s.as_ref()
    );
    drop(one);

    // Started anywhere, even outside every repository.
    let all = Served::start_in(&env, &env.root(), &["--all"]);
    let every = all.answer("box_list", json!({}));
    assert_valid("sandbox-ls", &every, "box_list --all");
    let mut seen: Vec<(String, String)> = every["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["repo"].as_str().unwrap().into(),
                b["name"].as_str().unwrap().into(),
            )
        })
        .collect();
    seen.sort();
    let mut want = vec![
        (first_s.to_string(), "only-first".to_string()),
        (first_s.to_string(), "same".to_string()),
        (second_s.to_string(), "same".to_string()),
    ];
    want.sort();
    assert_eq!(seen, want);
    let listed = all.answer("box_list", json!({"repo": second_s}));
    assert_valid("list", &listed, "box_list with repo");
    assert_eq!(listed["repo"], second_s.as_ref());

    // A name in one repository needs no `repo`; one in two does.
    assert_eq!(
        all.answer("box_diff", json!({"name": "only-first"}))["name"],
        "only-first"
    );
    let e = all.refusal("box_diff", json!({"name": "same"}));
    assert_eq!(e["code"], 2, "{e}");
    assert!(
        e["message"].as_str().unwrap().contains(second_s.as_ref()),
        "{e}"
    );
    let d = all.answer("box_diff", json!({"name": "same", "repo": second_s}));
    assert_eq!(d["name"], "same");
    let e = all.refusal("box_diff", json!({"name": "nowhere"}));
    assert_eq!(e["code"], 3, "{e}");
    let e = all.refusal("box_list", json!({"repo": "/nonexistent"}));
    assert_eq!(e["code"], 2, "{e}");
    let e = all.refusal("box_list", json!({"repo": 5}));
    assert_eq!(e["code"], 2, "{e}");

    // box_create names its repository.
    let before = env.snapshot();
    let e = all.refusal("box_create", json!({"name": "fresh"}));
    assert_eq!(e["code"], 2, "{e}");
    assert_eq!(env.snapshot(), before);
    let made = all.answer("box_create", json!({"name": "fresh", "repo": second_s}));
    assert_eq!(made["box"]["repo"], second_s.as_ref(), "{made}");
    assert_eq!(made["agent"]["state"], "ready", "{made}");
    let waited = all.answer(
        "box_wait",
        json!({"names": ["fresh"], "until": ["idle"], "timeout_s": 10}),
    );
    assert_eq!(waited["reached"][0]["name"], "fresh", "{waited}");
    assert_eq!(
        all.answer("box_stop", json!({"name": "fresh"}))["stopped"],
        true
    );
}

/// A prompt typed while the agent's previous turn still runs: `box_wait` with its token
/// does not end at that earlier turn's end, but at the end of the turn of the prompt
/// it was handed out for (the hooks' counts of prompts taken and turns ended).
#[test]
fn mcp_box_wait_waits_for_the_turn_of_its_own_prompt() {
    let env = TestEnv::new();
    with_paste_agent(&env, "");
    std::fs::write(env.home.join("turn-seconds"), "2\n").unwrap();
    let served = Served::start(&env);
    let doc = served.answer("box_create", json!({"name": "busy", "prompt": "first"}));
    assert!(doc["token"].as_str().unwrap().contains('p'), "{doc}");
    until("the first prompt to be taken", || {
        std::fs::read_to_string(env.home.join("turns")).is_ok()
    });
    std::thread::sleep(Duration::from_millis(500));
    let sent = served.answer("box_send", json!({"name": "busy", "text": "second"}));
    let token = sent["token"].as_str().unwrap().to_string();
    assert!(token.ends_with("p1"), "{token}");
    let waited = served.answer(
        "box_wait",
        json!({"names": ["busy"], "until": ["idle"], "after": token, "timeout_s": 20}),
    );
    assert_eq!(waited["reached"][0]["state"], "idle", "{waited}");
    let ended = std::fs::read_to_string(env.home.join("ended")).unwrap_or_default();
    assert_eq!(
        ended.lines().count(),
        2,
        "box_wait returned at the first turn's end: {waited}"
    );
}

/// An agent CLI gives the programs it starts variables of its own session (Claude
/// Code's `CLAUDECODE`, session id, messaging socket): an agent started in a box gets
/// none of them, whoever started treebox — a lead agent's MCP server, a Claude Code
/// running `create -d` through its shell (a tmux session), or one running `create`
/// with no terminal (the agent in the foreground); a login variable reaches it.
#[test]
fn agents_in_boxes_do_not_inherit_the_session_of_the_agent_that_started_treebox() {
    let mut env = TestEnv::new();
    with_paste_agent(&env, "");
    for (k, v) in [
        ("CLAUDECODE", "1"),
        ("CLAUDE_CODE_SESSION_ID", "lead-session"),
        ("CLAUDE_CODE_MESSAGING_SOCKET", "/tmp/lead.sock"),
        ("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat-kept"),
    ] {
        env.extra_env.push((k.into(), v.into()));
    }
    let seen = || {
        let seen = std::fs::read_to_string(env.home.join("agent-env")).unwrap();
        std::fs::remove_file(env.home.join("agent-env")).unwrap();
        seen
    };
    let served = Served::start(&env);
    served.answer("box_create", json!({"name": "child"}));
    let by_mcp = seen();
    env.treebox(&["create", "-d", "shelled", "--isolation", "host"])
        .ok();
    let by_create_d = seen();
    env.treebox(&["create", "fg", "--isolation", "host"]).ok();
    let in_foreground = seen();
    for (how, seen) in [
        ("box_create", by_mcp),
        ("create -d", by_create_d),
        ("create, foreground", in_foreground),
    ] {
        for gone in [
            "CLAUDECODE=",
            "CLAUDE_CODE_SESSION_ID=",
            "CLAUDE_CODE_MESSAGING_SOCKET=",
        ] {
            assert!(
                !seen.lines().any(|l| l.starts_with(gone)),
                "{how}: {gone} reached the agent:\n{seen}"
            );
        }
        assert!(
            seen.contains("CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat-kept"),
            "{how}: {seen}"
        );
    }
}
