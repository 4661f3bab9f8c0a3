//! A call on a machine's shared connection without starting `ssh` for it.
//!
//! Once a machine's master connection is up (`ControlMaster`, started by the first
//! `ssh` of a command), every later call is OpenSSH's own multiplexing protocol
//! (`PROTOCOL.mux`, version 4) spoken to the master's socket: a hello each way, a new
//! session carrying the remote command, this process's three pipe ends handed over
//! (`SCM_RIGHTS`), then the exit message. It is what `ssh` does as a passenger, less
//! its start-up (a dozen shared libraries and OpenSSL's config: about 5 ms of a
//! 2-core machine's time per call, twice that in a listing of two machines). Anything
//! other than a master that answers as one (no socket, a stale one, another version)
//! gives `None` before any request was sent, and the caller starts `ssh` instead.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

const MUX_MSG_HELLO: u32 = 0x0000_0001;
const MUX_C_NEW_SESSION: u32 = 0x1000_0002;
const MUX_C_OPEN_FWD: u32 = 0x1000_0006;
const MUX_S_OK: u32 = 0x8000_0001;
const MUX_S_PERMISSION_DENIED: u32 = 0x8000_0002;
const MUX_S_FAILURE: u32 = 0x8000_0003;
/// A local forward (`-L`).
const MUX_FWD_LOCAL: u32 = 1;
const MUX_S_EXIT_MESSAGE: u32 = 0x8000_0004;
const MUX_S_SESSION_OPENED: u32 = 0x8000_0006;
const MUX_S_TTY_ALLOC_FAIL: u32 = 0x8000_0008;
const VERSION: u32 = 4;
/// No escape character (no terminal is asked for either).
const NO_ESCAPE: u32 = 0xffff_ffff;
/// The most a master's message may hold: its messages here are a few words.
const MAX_MESSAGE: usize = 64 << 10;
/// How long a master has to answer the hello and the session request.
const HANDSHAKE: Duration = Duration::from_secs(5);

/// A session opened on a master: the command's stdin, stdout and stderr here.
pub struct Opened {
    pub session: Session,
    pub stdin: std::io::PipeWriter,
    pub stdout: std::io::PipeReader,
    pub stderr: std::io::PipeReader,
}

/// The control connection of an open session: its exit message comes on it, and
/// closing it closes the session.
pub struct Session {
    sock: UnixStream,
}

/// How a session ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// Its command's exit value; 255 when the master went away without one (as `ssh`
    /// reports a lost connection).
    Exit(i32),
    /// Not within the time given: the session was closed.
    Timeout,
}

/// What came of asking a master for a session.
pub enum Opening {
    Opened(Opened),
    /// No master there to share, or one that would not take the session: nothing was
    /// started on the machine.
    NoMaster,
    /// The master did not answer by the deadline (the machine hangs; `ssh` would wait
    /// on the same master).
    Timeout,
}

/// Open a session running `command` on the master whose socket is `path`, answered
/// by `deadline` (and within [`HANDSHAKE`]).
pub fn open(path: &Path, command: &str, deadline: Instant) -> Opening {
    let Ok(mut sock) = UnixStream::connect(path) else {
        return Opening::NoMaster;
    };
    let left = deadline
        .saturating_duration_since(Instant::now())
        .min(HANDSHAKE)
        .max(Duration::from_millis(1));
    if sock.set_read_timeout(Some(left)).is_err() || sock.set_write_timeout(Some(left)).is_err() {
        return Opening::NoMaster;
    }
    match session(&mut sock, command) {
        Ok(Some((stdin, stdout, stderr))) => Opening::Opened(Opened {
            session: Session { sock },
            stdin,
            stdout,
            stderr,
        }),
        Ok(None) => Opening::NoMaster,
        Err(e) if timed_out(&e) => Opening::Timeout,
        Err(_) => Opening::NoMaster,
    }
}

/// The hello each way and the session request on `sock`: the command's stdin, stdout
/// and stderr here once the master has opened it; `None` when it is not a master of
/// this version or refused the session.
#[allow(clippy::type_complexity)]
fn session(
    sock: &mut UnixStream,
    command: &str,
) -> std::io::Result<
    Option<(
        std::io::PipeWriter,
        std::io::PipeReader,
        std::io::PipeReader,
    )>,
