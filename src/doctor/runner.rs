//! The `runner` check: which isolation doctor looks at (the flag, else the config,
//! else `auto`, the default), whether this machine is marked as a runner, and whether the chosen
//! engine answers (`auto` tries podman, then docker); and the `limits` check: the
//! resource limits new container boxes get.

use std::time::Duration;

use super::probe::probe_engine;
use super::{Check, Status};
use crate::git::repo::Repo;
use crate::runner::oci::{Engine, EngineInfo};
use crate::vocab::{Isolation, RunnerKind};

/// The isolation doctor looks at: the flag, else the config, else `auto` (the default
/// a new box gets, SPEC §3).
pub fn chosen_isolation<'a>(flag: Option<&'a str>, config: Option<&'a str>) -> &'a str {
    flag.or(config).unwrap_or(Isolation::AUTO)
}

/// What checking a runner means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunnerProbe {
    /// Nothing to probe. `auto`: it resolved to host because the machine is unmarked.
    Host { auto: bool },
    /// Ask this engine; `auto`: the first that answers wins.
    Engines { engines: Vec<Engine>, auto: bool },
    /// Not a runner treebox knows.
    Unknown,
}

/// The probe for an isolation name (SPEC §3: `auto` tries podman, then docker).
pub fn runner_probe(isolation: &str, marked: bool) -> RunnerProbe {
    match isolation.parse::<Isolation>() {
        Ok(Isolation::Runner(RunnerKind::Host)) => RunnerProbe::Host { auto: false },
        Ok(Isolation::Runner(kind)) => RunnerProbe::Engines {
            engines: Engine::of(kind).into_iter().collect(),
            auto: false,
        },
        Ok(Isolation::Auto) if marked => RunnerProbe::Engines {
            engines: Engine::AUTO_ORDER.to_vec(),
            auto: true,
        },
        Ok(Isolation::Auto) => RunnerProbe::Host { auto: true },
        Err(_) => RunnerProbe::Unknown,
    }
}

/// `mark`: what marks this machine as a runner (`UserConfig::runner_mark`), if anything.
/// With the check, the engine that answered and what it said of itself (for
/// [`check_limits`]).
pub(super) fn check_runner(
    isolation: &str,
    mark: Option<&str>,
    limit: Duration,
) -> (Check, Option<(Engine, EngineInfo)>) {
    let mut answered = None;
    let check = runner_check(isolation, mark, limit, &mut answered);
    let check = match &answered {
        Some((engine, info)) if check.status == Status::Ok => {
            rootless_network(check, *engine, info)
        }
        _ => check,
    };
    (check, answered)
}

/// The device a rootless podman's network (slirp4netns, pasta) opens.
const TUN: &str = "/dev/net/tun";

/// `ok`, unless `engine` is a rootless podman that cannot have a network: its
/// containers (and the RUN steps of an image build) get theirs from slirp4netns or
/// pasta, which open [`TUN`] as the user; where the device is root's alone, every box
/// fails to build with "failed to read from slirp4netns sync pipe".
fn rootless_network(ok: Check, engine: Engine, info: &EngineInfo) -> Check {
    if engine != Engine::Podman || !info.rootless {
        return ok;
    }
    match std::fs::OpenOptions::new().read(true).write(true).open(TUN) {
        Ok(_) => ok,
        Err(e) => Check::new(
            "runner",
            Status::Fail,
            format!(
                "{}; but {TUN} is not open to you ({e}): rootless podman's network (slirp4netns, pasta) needs it, so no box can build or start",
                ok.summary
            ),
        )
        .hint(format!(
            "Ask root to give it its usual mode, `chmod 0666 {TUN}` (a udev rule keeps it across boots), or use `--isolation docker`."
        )),
    }
}

