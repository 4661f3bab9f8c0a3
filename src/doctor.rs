//! `doctor`: checks of the machine and the repository, as data.
//!
//! [`run_checks`] looks at what treebox depends on — the git CLI, the repository, the
//! user running it, each harness CLI and its login dir, the canonical `.env`, access to
//! `origin`, and the engine of the chosen runner — and returns one [`Check`] per item,
//! in a fixed order with stable names. It never prints and never picks an exit code:
//! `cli/doctor.rs` does both (a [`Status::Fail`] is exit 1, advisories are not).
//!
//! Invariants: nothing is written; every git subprocess is built by
//! [`GitCli`](crate::git::GitCli) (the repository's exec-shaped config stays inert, and
//! talking to `origin` never prompts); every probe that can hang (`ls-remote`, an
//! engine's `info`) is given up after [`PROBE_TIMEOUT`] and its process group killed.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::cmd::{Cmd, CmdError};
use crate::config::UserConfig;
use crate::git::repo::{Repo, RepoError};
use crate::git::GitCli;
use crate::harness::Harness;
use crate::sanitize;

/// The oldest git treebox supports.
pub const MIN_GIT: (u32, u32, u32) = (2, 30, 0);

/// How long a probe of the network or of an engine may take before doctor gives up.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

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
    /// A stable id: `git`, `repo`, `uid`, `harness.claude`, `harness.codex`, `env`,
    /// `origin`, `runner`.
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
    let marked = is_marked_runner(cfg.runner, std::env::var("TREEBOX_RUNNER").ok().as_deref());
    // The two slow probes (network, engine) run side by side; libgit2 handles stay on
    // this thread, so the origin probe gets plain paths.
    let remote = repo.as_ref().ok().map(|r| {
        (
            r.has_remote("origin"),
            r.common_dir.clone(),
            r.main_root.clone(),
        )
    });
    let (origin, runner) = std::thread::scope(|s| {
        let origin = s.spawn(|| match &remote {
            Some((has, common, root)) => check_origin(*has, common, root, PROBE_TIMEOUT),
            None => not_checked("origin"),
        });
        let runner = s.spawn(|| check_runner(&isolation, marked, PROBE_TIMEOUT));
        (
            origin.join().unwrap_or_else(|_| {
                Check::new("origin", Status::Advisory, "the origin check crashed")
            }),
            runner
                .join()
                .unwrap_or_else(|_| Check::new("runner", Status::Fail, "the runner check crashed")),
        )
    });
    let mut checks = vec![check_git(cwd), check_repo(cwd, &repo), check_uid()];
    let default = cfg.harness.unwrap_or_default();
    for h in Harness::ALL {
        checks.push(check_harness(h, h == default, cfg, cwd));
    }
    checks.push(match &repo {
        Ok(r) => check_env(r, cfg.env_file.as_deref()),
        Err(_) => not_checked("env"),
    });
    checks.push(origin);
    checks.push(runner);
    checks
}

fn not_checked(name: &'static str) -> Check {
    Check::new(name, Status::Advisory, "not checked: no repository")
}

// ---------------------------------------------------------------------------------
// git

