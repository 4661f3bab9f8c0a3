//! The one subprocess builder.
//!
//! Every child process treebox starts (git, package managers, the harness) is described
//! by a [`Cmd`]: program, arguments, environment changes, working directory and stdin.
//! `Display` renders it as one shell-quoted line, which is what `--print` and error
//! messages show. Running it returns a typed [`CmdError`] that keeps the command line
//! and the child's stderr, so a failure can always be reported precisely.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};

/// A child process, described before it is run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cmd {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub env_remove: Vec<OsString>,
    pub cwd: Option<PathBuf>,
    pub stdin: Option<Vec<u8>>,
    /// What ends the program's work should it be cut off — its client killed, or
    /// whoever waits on it hung up on — before it ended by itself: a program and its
    /// arguments, run with this command's environment ([`Cmd::ender_cmd`]). A program
    /// in a box's container is the engine client's, which leaves it running when
    /// killed; its ender ends it inside ([`crate::runner::oci::ending`]). Empty:
    /// nothing to end. Run by [`crate::session`], never shown.
    pub ender: Vec<OsString>,
    /// Give the program a stdin that this process holds open, writing nothing, until
    /// the program has ended ([`Cmd::output_any`]): when this process goes, however it
    /// goes, that stdin ends. A program in a box's container started `--held`
    /// ([`crate::runner::oci::launch::wrap`]) is ended then. Ignored with
    /// [`Cmd::stdin`] data.
    pub hold_stdin: bool,
}

/// Why a child process did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum CmdError {
    #[error("could not start `{line}`")]
    Spawn {
        line: String,
        #[source]
        source: std::io::Error,
    },
    #[error("`{line}` failed ({status}){}", stderr_suffix(.stderr))]
    Failed {
        line: String,
        status: ExitStatus,
        stderr: String,
    },
}

/// The child's own diagnosis: its first `error:` (else `fatal:`) line, often the
/// cause ("No space left on device"), and its last line when that is a diagnosis too;
/// a last line of advice prose (git's "and the repository exists.") is left out. No
/// such line: just the last line.
fn stderr_suffix(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let Some(last) = lines.last() else {
        return String::new();
    };
    let diagnosis = |l: &&&str| l.starts_with("error:") || l.starts_with("fatal:");
    let first = lines
        .iter()
        .find(|l| l.starts_with("error:"))
        .or_else(|| lines.iter().find(diagnosis));
    match first {
        Some(first) if first == last => format!(": {last}"),
        Some(first) if diagnosis(&last) => format!(": {first} / {last}"),
        Some(first) => format!(": {first}"),
        None => format!(": {last}"),
    }
}

impl CmdError {
    /// The child's stderr, when it ran at all.
    pub fn stderr(&self) -> &str {
        match self {
            CmdError::Failed { stderr, .. } => stderr,
            CmdError::Spawn { .. } => "",
        }
    }

