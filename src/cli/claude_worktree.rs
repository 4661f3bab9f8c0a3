//! `git treebox claude-worktree create|remove|settings`: treebox as Claude Code's
//! worktree backend (SPEC §10a). The payloads are read by [`crate::provision::claude`];
//! `create` provisions through the normal pipeline (host runner: Claude Code itself
//! works in the path it gets back) and prints exactly one line on stdout, the box's
//! path; `remove` removes a treebox box as `teardown --force` would, and nothing else
//! — then its branch, when that loses nothing (no work, or work that landed in its
//! base; [`crate::teardown::settle_branch`]), else it says why the branch is kept.

use std::io::Read;

use clap::Subcommand;

use super::error::{self, CliError, ErrorKind};
use super::ui::Ui;
use crate::git::landed::Verdict;
use crate::provision::claude::{self, PayloadError};
use crate::provision::CreateRequest;
use crate::teardown::{BranchFate, KeptBecause};

#[derive(Debug, Subcommand)]
pub enum ClaudeWorktreeCommand {
    /// WorktreeCreate: read Claude Code's JSON on stdin, provision a box, print its path.
    Create,
    /// WorktreeRemove: read Claude Code's JSON on stdin, remove that treebox box.
    Remove,
    /// Print the Claude Code settings that wire the two hooks up.
    Settings,
}

pub fn run(cmd: ClaudeWorktreeCommand, ui: &mut Ui) -> Result<i32, CliError> {
    match cmd {
        ClaudeWorktreeCommand::Create => create(ui),
        ClaudeWorktreeCommand::Remove => remove(ui),
        ClaudeWorktreeCommand::Settings => {
            ui.out_json(&claude::settings());
            Ok(error::OK)
        }
    }
}

fn payload() -> Result<String, CliError> {
    let mut text = String::new();
    std::io::stdin()
        .take(claude::MAX_PAYLOAD)
        .read_to_string(&mut text)
        .map_err(|e| {
            CliError::new(ErrorKind::Usage, "could not read the hook's JSON on stdin").caused_by(e)
        })?;
    Ok(text)
}

fn refused(e: PayloadError) -> CliError {
    let kind = match e {
        PayloadError::Name(_) => ErrorKind::InvalidName,
        _ => ErrorKind::Usage,
    };
    CliError::new(kind, e.to_string())
        .hint("This command is Claude Code's WorktreeCreate/WorktreeRemove hook; see `git treebox claude-worktree settings`.")
}

fn create(ui: &mut Ui) -> Result<i32, CliError> {
    let p = claude::parse_create(&payload()?).map_err(refused)?;
    let cfg = crate::cli::load_config()?;
    let cwd = match p.cwd {
        Some(c) => c,
        None => std::env::current_dir().map_err(|e| {
            CliError::new(ErrorKind::Io, "could not read the current directory").caused_by(e)
        })?,
    };
    let req = CreateRequest {
        cwd,
        name: Some(p.name),
        base: p.base,
        // Claude Code works in the path itself, on this machine.
        isolation: Some("host".into()),
        launch: false,
        ..CreateRequest::default()
    };
    let created = crate::provision::create(&req, &cfg, ui)?;
    ui.out(&created.plan.path.to_string_lossy());
    Ok(error::OK)
}

fn remove(ui: &mut Ui) -> Result<i32, CliError> {
    let path = claude::parse_remove(&payload()?).map_err(refused)?;
    let not_a_box = || {
        CliError::new(
            ErrorKind::NotABoxPath,
            format!("{} is not a treebox box; left alone", path.display()),
        )
        .hint("Only boxes under a repository's .treebox/worktrees/ are removed by this hook.")
    };
    let Some((main_root, leaf)) = claude::box_of_path(&path) else {
        return Err(not_a_box());
    };
    let repo = crate::git::Repo::discover(&main_root).map_err(|_| not_a_box())?;
    if repo.main_root != main_root {
        return Err(not_a_box());
    }
    let layout = crate::state::Layout::new(&repo.main_root, &repo.common_dir)
        .map_err(crate::provision::ProvisionError::from)?;
    let Some(entry) = crate::boxes::exact(&repo, &layout, leaf.as_str()) else {
        return Err(not_a_box());
    };
    // Read before the box goes: its branch lives on in the repository (a worktree
    // box's; a clone's went with it).
    let record = entry.record.clone();
    let branch = (!entry.owns_git())
        .then(|| entry.shown_branch().map(str::to_string))
        .flatten();
    let t = crate::teardown::target_for(entry, &repo, &layout, true);
    let r = crate::teardown::remove_as_decided(&repo, &layout, &t, false, true)
        .map_err(crate::cli::teardown::from_teardown)?;
    ui.info(&format!("removed box `{}`", r.leaf));
    if let Some(b) = branch {
        let fate = crate::teardown::settle_branch(&repo, &layout, &b, record.as_ref());
        report_branch(ui, fate, record.as_ref().map_or("", |r| r.base.as_str()));
    }
    Ok(error::OK)
}

/// One stderr line on what became of the removed box's branch.
fn report_branch(ui: &mut Ui, fate: Option<BranchFate>, base: &str) {
    let Some(fate) = fate else {
        return;
    };
    match fate {
        BranchFate::Deleted { branch, verdict } => {
            let why = match verdict {
                Verdict::Landed { how, into } => format!("{} into {into}", how.describe()),
                _ => "no work beyond its start".into(),
            };
            ui.info(&format!("deleted branch `{branch}` ({why})"));
        }
        BranchFate::Kept { branch, why } => {
            let why = match why {
                KeptBecause::NotLanded(Verdict::NotLanded { ahead: Some(a) }) => format!(
                    "{}{} commit{} not in {}",
                    if a.capped { "at least " } else { "" },
                    a.count,
                    if a.count == 1 { "" } else { "s" },
                    a.of
                ),
                KeptBecause::NotLanded(_) => format!("its work is not in `{base}`"),
                KeptBecause::NotMadeByTreebox => "treebox did not create it".into(),
                KeptBecause::CheckedOut => "it is checked out in another worktree".into(),
                KeptBecause::Unreadable(e) => format!("whether it landed is unknown: {e}"),
            };
            ui.info(&format!(
                "kept branch `{branch}`: {why}. To delete it anyway, run `git branch -D {}`.",
                crate::cmd::quote(&branch)
            ));
        }
    }
}