/// `(major, minor, patch)` from `git --version` output, e.g. `git version 2.39.2
/// (Apple Git-143)` or `git version 2.45.1.windows.1`. A missing patch is 0.
pub fn parse_git_version(out: &str) -> Option<(u32, u32, u32)> {
    let word = out
        .trim()
        .strip_prefix("git version ")?
        .split_whitespace()
        .next()?;
    let mut parts = word.split('.').map(|p| {
        let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().ok()
    });
    let major = parts.next()??;
    let minor = parts.next()??;
    let patch = parts.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

fn check_git(cwd: &Path) -> Check {
    let c = GitCli::plain().cmd(cwd).arg("--version");
    let out = match c.output() {
        Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
        Err(e) if e.is_not_found() => {
            return Check::new("git", Status::Fail, "git is not installed or not on PATH")
                .hint("Install git 2.30 or newer (e.g. `sudo apt-get install git`).")
        }
        Err(e) => return Check::new("git", Status::Fail, first_line(&e.to_string())),
    };
    let line = out.lines().next().unwrap_or("").trim().to_string();
    match parse_git_version(&out) {
        Some(v) if v >= MIN_GIT => Check::new("git", Status::Ok, line),
        Some(_) => Check::new(
            "git",
            Status::Fail,
            format!(
                "{line}: treebox needs git {}.{} or newer",
                MIN_GIT.0, MIN_GIT.1
            ),
        )
        .hint("Upgrade git (e.g. `sudo apt-get install git`), then run `git --version`."),
        None => Check::new(
            "git",
            Status::Fail,
            format!("could not read the version from `git --version`: {line:?}"),
        ),
    }
}

// ---------------------------------------------------------------------------------
// repository and user

fn check_repo(cwd: &Path, repo: &Result<Repo, RepoError>) -> Check {
    match repo {
        Ok(r) => Check::new(
            "repo",
            Status::Ok,
            format!("main worktree {}", r.main_root.display()),
        ),
        Err(RepoError::NotARepo { .. }) => Check::new(
            "repo",
            Status::Fail,
            format!("not inside a git repository ({})", cwd.display()),
        )
        .hint("cd into a repository (e.g. `cd ~/src/project`), or make one with `git init`."),
        Err(e @ RepoError::Bare { .. }) => {
            Check::new("repo", Status::Fail, e.to_string()).hint("git clone <url>")
        }
        Err(e @ RepoError::Open { .. }) => {
            Check::new("repo", Status::Fail, e.to_string()).hint(format!(
                "git -C {} status",
                crate::cmd::quote(&cwd.to_string_lossy())
            ))
        }
    }
}

fn check_uid() -> Check {
    // SAFETY: getuid and getgid cannot fail and touch no memory.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    if uid == 0 {
        Check::new(
            "uid",
            Status::Advisory,
            format!(
                "uid 0 (root), gid {gid}: fine where a container maps root to a user, but boxes and their files will be owned by root"
            ),
        )
    } else {
        Check::new("uid", Status::Ok, format!("uid {uid}, gid {gid}"))
    }
}

// ---------------------------------------------------------------------------------
// harness CLIs

/// Where `program` would be found: itself when it names a path (relative to `cwd`),
/// else the first executable file of that name in a `PATH` directory.
pub fn find_program(program: &str, path_var: Option<&OsStr>, cwd: &Path) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        let p = cwd.join(program);
        return is_executable(&p).then_some(p);
    }
    let path_var = path_var?;
    std::env::split_paths(path_var)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The harness's login (config) dir: `$CLAUDE_CONFIG_DIR` / `$CODEX_HOME` when set,
/// else `~/.claude` / `~/.codex`.
pub fn login_dir(h: Harness, env_override: Option<&OsStr>, home: Option<&Path>) -> Option<PathBuf> {
    if let Some(o) = env_override.filter(|o| !o.is_empty()) {
        return Some(PathBuf::from(o));
    }
    let leaf = match h {
        Harness::Claude => ".claude",
        Harness::Codex => ".codex",
    };
    home.map(|h| h.join(leaf))
}

fn login_env(h: Harness) -> &'static str {
    match h {
        Harness::Claude => "CLAUDE_CONFIG_DIR",
        Harness::Codex => "CODEX_HOME",
    }
}

fn install_hint(h: Harness) -> &'static str {
    match h {
        Harness::Claude => "npm install -g @anthropic-ai/claude-code",
        Harness::Codex => "npm install -g @openai/codex",
    }
}

fn login_hint(h: Harness) -> &'static str {
    match h {
        Harness::Claude => "claude",
        Harness::Codex => "codex login",
    }
}

fn harness_name(h: Harness) -> &'static str {
    match h {
        Harness::Claude => "harness.claude",
        Harness::Codex => "harness.codex",
    }
}