fn runner_check(
    isolation: &str,
    mark: Option<&str>,
    limit: Duration,
    answered: &mut Option<(Engine, EngineInfo)>,
) -> Check {
    match runner_probe(isolation, mark.is_some()) {
        RunnerProbe::Host { auto: false } => {
            Check::new("runner", Status::Ok, "host: agents run as you")
        }
        RunnerProbe::Host { auto: true } => Check::new(
            "runner",
            Status::Ok,
            "auto → host: this machine is not marked as a runner, so new boxes run on the host \
             (TREEBOX_RUNNER=1 or config `\"runner\": true` sandboxes them)",
        ),
        RunnerProbe::Unknown => Check::new(
            "runner",
            Status::Fail,
            format!("unknown isolation `{isolation}`"),
        )
        .hint("Use one of host, docker, podman, auto: `git treebox doctor --isolation host`."),
        RunnerProbe::Engines { engines, auto } => {
            let mut why = Vec::new();
            for &engine in &engines {
                let probed = probe_engine(engine, limit);
                if let Ok(info) = &probed {
                    *answered = Some((engine, info.clone()));
                }
                match probed {
                    Ok(info) if auto => {
                        return Check::new(
                            "runner",
                            Status::Ok,
                            format!(
                                "auto → {engine} {}: this machine is marked as a runner ({}), \
                                 so new boxes are sandboxed in the first of podman, docker that \
                                 answers",
                                info.version,
                                mark.unwrap_or("marked")
                            ),
                        )
                    }
                    Ok(info) => {
                        return Check::new(
                            "runner",
                            Status::Ok,
                            format!("{engine} {}; {}", info.version, agent_identity(&info)),
                        )
                    }
                    Err(e) => why.push(e),
                }
            }
            if auto {
                Check::new(
                    "runner",
                    Status::Fail,
                    format!("auto: neither podman nor docker answers ({})", why.join("; ")),
                )
                .hint("Start an engine (`docker info` says why it does not answer), or use `--isolation host`.")
            } else {
                let engine = engines.first().map_or("engine", |e| e.program());
                Check::new(
                    "runner",
                    Status::Fail,
                    format!("{engine}: {}", why.join("; ")),
                )
                .hint(format!(
                    "`{engine} info` says why; or use `--isolation host`."
                ))
            }
        }
    }
}

/// Who the agent is in a container of `engine` on this machine, and what that means for
/// the files it writes (SPEC §7: never root, never the user's uid).
fn agent_identity(info: &EngineInfo) -> String {
    // SAFETY: getuid/getgid cannot fail and touch no memory.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let (a_uid, a_gid) = crate::runner::oci::launch::agent_ids(uid, gid);
    if info.rootless {
        format!(
            "rootless: a container's root is you, and the agent runs as uid {a_uid} inside (a uid of your subordinate range here) with no capabilities; teardown gives its files back to you"
        )
    } else {
        format!(
            "the agent runs as uid {a_uid}, group {a_gid}, with no capabilities; its files here belong to uid {a_uid} (your own git refuses them; `git sandbox fetch` brings the work back)"
        )
    }
}

