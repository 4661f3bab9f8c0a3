//! Runtime of `git-treebox-guard`, the hook binary installed into every box.
//!
//! A box's worktree gets a per-worktree `core.hooksPath` pointing at a private directory
//! holding one copy of this binary, hard-linked under every name in
//! [`crate::guard::HOOK_NAMES`]. Git runs it as `<hooks>/<name> ARGS…`; it then
//!
//! - as `pre-push`: reads stdin, refuses pushes of placeholder branches (see
//!   [`crate::guard`]), and otherwise chains to the repo's own `pre-push` with the same
//!   stdin;
//! - as any other hook: runs the repo's own hook of the same name (exec, no buffering),
//!   so husky, lefthook or `.git/hooks` keep working inside a box.
//!
//! The repo's own hooks dir is what git would use without the box's override: the last
//! `core.hooksPath` outside the `worktree` scope, else `<git-common-dir>/hooks`.
//!
//! Invariants: std plus the pure guard module only (the binary is copied into every box
//! and must stay small and self-sufficient: no libgit2, no other treebox binary on
//! PATH); never panics on odd input; fails closed for `pre-push`; never chains to its
//! own directory (no loop). The `git` it asks runs with the hook's environment, in the
//! directory git ran the hook from, so it sees exactly the repository git saw.
//!
//! Called only from `hooks/git-treebox-guard.rs`.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use crate::guard::{self, Decision, HOOK_NAMES};

const USAGE: &str = "\
git-treebox-guard: the hook treebox installs into every box

Usage: <hooks-dir>/<hook-name> [HOOK ARGS...]     (how git runs it)
       git-treebox-guard <hook-name> [HOOK ARGS...]
       git-treebox-guard --version | --help