fn check_harness(h: Harness, is_default: bool, cfg: &UserConfig, cwd: &Path) -> Check {
    let program = cfg.harness_program(h);
    let found = find_program(&program, std::env::var_os("PATH").as_deref(), cwd);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let login = login_dir(
        h,
        std::env::var_os(login_env(h)).as_deref(),
        home.as_deref(),
    );
    harness_finding(h, is_default, &program, found.as_deref(), login.as_deref())
}

/// The verdict on one harness from what was found. A missing CLI is only an advisory,
/// even for the default harness: it can be installed later.
fn harness_finding(
    h: Harness,
    is_default: bool,
    program: &str,
    found: Option<&Path>,
    login: Option<&Path>,
) -> Check {
    let name = harness_name(h);
    let default = if is_default {
        " (the default harness)"
    } else {
        ""
    };
    let Some(found) = found else {
        let hint = if program == h.as_str() {
            install_hint(h).to_string()
        } else {
            format!(
                "Install {h}, or fix `harnesses.{h}.program` in the config (now {})",
                crate::cmd::quote(program)
            )
        };
        return Check::new(
            name,
            Status::Advisory,
            format!("`{program}` not found on PATH{default}"),
        )
        .hint(hint);
    };
    match login {
        Some(dir) if dir.is_dir() => Check::new(
            name,
            Status::Ok,
            format!("{}; login dir {}{default}", found.display(), dir.display()),
        ),
        Some(dir) => Check::new(
            name,
            Status::Advisory,
            format!(
                "{}; no login dir at {} (not logged in yet?){default}",
                found.display(),
                dir.display()
            ),
        )
        .hint(login_hint(h)),
        None => Check::new(
            name,
            Status::Advisory,
            format!(
                "{}; HOME is not set, so its login dir is unknown{default}",
                found.display()
            ),
        ),
    }
}

// ---------------------------------------------------------------------------------
// .env

fn env_tracked(repo: &Repo) -> bool {
    repo.git
        .index()
        .ok()
        .is_some_and(|i| i.get_path(Path::new(".env"), 0).is_some())
}

fn check_env(repo: &Repo, env_file: Option<&str>) -> Check {
    let Some(source) = crate::provision::copy::env_source(&repo.main_root, env_file) else {
        let (where_, how) = match env_file {
            Some(f) => (
                format!("the configured envFile {f}"),
                "boxes get none until it exists",
            ),
            None => (
                format!("{}", repo.main_root.join(".env").display()),
                "boxes get none",
            ),
        };
        return Check::new(
            "env",
            Status::Advisory,
            format!("no .env at {where_}; {how}"),
        );
    };
    let is_link = std::fs::symlink_metadata(&source).is_ok_and(|m| m.file_type().is_symlink());
    if is_link && env_tracked(repo) {
        return Check::new(
            "env",
            Status::Advisory,
            format!(
                "{} is a symlink the repository tracks; it will not be followed, and boxes get no .env",
                source.display()
            ),
        );
    }
    match std::fs::metadata(&source) {
        Ok(m) if m.is_file() => Check::new(
            "env",
            Status::Ok,
            format!("{} (copied into each box)", source.display()),
        ),
        _ => Check::new(
            "env",
            Status::Advisory,
            format!(
                "{} is not a regular file; boxes get no .env",
                source.display()
            ),
        ),
    }
}

// ---------------------------------------------------------------------------------
// origin

fn check_origin(has_origin: bool, common_dir: &Path, main_root: &Path, limit: Duration) -> Check {
    if !has_origin {
        return Check::new(
            "origin",
            Status::Advisory,
            "no origin remote: local refs will be used",
        );
    }
    let git = GitCli::for_repo(common_dir, None);
    let c = git
        .silent_remote_cmd(main_root)
        .arg("ls-remote")
        .args(git.upload_pack_arg("origin"))
        .args(["--heads", "origin"]);
    let failed = |why: String| {
        Check::new("origin", Status::Advisory, format!("origin: {why}")).hint("git fetch origin")
    };
    match output_within(&c, limit) {
        Ok(Some(o)) if o.status.success() => {
            let heads = String::from_utf8_lossy(&o.stdout).lines().count();
            let s = if heads == 1 { "" } else { "es" };
            Check::new(
                "origin",
                Status::Ok,
                format!("origin answers `git ls-remote` ({heads} branch{s})"),
            )
        }
        Ok(Some(o)) => {
            let stderr = String::from_utf8_lossy(&o.stderr);
            let why = stderr
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(sanitize::line)
                .unwrap_or_else(|| format!("`git ls-remote` failed ({})", o.status));
            failed(why)
        }
        Ok(None) => failed(format!("no answer after {} s", limit.as_secs())),
        Err(e) => failed(first_line(&e.to_string())),
    }
}

