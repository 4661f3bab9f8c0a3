//! The engine: `docker` or `podman`, driven as a subprocess through one
//! implementation. The two differ only in the program name and in how `info` reports a
//! version, so the program name is data.
//!
//! Every method here builds a [`Cmd`] (pure, unit-tested on its argv) or runs one and
//! parses what the engine prints. Nothing here knows about boxes or records; the rest
//! of `runner::oci` (and `provision`, `teardown`, the CLI's `ls`/`park`) call it.

use std::path::{Path, PathBuf};

use super::error::ContainerError;
use super::inspect::{parse_inspect, ContainerState};
use super::mounts::Mount;
use crate::cmd::{Cmd, CmdError};
use crate::state::Limits;
use crate::vocab::{Isolation, RunnerKind};

/// `docker` or `podman`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Docker,
    Podman,
}

/// What `info` says of an engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineInfo {
    pub version: String,
    /// Its containers' root is the user who runs it.
    pub rootless: bool,
    /// It applies a container's process and memory limits (SPEC §7 "Limits"). A
    /// rootless engine ignores them where the kernel does not let it have cgroups of
    /// its own (cgroup v1; v2 without systemd's delegation), and says so only on the
    /// stderr of each `create`.
    pub limits: bool,
}

impl Engine {
    /// The engines `auto` tries, in order (SPEC §3: podman, then docker).
    pub const AUTO_ORDER: [Engine; 2] = [Engine::Podman, Engine::Docker];

    /// The engine a recorded engine name (`docker`/`podman`) names.
    pub fn parse(name: &str) -> Option<Engine> {
        name.parse().ok().and_then(Engine::of)
    }

    /// The engine of a container runner; `None` for the host.
    pub fn of(kind: RunnerKind) -> Option<Engine> {
        match kind {
            RunnerKind::Docker => Some(Engine::Docker),
            RunnerKind::Podman => Some(Engine::Podman),
            RunnerKind::Host => None,
        }
    }

    /// The runner this engine is.
    pub fn kind(self) -> RunnerKind {
        match self {
            Engine::Docker => RunnerKind::Docker,
            Engine::Podman => RunnerKind::Podman,
        }
    }

