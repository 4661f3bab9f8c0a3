//! `git treebox watch` / `git sandbox watch` (SPEC §10c, issue 31): the snapshot
//! (`--once --json`, against its schema), and the live screen driven in a real tmux
//! pane.

use std::path::PathBuf;

use serde_json::Value;

use crate::env::{Run, TestEnv};

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
    // Its block of ports (2 by default), as `list --json` has it.
    let ports = row("c-plain")["ports"].clone();
    assert_eq!(ports.as_array().map(Vec::len), Some(2), "{doc:#}");
    let listed = env.treebox(&["list", "--json"]).ok().json();
    assert_eq!(
        crate::env::named(&listed, "boxes", "c-plain")["ports"],
        ports
    );
    assert_eq!(row("a-working")["needsMe"], Value::Null);

    // The same boxes across the machine.
    let all = env.sandbox(&["watch", "--once", "--json"]).ok().json();
    crate::schema::assert_valid("watch", &all, "git sandbox watch --once --json");
    assert_eq!(names(&all), names(&doc));
}

#[test]
fn watch_json_without_once_or_off_a_terminal_is_a_usage_error() {
    let env = TestEnv::new();
    let r = env.treebox(&["watch", "--json"]);
    r.code(2);
    assert!(r.stderr.contains("--once"), "{}", r.stderr);
    // Off a terminal (a script's pipe), the live screen is refused with the way out.
    let r = env.sandbox(&["watch"]);
    r.code(2);
    assert!(r.stderr.contains("not a terminal"), "{}", r.stderr);
    assert!(
        r.stderr.contains("`git sandbox watch --once --json`"),
        "{}",
        r.stderr
    );
}

// ---------------------------------------------------------------------------------
// The live screen, in a real tmux pane.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::env::{write_exec, TREEBOX};

/// An agent that stays up and prints what a hostile one might: a title (OSC 0 and 2),
/// colours, a C1 CSI, a bell. It stops when `$HOME/stop-<box>` exists.
const HOSTILE_AGENT: &str = r#"#!/bin/sh
printf '\033]0;PWNED-TITLE\007\033]2;PWNED-TWO\007'
printf '\033[41;33mRED ALERT\033[0m \302\233\063\061m c1 csi\n'
printf 'agent %s ready\n' "$TREEBOX_BOX"
while [ ! -f "$HOME/stop-$TREEBOX_BOX" ]; do sleep 0.05; done
"#;

/// The user's terminal: a tmux server of the test's own (80×24, no config) whose one
/// pane runs the dashboard. Killed on drop with treebox's own server, so nothing is
/// left behind (the agents end with their sessions).
pub(crate) struct Pane {
    socket: PathBuf,
    treebox_socket: PathBuf,
    exit: PathBuf,
}

impl Pane {
    /// `git treebox watch ARGS` in an 80×24 terminal, once it draws its dashboard.
    pub(crate) fn start(env: &TestEnv, args: &str) -> Pane {
        let pane = Pane::run(env, &format!("watch {args}"));
        pane.wait_for("the dashboard", |s| s.contains("git treebox watch"));
        pane
    }

