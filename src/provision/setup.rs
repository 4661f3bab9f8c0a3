//! Setup: install a box's dependencies from the package managers' caches.
//!
//! This is the `runner.setup` stage of the provisioning pipeline (SPEC §4). It builds
//! the install command for each detected ecosystem ([`crate::ecosystem`]; shared user
//! caches by default, throwaway caches with `--cold`), and runs the steps best-effort,
//! returning a [`SetupReport`]. The lockfile hash is in [`super::lockhash`]; both are
//! re-exported here for existing callers.
//!
//! Invariants:
//! - Every child process is a [`Cmd`]; children run with stdin null and their output
//!   captured, so nothing they print reaches our stdout.
//! - A missing tool or a failing step never aborts the others: the box stays usable and
//!   the report says `completed: false`, so a later `create`/`enter` can finish setup.
//! - Nothing here prints or picks an exit code; the CLI renders the report.
//!
//! Callers: the provisioning pipeline (via the runner's setup) builds the steps with
//! [`plan_steps`], runs them with [`run`], and records [`lockfile_hash`] and
//! [`SetupReport::completed`] in the box's state.

use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use crate::cmd::Cmd;

pub use super::lockhash::{lockfile_hash, HASH_FILE_CAP};
pub use crate::ecosystem::{detect, Ecosystem, UnknownEcosystem};

/// How many trailing lines of a failed step's output its report keeps.
const DETAIL_LINES: usize = 20;

/// Where package managers keep downloads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheMode {
    /// Each tool's default user cache, shared by every box.
    Shared,
    /// A throwaway directory the caller creates and deletes (`--cold`).
    Cold(PathBuf),
}

/// One setup step: the ecosystem's cache-backed install, run in `root`.
///
/// uv: `uv sync --frozen` (cold: env `UV_CACHE_DIR=<cold>/uv`); pnpm: `pnpm install
/// --frozen-lockfile --prefer-offline` (cold: `--store-dir <cold>/pnpm`); npm: `npm ci
/// --prefer-offline --no-audit --no-fund` (cold: `--cache <cold>/npm`); go: `go mod
/// download` (cold: env `GOMODCACHE=<cold>/gomod` and `GOFLAGS=-modcacherw`); cargo:
/// `cargo fetch --locked` (cold: env `CARGO_HOME=<cold>/cargo`). Shared mode sets
/// nothing: each tool's default user cache is the shared one.
pub fn install_cmd(eco: Ecosystem, root: &Path, cache: &CacheMode) -> Cmd {
    let cold = match cache {
        CacheMode::Shared => None,
        CacheMode::Cold(dir) => Some(dir.as_path()),
    };
    let cmd = Cmd::new(eco.program()).cwd(root);
    match eco {
        Ecosystem::Uv => {
            let cmd = cmd.args(["sync", "--frozen"]);
            match cold {
                Some(c) => cmd.env("UV_CACHE_DIR", c.join("uv")),
                None => cmd,
            }
        }
        Ecosystem::Pnpm => {
            let cmd = cmd.args(["install", "--frozen-lockfile", "--prefer-offline"]);
            match cold {
                Some(c) => cmd.arg("--store-dir").arg(c.join("pnpm")),
                None => cmd,
            }
        }
        Ecosystem::Npm => {
            let cmd = cmd.args(["ci", "--prefer-offline", "--no-audit", "--no-fund"]);
            match cold {
                Some(c) => cmd.arg("--cache").arg(c.join("npm")),
                None => cmd,
            }
        }
        Ecosystem::Go => {
            let cmd = cmd.args(["mod", "download"]);
            match cold {
                Some(c) => cmd
                    .env("GOMODCACHE", c.join("gomod"))
                    .env("GOFLAGS", "-modcacherw"),
                None => cmd,
            }
        }
        Ecosystem::Cargo => {
            let cmd = cmd.args(["fetch", "--locked"]);
            match cold {
                Some(c) => cmd.env("CARGO_HOME", c.join("cargo")),
                None => cmd,
            }
        }
    }
}

/// The user's configured `setup` list (replaces detection): each entry runs as
/// `sh -c <entry>` in `root`.
pub fn custom_cmds(entries: &[String], root: &Path) -> Vec<Cmd> {
    entries
        .iter()
        .map(|e| Cmd::new("sh").arg("-c").arg(e).cwd(root))
        .collect()
}

/// What happened to one setup step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepReport {
    /// The ecosystem name, or `setup[i]` for the i-th custom entry.
    pub name: String,
    /// The command as one shell-quoted line (`Cmd`'s `Display`).
    pub command: String,
    pub ok: bool,
    /// The program could not be found.
    pub missing_tool: bool,
    /// Why it failed: "uv is not installed (not on PATH)", or the exit status and the
    /// last lines of output. Raw child output: sanitise before printing to a terminal.
    pub detail: Option<String>,
    pub duration: Duration,
}

