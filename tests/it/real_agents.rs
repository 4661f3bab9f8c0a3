//! The real agent CLIs, unattended (SPEC §7 "Unattended", §7a), on the host runner:
//! Claude Code and Codex come up in a box to their prompt with nobody at the keyboard,
//! take a prompt, answer from a stand-in of their API ([`crate::stand_in`]), and
//! `list` follows them `working` → `idle`/`waiting`.
//!
//! The CLIs come from `TREEBOX_TEST_AGENTS`, a directory holding `claude` and `codex`
//! (`.ci/run` installs them from PyPI: `claude-agent-sdk` bundles Claude Code,
//! `openai-codex-cli-bin` Codex). Where it is unset these tests say so and pass, except
//! under `TREEBOX_REQUIRE_AGENTS=1` (CI), where a missing CLI fails them.
//!
//! The fixture is a returning user who trusts the main checkout, and nothing else: the
//! box's own path is never trusted here — carrying that trust over is treebox's job.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::container::{agents_image, Boxed};
use crate::env::{named, TestEnv};
use crate::rootless::RootlessUser;
use crate::stand_in::StandIn;

/// The model key the fixture's user has answered "yes" for (Claude Code names a key in
/// `customApiKeyResponses` by its last 20 characters).
pub(crate) const CLAUDE_KEY: &str = "sk-ant-api03-stand-in-key-0123456789abcdefghij";
/// The variable Codex reads its key from (the fixture's `model_providers` entry).
pub(crate) const CODEX_KEY_VAR: &str = "TREEBOX_STAND_IN_OPENAI_KEY";

/// What a screen that waits for a person says: none of it may show.
pub(crate) const DIALOGS: &[&str] = &[
    // Claude Code: trust, API key, onboarding, login, bypass-mode confirmation, root.
    "Quick safety check",
    "trust this folder",
    "Do you want to use this API key",
    "Choose the text style",
    "Select login method",
    "WARNING: Claude Code running in Bypass Permissions mode",
    "cannot be used with root",
    // Codex: trust, login, model migration.
    "Trust this folder",
    "Sign in with ChatGPT",
    "Meet GPT",
];

/// The directory holding the real `claude` and `codex`, or `None` (with a note) where
/// this machine has none and CI did not ask for them.
pub(crate) fn agents_dir(program: &str) -> Option<PathBuf> {
    let required = std::env::var("TREEBOX_REQUIRE_AGENTS").as_deref() == Ok("1");
    let dir = std::env::var_os("TREEBOX_TEST_AGENTS").map(PathBuf::from);
    match dir {
        Some(d) if d.join(program).is_file() => Some(d),
        _ if required => panic!(
            "TREEBOX_REQUIRE_AGENTS=1 but TREEBOX_TEST_AGENTS ({:?}) holds no `{program}`",
            std::env::var_os("TREEBOX_TEST_AGENTS")
        ),
        _ => {
            eprintln!(
                "note: the real `{program}` is not here (set TREEBOX_TEST_AGENTS to a directory holding it); this real-agent test did not run"
            );
            None
        }
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Agent {
    Claude,
    Codex,
}

impl Agent {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
        }
    }

    /// The screen shows the agent's prompt, ready for input.
    pub(crate) fn ready(self, screen: &str) -> bool {
        match self {
            Agent::Claude => screen.contains('❯') && screen.contains("bypass permissions on"),
            Agent::Codex => screen.contains('›') && screen.contains("for shortcuts"),
        }
    }
}

/// Where the boxes run: the host runner, or an engine with the user template `test`
/// built from the operator's own base image (the real CLIs in it).
enum Runner {
    Host(TestEnv),
    Engine(Boxed),
}

/// A returning user with the real CLI on PATH (or in the image), pointed at a stand-in
/// of its API.
pub(crate) struct World {
    runner: Runner,
    pub(crate) api: StandIn,
    agent: Agent,
    /// treebox runs as this user (uid, and the group of the engine's socket) instead
    /// of the test's own.
    as_user: Option<(u32, u32)>,
}

impl World {
    pub(crate) fn new(agent: Agent) -> Option<World> {
        World::with(agent, true)
    }

