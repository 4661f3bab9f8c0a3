//! The agent's status channel (SPEC §7): a small directory of the box's bookkeeping
//! where the agent reports `working`, `waiting` or `idle`, and the producer that writes
//! it — for host boxes and containers alike.
//!
//! The producer is host-owned: a POSIX `sh` writer and Claude Code's hook settings,
//! written into the box's bookkeeping ([`Layout::agent_hooks_dir`]) and, in a container,
//! mounted read-only at [`AGENT_DIR`]. `claude` launches with `--settings` naming them
//! (hooks: `idle` on `SessionStart`, `working` on `UserPromptSubmit`/`PreToolUse`,
//! `waiting` on `Notification`,
//! `idle` on `Stop`); `codex` launches through the writer (`idle`: it comes up at its
//! prompt) with hooks of its own on its command line (`working` on `UserPromptSubmit`,
//! `idle` on `Stop`/`Interrupt`, trusted by hash: `harness::StatusHooks::codex_hooks`)
//! and a `notify` program that writes `idle` after each turn. The writer replaces `state` atomically
//! (temp file + `mv`) in the status dir: [`Layout::status_dir`] on the host,
//! [`STATUS_DIR`] in a container.
//!
//! The host writes one report itself ([`crate::session::detached::report_waiting`]): `waiting`, when a launch
//! saw the agent at a screen that waits for a person, or knew it would ask (a trust it
//! was not given), which the agent's own hooks never report.
//!
//! The host reads the channel as hostile data ([`read_status`]): a regular file only,
//! never a symlink or FIFO followed, at most [`MAX_STATUS_BYTES`], one word from the
//! closed set, else [`AgentStatus::Unknown`].
//!
//! Called by provisioning (create, enter) and `mounts` to install the producer, by the
//! planner for the launch argv, and by `list`, `ls` and `park` to read the channel.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::harness::StatusHooks;
use crate::names::Leaf;
use crate::state::{atomic, Layout};
use crate::vocab::RunnerKind;

/// Where the status directory appears inside every container.
pub const STATUS_DIR: &str = "/run/treebox/status";
/// Where the host-owned producer appears (read-only) inside every container.
pub const AGENT_DIR: &str = "/run/treebox/agent";
/// The variable that tells the agent (and its tools) where its status dir is.
pub const STATUS_ENV: &str = "TREEBOX_STATUS_DIR";
/// Largest status file read.
pub const MAX_STATUS_BYTES: u64 = 4096;

/// The writer, in the producer dir.
const WRITER: &str = "status";
/// The file in the status dir the agent touches once at its prompt (the writer's `up`
/// event, Claude Code's `SessionStart` hook): only its time is read.
pub const UP: &str = "up";
/// Claude Code's settings file, in the producer dir.
const CLAUDE_SETTINGS: &str = "claude-settings.json";

/// What the agent last reported: one of the closed set, or `unknown` for anything the
/// host would not take as a report (junk, too big, not a regular file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentStatus {
    Working,
    Waiting,
    Idle,
    Unknown,
}

impl AgentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentStatus::Working => "working",
            AgentStatus::Waiting => "waiting",
            AgentStatus::Idle => "idle",
            AgentStatus::Unknown => "unknown",
        }
    }

    /// The first word of a status file, from the closed set, else `Unknown`.
    pub fn parse(text: &[u8]) -> AgentStatus {
        let word = std::str::from_utf8(text)
            .ok()
            .and_then(|t| t.split_whitespace().next());
        match word {
            Some("working") => AgentStatus::Working,
            Some("waiting") => AgentStatus::Waiting,
            Some("idle") => AgentStatus::Idle,
            _ => AgentStatus::Unknown,
        }
    }
}

/// A report and when it was made (the file's modification time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reported {
    pub status: AgentStatus,
    pub at: SystemTime,
}

