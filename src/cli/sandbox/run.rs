//! `git sandbox attach NAME` and `git sandbox run NAME -- CMD…`.
//!
//! Both hold the box's session marker while they run, so a concurrent `down` sees a
//! live session and asks (or refuses) instead of pulling the box away.

use clap::Args;

use crate::cli::error::CliError;
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

/// The box's runner, with its container started first (after a park or a reboot).
fn runner_for(
    repo: &crate::git::Repo,
    layout: &crate::state::Layout,
    entry: &crate::boxes::BoxEntry,
    tty: bool,
) -> Result<Box<dyn crate::runner::Runner>, CliError> {
    let Some(record) = entry.record.as_ref() else {
        return Err(crate::provision::ProvisionError::NoRecord {
            leaf: entry.leaf.to_string(),
            path: entry.path.clone(),
        }
        .into());
    };
    let mut record = record.clone();
    if let Some(before) = record.container.clone() {
        let cfg = crate::cli::load_config()?;
        let now = crate::container::ensure_running(repo, layout, &record, &cfg.allowlist)
            .map_err(crate::provision::ProvisionError::from)?;
        if now != before {
            // Started or remade: remember the new container for the fast path.
            record.container = Some(now);
            let _ = record.save(&layout.record_path(&entry.leaf));
        }
    }
    crate::cli::runner_for(&record, tty)
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
    let (repo, layout, entry) = super::find(&a.name)?;
    usable(&entry)?;
    let cmd = runner_for(&repo, &layout, &entry, crate::cli::stdin_tty())?
        .shell(&entry.path, entry.leaf.as_str());
    ui.finish();
    crate::cli::create::launch_in_session(&cmd, &layout.session_path(&entry.leaf), ui)
}

pub fn run(a: RunArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let _cfg = crate::cli::load_config()?;
    let (repo, layout, entry) = super::find(&a.name)?;
    usable(&entry)?;
    let cmd = runner_for(&repo, &layout, &entry, crate::cli::stdin_tty())?.exec(
        &entry.path,
        entry.leaf.as_str(),
        &a.command,
    );
    ui.finish();
    crate::cli::create::launch_in_session(&cmd, &layout.session_path(&entry.leaf), ui)
}
