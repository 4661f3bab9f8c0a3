//! Boxes on other machines (SPEC §11, issue 41): the laptop asks another machine's own
//! treebox over SSH, through one entry point there, and trusts nothing it answers.
//!
//! - [`frame`]: a document's framing on the wire, read as hostile data.
//! - [`ssh`]: the `ssh` command for a machine of the user's config (its `sshCommand`,
//!   `BatchMode`, one multiplexed connection per machine), and [`ssh::call`]: one
//!   request on the channel's stdin, one framed answer, capped and killed at a
//!   deadline.
//! - [`serve`]: the entry point on the other machine, `git-treebox __treebox-remote`
//!   (never a command line assembled for the remote shell: the request is JSON on
//!   stdin).
//! - [`hello`]: what the laptop asks first: that machine's treebox version and
//!   protocol, tmux, engines, memory and disk.
//!
//! This slice brings the contract and `doctor`'s check of each machine; boxes there
//! come next.

pub mod frame;
pub mod hello;
pub mod serve;
pub mod ssh;

/// The version of the contract between two treeboxes. A machine answering another
/// is refused with both versions.
pub const PROTOCOL: u32 = 1;

/// The argument that makes `git-treebox` the entry point for another machine.
pub const ENTRY_ARG: &str = "__treebox-remote";

/// Why another machine gave no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("could not start `{program}`")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("machine `{machine}` cannot be reached: {why}")]
    Unreachable { machine: String, why: String },
    #[error("machine `{machine}` did not answer within {seconds} s")]
    Timeout { machine: String, seconds: u64 },
    #[error("machine `{machine}` answered more than {limit} bytes")]
    TooMuch { machine: String, limit: usize },
    #[error("machine `{machine}`: {source}")]
    Frame {
        machine: String,
        #[source]
        source: frame::FrameError,
    },
    #[error(
        "machine `{machine}` speaks treebox protocol {theirs} (treebox {version}); this treebox speaks {PROTOCOL} ({ours})",
        ours = env!("CARGO_PKG_VERSION")
    )]
    Protocol {
        machine: String,
        theirs: u32,
        version: String,
    },
    #[error("machine `{machine}` refused the request: {message}")]
    Refused { machine: String, message: String },
}
