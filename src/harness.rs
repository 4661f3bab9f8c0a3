//! Harnesses: which agent CLI a box launches (SPEC §3).
//!
//! A closed vocabulary: `claude` and `codex`, each with the flags that let it work
//! without prompting inside its box. The program can be replaced in the user config
//! (tests and wrappers); the flags and the user's extra arguments are kept. The serde,
//! `Display` and `FromStr` names are the same strings (records, config, JSON).
//!
//! With [`StatusHooks`] (SPEC §7), the argv also wires the status producer: `claude`
//! gets `--settings` naming the host-owned hook settings; `codex` starts through the
//! writer (which reports `idle`, then execs it) with its own hooks given as `-c`
//! values (`working` on `UserPromptSubmit`, `idle` on `Stop` and `Interrupt`), each
//! trusted by its hash ([`codex_hook_hash`]) so Codex runs them without its review
//! screen, and `-c notify=[…]` reporting `idle` after each turn as well. The paths are
//! as the agent sees them (`runner::oci::status` makes them).

use std::fmt;
use std::str::FromStr;

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Harness {
    #[default]
    Claude,
    Codex,
}

impl Harness {
    pub const ALL: [Harness; 2] = [Harness::Claude, Harness::Codex];

    /// The variable that moves this harness's login (config) dir on the host.
    pub fn login_env(self) -> &'static str {
        match self {
            Harness::Claude => "CLAUDE_CONFIG_DIR",
            Harness::Codex => "CODEX_HOME",
        }
    }

    /// Where this harness keeps its login on the host, as the CLI itself finds it:
    /// [`Self::login_env`] when set (and not empty), else `~/.claude` / `~/.codex`;
    /// and Claude Code's global file (`.claude.json`), which lives in that dir when it
    /// is moved and in the home otherwise. `home` is the host user's home.
    pub fn host_login(
        self,
        home: &std::path::Path,
    ) -> (std::path::PathBuf, Option<std::path::PathBuf>) {
        self.login_paths(std::env::var_os(self.login_env()).as_deref(), home)
    }

    /// [`Self::host_login`] given the variable's value (`moved`).
    pub fn login_paths(
        self,
        moved: Option<&std::ffi::OsStr>,
        home: &std::path::Path,
    ) -> (std::path::PathBuf, Option<std::path::PathBuf>) {
        let moved = moved
            .filter(|d| !d.is_empty())
            .map(std::path::PathBuf::from);
        match self {
            Harness::Claude => match moved {
                Some(d) => (d.clone(), Some(d.join(".claude.json"))),
                None => (home.join(".claude"), Some(home.join(".claude.json"))),
            },
            Harness::Codex => (moved.unwrap_or_else(|| home.join(".codex")), None),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Harness::Claude => "claude",
            Harness::Codex => "codex",
        }
    }

    /// The flags a harness gets in every box.
    pub fn flags(self) -> &'static [&'static str] {
        match self {
            Harness::Claude => &["--dangerously-skip-permissions"],
            Harness::Codex => &["--dangerously-bypass-approvals-and-sandbox"],
        }
    }

    /// Words of the screens at which the agent waits for a person (trust, login, key
    /// and bypass confirmations, a model migration, a refusal): a detached start that
    /// sees one says so at once instead of waiting for a prompt that will not come.
    /// As Claude Code 2.1 and Codex 0.163 word them.
    pub fn asks(self) -> &'static [&'static str] {
        match self {
            Harness::Claude => &[
                "Quick safety check",
                "Do you trust the files in this folder",
                "Do you want to use this API key",
                "Choose the text style",
                "Select login method",
                "WARNING: Claude Code running in Bypass Permissions mode",
            ],
            Harness::Codex => &[
                "Trust this folder",
                "Do you trust the files in this folder",
                "Sign in with ChatGPT",
                "Meet GPT",
                // Its hook review: treebox's status hooks are trusted by hash, so this
                // shows only when Codex hashes them differently from `codex_hook_hash`.
                "Hooks need review",
            ],
        }
    }

    /// What the agent's screen shows at its prompt, beside the sign it reports (Claude
    /// Code 2.1: its prompt mark and the permission mode treebox starts it in, a line
    /// none of its dialogs has): seen, it is ready a moment before it reports.
    pub fn prompt_marks(self) -> &'static [&'static str] {
        match self {
            Harness::Claude => &["\u{276f}", "bypass permissions on"],
            Harness::Codex => &[],
        }
    }

    /// What the agent's screen shows at its prompt, when it gives no other sign of
    /// being ready (Codex: its prompt mark and the shortcuts hint). Claude Code reports
    /// through its `SessionStart` hook instead.
    pub fn prompt_shows(self) -> &'static [&'static str] {
        match self {
            Harness::Claude => &[],
            Harness::Codex => &["\u{203a}", "for shortcuts"],
        }
    }

    /// The full argv: program, the harness flags, then the user's arguments verbatim.
    pub fn argv(self, program: &str, extra: &[String]) -> Vec<String> {
        self.launch_argv(program, extra, None)
    }

    /// The argv that launches the agent: [`Harness::argv`], wired to the status
    /// producer when `hooks` is given (the user's arguments still come last), and
    /// then started through the writer (`sh WRITER idle start --exec PROGRAM …`).
    pub fn launch_argv(
        self,
        program: &str,
        extra: &[String],
        hooks: Option<&StatusHooks>,
    ) -> Vec<String> {
        let mut argv = Vec::new();
        let found = |h: &&StatusHooks| {
            let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
            let path = std::env::var_os("PATH");
            !h.on_host || crate::cmd::find_program(program, path.as_deref(), &cwd).is_some()
        };
        if let Some(h) = hooks.filter(found) {
            // The start itself reports `idle` (up means at its prompt, and a detached
            // start returns only then; Codex's `SessionStart` fires only with the first
            // prompt), and `start` empties its turn count before the agent runs: a
            // prompt sent the moment it is up is counted (Claude Code runs its own
            // `SessionStart` hook after drawing its prompt).
            argv.extend([
                "sh".into(),
                h.writer.clone(),
                "idle".into(),
                "start".into(),
                "--exec".into(),
            ]);
        }
        argv.push(program.to_string());
        argv.extend(self.flags().iter().map(|s| s.to_string()));
        match (self, hooks) {
            (Harness::Claude, Some(h)) => {
                argv.extend(["--settings".into(), h.claude_settings.clone()]);
            }
            (Harness::Codex, Some(h)) => {
                argv.extend(["-c".into(), h.codex_notify()]);
                for value in h.codex_hooks() {
                    argv.extend(["-c".into(), value]);
                }
            }
            (_, None) => {}
        }
        argv.extend(extra.iter().cloned());
        argv
    }
}

