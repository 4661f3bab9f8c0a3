//! The status channel (SPEC §7) end to end: the agent's own hooks report through the
//! host-owned producer treebox launches it with, and `list` / `ls` show what it said;
//! a hostile channel reads `unknown` without hanging. Also the `auto` default (SPEC §3).
//!
//! The fake `claude` (tests/it/env.rs) stays up with `--fake-hooks`: each event the
//! test names on its stdin runs the hooks of the `--settings` file it was given, with
//! Claude Code's hook JSON on stdin, and is answered `done EVENT` on its stdout — so the
//! test waits for the agent, never for a clock.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use crate::env::{write_exec, TestEnv, FAKE_HARNESS, TREEBOX};

/// An agent launched by `create`, driven event by event.
struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: PathBuf,
}

impl Agent {
    fn launch(env: &TestEnv, args: &[&str]) -> Agent {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let stderr = env.root().join(format!("agent-stderr-{n}"));
        let mut c = env.command(TREEBOX, &env.repo);
        c.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap());
        let mut child = c.spawn().unwrap();
        Agent {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            stderr,
        }
    }

    /// Name an event; return once the agent has handled it.
    fn event(&mut self, name: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{name}").unwrap();
        stdin.flush().unwrap();
        let want = format!("done {name}");
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.stdout.read_line(&mut line).unwrap();
            if n == 0 {
                let code = self.child.wait().map(|s| s.code());
                panic!(
                    "the agent ended ({code:?}) before handling {name}: {}",
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                );
            }
            if line.trim_end() == want {
                return;
            }
        }
    }

    /// End the session (the agent sees end of input) and return the command's exit code.
    fn finish(mut self) -> i32 {
        drop(self.stdin.take());
        let st = self.child.wait().unwrap();
        st.code().unwrap_or(-1)
    }
}

