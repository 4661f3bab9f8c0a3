//! The `ssh` command for a machine of the user's config, and one call over it.
//!
//! The program is the machine's `sshCommand` (split as a shell splits it, never run
//! through one) or `ssh`, with `BatchMode` (no password or host-key question is ever
//! asked: a machine that would ask is unreachable), a connect timeout, and one
//! multiplexed connection per machine kept a minute (`ControlMaster`/`ControlPersist`,
//! its socket in the user's runtime dir under a short name of our own). Once that
//! connection is up, a call is a session opened on it directly ([`super::mux`]), with
//! no `ssh` started. Host keys are
//! checked as the user's ssh config says; nothing here turns that off. The remote
//! command is fixed: the entry point's path, quoted; the request travels on stdin.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{frame, RemoteError, ENTRY_ARG, PROTOCOL};
use crate::config::Machine;

/// How long a connection may take to come up.
const CONNECT_TIMEOUT_S: u32 = 5;
/// How long an idle shared connection stays up.
const PERSIST_S: u32 = 60;
/// The most of a machine's stderr kept for an error message.
const MAX_STDERR: usize = 16 << 10;

/// Where the shared connections' sockets live: `$XDG_RUNTIME_DIR/treebox-ssh`, else
/// `/tmp/treebox-ssh-<uid>` (0700 either way).
pub fn control_dir() -> PathBuf {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty())
        .map(|d| PathBuf::from(d).join("treebox-ssh"));
    // SAFETY: getuid cannot fail and touches no memory.
    let uid = unsafe { libc::getuid() };
    base.unwrap_or_else(|| PathBuf::from(format!("/tmp/treebox-ssh-{uid}")))
}

/// The `ssh` argv that runs `remote` on `m` with a terminal there when `tty` (`-t`),
/// else none (`-T`).
pub fn argv_tty(m: &Machine, remote: &str, tty: bool) -> Vec<String> {
    let mut a = argv(m, remote);
    let at = a.len() - 2;
    a.insert(at, if tty { "-t" } else { "-T" }.to_string());
    a
}

/// The `ssh` argv that runs `remote` on `m`, without the program's own stdin.
pub fn argv(m: &Machine, remote: &str) -> Vec<String> {
    let mut argv = m
        .ssh_command
        .clone()
        .unwrap_or_else(|| vec!["ssh".to_string()]);
    let control = control_path(m);
    for opt in [
        "BatchMode=yes".to_string(),
        format!("ConnectTimeout={CONNECT_TIMEOUT_S}"),
        "ControlMaster=auto".to_string(),
        format!("ControlPersist={PERSIST_S}"),
        format!("ControlPath={}", control.to_string_lossy()),
    ] {
        argv.push("-o".into());
        argv.push(opt);
    }
    argv.push(m.ssh.clone());
    argv.push(remote.to_string());
    argv
}