    /// `git treebox ARGS` (words for `sh`) in an 80×24 terminal of a tmux server of the
    /// test's own, in the repository; its exit code is [`Pane::exit_code`] once it ends.
    pub(crate) fn run(env: &TestEnv, args: &str) -> Pane {
        let socket = env.root().join("outer.sock");
        let exit = env.root().join("watch.exit");
        // An earlier pane's code is not this one's.
        let _ = std::fs::remove_file(&exit);
        let script = env.root().join("watch.sh");
        write_exec(
            &script,
            &format!(
                "#!/bin/sh\n{TREEBOX} {args}\necho $? > {}\nexec sleep 120\n",
                exit.display()
            ),
        );
        let out = env
            .command("tmux", &env.repo)
            .arg("-S")
            .arg(&socket)
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "80",
                "-y",
                "24",
            ])
            .arg(&script)
            .output()
            .expect("tmux");
        assert!(out.status.success(), "{out:?}");
        Pane {
            socket,
            treebox_socket: env.state_dir().join("treebox/tmux.sock"),
            exit,
        }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p"])
    }

    pub(crate) fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend(keys);
        self.tmux(&args);
    }

    /// Wait (at most 20 s) until the screen shows what `done` wants; the screen then.
    #[track_caller]
    pub(crate) fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let since = Instant::now();
        loop {
            let s = self.screen();
            if done(&s) {
                return s;
            }
            assert!(
                since.elapsed() < Duration::from_secs(20),
                "gave up waiting for {what}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) fn exit_code(&self) -> Option<i32> {
        std::fs::read_to_string(&self.exit)
            .ok()
            .and_then(|t| t.trim().parse().ok())
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        // The pane's script writes the dashboard's exit code when it ends: after the
        // servers go, wait for it, so it never writes into a test dir being removed.
        let script: Option<i32> = self
            .tmux(&["display-message", "-p", "#{pane_pid}"])
            .trim()
            .parse()
            .ok();
        for s in [&self.socket, &self.treebox_socket] {
            if s.exists() {
                let _ = Command::new("tmux")
                    .arg("-S")
                    .arg(s)
                    .arg("kill-server")
                    .env_remove("TMUX")
                    .output();
            }
        }
        let since = Instant::now();
        // SAFETY: kill with signal 0 only asks whether the process exists.
        while script.is_some_and(|pid| unsafe { libc::kill(pid, 0) } == 0)
            && since.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A test world whose `claude` is the hostile staying agent.
fn with_agent() -> TestEnv {
    let env = TestEnv::new();
    let agent = env.root().join("agent.sh");
    write_exec(&agent, &crate::sessions::claude_like(HOSTILE_AGENT));
    env.write_config(&format!(
        r#"{{"harnesses": {{"claude": {{"program": "{}"}}}}}}"#,
        agent.display()
    ));
    env
}

/// The row of box `name` on the screen.
fn row_of<'a>(screen: &'a str, name: &str) -> Option<&'a str> {
    screen.lines().find(|l| {
        l.get(3..)
            .is_some_and(|r| r.starts_with(&format!("{name} ")))
    })
}

#[test]
fn watch_shows_boxes_and_a_status_change_within_two_seconds_and_q_exits_0() {
    let env = with_agent();
    env.treebox(&["create", "-d", "--no-fetch", "alpha"]).ok();
    env.treebox(&["create", "--no-launch", "--no-fetch", "beta"])
        .ok();
    let pane = Pane::start(&env, "");
    let s = pane.wait_for("both boxes", |s| {
        row_of(s, "alpha").is_some_and(|r| r.contains("idle")) && row_of(s, "beta").is_some()
    });
    assert!(s.contains("2 boxes"), "{s}");
    // The selected box's screen, read from treebox's tmux server.
    pane.wait_for("alpha's screen in the pane", |s| {
        s.contains("agent alpha ready")
    });
    // A status change shows within two seconds.
    let since = Instant::now();
    report(&env, "beta", "waiting");
    let s = pane.wait_for("beta waiting", |s| {
        row_of(s, "beta").is_some_and(|r| r.contains("waiting"))
    });
    assert!(
        since.elapsed() < Duration::from_secs(2),
        "{:?}",
        since.elapsed()
    );
    // Waiting boxes come first, marked for the eye without colour.
    let first = s.lines().nth(2).unwrap();
    assert!(first.starts_with(">?") || first.starts_with(" ?"), "{s}");
    assert!(first.contains("beta"), "{s}");
    pane.keys(&["q"]);
    let since = Instant::now();
    while pane.exit_code().is_none() && since.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(pane.exit_code(), Some(0));
    std::fs::write(env.home.join("stop-alpha"), "").unwrap();
}

