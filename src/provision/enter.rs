//! `enter`: bring an existing box up to date before the agent runs in it again.
//!
//! Under the box's lock: finish an interrupted setup (guard, `.env`, dependencies), or
//! else refresh `.env` (keeping edits made in the box) and re-sync dependencies only
//! when the lockfile hash changed (or `--cold`). The recorded choices — runner, git
//! mode, harness — are reused; an explicit `--isolation` or `--git` that disagrees is a
//! conflict, while `--harness` overrides this one session.
//!
//! Nothing here runs git in the box: the box may have run, so its worktree config,
//! hooks and attributes are hostile (SPEC §8.1).

use std::path::PathBuf;

use super::{copy, guard, run_setup, timed, ProvisionError, Reporter};
use crate::boxes::{self, BoxEntry};
use crate::config::UserConfig;
use crate::git::Repo;
use crate::harness::Harness;
use crate::state::{BoxLock, Layout, Record};
use crate::vocab::{GitMode, Isolation};

#[derive(Debug, Clone, Default)]
pub struct EnterRequest {
    pub cwd: PathBuf,
    pub reference: String,
    pub isolation: Option<String>,
    pub git_mode: Option<String>,
    /// This session only; the record keeps its harness.
    pub harness: Option<Harness>,
    pub cold: bool,
    pub extra_args: Vec<String>,
    pub state_root: Option<PathBuf>,
}

/// What happened to the dependencies on `enter`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deps {
    /// The lockfile hash is what setup last installed.
    Unchanged,
    /// Setup ran (hash changed, setup had not completed, or `--cold`).
    Synced { completed: bool },
}

#[derive(Debug, Clone)]
pub struct Entered {
    pub record: Record,
    /// The branch checked out now (may differ from the recorded one after a rename).
    pub branch: String,
    /// An interrupted setup was finished.
    pub finished_setup: bool,
    pub deps: Deps,
    pub env: copy::EnvOutcome,
    /// The harness launched this session (the flag, else the recorded one).
    pub harness: Harness,
    pub launch_argv: Vec<String>,
    pub session_path: PathBuf,
    pub warnings: Vec<String>,
    /// Whether the user trusts the main checkout, where provisioning read it already.
    pub main_trusted: Option<bool>,
    /// A container box: which model keys it kept (this shell has none) and which this
    /// shell's value replaced.
    pub keys: crate::runner::oci::KeysOutcome,
}

pub(crate) fn layout_for(
    repo: &Repo,
    state_root: Option<&PathBuf>,
) -> Result<Layout, ProvisionError> {
    Ok(match state_root {
        Some(root) => Layout::with_state_root(&repo.main_root, &repo.common_dir, root),
        None => Layout::new(&repo.main_root, &repo.common_dir)?,
    })
}

/// The box `reference` names, with its record (a box without one is not ours).
pub(crate) fn find_box(
    repo: &Repo,
    layout: &Layout,
    reference: &str,
) -> Result<(BoxEntry, Record), ProvisionError> {
    let entry = boxes::find(repo, layout, reference)?;
    if let Some(e) = &entry.record_error {
        return Err(ProvisionError::MalformedRecord { message: e.clone() });
    }
    let Some(record) = entry.record.clone() else {
        return Err(ProvisionError::NoRecord {
            leaf: entry.leaf.to_string(),
            path: entry.path.clone(),
        });
    };
    if !entry.dir_exists {
        return Err(ProvisionError::BoxMissing {
            leaf: entry.leaf.to_string(),
            path: entry.path.clone(),
        });
    }
    Ok((entry, record))
}

