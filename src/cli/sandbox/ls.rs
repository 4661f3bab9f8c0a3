//! `git sandbox ls`: every box on this machine, across repositories.
//!
//! Reads the host-owned records under the state dir and each repository through
//! libgit2; a clone's dirtiness is computed without ever running the clone's config.

use std::collections::HashMap;

use crate::cli::json::{Document, Progress, SandboxLsBox, SandboxLsDocument, V1};
use clap::Args;

use crate::boxes::{self, BoxEntry};
use crate::cli::error::{self, CliError, ErrorKind};
use crate::cli::ui::Ui;
use crate::git::Repo;
use crate::state::{layout, session, Layout};

#[derive(Debug, Args)]
pub struct LsArgs {
    /// Print the boxes as JSON.
    #[arg(long)]
    pub json: bool,
}

struct Row {
    /// The machine of the config the box is on; `None`: this one.
    machine: Option<String>,
    name: String,
    repo: String,
    path: String,
    state: String,
    git_mode: Option<String>,
    mode_label: String,
    branch: Option<String>,
    dirty: Option<bool>,
    landed: Option<bool>,
    runner: Option<String>,
    live: bool,
    /// What the agent last reported (live), or how it ended.
    agent: crate::cli::list::AgentView,
    /// A box of a machine that cannot be asked now, as it last listed it.
    stale: bool,
}

/// Each engine's containers, asked once per engine per `ls` (not once per box).
#[derive(Default)]
struct Engines(HashMap<String, Option<HashMap<String, bool>>>);

impl Engines {
    fn state(&mut self, engine: &str, name: &str) -> &'static str {
        let states = self.0.entry(engine.to_string()).or_insert_with(|| {
            crate::runner::oci::Engine::parse(engine).and_then(|e| e.container_states())
        });
        match states.as_ref().map(|s| s.get(name)) {
            Some(Some(true)) => "running",
            Some(Some(false)) => "parked",
            Some(None) => "no-container",
            None => "engine-down",
        }
    }
}

fn row(
    e: &BoxEntry,
    dirt: Option<boxes::Dirt>,
    landed: Option<bool>,
    repo_path: &str,
    layout: &Layout,
    engines: &mut Engines,
) -> Row {
    let live = session::is_live(&layout.session_path(&e.leaf));
    let known_repo = dirt.is_some();
    let container = e.record.as_ref().and_then(|r| r.container.as_ref());
    let container_state = container.map(|c| engines.state(&c.engine, &c.name));
    let state = if !e.dir_exists {
        "missing"
    } else if e.record_error.is_some() {
        "bad-record"
    } else if e.is_broken() {
        "broken"
    } else if live {
        "live"
    } else if let Some(cs) = container_state.filter(|s| *s != "running") {
        cs
    } else if e.record.as_ref().is_some_and(|r| r.setup_completed) {
        "ready"
    } else if e.record.is_some() {
        "incomplete"
    } else {
        "no-record"
    };
    let git_mode = e.record.as_ref().map(|r| r.git_mode.to_string());
    // Without a record, a directory with a `.git` of its own is a clone all the same.
    let shown_mode = git_mode.as_deref().or(e.is_clone().then_some("clone"));
    let mode_label = match (shown_mode, dirt.and_then(|d| d.unreturned)) {
        // Its work is in its base: whatever else the box holds, that is not lost.
        (Some(m), _) if landed == Some(true) => format!("{m}, landed"),
        // A clone, a sandboxed worktree: is its work anywhere but in the box?
        (Some(m), Some(true)) if known_repo => format!("{m}, work only in the box"),
        (Some(m), Some(true)) => format!("{m}, work unknown"),
        (Some(m), Some(false)) => m.to_string(),
        (Some("clone"), None) => "clone, work unknown".into(),
        (Some(m), _) => m.to_string(),
        (None, _) => "worktree".into(),
    };
    Row {
        machine: None,
        name: e.leaf.to_string(),
        repo: repo_path.to_string(),
        path: e.path.to_string_lossy().into_owned(),
        state: state.into(),
        git_mode,
        mode_label,
        branch: e.shown_branch().map(str::to_string),
        // A box whose directory is gone has no working tree to be dirty.
        dirty: dirt.and_then(|d| d.dirty).filter(|_| e.dir_exists),
        landed,
        runner: e.record.as_ref().map(|r| r.runner.to_string()),
        live,
        agent: crate::cli::list::agent_view(layout, &e.leaf, live),
        stale: false,
    }
}