// ---------------------------------------------------------------------------------
// runner

/// The isolation doctor looks at: the flag, else the config, else `host`.
pub fn chosen_isolation<'a>(flag: Option<&'a str>, config: Option<&'a str>) -> &'a str {
    flag.or(config).unwrap_or("host")
}

/// Is this machine marked as a runner (config `"runner": true` or `TREEBOX_RUNNER=1`)?
pub fn is_marked_runner(config: Option<bool>, env: Option<&str>) -> bool {
    config.unwrap_or(false) || env == Some("1")
}

/// What checking a runner means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunnerProbe {
    /// Nothing to probe. `auto`: it resolved to host because the machine is unmarked.
    Host { auto: bool },
    /// Ask this engine; `auto`: the first that answers wins.
    Engines {
        engines: Vec<&'static str>,
        auto: bool,
    },
    /// Not a runner treebox knows.
    Unknown,
}

/// The probe for an isolation name (SPEC §3: `auto` tries podman, then docker).
pub fn runner_probe(isolation: &str, marked: bool) -> RunnerProbe {
    match isolation {
        "host" => RunnerProbe::Host { auto: false },
        "docker" => RunnerProbe::Engines {
            engines: vec!["docker"],
            auto: false,
        },
        "podman" => RunnerProbe::Engines {
            engines: vec!["podman"],
            auto: false,
        },
        "auto" if marked => RunnerProbe::Engines {
            engines: vec!["podman", "docker"],
            auto: true,
        },
        "auto" => RunnerProbe::Host { auto: true },
        _ => RunnerProbe::Unknown,
    }
}

/// `<engine> info` with a template for the server version (podman's `info` has no
/// `ServerVersion`; its version is under `Version`).
pub fn engine_info_cmd(engine: &str) -> Cmd {
    let template = if engine == "podman" {
        "{{.Version.Version}}"
    } else {
        "{{.ServerVersion}}"
    };
    Cmd::new(engine).args(["info", "--format", template])
}

/// Ask an engine for its version: `Ok(version)` or `Err(why)`.
fn probe_engine(engine: &str, limit: Duration) -> Result<String, String> {
    match output_within(&engine_info_cmd(engine), limit) {
        Ok(Some(o)) => {
            let version = String::from_utf8_lossy(&o.stdout).trim().to_string();
            if o.status.success() && !version.is_empty() {
                Ok(sanitize::line(&version))
            } else {
                let stderr = String::from_utf8_lossy(&o.stderr);
                let why = stderr
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .map(sanitize::line)
                    .unwrap_or_else(|| format!("`{engine} info` failed ({})", o.status));
                Err(why)
            }
        }
        Ok(None) => Err(format!(
            "`{engine} info` gave no answer after {} s",
            limit.as_secs()
        )),
        Err(e) if e.is_not_found() => Err(format!("{engine} is not installed or not on PATH")),
        Err(e) => Err(first_line(&e.to_string())),
    }
}