/// The `limits` check: the resource limits each new container box gets (SPEC §7), and
/// an advisory when the config switches off the ones that keep the machine answering,
/// when the runner's engine (`engine`, as the `runner` check found it) ignores them, or
/// when a container box of `repo` was made before limits existed (it has none).
pub(super) fn check_limits(
    cfg: &crate::config::UserConfig,
    repo: Option<&Repo>,
    engine: Option<&(Engine, EngineInfo)>,
) -> Check {
    let limits = cfg.limits();
    let summary = format!("each new container box gets at most {limits} (config `limits`)");
    let unlimited = repo.map(unlimited_boxes).unwrap_or_default();
    if let Some((engine, _)) = engine.filter(|(_, info)| !info.limits) {
        Check::new(
            "limits",
            Status::Advisory,
            format!(
                "config `limits`: {limits}; but {engine} here runs without root and cannot apply them (it has no cgroups of its own): container boxes run with no process, memory or CPU limit, and a fork bomb or a runaway build in one can take this machine down"
            ),
        )
        .hint(match engine {
            Engine::Podman => "Rootless podman applies them on cgroup v2 with `cgroup_manager = \"systemd\"` (containers.conf) and the memory, pids and cpu controllers delegated to your user (systemd's `Delegate=`); or use a rootful engine (`--isolation docker`).",
            Engine::Docker => "Rootless docker applies them on cgroup v2 with the memory, pids and cpu controllers delegated to your user (systemd's `Delegate=`); or use a rootful engine.",
        })
    } else if let Some(first) = unlimited.first() {
        let q = crate::cmd::quote(first);
        Check::new(
            "limits",
            Status::Advisory,
            format!(
                "{summary}; made before limits existed, these run without any: {}",
                unlimited.join(", ")
            ),
        )
        .hint(format!(
            "Its branch is in your repository: commit in the box, then `git treebox teardown {q}` and `git treebox create --checkout {q}`."
        ))
    } else if limits.pids == 0 || limits.memory == 0 {
        Check::new(
            "limits",
            Status::Advisory,
            format!(
                "{summary}: a fork bomb or a runaway build in one box can take this machine down"
            ),
        )
        .hint(format!(
            "Set them in {}: `\"limits\": {{\"pids\": {}, \"memory\": \"8g\"}}`.",
            cfg.file
                .as_ref()
                .map_or("your config".into(), |f| f.display().to_string()),
            crate::config::DEFAULT_PIDS
        ))
    } else {
        Check::new("limits", Status::Ok, summary)
    }
}

/// The container boxes of `repo` whose record holds no limits (read as `list` reads
/// records: files only).
fn unlimited_boxes(repo: &Repo) -> Vec<String> {
    let Ok(layout) = crate::state::Layout::new(&repo.main_root, &repo.common_dir) else {
        return Vec::new();
    };
    crate::boxes::inventory(repo, &layout)
        .iter()
        .filter(|e| {
            // A container made before the launcher is named by the `boxes` check,
            // with the same way out (recreate it): not twice.
            e.record.as_ref().is_some_and(|r| {
                r.container.as_ref().is_some_and(|c| c.launcher) && r.limits.is_none()
            })
        })
        .map(|e| e.leaf.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolation_precedence() {
        assert_eq!(chosen_isolation(Some("docker"), Some("podman")), "docker");
        assert_eq!(chosen_isolation(None, Some("podman")), "podman");
        assert_eq!(chosen_isolation(None, None), "auto");
    }

    #[test]
    fn runner_probes() {
        assert_eq!(
            runner_probe("host", true),
            RunnerProbe::Host { auto: false }
        );
        assert_eq!(
            runner_probe("auto", false),
            RunnerProbe::Host { auto: true }
        );
        assert_eq!(
            runner_probe("auto", true),
            RunnerProbe::Engines {
                engines: vec![Engine::Podman, Engine::Docker],
                auto: true
            }
        );
        assert_eq!(
            runner_probe("docker", false),
            RunnerProbe::Engines {
                engines: vec![Engine::Docker],
                auto: false
            }
        );
        assert_eq!(
            runner_probe("podman", false),
            RunnerProbe::Engines {
                engines: vec![Engine::Podman],
                auto: false
            }
        );
        assert_eq!(runner_probe("vm", true), RunnerProbe::Unknown);
    }

    #[test]
    fn missing_engine_fails_with_hint() {
        let (c, _) = check_runner("auto", Some("TREEBOX_RUNNER=1"), Duration::from_secs(5));
        // Either an engine answers on this machine, or the check fails with a hint.
        match c.status {
            Status::Ok => assert!(c.summary.starts_with("auto → "), "{c:?}"),
            _ => {
                assert_eq!(c.status, Status::Fail);
                assert!(c.hint.is_some());
            }
        }
        let (host, engine) = check_runner("host", None, Duration::from_secs(1));
        assert_eq!(engine, None);
        assert_eq!(host.status, Status::Ok);
    }
}