/// The agent's last report, read as untrusted data; `None` when it has reported nothing
/// (no `state` file). A symlink, FIFO, directory, oversized or junk file is `Unknown`
/// (with the time the box gave it); reading never blocks and never follows a link.
pub fn read_status(layout: &Layout, leaf: &Leaf) -> Option<Reported> {
    read_status_file(&layout.status_state_path(leaf))
}

/// [`read_status`] of one path.
pub fn read_status_file(p: &Path) -> Option<Reported> {
    use std::os::unix::fs::OpenOptionsExt;
    let m = std::fs::symlink_metadata(p).ok()?;
    let unknown = Reported {
        status: AgentStatus::Unknown,
        at: m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
    };
    if !m.file_type().is_file() || m.len() > MAX_STATUS_BYTES {
        return Some(unknown);
    }
    // Swapped for a FIFO or a link since: O_NONBLOCK never waits for a writer,
    // O_NOFOLLOW never follows; the opened file is checked again.
    let Ok(f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(p)
    else {
        return Some(unknown);
    };
    let Ok(fm) = f.metadata() else {
        return Some(unknown);
    };
    if !fm.file_type().is_file() || fm.len() > MAX_STATUS_BYTES {
        return Some(unknown);
    }
    let mut buf = Vec::new();
    if f.take(MAX_STATUS_BYTES + 1).read_to_end(&mut buf).is_err()
        || buf.len() as u64 > MAX_STATUS_BYTES
    {
        return Some(unknown);
    }
    Some(Reported {
        status: AgentStatus::parse(&buf),
        at: fm.modified().unwrap_or(SystemTime::UNIX_EPOCH),
    })
}

/// How many prompts the agent has taken and how many turns it has ended, as its hooks
/// counted them in the status dir's `turns` (one `p` or `s` each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Turns {
    pub prompts: u64,
    pub stops: u64,
}

/// The largest `turns` file read: a box that writes more has its turns unknown.
pub const MAX_TURNS_BYTES: u64 = 1 << 20;

/// The box's [`Turns`], read as hostile data as [`read_status`] reads its report;
/// `None` when there is no such file, or it is no regular file or too large.
pub fn read_turns(layout: &Layout, leaf: &Leaf) -> Option<Turns> {
    read_turns_in(&layout.status_dir(leaf))
}

/// [`read_turns`] of the status dir `dir`.
pub fn read_turns_in(dir: &Path) -> Option<Turns> {
    let p = dir.join("turns");
    let bytes =
        crate::untrusted::read_regular(&p, MAX_TURNS_BYTES, crate::untrusted::Links::Refuse)
            .ok()?;
    Some(Turns {
        prompts: bytes.iter().filter(|&&b| b == b'p').count() as u64,
        stops: bytes.iter().filter(|&&b| b == b's').count() as u64,
    })
}

/// Where a box's status dir and producer are, as the agent sees them.
fn agent_paths(layout: &Layout, leaf: &Leaf, runner: RunnerKind) -> (PathBuf, PathBuf) {
    if runner.is_container() {
        (PathBuf::from(STATUS_DIR), PathBuf::from(AGENT_DIR))
    } else {
        (layout.status_dir(leaf), layout.agent_hooks_dir(leaf))
    }
}

/// The producer's paths for the launch argv of a box about to be made (pure: the
/// planner's `--dry-run` writes nothing; [`install`] writes them when the box is made).
pub fn planned_hooks(layout: &Layout, leaf: &Leaf, runner: RunnerKind) -> StatusHooks {
    let (_, agent) = agent_paths(layout, leaf, runner);
    StatusHooks {
        writer: agent.join(WRITER).to_string_lossy().into_owned(),
        claude_settings: agent.join(CLAUDE_SETTINGS).to_string_lossy().into_owned(),
        on_host: !runner.is_container(),
    }
}