/// What happened to a box's setup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupReport {
    pub steps: Vec<StepReport>,
    /// Every step succeeded (true when there were no steps).
    pub completed: bool,
}

/// Run steps in order; a missing tool or failing step does NOT abort the others (best
/// effort: the box stays usable); `completed` is false if any step failed. Child
/// stdout and stderr are captured, never written to our stdout. `on_step` is called
/// with the step's name before each step starts (the CLI uses it for progress).
pub fn run(steps: Vec<(String, Cmd)>, on_step: &mut dyn FnMut(&str)) -> SetupReport {
    let mut reports = Vec::with_capacity(steps.len());
    for (name, cmd) in steps {
        on_step(&name);
        reports.push(run_step(name, &cmd));
    }
    let completed = reports.iter().all(|s| s.ok);
    SetupReport {
        steps: reports,
        completed,
    }
}

fn run_step(name: String, cmd: &Cmd) -> StepReport {
    let command = cmd.to_string();
    let start = Instant::now();
    let result = cmd.output_any();
    let duration = start.elapsed();
    let (ok, missing_tool, detail) = match result {
        Ok(out) if out.status.success() => (true, false, None),
        Ok(out) => (
            false,
            false,
            Some(failure_detail(out.status, &out.stdout, &out.stderr)),
        ),
        Err(e) if e.is_not_found() => not_found_detail(cmd, crate::sanitize::chain(&e)),
        Err(e) => (false, false, Some(crate::sanitize::chain(&e))),
    };
    StepReport {
        name,
        command,
        ok,
        missing_tool,
        detail,
        duration,
    }
}

/// Spawning failed with "not found": the program is missing — unless the working
/// directory is, or the program exists and something it needs (an interpreter) is not.
fn not_found_detail(cmd: &Cmd, spawn_error: String) -> (bool, bool, Option<String>) {
    if let Some(dir) = &cmd.cwd {
        if !dir.is_dir() {
            let msg = format!("working directory {} does not exist", dir.display());
            return (false, false, Some(msg));
        }
    }
    let program = cmd.program.to_string_lossy();
    if program.contains('/') {
        if Path::new(&cmd.program).exists() {
            return (false, false, Some(spawn_error));
        }
        return (false, true, Some(format!("{program} does not exist")));
    }
    if find_on_path(cmd).is_some() {
        return (false, false, Some(spawn_error));
    }
    let msg = format!("{program} is not installed (not on PATH)");
    (false, true, Some(msg))
}

/// Where `cmd.program` would be found on the PATH the child sees.
fn find_on_path(cmd: &Cmd) -> Option<PathBuf> {
    let path = cmd
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var_os("PATH"))?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(&cmd.program))
        .find(|p| p.is_file())
}

/// "failed (exit status: 3); last lines of output:" and the tail of stdout then stderr.
fn failure_detail(status: ExitStatus, stdout: &[u8], stderr: &[u8]) -> String {
    let stdout = String::from_utf8_lossy(stdout);
    let stderr = String::from_utf8_lossy(stderr);
    // Progress bars redraw with `\r`: keep what was last drawn on each line.
    let lines: Vec<&str> = stdout
        .lines()
        .chain(stderr.lines())
        .map(|l| {
            l.rsplit('\r')
                .find(|s| !s.trim().is_empty())
                .unwrap_or("")
                .trim_end()
        })
        .filter(|l| !l.is_empty())
        .collect();
    let tail = &lines[lines.len().saturating_sub(DETAIL_LINES)..];
    if tail.is_empty() {
        format!("failed ({status}) with no output")
    } else {
        format!(
            "failed ({status}); last lines of output:\n{}",
            tail.join("\n")
        )
    }
}

/// The steps for a box: the custom entries when `custom` is `Some` (named `setup[0]`,
/// `setup[1]`, …; an empty list means no setup), else one install per ecosystem in
/// `ecos`, named after it.
pub fn plan_steps(
    root: &Path,
    ecos: &[Ecosystem],
    custom: Option<&[String]>,
    cache: &CacheMode,
) -> Vec<(String, Cmd)> {
    match custom {
        Some(entries) => custom_cmds(entries, root)
            .into_iter()
            .enumerate()
            .map(|(i, c)| (format!("setup[{i}]"), c))
            .collect(),
        None => ecos
            .iter()
            .map(|&e| (e.as_str().to_string(), install_cmd(e, root, cache)))
            .collect(),
    }
}

