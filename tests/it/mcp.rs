//! `git treebox mcp` (SPEC §10d, issue 40, first slice): the built binary driven over
//! its stdio by rmcp's own client — `initialize`, `tools/list` (pinned), and each
//! tool's answer and refusals against what the CLI prints; a hostile box answered
//! promptly, control characters made harmless, and a server that holds no socket.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};

use crate::env::{named, write_exec, TestEnv, TREEBOX};
use crate::schema::assert_valid;

/// Every tool, in the order `tools/list` gives them.
pub(crate) const TOOLS: [&str; 9] = [
    "box_create",
    "box_list",
    "box_send",
    "box_wait",
    "box_diff",
    "box_screen",
    "box_stop",
    "box_remove",
    "box_land",
];

/// A server of the fixture's repository and the client speaking to it, on a runtime of
/// the test's own. Dropped: the client closes the connection and the server is gone.
pub(crate) struct Served {
    pub(crate) runtime: tokio::runtime::Runtime,
    client: Option<RunningService<RoleClient, ()>>,
    pid: u32,
}

impl Served {
    pub(crate) fn start(env: &TestEnv) -> Served {
        Served::start_in(env, &env.repo, &[])
    }

    /// `git treebox mcp ARGS` started in `dir`.
    pub(crate) fn start_in(env: &TestEnv, dir: &Path, args: &[&str]) -> Served {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut cmd = env.command(TREEBOX, dir);
        cmd.arg("mcp").args(args);
        let stderr = std::fs::File::create(env.root().join("mcp.stderr")).unwrap();
        let (client, pid) = runtime.block_on(async {
            let (transport, _) = TokioChildProcess::builder(tokio::process::Command::from(cmd))
                .stderr(stderr)
                .spawn()
                .expect("spawn git-treebox mcp");
            let pid = transport.id().expect("the server's pid");
            (().serve(transport).await.expect("initialize"), pid)
        });
        Served {
            runtime,
            client: Some(client),
            pid,
        }
    }

    pub(crate) fn client(&self) -> &RunningService<RoleClient, ()> {
        self.client.as_ref().expect("connected")
    }

    /// `tools/call NAME ARGS`: the result, as the client received it.
    pub(crate) fn call(&self, name: &'static str, args: Value) -> CallToolResult {
        let args = args.as_object().expect("arguments are an object").clone();
        let params = CallToolRequestParams::new(name).with_arguments(args);
        self.runtime
            .block_on(self.client().call_tool(params))
            .unwrap_or_else(|e| panic!("tools/call {name}: {e}"))
    }

    /// A call that must answer: its document.
    #[track_caller]
    pub(crate) fn answer(&self, name: &'static str, args: Value) -> Value {
        let r = self.call(name, args);
        assert_eq!(r.is_error, Some(false), "{name}: {r:#?}");
        document(&r)
    }

    /// A call that must be refused: its error document, valid against the schema of
    /// the CLI's JSON errors.
    #[track_caller]
    pub(crate) fn refusal(&self, name: &'static str, args: Value) -> Value {
        let r = self.call(name, args);
        assert_eq!(r.is_error, Some(true), "{name}: {r:#?}");
        let doc = document(&r);
        assert_valid("error", &doc, name);
        doc["error"].clone()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut client) = self.client.take() {
            let _ = self
                .runtime
                .block_on(client.close_with_timeout(Duration::from_secs(10)));
        }
        // The server ends once its stdin closes; nothing is left running.
        let since = Instant::now();
        while Path::new(&format!("/proc/{}", self.pid)).exists()
            && since.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A result's structured document; its text content says the same.
#[track_caller]
pub(crate) fn document(r: &CallToolResult) -> Value {
    let doc = r.structured_content.clone().expect("structuredContent");
    let text = r
        .content
        .first()
        .and_then(|c| c.as_text())
        .expect("a text block");
    assert_eq!(serde_json::from_str::<Value>(&text.text).unwrap(), doc);
    doc
}

/// Every string of `v` (keys too) free of what a terminal would act on.
#[track_caller]
pub(crate) fn harmless(v: &Value) {
    let bad = |s: &str| {
        s.chars().any(|c| {
            (c.is_control() && c != '\n' && c != '\t') || treebox::sanitize::is_bidi_control(c)
        })
    };
    match v {
        Value::String(s) => assert!(!bad(s), "a control reached the client: {s:?}"),
        Value::Array(a) => a.iter().for_each(harmless),
        Value::Object(m) => m.iter().for_each(|(k, v)| {
            assert!(!bad(k), "a control reached the client: {k:?}");
            harmless(v)
        }),
        _ => {}
    }
}

pub(crate) fn host_box(env: &TestEnv, name: &str) -> std::path::PathBuf {
    env.treebox(&[
        "create",
        name,
        "--isolation",
        "host",
        "--no-launch",
        "--no-fetch",
    ])
    .ok();
    env.box_path(name)
}

#[test]
fn mcp_initialize_names_the_server_and_lists_its_tools() {
    let env = TestEnv::new();
    let served = Served::start(&env);
    let info = served
        .client()
        .peer_info()
        .expect("the server's initialize result");
    let server = info.server_info.clone().expect("serverInfo");
    assert_eq!(server.name, "treebox");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    assert!(info.capabilities.tools.is_some(), "{info:#?}");
    let tools = served
        .runtime
        .block_on(served.client().list_all_tools())
        .unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, TOOLS);
    let pinned: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema, "annotations": t.annotations}))
        .collect();
    insta::assert_snapshot!("mcp-tools", serde_json::to_string_pretty(&pinned).unwrap());
}

