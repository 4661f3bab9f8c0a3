//! How a launch that cannot be made reads to the user: the CLI's words for
//! [`crate::provision::launch::LaunchError`] and [`crate::session::SessionError`], and
//! `-d`'s refusal on a machine without tmux. Used by every front end that starts an
//! agent (create, enter, up, attach, the MCP server, another machine's request).

use super::error::{CliError, ErrorKind};
use crate::provision;

/// `-d` needs tmux: refuse (exit 1) before anything is written when it is missing.
pub fn need_sessions() -> Result<(), CliError> {
    if crate::session::available() {
        return Ok(());
    }
    Err(from_session(crate::session::missing()))
}

/// A launch that cannot be made, as the user sees it.
pub(crate) fn from_launch(e: provision::launch::LaunchError) -> CliError {
    use provision::launch::LaunchError as L;
    match e {
        L::NoContainer { name, runner } => CliError::new(
            ErrorKind::Runner,
            format!("box `{name}` records runner `{runner}` without a container"),
        )
        .hint(format!(
            "Finish it with `git treebox enter {name}`, or remove it with `git treebox rm --force {name}`."
        )),
        L::Session(e) => from_session(e),
        L::Provision(e) => e.into(),
    }
}

/// A session failure as the user sees it.
pub(crate) fn from_session(e: crate::session::SessionError) -> CliError {
    use crate::session::SessionError as S;
    match &e {
        S::NoTmux { .. } => CliError::new(
            ErrorKind::Launch,
            "cannot start a detached session: tmux is not installed",
        )
        .hint("Install tmux (e.g. `sudo apt-get install tmux`), or run it without -d to keep the program (agent or shell) in this terminal."),
        S::Spawn {
            program,
            not_found: true,
            ..
        } => CliError::new(
            ErrorKind::HarnessMissing,
            format!(
                "could not start `{}`: not found on PATH",
                crate::sanitize::line(program)
            ),
        )
        .hint("Install the agent CLI, or point `harnesses.<name>.program` in the config at it."),
        _ => CliError::of(ErrorKind::Launch, e),
    }
}
