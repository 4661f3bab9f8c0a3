//! Agents in boxes on another machine (issue 41's done-means), over real OpenSSH: a
//! docker box there, made by that machine's treebox from its operator's own template,
//! its agent started detached in that machine's tmux, commands run in its container
//! from here; and the real Claude Code in a box there, against a stand-in of its API,
//! answering a prompt typed on this machine's terminal through `enter`.
//!
//! The machine is [`Sshd`]'s account; what it needs is set up as its user would:
//! its treebox config and templates, its Claude Code state, the engine's group. The
//! laptop's own terminal is a tmux server of the test's own ([`Terminal`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{machines_config, run_ok, Sshd};
use crate::container::Boxed;
use crate::env::{named, write_exec, Run, TestEnv, TREEBOX};
use crate::real_agents::{agents_dir, claude_returning_user, claude_user, CLAUDE_KEY, DIALOGS};
use crate::stand_in::StandIn;

/// The machine account's treebox config (`config`), owned by the account. Its boxes'
/// ports come from a range of their own: that account keeps its own ledger, and its
/// containers publish on this same machine as the other tests' do.
fn config_there(sshd: &Sshd, config: &Value) {
    let cfg = sshd.home.join(".config/treebox");
    std::fs::create_dir_all(&cfg).unwrap();
    let mut config = config.clone();
    if config.get("ports").is_none() {
        config["ports"] = json!({"from": 30000});
    }
    std::fs::write(cfg.join("config.json"), config.to_string()).unwrap();
    give(sshd, &sshd.home.join(".config"));
}

/// `path` (recursively) to the machine's account. Never its bin dirs: those hold hard
/// links of this build's binaries and of the real CLIs, whose owner must not change.
fn give(sshd: &Sshd, path: &Path) {
    run_ok(Command::new("chown").arg("-R").arg(&sshd.user).arg(path));
}

/// The `test` template of `b` (as [`Boxed`] makes it: a local base image, no agent
/// install, the test's image label) as the operator's own template on the machine,
/// with `more` files beside it; `dockerfile`: lines added to its Dockerfile.
fn template_there(sshd: &Sshd, b: &Boxed, more: &[(&str, &str)], dockerfile: &str) {
    let from = b.env.config_dir().join("treebox/templates/test");
    let to = sshd.home.join(".config/treebox/templates/test");
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(&from).unwrap().flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
    for (name, text) in more {
        write_exec(&to.join(name), text);
    }
    let path = to.join("Dockerfile");
    let text = std::fs::read_to_string(&path).unwrap() + dockerfile;
    std::fs::write(&path, text).unwrap();
    give(sshd, &sshd.home.join(".config"));
}

/// The machine's account may use the docker engine (its socket's group).
fn docker_user(sshd: &Sshd) {
    run_ok(Command::new("usermod").args(["-aG", "docker", &sshd.user]));
}

/// Removes the containers treebox made on the machine (those of a repository under the
/// account's home) when dropped: a failed test leaves none behind. Declared after the
/// [`Sshd`], so it goes first, while the account is still there.
struct FarContainers {
    home: PathBuf,
}

impl FarContainers {
    /// The machine's containers: `(name, box)` for each.
    fn list(&self) -> Vec<(String, String)> {
        let out = Command::new("docker")
            .args([
                "ps",
                "-a",
                "--filter",
                "label=org.treebox.repo",
                "--format",
                "{{.Names}}\t{{.Label \"org.treebox.repo\"}}\t{{.Label \"org.treebox.box\"}}",
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let mut f = l.split('\t');
                let (name, repo, leaf) = (f.next()?, f.next()?, f.next()?);
                Path::new(repo)
                    .starts_with(&self.home)
                    .then(|| (name.to_string(), leaf.to_string()))
            })
            .collect()
    }
}

impl Drop for FarContainers {
    fn drop(&mut self) {
        for (name, _) in self.list() {
            let _ = Command::new("docker").args(["rm", "-f", &name]).output();
        }
    }
}