fn list_status(env: &TestEnv, leaf: &str) -> (serde_json::Value, serde_json::Value) {
    let doc = env.treebox(&["list", "--json"]).ok().json();
    crate::schema::assert_valid("list", &doc, "list --json");
    let b = doc["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == leaf)
        .cloned()
        .unwrap_or_else(|| panic!("no box {leaf} in {doc}"));
    (b["status"].clone(), b["statusTime"].clone())
}

fn ls_status(env: &TestEnv, leaf: &str) -> serde_json::Value {
    let doc = env.sandbox(&["ls", "--json"]).ok().json();
    crate::schema::assert_valid("sandbox-ls", &doc, "ls --json");
    doc["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == leaf)
        .map(|b| b["status"].clone())
        .unwrap_or_else(|| panic!("no box {leaf} in {doc}"))
}

/// The one box's bookkeeping dir.
fn box_state(env: &TestEnv, leaf: &str) -> PathBuf {
    env.box_state(leaf)
}

#[test]
fn claude_hooks_report_working_waiting_idle_on_the_host() {
    let env = TestEnv::new();
    let mut agent = Agent::launch(&env, &["create", "st", "--", "--fake-hooks"]);
    // Launched with the host-owned settings (an event with no hooks: the agent is up);
    // the start itself reported `idle` (a detached start returns only at the prompt).
    agent.event("hello");
    let log = env.harness_log();
    assert!(log.contains("arg=--settings\n"), "{log}");
    let settings = box_state(&env, "st").join("agent/claude-settings.json");
    assert!(
        log.contains(&format!("arg={}\n", settings.display())),
        "{log}"
    );
    assert_eq!(list_status(&env, "st").0, "idle");
    // Claude Code's `SessionStart` (run after it draws its prompt, maybe after a prompt
    // was taken) says it is up, and changes no state.
    agent.event("UserPromptSubmit");
    agent.event("SessionStart");
    assert_eq!(list_status(&env, "st").0, "working");
    assert!(box_state(&env, "st").join("status/up").is_file());
    for (event, want) in [
        ("UserPromptSubmit", "working"),
        ("PreToolUse", "working"),
        ("Notification", "waiting"),
        ("Stop", "idle"),
    ] {
        agent.event(event);
        let (status, time) = list_status(&env, "st");
        assert_eq!(status, want, "after {event}");
        assert!(time.as_i64().is_some_and(|t| t > 1_700_000_000), "{time}");
        assert_eq!(ls_status(&env, "st"), want, "after {event}");
    }
    // The hooks got Claude Code's JSON on stdin, as the hooks schema says.
    let log = env.harness_log();
    assert!(
        log.contains(r#""hook_event_name":"Notification""#)
            && log.contains(r#""session_id":"fake-"#),
        "{log}"
    );
    // The tables show the status and its age.
    let text = env.treebox(&["list"]).ok().stdout.clone();
    let header = text.lines().next().unwrap();
    assert!(header.contains("AGENT"), "{text}");
    let row = text.lines().find(|l| l.starts_with("st ")).unwrap();
    assert!(row.contains(" idle "), "{text}");
    let text = env.sandbox(&["ls"]).ok().stdout.clone();
    let row = text.lines().find(|l| l.starts_with("st ")).unwrap();
    assert!(row.contains(" idle "), "{text}");
    assert_eq!(agent.finish(), 0);
    // Nothing but the state file, the turns count and the `up` file is left in the
    // channel (the writer's temp files are renamed into place), and the producer is
    // not the box's to change.
    let st = box_state(&env, "st");
    let names: Vec<String> = std::fs::read_dir(st.join("status"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let mut names = names;
    names.sort();
    assert_eq!(names, ["state", "turns", "up"]);
    assert!(!st.join("agent").starts_with(env.box_path("st")));
}

/// Codex starts at its prompt: `idle` is written at launch (the real CLI's hooks
/// report `working` and `idle` per turn: `real_agents`), and its `notify` program
/// reports `idle` after each turn.
#[test]
fn codex_reports_idle_at_launch_and_after_each_turn() {
    let env = TestEnv::new();
    let mut agent = Agent::launch(
        &env,
        &["create", "cx", "--harness", "codex", "--", "--fake-hooks"],
    );
    // Written at launch, before codex takes its first turn: the agent answers a no-op
    // event once it is up.
    agent.event("hello");
    assert_eq!(list_status(&env, "cx").0, "idle");
    // A report from a turn replaces it.
    let state = box_state(&env, "cx").join("status/state");
    std::fs::write(&state, "working\n").unwrap();
    assert_eq!(list_status(&env, "cx").0, "working");
    agent.event("turn");
    assert_eq!(list_status(&env, "cx").0, "idle");
    assert_eq!(agent.finish(), 0);
    // A new session reports `idle` again, from launch, over what was there.
    std::fs::write(&state, "working\n").unwrap();
    let mut agent = Agent::launch(&env, &["enter", "cx", "--", "--fake-hooks"]);
    agent.event("hello");
    assert_eq!(ls_status(&env, "cx"), "idle");
    assert_eq!(agent.finish(), 0);
    let log = env.harness_log();
    assert!(log.contains("prog=codex"), "{log}");
    assert!(log.contains("arg=-c\narg=notify=[\"sh\","), "{log}");
    // Its hooks, each trusted by hash in the same command line.
    for event in ["UserPromptSubmit", "Stop", "Interrupt"] {
        assert!(
            log.contains(&format!("arg=-c\narg=hooks.{event}=[")),
            "{log}"
        );
    }
    assert!(
        log.contains("\"/<session-flags>/config.toml:stop:0:0\"={trusted_hash=\"sha256:"),
        "{log}"
    );
}

#[test]
fn a_hostile_channel_reads_unknown_without_hanging() {
    let env = TestEnv::new();
    env.treebox(&["create", "h", "--no-launch"]).ok();
    let dir = box_state(&env, "h").join("status");
    let state = dir.join("state");
    let outside = env.root().join("outside");
    std::fs::write(&outside, "working\n").unwrap();
    let fifo = |p: &Path| crate::env::mkfifo(p);
    type Make<'a> = &'a dyn Fn(&Path);
    let cases: [(&str, Make); 5] = [
        ("fifo", &|p| fifo(p)),
        ("symlink", &|p| {
            std::os::unix::fs::symlink(&outside, p).unwrap()
        }),
        ("oversized", &|p| {
            std::fs::write(p, format!("working{}", " ".repeat(5000))).unwrap()
        }),
        ("junk", &|p| std::fs::write(p, "rm -rf /\n").unwrap()),
        ("directory", &|p| std::fs::create_dir(p).unwrap()),
    ];
    for (what, make) in cases {
        let _ = std::fs::remove_file(&state);
        let _ = std::fs::remove_dir(&state);
        make(&state);
        assert_eq!(list_status(&env, "h").0, "unknown", "{what}");
        assert_eq!(ls_status(&env, "h"), "unknown", "{what}");
        let text = env.treebox(&["list"]).ok().stdout.clone();
        assert!(text.contains(" unknown "), "{what}: {text}");
    }
    // The file the symlink pointed at was never read as a status nor touched.
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "working\n");
}

#[test]
fn claude_hooks_report_from_inside_a_docker_container() {
    let Some(b) = crate::container::Boxed::new("docker") else {
        return;
    };
    let env = &b.env;
    // The fake CLI must exist inside the container: it comes with the checkout, which
    // is mounted at its host path.
    write_exec(&env.repo.join("fake/claude"), FAKE_HARNESS);
    env.git(&env.repo, &["add", "fake/claude"]);
    env.git(&env.repo, &["commit", "-qm", "fake agent"]);
    env.git(&env.repo, &["push", "-q", "origin", "main"]);
    // A container box's checkout: under the checkouts root, outside the working tree.
    let program = env.checkout_path("inbox").join("fake/claude");
    let mut cfg: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(env.config_dir().join("treebox/config.json")).unwrap(),
    )
    .unwrap();
    cfg["harnesses"] = serde_json::json!({ "claude": { "program": program } });
    env.write_config(&cfg.to_string());
    let mut agent = Agent::launch(env, &["create", "inbox", "--", "--fake-hooks"]);
    for (event, want) in [
        ("UserPromptSubmit", "working"),
        ("Notification", "waiting"),
        ("Stop", "idle"),
    ] {
        agent.event(event);
        assert_eq!(ls_status(env, "inbox"), want, "after {event}");
        assert_eq!(list_status(env, "inbox").0, want, "after {event}");
    }
    assert_eq!(agent.finish(), 0);
    // Inside, the producer is read-only: the agent cannot rewrite its own hooks.
    let r = b.exec(&[
        "inbox",
        "--",
        "sh",
        "-c",
        "echo x > /run/treebox/agent/status",
    ]);
    assert_ne!(r.code, 0, "{r:?}");
    assert_eq!(
        b.exec(&["inbox", "--", "sh", "-c", "echo $TREEBOX_STATUS_DIR"])
            .ok()
            .stdout
            .trim(),
        "/run/treebox/status"
    );
    let line = env
        .treebox(&["enter", "inbox", "--print"])
        .ok()
        .stdout
        .clone();
    assert!(
        line.contains("--settings /run/treebox/agent/claude-settings.json"),
        "{line}"
    );
    // A container made before the producer existed has no such mount: its agent
    // launches without `--settings` rather than fail on a missing file.
    std::fs::remove_dir_all(box_state(env, "inbox").join("agent")).unwrap();
    let line = env
        .treebox(&["enter", "inbox", "--print"])
        .ok()
        .stdout
        .clone();
    assert!(!line.contains("--settings"), "{line}");
    env.treebox(&["teardown", "--force", "inbox"]).ok();
}

#[test]
fn auto_is_the_default_and_says_why() {
    let mut env = TestEnv::new();
    // An unmarked machine: the host, and the plan says why.
    let r = env.treebox(&["create", "a", "--dry-run"]);
    r.ok();
    assert!(
        r.stderr.contains(
            "runner host: isolation auto, the default, and this machine is not marked as a runner"
        ),
        "{r:?}"
    );
    let plan = env
        .treebox(&["create", "a", "--dry-run", "--json"])
        .ok()
        .json();
    crate::schema::assert_valid("plan", &plan, "create --dry-run --json");
    assert_eq!(plan["runner"], "host");
    // An existing box keeps its runner when the machine is marked later.
    env.treebox(&["create", "kept", "--no-launch"]).ok();
    env.extra_env.push(("TREEBOX_RUNNER".into(), "1".into()));
    let line = env
        .treebox(&["enter", "kept", "--print"])
        .ok()
        .stdout
        .clone();
    assert!(!line.contains(" exec "), "{line}");
    let doc = env.treebox(&["list", "--json"]).ok().json();
    assert_eq!(doc["boxes"][0]["runner"], "host", "{doc}");
    // Marked: a new box is sandboxed in the first of podman, docker that answers, and
    // doctor says the same; with no engine answering, both say so.
    let r = env.treebox(&["create", "b", "--dry-run", "--json"]);
    let doctor = env.treebox(&["doctor", "--json"]).json();
    let runner = crate::env::named(&doctor, "checks", "runner");
    if r.code == 0 {
        let plan = r.json();
        let engine = plan["runner"].as_str().unwrap();
        assert!(engine == "podman" || engine == "docker", "{plan}");
        let why = plan["runnerReason"].as_str().unwrap();
        assert!(why.contains("TREEBOX_RUNNER=1"), "{why}");
        assert!(
            runner["summary"]
                .as_str()
                .unwrap()
                .starts_with(&format!("auto → {engine} ")),
            "{runner}"
        );
        assert!(
            runner["summary"]
                .as_str()
                .unwrap()
                .contains("marked as a runner (TREEBOX_RUNNER=1)"),
            "{runner}"
        );
    } else {
        assert_eq!(runner["status"], "fail", "{runner}");
    }
}

/// A `systemctl` standing in for the user's systemd: it answers (`exit 0`) or not, and
/// logs what it was asked.
fn fake_systemctl(env: &TestEnv, answers: bool) {
    write_exec(
        &env.bin.join("systemctl"),
        &format!(
            "#!/bin/sh\necho \"$*\" >> \"$HOME/systemctl.log\"\nexit {}\n",
            if answers { 0 } else { 1 }
        ),
    );
}

#[test]
fn park_install_writes_a_systemd_user_timer_once() {
    let env = TestEnv::new();
    fake_systemctl(&env, true);
    let units = env.config_dir().join("systemd/user");
    let r = env.sandbox(&["park", "--install", "--idle", "90m"]);
    r.ok();
    assert!(r.stderr.contains("installed `treebox-park.timer`"), "{r:?}");
    let service = std::fs::read_to_string(units.join("treebox-park.service")).unwrap();
    let timer = std::fs::read_to_string(units.join("treebox-park.timer")).unwrap();
    let sandbox = Path::new(crate::env::SANDBOX);
    assert!(
        service.contains(&format!(
            "ExecStart=\"{}\" park --idle \"90m\"\n",
            sandbox.display()
        )),
        "{service}"
    );
    // The timer finds the boxes and engines the installing command did.
    assert!(service.contains("Environment=\"PATH="), "{service}");
    assert!(
        service.contains(&format!(
            "Environment=\"XDG_STATE_HOME={}\"",
            env.state_dir().display()
        )),
        "{service}"
    );
    assert!(timer.contains("OnUnitActiveSec=15min"), "{timer}");
    assert!(timer.contains("WantedBy=timers.target"), "{timer}");
    let log = std::fs::read_to_string(env.home.join("systemctl.log")).unwrap();
    assert_eq!(
        log,
        "--user show-environment\n--user daemon-reload\n--user enable --now treebox-park.timer\n"
    );
    // Again: nothing changes, systemd is told again (harmless), and it says so.
    let before = (service.clone(), timer.clone());
    let r = env.sandbox(&["park", "--install", "--idle", "90m"]);
    r.ok();
    assert!(r.stderr.contains("already installed"), "{r:?}");
    let after = (
        std::fs::read_to_string(units.join("treebox-park.service")).unwrap(),
        std::fs::read_to_string(units.join("treebox-park.timer")).unwrap(),
    );
    assert_eq!(before, after);
    // A new --idle rewrites treebox's own unit.
    env.sandbox(&["park", "--install", "--idle", "3h"]).ok();
    let service = std::fs::read_to_string(units.join("treebox-park.service")).unwrap();
    assert!(service.contains("park --idle \"3h\"\n"), "{service}");
}

#[test]
fn park_install_refuses_a_unit_it_did_not_write() {
    let env = TestEnv::new();
    fake_systemctl(&env, true);
    let units = env.config_dir().join("systemd/user");
    std::fs::create_dir_all(&units).unwrap();
    std::fs::write(
        units.join("treebox-park.timer"),
        "[Timer]\nOnCalendar=daily\n",
    )
    .unwrap();
    let before = env.snapshot();
    let r = env.sandbox(&["park", "--install"]);
    r.code(5);
    assert!(r.stderr.contains("was not written by treebox"), "{r:?}");
    assert!(r.stderr.contains("mv "), "{r:?}");
    assert!(r.stdout.is_empty(), "{r:?}");
    assert_eq!(env.snapshot(), before, "a refusal writes nothing");
    assert!(!units.join("treebox-park.service").exists());
    assert_eq!(
        std::fs::read_to_string(units.join("treebox-park.timer")).unwrap(),
        "[Timer]\nOnCalendar=daily\n"
    );
    let log = std::fs::read_to_string(env.home.join("systemctl.log")).unwrap();
    assert!(!log.contains("enable"), "{log}");
}

#[test]
fn park_install_without_systemd_prints_the_crontab_line() {
    let env = TestEnv::new();
    fake_systemctl(&env, false);
    let r = env.sandbox(&["park", "--install"]);
    r.ok();
    assert!(r.stderr.contains("crontab"), "{r:?}");
    let line = r.stdout.trim();
    assert!(line.starts_with("*/15 * * * * PATH="), "{line}");
    assert!(
        line.ends_with(&format!(
            "{} park --idle 2h >/dev/null 2>&1",
            crate::env::SANDBOX
        )),
        "{line}"
    );
    assert!(
        !env.config_dir().join("systemd").exists(),
        "nothing written"
    );
    // The line parks, as the timer would.
    let out = env
        .command("sh", &env.root())
        .args(["-c", line.strip_prefix("*/15 * * * * ").unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}
