//! `git sandbox attach NAME`: on a terminal, attach to the box's live session (the
//! agent's, or a shell's), or start a login shell in a new one (SPEC §7a); without a
//! terminal or tmux, a login shell as a foreground child.
//!
//! Whatever runs holds the box's session marker, so a concurrent `down` sees a live
//! session and asks (or refuses) instead of pulling the box away. Called from
//! `sandbox::run`; the box is found and its container started by `sandbox::target`.

use clap::Args;

use crate::cli::error::CliError;
use crate::cli::ui::Ui;

#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The box.
    pub name: String,
}

pub fn run(a: AttachArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let _cfg = crate::cli::load_config()?;
    let t = super::target(&a.name, ui.stdin_is_tty())?;
    let in_session = super::target_runner(&t, true)?;
    let how = crate::cli::create::Launching {
        marker: &t.session,
        detach: false,
        again: format!("git sandbox attach {}", crate::cmd::quote(&t.leaf)),
        path: &t.path,
        overrides: false,
        // A shell is ready once it runs.
        ready: crate::session::Ready::started(),
    };
    crate::cli::create::launch(
        &how,
        |tty| match tty {
            true => in_session.shell(&t.path, &t.leaf),
            false => t.runner.shell(&t.path, &t.leaf),
        },
        ui,
    )
}
