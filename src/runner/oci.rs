//! The container runner: Docker and Podman through one implementation.
//!
//! The engine is driven as a subprocess; the two differ only in the program name and
//! in how `info` reports a version, so the program name is data. Every function here
//! builds a [`Cmd`] (pure, unit-tested on its argv) or runs one and parses the JSON the
//! engine prints.

use std::path::{Path, PathBuf};

use super::Runner;
use crate::cmd::{Cmd, CmdError};

/// `docker` or `podman`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Docker,
    Podman,
}

impl Engine {
    pub fn parse(name: &str) -> Option<Engine> {
        match name {
            "docker" => Some(Engine::Docker),
            "podman" => Some(Engine::Podman),
            _ => None,
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

    fn cmd(self) -> Cmd {
        Cmd::new(self.program())
    }

    /// `<engine> info`, asking only for the server version; `None` when it does not
    /// answer.
    pub fn version(self) -> Option<String> {
        let format = match self {
            Engine::Docker => "{{.ServerVersion}}",
            Engine::Podman => "{{.Version.Version}}",
        };
        let out = self
            .cmd()
            .args(["info", "--format", format])
            .output()
            .ok()?;
        let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (!v.is_empty()).then_some(v)
    }

    pub fn image_exists(self, tag: &str) -> bool {
        self.cmd()
            .args(["image", "inspect", "--format", "{{.Id}}", tag])
            .output()
            .is_ok()
    }

    /// `build -t TAG --build-arg K=V … CONTEXT`.
    pub fn build(self, tag: &str, context: &Path, build_args: &[(String, String)]) -> Cmd {
        let mut c = self.cmd().args(["build", "--quiet", "-t", tag]);
        for (k, v) in build_args {
            c = c.arg("--build-arg").arg(format!("{k}={v}"));
        }
        c.arg(context.as_os_str())
    }

    /// `run -d --init …` of the idle anchor process that keeps a box's container up.
    pub fn run(self, spec: &RunSpec) -> Cmd {
        let mut c = self
            .cmd()
            .args(["run", "-d", "--init", "--name", &spec.name, "--hostname"])
            .arg(&spec.hostname);
        for (k, v) in &spec.labels {
            c = c.arg("--label").arg(format!("{k}={v}"));
        }
        c = c.arg("--env-file").arg(spec.env_file.as_os_str());
        for cap in &spec.cap_add {
            c = c.arg("--cap-add").arg(cap);
        }
        c = c.args(["--security-opt", "no-new-privileges"]);
        if let Some(net) = &spec.network {
            c = c.arg("--network").arg(net);
        }
        for m in &spec.mounts {
            c = c.arg("--mount").arg(m.to_arg());
        }
        c.arg("--workdir")
            .arg(spec.workdir.as_os_str())
            .arg("--user")
            .arg(&spec.user)
            .arg(&spec.image)
            .args(["sleep", "infinity"])
    }

    /// `exec -i [-t] -u USER -w DIR [-e K=V…] CONTAINER ARGV…`.
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
            c = c.arg("-t");
        }
        c = c.arg("-u").arg(user).arg("-w").arg(workdir.as_os_str());
        for (k, v) in env {
            c = c.arg("-e").arg(format!("{k}={v}"));
        }
        c.arg(container).args(argv)
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
                .map(|(name, state)| (name.to_string(), state.trim() == "running"))
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

/// A bind mount. Paths are the same inside and out unless `dst` says otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub src: PathBuf,
    pub dst: PathBuf,
    pub readonly: bool,
}

impl Mount {
    pub fn same(path: &Path, readonly: bool) -> Mount {
        Mount {
            src: path.to_path_buf(),
            dst: path.to_path_buf(),
            readonly,
        }
    }

    fn to_arg(&self) -> String {
        let mut s = format!(
            "type=bind,src={},dst={}",
            self.src.display(),
            self.dst.display()
        );
        if self.readonly {
            s.push_str(",readonly");
        }
        s
    }
}

/// Can `--mount` express this path? (It is a comma-separated list of key=value.)
pub fn mountable(p: &Path) -> bool {
    let s = p.to_string_lossy();
    p.is_absolute() && !s.contains([',', '\n', '\r', '"']) && !s.chars().any(char::is_control)
}

/// Everything `run` needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSpec {
    pub name: String,
    pub hostname: String,
    pub image: String,
    pub labels: Vec<(String, String)>,
    pub env_file: PathBuf,
    pub mounts: Vec<Mount>,
    pub cap_add: Vec<String>,
    pub network: Option<String>,
    pub workdir: PathBuf,
    pub user: String,
}

/// What `inspect` says about a container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerState {
    pub running: bool,
    pub image: String,
    pub id: String,
    /// The container's first process as the host sees it (0 when not running).
    pub pid: u32,
}

