//! The real Claude Code and Codex as the lead, on the smallest script: `box_list`, then
//! `box_screen` on a box without a session (refused, code 3), then done. What each CLI
//! needs to get there (tool search, Codex's code mode) is in [`super`]'s doc.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{claude_lead_args, mcp_server, run_in_repo, Lead, Step, ToolResult};
use crate::env::{Run, TestEnv};
use crate::mcp::host_box;

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
pub(super) const DONE: &str = "LEAD-DONE: listed the boxes and read a screen";

/// `box_list`, then `box_screen` on the first box it lists, then done.
pub(super) fn list_then_screen(last: Option<&ToolResult>) -> Step {
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
        let url = lead.url();
        let mut vars = vec![
            ("ANTHROPIC_BASE_URL", url.as_str()),
            ("ANTHROPIC_API_KEY", "sk-ant-stand-in-0123456789abcdefghij"),
        ];
        if let Some(v) = tool_search {
            vars.push(("ENABLE_TOOL_SEARCH", v));
        }
        let args = claude_lead_args(
            &env,
            "List the treebox boxes, then read the first one's screen.",
        );
        let run = run_in_repo(&env, &dir.join("claude"), &args, &vars);
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