#[test]
fn mcp_box_list_is_the_list_json_document() {
    let env = TestEnv::new();
    let served = Served::start(&env);
    assert_eq!(served.answer("box_list", json!({}))["boxes"], json!([]));
    host_box(&env, "alpha");
    let b = host_box(&env, "beta");
    env.commit_file(&b, "b.txt", "b\n", "b's work");
    let listed = env.treebox(&["list", "--json"]).ok().json();
    let doc = served.answer("box_list", json!({}));
    assert_valid("list", &doc, "box_list");
    assert_eq!(doc, listed);
    assert_eq!(named(&doc, "boxes", "beta")["branch"], "beta");
    // No tool takes what the CLI would not let a lead agent pass.
    let e = served.refusal("box_list", json!({"force": true}));
    assert_eq!(e["code"], 2, "{e}");
    assert!(e["message"].as_str().unwrap().contains("force"), "{e}");
}

#[test]
fn mcp_box_diff_answers_as_diff_json_and_refuses_as_it_does() {
    let env = TestEnv::new();
    let b = host_box(&env, "work");
    env.commit_file(&b, "src/new.txt", "one\ntwo\n", "add new");
    let served = Served::start(&env);
    let doc = served.answer("box_diff", json!({"name": "work"}));
    assert_valid("diff", &doc, "box_diff");
    assert_eq!(doc, env.treebox(&["diff", "work", "--json"]).ok().json());
    let files = doc["files"].as_array().unwrap();
    let file = files.iter().find(|f| f["path"] == "src/new.txt");
    let file = file.unwrap_or_else(|| panic!("src/new.txt not listed: {doc}"));
    assert_eq!(file["status"], "added", "{doc}");
    assert_eq!(file["additions"], 2, "{doc}");
    assert_eq!(doc["commits"][0]["subject"], "add new");
    assert!(doc["patch"].as_str().unwrap().contains("+two"), "{doc}");
    let stat = served.answer("box_diff", json!({"name": "work", "stat": true}));
    assert!(stat.get("patch").is_none(), "{stat}");
    assert_eq!(stat["files"], doc["files"]);
    // An unknown box: the CLI's refusal, its exit code and hint.
    let cli = env.treebox(&["diff", "nope", "--json"]);
    cli.code(3);
    let e = served.refusal("box_diff", json!({"name": "nope"}));
    assert_eq!(e["code"], 3, "{e}");
    assert_eq!(e["kind"], "box-not-found", "{e}");
    assert!(
        e["hint"]
            .as_str()
            .is_some_and(|h| h.contains("git treebox list")),
        "{e}"
    );
    let printed: Value = serde_json::from_str(cli.stderr.trim()).unwrap();
    assert_eq!(e, printed["error"]);
    // Arguments the schema does not allow: usage (2), and the server still answers.
    for bad in [
        json!({}),
        json!({"name": 7}),
        json!({"name": "work", "patch": false}),
    ] {
        assert_eq!(served.refusal("box_diff", bad.clone())["code"], 2, "{bad}");
    }
    assert_eq!(
        served.answer("box_diff", json!({"name": "work"}))["name"],
        "work"
    );
}