    /// True when the program itself could not be found.
    pub fn is_not_found(&self) -> bool {
        matches!(self, CmdError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

impl Cmd {
    pub fn new(program: impl Into<OsString>) -> Self {
        Cmd {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            env_remove: Vec::new(),
            cwd: None,
            stdin: None,
            ender: Vec::new(),
            hold_stdin: false,
        }
    }

    /// This command with its stdin held open while it runs ([`Cmd::hold_stdin`]).
    pub fn holding_stdin(mut self) -> Self {
        self.hold_stdin = true;
        self
    }

    /// This command with `argv` as its [`Cmd::ender`].
    pub fn with_ender(mut self, argv: Vec<OsString>) -> Self {
        self.ender = argv;
        self
    }

    /// The command [`Cmd::ender`] describes: its argv with this command's environment
    /// and working directory; `None` when there is nothing to end.
    pub fn ender_cmd(&self) -> Option<Cmd> {
        let (program, args) = self.ender.split_first()?;
        let mut c = Cmd::new(program).args(args);
        c.env = self.env.clone();
        c.env_remove = self.env_remove.clone();
        c.cwd = self.cwd.clone();
        Some(c)
    }

    pub fn arg(mut self, a: impl Into<OsString>) -> Self {
        self.args.push(a.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn env(mut self, k: impl Into<OsString>, v: impl Into<OsString>) -> Self {
        self.env.push((k.into(), v.into()));
        self
    }

    pub fn env_remove(mut self, k: impl Into<OsString>) -> Self {
        self.env_remove.push(k.into());
        self
    }

    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = Some(dir.as_ref().to_path_buf());
        self
    }

    pub fn stdin_bytes(mut self, data: Vec<u8>) -> Self {
        self.stdin = Some(data);
        self
    }

    /// This command without what `git` adds when it runs `git treebox`: its exec dir,
    /// in `GIT_EXEC_PATH` and first on `PATH`. For a program the user works with (the
    /// agent, a shell in the box), which then has the environment the user's shell had;
    /// another git run there would otherwise take this one's helpers. Left as it is
    /// unless `PATH` begins with that dir (git's dispatch), or when it sets `PATH`.
    pub fn without_git_dispatch(self) -> Self {
        if self.env.iter().any(|(k, _)| k == "PATH") {
            return self;
        }
        let (Some(exec), Some(path)) =
            (std::env::var_os("GIT_EXEC_PATH"), std::env::var_os("PATH"))
        else {
            return self;
        };
        match path_without(exec.as_encoded_bytes(), path.as_encoded_bytes()) {
            // SAFETY: a tail of `path`'s bytes after a `:`, itself encoded bytes.
            Some(rest) => self.env_remove("GIT_EXEC_PATH").env("PATH", unsafe {
                OsString::from_encoded_bytes_unchecked(rest.to_vec())
            }),
            None => self,
        }
    }

    /// The `std::process::Command` this describes; stdin is null unless data was given.
    pub fn to_command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.args);
        for k in &self.env_remove {
            c.env_remove(k);
        }
        for (k, v) in &self.env {
            c.env(k, v);
        }
        if let Some(d) = &self.cwd {
            c.current_dir(d);
        }
        c
    }

    /// A compact form for error messages: the program and its arguments, without the
    /// environment, the working directory or git's `-c` pins.
    pub fn short(&self) -> String {
        let program = self.program.to_string_lossy();
        let git = program == "git";
        let mut out = vec![quote(&program)];
        let mut args = self.args.iter().map(|a| a.to_string_lossy());
        while let Some(a) = args.next() {
            if git && a == "-c" {
                args.next();
                continue;
            }
            out.push(quote(&a));
        }
        out.join(" ")
    }

    /// Run in the foreground with this process's terminal (stdin, stdout and stderr
    /// inherited), as a shell runs a job: while it runs, this process ignores the
    /// terminal's interrupt and quit signals, which are the child's to handle. Used to
    /// launch the agent or a shell in a box.
    pub fn run_in_foreground(&self) -> std::io::Result<ExitStatus> {
        self.run_in_foreground_noting(|_| {})
    }

    /// [`Cmd::run_in_foreground`], telling `spawned` the child's pid once it runs (so
    /// whoever must end it later can find it).
    pub fn run_in_foreground_noting(
        &self,
        spawned: impl FnOnce(u32),
    ) -> std::io::Result<ExitStatus> {
        // SAFETY: setting a signal disposition to SIG_IGN and back is async-signal-safe
        // and touches no Rust state.
        let (old_int, old_quit) = unsafe {
            (
                libc::signal(libc::SIGINT, libc::SIG_IGN),
                libc::signal(libc::SIGQUIT, libc::SIG_IGN),
            )
        };
        let mut c = self.to_command();
        {
            use std::os::unix::process::CommandExt;
            // SAFETY: only resets signal dispositions in the child before exec.
            unsafe {
                c.pre_exec(|| {
                    libc::signal(libc::SIGINT, libc::SIG_DFL);
                    libc::signal(libc::SIGQUIT, libc::SIG_DFL);
                    Ok(())
                });
            }
        }
        let status = c.spawn().and_then(|mut child| {
            spawned(child.id());
            child.wait()
        });
        // SAFETY: as above.
        unsafe {
            libc::signal(libc::SIGINT, old_int);
            libc::signal(libc::SIGQUIT, old_quit);
        }
        status
    }

    /// Run to completion capturing stdout and stderr; a non-zero exit is an error.
    pub fn output(&self) -> Result<Output, CmdError> {
        let out = self.output_any()?;
        if out.status.success() {
            Ok(out)
        } else {
            Err(CmdError::Failed {
                line: self.short(),
                status: out.status,
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            })
        }
    }

    /// Run to completion capturing stdout and stderr, whatever the exit status.
    pub fn output_any(&self) -> Result<Output, CmdError> {
        let mut c = self.to_command();
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        c.stdin(if self.stdin.is_some() || self.hold_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let spawn_err = |source| CmdError::Spawn {
            line: self.short(),
            source,
        };
        let mut child = c.spawn().map_err(spawn_err)?;
        let mut held = None;
        if let Some(data) = &self.stdin {
            if let Some(mut sin) = child.stdin.take() {
                // A child that exits without reading its stdin is not our failure.
                let _ = sin.write_all(data);
            }
        } else {
            // Kept out of `wait_with_output`, which would close it first.
            held = child.stdin.take();
        }
        let out = child.wait_with_output().map_err(spawn_err);
        drop(held);
        out
    }

    /// Run capturing its output, giving up after `limit`: `Ok(None)` then, with the
    /// child's whole process group (git's ssh, a credential helper) killed.
    pub fn output_within(&self, limit: std::time::Duration) -> Result<Option<Output>, CmdError> {
        use std::io::Read;
        use std::os::unix::process::CommandExt;
        use std::time::{Duration, Instant};
        let mut c = self.to_command();
        c.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = c.spawn().map_err(|source| CmdError::Spawn {
            line: self.to_string(),
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
                        line: self.to_string(),
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

    /// Run with no output kept, for at most `limit`: `Ok(None)` when it took longer
    /// (the child is killed and reaped).
    pub fn status_within(
        &self,
        limit: std::time::Duration,
    ) -> Result<Option<ExitStatus>, CmdError> {
        use wait_timeout::ChildExt;
        let mut c = self.to_command();
        c.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let spawn_err = |source| CmdError::Spawn {
            line: self.short(),
            source,
        };
        let mut child = c.spawn().map_err(spawn_err)?;
        match child.wait_timeout(limit).map_err(spawn_err)? {
            Some(status) => Ok(Some(status)),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                Ok(None)
            }
        }
    }

    /// Run capturing stdout and stderr; returns stdout on success (stderr is in the
    /// error otherwise).
    pub fn stdout_string(&self) -> Result<String, CmdError> {
        Ok(String::from_utf8_lossy(&self.output()?.stdout).into_owned())
    }

    /// Run with all three streams inherited from this process; returns the status.
    pub fn status_inherit(&self) -> Result<ExitStatus, CmdError> {
        let mut c = self.to_command();
        c.status().map_err(|source| CmdError::Spawn {
            line: self.to_string(),
            source,
        })
    }

    /// The environment changes as strings (lossy), e.g. to pass them on to `exec -e`.
    pub fn env_strings(&self) -> Vec<(String, String)> {
        self.env
            .iter()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .collect()
    }

    /// The argv as strings (lossy), e.g. for JSON output.
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(&self.program)
            .chain(self.args.iter())
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }
}

/// Is `program` a file in one of this process's `PATH` directories?
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// Quote one word for a POSIX shell.
pub fn quote(word: &str) -> String {
    shell_words::quote(word).into_owned()
}

impl fmt::Display for Cmd {
    /// One shell-quoted line: `cd DIR && VAR=val program args…` (cwd and env only when set).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if let Some(d) = &self.cwd {
            write!(f, "cd {} && ", quote(&d.to_string_lossy()))?;
        }
        for k in &self.env_remove {
            parts.push(format!("-u {}", quote(&k.to_string_lossy())));
        }
        if !self.env_remove.is_empty() || !self.env.is_empty() {
            // `env` makes removals expressible and keeps the line valid in any shell.
            f.write_str("env ")?;
            for p in &parts {
                write!(f, "{p} ")?;
            }
            for (k, v) in &self.env {
                write!(
                    f,
                    "{}={} ",
                    k.to_string_lossy(),
                    quote(&v.to_string_lossy())
                )?;
            }
        }
        let argv: Vec<String> = self.argv().iter().map(|a| quote(a)).collect();
        f.write_str(&argv.join(" "))
    }
}

/// Exit code a shell would report for a status: the code, or 128+signal.
pub fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        (None, None) => 1,
    }
}

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