/// The socket of `m`'s shared connection: named for its destination and `sshCommand`
/// (16 hex digits of their hash, so the path fits a socket's 108 bytes with room for
/// the suffix `ssh` adds while it makes one), which [`super::mux`] can find without
/// asking `ssh` what `%C` would be.
pub(super) fn control_path(m: &Machine) -> PathBuf {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for part in m.ssh_command.iter().flatten() {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.update([1]);
    h.update(m.ssh.as_bytes());
    control_dir().join(hex::encode(&h.finalize()[..8]))
}

/// Forward this machine's `127.0.0.1:local` to `127.0.0.1:there` on `m`, on its shared
/// connection (up since this command's last call there), for as long as that lasts.
pub fn forward(m: &Machine, local: u16, there: u16) -> Result<(), String> {
    super::mux::forward(&control_path(m), local, there)
}

/// The command line the other machine's shell runs: its treebox's entry point.
pub fn entry_command(m: &Machine) -> String {
    let program = match &m.path {
        Some(dir) => format!("{}/git-treebox", dir.trim_end_matches('/')),
        None => "git-treebox".to_string(),
    };
    format!("exec {} {ENTRY_ARG}", crate::cmd::quote(&program))
}

/// Send `request` to `m`'s treebox and read its answer: at most
/// [`frame::MAX_DOCUMENT`] bytes (and a frame line) within `limit`, else the
/// connection is killed. A machine speaking another protocol is refused.
pub fn call(m: &Machine, request: &Value, limit: Duration) -> Result<Value, RemoteError> {
    call_with(m, request, None, limit)
}

/// [`call`], the request's line followed on the channel by the bytes of `payload` (a
/// bundle for the mirror there).
pub fn call_with(
    m: &Machine,
    request: &Value,
    payload: Option<&std::path::Path>,
    limit: Duration,
) -> Result<Value, RemoteError> {
    let deadline = Instant::now() + limit;
    let started = start(m, request, payload, (deadline, limit))?;
    let cap = frame::MAX_DOCUMENT + 256;
    let out = capped(Some(started.stdout), cap);
    let err = capped(Some(started.stderr), MAX_STDERR);
    let status = wait(m, started.running, (deadline, limit))?;
    let (out, over) = out.join().unwrap_or_default();
    let (err, _) = err.join().unwrap_or_default();
    if over {
        return Err(RemoteError::TooMuch {
            machine: m.name.clone(),
            limit: cap,
        });
    }
    judge(m, status, &out, &err)
}

/// [`call`] for an answer that carries a payload (`"payload": N` in its document, at
/// most `max` bytes): the payload is written to `into` as it arrives, never held
/// whole, and the document is returned once all N bytes are there. A document
/// without a payload (a refusal) is returned as [`call`] returns it.
pub fn call_receiving(
    m: &Machine,
    request: &Value,
    limit: Duration,
    into: &std::path::Path,
    max: u64,
) -> Result<Value, RemoteError> {
    let file = std::fs::File::create(into).map_err(|e| RemoteError::Local {
        machine: m.name.clone(),
        what: format!("could not write {}: {e}", into.display()),
    })?;
    let deadline = Instant::now() + limit;
    let started = start(m, request, None, (deadline, limit))?;
    let out = receiving(Some(started.stdout), file, max);
    let err = capped(Some(started.stderr), MAX_STDERR);
    let status = wait(m, started.running, (deadline, limit))?;
    let got = out.join().unwrap_or(Received::Broken);
    let (err, _) = err.join().unwrap_or_default();
    let local = |what: String| RemoteError::Local {
        machine: m.name.clone(),
        what,
    };
    match got {
        Received::Document(out) => judge(m, status, &out, &err),
        Received::Payload { head, wanted, got } if got == wanted => judge(m, status, &head, &err),
        // A connection lost mid-way is ssh's failure; else the machine's.
        Received::Payload { .. } if status.code() == Some(255) => judge(m, status, b"", &err),
        Received::Payload { wanted, got, .. } => Err(local(format!(
            "its bundle stopped at {got} of {wanted} bytes"
        ))),
        Received::TooLarge(n) => Err(local(format!("its bundle is {n} bytes, over {max}"))),
        Received::Write(e) => Err(local(format!("could not write {}: {e}", into.display()))),
        Received::Over => Err(RemoteError::TooMuch {
            machine: m.name.clone(),
            limit: frame::MAX_DOCUMENT + 256,
        }),
        Received::Broken => Err(local("reading its answer crashed".into())),
    }
}

/// A call under way: a session on the machine's shared connection, or `ssh` started
/// for it (no connection to share yet, or one that would not take the session).
enum Running {
    Shared(super::mux::Session),
    Ssh(std::process::Child),
}

/// A started call: how it ends, and its stdout and stderr.
struct Started {
    running: Running,
    stdout: Box<dyn Read + Send>,
    stderr: Box<dyn Read + Send>,
}

/// Start the entry point on `m`, the request (and `payload`'s bytes) fed to its stdin
/// on a thread of its own.
fn start(
    m: &Machine,
    request: &Value,
    payload: Option<&std::path::Path>,
    (deadline, limit): (Instant, Duration),
) -> Result<Started, RemoteError> {
    let dir = control_dir();
    let _ = std::fs::create_dir_all(&dir);
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
    }
    let (started, stdin): (Started, Box<dyn Write + Send>) =
        match super::mux::open(&control_path(m), &entry_command(m), deadline) {
            super::mux::Opening::Timeout => {
                return Err(RemoteError::Timeout {
                    machine: m.name.clone(),
                    limit,
                })
            }
            super::mux::Opening::Opened(o) => (
                Started {
                    running: Running::Shared(o.session),
                    stdout: Box::new(o.stdout),
                    stderr: Box::new(o.stderr),
                },
                Box::new(o.stdin),
            ),
            super::mux::Opening::NoMaster => {
                let mut child = spawn(m)?;
                let (Some(stdin), Some(stdout), Some(stderr)) =
                    (child.stdin.take(), child.stdout.take(), child.stderr.take())
                else {
                    unreachable!("all three are piped");
                };
                (
                    Started {
                        running: Running::Ssh(child),
                        stdout: Box::new(stdout),
                        stderr: Box::new(stderr),
                    },
                    Box::new(stdin),
                )
            }
        };
    let mut body = serde_json::to_vec(request).expect("a JSON value serializes");
    body.push(b'\n');
    let payload = payload.map(std::path::Path::to_path_buf);
    // On a thread of its own: a machine that answers before it has read it all is not
    // kept from answering. One that does not read it makes the write fail: its answer
    // says why.
    std::thread::spawn(move || {
        let mut stdin = stdin;
        if stdin.write_all(&body).is_err() {
            return;
        }
        if let Some(p) = payload {
            if let Ok(mut f) = std::fs::File::open(p) {
                let _ = std::io::copy(&mut f, &mut stdin);
            }
        }
    });
    Ok(started)
}

