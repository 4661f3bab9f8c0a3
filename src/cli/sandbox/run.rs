//! `git sandbox run NAME -- CMD…`: run one command in a box (no shell) and exit with
//! its code; a command missing in the box exits 127, as a shell would.
//!
//! It holds the box's session marker while the command runs, so a concurrent `down`
//! sees a live session and asks (or refuses) instead of pulling the box away. Called
//! from `sandbox::run`; the box is found and started by `sandbox::target`.

use clap::Args;

use crate::cli::error::CliError;
use crate::cli::ui::Ui;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The box.
    pub name: String,
    /// The command and its arguments (no shell is involved).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

pub fn run(a: RunArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let cfg = crate::cli::load_config()?;
    let t = match super::target(&a.name, ui.stdin_is_tty()) {
        Ok(t) => t,
        // Not here: on another machine of the config, run there.
        Err(e) if e.kind == crate::cli::error::ErrorKind::BoxNotFound => {
            return match crate::cli::on::find_elsewhere(&cfg, &a.name)? {
                Some(far) => crate::cli::on::on_terminal(
                    &far,
                    crate::remote::terminal::Verb::Run(a.command.clone()),
                    ui,
                ),
                None => Err(e),
            };
        }
        Err(e) => return Err(e),
    };
    let cmd = t
        .runner
        .exec(&t.path, &t.leaf, &a.command)
        .without_git_dispatch();
    ui.finish();
    match crate::cli::create::launch_in_session(&cmd, &t.session, ui) {
        // As a shell reports it: the command, not an agent CLI, is missing; exit 127.
        Err(e) if e.kind == crate::cli::error::ErrorKind::HarnessMissing => {
            ui.plain_error(&format!(
                "git-sandbox: {}: command not found in box `{}`",
                crate::sanitize::line(&a.command.first().cloned().unwrap_or_default()),
                t.leaf
            ));
            Ok(127)
        }
        other => other,
    }
}
