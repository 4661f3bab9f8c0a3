//! `git sandbox attach NAME` and `git sandbox run NAME -- CMD…`.
//!
//! Both hold the box's session marker while they run, so a concurrent `down` sees a
//! live session and asks (or refuses) instead of pulling the box away.

use clap::Args;

use crate::cli::error::{self, CliError};
use crate::cli::ui::Ui;

#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The box.
    pub name: String,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The box.
    pub name: String,
    /// The command and its arguments (no shell is involved).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

fn runner_for(entry: &crate::boxes::BoxEntry) -> Result<Box<dyn crate::runner::Runner>, CliError> {
    let name = entry
        .record
        .as_ref()
        .map(|r| r.runner.as_str())
        .unwrap_or("host");
    crate::runner::for_name(name).ok_or_else(|| {
        CliError::new(
            error::USAGE,
            "unsupported",
            format!("runner `{name}` is not available in this version"),
        )
    })
}

fn usable(entry: &crate::boxes::BoxEntry) -> Result<(), CliError> {
    if !entry.dir_exists {
        return Err(crate::provision::ProvisionError::BoxMissing {
            leaf: entry.leaf.to_string(),
            path: entry.path.clone(),
        }
        .into());
    }
    Ok(())
}

pub fn attach(a: AttachArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let _cfg = crate::cli::load_config()?;
    let (_repo, layout, entry) = super::find(&a.name)?;
    usable(&entry)?;
    let cmd = runner_for(&entry)?.shell(&entry.path, entry.leaf.as_str());
    ui.finish();
    crate::cli::create::launch_in_session(&cmd, &layout.session_path(&entry.leaf), ui)
}

pub fn run(a: RunArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let _cfg = crate::cli::load_config()?;
    let (_repo, layout, entry) = super::find(&a.name)?;
    usable(&entry)?;
    let cmd = runner_for(&entry)?.exec(&entry.path, entry.leaf.as_str(), &a.command);
    ui.finish();
    crate::cli::create::launch_in_session(&cmd, &layout.session_path(&entry.leaf), ui)
}