/// `ssh` started for the entry point on `m`, all three of its stdio piped.
fn spawn(m: &Machine) -> Result<std::process::Child, RemoteError> {
    let argv = argv(m, &entry_command(m));
    let mut c = Command::new(&argv[0]);
    c.args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    {
        use std::os::unix::process::CommandExt;
        c.process_group(0);
        // Killed with the thread that asks: a call this process gives up by ending
        // (a `watch` quit while a machine was being asked) leaves no ssh behind,
        // waiting on a machine that may never answer. A shared connection's master
        // has forked away from it and lives on.
        // SAFETY: prctl(2) is async-signal-safe and touches no memory of this process.
        unsafe {
            c.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    c.spawn().map_err(|source| RemoteError::Spawn {
        program: argv[0].clone(),
        source,
    })
}

/// Wait for the call until `deadline` (`limit` from its start); past it, the session is closed (or `ssh`'s process
/// group killed). `ssh` is looked at every millisecond: a listing's answer takes a
/// few, and each look is one `waitpid`.
fn wait(
    m: &Machine,
    running: Running,
    (deadline, limit): (Instant, Duration),
) -> Result<std::process::ExitStatus, RemoteError> {
    use std::os::unix::process::ExitStatusExt;
    let timeout = || RemoteError::Timeout {
        machine: m.name.clone(),
        limit,
    };
    let mut child = match running {
        Running::Shared(session) => {
            return match session.wait(deadline) {
                super::mux::Ended::Exit(code) => Ok(std::process::ExitStatus::from_raw(code << 8)),
                super::mux::Ended::Timeout => Err(timeout()),
            }
        }
        Running::Ssh(child) => child,
    };
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return Ok(st),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
            Ok(None) | Err(_) => break,
        }
    }
    kill_group(&child);
    let _ = child.wait();
    Err(timeout())
}

/// The answer in `out` (its stdout up to the frame), judged: ssh's own failure, a
/// frame, the protocol, a refusal.
fn judge(
    m: &Machine,
    status: std::process::ExitStatus,
    out: &[u8],
    err: &[u8],
) -> Result<Value, RemoteError> {
    let machine = m.name.clone();
    if status.code() == Some(255) {
        let why = String::from_utf8_lossy(err);
        let why = why
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("ssh failed");
        return Err(RemoteError::Unreachable {
            machine,
            why: crate::sanitize::line(why.trim()),
        });
    }
    let (protocol, doc) = frame::read(out).map_err(|source| RemoteError::Frame {
        machine: machine.clone(),
        source,
    })?;
    if protocol != PROTOCOL {
        let version = doc["version"].as_str().unwrap_or("unknown");
        return Err(RemoteError::Protocol {
            machine,
            theirs: protocol,
            version: crate::sanitize::line(version),
        });
    }
    if let Some(e) = doc.get("error") {
        let text = |k: &str, n: usize| {
            e[k].as_str()
                .map(|s| crate::sanitize::line(&s.chars().take(n).collect::<String>()))
        };
        // Its exit code, within the documented ones (a machine cannot pick 0).
        let code = e["code"]
            .as_i64()
            .filter(|c| (1..=9).contains(c))
            .map_or(1, |c| c as i32);
        return Err(RemoteError::Refused {
            machine,
            kind: text("kind", 40).unwrap_or_default(),
            code,
            message: text("message", 2000).unwrap_or_else(|| "no reason given".into()),
            hint: text("hint", 2000),
        });
    }
    Ok(doc)
}

/// What [`receiving`] read.
enum Received {
    /// The output held no payload: all of it (capped), for [`judge`].
    Document(Vec<u8>),
    /// A frame whose document named a payload of `wanted` bytes; `got` were written.
    Payload {
        head: Vec<u8>,
        wanted: u64,
        got: u64,
    },
    /// The payload it named is over the cap: nothing was written.
    TooLarge(u64),
    Write(std::io::Error),
    /// More output than a document before any frame.
    Over,
    Broken,
}