#[test]
fn enter_attaches_to_the_box_and_detaching_returns_to_the_dashboard() {
    let env = with_agent();
    env.treebox(&["create", "-d", "--no-fetch", "solo"]).ok();
    let pane = Pane::start(&env, "--no-notify");
    pane.wait_for("the box", |s| row_of(s, "solo").is_some());
    pane.keys(&["Enter"]);
    // The agent's own screen, through treebox's session: the dashboard is gone.
    pane.wait_for("the agent's session", |s| {
        s.contains("agent solo ready") && !s.contains("git treebox watch")
    });
    let clients = Command::new("tmux")
        .arg("-S")
        .arg(&pane.treebox_socket)
        .args(["list-clients", "-F", "#{session_name}"])
        .output()
        .unwrap();
    let clients = String::from_utf8_lossy(&clients.stdout);
    assert!(clients.trim().ends_with("/solo"), "{clients}");
    // treebox's server has tmux's default prefix here (no tmux.conf): detach.
    pane.keys(&["C-b", "d"]);
    let s = pane.wait_for("the dashboard again", |s| s.contains("git treebox watch"));
    pane.wait_for("its word", |s| {
        s.contains("back from `solo`; its agent runs on")
    });
    assert!(row_of(&s, "solo").is_some(), "{s}");
    assert_eq!(
        crate::env::named(
            &env.treebox(&["list", "--json"]).ok().json(),
            "boxes",
            "solo"
        )["session"],
        "live"
    );
    pane.keys(&["q"]);
    std::fs::write(env.home.join("stop-solo"), "").unwrap();
}

#[test]
fn x_refuses_a_dirty_box_as_teardown_does() {
    let env = with_agent();
    env.treebox(&["create", "--no-launch", "--no-fetch", "messy"])
        .ok();
    std::fs::write(env.box_path("messy").join("scratch.txt"), "wip\n").unwrap();
    let cli = env.treebox(&["teardown", "messy"]);
    cli.code(5);
    let said = "box `messy` has uncommitted changes";
    assert!(cli.stderr.contains(said), "{}", cli.stderr);
    let pane = Pane::start(&env, "--no-notify");
    pane.wait_for("the box", |s| row_of(s, "messy").is_some());
    pane.keys(&["x"]);
    let s = pane.wait_for("the refusal", |s| s.contains("refused (exit 5)"));
    assert!(s.replace('\n', "").contains(said), "{s}");
    assert!(s.contains("teardown --force messy"), "{s}");
    assert!(env.box_path("messy").join("scratch.txt").exists());
    // A clean box is asked about, and `n` keeps it.
    std::fs::remove_file(env.box_path("messy").join("scratch.txt")).unwrap();
    pane.keys(&["x"]);
    pane.wait_for("the question", |s| {
        s.contains("Remove box `messy`") && s.contains("[y/N]")
    });
    pane.keys(&["n"]);
    pane.wait_for("nothing removed", |s| s.contains("nothing removed"));
    assert!(env.box_path("messy").exists());
    pane.keys(&["x"]);
    pane.wait_for("the question", |s| s.contains("[y/N]"));
    pane.keys(&["y"]);
    pane.wait_for("the removal", |s| s.contains("removed box `messy`"));
    assert!(!env.box_path("messy").exists());
    pane.keys(&["q"]);
}

#[test]
fn a_hostile_branch_or_screen_cannot_retitle_or_recolour_the_terminal() {
    let env = with_agent();
    env.treebox(&["create", "-d", "--no-fetch", "evil"]).ok();
    // git forbids ESC in names, not C1 controls or bidi overrides.
    let hostile = "evil\u{9b}41m\u{202e}gnp.exe\u{2066}x";
    env.git(&env.box_path("evil"), &["branch", "-m", hostile]);
    let pane = Pane::start(&env, "--no-notify");
    let title_before = pane.tmux(&["display-message", "-p", "#{pane_title}"]);
    let s = pane.wait_for("the box and its screen", |s| {
        row_of(s, "evil").is_some() && s.contains("agent evil ready")
    });
    // Shown escaped, never as controls.
    assert!(s.contains("evil\\u{9b}41m\\u{202e}"), "{s}");
    assert!(s.contains("RED ALERT"), "{s}");
    assert!(!s.contains('\u{9b}') && !s.contains('\u{202e}'), "{s}");
    // Several refreshes later, the terminal's title is still its own, and nothing the
    // box printed coloured it: the only colours are the dashboard's.
    std::thread::sleep(Duration::from_millis(3200));
    let title = pane.tmux(&["display-message", "-p", "#{pane_title}"]);
    assert_eq!(title, title_before);
    assert!(!title.contains("PWNED"), "{title}");
    let styled = pane.tmux(&["capture-pane", "-p", "-e"]);
    assert!(
        !styled.contains("\u{1b}[41") && !styled.contains(";41m") && !styled.contains(";41;"),
        "{styled:?}"
    );
    assert!(!styled.contains("PWNED"), "{styled:?}");
    pane.keys(&["q"]);
    std::fs::write(env.home.join("stop-evil"), "").unwrap();
}