/// What Claude Code does when started as root (it refuses
/// `--dangerously-skip-permissions` then, unless `IS_SANDBOX` is exactly `1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsRoot {
    /// Nothing to do: not Claude Code, not root on the host runner, or the user's
    /// environment already says `IS_SANDBOX=1`.
    Fine,
    /// The user opted in (`harnesses.claude.allowRoot`): launch with `IS_SANDBOX=1`.
    OptedIn,
    /// It will refuse and exit: say so before launching.
    Refuses,
}

/// [`AsRoot`] for `harness` launched on the host runner (`host`) by uid `euid`, with
/// `IS_SANDBOX` as `is_sandbox` in the environment and the user's opt-in `allowed`.
/// A container never needs it: the agent is never root there.
pub fn as_root(
    harness: Harness,
    host: bool,
    euid: u32,
    is_sandbox: Option<&std::ffi::OsStr>,
    allowed: bool,
) -> AsRoot {
    if harness != Harness::Claude || !host || euid != 0 || is_sandbox.is_some_and(|v| v == "1") {
        AsRoot::Fine
    } else if allowed {
        AsRoot::OptedIn
    } else {
        AsRoot::Refuses
    }
}

/// Where the status producer is, as the agent sees it: the writer (`sh WRITER STATE`)
/// and Claude Code's settings file holding the hooks that run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusHooks {
    pub writer: String,
    pub claude_settings: String,
    /// The agent runs on this machine, as this process finds programs (the host
    /// runner): one that is not found is started directly, so that it fails to start
    /// (said as such) rather than the writer reporting it.
    pub on_host: bool,
}

