//! Agents in boxes on another machine (issue 41's done-means), over real OpenSSH: a
//! docker box there, made by that machine's treebox from its operator's own template,
//! its agent started detached in that machine's tmux, commands run in its container
//! from here.
//!
//! The machine is [`Sshd`]'s account; what it needs is set up as its user would:
//! its treebox config and templates, the engine's group.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{json, Value};

use super::{machines_config, run_ok, Sshd};
use crate::container::Boxed;
use crate::env::{named, write_exec};

/// The machine account's treebox config (`config`), owned by the account.
fn config_there(sshd: &Sshd, config: &Value) {
    let cfg = sshd.home.join(".config/treebox");
    std::fs::create_dir_all(&cfg).unwrap();
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