fn check_runner(isolation: &str, marked: bool, limit: Duration) -> Check {
    match runner_probe(isolation, marked) {
        RunnerProbe::Host { auto: false } => {
            Check::new("runner", Status::Ok, "host: agents run as you")
        }
        RunnerProbe::Host { auto: true } => Check::new(
            "runner",
            Status::Ok,
            "auto → host: this machine is not marked as a runner",
        ),
        RunnerProbe::Unknown => Check::new(
            "runner",
            Status::Fail,
            format!("unknown isolation `{isolation}`"),
        )
        .hint("Use one of host, docker, podman, auto: `git treebox doctor --isolation host`."),
        RunnerProbe::Engines { engines, auto } => {
            let mut why = Vec::new();
            for engine in &engines {
                match probe_engine(engine, limit) {
                    Ok(v) if auto => {
                        return Check::new("runner", Status::Ok, format!("auto → {engine} {v}"))
                    }
                    Ok(v) => return Check::new("runner", Status::Ok, format!("{engine} {v}")),
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
                let engine = engines.first().copied().unwrap_or("engine");
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

// ---------------------------------------------------------------------------------
// helpers

fn first_line(s: &str) -> String {
    sanitize::line(s.lines().next().unwrap_or(""))
}

/// Run `cmd` capturing its output, giving up after `limit`: `Ok(None)` then, with the
/// child's whole process group (git's ssh, a credential helper) killed.
pub fn output_within(cmd: &Cmd, limit: Duration) -> Result<Option<Output>, CmdError> {
    use std::os::unix::process::CommandExt;
    let mut c = cmd.to_command();
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = c.spawn().map_err(|source| CmdError::Spawn {
        line: cmd.to_string(),
        source,
    })?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(source) => {
                return Err(CmdError::Spawn {
                    line: cmd.to_string(),
                    source,
                })
            }
        }
    };
    let Some(status) = status else {
        if let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: signals the process group this function created for the child.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        // The readers end when the last writer in the group is gone; do not wait on
        // them, a grandchild may have escaped the group.
        return Ok(None);
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    Ok(Some(Output {
        status,
        stdout,
        stderr,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_versions() {
        assert_eq!(parse_git_version("git version 2.47.3\n"), Some((2, 47, 3)));
        assert_eq!(
            parse_git_version("git version 2.39.2 (Apple Git-143)"),
            Some((2, 39, 2))
        );
        assert_eq!(
            parse_git_version("git version 2.45.1.windows.1"),
            Some((2, 45, 1))
        );
        assert_eq!(parse_git_version("git version 2.30"), Some((2, 30, 0)));
        assert_eq!(
            parse_git_version("git version 2.43.0-rc1"),
            Some((2, 43, 0))
        );
        assert_eq!(parse_git_version("hub version 2.14.2"), None);
        assert_eq!(parse_git_version("git version"), None);
        assert_eq!(parse_git_version(""), None);
        assert!(parse_git_version("git version 2.29.9").unwrap() < MIN_GIT);
        assert!(parse_git_version("git version 2.30.0").unwrap() >= MIN_GIT);
        assert!(parse_git_version("git version 3.0.0").unwrap() >= MIN_GIT);
    }

    #[test]
    fn isolation_precedence() {
        assert_eq!(chosen_isolation(Some("docker"), Some("podman")), "docker");
        assert_eq!(chosen_isolation(None, Some("podman")), "podman");
        assert_eq!(chosen_isolation(None, None), "host");
    }

    #[test]
    fn runner_marking() {
        assert!(!is_marked_runner(None, None));
        assert!(is_marked_runner(Some(true), None));
        assert!(is_marked_runner(None, Some("1")));
        assert!(!is_marked_runner(Some(false), Some("0")));
        assert!(!is_marked_runner(None, Some("yes")));
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
                engines: vec!["podman", "docker"],
                auto: true
            }
        );
        assert_eq!(
            runner_probe("docker", false),
            RunnerProbe::Engines {
                engines: vec!["docker"],
                auto: false
            }
        );
        assert_eq!(
            runner_probe("podman", false),
            RunnerProbe::Engines {
                engines: vec!["podman"],
                auto: false
            }
        );
        assert_eq!(runner_probe("vm", true), RunnerProbe::Unknown);
    }

    #[test]
    fn engine_info_templates() {
        assert_eq!(
            engine_info_cmd("docker").argv(),
            ["docker", "info", "--format", "{{.ServerVersion}}"]
        );
        assert_eq!(
            engine_info_cmd("podman").argv(),
            ["podman", "info", "--format", "{{.Version.Version}}"]
        );
    }

    #[test]
    fn missing_engine_fails_with_hint() {
        let c = check_runner("auto", true, Duration::from_secs(5));
        // Either an engine answers on this machine, or the check fails with a hint.
        match c.status {
            Status::Ok => assert!(c.summary.starts_with("auto → "), "{c:?}"),
            _ => {
                assert_eq!(c.status, Status::Fail);
                assert!(c.hint.is_some());
            }
        }
        let host = check_runner("host", false, Duration::from_secs(1));
        assert_eq!(host.status, Status::Ok);
    }

    #[test]
    fn program_lookup() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        let b = d.path().join("b");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        // Not executable in `a`, executable in `b`: `b` wins.
        std::fs::write(a.join("tool"), "").unwrap();
        std::fs::write(b.join("tool"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(b.join("tool"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([&a, &b]).unwrap();
        assert_eq!(
            find_program("tool", Some(&path), d.path()),
            Some(b.join("tool"))
        );
        assert_eq!(find_program("nope", Some(&path), d.path()), None);
        assert_eq!(find_program("tool", None, d.path()), None);
        assert_eq!(
            find_program("b/tool", None, d.path()),
            Some(d.path().join("b/tool"))
        );
        assert_eq!(find_program("a/tool", None, d.path()), None);
        assert_eq!(find_program("", Some(&path), d.path()), None);
    }

    #[test]
    fn login_dirs() {
        let home = Path::new("/home/u");
        assert_eq!(
            login_dir(Harness::Claude, None, Some(home)),
            Some(PathBuf::from("/home/u/.claude"))
        );
        assert_eq!(
            login_dir(Harness::Codex, None, Some(home)),
            Some(PathBuf::from("/home/u/.codex"))
        );
        assert_eq!(
            login_dir(Harness::Codex, Some(OsStr::new("/x/codex")), Some(home)),
            Some(PathBuf::from("/x/codex"))
        );
        assert_eq!(
            login_dir(Harness::Claude, Some(OsStr::new("")), Some(home)),
            Some(PathBuf::from("/home/u/.claude"))
        );
        assert_eq!(login_dir(Harness::Claude, None, None), None);
    }

    #[test]
    fn harness_findings() {
        let d = tempfile::tempdir().unwrap();
        let missing = harness_finding(Harness::Codex, true, "codex", None, None);
        assert_eq!(missing.status, Status::Advisory);
        assert!(missing.summary.contains("default"), "{missing:?}");
        assert_eq!(missing.hint.as_deref(), Some(install_hint(Harness::Codex)));
        let other = harness_finding(Harness::Claude, false, "claude", None, None);
        assert!(!other.summary.contains("default"), "{other:?}");
        let bin = d.path().join("claude");
        let ok = harness_finding(Harness::Claude, false, "claude", Some(&bin), Some(d.path()));
        assert_eq!(ok.status, Status::Ok);
        let no_login = harness_finding(
            Harness::Claude,
            false,
            "claude",
            Some(&bin),
            Some(&d.path().join(".claude")),
        );
        assert_eq!(no_login.status, Status::Advisory);
        assert_eq!(no_login.hint.as_deref(), Some("claude"));
    }

    #[test]
    fn slow_probe_is_given_up() {
        let start = Instant::now();
        let out = output_within(
            &Cmd::new("sh").args(["-c", "sleep 30"]),
            Duration::from_millis(200),
        )
        .unwrap();
        assert!(out.is_none());
        assert!(start.elapsed() < Duration::from_secs(10));
        let out = output_within(
            &Cmd::new("sh").args(["-c", "echo hi; echo oops >&2; exit 3"]),
            Duration::from_secs(10),
        )
        .unwrap()
        .unwrap();
        assert_eq!(out.stdout, b"hi\n");
        assert_eq!(out.stderr, b"oops\n");
        assert_eq!(out.status.code(), Some(3));
        assert!(
            output_within(&Cmd::new("/nonexistent/x"), Duration::from_secs(1))
                .unwrap_err()
                .is_not_found()
        );
    }
}
