//! `git treebox watch` / `git sandbox watch` (SPEC §10c, issue 31): the snapshot
//! (`--once --json`, against its schema), and the live screen driven in a real tmux
//! pane.

use std::path::PathBuf;

use serde_json::Value;

use crate::env::TestEnv;

/// Report `status` for box `leaf` through its status channel, as the agent's hooks do.
pub(crate) fn report(env: &TestEnv, leaf: &str, status: &str) {
    let dir = env.box_state(leaf).join("status");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("state"), format!("{status}\n")).unwrap();
}

fn snapshot(env: &TestEnv) -> Value {
    let doc = env.treebox(&["watch", "--once", "--json"]).ok().json();
    crate::schema::assert_valid("watch", &doc, "watch --once --json");
    doc
}

fn names(doc: &Value) -> Vec<String> {
    doc["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn watch_once_json_orders_boxes_that_need_the_user_first() {
    let env = TestEnv::new();
    assert_eq!(snapshot(&env)["boxes"], Value::Array(Vec::new()));
    for name in ["a-working", "b-idle-work", "c-plain", "d-waiting"] {
        env.treebox(&["create", name, "--no-launch", "--no-fetch"])
            .ok();
    }
    report(&env, "a-working", "working");
    report(&env, "d-waiting", "waiting");
    report(&env, "b-idle-work", "idle");
    let b: PathBuf = env.box_path("b-idle-work");
    env.commit_file(&b, "x.txt", "one\ntwo\nthree\n", "add x\u{9b}31m");
    let doc = snapshot(&env);
    assert_eq!(
        names(&doc),
        ["d-waiting", "b-idle-work", "a-working", "c-plain"]
    );
    let row = |n: &str| crate::env::named(&doc, "boxes", n);
    let w = row("d-waiting");
    assert_eq!(w["agent"], "waiting");
    assert_eq!(w["needsMe"], "waiting");
    assert!(w["agentTime"].is_i64(), "{w:#}");
    let i = row("b-idle-work");
    assert_eq!(i["needsMe"], "idle-with-commits");
    assert_eq!(
        (i["commits"].clone(), i["additions"].clone()),
        (1.into(), 3.into())
    );
    assert_eq!(i["deletions"], 0);
    // The subject as the box wrote it (JSON escapes it; the screen shows it escaped).
    assert_eq!(i["subject"], "add x\u{9b}31m");
    assert_eq!(row("c-plain")["agent"], "none");
    assert_eq!(row("c-plain")["commits"], 0);
    assert_eq!(row("a-working")["needsMe"], Value::Null);

    // The same boxes across the machine.
    let all = env.sandbox(&["watch", "--once", "--json"]).ok().json();
    crate::schema::assert_valid("watch", &all, "git sandbox watch --once --json");
    assert_eq!(names(&all), names(&doc));
}

#[test]
fn watch_json_without_once_is_a_usage_error() {
    let env = TestEnv::new();
    let r = env.treebox(&["watch", "--json"]);
    r.code(2);
    assert!(r.stderr.contains("--once"), "{}", r.stderr);
}
