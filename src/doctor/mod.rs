//! `doctor`: checks of the machine and the repository, as data.
//!
//! [`run_checks`] looks at what treebox depends on — the git CLI, the repository, the
//! user running it, tmux (the session host), each harness CLI and its login dir, the canonical `.env`, access to
//! `origin`, the engine of the chosen runner and the limits of container boxes, and the repository's broken boxes — and
//! returns one [`Check`] per item, in a fixed order with stable names. It never prints and never picks an exit code:
//! `cli/doctor.rs` does both (a [`Status::Fail`] is exit 1, advisories are not).
//!
//! Invariants: nothing is written; every git subprocess is built by
//! [`GitCli`](crate::git::GitCli) (the repository's exec-shaped config stays inert, and
//! talking to `origin` never prompts); every probe that can hang (`ls-remote`, an
//! engine's `info`) is given up after [`PROBE_TIMEOUT`] and its process group killed.
//!
//! # Rooms
//!
//! - this file: [`Check`], [`Status`] and [`run_checks`], which orders the checks;
//! - `probe`: running a probe within [`PROBE_TIMEOUT`] ([`output_within`]) and asking
//!   an engine for its version;
//! - one file per subject: `system` (git, repository, uid, sessions), `harness` (harness CLIs
//!   and their login dirs), `env` (the canonical `.env`), `origin` (`git ls-remote`),
//!   `runner` (the chosen isolation and its engine), `boxes` (broken boxes), `logins`
//!   (each container box's login route, copies of one OAuth login), `versions` (the
//!   agent CLI here against the one in each container box's image), `hooks`
//!   (pre-commit configured but not installed), `machines` (each machine of the
//!   config, over SSH: one `machines` check per machine, after the others).

mod boxes;
mod devcontainer;
mod env;
mod harness;
mod hooks;
mod logins;
mod machines;
mod origin;
mod placement;
mod ports;
mod probe;
mod runner;
mod system;
mod versions;

use std::path::Path;

use crate::config::UserConfig;
use crate::git::repo::Repo;
use crate::harness::Harness;

pub use crate::config::is_marked_runner;
pub use harness::login_dir;
pub use probe::{output_within, PROBE_TIMEOUT};
pub use runner::{chosen_isolation, runner_probe, RunnerProbe};
pub use system::{parse_git_version, MIN_GIT};

use boxes::check_boxes;
use env::check_env;
use harness::check_harness;
use hooks::check_hooks;
use logins::check_logins;
use origin::check_origin;
use runner::{check_limits, check_runner};
use system::{check_git, check_repo, check_sessions, check_uid};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Works.
    Ok,
    /// Worth knowing; treebox still works (perhaps with less).
    Advisory,
    /// treebox cannot work until this is fixed.
    Fail,
}

impl Status {
    /// The JSON spelling: `ok`, `advisory`, `fail`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Advisory => "advisory",
            Status::Fail => "fail",
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// A stable id: `git`, `repo`, `uid`, `sessions`, `harness.claude`, `harness.codex`, `env`,
    /// `origin`, `runner`, `limits`, `boxes`, `logins`, `versions`, `hooks`, then
    /// `machines` once per machine of the config.
    pub name: &'static str,
    pub status: Status,
    /// One line saying what was found (not yet sanitised for a terminal).
    pub summary: String,
    /// What to do about it: a runnable command, when there is one.
    pub hint: Option<String>,
}

impl Check {
    fn new(name: &'static str, status: Status, summary: impl Into<String>) -> Check {
        Check {
            name,
            status,
            summary: summary.into(),
            hint: None,
        }
    }

    fn hint(mut self, h: impl Into<String>) -> Check {
        self.hint = Some(h.into());
        self
    }
}

/// Run every check, in the order of their names above. `isolation_flag` is the
/// `--isolation` value, which wins over the config's `isolation`.
pub fn run_checks(cwd: &Path, cfg: &UserConfig, isolation_flag: Option<&str>) -> Vec<Check> {
    let repo = Repo::discover(cwd);
    let isolation = chosen_isolation(isolation_flag, cfg.isolation.as_deref()).to_string();
    let mark = cfg.runner_mark();
    // The two slow probes (network, engine) run side by side; libgit2 handles stay on
    // this thread, so the origin probe gets plain paths.
    let remote = repo.as_ref().ok().map(|r| {
        (
            r.has_remote("origin"),
            r.common_dir.clone(),
            r.main_root.clone(),
        )
    });
    let relative = repo
        .as_ref()
        .ok()
        .and_then(crate::runner::oci::forge::relative_origin);
    let (origin, runner, machines) = std::thread::scope(|s| {
        let machines = s.spawn(|| machines::check_machines(&cfg.machines));
        let origin = s.spawn(|| match &remote {
            Some((has, common, root)) => check_origin(*has, common, root, PROBE_TIMEOUT),
            None => not_checked("origin"),
        });
        let runner = s.spawn(|| check_runner(&isolation, mark, PROBE_TIMEOUT));
        (
            origin.join().unwrap_or_else(|_| {
                Check::new("origin", Status::Advisory, "the origin check crashed")
            }),
            runner.join().unwrap_or_else(|_| {
                let crashed = Check::new("runner", Status::Fail, "the runner check crashed");
                (crashed, None)
            }),
            machines.join().unwrap_or_else(|_| {
                vec![Check::new(
                    "machines",
                    Status::Advisory,
                    "the machines check crashed",
                )]
            }),
        )
    });
    let mut checks = vec![
        check_git(cwd),
        check_repo(cwd, &repo),
        check_uid(),
        check_sessions(),
    ];
    let default = cfg.harness.unwrap_or_default();
    for h in Harness::ALL {
        checks.push(check_harness(h, h == default, cfg, cwd));
    }
    checks.push(match &repo {
        Ok(r) => check_env(r, cfg.env_file.as_deref()),
        Err(_) => not_checked("env"),
    });
    checks.push(origin::relative_url(origin, relative));
    let (runner, engine) = runner;
    checks.push(runner);
    checks.push(check_limits(cfg, repo.as_ref().ok(), engine.as_ref()));
    checks.push(match &repo {
        Ok(r) => check_boxes(r),
        Err(_) => not_checked("boxes"),
    });
    checks.push(match &repo {
        Ok(r) => ports::check_ports(r, cfg),
        Err(_) => not_checked("ports"),
    });
    checks.push(match &repo {
        Ok(r) => devcontainer::check_devcontainer(r),
        Err(_) => not_checked("devcontainer"),
    });
    checks.push(match &repo {
        Ok(r) => {
            let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
            check_logins(r, home.as_deref())
        }
        Err(_) => not_checked("logins"),
    });
    checks.push(match &repo {
        Ok(r) => versions::check_versions(r, cfg, PROBE_TIMEOUT),
        Err(_) => not_checked("versions"),
    });
    checks.push(match &repo {
        Ok(r) => check_hooks(r),
        Err(_) => not_checked("hooks"),
    });
    checks.extend(machines);
    checks
}

fn not_checked(name: &'static str) -> Check {
    Check::new(name, Status::Advisory, "not checked: no repository")
}