#[test]
fn l_lands_a_box_after_a_yes_with_lands_own_rules() {
    let env = with_agent();
    env.treebox(&["create", "--no-launch", "--no-fetch", "done"])
        .ok();
    env.commit_file(&env.box_path("done"), "done.txt", "done\n", "the work");
    std::fs::write(env.box_path("done").join("loose.txt"), "wip\n").unwrap();
    let pane = Pane::start(&env, "--no-notify");
    pane.wait_for("the box", |s| {
        row_of(s, "done").is_some_and(|r| r.contains("+1"))
    });
    // Uncommitted work: land's own refusal, nothing landed.
    pane.keys(&["l"]);
    pane.wait_for("the question", |s| s.contains("Land box `done`"));
    pane.keys(&["y"]);
    pane.wait_for("land's refusal", |s| s.contains("land refused (exit 5)"));
    std::fs::remove_file(env.box_path("done").join("loose.txt")).unwrap();
    pane.keys(&["l"]);
    pane.wait_for("the question", |s| s.contains("Land box `done`"));
    pane.keys(&["y"]);
    pane.wait_for("the landing", |s| s.contains("landed `done`"));
    let log = env.git(&env.repo, &["log", "--format=%s", "main"]);
    assert!(log.contains("the work") || log.contains("done"), "{log}");
    pane.keys(&["q"]);
}

#[test]
fn n_creates_a_box_by_name_with_creates_rule_and_the_screen_stays_live() {
    let env = with_agent();
    env.treebox(&["create", "--no-launch", "--no-fetch", "first"])
        .ok();
    let pane = Pane::start(&env, "--no-notify");
    pane.wait_for("the box", |s| row_of(s, "first").is_some());
    pane.keys(&["n"]);
    pane.wait_for("the prompt", |s| s.contains("new box"));
    // create's rule, said before anything runs.
    pane.keys(&["-l", "bad..name"]);
    pane.keys(&["Enter"]);
    pane.wait_for("the name refused", |s| s.contains("invalid box name"));
    assert!(!env.box_path("bad..name").exists());
    pane.keys(&["Escape"]);
    pane.keys(&["n"]);
    pane.keys(&["-l", "fix/second"]);
    pane.keys(&["Enter"]);
    // While create fetches and waits for the agent, the screen answers keys.
    pane.wait_for("the create running", |s| s.contains("creating fix/second"));
    pane.keys(&["?"]);
    pane.wait_for("the keys, while create runs", |s| {
        s.contains("next box that needs you")
    });
    pane.keys(&["Escape"]);
    pane.wait_for("the new box", |s| row_of(s, "fix--second").is_some());
    assert!(env.box_path("fix--second").is_dir());
    pane.keys(&["q"]);
    std::fs::write(env.home.join("stop-fix--second"), "").unwrap();
}

#[test]
fn a_finished_turn_rings_the_bell_in_tmux() {
    let env = with_agent();
    env.treebox(&["create", "--no-launch", "--no-fetch", "busy"])
        .ok();
    report(&env, "busy", "working");
    let pane = Pane::start(&env, "");
    pane.wait_for("the box working", |s| {
        row_of(s, "busy").is_some_and(|r| r.contains("working"))
    });
    // Another window in front: tmux flags a bell in the dashboard's window.
    pane.tmux(&["new-window", "-d", "sleep 60"]);
    pane.tmux(&["select-window", "-t", ":1"]);
    let flag = || pane.tmux(&["display-message", "-p", "-t", ":0", "#{window_bell_flag}"]);
    assert_eq!(flag().trim(), "0");
    report(&env, "busy", "idle");
    let since = Instant::now();
    while flag().trim() != "1" {
        assert!(since.elapsed() < Duration::from_secs(5), "no bell");
        std::thread::sleep(Duration::from_millis(50));
    }
    pane.tmux(&["select-window", "-t", ":0"]);
    pane.keys(&["q"]);
}