/// The producer's paths for launching in an existing box. A host box gets its producer
/// (re)written now; a container has it only when it was made with the read-only mount
/// (containers made by an older treebox launch without, until recreated). `None`: launch
/// without status hooks.
pub fn launch_hooks(layout: &Layout, leaf: &Leaf, runner: RunnerKind) -> Option<StatusHooks> {
    if runner.is_container() && !layout.agent_hooks_dir(leaf).join(WRITER).is_file() {
        return None;
    }
    // The producer is treebox's own file in the bookkeeping (a container mounts it
    // read-only): rewritten, a box made by an earlier version reports as this one.
    install(layout, leaf, runner).ok()?;
    Some(planned_hooks(layout, leaf, runner))
}

/// Write the box's producer (the writer and Claude Code's settings) into its
/// bookkeeping, for the runner's view of the paths, and make its status dir.
pub fn install(layout: &Layout, leaf: &Leaf, runner: RunnerKind) -> std::io::Result<()> {
    let (status, _) = agent_paths(layout, leaf, runner);
    let hooks = planned_hooks(layout, leaf, runner);
    std::fs::create_dir_all(layout.status_dir(leaf))?;
    let dir = layout.agent_hooks_dir(leaf);
    std::fs::create_dir_all(&dir)?;
    atomic::write(&dir.join(WRITER), writer_script(&status).as_bytes(), 0o644)?;
    let settings = claude_settings(&hooks, &status);
    atomic::write(&dir.join(CLAUDE_SETTINGS), settings.as_bytes(), 0o644)?;
    Ok(())
}

/// The writer: `sh status STATE [EVENT] [--exec PROGRAM ARGS…]`. It writes STATE (one
/// of the three; anything else is ignored) into the status dir through a temp file and
/// `mv`; EVENT `start` (the agent is starting) empties the dir's `turns`
/// ([`read_turns`]), `submit` (a prompt taken) and `stop` (a turn ended) add one byte
/// to it, `p` or `s`; `up` (the agent is at its prompt) touches the dir's `up`
/// ([`UP`]), which a detached start waits for. It always succeeds (a failing
/// hook must not disturb the agent), and with `--exec` then becomes PROGRAM, with
/// [`STATUS_ENV`] naming the status dir. Extra arguments (codex's notification JSON)
/// are ignored.
pub fn writer_script(status_dir: &Path) -> String {
    let d = crate::cmd::quote(&status_dir.to_string_lossy());
    format!(
        r#"#!/bin/sh
# treebox: report the agent's status to the host (SPEC §7). Written by treebox.
s=${{1-}}; [ "$#" -gt 0 ] && shift
d={d}
case $s in
working|waiting|idle) t="$d/.state.$$"; {{ printf '%s\n' "$s" >"$t" && mv -f "$t" "$d/state"; }} 2>/dev/null || rm -f "$t" 2>/dev/null ;;
esac
case ${{1-}} in
start) : >"$d/turns" 2>/dev/null; shift ;;
up) : >"$d/{UP}" 2>/dev/null; shift ;;
submit) printf p >>"$d/turns" 2>/dev/null; shift ;;
stop) printf s >>"$d/turns" 2>/dev/null; shift ;;
esac
if [ "${{1-}}" = --exec ]; then
  shift
  {STATUS_ENV}=$d; export {STATUS_ENV}
  command -v "$1" >/dev/null 2>&1 || {{ printf 'treebox: could not start `%s`: not found on PATH\n' "$1" >&2; exit 127; }}
  exec "$@"
fi
exit 0
"#
    )
}