impl StatusHooks {
    /// The shell command a hook runs to report `state` (and the writer's event after
    /// it, `working submit`, `idle stop`).
    pub fn command(&self, state: &str) -> String {
        format!("sh {} {state}", crate::cmd::quote(&self.writer))
    }

    /// codex's `notify` program, as a `-c` TOML value: the writer reporting `idle` (codex
    /// appends its notification JSON, which the writer ignores).
    pub fn codex_notify(&self) -> String {
        let items: Vec<String> = ["sh", self.writer.as_str(), "idle"]
            .iter()
            .map(|s| serde_json::to_string(s).expect("a string serializes"))
            .collect();
        format!("notify=[{}]", items.join(","))
    }
}

/// One of Codex's hook events treebox reports through.
struct CodexHook {
    event: &'static str,
    /// Its key label, as Codex's trust keys and hashes name it.
    label: &'static str,
    state: &'static str,
    /// Seconds, given explicitly: Codex hashes the timeout it will use, and its default
    /// differs by event (600 s; 1 s for `Interrupt`).
    timeout: u32,
}

const CODEX_HOOKS: [CodexHook; 3] = [
    // A prompt taken and a turn ended are counted too (the writer's `submit`, `stop`).
    CodexHook {
        event: "UserPromptSubmit",
        label: "user_prompt_submit",
        state: "working submit",
        timeout: 30,
    },
    CodexHook {
        event: "Stop",
        label: "stop",
        state: "idle stop",
        timeout: 30,
    },
    // Esc ends a turn without `Stop`.
    CodexHook {
        event: "Interrupt",
        label: "interrupt",
        state: "idle stop",
        timeout: 1,
    },
];

impl StatusHooks {
    /// Codex's status hooks as `-c` values: one matcher group per event, then
    /// `hooks.state` trusting exactly these (Codex 0.163 runs a hook only once its
    /// hash is trusted, and asks a person otherwise). The trust is keyed by where the
    /// hook is declared — the command line is Codex's `<session-flags>` layer — and
    /// goes in that same layer, so nothing is written to the user's config and no
    /// other hook (the user's, the repository's `.codex/config.toml`) is trusted; the
    /// `--dangerously-bypass-hook-trust` switch would run all of those unreviewed.
    pub fn codex_hooks(&self) -> Vec<String> {
        let mut values = Vec::new();
        let mut trusted = Vec::new();
        for h in CODEX_HOOKS {
            let command = self.command(h.state);
            values.push(format!(
                "hooks.{}=[{{hooks=[{{type=\"command\",command={},timeout={}}}]}}]",
                h.event,
                toml_string(&command),
                h.timeout
            ));
            trusted.push(format!(
                "{}={{trusted_hash={}}}",
                toml_string(&format!("/<session-flags>/config.toml:{}:0:0", h.label)),
                toml_string(&codex_hook_hash(h.label, &command, h.timeout))
            ));
        }
        values.push(format!("hooks.state={{{}}}", trusted.join(",")));
        values
    }
}

/// The hash Codex trusts a command hook by (its `command_hook_hash`): SHA-256 of the
/// hook's normalized identity as compact JSON with sorted keys — the event's key label,
/// no matcher, and the one handler as Codex will run it (its timeout, not async).
/// Written out in key order here, so no JSON map ordering is relied on.
pub fn codex_hook_hash(label: &str, command: &str, timeout: u32) -> String {
    use sha2::{Digest, Sha256};
    let json = |s: &str| serde_json::to_string(s).expect("a string serializes");
    let identity = format!(
        r#"{{"event_name":{},"hooks":[{{"async":false,"command":{},"timeout":{timeout},"type":"command"}}]}}"#,
        json(label),
        json(command)
    );
    let digest = Sha256::digest(identity.as_bytes());
    format!("sha256:{}", hex::encode(digest))
}