/// The rows of one repository's boxes.
fn repo_rows(repo: &Repo, layout: &Layout, repo_path: &str, engines: &mut Engines) -> Vec<Row> {
    let entries = boxes::inventory(repo, layout);
    let landed = crate::land::landed::landed_all(&entries, repo, layout);
    entries
        .iter()
        .zip(boxes::dirt_all(&entries, repo))
        .zip(landed)
        .map(|((e, d), l)| row(e, Some(d), l, repo_path, layout, engines))
        .collect()
}

fn all_rows() -> Result<Vec<Row>, CliError> {
    let dirs = layout::repo_state_dirs().map_err(|e| CliError::of(ErrorKind::State, e))?;
    let mut rows = Vec::new();
    let mut engines = Engines::default();
    for repo_state in dirs {
        // Any record names the repository these boxes belong to.
        let records = layout::records_in(&repo_state);
        let Some(first) = records.first() else {
            // No record can be read: the noted repository still lists its boxes.
            let Some(main) = Layout::remembered_repo(&repo_state) else {
                continue;
            };
            let Ok(repo) = Repo::discover(&main) else {
                continue;
            };
            if !Layout::is_state_dir_of(&repo_state, &repo.common_dir) {
                continue;
            }
            let layout = Layout::in_state_dir(&repo.main_root, repo_state.clone());
            let repo_path = repo.main_root.to_string_lossy().into_owned();
            rows.extend(repo_rows(&repo, &layout, &repo_path, &mut engines));
            continue;
        };
        let repo_path = first.repo.to_string_lossy().into_owned();
        match Repo::discover(&first.repo) {
            Ok(repo) if repo.common_dir == first.common_dir => {
                let layout = Layout::in_state_dir(&repo.main_root, repo_state.clone());
                rows.extend(repo_rows(&repo, &layout, &repo_path, &mut engines));
            }
            _ => {
                // The repository is gone: show what the records say.
                for r in &records {
                    let Ok(leaf) = crate::names::Leaf::parse(&r.name) else {
                        continue;
                    };
                    let layout = Layout::around_box(&r.path, repo_state.clone());
                    let e = BoxEntry {
                        dir_exists: r.path.is_dir(),
                        path: r.path.clone(),
                        leaf,
                        record: Some(r.clone()),
                        record_error: None,
                        admin_dir: None,
                        branch: None,
                        own_tip_time: None,
                        own_tip: None,
                        seen: None,
                    };
                    let mut row = row(&e, None, None, &repo_path, &layout, &mut engines);
                    if r.git_mode == crate::folder::MODE {
                        // A folder box has no repository to miss.
                        row.mode_label = crate::folder::MODE.to_string();
                    } else {
                        row.state = "repo-missing".into();
                    }
                    rows.push(row);
                }
            }
        }
    }
    Ok(rows)
}

/// `ls --json`'s document: what the MCP server's `box_list` answers with `--all`.
pub(crate) fn json() -> Result<serde_json::Value, CliError> {
    let cfg = crate::cli::load_config()?;
    let mut rows = all_rows()?;
    let far = far_rows(&cfg)?;
    rows.extend(far.rows);
    Ok(document(&rows, &far.unreached))
}

/// What `ls` says of a box another machine's `list` calls `state` (its session
/// `live`): `list`'s `ok` and `landed` are `ls`'s `ready` (`mode` says landed), as is
/// `unregistered` (`ls` does not look at registrations); a word no treebox of this
/// protocol says is a record that cannot be read.
fn far_state(state: Option<&str>, live: bool) -> &'static str {
    match state {
        _ if live => "live",
        Some("ok" | "landed" | "unregistered") => "ready",
        Some("missing") => "missing",
        Some("no-record") => "no-record",
        Some("broken") => "broken",
        _ => "bad-record",
    }
}

/// The rows of this machine's repositories' boxes on the config's other machines,
/// a warning per machine not asked, and those machines.
#[derive(Default)]
struct Far {
    rows: Vec<Row>,
    warnings: Vec<String>,
    unreached: Vec<crate::remote::listing::Unreached>,
}

