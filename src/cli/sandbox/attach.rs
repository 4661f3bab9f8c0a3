//! `git sandbox attach NAME`: open a login shell in a box.
//!
//! It holds the box's session marker while the shell runs, so a concurrent `down`
//! sees a live session and asks (or refuses) instead of pulling the box away. Called
//! from `sandbox::run`; the box is found and started by `sandbox::target`.

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
    let cmd = t.runner.shell(&t.path, &t.leaf);
    ui.finish();
    crate::cli::create::launch_in_session(&cmd, &t.session, ui)
}
