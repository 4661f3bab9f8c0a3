//! The process's standard streams handed over to a protocol (`git treebox mcp`).
//!
//! A server that speaks on stdin/stdout must own them alone: one stray `println!`, or
//! a child that inherits stdout and prints, would corrupt the stream, and a child that
//! inherits stdin could eat the client's next request. [`take`] therefore gives the
//! protocol private copies of fd 0 and fd 1 (close-on-exec: no child inherits them),
//! then points the process's fd 1 at its stderr and its fd 0 at `/dev/null`. From
//! then on anything the process or its children print lands on stderr, and every
//! child reads an empty stdin, whatever way it was spawned.
//!
//! Called once, by `cli/mcp` before its runtime starts.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

/// The protocol's ends: what the client writes (the process's stdin as it was) and
/// where the answers go (its stdout as it was).
pub struct Protocol {
    pub input: File,
    pub output: File,
}

impl Protocol {
    /// The two ends as tokio files (reads and writes on tokio's blocking pool), for a
    /// transport on a runtime without an I/O driver. Called inside that runtime.
    pub fn into_async(self) -> (tokio::fs::File, tokio::fs::File) {
        (
            tokio::fs::File::from_std(self.input),
            tokio::fs::File::from_std(self.output),
        )
    }
}

/// Take stdin and stdout for a protocol; see the module doc. On failure nothing of
/// the process's streams has changed, except when the last step fails (then fd 0
/// may already read `/dev/null`).
pub fn take() -> std::io::Result<Protocol> {
    // Nothing may sit in Rust's stdout buffer: it would be written to stderr later.
    std::io::stdout().flush()?;
    let input: OwnedFd = std::io::stdin().as_fd().try_clone_to_owned()?;
    let output: OwnedFd = std::io::stdout().as_fd().try_clone_to_owned()?;
    redirect(std::io::stderr().as_fd().as_raw_fd(), 1)?;
    let null = File::open("/dev/null")?;
    redirect(null.as_raw_fd(), 0)?;
    Ok(Protocol {
        input: File::from(input),
        output: File::from(output),
    })
}

/// `dup2(from, to)`, retried on EINTR.
fn redirect(from: i32, to: i32) -> std::io::Result<()> {
    loop {
        // SAFETY: dup2 on two descriptors this process holds; it touches no memory.
        if unsafe { libc::dup2(from, to) } >= 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}