#[test]
fn without_tmux_the_screen_has_no_preview() {
    let env = TestEnv::new();
    env.treebox(&["create", "--no-launch", "--no-fetch", "plain"])
        .ok();
    let r = Run::from_output(
        env.command(TREEBOX, &env.repo)
            .args(["watch", "--once"])
            .env("TREEBOX_TMUX", env.root().join("no-tmux-here"))
            .output()
            .unwrap(),
    );
    r.ok();
    assert!(
        r.stdout.contains("(no tmux: no screen preview)"),
        "{}",
        r.stdout
    );
    assert!(row_of(&r.stdout, "plain").is_some(), "{}", r.stdout);
    assert!(r.stdout.lines().count() <= 24, "{}", r.stdout);
}

/// `script` (util-linux): a terminal for a tmux client whose output the test reads.
fn script_program() -> &'static str {
    let found = Command::new("sh")
        .args(["-c", "command -v script"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "this test needs `script` (util-linux) on PATH to attach a terminal to tmux"
    );
    "script"
}

#[test]
fn notification_escapes_pass_the_users_tmux_only_with_passthrough() {
    for passthrough in ["on", "off"] {
        let env = with_agent();
        env.treebox(&["create", "--no-launch", "--no-fetch", "busy"])
            .ok();
        report(&env, "busy", "working");
        // No DISPLAY in the test's environment: the terminal's escapes, not notify-send.
        let pane = Pane::start(&env, "");
        pane.tmux(&["set-option", "-g", "allow-passthrough", passthrough]);
        pane.wait_for("the box working", |s| {
            row_of(s, "busy").is_some_and(|r| r.contains("working"))
        });
        // The user's terminal: a client attached through `script`, which logs what
        // tmux sends it.
        let typescript = env.root().join("terminal.log");
        // Its input is a pipe the test holds (script ends at its end of file).
        let mut client = Command::new(script_program())
            .args(["-q", "-f", "-c"])
            .arg(format!(
                "stty cols 80 rows 24; exec tmux -S {} attach",
                pane.socket.display()
            ))
            .arg(&typescript)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .env_remove("TMUX")
            .spawn()
            .unwrap();
        let since = Instant::now();
        while !pane.tmux(&["list-clients"]).contains("attached") {
            assert!(since.elapsed() < Duration::from_secs(10), "no client");
            std::thread::sleep(Duration::from_millis(50));
        }
        let seen = || std::fs::read(&typescript).unwrap_or_default();
        let bells = |b: &[u8]| b.iter().filter(|c| **c == 0x07).count();
        let before = bells(&seen());
        report(&env, "busy", "idle");
        let since = Instant::now();
        while bells(&seen()) == before {
            assert!(
                since.elapsed() < Duration::from_secs(5),
                "no bell reached the terminal"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(300));
        let out = String::from_utf8_lossy(&seen()).into_owned();
        let osc9 = "\x1b]9;treebox: busy finished its turn\x07";
        let osc777 = "\x1b]777;notify;treebox;busy finished its turn\x07";
        if passthrough == "on" {
            assert!(out.contains(osc9) && out.contains(osc777), "{out:?}");
        } else {
            assert!(
                !out.contains("\x1b]9;") && !out.contains("\x1b]777;"),
                "{out:?}"
            );
        }
        drop(pane);
        let _ = client.kill();
        let _ = client.wait();
    }
}

#[test]
fn d_shows_the_diff_as_diff_reads_it_escaped_and_esc_returns() {
    let env = with_agent();
    env.treebox(&["create", "--no-launch", "--no-fetch", "patchy"])
        .ok();
    env.commit_file(
        &env.box_path("patchy"),
        "notes.txt",
        "plain line\n\u{1b}]0;PWNED\u{7}title line\n",
        "notes",
    );
    let pane = Pane::start(&env, "--no-notify");
    pane.wait_for("the box", |s| {
        row_of(s, "patchy").is_some_and(|r| r.contains("+2"))
    });
    pane.keys(&["d"]);
    let s = pane.wait_for("the diff", |s| s.contains("patchy · diff against"));
    assert!(s.contains("notes.txt"), "{s}");
    assert!(s.contains("+plain line"), "{s}");
    assert!(s.contains("+\\u{1b}]0;PWNED\\u{7}title line"), "{s}");
    let title = pane.tmux(&["display-message", "-p", "#{pane_title}"]);
    assert!(!title.contains("PWNED"), "{title}");
    pane.keys(&["Escape"]);
    pane.wait_for("the dashboard again", |s| s.contains("git treebox watch"));
    pane.keys(&["q"]);
}