pub fn enter(
    req: &EnterRequest,
    cfg: &UserConfig,
    reporter: &mut dyn Reporter,
) -> Result<Entered, ProvisionError> {
    let repo = Repo::discover(&req.cwd)?;
    let layout = layout_for(&repo, req.state_root.as_ref())?;
    let (entry, mut record) = find_box(&repo, &layout, &req.reference)?;
    if let Some(iso) = &req.isolation {
        // `auto` means what it would pick today; an explicit runner is compared as is.
        let wanted = match iso.parse::<Isolation>() {
            Ok(Isolation::Auto) => Some(super::resolve_runner(Some(iso), cfg)?),
            Ok(Isolation::Runner(r)) => Some(r),
            Err(_) => None,
        };
        if wanted != Some(record.runner) {
            return Err(ProvisionError::IsolationMismatch {
                leaf: record.name.clone(),
                recorded: record.runner.to_string(),
                requested: wanted.map_or_else(|| iso.clone(), |r| r.to_string()),
                flagged: true,
            });
        }
    }
    if let Some(mode) = &req.git_mode {
        if mode.parse::<GitMode>().ok() != Some(record.git_mode) {
            return Err(ProvisionError::ModeMismatch {
                leaf: record.name.clone(),
                built: record.git_mode.to_string(),
                requested: mode.clone(),
            });
        }
    }
    let leaf = entry.leaf.clone();
    let lock = BoxLock::try_acquire(&layout.lock_path(&leaf), leaf.as_str())?;
    // Looked up before the lock: a teardown may have finished in between. Read the
    // record again under the lock, and never bring back a box that is gone.
    let record_path = layout.record_path(&leaf);
    match Record::load(&record_path)? {
        Some(r) if entry.path.is_dir() => record = r,
        _ => {
            lock.release_and_remove();
            return Err(ProvisionError::Resolve(
                crate::boxes::ResolveError::NotFound {
                    reference: req.reference.clone(),
                    branch_exists: false,
                },
            ));
        }
    }
    let mut warnings = Vec::new();
    if record.mounts_user_git() && layout.first_time(&leaf, "unsafe.warned") {
        // Once per box: `doctor` keeps saying it.
        reporter.warn(format!(
            "box `{leaf}` is unsafe: made by an earlier version, its container can write your repository's git dir; recreate it (see `git treebox doctor`)"
        ));
    }
    if layout.in_working_tree(&record) {
        // Every time: its checkout is where the user's own tools walk.
        let q = crate::cmd::quote(leaf.as_str());
        warnings.push(format!(
            "box `{leaf}` was made before container boxes' checkouts moved out of your working tree: your own test runners and tools walk into {} and can run what its agent wrote; bring its work back (`git sandbox fetch {q}`), then `git sandbox down {q}` and create it again",
            record.path.display()
        ));
    }
    let finished_setup = !record.setup_completed;
    if finished_setup {
        reporter.note(format!("finishing the interrupted setup of box `{leaf}`"));
        timed(reporter, "checkout", || {
            super::repair_checkout(&repo, &layout, &record)
        })?;
        // Before the guard is written into it: a lost `.git` is not remade by that.
        super::check_checkout(&record)?;
        if let Some(own) = crate::boxes::OwnGit::of(&record) {
            // A clone's (a sandboxed worktree's) guard lives in host-owned bookkeeping
            // (see `create`).
            let hooks = layout.hooks_dir(&leaf);
            timed(reporter, "guard", || {
                guard::find_guard_exe().and_then(|exe| {
                    guard::install_into(&own.head_dir, &own.common, Some(&hooks), &exe)
                })
            })?;
        } else if let Some(admin) = repo.worktree_admin_dir(&entry.path) {
            // Looked up again: a repaired checkout has a new registration.
            timed(reporter, "guard", || {
                guard::find_guard_exe()
                    .and_then(|exe| guard::install(&admin, &repo.common_dir, &exe))
            })?;
        }
    }
    super::check_checkout(&record)?;
    // A hook manager run in the box (`lefthook install`, husky…) writes where git says
    // hooks live — over the guard. Its hooks run behind the guard from now on.
    // The box's own config can stop that (an include setting `core.hooksPath`): the
    // box's choice, said, never a reason not to enter it.
    timed(reporter, "guard", || {
        guard::keep_guard_noting(&repo, &layout, &record, &mut warnings)
    });
    let env_source = copy::env_source(&repo.main_root, cfg.env_file.as_deref());
    let env = timed(reporter, "env", || {
        copy::refresh_env(
            env_source.as_deref(),
            &entry.path,
            super::env_tracked(&repo),
            record.env_hash.as_deref(),
        )
    });
    match &env {
        copy::EnvOutcome::Copied { hash } => record.env_hash = Some(hash.clone()),
        copy::EnvOutcome::Refused { reason } => warnings.push(format!(".env not copied: {reason}")),
        // Only when the main checkout's `.env` really changed since it was copied.
        copy::EnvOutcome::KeptEdited {
            canonical_changed: true,
        } => warnings.push(format!(
            "{}/.env was edited in the box; kept it (the canonical .env changed since: merge by hand)",
            entry.path.display()
        )),
        copy::EnvOutcome::Absent
        | copy::EnvOutcome::Unchanged
        | copy::EnvOutcome::KeptEdited { .. } => {}
    }
    let ecos = super::setup::detect(&entry.path);
    let hash = super::setup::lockfile_hash(&entry.path, &ecos);
    let needs_sync = finished_setup || req.cold || hash != record.lockfile_hash;
    let harness = req.harness.unwrap_or(record.harness);
    let mut keys = crate::runner::oci::KeysOutcome::default();
    let deps = if record.runner.is_container() {
        // The container: running (started or remade), credentials fresh, then any
        // setup inside it. A failure is loud, as on create.
        super::container_up(
            Some(&repo),
            &layout,
            &leaf,
            &mut record,
            cfg,
            harness,
            needs_sync,
            reporter,
        )?;
        keys = crate::runner::oci::refresh_credentials(&layout, &record, harness)?;
        warnings.extend(super::container_stage::loopback_urls_said(
            record.runner,
            harness,
            reporter,
        ));
        if needs_sync {
            Deps::Synced { completed: true }
        } else {
            reporter.note("deps unchanged".into());
            Deps::Unchanged
        }
    } else if needs_sync {
        let (report, ecos) = run_setup(
            &entry.path,
            cfg,
            &record.ports,
            req.cold.then(|| layout.cold_cache_dir(&leaf)),
            reporter,
            &mut warnings,
        )?;
        record.ecosystems = ecos.clone();
        record.lockfile_hash = super::setup::lockfile_hash(&entry.path, &ecos);
        record.setup_completed = report.completed;
        Deps::Synced {
            completed: report.completed,
        }
    } else {
        reporter.note("deps unchanged".into());
        Deps::Unchanged
    };
    if needs_sync {
        // Setup ran the repository's install scripts: a hook manager among them.
        guard::keep_guard_noting(&repo, &layout, &record, &mut warnings);
    }
    record.save(&layout.record_path(&leaf))?;
    drop(lock);
    for w in &warnings {
        reporter.warn(w.clone());
    }
    let program = cfg.harness_program(harness);
    // The status producer (SPEC §7): rewritten for a host box, present in a container
    // made with its mount.
    let hooks = crate::runner::oci::status::launch_hooks(&layout, &leaf, record.runner);
    // The trust the user gave the main checkout, carried to a host clone box.
    let extra = super::host_trust::launch_extra(
        harness,
        record.runner,
        record.git_mode,
        &record.repo,
        &record.path,
        &req.extra_args,
    );
    let before = super::host_trust::before_launch(
        harness,
        record.runner,
        record.git_mode,
        &record.repo,
        &record.path,
    );
    if let Some(w) = before.warning {
        reporter.warn(w.clone());
        warnings.push(w);
    }
    Ok(Entered {
        branch: entry
            .shown_branch()
            .unwrap_or(record.branch.as_str())
            .to_string(),
        launch_argv: harness.launch_argv(&program, &extra, hooks.as_ref()),
        harness,
        session_path: layout.session_path(&leaf),
        record,
        finished_setup,
        deps,
        env,
        keys,
        warnings,
        main_trusted: before.main_trusted,
    })
}