    pub fn program(self) -> &'static str {
        match self {
            Engine::Docker => "docker",
            Engine::Podman => "podman",
        }
    }

    /// Is the engine's program on PATH? (No process is started.)
    pub fn installed(self) -> bool {
        std::env::var_os("PATH").is_some_and(|path| {
            std::env::split_paths(&path).any(|d| {
                std::fs::metadata(d.join(self.program())).is_ok_and(|m| {
                    m.is_file()
                        && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0
                })
            })
        })
    }

    pub(super) fn cmd(self) -> Cmd {
        Cmd::new(self.program())
    }

    /// `<engine> info`, asking only for the server version (podman's `info` has no
    /// `ServerVersion`; its version is under `Version`) and what [`EngineInfo`] holds.
    pub fn info_cmd(self) -> Cmd {
        // The version, then what tells a rootless engine and one that applies limits:
        // docker's memory and pids limit support and its security options
        // (`name=rootless`); podman's `Host.Security.Rootless`, cgroup version, cgroup
        // manager and the controllers it may use. See [`Engine::read_info`].
        let format = match self {
            Engine::Docker => {
                "{{.ServerVersion}} memory={{.MemoryLimit}} pids={{.PidsLimit}} {{range .SecurityOptions}}{{.}} {{end}}"
            }
            Engine::Podman => {
                "{{.Version.Version}} {{.Host.Security.Rootless}} cgroups={{.Host.CgroupsVersion}} manager={{.Host.CgroupManager}} controllers={{range .Host.CgroupControllers}}{{.}},{{end}}"
            }
        };
        self.cmd().args(["info", "--format", format])
    }

    /// What [`Engine::info_cmd`] printed: `None` when it printed no version. A word it
    /// did not print (an older engine's `info`) counts as limits applied, as before.
    pub fn read_info(self, out: &str) -> Option<EngineInfo> {
        let mut words = out.split_whitespace();
        let version = words.next()?.to_string();
        let words: Vec<&str> = words.collect();
        let value = |key: &str| {
            words
                .iter()
                .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        };
        let (rootless, limits) = match self {
            Engine::Docker => (
                words.iter().any(|w| w.contains("name=rootless")),
                value("memory") != Some("false") && value("pids") != Some("false"),
            ),
            Engine::Podman => {
                let rootless = words.first() == Some(&"true");
                // Rootless podman has cgroups of its own only on cgroup v2 through
                // systemd, and then only the controllers delegated to the user.
                let delegated = value("controllers").is_none_or(|c| {
                    let c: Vec<&str> = c.split(',').collect();
                    c.contains(&"memory") && c.contains(&"pids")
                });
                let limits = !rootless
                    || (value("cgroups").is_none_or(|v| v == "v2")
                        && value("manager").is_none_or(|m| m == "systemd")
                        && delegated);
                (rootless, limits)
            }
        };
        Some(EngineInfo {
            version,
            rootless,
            limits,
        })
    }

    /// The engine's server version from [`Engine::info_cmd`]; `None` when it does not
    /// answer.
    pub fn version(self) -> Option<String> {
        self.info().map(|i| i.version)
    }

    fn info(self) -> Option<EngineInfo> {
        let out = self.info_cmd().output().ok()?;
        self.read_info(&String::from_utf8_lossy(&out.stdout))
    }

    /// Does the engine run without root (its containers' root is the user)? podman run
    /// by a user other than root always does; docker says so in `info`.
    pub fn rootless(self) -> bool {
        match self {
            // SAFETY: getuid cannot fail and touches no memory.
            Engine::Podman => (unsafe { libc::getuid() }) != 0,
            Engine::Docker => self.info().is_some_and(|i| i.rootless),
        }
    }

    pub fn image_exists(self, tag: &str) -> bool {
        self.cmd()
            .args(["image", "inspect", "--format", "{{.Id}}", tag])
            .output()
            .is_ok()
    }

    /// `build -t TAG --build-arg K=V … CONTEXT`.
    pub fn build(self, tag: &str, context: &Path, build_args: &[(String, String)]) -> Cmd {
        self.build_file(tag, context, None, build_args)
    }

    /// [`build`](Self::build) from `dockerfile` (`-f`) when given, else the context's
    /// own `Dockerfile`.
    pub fn build_file(
        self,
        tag: &str,
        context: &Path,
        dockerfile: Option<&Path>,
        build_args: &[(String, String)],
    ) -> Cmd {
        // `--force-rm`: a step that fails leaves no intermediate container behind (the
        // classic builder keeps it by default; BuildKit and podman take the flag too).
        let mut c = self
            .cmd()
            .args(["build", "--quiet", "--force-rm", "-t", tag]);
        if let Some(f) = dockerfile {
            c = c.arg("-f").arg(f.as_os_str());
        }
        for (k, v) in build_args {
            c = c.arg("--build-arg").arg(format!("{k}={v}"));
        }
        c.arg(context.as_os_str())
    }

    /// `run -d --init …` of the idle anchor process that keeps a box's container up:
    /// made and started in one engine call (as a person would). Its name is recorded
    /// before, so that no container of treebox's runs unrecorded. Never pulled: the
    /// image is treebox's own, built here. No `--env-file`: the engine would keep every
    /// value in the container's config (`inspect`); the launcher reads the mounted file
    /// instead.
    pub fn create(self, spec: &RunSpec) -> Cmd {
        let mut c = self
            .cmd()
            .args([
                "run", "-d", "--pull", "never", "--init", "--name", &spec.name,
            ])
            .arg("--hostname")
            .arg(&spec.hostname);
        for (k, v) in &spec.labels {
            c = c.arg("--label").arg(format!("{k}={v}"));
        }
        for cap in &spec.cap_add {
            c = c.arg("--cap-add").arg(cap);
        }
        c = c.args(["--security-opt", "no-new-privileges"]);
        // The host by name (podman has `host.containers.internal` of its own): what a
        // provider URL naming this machine becomes in a box (`host_url`).
        if self == Engine::Docker {
            c = c.args(["--add-host", "host.docker.internal:host-gateway"]);
        }
        if let Some(net) = &spec.network {
            c = c.arg("--network").arg(net);
        }
        if let Some(l) = &spec.limits {
            c = c.args(limit_flags(l));
        }
        // On the host's loopback alone: never on an address the LAN reaches.
        for (p, inside) in &spec.publish {
            c = c
                .arg("--publish")
                .arg(format!("{}:{p}:{inside}", crate::ports::HOST_BIND));
        }
        for m in &spec.mounts {
            c = c.arg("--mount").arg(m.to_arg());
        }
        c.arg("--workdir")
            .arg(spec.workdir.as_os_str())
            .arg("--user")
            .arg(&spec.user)
            .arg(&spec.image)
            .args(&spec.command)
    }

    /// Containers labelled for a box (`org.treebox.repo`, `org.treebox.box`), running
    /// or not: their ids. `None` when the engine does not answer.
    pub fn labelled(self, repo: &Path, leaf: &str) -> Option<Vec<String>> {
        self.cmd()
            .args(["ps", "-aq", "--no-trunc", "--filter"])
            .arg(format!("label=org.treebox.repo={}", repo.display()))
            .arg("--filter")
            .arg(format!("label=org.treebox.box={leaf}"))
            .stdout_string()
            .ok()
            .map(|s| s.split_whitespace().map(String::from).collect())
    }

    /// `exec -i [-t --detach-keys KEYS] -u USER -w DIR [-e K=V…] CONTAINER ARGV…`.
    ///
    /// With a terminal the engine would detach the exec on its default keys (ctrl-p
    /// ctrl-q, which an agent's user types: ctrl-p is "previous" in shells and editors),
    /// leaving the agent running in the container with no session to reach it. The
    /// keys are [`DETACH_KEYS`] instead; tmux's own prefix (then `d`) is how a user
    /// leaves a session.
    pub fn exec(
        self,
        container: &str,
        user: &str,
        workdir: &Path,
        env: &[(String, String)],
        tty: bool,
        argv: &[String],
    ) -> Cmd {
        let mut c = self.cmd().args(["exec", "-i"]);
        if tty {
            // The terminal's own kind, as the engine's client sees it (the tmux pane's,
            // or the user's terminal), not the engine's default `xterm`; `-e NAME`
            // alone passes the client's value, and nothing where it has none.
            c = c.args([
                "-t",
                "--detach-keys",
                DETACH_KEYS,
                "-e",
                "TERM",
                "-e",
                "COLORTERM",
            ]);
        }
        c = c.arg("-u").arg(user).arg("-w").arg(workdir.as_os_str());
        for (k, v) in env {
            c = c.arg("-e").arg(format!("{k}={v}"));
        }
        c.arg(container).args(argv)
    }

    /// `exec` of `argv` as root in `/`, without a terminal: treebox's own steps in a
    /// box's container (the firewall, its read-back, the agent's ownership of its
    /// mounts), never a program of the box's.
    pub fn exec_as_root(self, container: &str, argv: &[String]) -> Cmd {
        self.exec(container, "0:0", Path::new("/"), &[], false, argv)
    }

    /// `create` of a container `name` of `image` with no network that runs `/bin/sh -c
    /// script` once started: a look inside an image treebox built, never a box's
    /// program. Made apart from its start, so whoever gives up on the look finds the
    /// container to remove (a `run` client killed at its deadline leaves its container
    /// running, and may not have made it yet).
    pub fn script_container(self, name: &str, image: &str, script: &str) -> Cmd {
        self.cmd()
            .args(["create", "--name", name, "--network", "none"])
            .args(["--entrypoint", "/bin/sh", image, "-c", script])
    }

    /// `start -a`: start a container made by [`Engine::script_container`] and print
    /// what it writes until it exits.
    pub fn start_attached(self, container: &str) -> Cmd {
        self.cmd().args(["start", "-a", container])
    }

    pub fn start(self, container: &str) -> Cmd {
        self.cmd().args(["start", container])
    }

    pub fn stop(self, container: &str) -> Cmd {
        self.cmd().args(["stop", "-t", "5", container])
    }

    pub fn remove(self, container: &str) -> Cmd {
        self.cmd().args(["rm", "-f", "-v", container])
    }

    pub fn remove_image(self, tag: &str) -> Cmd {
        self.cmd().args(["image", "rm", tag])
    }

    /// How many images of repository `repo` (any tag) the engine holds; `None` when it
    /// does not answer.
    pub fn images_of(self, repo: &str) -> Option<usize> {
        self.cmd()
            .args(["images", "-q", repo])
            .stdout_string()
            .ok()
            .map(|s| s.split_whitespace().count())
    }

    /// The container's state, from `inspect` JSON; `Ok(None)` when it does not exist.
    pub fn state(self, container: &str) -> Result<Option<ContainerState>, CmdError> {
        let out = self
            .cmd()
            .args(["container", "inspect", container])
            .output_any()?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr).to_lowercase();
            if err.contains("no such") || err.contains("no container") {
                return Ok(None);
            }
            return Err(CmdError::Failed {
                line: format!("{} container inspect {container}", self.program()),
                status: out.status,
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        Ok(parse_inspect(&out.stdout))
    }

    /// Every container's name and whether it runs, in one `ps -a`; `None` when the
    /// engine does not answer.
    pub fn container_states(self) -> Option<std::collections::HashMap<String, bool>> {
        let out = self
            .cmd()
            .args(["ps", "-a", "--format", "{{.Names}} {{.State}}"])
            .stdout_string()
            .ok()?;
        Some(
            out.lines()
                .filter_map(|l| l.split_once(' '))
                // docker and newer podman print `running`; podman 4.3 (Debian
                // bookworm) prints the status, `Up 5 minutes`.
                .map(|(name, state)| {
                    let state = state.trim();
                    (
                        name.to_string(),
                        state == "running" || state.starts_with("Up "),
                    )
                })
                .collect(),
        )
    }

    /// Containers (running or not) made from `image`. Compared by name as `ps`
    /// prints it, with podman's implicit `localhost/` prefix set aside.
    pub fn users_of_image(self, image: &str) -> Vec<String> {
        let norm = |s: &str| s.trim().trim_start_matches("localhost/").to_string();
        let want = norm(image);
        self.cmd()
            .args(["ps", "-a", "--format", "{{.ID}} {{.Image}}"])
            .stdout_string()
            .map(|s| {
                s.lines()
                    .filter_map(|l| l.split_once(' '))
                    .filter(|(_, img)| norm(img) == want)
                    .map(|(id, _)| id.to_string())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The keys that detach an `exec -it` (see [`Engine::exec`]): a three-key chord of
/// control keys no shell, editor or agent binds and no one types by accident, in the
/// one syntax docker and podman both take (`ctrl-<a-z, @, ^, [, \\, ], _>`, comma
/// separated). Podman alone could switch detaching off (`""`); docker reads an empty
/// value as "the default".
pub const DETACH_KEYS: &str = "ctrl-^,ctrl-],ctrl-_";

/// `--pids-limit N --memory M --cpus C` (SPEC §7 "Limits"), docker's and podman's
/// spelling alike; a limit that is off (0) is left out.
fn limit_flags(l: &Limits) -> Vec<String> {
    let mut flags = Vec::new();
    if l.pids > 0 {
        flags.extend(["--pids-limit".to_string(), l.pids.to_string()]);
    }
    if l.memory > 0 {
        flags.extend(["--memory".to_string(), l.memory_arg()]);
    }
    if l.milli_cpus > 0 {
        flags.extend(["--cpus".to_string(), l.cpus_arg()]);
    }
    flags
}

/// Everything `run` needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSpec {
    pub name: String,
    pub hostname: String,
    pub image: String,
    pub labels: Vec<(String, String)>,
    pub mounts: Vec<Mount>,
    pub cap_add: Vec<String>,
    pub network: Option<String>,
    /// `None`: a box made before limits existed.
    pub limits: Option<Limits>,
    /// Ports published on the host's loopback (SPEC §7b): each port of the box's block,
    /// and the port inside it reaches (its own number unless the template says).
    pub publish: Vec<(u16, u16)>,
    pub workdir: PathBuf,
    pub user: String,
    /// The anchor: the container's first process, which keeps it up.
    pub command: Vec<String>,
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.program())
    }
}

/// What `auto` resolves to on a runner: the first engine of [`Engine::AUTO_ORDER`]
/// that answers `info`. The one place that makes that choice.
pub fn first_answering_engine() -> Option<Engine> {
    Engine::AUTO_ORDER
        .into_iter()
        .find(|e| e.version().is_some())
}

/// Resolve `docker`/`podman`/`auto` to an engine (`auto`: the first that answers).
pub fn resolve_engine(isolation: Isolation) -> Result<Engine, ContainerError> {
    match isolation {
        Isolation::Auto => first_answering_engine().ok_or(ContainerError::NoEngine),
        // An explicit engine is not asked whether it runs (a `docker info` costs tens
        // of milliseconds on every create): a failure later says so (`explain`).
        Isolation::Runner(kind) => Engine::of(kind).ok_or(ContainerError::NoEngine),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_argv_has_no_env_file() {
        let spec = RunSpec {
            name: "treebox-r-x".into(),
            hostname: "x".into(),
            image: "treebox-img:abc".into(),
            labels: vec![("org.treebox.box".into(), "x".into())],
            mounts: vec![
                Mount::same(Path::new("/r/.treebox/worktrees/x"), false),
                Mount::same(Path::new("/r/.git/hooks"), true),
            ],
            cap_add: vec!["NET_ADMIN".into()],
            network: None,
            limits: Some(Limits {
                pids: 4096,
                memory: 8 << 30,
                milli_cpus: 1500,
            }),
            publish: vec![(20000, 20000), (20001, 3000)],
            workdir: "/r/.treebox/worktrees/x".into(),
            user: "1000:1000".into(),
            command: vec!["sleep".into(), "infinity".into()],
        };
        let argv = Engine::Podman.create(&spec).argv();
        assert_eq!(
            argv,
            [
                "podman",
                "run",
                "-d",
                "--pull",
                "never",
                "--init",
                "--name",
                "treebox-r-x",
                "--hostname",
                "x",
                "--label",
                "org.treebox.box=x",
                "--cap-add",
                "NET_ADMIN",
                "--security-opt",
                "no-new-privileges",
                "--pids-limit",
                "4096",
                "--memory",
                "8g",
                "--cpus",
                "1.5",
                "--publish",
                "127.0.0.1:20000:20000",
                "--publish",
                "127.0.0.1:20001:3000",
                "--mount",
                "type=bind,src=/r/.treebox/worktrees/x,dst=/r/.treebox/worktrees/x",
                "--mount",
                "type=bind,src=/r/.git/hooks,dst=/r/.git/hooks,readonly",
                "--workdir",
                "/r/.treebox/worktrees/x",
                "--user",
                "1000:1000",
                "treebox-img:abc",
                "sleep",
                "infinity"
            ]
        );
        // Docker names the host as podman does by itself (`host_url`).
        let docker = Engine::Docker.create(&spec).argv();
        let at = docker.iter().position(|a| a == "--add-host").unwrap();
        assert_eq!(docker[at + 1], "host.docker.internal:host-gateway");
        assert!(!argv.iter().any(|a| a == "--add-host"));
    }

    #[test]
    fn limits_that_are_off_are_left_out() {
        let off = Limits {
            pids: 0,
            memory: 0,
            milli_cpus: 0,
        };
        assert!(limit_flags(&off).is_empty());
        let pids = Limits { pids: 64, ..off };
        assert_eq!(limit_flags(&pids), ["--pids-limit", "64"]);
    }

    #[test]
    fn info_argv() {
        assert_eq!(
            Engine::Docker.info_cmd().argv(),
            [
                "docker",
                "info",
                "--format",
                "{{.ServerVersion}} memory={{.MemoryLimit}} pids={{.PidsLimit}} {{range .SecurityOptions}}{{.}} {{end}}"
            ]
        );
        assert_eq!(
            Engine::Podman.info_cmd().argv(),
            [
                "podman",
                "info",
                "--format",
                "{{.Version.Version}} {{.Host.Security.Rootless}} cgroups={{.Host.CgroupsVersion}} manager={{.Host.CgroupManager}} controllers={{range .Host.CgroupControllers}}{{.}},{{end}}"
            ]
        );
    }

    #[test]
    fn info_tells_the_version_and_a_rootless_engine() {
        let d = Engine::Docker;
        let root = d
            .read_info("20.10.24 name=seccomp,profile=default \n")
            .unwrap();
        assert_eq!((root.version.as_str(), root.rootless), ("20.10.24", false));
        let rootless = d
            .read_info("28.2.2 name=seccomp,profile=builtin name=rootless name=cgroupns \n")
            .unwrap();
        assert_eq!(
            (rootless.version.as_str(), rootless.rootless),
            ("28.2.2", true)
        );
        let p = Engine::Podman;
        assert!(p.read_info("4.3.1 true\n").unwrap().rootless);
        assert!(!p.read_info("4.3.1 false\n").unwrap().rootless);
        assert_eq!(d.read_info("  \n"), None);
    }

    /// Captured on this project's machines (cgroup v1, cgroupfs) and from podman's
    /// documentation of a rootless user on cgroup v2 with systemd.
    #[test]
    fn info_tells_whether_limits_apply() {
        let p = Engine::Podman;
        let limits = |out: &str| p.read_info(out).unwrap().limits;
        // Root: always.
        assert!(limits(
            "4.3.1 false cgroups=v1 manager=cgroupfs controllers=cpuset,cpu,cpuacct,blkio,memory,devices,freezer,pids,\n"
        ));
        // Rootless on cgroup v1: podman ignores them ("not supported and ignored").
        assert!(!limits(
            "4.3.1 true cgroups=v1 manager=cgroupfs controllers=\n"
        ));
        // Rootless on cgroup v2 without systemd: no cgroup of its own either.
        assert!(!limits(
            "4.9.3 true cgroups=v2 manager=cgroupfs controllers=cpu,memory,pids,\n"
        ));
        // Rootless on cgroup v2 through systemd, with memory and pids delegated.
        assert!(limits(
            "5.4.2 true cgroups=v2 manager=systemd controllers=cpu,io,memory,pids,\n"
        ));
        assert!(!limits(
            "5.4.2 true cgroups=v2 manager=systemd controllers=cpu,io,\n"
        ));
        // An engine that says nothing of its cgroups: as before, limits apply.
        assert!(limits("4.3.1 true\n"));
        let d = Engine::Docker;
        let docker = |out: &str| d.read_info(out).unwrap();
        let root = docker("20.10.24 memory=true pids=true name=seccomp,profile=default \n");
        assert!(root.limits && !root.rootless);
        let rootless_v1 =
            docker("28.2.2 memory=false pids=false name=seccomp,profile=builtin name=rootless \n");
        assert!(!rootless_v1.limits && rootless_v1.rootless);
    }

    #[test]
    fn exec_argv_and_tty() {
        let c = Engine::Docker.exec("c", "0:0", Path::new("/b"), &[], false, &["true".into()]);
        assert_eq!(
            c.argv(),
            ["docker", "exec", "-i", "-u", "0:0", "-w", "/b", "c", "true"]
        );
        // With a terminal: the engine's default detach keys (ctrl-p ctrl-q) are not
        // in force, for both engines, and the client's terminal kind is passed on.
        for e in [Engine::Docker, Engine::Podman] {
            let c = e.exec("c", "0:0", Path::new("/b"), &[], true, &["sh".into()]);
            assert_eq!(
                c.argv(),
                [
                    e.program(),
                    "exec",
                    "-i",
                    "-t",
                    "--detach-keys",
                    "ctrl-^,ctrl-],ctrl-_",
                    "-e",
                    "TERM",
                    "-e",
                    "COLORTERM",
                    "-u",
                    "0:0",
                    "-w",
                    "/b",
                    "c",
                    "sh"
                ]
            );
        }
    }

    #[test]
    fn detach_keys_are_in_the_engines_syntax_and_not_ctrl_p() {
        // docker's and podman's parser: comma-separated `ctrl-X` (X in a-z @ ^ [ \ ] _)
        // or single letters.
        for key in DETACH_KEYS.split(',') {
            let c = key.strip_prefix("ctrl-").expect("a control key");
            assert_eq!(c.len(), 1, "{key}");
            assert!("@^[\\]_".contains(c) || c.chars().all(|c| c.is_ascii_lowercase()));
        }
        assert!(!DETACH_KEYS.contains("ctrl-p") && !DETACH_KEYS.contains("ctrl-q"));
        assert!(DETACH_KEYS.split(',').count() >= 2);
    }
}