    /// A user who has used the CLI before; `trusts_main`: and trusts the main checkout.
    fn with(agent: Agent, trusts_main: bool) -> Option<World> {
        let dir = agents_dir(agent.name())?;
        let env = TestEnv::new();
        // The real CLI replaces the fake one on the fixture's PATH.
        let fake = env.bin.join(agent.name());
        std::fs::remove_file(&fake).unwrap();
        std::os::unix::fs::symlink(dir.join(agent.name()), &fake).unwrap();
        let api = match agent {
            Agent::Claude => StandIn::anthropic(""),
            Agent::Codex => StandIn::openai(""),
        };
        let mut w = World {
            runner: Runner::Host(env),
            api,
            agent,
            as_user: None,
        };
        let url = w.api.url();
        w.returning_user(trusts_main, &url);
        if agent == Agent::Claude && is_root() {
            // Claude Code refuses --dangerously-skip-permissions as root unless
            // IS_SANDBOX=1 (exactly): the user's opt-in, in the config.
            w.env()
                .write_config(r#"{"harnesses": {"claude": {"allowRoot": true}}}"#);
        }
        Some(w)
    }

    /// A returning user who trusts the main checkout, whose boxes run on `engine` from
    /// an image of the operator's own with the real CLIs in it (`baseImage` +
    /// `INSTALL_AGENTS=0`). The stand-in listens on the engine bridge's gateway, the
    /// host's address as a container sees it; `url_host` is the host name the user's
    /// provider URL names it by (the gateway's address, or a loopback name that
    /// treebox must turn into the engine's name for the host).
    fn in_engine(agent: Agent, engine: &'static str, url_host: Option<&str>) -> Option<World> {
        let dir = agents_dir("claude").and(agents_dir("codex"))?;
        let Some(gateway) = crate::container::gateway(engine) else {
            assert!(
                std::env::var("TREEBOX_REQUIRE_ENGINE").as_deref() != Ok("1"),
                "{engine}: no bridge gateway found"
            );
            eprintln!("note: {engine}: no bridge gateway; skipped");
            return None;
        };
        let image = agents_image(engine, &dir);
        if image.is_none() && std::env::var("TREEBOX_REQUIRE_ENGINE").as_deref() == Ok("1") {
            panic!("{engine}: could not build the agents' base image");
        }
        let mut boxed = Boxed::on_base(engine, &image?)?;
        if engine == "podman" {
            // Here netavark's `podman0` and CNI's `cni-podman0` (left by the tests that
            // need CNI) hold the same 10.88.0.1/16, and the host answers a container
            // through the first route, CNI's: only a CNI container reaches the host.
            boxed.use_cni();
            // CNI's bridge comes up with its first container and stays; on a machine
            // where no test has run one yet, the gateway is no address of this
            // machine, and the stand-in could not listen on it.
            if std::net::TcpListener::bind(format!("{gateway}:0")).is_err() {
                let out = boxed.engine(&["run", "--rm", crate::container::BASE, "true"]);
                assert!(out.status.success(), "{out:?}");
            }
        }
        Some(World::on_engine(agent, boxed, &gateway, url_host))
    }

    /// A returning user who trusts the main checkout and is not root: `user`, whose own
    /// rootless podman runs the boxes from `image` (the agents' base image in that
    /// user's storage). The stand-in listens on `host`, the address the user's
    /// containers reach this machine at.
    fn in_rootless_podman(
        agent: Agent,
        user: &RootlessUser,
        image: &str,
        host: &str,
        url_host: Option<&str>,
    ) -> Option<World> {
        let mut boxed = Boxed::on_base("podman", image)?;
        boxed.rootless(user);
        let mut w = World::on_engine(agent, boxed, host, url_host);
        w.env().give_to(user.uid);
        w.as_user = Some((user.uid, user.uid));
        Some(w)
    }

    /// The world of `boxed`, with the stand-in listening on `listen` (an address of
    /// this machine the boxes reach); `url_host` as in [`World::in_engine`].
    fn on_engine(agent: Agent, boxed: Boxed, listen: &str, url_host: Option<&str>) -> World {
        // This machine reaches no public host: a firewalled box's allowlist is what
        // treebox adds to it, alone.
        std::fs::write(
            boxed
                .env
                .config_dir()
                .join("treebox/templates/test/allowlist.txt"),
            "# nothing public: the test's boxes reach only this machine\n",
        )
        .unwrap();
        let api = match agent {
            Agent::Claude => StandIn::anthropic_on(&format!("{listen}:0"), ""),
            Agent::Codex => StandIn::openai_on(&format!("{listen}:0"), ""),
        };
        let mut w = World {
            runner: Runner::Engine(boxed),
            api,
            agent,
            as_user: None,
        };
        let url = format!(
            "http://{}:{}",
            url_host.unwrap_or(listen),
            w.api.addr().port()
        );
        w.returning_user(true, &url);
        w
    }

    pub(crate) fn env(&self) -> &TestEnv {
        match &self.runner {
            Runner::Host(env) => env,
            Runner::Engine(b) => &b.env,
        }
    }

    pub(crate) fn env_mut(&mut self) -> &mut TestEnv {
        match &mut self.runner {
            Runner::Host(env) => env,
            Runner::Engine(b) => &mut b.env,
        }
    }

    /// The user's state and environment for the agent, its API at `url`.
    fn returning_user(&mut self, trusts_main: bool, url: &str) {
        let agent = self.agent;
        let env = self.env_mut();
        let main = env.repo.clone();
        match agent {
            Agent::Claude => {
                claude_user(&env.home, &main, trusts_main);
                env.extra_env.extend([
                    ("ANTHROPIC_BASE_URL".into(), url.to_string()),
                    ("ANTHROPIC_API_KEY".into(), CLAUDE_KEY.into()),
                    (
                        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                        "1".into(),
                    ),
                ]);
            }
            Agent::Codex => {
                codex_user(&env.home, &main, &format!("{url}/v1"), trusts_main);
                env.extra_env
                    .push((CODEX_KEY_VAR.into(), "sk-stand-in-openai".into()));
            }
        }
        // The CLIs' own temp dirs (Claude Code's `claude-<uid>`, `cc-socks`, its ssh
        // configs) in the test's tree, gone with it, never in the machine's /tmp.
        let tmp = env.root().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        env.extra_env.extend([
            ("DISABLE_AUTOUPDATER".into(), "1".into()),
            ("TERM".into(), "xterm-256color".into()),
            ("TMPDIR".into(), tmp.to_string_lossy().into_owned()),
        ]);
    }

    fn socket(&self) -> PathBuf {
        self.env().state_dir().join("treebox/tmux.sock")
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-S")
            .arg(self.socket())
            .args(args)
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .output()
            .expect("tmux")
    }

    /// The pane of box `leaf`'s session (treebox names it `…/<leaf>`).
    fn pane(&self, leaf: &str) -> Option<String> {
        let out = self.tmux(&["list-panes", "-a", "-F", "#{pane_id} #{session_name}"]);
        String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
            let (id, session) = l.split_once(' ')?;
            session
                .ends_with(&format!("/{leaf}"))
                .then(|| id.to_string())
        })
    }

    /// What box `leaf`'s pane shows now (empty when there is no pane).
    pub(crate) fn screen(&self, leaf: &str) -> String {
        let Some(pane) = self.pane(leaf) else {
            return String::new();
        };
        let out = self.tmux(&["capture-pane", "-p", "-J", "-t", &pane]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// [`World::screen`], which must show no dialog: an agent may draw its prompt
    /// first and a dialog over it a moment later, so every look checks.
    #[track_caller]
    fn look(&self, leaf: &str) -> String {
        let seen = self.screen(leaf);
        let dialog = DIALOGS.iter().find(|d| seen.contains(*d));
        assert!(
            dialog.is_none(),
            "{} in box {leaf} stopped at a dialog ({dialog:?}):\n{seen}",
            self.agent.name()
        );
        seen
    }

    fn type_text(&self, leaf: &str, text: &str) {
        let pane = self.pane(leaf).expect("a live pane");
        assert!(self
            .tmux(&["send-keys", "-t", &pane, "-l", text])
            .status
            .success());
    }

    fn press(&self, leaf: &str, key: &str) {
        let pane = self.pane(leaf).expect("a live pane");
        assert!(self.tmux(&["send-keys", "-t", &pane, key]).status.success());
    }

    /// `list --json`'s row for box `leaf`.
    /// `git treebox ARGS` as the world's user.
    fn tb(&self, args: &[&str]) -> crate::env::Run {
        let env = self.env();
        match self.as_user {
            Some((uid, group)) => env.run_as(uid, group, crate::env::TREEBOX, args),
            None => env.treebox(args),
        }
    }

    fn row(&self, leaf: &str) -> serde_json::Value {
        named(&self.tb(&["list", "--json"]).ok().json(), "boxes", leaf)
    }

    /// Wait (at most `secs`) until `done` holds; the failure shows the box's screen.
    #[track_caller]
    pub(crate) fn wait(&self, leaf: &str, what: &str, secs: u64, mut done: impl FnMut() -> bool) {
        let since = Instant::now();
        while !done() {
            if since.elapsed() > Duration::from_secs(secs) {
                panic!(
                    "gave up waiting for {what}\n--- screen of {leaf} ---\n{}\n--- requests ---\n{}",
                    self.screen(leaf),
                    self.api.describe()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The whole run: `create -d`, the prompt with no dialog, one turn answered by the
    /// stand-in, `list` following it, teardown leaving nothing behind.
    fn one_turn(&self, leaf: &str, git_mode: &str) {
        self.one_turn_with(leaf, git_mode, &[]);
    }

    /// [`World::one_turn`] with more of `create`'s arguments.
    fn one_turn_with(&self, leaf: &str, git_mode: &str, more: &[&str]) {
        let agent = self.agent.name();
        let args = [
            &["create", "-d", leaf, "--harness", agent, "--git", git_mode],
            more,
        ]
        .concat();
        let r = self.tb(&args);
        r.ok();
        // A provider URL that names this machine reaches it from a container: no
        // warning that it does not.
        assert!(!r.stderr.contains("nothing answers"), "{r:?}");
        let path = self.env().box_path(leaf);
        assert_eq!(r.stdout.trim(), path.to_string_lossy(), "{r:?}");
        assert_eq!(self.row(leaf)["session"], "live");

        // The prompt, and never a screen that waits for a person.
        // (Both show where they run; a long path may be cut short, not the box's name.)
        self.wait(leaf, "the agent's prompt, in the box", 60, || {
            let seen = self.look(leaf);
            self.agent.ready(&seen) && seen.contains(leaf)
        });
        // At its prompt, the agent is idle (Claude Code's `SessionStart` hook says so;
        // Codex's start does), not `working`.
        assert_eq!(self.row(leaf)["status"], "idle", "{}", self.screen(leaf));

        // One turn: the stand-in holds its answer while the test sees `working`.
        let marker = format!("STAND-IN-ANSWER-{agent}-{leaf}");
        self.api.answer(&marker);
        self.api.hold();
        let ask = format!("please reply {leaf}");
        self.type_text(leaf, &ask);
        self.wait(leaf, "the prompt typed", 20, || {
            self.look(leaf).contains(&ask)
        });
        self.press(leaf, "Enter");
        self.wait(leaf, "the agent's request to the stand-in", 60, || {
            self.look(leaf);
            self.api
                .model_requests()
                .iter()
                .any(|r| r.body.contains(&ask))
        });
        self.wait(leaf, "list to show `working`", 30, || {
            self.row(leaf)["status"] == "working"
        });
        self.api.release();
        self.wait(leaf, "the stand-in's answer on the screen", 60, || {
            self.look(leaf).contains(&marker)
        });
        self.wait(leaf, "list to show `idle` or `waiting`", 30, || {
            let s = self.row(leaf)["status"].clone();
            s == "idle" || s == "waiting"
        });
        let asked = self.api.model_requests();
        let req = asked.iter().find(|r| r.body.contains(&ask)).unwrap();
        match self.agent {
            Agent::Claude => assert_eq!(req.header("x-api-key"), Some(CLAUDE_KEY), "{req:?}"),
            Agent::Codex => assert_eq!(
                req.header("authorization"),
                Some("Bearer sk-stand-in-openai"),
                "{req:?}"
            ),
        }
        assert_eq!(self.row(leaf)["session"], "live");
        if self.agent == Agent::Codex {
            self.interrupted_turn(leaf);
        }

        // Teardown ends the agent and leaves none of its processes.
        self.tb(&["teardown", "--force", leaf]).ok();
        assert!(!path.exists());
        self.wait(leaf, "the agent's processes to end", 30, || {
            processes_of(&self.env().home).is_empty()
        });
    }
}

impl World {
    /// A turn the person ends with Esc before the answer comes: `working`, then `idle`
    /// again (Codex reports no `Stop` then; its `Interrupt` hook does).
    fn interrupted_turn(&self, leaf: &str) {
        self.api.hold();
        let ask = format!("then stop {leaf}");
        self.type_text(leaf, &ask);
        self.wait(leaf, "the second prompt typed", 20, || {
            self.look(leaf).contains(&ask)
        });
        self.press(leaf, "Enter");
        self.wait(leaf, "the second request to the stand-in", 60, || {
            self.api
                .model_requests()
                .iter()
                .any(|r| r.body.contains(&ask))
        });
        self.wait(leaf, "list to show `working` again", 30, || {
            self.row(leaf)["status"] == "working"
        });
        self.press(leaf, "Escape");
        self.wait(leaf, "list to show `idle` after Esc", 30, || {
            self.row(leaf)["status"] == "idle"
        });
        self.api.release();
    }
}

impl Drop for World {
    fn drop(&mut self) {
        // Whatever a failed test left: the tmux server, then any process of this HOME.
        let _ = self.tmux(&["kill-server"]);
        for pid in processes_of(&self.env().home) {
            // SAFETY: kill has no memory preconditions; the pid is one this test started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// The processes running with `HOME=home` (this test's: its agents, their helpers,
/// treebox's tmux server).
pub(crate) fn processes_of(home: &Path) -> Vec<i32> {
    let want = format!("HOME={}", home.display());
    crate::env::processes_where(|p| {
        let Ok(environ) = std::fs::read(p.join("environ")) else {
            return false;
        };
        // The keeper box's container (podman's conmon for it runs with the test's HOME)
        // is not an agent's, nor are a rootless podman's own helpers that outlive one
        // box: the process holding its user namespace, the keeper's network and the
        // forwarder of the keeper's published ports (`rootlessport`, and its child
        // re-run as `exe`).
        let cmdline = std::fs::read(p.join("cmdline")).unwrap_or_default();
        let comm = std::fs::read_to_string(p.join("comm")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains("-keeper")
            || cmdline.starts_with(b"rootlessport")
            || ["catatonit", "slirp4netns"].contains(&comm.trim())
            || !environ.split(|b| *b == 0).any(|v| v == want.as_bytes())
        {
            return false;
        }
        // A zombie is gone already, whatever its parent does about it.
        let stat = std::fs::read_to_string(p.join("stat")).unwrap_or_default();
        !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

/// Claude Code's state for a returning user who trusts the main checkout: onboarding
/// done, the model key approved, `main` trusted, bypass mode's warning accepted.
pub(crate) fn claude_user(home: &Path, main: &Path, trusts_main: bool) {
    claude_returning_user(
        home,
        serde_json::json!({
            main.to_string_lossy(): {"hasTrustDialogAccepted": trusts_main}
        }),
    );
}

/// Claude Code's state for a returning user: onboarding done, the model key approved,
/// bypass mode's warning accepted, and `projects` (its answers per directory).
pub(crate) fn claude_returning_user(home: &Path, projects: serde_json::Value) {
    let tail = &CLAUDE_KEY[CLAUDE_KEY.len() - 20..];
    let user = serde_json::json!({
        "hasCompletedOnboarding": true,
        "customApiKeyResponses": {"approved": [tail], "rejected": []},
        "projects": projects
    });
    std::fs::write(home.join(".claude.json"), user.to_string()).unwrap();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(
        home.join(".claude/settings.json"),
        r#"{"skipDangerousModePermissionPrompt": true}"#,
    )
    .unwrap();
}

/// Codex's config for a returning user who trusts the main checkout, with the
/// stand-in as its model provider.
fn codex_user(home: &Path, main: &Path, base_url: &str, trusts_main: bool) {
    let config = format!(
        r#"model_provider = "stand-in"

[model_providers.stand-in]
name = "stand-in"
base_url = "{url}"
wire_api = "responses"
env_key = "{CODEX_KEY_VAR}"

[projects.{main}]
trust_level = "{trust}"

# Codex 0.163 starts a background app-server daemon that outlives the TUI; a test
# leaves no process behind.
[features]
daemon_auto_start = false
"#,
        url = base_url,
        main = serde_json::to_string(&main.to_string_lossy()).unwrap(),
        trust = if trusts_main { "trusted" } else { "untrusted" },
    );
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::write(home.join(".codex/config.toml"), config).unwrap();
}

fn claude_json(home: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(home.join(".claude.json")).unwrap()).unwrap()
}

#[test]
fn claude_in_a_host_worktree_box() {
    let Some(w) = World::new(Agent::Claude) else {
        return;
    };
    w.one_turn("wt-claude", "worktree");
}

#[test]
fn codex_in_a_host_worktree_box() {
    let Some(w) = World::new(Agent::Codex) else {
        return;
    };
    w.one_turn("wt-codex", "worktree");
}

/// The host user is not root (uid 1500): on the host runner the agent is that user,
/// Claude Code needs no opt-in, and both agents come up and answer in a worktree box
/// and in a clone box (whose trust reaches the agent from a user's files the test's
/// root does not own).
#[test]
fn both_agents_on_the_host_for_a_user_who_is_not_root() {
    if !is_root() {
        eprintln!("note: not root: cannot become another user; the non-root case is not tried");
        return;
    }
    for agent in [Agent::Claude, Agent::Codex] {
        let Some(mut w) = World::new(agent) else {
            return;
        };
        // The opt-in a root user needs is not there: this user needs none.
        w.env().write_config("{}");
        let uid = 1500u32;
        w.env().give_to(uid);
        w.as_user = Some((uid, uid));
        w.one_turn(&format!("nr-{}", agent.name()), "worktree");
        w.host_clone_turn(&format!("nr-cl-{}", agent.name()));
    }
}

#[test]
fn claude_in_a_host_clone_box() {
    let Some(w) = World::new(Agent::Claude) else {
        return;
    };
    w.host_clone_turn("cl-claude");
}

#[test]
fn codex_in_a_host_clone_box() {
    let Some(w) = World::new(Agent::Codex) else {
        return;
    };
    w.host_clone_turn("cl-codex");
}

impl World {
    /// [`World::one_turn`] in a clone box on the host runner, whose trust treebox
    /// carries over in the user's own files (Claude Code's `~/.claude.json`) or on
    /// the agent's command line (Codex): afterwards those files are as they were.
    fn host_clone_turn(&self, leaf: &str) {
        let home = &self.env().home;
        let codex_before = std::fs::read_to_string(home.join(".codex/config.toml")).ok();
        self.one_turn(leaf, "clone");
        match self.agent {
            Agent::Claude => {
                // The trust carried to the box went with it.
                let user = claude_json(home);
                let box_key = self.env().box_path(leaf);
                assert!(
                    user["projects"].get(&*box_key.to_string_lossy()).is_none(),
                    "{user:#}"
                );
                assert_eq!(
                    user["projects"][&*self.env().repo.to_string_lossy()]["hasTrustDialogAccepted"],
                    true
                );
            }
            Agent::Codex => {
                // Trust reached the box on its command line: the user's config trusts
                // what it trusted (Codex itself adds to the file: what it has shown).
                let after = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap();
                assert!(!after.contains(leaf), "{after}");
                let projects = |text: &str| {
                    let doc: toml::Table = text.parse().unwrap();
                    doc.get("projects").cloned()
                };
                let before = codex_before.expect("the fixture's config.toml");
                assert_eq!(projects(&after), projects(&before), "{after}");
            }
        }
        // What the user owned, the user still owns (treebox rewrote it as that user).
        if let Some((uid, _)) = self.as_user {
            use std::os::unix::fs::MetadataExt;
            for f in [".claude.json", ".codex/config.toml"] {
                if let Ok(m) = std::fs::metadata(home.join(f)) {
                    assert_eq!(m.uid(), uid, "{f}");
                }
            }
        }
    }
}

/// Trust the user never gave the main checkout is not given to a box either: the
/// agent asks, as it would without treebox.
fn untrusted_main_is_not_carried(agent: Agent, question: &str) {
    let Some(w) = World::with(agent, false) else {
        return;
    };
    let leaf = format!("ask-{}", agent.name());
    let r = w.env().treebox(&[
        "create",
        "-d",
        &leaf,
        "--harness",
        agent.name(),
        "--git",
        "clone",
    ]);
    r.ok();
    // `create -d` said before launching that the agent will ask, and how to fix it.
    assert!(
        r.stderr.contains(&format!(
            "{} will ask whether to trust the box",
            agent.name()
        )),
        "{r:?}"
    );
    // Claude Code shows its question before it reports its start: `create -d` saw it
    // and said so rather than wait for a prompt that will not come. (Codex draws its
    // prompt first and the question over it later.)
    if agent == Agent::Claude {
        assert!(
            r.stderr.contains("waits at a screen for a person") && r.stderr.contains(question),
            "{r:?}"
        );
    }
    // And `list` says the agent waits for a person (its own hooks report nothing of a
    // dialog; Codex's start reported `idle`).
    assert_eq!(w.row(&leaf)["status"], "waiting", "{r:?}");
    w.wait(
        &leaf,
        "the agent to ask whether to trust the box",
        60,
        || w.screen(&leaf).contains(question),
    );
    assert_eq!(w.row(&leaf)["status"], "waiting");
    w.env().treebox(&["teardown", "--force", &leaf]).ok();
    if agent == Agent::Claude {
        let user = claude_json(&w.env().home);
        assert_eq!(
            user["projects"][&*w.env().repo.to_string_lossy()]["hasTrustDialogAccepted"],
            false,
            "{user:#}"
        );
        assert_eq!(user["projects"].as_object().unwrap().len(), 1, "{user:#}");
    }
    w.wait(&leaf, "the agent's processes to end", 30, || {
        processes_of(&w.env().home).is_empty()
    });
}

#[test]
fn claude_asks_in_a_clone_box_when_the_main_checkout_is_untrusted() {
    untrusted_main_is_not_carried(Agent::Claude, "Quick safety check");
}

#[test]
fn codex_asks_in_a_clone_box_when_the_main_checkout_is_untrusted() {
    untrusted_main_is_not_carried(Agent::Codex, "Trust this folder");
}

/// SPEC §7 "Unattended": on the host runner as root, Claude Code refuses to start;
/// `create` says so before launching and names the opt-in, and the agent's refusal
/// fails the detached start. With the opt-in, it comes up.
#[test]
fn claude_as_root_on_the_host_needs_the_users_opt_in() {
    if !is_root() {
        eprintln!("note: not root here; the root refusal is not tried");
        return;
    }
    let Some(w) = World::new(Agent::Claude) else {
        return;
    };
    w.env().write_config("{}");
    let r = w.env().treebox(&["create", "-d", "as-root"]);
    r.code(1);
    let warned = r
        .stderr
        .find("refuses to run as root")
        .expect("a warning before launching");
    let exited = r
        .stderr
        .find("the agent exited with code 1 before it was ready")
        .expect("the refusal reported");
    assert!(warned < exited, "{r:?}");
    assert!(r.stderr.contains("allowRoot"), "{r:?}");
    assert!(r.stderr.contains("cannot be used with root"), "{r:?}");
    assert_eq!(w.row("as-root")["exitCode"], 1);
    // The opt-in: the next start comes up to the prompt.
    w.env()
        .write_config(r#"{"harnesses": {"claude": {"allowRoot": true}}}"#);
    let r = w.env().treebox(&["enter", "-d", "as-root"]);
    r.ok();
    assert!(r.stderr.contains("IS_SANDBOX=1"), "{r:?}");
    w.wait("as-root", "the agent's prompt", 60, || {
        Agent::Claude.ready(&w.look("as-root"))
    });
    w.env().treebox(&["teardown", "--force", "as-root"]).ok();
    w.wait("as-root", "the agent's processes to end", 30, || {
        processes_of(&w.env().home).is_empty()
    });
}

/// SPEC §7 "Unattended" in containers: the real CLIs from the operator's own base image
/// come up in a sandboxed worktree box (a container box's default git mode) and, on
/// docker, in a clone box (behind the firewall for Claude), with no dialog, and answer
/// one turn each. The user's provider URLs name this machine by a loopback name —
/// `localhost` for Claude Code's `ANTHROPIC_BASE_URL`, `127.0.0.1` for Codex's
/// provider — which the box reaches as the engine's name for the host; the stand-in
/// listens on the bridge's gateway, never on every interface.
fn real_agents_in(engine: &'static str, clones: bool) {
    for agent in [Agent::Claude, Agent::Codex] {
        let host = match agent {
            Agent::Claude => "localhost",
            Agent::Codex => "127.0.0.1",
        };
        let Some(w) = World::in_engine(agent, engine, Some(host)) else {
            return;
        };
        // A box that outlives the others keeps the image they share: the teardown of the
        // last box using an image removes it (SPEC §7), and each box after would build
        // it again (about a minute per build on docker's fuse-overlayfs here).
        w.tb(&["create", "--no-launch", "keeper"]).ok();
        w.one_turn(&format!("wt-{}", agent.name()), "worktree");
        if clones {
            w.one_turn_with(
                &format!("cl-{}", agent.name()),
                "clone",
                firewall_for(agent),
            );
        }
        if agent == Agent::Claude && clones {
            a_loopback_only_server_is_warned_of(&w);
        }
        w.tb(&["teardown", "--force", "keeper"]).ok();
    }
    if engine == "docker" {
        for_a_user_who_is_not_root(Agent::Claude);
    }
}

/// A provider on this machine that listens on loopback only is out of a container's
/// reach: `create` says so, with the address to listen on.
fn a_loopback_only_server_is_warned_of(w: &World) {
    let Runner::Engine(b) = &w.runner else {
        unreachable!("a container world")
    };
    let local_only = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}",
        local_only.local_addr().unwrap().port()
    );
    let env = w.env();
    let out = env
        .command(crate::env::TREEBOX, &env.repo)
        .args(["create", "--no-launch", "lo-only"])
        .env("ANTHROPIC_BASE_URL", &url)
        .output()
        .unwrap();
    let r = crate::env::Run::from_output(out);
    r.ok();
    let gateway = crate::container::gateway(b.engine).unwrap();
    assert!(
        r.stderr
            .contains(&format!("ANTHROPIC_BASE_URL ({url}) names this machine"))
            && r.stderr.contains(&format!("nothing answers at {gateway}:")),
        "{r:?}"
    );
    env.treebox(&["teardown", "--force", "lo-only"]).ok();
}

/// The host user is not root (uid 1500, in the docker socket's group): the real
/// `agent` comes up in a docker sandboxed worktree box and in a clone box (Claude
/// Code's behind the firewall) all the same, as the image's agent (uid 1000, the
/// user's group), and what it wrote goes at teardown.
fn for_a_user_who_is_not_root(agent: Agent) {
    use std::os::unix::fs::MetadataExt;
    if !is_root() {
        eprintln!("note: not root: cannot become another user; the non-root case is not tried");
        return;
    }
    let Ok(sock) = std::fs::metadata("/var/run/docker.sock") else {
        eprintln!("note: no docker socket; the non-root case is not tried");
        return;
    };
    let host = match agent {
        Agent::Claude => "localhost",
        Agent::Codex => "127.0.0.1",
    };
    let Some(mut w) = World::in_engine(agent, "docker", Some(host)) else {
        return;
    };
    let uid = 1500u32;
    w.env().give_to(uid);
    w.as_user = Some((uid, sock.gid()));
    w.tb(&["create", "--no-launch", "keeper"]).ok();
    w.one_turn(&format!("nr-{}", agent.name()), "worktree");
    w.one_turn_with(
        &format!("nr-cl-{}", agent.name()),
        "clone",
        firewall_for(agent),
    );
    w.tb(&["teardown", "--force", "keeper"]).ok();
    w.all_the_users();
}

impl World {
    /// Once its boxes are gone, everything in the test's tree is the user's: nothing an
    /// agent wrote under another uid (the image's agent, a uid of a rootless engine's
    /// range) is left for a user who could not remove it.
    #[track_caller]
    fn all_the_users(&self) {
        use std::os::unix::fs::MetadataExt;
        let (uid, _) = self.as_user.expect("a world of a user who is not root");
        fn walk(dir: &Path, uid: u32, out: &mut Vec<String>) {
            let Ok(rd) = std::fs::read_dir(dir) else {
                return;
            };
            for e in rd.flatten() {
                let Ok(m) = e.path().symlink_metadata() else {
                    continue;
                };
                if m.uid() != uid {
                    out.push(format!("{} (uid {})", e.path().display(), m.uid()));
                }
                if m.is_dir() {
                    walk(&e.path(), uid, out);
                }
            }
        }
        let mut others = Vec::new();
        walk(&self.env().root(), uid, &mut others);
        assert!(others.is_empty(), "not the user's: {others:#?}");
    }
}

/// One agent's clone box goes behind the firewall (Claude Code's), the other's not.
fn firewall_for(agent: Agent) -> &'static [&'static str] {
    match agent {
        Agent::Claude => &["--firewall"],
        Agent::Codex => &[],
    }
}

/// Issue 29's done-means in podman for a host user who is not root: that user's
/// podman is rootless (a real user of this machine, made for the test, with a
/// subordinate uid range; see [`RootlessUser`]). Both real agents come up in a
/// sandboxed worktree box, as the image's agent (a uid of the user's range), answer
/// one turn, and what they wrote goes at teardown. `doctor` tells this user the truth
/// on the way: that its podman is rootless, whether the boxes' limits apply, and, on a
/// machine that keeps `/dev/net/tun` from users, that no box can have a network.
#[test]
fn both_agents_in_rootless_podman_for_a_user_who_is_not_root() {
    let Some(dir) = agents_dir("claude").and(agents_dir("codex")) else {
        return;
    };
    if !crate::container::engine_works("podman") {
        return;
    }
    let Some(mut user) = RootlessUser::new() else {
        return;
    };
    if user.tun_closed() {
        // This machine keeps the user's podman from any network: `doctor` says so,
        // and how to fix it, before a box fails to build.
        let out = user
            .command(crate::env::TREEBOX)
            .args(["doctor", "--json", "--isolation", "podman"])
            .output()
            .unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let runner = named(&doc, "checks", "runner");
        assert_eq!(runner["status"], "fail", "{runner}");
        assert!(
            runner["hint"]
                .as_str()
                .unwrap()
                .contains("chmod 0666 /dev/net/tun"),
            "{runner}"
        );
    }
    user.open_tun();
    user.load(crate::container::BASE);
    let image = crate::container::build_agents_image(&dir, || user.podman(&[]))
        .expect("the agents' base image, in the user's storage");
    let host = user.host_address(crate::container::BASE);
    for agent in [Agent::Claude, Agent::Codex] {
        let loopback = match agent {
            Agent::Claude => "localhost",
            Agent::Codex => "127.0.0.1",
        };
        let Some(w) = World::in_rootless_podman(agent, &user, &image, &host, Some(loopback)) else {
            return;
        };
        let doctor = w.tb(&["doctor", "--json"]);
        let runner = named(&doctor.json(), "checks", "runner");
        assert!(
            runner["summary"]
                .as_str()
                .unwrap_or("")
                .contains("rootless"),
            "{runner}"
        );
        let keeper = w.tb(&["create", "--no-launch", "keeper"]);
        keeper.ok();
        limits_as_doctor_says(&w, &doctor.json(), &keeper.stderr);
        w.one_turn(&format!("rl-{}", agent.name()), "worktree");
        w.tb(&["teardown", "--force", "keeper"]).ok();
        w.all_the_users();
    }
}

/// `doctor`'s `limits` check tells the truth about the keeper box's container: the
/// limits are in its config, or `doctor` warned that the engine cannot apply them (a
/// rootless podman without cgroups of its own ignores them), and so did the keeper's
/// `create` (its `stderr`).
fn limits_as_doctor_says(w: &World, doctor: &serde_json::Value, created: &str) {
    let Runner::Engine(b) = &w.runner else {
        unreachable!("a container world")
    };
    let rec = b.record("keeper");
    let name = rec["container"]["name"].as_str().unwrap();
    let out = b.engine(&["inspect", "--format", "{{.HostConfig.PidsLimit}}", name]);
    assert!(out.status.success(), "{out:?}");
    let pids = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let limits = named(doctor, "checks", "limits");
    if pids == "0" {
        assert_eq!(limits["status"], "advisory", "{limits}");
        assert!(
            limits["summary"]
                .as_str()
                .unwrap()
                .contains("cannot apply them"),
            "{limits}"
        );
        assert!(
            created.contains("without its process, memory and CPU limits"),
            "{created}"
        );
    } else {
        assert_eq!(limits["status"], "ok", "{limits}");
        assert!(!created.contains("limits ("), "{created}");
    }
}

/// Codex for a host user who is not root, in a docker box (issue 29's done-means; the
/// claude case runs in [`real_agents_in_docker_boxes`]).
#[test]
fn codex_in_docker_for_a_user_who_is_not_root() {
    for_a_user_who_is_not_root(Agent::Codex);
}

#[test]
fn real_agents_in_docker_boxes() {
    real_agents_in("docker", true);
}

#[test]
fn real_agents_in_podman_boxes() {
    real_agents_in("podman", false);
}

/// The real Claude Code in a docker box built on the repository's dev container,
/// imported (issue 43): the file names the operator's image with the CLIs in it, its
/// environment reaches the agent's box and its `postCreateCommand` ran there as the
/// agent; the agent comes up at its prompt and answers one turn.
#[test]
fn claude_in_a_docker_box_on_an_imported_dev_container() {
    let Some(w) = World::in_engine(Agent::Claude, "docker", Some("localhost")) else {
        return;
    };
    let env = w.env();
    let templates = env.config_dir().join("treebox/templates");
    let read = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let test = read(&templates.join("test/container.json"));
    let image = test["baseImage"].as_str().unwrap().to_string();
    env.commit_file(
        &env.repo,
        ".devcontainer/devcontainer.json",
        &format!(
            r#"{{
  // The project's toolchain: the operator's image, with the agent CLIs in it.
  "image": "{image}",
  "containerEnv": {{ "PROJECT_MODE": "dev", }},
  "postCreateCommand": "echo \"$PROJECT_MODE\" > /tmp/tb-dc-ready",
}}"#
        ),
        "dev container",
    );
    w.tb(&["template", "import-devcontainer", "dc", "--yes"])
        .ok();
    // As the test template is made: its build arguments (no npm install, the test's
    // label), its Dockerfile's label, and an allowlist of nothing public.
    let dc = templates.join("dc");
    let mut spec = read(&dc.join("container.json"));
    spec["buildArgs"] = test["buildArgs"].clone();
    std::fs::write(dc.join("container.json"), spec.to_string()).unwrap();
    let test_df = std::fs::read_to_string(templates.join("test/Dockerfile")).unwrap();
    let label = &test_df[test_df.find("\nARG TREEBOX_TEST_ID").unwrap()..];
    let mut df = std::fs::read_to_string(dc.join("Dockerfile")).unwrap();
    df.push_str(label);
    std::fs::write(dc.join("Dockerfile"), df).unwrap();
    std::fs::copy(
        templates.join("test/allowlist.txt"),
        dc.join("allowlist.txt"),
    )
    .unwrap();
    let config = env.config_dir().join("treebox/config.json");
    let mut cfg = read(&config);
    cfg["template"] = "dc".into();
    std::fs::write(&config, cfg.to_string()).unwrap();

    // Its postCreateCommand ran in the box, as the agent, with the file's environment.
    w.tb(&["create", "--no-launch", "dc-setup"]).ok();
    let ready = env.sandbox(&[
        "run",
        "dc-setup",
        "--",
        "sh",
        "-c",
        "cat /tmp/tb-dc-ready; stat -c %U /tmp/tb-dc-ready",
    ]);
    assert_eq!(ready.ok().stdout.trim(), "dev\nagent");
    // The real agent, at its prompt, answers one turn (and its box goes).
    w.one_turn("dc-claude", "worktree");
    w.tb(&["teardown", "--force", "dc-setup"]).ok();
}
