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

/// The box's runner, with its container started first (after a park or a reboot),
/// and where the box is (for the working directory and the session marker).
struct Target {
    runner: Box<dyn crate::runner::Runner>,
    path: std::path::PathBuf,
    leaf: String,
    session: std::path::PathBuf,
}

fn target(name: &str, tty: bool) -> Result<Target, CliError> {
    let (repo, layout, mut record) = match super::find_any(name)? {
        super::Found::Repo(repo, layout, entry) => {
            if !entry.dir_exists {
                return Err(crate::provision::ProvisionError::BoxMissing {
                    leaf: entry.leaf.to_string(),
                    path: entry.path.clone(),
                }
                .into());
            }
            let Some(record) = entry.record.clone() else {
                return Err(crate::provision::ProvisionError::NoRecord {
                    leaf: entry.leaf.to_string(),
                    path: entry.path.clone(),
                }
                .into());
            };
            (Some(repo), layout, record)
        }
        super::Found::Folder(layout, record) => (None, layout, record),
    };
    let leaf =
        crate::names::Leaf::parse(&record.name).map_err(crate::provision::ProvisionError::from)?;
    crate::provision::check_checkout(&record)?;
    if let Some(before) = record.container.clone() {
        let cfg = crate::cli::load_config()?;
        let now =
            crate::runner::oci::ensure_running(repo.as_ref(), &layout, &record, &cfg.allowlist)
                .map_err(crate::provision::ProvisionError::from)?;
        if now != before {
            // Started or remade: remember the new container for the fast path.
            record.container = Some(now);
            let _ = record.save(&layout.record_path(&leaf));
        }
    }
    Ok(Target {
        runner: crate::cli::runner_for(&record, tty)?,
        path: record.path.clone(),
        session: layout.session_path(&leaf),
        leaf: leaf.to_string(),
    })
}

pub fn attach(a: AttachArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let _cfg = crate::cli::load_config()?;
    let t = target(&a.name, ui.stdin_is_tty())?;
    let cmd = t.runner.shell(&t.path, &t.leaf);
    ui.finish();
    crate::cli::create::launch_in_session(&cmd, &t.session, ui)
}

pub fn run(a: RunArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let _cfg = crate::cli::load_config()?;
    let t = target(&a.name, ui.stdin_is_tty())?;
    let cmd = t.runner.exec(&t.path, &t.leaf, &a.command);
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