/// Claude Code's settings: the status hooks (Claude Code's hooks schema), and the status
/// dir in the agent's environment.
pub fn claude_settings(hooks: &StatusHooks, status_dir: &Path) -> String {
    let cmd = |s: &str| serde_json::json!([{ "hooks": [{ "type": "command", "command": hooks.command(s) }] }]);
    let tools = serde_json::json!([{
        "matcher": "*",
        "hooks": [{ "type": "command", "command": hooks.command("working") }]
    }]);
    let v = serde_json::json!({
        "env": { STATUS_ENV: status_dir.to_string_lossy() },
        "hooks": {
            // Up and at its prompt: what `create -d` waits for (or the prompt on the
            // screen, which Claude Code draws first). No state: the launch reported
            // `idle` and emptied the turn count before Claude Code ran (see
            // `Harness::launch_argv`), and this hook, run a moment after the prompt
            // is drawn, could come after a prompt already taken.
            "SessionStart": cmd("- up"),
            // A prompt taken and a turn ended are counted too (`turns`): a prompt
            // typed while a turn runs is queued, and the turn before it ends first.
            "UserPromptSubmit": cmd("working submit"),
            "PreToolUse": tools,
            "Notification": cmd("waiting"),
            "Stop": cmd("idle stop"),
            // A turn that ended in an API error: no `Stop`, and no longer working.
            "StopFailure": cmd("idle stop"),
        }
    });
    serde_json::to_string_pretty(&v).expect("a JSON value serializes") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_is_a_closed_set() {
        assert_eq!(AgentStatus::parse(b"working\n"), AgentStatus::Working);
        assert_eq!(AgentStatus::parse(b" idle extra"), AgentStatus::Idle);
        assert_eq!(AgentStatus::parse(b"waiting"), AgentStatus::Waiting);
        assert_eq!(AgentStatus::parse(b"Working"), AgentStatus::Unknown);
        assert_eq!(AgentStatus::parse(b""), AgentStatus::Unknown);
        assert_eq!(AgentStatus::parse(b"\xff\xfe"), AgentStatus::Unknown);
    }

    #[test]
    fn the_hosts_report_replaces_what_the_box_planted_and_follows_nothing() {
        let d = tempfile::tempdir().unwrap();
        let marker = d.path().join("boxes/b/session.lock");
        let status = d.path().join("boxes/b/status");
        std::fs::create_dir_all(&status).unwrap();
        let outside = d.path().join("outside");
        std::fs::write(&outside, "mine\n").unwrap();
        std::os::unix::fs::symlink(&outside, status.join("state")).unwrap();
        crate::session::detached::report_waiting(&marker);
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "mine\n");
        let m = std::fs::symlink_metadata(status.join("state")).unwrap();
        assert!(m.file_type().is_file());
        let got = read_status_file(&status.join("state")).unwrap();
        assert_eq!(got.status, AgentStatus::Waiting);
        // A status dir that is gone (a box being removed): nothing made.
        crate::session::detached::report_waiting(&d.path().join("boxes/gone/session.lock"));
        assert!(!d.path().join("boxes/gone").exists());
    }

    #[test]
    fn hostile_files_read_unknown_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("state");
        assert_eq!(read_status_file(&p), None);
        std::fs::write(&p, "idle\n").unwrap();
        assert_eq!(read_status_file(&p).unwrap().status, AgentStatus::Idle);
        std::fs::write(&p, "a".repeat(5000)).unwrap();
        assert_eq!(read_status_file(&p).unwrap().status, AgentStatus::Unknown);
        std::fs::remove_file(&p).unwrap();
        let target = d.path().join("elsewhere");
        std::fs::write(&target, "working\n").unwrap();
        std::os::unix::fs::symlink(&target, &p).unwrap();
        assert_eq!(read_status_file(&p).unwrap().status, AgentStatus::Unknown);
        std::fs::remove_file(&p).unwrap();
        let c = std::ffi::CString::new(p.to_string_lossy().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(read_status_file(&p).unwrap().status, AgentStatus::Unknown);
    }

    #[test]
    fn the_writer_writes_atomically_and_execs() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("st it's");
        std::fs::create_dir(&dir).unwrap();
        let w = d.path().join("status");
        std::fs::write(&w, writer_script(&dir)).unwrap();
        let run = |args: &[&str]| {
            std::process::Command::new("sh")
                .arg(&w)
                .args(args)
                .output()
                .unwrap()
        };
        assert!(run(&["waiting"]).status.success());
        assert_eq!(
            std::fs::read_to_string(dir.join("state")).unwrap(),
            "waiting\n"
        );
        // codex's notify adds its JSON; junk states are ignored; nothing is left behind.
        assert!(run(&["idle", r#"{"type":"agent-turn-complete"}"#])
            .status
            .success());
        assert!(run(&["rm -rf /"]).status.success());
        assert_eq!(
            std::fs::read_to_string(dir.join("state")).unwrap(),
            "idle\n"
        );
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        let out = run(&[
            "working",
            "--exec",
            "sh",
            "-c",
            "echo \"$TREEBOX_STATUS_DIR\"; exit 3",
        ]);
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{}\n", dir.display())
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("state")).unwrap(),
            "working\n"
        );
        let out = run(&["working", "--exec", "no-such-agent-cli"]);
        assert_eq!(out.status.code(), Some(127));
    }

    /// `start` empties the count, `submit` and `stop` add to it; read back as
    /// hostile data.
    #[test]
    fn the_writer_counts_prompts_and_turns() {
        let d = tempfile::tempdir().unwrap();
        let writer = d.path().join("status");
        std::fs::write(&writer, writer_script(d.path())).unwrap();
        let run = |args: &[&str]| {
            let ok = std::process::Command::new("sh")
                .arg(&writer)
                .args(args)
                .status()
                .unwrap()
                .success();
            assert!(ok, "{args:?}");
        };
        assert_eq!(read_turns_in(d.path()), None);
        run(&["idle", "start"]);
        assert_eq!(read_turns_in(d.path()), Some(Turns::default()));
        // At its prompt (`up`): the state and the count are left as they are, the
        // `up` file is there.
        run(&["working", "submit"]);
        run(&["-", "up"]);
        assert!(d.path().join(UP).is_file());
        assert_eq!(
            std::fs::read_to_string(d.path().join("state")).unwrap(),
            "working\n"
        );
        run(&["working", "submit"]);
        run(&["working"]);
        run(&["idle", "stop"]);
        assert_eq!(
            read_turns_in(d.path()),
            Some(Turns {
                prompts: 2,
                stops: 1
            })
        );
        assert_eq!(
            read_status_file(&d.path().join("state")).unwrap().status,
            AgentStatus::Idle
        );
        run(&["idle", "start"]);
        assert_eq!(read_turns_in(d.path()), Some(Turns::default()));
        // A link or an oversized file: unknown.
        std::fs::remove_file(d.path().join("turns")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", d.path().join("turns")).unwrap();
        assert_eq!(read_turns_in(d.path()), None);
        std::fs::remove_file(d.path().join("turns")).unwrap();
        std::fs::write(
            d.path().join("turns"),
            vec![b'p'; MAX_TURNS_BYTES as usize + 1],
        )
        .unwrap();
        assert_eq!(read_turns_in(d.path()), None);
    }

    #[test]
    fn claude_settings_use_the_hooks_schema() {
        let h = StatusHooks {
            writer: "/run/treebox/agent/status".into(),
            claude_settings: "/run/treebox/agent/claude-settings.json".into(),
            on_host: false,
        };
        let v: serde_json::Value =
            serde_json::from_str(&claude_settings(&h, Path::new(STATUS_DIR))).unwrap();
        assert_eq!(v["env"][STATUS_ENV], STATUS_DIR);
        for (event, state) in [
            ("SessionStart", "- up"),
            ("UserPromptSubmit", "working submit"),
            ("PreToolUse", "working"),
            ("Notification", "waiting"),
            ("Stop", "idle stop"),
            ("StopFailure", "idle stop"),
        ] {
            let hook = &v["hooks"][event][0]["hooks"][0];
            assert_eq!(hook["type"], "command");
            assert_eq!(
                hook["command"],
                format!("sh /run/treebox/agent/status {state}")
            );
        }
        assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "*");
    }
}