/// `s` as a TOML basic string (a JSON string is one: the same quotes and escapes).
fn toml_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

impl fmt::Display for Harness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Harness {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Harness::ALL
            .into_iter()
            .find(|h| h.as_str() == s)
            .ok_or_else(|| format!("unknown harness {s:?} (expected \"claude\" or \"codex\")"))
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn login_paths_follow_the_variables_as_the_clis_do() {
        use std::ffi::OsStr;
        use std::path::{Path, PathBuf};
        let home = Path::new("/home/u");
        let p = |h: Harness, m: Option<&str>| h.login_paths(m.map(OsStr::new), home);
        assert_eq!(
            p(Harness::Claude, None),
            (
                PathBuf::from("/home/u/.claude"),
                Some(PathBuf::from("/home/u/.claude.json"))
            )
        );
        assert_eq!(
            p(Harness::Claude, Some("/cfg/claude")),
            (
                PathBuf::from("/cfg/claude"),
                Some(PathBuf::from("/cfg/claude/.claude.json"))
            )
        );
        assert_eq!(
            p(Harness::Claude, Some("")).0,
            PathBuf::from("/home/u/.claude")
        );
        assert_eq!(
            p(Harness::Codex, None),
            (PathBuf::from("/home/u/.codex"), None)
        );
        assert_eq!(
            p(Harness::Codex, Some("/x/codex")).0,
            PathBuf::from("/x/codex")
        );
    }

    use super::*;

    #[test]
    fn claude_as_root_on_the_host_needs_the_users_opt_in() {
        use std::ffi::OsStr;
        let c = Harness::Claude;
        assert_eq!(as_root(c, true, 0, None, false), AsRoot::Refuses);
        assert_eq!(
            as_root(c, true, 0, Some(OsStr::new("yes")), false),
            AsRoot::Refuses
        );
        assert_eq!(as_root(c, true, 0, None, true), AsRoot::OptedIn);
        assert_eq!(
            as_root(c, true, 0, Some(OsStr::new("1")), false),
            AsRoot::Fine
        );
        assert_eq!(as_root(c, true, 1000, None, false), AsRoot::Fine);
        assert_eq!(as_root(c, false, 0, None, false), AsRoot::Fine);
        assert_eq!(as_root(Harness::Codex, true, 0, None, false), AsRoot::Fine);
    }

    #[test]
    fn argv_appends_extra_verbatim() {
        let a = Harness::Claude.argv("claude", &["-p".into(), "fix it; rm -rf /".into()]);
        assert_eq!(
            a,
            [
                "claude",
                "--dangerously-skip-permissions",
                "-p",
                "fix it; rm -rf /"
            ]
        );
        let a = Harness::Codex.argv("/opt/codex", &[]);
        assert_eq!(
            a,
            ["/opt/codex", "--dangerously-bypass-approvals-and-sandbox"]
        );
    }