fn far_rows(cfg: &crate::config::UserConfig) -> Result<Far, CliError> {
    if cfg.machines.is_empty() {
        return Ok(Far::default());
    }
    let far = crate::cli::on::boxes_of_known_repos(&cfg.machines, false)?;
    let warnings = crate::cli::list::far_warnings(&far);
    let unreached = far.unreached;
    let text = |b: &serde_json::Value, k: &str| b[k].as_str().map(crate::sanitize::line);
    let rows = far
        .boxes
        .into_iter()
        .map(|(machine, repo, b)| {
            let (live, agent) = crate::cli::list::view_of(&b);
            let landed = b["landed"].as_bool();
            // In this document's words: what `ls` would say there.
            let (git_mode, runner) = crate::cli::list::modes_of(&b);
            let mode = git_mode.map_or("worktree".to_string(), |m| m.to_string());
            Row {
                machine: Some(machine),
                name: text(&b, "name").unwrap_or_default(),
                repo,
                path: text(&b, "path").unwrap_or_default(),
                state: far_state(b["state"].as_str(), live).into(),
                mode_label: if landed == Some(true) {
                    format!("{mode}, landed")
                } else {
                    mode
                },
                git_mode: git_mode.map(|m| m.to_string()),
                branch: text(&b, "branch"),
                dirty: None,
                landed,
                runner: runner.map(|r| r.to_string()),
                live,
                agent,
                stale: b["stale"] == true,
            }
        })
        .collect();
    Ok(Far {
        rows,
        warnings,
        unreached,
    })
}

fn document(rows: &[Row], unreachable: &[crate::remote::listing::Unreached]) -> serde_json::Value {
    let boxes: Vec<SandboxLsBox> = rows
        .iter()
        .map(|r| SandboxLsBox {
            name: &r.name,
            repo: &r.repo,
            path: &r.path,
            machine: r.machine.as_deref(),
            state: &r.state,
            git_mode: r.git_mode.as_deref(),
            mode: &r.mode_label,
            branch: r.branch.as_deref(),
            dirty: r.dirty,
            runner: r.runner.as_deref(),
            progress: Progress::of(r.agent.status, r.agent.exit, r.landed),
            stale: r.stale,
        })
        .collect();
    SandboxLsDocument {
        schema_version: V1,
        boxes,
        unreachable,
    }
    .to_value()
}

pub fn run(a: LsArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let cfg = crate::cli::load_config()?;
    let mut rows = all_rows()?;
    let far = far_rows(&cfg)?;
    rows.extend(far.rows);
    for w in &far.warnings {
        ui.warning(w);
    }
    let machines = !cfg.machines.is_empty();
    if a.json {
        ui.out_json(&document(&rows, &far.unreached));
        return Ok(error::OK);
    }
    if rows.is_empty() {
        ui.info("no boxes on this machine (make one with `git sandbox up NAME`)");
        return Ok(error::OK);
    }
    // With machines in the config, a MACHINE column first (`-`: this one).
    let machine_cell = |m: Option<&str>| {
        if machines {
            format!("{:<10} ", crate::sanitize::line(m.unwrap_or("-")))
        } else {
            String::new()
        }
    };
    let mut out = format!(
        "{}{:<24} {:<32} {:<12} {:<30} {:<28} {:<6} {}\n",
        machine_cell(Some("MACHINE")),
        "NAME",
        "REPO",
        "STATE",
        "GIT",
        "BRANCH",
        "DIRTY",
        "AGENT"
    );
    let now = crate::state::record::now() as i64;
    for r in &rows {
        out.push_str(&format!(
            "{}{:<24} {:<32} {:<12} {:<30} {:<28} {:<6} {}\n",
            machine_cell(r.machine.as_deref()),
            crate::sanitize::line(&r.name),
            crate::sanitize::line(&r.repo),
            if r.stale { "stale" } else { &r.state },
            r.mode_label,
            crate::sanitize::line(r.branch.as_deref().unwrap_or("-")),
            match r.dirty {
                Some(true) => "yes",
                Some(false) => "no",
                None => "?",
            },
            crate::cli::list::agent_cell(r.live, &r.agent, now),
        ));
    }
    ui.out(out.trim_end());
    Ok(error::OK)
}