/// Will setup run anything in the box at `root`: the user's `custom` commands, else one
/// install per detected ecosystem (the choice [`plan_steps`] makes).
pub fn runs_anything(root: &Path, custom: Option<&[String]>) -> bool {
    match custom {
        Some(entries) => !entries.is_empty(),
        None => !detect(root).is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(root: &Path, name: &str, data: &[u8]) {
        fs::write(root.join(name), data).unwrap();
    }

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    type Parts = (Vec<String>, Vec<(String, String)>, Option<PathBuf>);
    type ColdCase<'a> = (Ecosystem, &'a [&'a str], &'a [(&'a str, &'a str)]);

    fn parts(c: &Cmd) -> Parts {
        let env = c.env_strings();
        assert!(c.env_remove.is_empty());
        assert!(c.stdin.is_none());
        (c.argv(), env, c.cwd.clone())
    }

    fn strs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn envs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn install_cmds_shared() {
        let root = Path::new("/boxes/b1");
        let cwd = Some(root.to_path_buf());
        let cases: [(Ecosystem, &[&str]); 5] = [
            (Ecosystem::Uv, &["uv", "sync", "--frozen"]),
            (
                Ecosystem::Pnpm,
                &["pnpm", "install", "--frozen-lockfile", "--prefer-offline"],
            ),
            (
                Ecosystem::Npm,
                &["npm", "ci", "--prefer-offline", "--no-audit", "--no-fund"],
            ),
            (Ecosystem::Go, &["go", "mod", "download"]),
            (Ecosystem::Cargo, &["cargo", "fetch", "--locked"]),
        ];
        for (eco, argv) in cases {
            assert_eq!(
                parts(&install_cmd(eco, root, &CacheMode::Shared)),
                (strs(argv), vec![], cwd.clone()),
                "{eco}"
            );
        }
    }

    #[test]
    fn install_cmds_cold() {
        let root = Path::new("/boxes/b1");
        let cwd = Some(root.to_path_buf());
        let cold = CacheMode::Cold(PathBuf::from("/tmp/cold"));
        let cases: [ColdCase; 5] = [
            (
                Ecosystem::Uv,
                &["uv", "sync", "--frozen"],
                &[("UV_CACHE_DIR", "/tmp/cold/uv")],
            ),
            (
                Ecosystem::Pnpm,
                &[
                    "pnpm",
                    "install",
                    "--frozen-lockfile",
                    "--prefer-offline",
                    "--store-dir",
                    "/tmp/cold/pnpm",
                ],
                &[],
            ),
            (
                Ecosystem::Npm,
                &[
                    "npm",
                    "ci",
                    "--prefer-offline",
                    "--no-audit",
                    "--no-fund",
                    "--cache",
                    "/tmp/cold/npm",
                ],
                &[],
            ),
            (
                Ecosystem::Go,
                &["go", "mod", "download"],
                &[
                    ("GOMODCACHE", "/tmp/cold/gomod"),
                    ("GOFLAGS", "-modcacherw"),
                ],
            ),
            (
                Ecosystem::Cargo,
                &["cargo", "fetch", "--locked"],
                &[("CARGO_HOME", "/tmp/cold/cargo")],
            ),
        ];
        for (eco, argv, env) in cases {
            assert_eq!(
                parts(&install_cmd(eco, root, &cold)),
                (strs(argv), envs(env), cwd.clone()),
                "{eco}"
            );
        }
    }

    #[test]
    fn custom_cmds_run_under_sh() {
        let root = Path::new("/boxes/b1");
        let entries = strs(&["make deps", "echo 'a b'"]);
        let cmds = custom_cmds(&entries, root);
        assert_eq!(cmds.len(), 2);
        assert_eq!(
            parts(&cmds[0]),
            (strs(&["sh", "-c", "make deps"]), vec![], Some(root.into()))
        );
        assert_eq!(cmds[1].argv(), strs(&["sh", "-c", "echo 'a b'"]));
    }

    #[test]
    fn plan_steps_prefers_custom() {
        let root = Path::new("/boxes/b1");
        let ecos = [Ecosystem::Uv, Ecosystem::Cargo];
        let detected = plan_steps(root, &ecos, None, &CacheMode::Shared);
        let names: Vec<&str> = detected.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["uv", "cargo"]);
        assert_eq!(
            detected[1].1,
            install_cmd(Ecosystem::Cargo, root, &CacheMode::Shared)
        );

        let entries = strs(&["a", "b"]);
        let custom = plan_steps(root, &ecos, Some(&entries), &CacheMode::Shared);
        let names: Vec<&str> = custom.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["setup[0]", "setup[1]"]);
        assert_eq!(custom[1].1.argv(), strs(&["sh", "-c", "b"]));

        assert!(plan_steps(root, &ecos, Some(&[]), &CacheMode::Shared).is_empty());
    }

    fn sh(script: &str) -> Cmd {
        Cmd::new("sh").arg("-c").arg(script)
    }

    #[test]
    fn missing_tool_does_not_abort_other_steps() {
        let d = tmp();
        let steps = vec![
            (
                "ghost".to_string(),
                Cmd::new("treebox-no-such-tool-xyz").cwd(d.path()),
            ),
            ("touch".to_string(), sh("touch ran").cwd(d.path())),
        ];
        let mut seen = Vec::new();
        let report = run(steps, &mut |n: &str| seen.push(n.to_string()));
        assert_eq!(seen, ["ghost", "touch"]);
        assert!(!report.completed);
        let ghost = &report.steps[0];
        assert!(!ghost.ok && ghost.missing_tool, "{ghost:?}");
        assert_eq!(
            ghost.detail.as_deref(),
            Some("treebox-no-such-tool-xyz is not installed (not on PATH)")
        );
        assert!(report.steps[1].ok, "{:?}", report.steps[1]);
        assert!(d.path().join("ran").exists());
    }

    #[test]
    fn missing_cwd_is_not_a_missing_tool() {
        let d = tmp();
        let gone = d.path().join("gone");
        let report = run(vec![("x".into(), sh("true").cwd(&gone))], &mut |_: &str| {});
        let s = &report.steps[0];
        assert!(!s.ok && !s.missing_tool, "{s:?}");
        assert!(
            s.detail.as_deref().unwrap().contains("does not exist"),
            "{s:?}"
        );
    }

    #[test]
    fn failing_step_reports_status_and_output() {
        let cmd = sh("echo out; echo err >&2; exit 3");
        let line = cmd.to_string();
        let report = run(vec![("custom".into(), cmd)], &mut |_: &str| {});
        assert!(!report.completed);
        let s = &report.steps[0];
        assert!(!s.ok && !s.missing_tool);
        assert_eq!(s.name, "custom");
        assert_eq!(s.command, line);
        let detail = s.detail.as_deref().unwrap();
        assert!(detail.contains("err"), "{detail}");
        assert!(detail.contains("out"), "{detail}");
        assert!(detail.contains("exit status: 3"), "{detail}");
    }

    #[test]
    fn failure_detail_keeps_last_lines() {
        let cmd = sh("for i in $(seq 1 50); do echo line$i; done; printf 'a\\rb\\n' >&2; exit 1");
        let report = run(vec![("x".into(), cmd)], &mut |_: &str| {});
        let detail = report.steps[0].detail.clone().unwrap();
        let body: Vec<&str> = detail.lines().skip(1).collect();
        assert_eq!(body.len(), DETAIL_LINES, "{detail}");
        assert_eq!(body.first(), Some(&"line32"));
        assert_eq!(body.last(), Some(&"b"));
    }

    #[test]
    fn all_ok_run_is_completed() {
        let report = run(
            vec![("a".into(), sh("exit 0")), ("b".into(), sh("echo hi"))],
            &mut |_: &str| {},
        );
        assert!(report.completed);
        assert!(report.steps.iter().all(|s| s.ok && s.detail.is_none()));
        assert!(run(vec![], &mut |_: &str| {}).completed);
    }

    #[test]
    fn cargo_fetch_for_real_on_a_crate_without_deps() {
        if find_on_path(&Cmd::new("cargo")).is_none() {
            eprintln!("skipping: cargo is not on PATH");
            return;
        }
        let d = tmp();
        write(
            d.path(),
            "Cargo.toml",
            b"[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        );
        write(
            d.path(),
            "Cargo.lock",
            b"# This file is automatically @generated by Cargo.\n\
              # It is not intended for manual editing.\n\
              version = 3\n\n\
              [[package]]\nname = \"tiny\"\nversion = \"0.1.0\"\n",
        );
        fs::create_dir(d.path().join("src")).unwrap();
        write(&d.path().join("src"), "lib.rs", b"");
        assert_eq!(detect(d.path()), vec![Ecosystem::Cargo]);
        let cold = tmp();
        for cache in [
            CacheMode::Shared,
            CacheMode::Cold(cold.path().to_path_buf()),
        ] {
            let steps = plan_steps(d.path(), &detect(d.path()), None, &cache);
            let report = run(steps, &mut |_: &str| {});
            assert!(report.completed, "{cache:?}: {report:?}");
        }
        let lock = fs::read(d.path().join("Cargo.lock")).unwrap();
        assert!(lock.ends_with(b"name = \"tiny\"\nversion = \"0.1.0\"\n"));

        // It really ran cargo: a lockfile that needs updating fails under --locked.
        write(d.path(), "Cargo.lock", b"version = 3\n");
        let steps = plan_steps(d.path(), &[Ecosystem::Cargo], None, &CacheMode::Shared);
        let report = run(steps, &mut |_: &str| {});
        assert!(!report.completed, "{report:?}");
        let s = &report.steps[0];
        assert!(!s.missing_tool, "{s:?}");
        assert!(s.detail.as_deref().unwrap().contains("--locked"), "{s:?}");
    }
}