/// Read `pipe`: its frame (as [`capped`] would), then, when the document names a
/// payload within `max`, exactly that many bytes into `file`; the rest is drained.
fn receiving(
    pipe: Option<impl Read + Send + 'static>,
    mut file: std::fs::File,
    max: u64,
) -> std::thread::JoinHandle<Received> {
    std::thread::spawn(move || {
        let Some(mut p) = pipe else {
            return Received::Document(Vec::new());
        };
        let cap = frame::MAX_DOCUMENT + 256;
        let mut head = Vec::new();
        let mut chunk = vec![0u8; 64 << 10];
        let drain = |p: &mut dyn Read| {
            let _ = std::io::copy(p, &mut std::io::sink());
        };
        loop {
            let n = match p.read(&mut chunk) {
                Ok(0) | Err(_) => return Received::Document(head),
                Ok(n) => n,
            };
            head.extend_from_slice(&chunk[..n]);
            if let Ok((_, doc, Some(after))) = frame::read_at(&head) {
                let Some(wanted) = doc["payload"].as_u64() else {
                    drain(&mut p);
                    return Received::Document(head);
                };
                if wanted > max {
                    drain(&mut p);
                    return Received::TooLarge(wanted);
                }
                let early = head.split_off(after);
                let early = &early[..early.len().min(wanted as usize)];
                if let Err(e) = file.write_all(early) {
                    drain(&mut p);
                    return Received::Write(e);
                }
                let rest = wanted - early.len() as u64;
                let copied = std::io::copy(&mut (&mut p).take(rest), &mut file);
                drain(&mut p);
                return match copied.and_then(|c| file.sync_all().map(|()| c)) {
                    Ok(c) => Received::Payload {
                        head,
                        wanted,
                        got: early.len() as u64 + c,
                    },
                    Err(e) => Received::Write(e),
                };
            }
            if head.len() > cap {
                drain(&mut p);
                return Received::Over;
            }
        }
    })
}

/// Read `pipe` to its end keeping at most `cap` bytes; `true` when there was more.
fn capped(
    pipe: Option<impl Read + Send + 'static>,
    cap: usize,
) -> std::thread::JoinHandle<(Vec<u8>, bool)> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let Some(p) = pipe else {
            return (buf, false);
        };
        let mut p = p.take(cap as u64 + 1);
        let _ = p.read_to_end(&mut buf);
        let over = buf.len() > cap;
        buf.truncate(cap);
        // Drain the rest unread, so the other side is not blocked on a full pipe.
        let _ = std::io::copy(&mut p.into_inner(), &mut std::io::sink());
        (buf, over)
    })
}

/// Kill the child's process group (ssh and anything its `sshCommand` started).
fn kill_group(child: &std::process::Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negated pid signals that process group; no memory.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Machine {
        Machine {
            name: "big".into(),
            ssh: "me@big".into(),
            isolation: None,
            path: Some("/opt/tree box/bin/".into()),
            ssh_command: Some(vec!["ssh".into(), "-F".into(), "/home/me/cfg".into()]),
            forward_env: Vec::new(),
            fetch_origin: false,
        }
    }

    #[test]
    fn the_command_is_fixed_and_the_destination_last_before_it() {
        let m = machine();
        let remote = entry_command(&m);
        assert_eq!(
            remote,
            "exec '/opt/tree box/bin/git-treebox' __treebox-remote"
        );
        let argv = argv(&m, &remote);
        assert_eq!(&argv[..3], ["ssh", "-F", "/home/me/cfg"]);
        assert!(argv.contains(&"BatchMode=yes".to_string()), "{argv:?}");
        assert_eq!(argv[argv.len() - 2], "me@big");
        assert_eq!(argv[argv.len() - 1], remote);
        let control = argv.iter().find(|a| a.starts_with("ControlPath=")).unwrap();
        let leaf = control.rsplit('/').next().unwrap();
        assert_eq!(leaf.len(), 16, "{control}");
        let other = Machine {
            ssh: "me@small".into(),
            ..machine()
        };
        assert_ne!(control_path(&m), control_path(&other));
        let plain = Machine {
            path: None,
            ssh_command: None,
            ..machine()
        };
        assert_eq!(argv_program(&plain), "ssh");
        assert_eq!(entry_command(&plain), "exec git-treebox __treebox-remote");
    }

    fn argv_program(m: &Machine) -> String {
        argv(m, "x")[0].clone()
    }
}
