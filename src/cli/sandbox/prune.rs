//! `git sandbox prune [-f]`: remove what crashes and hand edits left behind in this
//! repository — records without a box directory, box directories without a record,
//! pins (`refs/hort/<name>/…`) of boxes that no longer exist, and stray lock files.
//! It lists first; it asks on a terminal and refuses without one unless `-f`.

use std::io::IsTerminal;

use clap::Args;
use serde_json::json;

use crate::boxes;
use crate::cli::error::{self, CliError};
use crate::cli::ui::Ui;
use crate::names::Leaf;
use crate::teardown;

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Remove without asking.
    #[arg(short, long)]
    pub force: bool,
    /// Print what was removed as JSON.
    #[arg(long)]
    pub json: bool,
}

enum Orphan {
    /// A record (and maybe a registration) whose directory is gone.
    NoDirectory(boxes::BoxEntry),
    /// A directory under the box root that no record describes.
    NoRecord(boxes::BoxEntry),
    /// A `refs/hort/<name>/…` ref of a box with no record.
    Pin(String),
    /// A lock file of a box with no record.
    Lock(std::path::PathBuf, Leaf),
}

impl Orphan {
    fn describe(&self) -> String {
        match self {
            Orphan::NoDirectory(e) => format!("record of `{}` (its directory is gone)", e.leaf),
            Orphan::NoRecord(e) => format!("directory {} (no record)", e.path.display()),
            Orphan::Pin(r) => format!("ref {r} (no such box)"),
            Orphan::Lock(p, _) => format!("lock file {}", p.display()),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Orphan::NoDirectory(_) => "record",
            Orphan::NoRecord(_) => "directory",
            Orphan::Pin(_) => "ref",
            Orphan::Lock(..) => "lock",
        }
    }
}

pub fn run(a: PruneArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let _cfg = crate::cli::load_config()?;
    let (repo, layout) = super::here()?;
    let all = boxes::inventory(&repo, &layout);
    let mut orphans = Vec::new();
    for e in &all {
        if !e.dir_exists {
            orphans.push(Orphan::NoDirectory(e.clone()));
        } else if e.record.is_none() && e.record_error.is_none() {
            orphans.push(Orphan::NoRecord(e.clone()));
        }
    }
    let known: std::collections::HashSet<String> = all
        .iter()
        .filter(|e| e.record.is_some())
        .map(|e| e.leaf.to_string())
        .collect();
    if let Ok(refs) = repo.git.references_glob("refs/hort/*") {
        for r in refs.flatten() {
            let Ok(name) = r.name() else { continue };
            let leaf = name
                .strip_prefix("refs/hort/")
                .and_then(|rest| rest.split('/').next())
                .unwrap_or("");
            if !known.contains(leaf) {
                orphans.push(Orphan::Pin(name.to_string()));
            }
        }
    }
    if let Ok(rd) = std::fs::read_dir(layout.repo_state.join("locks")) {
        for f in rd.flatten() {
            let n = f.file_name().to_string_lossy().into_owned();
            let Some(leaf) = n.strip_suffix(".lock").and_then(|l| Leaf::parse(l).ok()) else {
                continue;
            };
            if !all.iter().any(|e| e.leaf == leaf) {
                orphans.push(Orphan::Lock(f.path(), leaf));
            }
        }
    }
    if orphans.is_empty() {
        ui.info("nothing to prune");
        if a.json {
            ui.out_json(&json!({"schemaVersion": 1, "removed": []}));
        }
        return Ok(error::OK);
    }
    for o in &orphans {
        ui.info(&format!("  {}", o.describe()));
    }
    if !a.force {
        if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
            return Err(CliError::new(
                error::CONFLICT,
                "needs-confirmation",
                format!(
                    "{} leftover(s) to remove, and there is no terminal to ask",
                    orphans.len()
                ),
            )
            .hint("Pass -f to remove them: `git sandbox prune -f`."));
        }
        ui.finish();
        eprint!("Remove these {} leftover(s)? [y/N] ", orphans.len());
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
        if !matches!(line.trim(), "y" | "Y" | "yes") {
            ui.info("nothing removed");
            return Ok(error::OK);
        }
    }
    let mut removed = Vec::new();
    for o in &orphans {
        match o {
            Orphan::NoDirectory(e) | Orphan::NoRecord(e) => {
                let t = teardown::target(e.clone(), &repo, &layout);
                teardown::remove(&repo, &layout, &t, false)
                    .map_err(crate::cli::teardown::from_teardown)?;
            }
            Orphan::Pin(name) => {
                if let Ok(mut r) = repo.git.find_reference(name) {
                    r.delete().map_err(|e| {
                        CliError::new(
                            error::RUNTIME,
                            "prune",
                            format!("could not delete {name}: {e}"),
                        )
                    })?;
                }
            }
            Orphan::Lock(path, leaf) => {
                // A lock someone holds is not stray: leave it, and do not say it went.
                match crate::state::BoxLock::try_acquire(path, leaf.as_str()) {
                    Ok(l) => l.release_and_remove(),
                    Err(_) => continue,
                }
            }
        }
        removed.push(json!({"kind": o.kind(), "what": o.describe()}));
    }
    if a.json {
        ui.out_json(&json!({"schemaVersion": 1, "removed": removed}));
    } else {
        ui.info(&format!("removed {} leftover(s)", removed.len()));
    }
    Ok(error::OK)
}