/// `path` without its first entry when that is `dir` and others follow.
fn path_without<'a>(dir: &[u8], path: &'a [u8]) -> Option<&'a [u8]> {
    path.strip_prefix(dir)
        .and_then(|r| r.strip_prefix(b":"))
        .filter(|r| !dir.is_empty() && !r.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_dispatch_is_taken_out_of_path_only_where_git_put_it() {
        let core = b"/usr/lib/git-core".as_slice();
        assert_eq!(
            path_without(core, b"/usr/lib/git-core:/h/bin:/usr/bin"),
            Some(b"/h/bin:/usr/bin".as_slice())
        );
        for path in [
            "/h/bin:/usr/lib/git-core",
            "/usr/lib/git-core",
            "/usr/lib/git-core:",
            "/usr/lib/git-core-2:/b",
        ] {
            assert_eq!(path_without(core, path.as_bytes()), None, "{path}");
        }
        assert_eq!(path_without(b"", b":/usr/bin"), None);
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
    fn display_quotes_and_includes_cwd_and_env() {
        let c = Cmd::new("claude")
            .arg("--dangerously-skip-permissions")
            .arg("fix the bug")
            .env("A", "b c")
            .cwd("/tmp/x y");
        assert_eq!(
            c.to_string(),
            "cd '/tmp/x y' && env A='b c' claude --dangerously-skip-permissions 'fix the bug'"
        );
    }

    #[test]
    fn failure_keeps_line_and_stderr() {
        let e = Cmd::new("sh")
            .args(["-c", "echo boom >&2; exit 3"])
            .output()
            .unwrap_err();
        assert!(e.to_string().contains("boom"), "{e}");
        assert!(e.to_string().contains("sh -c"), "{e}");
        assert_eq!(e.stderr().trim(), "boom");
    }

    #[test]
    fn errors_name_the_cause_and_a_short_command() {
        let e = Cmd::new("sh")
            .args(["-c", "echo 'error: disk: No space left on device' >&2; echo 'fatal: gave up' >&2; exit 1"])
            .env("X", "1")
            .output()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("No space left on device") && e.contains("fatal: gave up"),
            "{e}"
        );
        assert!(!e.contains("env X=1"), "{e}");
        let c = Cmd::new("git").args(["-c", "core.hooksPath=/dev/null", "-C", "/r", "fetch"]);
        assert_eq!(c.short(), "git -C /r fetch");
    }

    #[test]
    fn a_failures_diagnosis_leaves_advice_prose_out() {
        let git = "fatal: '/x/origin.git' does not appear to be a git repository\n\
                   fatal: Could not read from remote repository.\n\n\
                   Please make sure you have the correct access rights\n\
                   and the repository exists.\n";
        assert_eq!(
            stderr_suffix(git),
            ": fatal: '/x/origin.git' does not appear to be a git repository"
        );
        assert_eq!(stderr_suffix("plain words\n"), ": plain words");
        assert_eq!(
            stderr_suffix("error: a\nfatal: b\n"),
            ": error: a / fatal: b"
        );
        assert_eq!(stderr_suffix(""), "");
    }

    #[test]
    fn missing_program_is_not_found() {
        let e = Cmd::new("/nonexistent/prog").output().unwrap_err();
        assert!(e.is_not_found());
    }

    #[test]
    fn stdin_is_fed() {
        let out = Cmd::new("cat")
            .stdin_bytes(b"hi".to_vec())
            .output()
            .unwrap();
        assert_eq!(out.stdout, b"hi");
    }

    /// A held stdin stays open, empty, while the program runs (a reader it leaves
    /// behind sees no end), and ends once this process is done waiting on it.
    #[test]
    fn a_held_stdin_ends_only_after_the_program() {
        let d = tempfile::tempdir().unwrap();
        let eof = d.path().join("eof");
        let script = r#"exec 3<&0
(exec 0<&3 3<&-; while read -r _; do :; done; : >"$1") >/dev/null 2>&1 &
exec 3<&-; sleep 0.3; [ -e "$1" ] && echo closed || echo held"#;
        let out = Cmd::new("sh")
            .args(["-c", script, "sh"])
            .arg(&eof)
            .holding_stdin()
            .output_any()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "held");
        let since = std::time::Instant::now();
        while !eof.exists() && since.elapsed() < std::time::Duration::from_secs(10) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(eof.exists(), "the held stdin never ended");
    }
}