/// Parse `container inspect` JSON (an array with one object), as docker and podman
/// print it.
pub fn parse_inspect(json: &[u8]) -> Option<ContainerState> {
    let v: serde_json::Value = serde_json::from_slice(json).ok()?;
    let o = v.as_array()?.first()?;
    Some(ContainerState {
        id: o["Id"].as_str().unwrap_or("").to_string(),
        pid: o["State"]["Pid"]
            .as_u64()
            .and_then(|p| u32::try_from(p).ok())
            .unwrap_or(0),
        running: o["State"]["Running"].as_bool().unwrap_or(false),
        image: o["Config"]["Image"]
            .as_str()
            .or(o["ImageName"].as_str())
            .unwrap_or("")
            .to_string(),
    })
}

/// Is the container with id `id` running, as far as this host's `/proc` can tell?
/// Its first process `pid` must still exist *and* belong to that container's cgroup
/// (so a reused pid never passes). `false` means "ask the engine", not "stopped".
pub fn running_by_proc(id: &str, pid: u32) -> bool {
    if pid == 0 || id.len() < 12 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/cgroup")) {
        Ok(text) => text.contains(id),
        Err(_) => false,
    }
}

/// A box's container, as the runner sees it.
pub struct Oci {
    pub engine: Engine,
    pub container: String,
    pub user: String,
    /// Give the exec a terminal (only when this process has one).
    pub tty: bool,
    /// Drop NET_ADMIN/NET_RAW from the agent's processes: with the firewall on, the
    /// container holds them (to apply it as root), and an agent running as root would
    /// otherwise hold them too and could lift the firewall.
    pub drop_net_caps: bool,
}

impl Runner for Oci {
    fn exec(&self, box_path: &Path, leaf: &str, argv: &[String]) -> Cmd {
        let mut full: Vec<String> = Vec::new();
        if self.drop_net_caps {
            full.extend(
                ["setpriv", "--bounding-set", "-net_admin,-net_raw", "--"].map(String::from),
            );
        }
        full.extend(argv.iter().cloned());
        self.engine.exec(
            &self.container,
            &self.user,
            box_path,
            &[
                ("TREEBOX_BOX".into(), leaf.into()),
                ("GIT_CEILING_DIRECTORIES".into(), super::ceiling(box_path)),
            ],
            self.tty,
            &full,
        )
    }

    fn shell(&self, box_path: &Path, leaf: &str) -> Cmd {
        self.exec(
            box_path,
            leaf,
            &[
                "/bin/sh".into(),
                "-c".into(),
                "exec \"${SHELL:-/bin/bash}\" -l".into(),
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_argv() {
        let spec = RunSpec {
            name: "treebox-r-x".into(),
            hostname: "x".into(),
            image: "treebox-img:abc".into(),
            labels: vec![("org.treebox.box".into(), "x".into())],
            env_file: "/s/env".into(),
            mounts: vec![
                Mount::same(Path::new("/r/.treebox/worktrees/x"), false),
                Mount::same(Path::new("/r/.git/hooks"), true),
            ],
            cap_add: vec!["NET_ADMIN".into()],
            network: None,
            workdir: "/r/.treebox/worktrees/x".into(),
            user: "1000:1000".into(),
        };
        let argv = Engine::Podman.run(&spec).argv();
        assert_eq!(
            argv,
            [
                "podman",
                "run",
                "-d",
                "--init",
                "--name",
                "treebox-r-x",
                "--hostname",
                "x",
                "--label",
                "org.treebox.box=x",
                "--env-file",
                "/s/env",
                "--cap-add",
                "NET_ADMIN",
                "--security-opt",
                "no-new-privileges",
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
    }

    #[test]
    fn exec_argv_and_tty() {
        let c = Engine::Docker.exec("c", "0:0", Path::new("/b"), &[], false, &["true".into()]);
        assert_eq!(
            c.argv(),
            ["docker", "exec", "-i", "-u", "0:0", "-w", "/b", "c", "true"]
        );
        let c = Engine::Docker.exec("c", "0:0", Path::new("/b"), &[], true, &["sh".into()]);
        assert!(c.argv().contains(&"-t".to_string()));
    }

    #[test]
    fn inspect_samples() {
        let docker = br#"[{"Id":"1","State":{"Status":"exited","Running":false},"Config":{"Image":"treebox-img:1"}}]"#;
        assert_eq!(
            parse_inspect(docker),
            Some(ContainerState {
                running: false,
                image: "treebox-img:1".into(),
                id: "1".into(),
                pid: 0,
            })
        );
        let podman = br#"[{"Id":"1","State":{"Running":true,"Pid":42},"ImageName":"localhost/treebox-img:1","Config":{}}]"#;
        let p = parse_inspect(podman).unwrap();
        assert!(p.running);
        assert_eq!(p.pid, 42);
        assert_eq!(parse_inspect(b"[]"), None);
        assert_eq!(parse_inspect(b"garbage"), None);
    }

    #[test]
    fn mount_paths() {
        assert!(mountable(Path::new("/home/u/repo")));
        assert!(!mountable(Path::new("/home/u/a,b")));
        assert!(!mountable(Path::new("relative")));
        assert!(!mountable(Path::new("/x\ny")));
    }
}
