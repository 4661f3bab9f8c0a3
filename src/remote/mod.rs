//! Boxes on other machines (SPEC §11, issue 41): the laptop asks another machine's own
//! treebox over SSH, through one entry point there, and trusts nothing it answers.
//!
//! - [`frame`]: a document's framing on the wire, read as hostile data.
//! - [`ssh`]: the `ssh` command for a machine of the user's config (its `sshCommand`,
//!   `BatchMode`, one multiplexed connection per machine), and [`ssh::call`]: one
//!   request on the channel's stdin, one framed answer, capped and killed at a
//!   deadline.
//! - [`mirror`]: what the other machine keeps of a laptop's repository (a bare mirror
//!   seeded from bundles, a clone of it boxes are made in).
//! - The entry point on the other machine, `git-treebox __treebox-remote`, is a front
//!   end (`cli/remote.rs`): never a command line assembled for the remote shell, the
//!   request is JSON on stdin.
//! - [`boxes`]: the laptop's boxes there: making one (the mirror seeded with a
//!   bundle of exactly what it needs, then that machine's own `create`), listing them.
//! - [`terminal`]: `enter` and `run` there, with the user's terminal (`ssh -t`).
//! - [`hello`]: what the laptop asks first: that machine's treebox version and
//!   protocol, tmux, engines, memory and disk.
//!
//! - [`listing`]: the laptop's boxes on every machine at once, within a deadline, each
//!   answer kept and the last one shown, stale, for a machine that cannot be asked.
//!
//! So far: the contract, `doctor`'s check of each machine, `create --on` and `list`.

pub mod back;
pub mod boxes;
pub mod forward;
pub mod frame;
pub mod hello;
pub mod listing;
pub mod mirror;
mod mux;
pub mod pack;
pub mod ssh;
pub mod terminal;

/// The version of the contract between two treeboxes. A machine answering another
/// is refused with both versions.
pub const PROTOCOL: u32 = 1;

/// The argument that makes `git-treebox` the entry point for another machine.
pub const ENTRY_ARG: &str = "__treebox-remote";

/// How to put the same treebox on machine `dest` (its SSH destination, shown
/// sanitised), for a machine whose treebox speaks another protocol.
pub fn upgrade_hint(dest: &str) -> String {
    format!(
        "Install the same treebox on both: on `{}`, in a checkout of treebox v{} (`git checkout v{}`), run `sh install.sh` (or upgrade this one).",
        crate::sanitize::line(dest),
        env!("CARGO_PKG_VERSION"),
        env!("CARGO_PKG_VERSION")
    )
}

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
    #[error("machine `{machine}` did not answer within {}", seconds(*.limit))]
    Timeout {
        machine: String,
        limit: std::time::Duration,
    },
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
    #[error("machine `{machine}`: {what}")]
    Local { machine: String, what: String },
    #[error("machine `{machine}`: {message}")]
    Refused {
        machine: String,
        /// Its error's kind and the exit code its treebox would have exited with.
        kind: String,
        code: i32,
        message: String,
        hint: Option<String>,
    },
}

/// `10 s`, `1.5 s`: a deadline as an error message says it.
fn seconds(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::RemoteError;

    #[test]
    fn a_deadline_is_said_in_seconds_whole_or_tenths() {
        let said = |ms| {
            RemoteError::Timeout {
                machine: "big".into(),
                limit: std::time::Duration::from_millis(ms),
            }
            .to_string()
        };
        assert_eq!(said(10_000), "machine `big` did not answer within 10 s");
        assert_eq!(said(1500), "machine `big` did not answer within 1.5 s");
    }
}