/// A stand-in agent that reports its start as Claude Code does, prints a C1 CSI and a
/// bidi override among its lines, and stays up until `$HOME/stop-<box>` exists.
const AGENT: &str = "#!/bin/sh
printf 'RED \\302\\233\\063\\061m c1 csi\\n'
printf 'bidi \\342\\200\\256gnp.exe\\n'
printf 'agent %s ready\\n' \"$TREEBOX_BOX\"
while [ ! -f \"$HOME/stop-$TREEBOX_BOX\" ]; do sleep 0.05; done
";

#[test]
fn mcp_box_screen_reads_a_live_session_and_refuses_a_box_without_one() {
    let env = TestEnv::new();
    write_exec(
        &env.bin.join("claude"),
        &crate::sessions::claude_like(AGENT),
    );
    host_box(&env, "quiet");
    env.treebox(&["create", "-d", "--no-fetch", "live"]).ok();
    let served = Served::start(&env);
    let e = served.refusal("box_screen", json!({"name": "quiet"}));
    assert_eq!(e["code"], 3, "{e}");
    assert_eq!(e["kind"], "no-session", "{e}");
    assert!(
        e["hint"]
            .as_str()
            .unwrap()
            .contains("git treebox enter -d quiet"),
        "{e}"
    );
    for lines in [0, 201] {
        let e = served.refusal("box_screen", json!({"name": "live", "lines": lines}));
        assert_eq!(e["code"], 2, "{e}");
    }
    // The pane fills as the agent prints: read it until its last line is there.
    let since = Instant::now();
    let doc = loop {
        let doc = served.answer("box_screen", json!({"name": "live"}));
        let text = doc["lines"].to_string();
        if text.contains("agent live ready") || since.elapsed() > Duration::from_secs(20) {
            break doc;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_valid("screen", &doc, "box_screen");
    assert_eq!(doc["name"], "live");
    let lines: Vec<&str> = doc["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(lines.last(), Some(&"agent live ready"), "{doc}");
    assert!(lines.iter().any(|l| l.starts_with("bidi ")), "{doc}");
    harmless(&doc);
    let one = served.answer("box_screen", json!({"name": "live", "lines": 1}));
    assert_eq!(one["lines"], json!(["agent live ready"]));
    std::fs::write(env.home.join("stop-live"), "").unwrap();
}

#[test]
fn mcp_a_hostile_box_is_diffed_as_its_commits_promptly() {
    let env = TestEnv::new();
    let b = host_box(&env, "fifo");
    env.commit_file(&b, "work.txt", "work\n", "work");
    crate::env::mkfifo(&b.join(".gitignore"));
    let served = Served::start(&env);
    let since = Instant::now();
    let doc = served.answer("box_diff", json!({"name": "fifo"}));
    assert!(
        since.elapsed() < Duration::from_secs(10),
        "{:?}",
        since.elapsed()
    );
    assert_eq!(doc["worktreeRead"], false, "{doc}");
    assert_eq!(doc["commits"][0]["subject"], "work", "{doc}");
    // The server answers the next call as usual.
    let listed = served.answer("box_list", json!({}));
    assert_eq!(named(&listed, "boxes", "fifo")["name"], "fifo");
}

#[test]
fn mcp_control_characters_from_a_box_reach_the_client_harmless() {
    let env = TestEnv::new();
    let b = host_box(&env, "evil");
    // git forbids ESC in names, not C1 controls or bidi overrides.
    let hostile = "evil\u{9b}41m\u{202e}gnp.exe";
    env.git(&b, &["branch", "-m", hostile]);
    env.commit_file(&b, "x.txt", "x\n", &format!("subject {hostile}"));
    let served = Served::start(&env);
    let listed = served.answer("box_list", json!({}));
    harmless(&listed);
    let shown = "evil\\u{9b}41m\\u{202e}gnp.exe";
    assert_eq!(named(&listed, "boxes", "evil")["branch"], shown, "{listed}");
    let diff = served.answer("box_diff", json!({"name": "evil"}));
    harmless(&diff);
    assert_eq!(diff["branch"], shown, "{diff}");
    assert_eq!(diff["commits"][0]["subject"], format!("subject {shown}"));
    // A refusal naming what the client sent is harmless too.
    let e = served.refusal("box_diff", json!({"name": "no\u{9b}such\u{202e}"}));
    harmless(&e);
}

#[test]
fn mcp_the_server_holds_no_socket_and_keeps_stdout_for_the_protocol() {
    let env = TestEnv::new();
    host_box(&env, "one");
    let served = Served::start(&env);
    served.answer("box_list", json!({}));
    served.answer("box_diff", json!({"name": "one"}));
    let fd = |n: &str| std::fs::read_link(format!("/proc/{}/fd/{n}", served.pid)).unwrap();
    let fds: Vec<String> = std::fs::read_dir(format!("/proc/{}/fd", served.pid))
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .map(|l| l.to_string_lossy().into_owned())
        .collect();
    assert!(
        !fds.iter().any(|l| l.starts_with("socket:")),
        "the server holds a socket: {fds:?}"
    );
    // Its stdin reads nothing (children inherit /dev/null), its stdout is its stderr:
    // the protocol runs on private copies.
    assert_eq!(fd("0"), Path::new("/dev/null"));
    assert_eq!(fd("1"), fd("2"));
    assert_eq!(fd("2"), env.root().join("mcp.stderr"));
    assert!(
        fds.iter().filter(|l| l.starts_with("pipe:")).count() >= 2,
        "{fds:?}"
    );
}

#[test]
fn mcp_refuses_to_start_inside_a_box_and_ends_when_the_client_leaves() {
    let env = TestEnv::new();
    let b = host_box(&env, "inner");
    let before = env.snapshot();
    for (dir, extra) in [(&b, None), (&env.repo, Some(("TREEBOX_BOX", "inner")))] {
        let mut c = env.command(TREEBOX, dir);
        c.arg("mcp").stdout(Stdio::piped()).stderr(Stdio::piped());
        if let Some((k, v)) = extra {
            c.env(k, v);
        }
        let r = crate::env::Run::from_output(c.output().unwrap());
        r.code(2);
        assert!(r.stdout.is_empty(), "{r:?}");
        assert!(r.stderr.contains("does not run inside a box"), "{r:?}");
        let hint = format!("cd {} && git treebox mcp", env.repo.display());
        assert!(r.stderr.contains(&hint), "{r:?}");
        assert_eq!(env.snapshot(), before, "a refused start wrote something");
    }
    // A client that sends `initialize` and leaves: one answer on stdout, exit 0.
    let mut c = env.command(TREEBOX, &env.repo);
    c.arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
        )
        .unwrap();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("only JSON-RPC on stdout"))
        .collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    assert_eq!(lines[0]["result"]["serverInfo"]["name"], "treebox");
}

/// The server behind `tee`s, for a real client to start: what the client sent and what
/// the server answered land in `mcp.in` and `mcp.out` beside the test's repository.
fn logged_server(env: &TestEnv) -> std::path::PathBuf {
    let root = env.root();
    let script = root.join("logged-mcp.sh");
    write_exec(
        &script,
        &format!(
            "#!/bin/sh\necho \"$PWD\" > {root}/mcp.cwd\ntee -a {root}/mcp.in | {TREEBOX} mcp 2>>{root}/mcp.err | tee -a {root}/mcp.out\n",
            root = root.display()
        ),
    );
    script
}

/// The client started the server in the repository, asked for its tools and got all
/// three; once the client is gone, so is the server.
#[track_caller]
fn served_a_real_client(env: &TestEnv, client: &str, run: &crate::env::Run) {
    let root = env.root();
    let read = |f: &str| std::fs::read_to_string(root.join(f)).unwrap_or_default();
    let sent = read("mcp.in");
    assert!(
        sent.contains("\"tools/list\""),
        "{client} asked for no tools: {sent}\n{run:?}"
    );
    let listed = read("mcp.out")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["result"]["tools"].is_array())
        .unwrap_or_else(|| panic!("no tools/list answer to {client}: {}", read("mcp.out")));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, TOOLS, "{client}");
    assert_eq!(
        read("mcp.cwd").trim(),
        env.repo.to_string_lossy(),
        "{client}"
    );
    assert_eq!(read("mcp.err"), "", "{client}: the server complained");
    let since = Instant::now();
    let script = root.join("logged-mcp.sh").to_string_lossy().into_owned();
    let mine = || {
        crate::env::processes_where(|p| {
            let cmd = std::fs::read(p.join("cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd);
            cmd.contains(&script) || cmd.contains(&format!("{}/mcp.", root.display()))
        })
    };
    while !mine().is_empty() && since.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        mine(),
        Vec::<i32>::new(),
        "{client} left the server running"
    );
}

/// Real MCP clients (`TREEBOX_TEST_AGENTS`, found as the real-agent tests find it),
/// each against its stand-in model API: Codex from an `mcp_servers` entry in its
/// config, Claude Code from `--mcp-config`. Each starts `git treebox mcp` in the
/// project, goes through its handshake (Claude Code 2.1's is the 2026-07-28
/// `server/discover`, Codex 0.163's `initialize`) and lists the tools. The lead-agent
/// flow itself, the model calling the tools, comes with the tools that act.
#[test]
fn mcp_the_real_codex_and_claude_start_the_server_and_list_its_tools() {
    let Some(dir) = crate::real_agents::agents_dir("codex")
        .and_then(|_| crate::real_agents::agents_dir("claude"))
    else {
        return;
    };
    let run_in_repo = |env: &TestEnv, program: &str, args: &[&str], vars: &[(&str, &str)]| {
        let mut c = env.command("timeout", &env.repo);
        c.arg("120").arg(dir.join(program)).args(args);
        // The CLI's own temp dirs in the test's tree, never in the machine's /tmp.
        let tmp = env.root().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        c.env("TMPDIR", &tmp);
        for (k, v) in vars {
            c.env(k, v);
        }
        crate::env::Run::from_output(c.output().unwrap())
    };

    let env = TestEnv::new();
    let server = logged_server(&env);
    let api = crate::stand_in::StandIn::openai("done");
    let config = format!(
        "model_provider = \"stand-in\"\n\n[model_providers.stand-in]\nname = \"stand-in\"\nbase_url = \"{url}/v1\"\nwire_api = \"responses\"\nenv_key = \"{key}\"\n\n[features]\ndaemon_auto_start = false\n\n[mcp_servers.treebox]\ncommand = \"{server}\"\n",
        url = api.url(),
        key = crate::real_agents::CODEX_KEY_VAR,
        server = server.display(),
    );
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    std::fs::write(env.home.join(".codex/config.toml"), config).unwrap();
    let r = run_in_repo(
        &env,
        "codex",
        &["exec", "--skip-git-repo-check", "say done"],
        &[(crate::real_agents::CODEX_KEY_VAR, "sk-stand-in-openai")],
    );
    served_a_real_client(&env, "codex", &r);

    let env = TestEnv::new();
    let server = logged_server(&env);
    let api = crate::stand_in::StandIn::anthropic("done");
    let mcp = json!({"mcpServers": {"treebox": {"command": server}}}).to_string();
    let r = run_in_repo(
        &env,
        "claude",
        &[
            "-p",
            "say done",
            "--mcp-config",
            &mcp,
            "--strict-mcp-config",
        ],
        &[
            ("ANTHROPIC_BASE_URL", &api.url()),
            ("ANTHROPIC_API_KEY", "sk-ant-stand-in-0123456789abcdefghij"),
        ],
    );
    served_a_real_client(&env, "claude", &r);
}

/// `git ARGS` in `dir`, trimmed.
fn git(env: &TestEnv, dir: &Path, args: &[&str]) -> String {
    env.git(dir, args).trim().to_string()
}

/// The user's refs (origin's included), origin's own, and the main checkout's status:
/// what a refused land must leave as it was.
fn repo_state(env: &TestEnv) -> String {
    let refs = git(
        env,
        &env.repo,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    );
    let origin = git(env, &env.root().join("origin.git"), &["for-each-ref"]);
    let status = git(env, &env.repo, &["status", "--porcelain"]);
    format!("{refs}\n--\n{origin}\n--\n{status}")
}

/// A host box with one commit of its own (`<name>.txt`).
fn worked_box(env: &TestEnv, name: &str) -> std::path::PathBuf {
    let b = host_box(env, name);
    env.commit_file(&b, &format!("{name}.txt"), "work\n", &format!("add {name}"));
    b
}

/// Is the box's agent session live, as `list --json` says?
fn live_in_list(env: &TestEnv, name: &str) -> bool {
    let listed = env.treebox(&["list", "--json"]).ok().json();
    named(&listed, "boxes", name)["session"] == "live"
}

#[test]
fn mcp_box_stop_ends_a_live_session_and_does_nothing_without_one() {
    let env = TestEnv::new();
    write_exec(
        &env.bin.join("claude"),
        &crate::sessions::claude_like(AGENT),
    );
    host_box(&env, "quiet");
    env.treebox(&["create", "-d", "--no-fetch", "live"]).ok();
    assert!(live_in_list(&env, "live"));
    let served = Served::start(&env);
    // No session: nothing to stop, said so, and no error.
    let doc = served.answer("box_stop", json!({"name": "quiet"}));
    assert_valid("stop", &doc, "box_stop");
    assert_eq!(
        doc,
        json!({"schemaVersion": 1, "name": "quiet", "stopped": false})
    );
    // The stand-in agent would stay up forever: the session ends it.
    let doc = served.answer("box_stop", json!({"name": "live"}));
    assert_valid("stop", &doc, "box_stop");
    assert_eq!(doc["stopped"], true, "{doc}");
    assert!(!live_in_list(&env, "live"));
    let e = served.refusal("box_screen", json!({"name": "live"}));
    assert_eq!(e["kind"], "no-session", "{e}");
    // Its box and work stay; stopping again does nothing.
    assert!(env.box_path("live").exists());
    let again = served.answer("box_stop", json!({"name": "live"}));
    assert_eq!(again["stopped"], false, "{again}");
    let e = served.refusal("box_stop", json!({"name": "nope"}));
    assert_eq!(
        (e["code"].clone(), e["kind"].clone()),
        (json!(3), json!("box-not-found"))
    );
    let e = served.refusal("box_stop", json!({"name": "live", "force": true}));
    assert_eq!(e["code"], 2, "{e}");
}

#[test]
fn mcp_box_remove_is_down_without_force_off_a_terminal() {
    let env = TestEnv::new();
    // Landed (its commit squash-merged into origin's main) and clean: it goes.
    let done = worked_box(&env, "done");
    let dirty = worked_box(&env, "dirty");
    std::fs::write(dirty.join("scratch.txt"), "not committed\n").unwrap();
    env.treebox(&["land", "done"]).ok();
    git(&env, &env.repo, &["push", "-q", "origin", "main"]);
    let served = Served::start(&env);

    // Dirty: `down`'s refusal, its exit code and hints, nothing removed.
    let cli = env.sandbox(&["down", "dirty", "--json"]);
    cli.code(5);
    let printed: Value = serde_json::from_str(cli.stderr.trim()).unwrap();
    let e = served.refusal("box_remove", json!({"name": "dirty"}));
    assert_eq!(e, printed["error"]);
    assert_eq!(e["code"], 5, "{e}");
    assert_eq!(e["kind"], "needs-confirmation", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("uncommitted or untracked changes"),
        "{e}"
    );
    assert!(
        e["hint"]
            .as_str()
            .unwrap()
            .contains("git sandbox down -f dirty"),
        "{e}"
    );
    assert!(dirty.join("scratch.txt").exists());
    assert_eq!(
        git(
            &env,
            &env.repo,
            &["rev-parse", "--verify", "-q", "refs/heads/dirty"]
        )
        .len(),
        40
    );
    // A part of a name is not naming the box.
    let e = served.refusal("box_remove", json!({"name": "don"}));
    assert_eq!(e["kind"], "needs-confirmation", "{e}");
    assert!(e["hint"].as_str().unwrap().contains("down done"), "{e}");
    assert!(done.exists());
    // No force through the tool.
    let e = served.refusal("box_remove", json!({"name": "dirty", "force": true}));
    assert_eq!(e["code"], 2, "{e}");
    assert!(dirty.exists());

    let doc = served.answer("box_remove", json!({"name": "done"}));
    assert_valid("sandbox-down", &doc, "box_remove");
    assert_eq!(doc["removed"][0]["name"], "done", "{doc}");
    assert!(!done.exists());
    let listed = served.answer("box_list", json!({}));
    let names: Vec<&str> = listed["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["dirty"], "{listed}");
}

#[test]
fn mcp_box_land_needs_the_users_leave_and_lands_as_land_json() {
    let env = TestEnv::new();
    worked_box(&env, "feat");
    worked_box(&env, "twin");
    let dirty = worked_box(&env, "dirty");
    std::fs::write(dirty.join("scratch.txt"), "not committed\n").unwrap();
    git(&env, &env.repo, &["fetch", "-q", "origin"]);
    let before = repo_state(&env);

    // Not allowed by the config: refused before anything is read or written.
    {
        let served = Served::start(&env);
        let e = served.refusal("box_land", json!({"name": "feat"}));
        assert_eq!(
            (e["code"].clone(), e["kind"].clone()),
            (json!(2), json!("not-allowed"))
        );
        let hint = e["hint"].as_str().unwrap();
        assert!(hint.contains(r#""mcp": {"land": true}"#), "{e}");
        assert!(hint.contains("git treebox land feat"), "{e}");
        assert_eq!(repo_state(&env), before);
    }

    env.write_config(r#"{"mcp": {"land": true}}"#);
    let served = Served::start(&env);
    // Dirty: land's refusal, nothing written.
    let e = served.refusal("box_land", json!({"name": "dirty"}));
    assert_eq!(
        (e["code"].clone(), e["kind"].clone()),
        (json!(5), json!("dirty"))
    );
    assert_eq!(repo_state(&env), before);
    let e = served.refusal("box_land", json!({"name": "feat", "strategy": "octopus"}));
    assert_eq!(e["code"], 2, "{e}");
    let e = served.refusal("box_land", json!({"name": "feat", "push": true}));
    assert_eq!(e["code"], 2, "{e}");
    assert_eq!(repo_state(&env), before);

    // Allowed: the base moves, the document is land --json's.
    let old = git(&env, &env.repo, &["rev-parse", "main"]);
    let doc = served.answer("box_land", json!({"name": "feat", "strategy": "rebase"}));
    assert_valid("land", &doc, "box_land");
    let new = git(&env, &env.repo, &["rev-parse", "main"]);
    assert_ne!(new, old);
    assert_eq!(doc["new"], new, "{doc}");
    assert_eq!(doc["old"], old, "{doc}");
    assert_eq!(
        (
            &doc["strategy"],
            &doc["outcome"],
            &doc["commits"],
            &doc["pushed"],
            &doc["removed"]
        ),
        (
            &json!("rebase"),
            &json!("landed"),
            &json!(1),
            &json!(false),
            &json!(false)
        ),
        "{doc}"
    );
    assert!(env.box_path("feat").exists(), "the box is kept");
    // The CLI's document for the same box: the same fields, the same values.
    let cli = env
        .treebox(&["land", "feat", "--rebase", "--json"])
        .ok()
        .json();
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let again = served.answer("box_land", json!({"name": "feat", "strategy": "rebase"}));
    assert_eq!(keys(&again), keys(&cli));
    assert_eq!(again, cli);
    assert_eq!(again["outcome"], "already-landed");
}

#[test]
fn mcp_box_land_refuses_a_live_session_until_box_stop_ends_it() {
    let env = TestEnv::new();
    write_exec(
        &env.bin.join("claude"),
        &crate::sessions::claude_like(AGENT),
    );
    env.write_config(r#"{"mcp": {"land": true}}"#);
    env.treebox(&["create", "-d", "--no-fetch", "live"]).ok();
    env.commit_file(&env.box_path("live"), "live.txt", "work\n", "add live");
    git(&env, &env.repo, &["fetch", "-q", "origin"]);
    let before = repo_state(&env);
    let served = Served::start(&env);
    let e = served.refusal("box_land", json!({"name": "live"}));
    assert_eq!(
        (e["code"].clone(), e["kind"].clone()),
        (json!(5), json!("session-live"))
    );
    assert_eq!(repo_state(&env), before);
    let e = served.refusal("box_remove", json!({"name": "live"}));
    assert_eq!(e["kind"], "needs-confirmation", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("a session is live"),
        "{e}"
    );
    assert!(env.box_path("live").exists());
    assert_eq!(
        served.answer("box_stop", json!({"name": "live"}))["stopped"],
        true
    );
    let doc = served.answer("box_land", json!({"name": "live"}));
    assert_eq!(
        (&doc["strategy"], &doc["outcome"]),
        (&json!("squash"), &json!("landed"))
    );
    assert_eq!(doc["new"], git(&env, &env.repo, &["rev-parse", "main"]));
}