    #[test]
    fn launch_argv_wires_the_status_producer() {
        let h = StatusHooks {
            writer: "/run/treebox/agent/status".into(),
            claude_settings: "/run/treebox/agent/claude-settings.json".into(),
            on_host: false,
        };
        let extra = ["go on".to_string()];
        let through = ["sh", "/run/treebox/agent/status", "idle", "start", "--exec"];
        let claude = [
            "claude",
            "--dangerously-skip-permissions",
            "--settings",
            "/run/treebox/agent/claude-settings.json",
            "go on",
        ];
        assert_eq!(
            Harness::Claude.launch_argv("claude", &extra, Some(&h)),
            [&through[..], &claude[..]].concat()
        );
        // On the host, a program that is not there is started directly (and fails to
        // start, which says so); one that is goes through the writer.
        let on_host = StatusHooks {
            on_host: true,
            ..h.clone()
        };
        assert_eq!(
            Harness::Claude.launch_argv("/nonexistent/claude", &extra, Some(&on_host))[0],
            "/nonexistent/claude"
        );
        assert_eq!(
            Harness::Claude.launch_argv("sh", &extra, Some(&on_host))[..5],
            through
        );
        let argv = Harness::Codex.launch_argv("codex", &extra, Some(&h));
        assert_eq!(
            argv[..9],
            [
                "sh",
                "/run/treebox/agent/status",
                "idle",
                "start",
                "--exec",
                "codex",
                "--dangerously-bypass-approvals-and-sandbox",
                "-c",
                r#"notify=["sh","/run/treebox/agent/status","idle"]"#,
            ]
        );
        let hooks: Vec<String> = argv[9..argv.len() - 1]
            .chunks(2)
            .map(|c| {
                assert_eq!(c[0], "-c");
                c[1].clone()
            })
            .collect();
        assert_eq!(hooks, h.codex_hooks());
        assert_eq!(argv.last().map(String::as_str), Some("go on"));
        let odd = StatusHooks {
            writer: "/s/it's here/status".into(),
            claude_settings: String::new(),
            on_host: false,
        };
        assert_eq!(odd.command("idle"), r#"sh '/s/it'\''s here/status' idle"#);
    }

    /// The values Codex 0.163 wrote into `hooks.state` when a person trusted these
    /// hooks at its review screen (given as `-c hooks.<Event>=…`).
    #[test]
    fn codex_hook_hashes_are_the_ones_codex_trusts() {
        assert_eq!(
            codex_hook_hash("session_start", "sh /tmp/cx/hook.sh start", 600),
            "sha256:634fbb07ba507ffbc58a6794cc46c27155c24cf7872da6f62213a7172b0915b2"
        );
        assert_eq!(
            codex_hook_hash("user_prompt_submit", "sh /tmp/cx/hook.sh prompt", 600),
            "sha256:386e05e2f7cc5d0a08eb51878eab2b397de03f843217df5c439c105f71de7b4a"
        );
        assert_eq!(
            codex_hook_hash("stop", "sh /tmp/cx/hook.sh stop", 600),
            "sha256:685527d9b255a81bb246eb01eab78cdfa79992c610cb2a04527fec7f111371b8"
        );
        // Given with no timeout, Codex runs an `Interrupt` hook with 1 s.
        assert_eq!(
            codex_hook_hash("interrupt", "sh /tmp/cx/hook.sh intr", 1),
            "sha256:5bc1a0f1f7a57f6fa5a994589b96366003f73e92483051ca4a8bf030cddb0862"
        );
    }

    #[test]
    fn codex_hooks_are_toml_and_trusted_by_their_hash() {
        let h = StatusHooks {
            writer: "/s/it's \"here\"/status".into(),
            claude_settings: String::new(),
            on_host: false,
        };
        let mut doc = String::new();
        for v in h.codex_hooks() {
            let (key, value) = v.split_once('=').unwrap();
            doc.push_str(&format!("{key} = {value}\n"));
        }
        let t: toml::Table = toml::from_str(&doc).unwrap();
        let hooks = t["hooks"].as_table().unwrap();
        for c in CODEX_HOOKS {
            let handler = &hooks[c.event].as_array().unwrap()[0]["hooks"][0];
            assert_eq!(handler["type"].as_str(), Some("command"));
            let command = handler["command"].as_str().unwrap();
            assert_eq!(command, h.command(c.state));
            let timeout = handler["timeout"].as_integer().unwrap();
            assert_eq!(timeout, i64::from(c.timeout));
            let key = format!("/<session-flags>/config.toml:{}:0:0", c.label);
            assert_eq!(
                hooks["state"][&key]["trusted_hash"].as_str(),
                Some(codex_hook_hash(c.label, command, c.timeout).as_str())
            );
        }
    }

    #[test]
    fn parse() {
        assert_eq!("codex".parse::<Harness>(), Ok(Harness::Codex));
        assert!("gpt".parse::<Harness>().is_err());
    }
}