> {
    let mut hello = Vec::new();
    put_u32(&mut hello, MUX_MSG_HELLO);
    put_u32(&mut hello, VERSION);
    send(sock, &hello)?;
    let theirs = receive(sock)?;
    let mut r = Reader(&theirs);
    if (r.u32(), r.u32()) != (Some(MUX_MSG_HELLO), Some(VERSION)) {
        return Ok(None);
    }
    let (stdin_there, stdin) = std::io::pipe()?;
    let (stdout, stdout_there) = std::io::pipe()?;
    let (stderr, stderr_there) = std::io::pipe()?;
    let request_id = 0;
    let mut m = Vec::new();
    put_u32(&mut m, MUX_C_NEW_SESSION);
    put_u32(&mut m, request_id);
    put_string(&mut m, b""); // reserved
    put_u32(&mut m, 0); // no terminal
    put_u32(&mut m, 0); // no X11 forwarding
    put_u32(&mut m, 0); // no agent forwarding
    put_u32(&mut m, 0); // not a subsystem
    put_u32(&mut m, NO_ESCAPE);
    put_string(&mut m, b""); // terminal type
    put_string(&mut m, command.as_bytes());
    send(sock, &m)?;
    for fd in [&stdin_there as &dyn AsRawFd, &stdout_there, &stderr_there] {
        send_fd(sock, fd.as_raw_fd())?;
    }
    // The master holds its own copies now: the command's ends close with it.
    drop((stdin_there, stdout_there, stderr_there));
    let reply = receive(sock)?;
    let mut r = Reader(&reply);
    // Refused (`MUX_S_PERMISSION_DENIED`, `MUX_S_FAILURE`: a master asking the user
    // first, one that already carries a session) or out of turn: `ssh` is started.
    Ok(
        ((r.u32(), r.u32()) == (Some(MUX_S_SESSION_OPENED), Some(request_id)))
            .then_some((stdin, stdout, stderr)),
    )
}

fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

impl Session {
    /// Wait until `deadline` for the session's exit message.
    pub fn wait(mut self, deadline: Instant) -> Ended {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.sock.set_read_timeout(Some(left)).is_err() {
                return Ended::Timeout;
            }
            let m = match receive(&mut self.sock) {
                Ok(m) => m,
                Err(e) if timed_out(&e) => return Ended::Timeout,
                Err(_) => return Ended::Exit(255),
            };
            let mut r = Reader(&m);
            match r.u32() {
                Some(MUX_S_EXIT_MESSAGE) => {
                    let _session = r.u32();
                    return Ended::Exit(r.u32().map_or(255, |v| (v & 0xff) as i32));
                }
                Some(MUX_S_TTY_ALLOC_FAIL) => {}
                _ => return Ended::Exit(255),
            }
        }
    }
}

/// Have the master whose socket is `path` listen on this machine's `127.0.0.1:local`
/// and carry each connection to `127.0.0.1:there` on its machine (`ssh -O forward
/// -L`), for as long as it runs. The same forward asked again is no error. `Err`: no
/// master, or its reason for refusing (a port taken here, say).
pub fn forward(path: &Path, local: u16, there: u16) -> Result<(), String> {
    let mut sock = UnixStream::connect(path).map_err(|e| format!("no shared connection: {e}"))?;
    let talk = |sock: &mut UnixStream| -> std::io::Result<Vec<u8>> {
        sock.set_read_timeout(Some(HANDSHAKE))?;
        sock.set_write_timeout(Some(HANDSHAKE))?;
        let mut hello = Vec::new();
        put_u32(&mut hello, MUX_MSG_HELLO);
        put_u32(&mut hello, VERSION);
        send(sock, &hello)?;
        receive(sock)?;
        let mut m = Vec::new();
        put_u32(&mut m, MUX_C_OPEN_FWD);
        put_u32(&mut m, 1);
        put_u32(&mut m, MUX_FWD_LOCAL);
        put_string(&mut m, b"127.0.0.1");
        put_u32(&mut m, u32::from(local));
        put_string(&mut m, b"127.0.0.1");
        put_u32(&mut m, u32::from(there));
        send(sock, &m)?;
        receive(sock)
    };
    let reply =
        talk(&mut sock).map_err(|e| format!("the shared connection did not answer: {e}"))?;
    let mut r = Reader(&reply);
    match (r.u32(), r.u32()) {
        (Some(MUX_S_OK), Some(1)) => Ok(()),
        (Some(MUX_S_FAILURE | MUX_S_PERMISSION_DENIED), Some(1)) => {
            let reason = r.string().unwrap_or_default();
            let reason = crate::sanitize::line(&String::from_utf8_lossy(reason));
            Err(reason.chars().take(200).collect())
        }
        _ => Err("the shared connection answered out of turn".into()),
    }
}