As pre-push it refuses pushes of placeholder branches (treebox/*); every hook,
pre-push included, then runs the repository's own hook of the same name.
";

/// Entry point; returns the process exit code.
pub fn main() -> i32 {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let invoked_as = argv
        .first()
        .map(Path::new)
        .and_then(Path::file_name)
        .and_then(OsStr::to_str)
        .and_then(hook_name);
    if let Some(name) = invoked_as {
        return run_hook(name, &argv[1..]);
    }
    let first = argv.get(1).and_then(|a| a.to_str());
    if let Some(name) = first.and_then(hook_name) {
        return run_hook(name, &argv[2..]);
    }
    match first {
        Some("--version" | "-V") => {
            out(&format!(
                "git-treebox-guard {}\n",
                env!("CARGO_PKG_VERSION")
            ));
            0
        }
        Some("--help" | "-h") => {
            out(USAGE);
            0
        }
        Some(other) => {
            err(&format!(
                "git-treebox-guard: `{}` is not a hook name\n\n{USAGE}",
                sanitize(other)
            ));
            2
        }
        None if argv.len() > 1 => {
            err(&format!(
                "git-treebox-guard: argument is not valid UTF-8\n\n{USAGE}"
            ));
            2
        }
        None => {
            err(USAGE);
            2
        }
    }
}

fn hook_name(s: &str) -> Option<&'static str> {
    HOOK_NAMES.iter().copied().find(|n| *n == s)
}

fn run_hook(name: &'static str, args: &[OsString]) -> i32 {
    let result = if name == "pre-push" {
        pre_push(args)
    } else {
        forward(name, args)
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            err(&format!("treebox guard: {name}: {e}\n"));
            1
        }
    }
}

/// pre-push: decide on the buffered stdin, then chain with the same bytes.
fn pre_push(args: &[OsString]) -> Result<i32, String> {
    let mut input = Vec::new();
    io::stdin()
        .read_to_end(&mut input)
        .map_err(|e| format!("cannot read the refs to push from stdin: {e}"))?;
    // Ref names are bytes; a lossy view keeps the ASCII `treebox/` prefixes intact.
    let text = String::from_utf8_lossy(&input);
    let lines = guard::parse_pre_push(&text)
        .map_err(|e| format!("{e}; refusing the push (fail closed)"))?;
    let head = if lines.iter().any(|l| l.local_ref == "HEAD") {
        head_branch()?
    } else {
        None
    };
    match guard::decide(&lines, head.as_deref()) {
        Decision::Refuse { message, .. } => {
            err(&format!("treebox guard: {message}\n"));
            Ok(1)
        }
        Decision::Allow => match target_hook("pre-push")? {
            None => Ok(0),
            Some(hook) => run_with_stdin(&hook, args, &input),
        },
    }
}

/// Any other hook: replace this process with the repo's own hook, if there is one.
fn forward(name: &str, args: &[OsString]) -> Result<i32, String> {
    let Some(hook) = target_hook(name)? else {
        return Ok(0);
    };
    let e = Command::new(&hook).args(args).exec();
    if e.raw_os_error() == Some(ENOEXEC) {
        // Like git: a hook without a `#!` line is a shell script.
        let e = Command::new("/bin/sh").arg(&hook).args(args).exec();
        return Err(spawn_error(&hook, &e));
    }
    Err(spawn_error(&hook, &e))
}

const ENOEXEC: i32 = 8;

fn run_with_stdin(hook: &Path, args: &[OsString], input: &[u8]) -> Result<i32, String> {
    let spawn = |program: &Path, prefix: Option<&Path>| {
        let mut cmd = match prefix {
            Some(p) => {
                let mut c = Command::new(program);
                c.arg(p);
                c
            }
            None => Command::new(program),
        };
        cmd.args(args).stdin(Stdio::piped()).spawn()
    };
    let mut child = match spawn(hook, None) {
        Err(e) if e.raw_os_error() == Some(ENOEXEC) => spawn(Path::new("/bin/sh"), Some(hook)),
        other => other,
    }
    .map_err(|e| spawn_error(hook, &e))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that exits without reading its stdin closes the pipe: not an error.
        match stdin.write_all(input) {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                let _ = child.wait();
                return Err(format!("cannot feed stdin to {}: {e}", hook.display()));
            }
            _ => {}
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for {}: {e}", hook.display()))?;
    Ok(exit_code(status))
}

fn exit_code(status: ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    }
}

fn spawn_error(hook: &Path, e: &io::Error) -> String {
    format!("cannot run {}: {e}", hook.display())
}

/// The repo's own executable hook `name`, or `None` when there is nothing to chain to:
/// the one a hook manager installed in this box (moved into [`guard::CHAINED_DIR`]
/// beside the guard), else the one in the repo's own hooks dir.
fn target_hook(name: &str) -> Result<Option<PathBuf>, String> {
    for own in own_paths() {
        let Some(dir) = own.parent() else { continue };
        let chained = dir.join(guard::CHAINED_DIR).join(name);
        if let Ok(meta) = std::fs::metadata(&chained) {
            if meta.is_file() && meta.permissions().mode() & 0o111 != 0 && !is_self(&meta) {
                return Ok(Some(chained));
            }
        }
    }
    let dir = repo_hooks_dir()?;
    if is_own_dir(&dir) {
        return Ok(None);
    }
    let path = dir.join(name);
    let Ok(meta) = std::fs::metadata(&path) else {
        return Ok(None);
    };
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 || is_self(&meta) {
        return Ok(None);
    }
    Ok(Some(path))
}

/// Where git would look for hooks without the box's per-worktree override.
fn repo_hooks_dir() -> Result<PathBuf, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current dir: {e}"))?;
    let out = git(&["config", "--show-scope", "--get-all", "core.hooksPath"])?;
    // Exit 1 means "not set"; anything else means git could not answer.
    if !(out.status.success() || out.status.code() == Some(1)) {
        return Err(git_failed("git config --get-all core.hooksPath", &out));
    }
    if let Some(value) = last_non_worktree_hooks_path(&out.stdout) {
        return Ok(resolve(&cwd, value));
    }
    let out = git(&["rev-parse", "--git-common-dir"])?;
    if !out.status.success() {
        return Err(git_failed("git rev-parse --git-common-dir", &out));
    }
    let common = trim_newline(&out.stdout);
    Ok(cwd.join(bytes_path(common)).join("hooks"))
}

/// From `git config --show-scope --get-all` output (`<scope>\t<value>` lines), the last
/// value not set in the `worktree` scope (that one is the box's own override).
fn last_non_worktree_hooks_path(stdout: &[u8]) -> Option<&[u8]> {
    stdout.split(|b| *b == b'\n').rev().find_map(|line| {
        let tab = line.iter().position(|b| *b == b'\t')?;
        let (scope, value) = (&line[..tab], &line[tab + 1..]);
        (scope != b"worktree" && !value.is_empty()).then_some(value)
    })
}

/// A hooks path as git reads it: `~/` expanded, relative to the hook's working dir.
fn resolve(cwd: &Path, value: &[u8]) -> PathBuf {
    if let Some(rest) = value.strip_prefix(b"~/") {
        if let Some(home) = std::env::var_os("HOME") {
            return PathBuf::from(home).join(bytes_path(rest));
        }
    }
    cwd.join(bytes_path(value))
}

fn is_own_dir(dir: &Path) -> bool {
    let Ok(dir) = dir.canonicalize() else {
        return false;
    };
    own_paths()
        .iter()
        .filter_map(|p| p.parent()?.canonicalize().ok())
        .any(|own| own == dir)
}

/// True when `meta` is this very binary (a hard link to it anywhere).
fn is_self(meta: &std::fs::Metadata) -> bool {
    own_paths()
        .iter()
        .any(|p| std::fs::metadata(p).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino()))
}

fn own_paths() -> Vec<PathBuf> {
    let mut paths = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        paths.push(exe);
    }
    if let Some(arg0) = std::env::args_os().next() {
        let arg0 = PathBuf::from(arg0);
        if arg0.components().count() > 1 {
            paths.push(arg0);
        }
    }
    paths
}

fn head_branch() -> Result<Option<String>, String> {
    let out = git(&["symbolic-ref", "-q", "HEAD"])?;
    match out.status.code() {
        Some(0) => Ok(Some(
            String::from_utf8_lossy(trim_newline(&out.stdout)).into_owned(),
        )),
        // Detached HEAD: not on any branch, so not on a placeholder.
        Some(1) => Ok(None),
        _ => Err(git_failed("git symbolic-ref -q HEAD", &out)),
    }
}

/// `git` from PATH in the current directory, hook environment kept, stdin closed.
fn git(args: &[&str]) -> Result<std::process::Output, String> {
    Command::new("git")
        .args(args)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run `git {}`: {e}", args.join(" ")))
}

fn git_failed(what: &str, out: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
    match last {
        Some(l) => format!(
            "`{what}` failed ({}): {}",
            exit_code(out.status),
            sanitize(l.trim())
        ),
        None => format!("`{what}` failed ({})", exit_code(out.status)),
    }
}

fn trim_newline(b: &[u8]) -> &[u8] {
    let b = b.strip_suffix(b"\n").unwrap_or(b);
    b.strip_suffix(b"\r").unwrap_or(b)
}

fn bytes_path(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(OsStr::from_bytes(b))
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

fn out(s: &str) {
    let _ = io::stdout().write_all(s.as_bytes());
    let _ = io::stdout().flush();
}

fn err(s: &str) {
    let _ = io::stderr().write_all(s.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_names_resolve() {
        assert_eq!(hook_name("pre-push"), Some("pre-push"));
        assert_eq!(hook_name("push-to-checkout"), None);
        assert_eq!(hook_name("git-treebox-guard"), None);
    }

    #[test]
    fn picks_last_non_worktree_hooks_path() {
        let out = b"global\t~/hooks\nlocal\t.husky/_\nworktree\t/x/treebox-hooks\n";
        assert_eq!(last_non_worktree_hooks_path(out), Some(&b".husky/_"[..]));
        assert_eq!(last_non_worktree_hooks_path(b"worktree\t/x\n"), None);
        assert_eq!(last_non_worktree_hooks_path(b""), None);
        assert_eq!(
            last_non_worktree_hooks_path(b"command\ta\tb\n"),
            Some(&b"a\tb"[..])
        );
    }

    #[test]
    fn resolves_relative_and_home() {
        let cwd = Path::new("/repo");
        assert_eq!(resolve(cwd, b".husky"), PathBuf::from("/repo/.husky"));
        assert_eq!(resolve(cwd, b"/abs/h"), PathBuf::from("/abs/h"));
        if let Some(home) = std::env::var_os("HOME") {
            assert_eq!(resolve(cwd, b"~/h"), PathBuf::from(home).join("h"));
        }
    }

    #[test]
    fn exit_codes() {
        assert_eq!(exit_code(ExitStatus::from_raw(3 << 8)), 3);
        assert_eq!(exit_code(ExitStatus::from_raw(9)), 137);
    }
}
