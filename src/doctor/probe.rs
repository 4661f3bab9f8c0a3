//! Probes that may hang, bounded: [`output_within`] runs a command for at most a time
//! limit and kills its whole process group when it is up; `probe_engine` asks a container engine for its version.
//!
//! Used by the `origin` check (`git ls-remote`) and the `runner` check (`<engine> info`).

use std::process::Output;
use std::time::Duration;

use crate::cmd::{Cmd, CmdError};
use crate::runner::oci::{Engine, EngineInfo};
use crate::sanitize;

/// How long a probe of the network or of an engine may take before doctor gives up.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// The first non-empty line a probe wrote to stderr, terminal-safe: its own reason.
pub(super) fn first_stderr_line(stderr: &[u8]) -> Option<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(sanitize::line)
}

/// Ask an engine for its version: `Ok(version)` or `Err(why)`.
pub(super) fn probe_engine(engine: Engine, limit: Duration) -> Result<EngineInfo, String> {
    match output_within(&engine.info_cmd(), limit) {
        Ok(Some(o)) => {
            let info = engine.read_info(&String::from_utf8_lossy(&o.stdout));
            if let Some(info) = info.filter(|_| o.status.success()) {
                Ok(EngineInfo {
                    version: sanitize::line(&info.version),
                    ..info
                })
            } else {
                Err(first_stderr_line(&o.stderr)
                    .unwrap_or_else(|| format!("`{engine} info` failed ({})", o.status)))
            }
        }
        Ok(None) => Err(format!(
            "`{engine} info` gave no answer after {} s",
            limit.as_secs()
        )),
        Err(e) if e.is_not_found() => Err(format!("{engine} is not installed or not on PATH")),
        Err(e) => Err(first_line(&sanitize::chain(&e))),
    }
}

pub(super) fn first_line(s: &str) -> String {
    sanitize::line(s.lines().next().unwrap_or(""))
}

/// Run `cmd` capturing its output, giving up after `limit` (see [`Cmd::output_within`]).
pub fn output_within(cmd: &Cmd, limit: Duration) -> Result<Option<Output>, CmdError> {
    cmd.output_within(limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

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
