//! The real Claude Code as the lead stops a container box's agent (`box_stop`): once the
//! tool answers, nothing of the agent runs in the container, though the agent left a
//! child of its own there and would never stop by itself. The box's agent is a script
//! ([`crate::sessions::LINGERING_AGENT`]): the lead is what is real here.

use serde_json::json;

use super::{claude_lead_args, run_in_repo, Lead, Step, ToolResult};
use crate::env::{named, write_exec};
use crate::sessions::{
    agent_processes, agents_started, claude_like, container_agent_box, wait_for, LINGERING_AGENT,
};

/// What the lead says when it is done.
const DONE: &str = "LEAD-DONE: stopped the box's agent and listed the boxes";

/// `box_stop` on `worker`, then `box_list`, then done.
fn stop_then_list(last: Option<&ToolResult>) -> Step {
    match last {
        None => Step::call("box_stop", json!({"name": "worker"})),
        Some(r) if r.tool == "box_stop" && r.error().is_none() => Step::call("box_list", json!({})),
        Some(r) if r.tool == "box_stop" => Step::finish("LEAD-STOPPED: box_stop was refused"),
        Some(_) => Step::finish(DONE),
    }
}

#[test]
fn lead_the_real_claude_stops_a_container_box_and_nothing_of_its_agent_runs_on() {
    let Some(dir) = crate::real_agents::agents_dir("claude") else {
        return;
    };
    crate::container::on_docker(|b| {
        let env = &b.env;
        let path = container_agent_box(&b, "worker");
        write_exec(&path.join("agent.sh"), &claude_like(LINGERING_AGENT));
        env.treebox(&["enter", "-d", "worker"]).ok();
        wait_for("the agent to start", || agents_started(&path) == 1);
        assert!(agent_processes(&b, "worker").len() >= 2);

        let lead = Lead::start(stop_then_list);
        let url = lead.url();
        let args = claude_lead_args(env, "Stop the agent of box worker, then list the boxes.");
        let run = run_in_repo(
            env,
            &dir.join("claude"),
            &args,
            &[
                ("ANTHROPIC_BASE_URL", url.as_str()),
                ("ANTHROPIC_API_KEY", "sk-ant-stand-in-0123456789abcdefghij"),
            ],
        );
        let said = || {
            let err = std::fs::read_to_string(env.root().join("mcp.err")).unwrap_or_default();
            format!("{run:?}\nmcp.err: {err}\nrequests:\n{}", lead.describe())
        };
        assert_eq!(lead.faults(), Vec::<String>::new(), "{}", said());
        assert_eq!(run.code, 0, "{}", said());
        assert!(run.stdout.contains(DONE), "{}", said());
        let results = lead.results();
        let tools: Vec<&str> = results.iter().map(|r| r.tool.as_str()).collect();
        assert_eq!(tools, ["box_stop", "box_list"], "{}", said());
        assert_eq!(results[0].document()["stopped"], true, "{}", said());
        assert_eq!(
            named(&results[1].document(), "boxes", "worker")["session"],
            "none"
        );
        // Nothing of the agent (its script, its `sleep`) runs on in the container.
        assert_eq!(agent_processes(&b, "worker"), Vec::<String>::new());
        env.sandbox(&["down", "-f", "worker"]).ok();
    });
}