/// Hand `fd` to the master: one byte with the descriptor attached, as `ssh` does.
fn send_fd(sock: &UnixStream, fd: std::os::fd::RawFd) -> std::io::Result<()> {
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
    let fds = [fd];
    let sent = sendmsg::<()>(
        sock.as_raw_fd(),
        &[std::io::IoSlice::new(&[0])],
        &[ControlMessage::ScmRights(&fds)],
        MsgFlags::empty(),
        None,
    )
    .map_err(std::io::Error::from)?;
    match sent {
        1 => Ok(()),
        _ => Err(std::io::Error::other("the descriptor was not sent")),
    }
}

fn put_u32(buf: &mut Vec<u8>, v: u32) {
    buf.extend_from_slice(&v.to_be_bytes());
}

fn put_string(buf: &mut Vec<u8>, s: &[u8]) {
    put_u32(buf, s.len() as u32);
    buf.extend_from_slice(s);
}

/// One message: its length, then it.
fn send(sock: &mut UnixStream, message: &[u8]) -> std::io::Result<()> {
    let mut framed = Vec::with_capacity(message.len() + 4);
    put_string(&mut framed, message);
    sock.write_all(&framed)
}

/// One message of the master's, at most [`MAX_MESSAGE`] bytes.
fn receive(sock: &mut UnixStream) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    sock.read_exact(&mut len)?;
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_MESSAGE {
        return Err(std::io::Error::other("a message over the cap"));
    }
    let mut m = vec![0u8; len];
    sock.read_exact(&mut m)?;
    Ok(m)
}

/// Big-endian words off the front of a message.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_be_bytes(*head))
    }

    fn string(&mut self) -> Option<&[u8]> {
        let len = self.u32()? as usize;
        let s = self.0.get(..len)?;
        self.0 = &self.0[len..];
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_master_a_stranger_and_a_hung_one() {
        let dir = tempfile::tempdir().unwrap();
        let soon = || Instant::now() + Duration::from_secs(2);
        assert!(matches!(
            open(&dir.path().join("absent"), "true", soon()),
            Opening::NoMaster
        ));
        // A socket that answers something else than a hello.
        let path = dir.path().join("stranger");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let stranger = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 12];
            s.read_exact(&mut buf).unwrap();
            s.write_all(&[0, 0, 0, 8, 0, 0, 0, 9, 0, 0, 0, 4]).unwrap();
        });
        assert!(matches!(open(&path, "true", soon()), Opening::NoMaster));
        stranger.join().unwrap();
        // A master that never answers: the caller's deadline, not the handshake's.
        let path = dir.path().join("hung");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let asked = Instant::now();
        let deadline = asked + Duration::from_millis(200);
        assert!(matches!(open(&path, "true", deadline), Opening::Timeout));
        assert!(asked.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn a_master_that_goes_away_is_a_lost_connection() {
        let (a, b) = UnixStream::pair().unwrap();
        drop(b);
        let ended = Session { sock: a }.wait(Instant::now() + Duration::from_secs(1));
        assert_eq!(ended, Ended::Exit(255));
        let (a, _b) = UnixStream::pair().unwrap();
        let ended = Session { sock: a }.wait(Instant::now() + Duration::from_millis(50));
        assert_eq!(ended, Ended::Timeout);
    }
}