/// The machine's treebox tmux server (its socket in the account's state dir).
fn tmux_there(sshd: &Sshd, args: &[&str]) -> String {
    let out = Command::new("tmux")
        .arg("-S")
        .arg(sshd.home.join(".local/state/treebox/tmux.sock"))
        .args(args)
        .env_remove("TMUX")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The screen of box `leaf`'s session on the machine (treebox names it `…/<leaf>`).
fn screen_there(sshd: &Sshd, leaf: &str) -> String {
    let panes = tmux_there(
        sshd,
        &["list-panes", "-a", "-F", "#{pane_id} #{session_name}"],
    );
    let Some(pane) = panes.lines().find_map(|l| {
        let (id, session) = l.split_once(' ')?;
        session.ends_with(&format!("/{leaf}")).then_some(id)
    }) else {
        return String::new();
    };
    tmux_there(sshd, &["capture-pane", "-p", "-J", "-t", pane])
}

/// `git treebox ARGS`, and meanwhile every process's command line on this machine
/// (the laptop's side and the machine's: both are here) looked at for `secret`: the
/// run, and each process where it showed.
fn treebox_watching(env: &TestEnv, args: &[&str], secret: &str) -> (Run, Vec<String>) {
    let mut child = env
        .command(TREEBOX, &env.repo)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut shown = Vec::new();
    let mut looks = 0;
    loop {
        let done = child.try_wait().unwrap().is_some();
        for pid in crate::env::processes_where(|p| {
            String::from_utf8_lossy(&std::fs::read(p.join("cmdline")).unwrap_or_default())
                .contains(secret)
        }) {
            let line = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            shown.push(format!("{pid}: {}", String::from_utf8_lossy(&line)));
        }
        looks += 1;
        if done {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // It was watched while it worked (it waits for the agent to come up there).
    assert!(looks > 10, "only {looks} looks at the command lines");
    (Run::from_output(child.wait_with_output().unwrap()), shown)
}

/// The laptop's terminal: a tmux server of the test's own (no config, 200×50) whose one
/// pane runs `git treebox enter NAME` here and keeps its exit code. Killed on drop.
struct Terminal {
    socket: PathBuf,
    exit: PathBuf,
}

impl Terminal {
    fn enter(env: &TestEnv, name: &str) -> Terminal {
        let socket = env.root().join("laptop.sock");
        let exit = env.root().join("enter.exit");
        let script = env.root().join("enter.sh");
        write_exec(
            &script,
            &format!(
                "#!/bin/sh\n{TREEBOX} enter {name}\necho $? > {}\nexec sleep 300\n",
                exit.display()
            ),
        );
        // A UTF-8 terminal, as most are: `enter` says so to the other side.
        let out = env
            .command("tmux", &env.repo)
            .env("LC_ALL", "C.UTF-8")
            .arg("-S")
            .arg(&socket)
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "200",
                "-y",
                "50",
            ])
            .arg(&script)
            .output()
            .expect("tmux");
        assert!(out.status.success(), "{out:?}");
        Terminal { socket, exit }
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .output()
            .expect("tmux")
    }

    /// What the terminal shows now; never a screen that waits for a person.
    #[track_caller]
    fn screen(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-J"]);
        let seen = String::from_utf8_lossy(&out.stdout).into_owned();
        let dialog = DIALOGS.iter().find(|d| seen.contains(*d));
        assert!(dialog.is_none(), "a dialog ({dialog:?}):\n{seen}");
        seen
    }

    fn type_text(&self, text: &str) {
        assert!(self.tmux(&["send-keys", "-l", text]).status.success());
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend(keys);
        assert!(self.tmux(&args).status.success());
    }

    /// Wait (at most `secs`) until `done` holds; the failure shows the screen and `more`.
    #[track_caller]
    fn wait(
        &self,
        what: &str,
        secs: u64,
        more: impl Fn() -> String,
        mut done: impl FnMut() -> bool,
    ) {
        let since = Instant::now();
        while !done() {
            assert!(
                since.elapsed() < Duration::from_secs(secs),
                "gave up waiting for {what}\n--- the laptop's terminal ---\n{}\n--- more ---\n{}",
                self.screen(),
                more()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The exit code `enter` ended with, once it has.
    fn exit_code(&self) -> Option<i32> {
        std::fs::read_to_string(&self.exit)
            .ok()
            .and_then(|t| t.trim().parse().ok())
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let pid: Option<i32> =
            String::from_utf8_lossy(&self.tmux(&["display-message", "-p", "#{pane_pid}"]).stdout)
                .trim()
                .parse()
                .ok();
        let _ = self.tmux(&["kill-server"]);
        let since = Instant::now();
        // SAFETY: kill with signal 0 only asks whether the process exists.
        while pid.is_some_and(|p| unsafe { libc::kill(p, 0) } == 0)
            && since.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A stand-in of Claude Code for an image: answers `--version` (treebox asks each
/// image), reports its start as Claude Code's `SessionStart` hook does, says who and
/// where it is, and stays up.
const IMAGE_AGENT: &str = r#"#!/bin/sh
case "$1" in --version) echo '2.1.0 (Claude Code)'; exit 0 ;; esac
printf 'stand-in agent up as %s in %s\n' "$(id -un)" "$PWD"
exec sleep 600
"#;

/// `create --on big --isolation docker`: that machine's treebox builds the box's image
/// from its operator's own `test` template and starts its agent in the container,
/// detached in that machine's tmux; `list` here shows it with its machine and runner;
/// `git sandbox run` runs in its container there with the command's exit code; `rm -f`
/// removes its container there.
#[test]
fn a_docker_box_on_a_machine_runs_its_agent_and_commands_in_its_container() {
    let Some(mut b) = Boxed::new("docker") else {
        return;
    };
    let Some(sshd) = Sshd::start(&b.env) else {
        return;
    };
    let far = FarContainers {
        home: sshd.home.clone(),
    };
    sshd.for_treebox(&mut b.env);
    docker_user(&sshd);
    let bin = sshd.treebox_dir();
    template_there(
        &sshd,
        &b,
        &[("claude", &crate::sessions::claude_like(IMAGE_AGENT))],
        "COPY claude /usr/local/bin/claude\n",
    );
    config_there(&sshd, &json!({"template": "test"}));
    let env = &b.env;
    machines_config(
        env,
        json!({"big": {"ssh": "big", "sshCommand": sshd.ssh_command(), "path": bin}}),
    );

    let since = Instant::now();
    let doc = env
        .treebox(&[
            "create",
            "feat/dock",
            "--on",
            "big",
            "--isolation",
            "docker",
            "--json",
        ])
        .ok()
        .json();
    eprintln!("create --on big --isolation docker: {:?}", since.elapsed());
    crate::schema::assert_valid("box-create", &doc, "create --on --isolation docker");
    assert_eq!(doc["machine"], "big", "{doc}");
    assert_eq!(doc["box"]["runner"], "docker", "{doc}");
    assert_eq!(doc["agent"]["state"], "ready", "{doc}");
    let path = PathBuf::from(doc["box"]["path"].as_str().unwrap());
    assert!(
        path.starts_with(&sshd.home),
        "{path:?} is not the machine's"
    );

    // Its container is the machine's, and its agent runs in it, in that machine's tmux.
    let containers = far.list();
    assert_eq!(
        containers
            .iter()
            .map(|(_, b)| b.as_str())
            .collect::<Vec<_>>(),
        ["feat--dock"],
        "{containers:?}"
    );
    let screen = screen_there(&sshd, "feat--dock");
    assert!(
        screen.contains(&format!("stand-in agent up as agent in {}", path.display())),
        "{screen}"
    );

    let listed = env.treebox(&["list", "--json"]).ok().json();
    crate::schema::assert_valid("list", &listed, "list --json, a docker box on a machine");
    let row = named(&listed, "boxes", "feat--dock");
    assert_eq!(row["machine"], "big", "{row}");
    assert_eq!(row["runner"], "docker", "{row}");
    assert_eq!(row["session"], "live", "{row}");
    assert_eq!(row["status"], "idle", "{row}");

    // run: in the container there (the image's agent, the image's files), its code.
    let r = env.sandbox(&[
        "run",
        "feat/dock",
        "--",
        "sh",
        "-c",
        "id -un; cat /etc/treebox/agent-user; pwd; test -f /.dockerenv && exit 7",
    ]);
    r.code(7);
    assert_eq!(
        r.stdout.lines().collect::<Vec<_>>(),
        ["agent", "agent", path.to_string_lossy().as_ref()],
        "{r:?}"
    );
    // What it writes there is in the box's checkout on the machine.
    env.sandbox(&[
        "run",
        "feat--dock",
        "--",
        "sh",
        "-c",
        "echo inside > made-inside",
    ])
    .ok();
    assert_eq!(
        std::fs::read_to_string(path.join("made-inside")).unwrap(),
        "inside\n"
    );

    // rm -f: the box and its container gone there, its session with them.
    let doc = env
        .treebox(&["rm", "--force", "feat/dock", "--json"])
        .ok()
        .json();
    assert_eq!(doc["machine"], "big", "{doc}");
    assert_eq!(far.list(), Vec::<(String, String)>::new());
    assert!(!path.exists(), "the box is still there");
    assert_eq!(screen_there(&sshd, "feat--dock"), "");
    let listed = env.treebox(&["list", "--json"]).ok().json();
    assert_eq!(listed["boxes"].as_array().unwrap().len(), 0, "{listed}");
}

/// The machine's account as a returning user of Claude Code (onboarding done, the
/// model key approved, trust in nothing yet), with `env` in its own Claude Code
/// settings (what a user of that machine sets for Claude Code there).
fn claude_there(sshd: &Sshd, env: Value) {
    claude_returning_user(&sshd.home, json!({}));
    let settings = json!({"skipDangerousModePermissionPrompt": true, "env": env});
    std::fs::write(
        sshd.home.join(".claude/settings.json"),
        settings.to_string(),
    )
    .unwrap();
    give(sshd, &sshd.home.join(".claude"));
    give(sshd, &sshd.home.join(".claude.json"));
}

/// The real `claude` from `agents` in a directory of the machine account's home (a
/// hard link, else a copy): its path.
fn real_claude_there(sshd: &Sshd, agents: &Path) -> PathBuf {
    let claude = sshd.bin_dir("agent-bin").join("claude");
    let from = std::fs::canonicalize(agents.join("claude")).unwrap();
    if std::fs::hard_link(&from, &claude).is_err() {
        std::fs::copy(&from, &claude).unwrap();
    }
    claude
}

/// The laptop's user trusts the main checkout here (Claude Code's answer, which
/// `create --on` carries to that machine's clone) and has the model key in its
/// environment, forwarded to the machine by its `forwardEnv`.
fn laptop_user(env: &mut TestEnv) {
    claude_user(&env.home, &env.repo, true);
    env.extra_env
        .push(("ANTHROPIC_API_KEY".into(), CLAUDE_KEY.into()));
}

/// One turn of the agent of box `leaf` there, from this machine's terminal: `enter`
/// attaches over ssh to its session there, a prompt typed here reaches it, `list` here
/// follows it `working` and back, the stand-in's answer shows here; detaching comes
/// back with 0, the agent still live there.
fn a_turn_through_enter(env: &TestEnv, api: &StandIn, sshd: &Sshd, leaf: &str) {
    let there = || screen_there(sshd, leaf);
    let row = || named(&env.treebox(&["list", "--json"]).ok().json(), "boxes", leaf);
    let term = Terminal::enter(env, leaf);
    term.wait("the agent's prompt, here", 60, there, || {
        term.screen().contains("bypass permissions on")
    });
    // Drawn as it is drawn there: Claude Code's lines and marks, not tmux's ASCII
    // stand-ins (`_`, `qqq`) for a terminal it thinks takes no UTF-8.
    let screen = term.screen();
    assert!(
        !screen.is_ascii() && !screen.contains("qqqqqqqq"),
        "the other side drew for a terminal without UTF-8:\n{screen}"
    );
    let marker = format!("STAND-IN-ANSWER-FROM-{leaf}");
    api.answer(&marker);
    // The stand-in holds its answer while the test sees `working` from here.
    api.hold();
    let ask = format!("please reply from {leaf}");
    term.type_text(&ask);
    term.wait("the prompt typed", 20, there, || {
        term.screen().contains(&ask)
    });
    term.keys(&["Enter"]);
    term.wait(
        "the prompt at the stand-in",
        60,
        || api.describe(),
        || api.model_requests().iter().any(|r| r.body.contains(&ask)),
    );
    term.wait("list here to show `working`", 30, there, || {
        row()["status"] == "working"
    });
    api.release();
    term.wait(
        "the stand-in's answer, here",
        60,
        || api.describe(),
        || term.screen().contains(&marker),
    );
    let asked = api.model_requests();
    let req = asked.iter().find(|r| r.body.contains(&ask)).unwrap();
    assert_eq!(req.header("x-api-key"), Some(CLAUDE_KEY), "{req:?}");
    // It answered there, in the box's session, not in a program of this terminal's.
    assert!(there().contains(&marker), "{}", there());
    term.wait("list here to show `idle` or `waiting`", 30, there, || {
        let s = row()["status"].clone();
        s == "idle" || s == "waiting"
    });

    // Detach (tmux's prefix, then d): `enter` comes back with 0; the agent works on.
    term.keys(&["C-b", "d"]);
    term.wait("enter to come back", 20, there, || {
        term.exit_code().is_some()
    });
    assert_eq!(term.exit_code(), Some(0), "{}", term.screen());
    let row = row();
    assert_eq!(row["machine"], "big", "{row}");
    assert_eq!(row["session"], "live", "{row}");
    assert!(there().contains(&marker), "{}", there());
}

/// The real Claude Code in a box on the other machine (host isolation there): `create
/// --on` brings it up there with nobody at its keyboard — the key forwarded on the SSH
/// channel's stdin, on no command line on either side; the provider URL the machine's
/// user set in its own Claude Code settings; the trust this user gave the main checkout
/// carried to the clone there — and a prompt typed on this machine's terminal through
/// `enter` is answered by the stand-in, on this terminal.
#[test]
fn claude_on_a_machine_answers_a_prompt_typed_here() {
    let Some(agents) = agents_dir("claude") else {
        return;
    };
    let mut env = TestEnv::new();
    let Some(sshd) = Sshd::start(&env) else {
        return;
    };
    sshd.for_treebox(&mut env);
    let api = StandIn::anthropic("");
    // The provider's URL in the Claude Code settings of the machine's user, with its
    // temp dirs in its home (gone with the account, never in the machine's /tmp).
    let tmp = sshd.bin_dir("tmp");
    give(&sshd, &tmp);
    claude_there(
        &sshd,
        json!({"ANTHROPIC_BASE_URL": api.url(), "TMPDIR": tmp,
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}),
    );
    let claude = real_claude_there(&sshd, &agents);
    config_there(
        &sshd,
        &json!({"harnesses": {"claude": {"program": claude}}}),
    );
    let bin = sshd.treebox_dir();
    machines_config(
        &env,
        json!({"big": {"ssh": "big", "sshCommand": sshd.ssh_command(), "path": bin,
                        "forwardEnv": ["ANTHROPIC_API_KEY"]}}),
    );
    laptop_user(&mut env);

    create_claude_there(&env, "feat/ask", "host");

    a_turn_through_enter(&env, &api, &sshd, "feat--ask");

    let doc = env
        .treebox(&["rm", "--force", "feat/ask", "--json"])
        .ok()
        .json();
    assert_eq!(doc["machine"], "big", "{doc}");
}

/// The real Claude Code in a docker box on the other machine: that machine's treebox
/// builds the box's image from its operator's `test` template on an image with the
/// real CLIs in it, and starts Claude Code in the container, detached in its tmux,
/// with nobody at the keyboard (the key and the provider's URL forwarded on the SSH
/// channel's stdin, on no command line on either side; the trust this user gave the
/// main checkout carried to the clone there and into the container); a prompt typed
/// on this machine's terminal through `enter` is answered by the stand-in, listening
/// on the docker bridge's gateway, on this terminal. `rm -f` takes its container.
#[test]
fn claude_in_a_docker_box_on_a_machine_answers_a_prompt_typed_here() {
    let Some(agents) = agents_dir("claude").and(agents_dir("codex")) else {
        return;
    };
    if !crate::container::engine_works("docker") {
        return;
    }
    let Some(gateway) = crate::container::gateway("docker") else {
        assert!(
            std::env::var("TREEBOX_REQUIRE_ENGINE").as_deref() != Ok("1"),
            "docker: no bridge gateway found"
        );
        eprintln!("note: docker: no bridge gateway; skipped");
        return;
    };
    let image = crate::container::agents_image("docker", &agents);
    if image.is_none() && std::env::var("TREEBOX_REQUIRE_ENGINE").as_deref() == Ok("1") {
        panic!("docker: could not build the agents' base image");
    }
    let Some(mut b) = image.and_then(|image| Boxed::on_base("docker", &image)) else {
        return;
    };
    let Some(sshd) = Sshd::start(&b.env) else {
        return;
    };
    let far = FarContainers {
        home: sshd.home.clone(),
    };
    sshd.for_treebox(&mut b.env);
    docker_user(&sshd);
    template_there(&sshd, &b, &[], "");
    config_there(&sshd, &json!({"template": "test"}));
    claude_there(
        &sshd,
        json!({"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}),
    );
    let api = StandIn::anthropic_on(&format!("{gateway}:0"), "");
    let bin = sshd.treebox_dir();
    let env = &mut b.env;
    machines_config(
        env,
        json!({"big": {"ssh": "big", "sshCommand": sshd.ssh_command(), "path": bin,
                        "forwardEnv": ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]}}),
    );
    laptop_user(env);
    env.extra_env.push(("ANTHROPIC_BASE_URL".into(), api.url()));
    let env = &b.env;

    create_claude_there(env, "feat/boxed", "docker");
    let row = named(
        &env.treebox(&["list", "--json"]).ok().json(),
        "boxes",
        "feat--boxed",
    );
    assert_eq!(row["runner"], "docker", "{row}");

    a_turn_through_enter(env, &api, &sshd, "feat--boxed");

    let doc = env
        .treebox(&["rm", "--force", "feat/boxed", "--json"])
        .ok()
        .json();
    assert_eq!(doc["machine"], "big", "{doc}");
    assert_eq!(far.list(), Vec::<(String, String)>::new());
}

/// `create NAME --on big --isolation RUNNER --json` of a box whose agent is the real
/// Claude Code there, the key watched for on every command line meanwhile: its
/// document, the agent ready with nothing in its way.
fn create_claude_there(env: &TestEnv, name: &str, runner: &str) -> serde_json::Value {
    let since = Instant::now();
    let (r, shown) = treebox_watching(
        env,
        &[
            "create",
            name,
            "--on",
            "big",
            "--isolation",
            runner,
            "--json",
        ],
        CLAUDE_KEY,
    );
    eprintln!(
        "create --on big (real claude, {runner} there): {:?}",
        since.elapsed()
    );
    let doc = r.ok().json();
    assert_eq!(shown, Vec::<String>::new(), "the key is on a command line");
    assert_eq!(doc["machine"], "big", "{doc}");
    assert_eq!(doc["box"]["runner"], runner, "{doc}");
    assert_eq!(doc["agent"]["state"], "ready", "{doc}");
    assert_eq!(doc["agent"]["warnings"], json!([]), "{doc}");
    doc
}
