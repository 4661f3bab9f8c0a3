//! Folder boxes: `git sandbox up` in a project that is not a git repository.
//!
//! There is nothing to check out, so the box is the folder itself: on the host runner
//! the agent works in it; in a container it is the one project mount. Everything else
//! is as for any box — a host-owned record and lock under the state dir, setup, the
//! container with its credentials, firewall and status channel.
//!
//! The one rule that matters: the folder is the user's, not a checkout treebox made.
//! Removing a folder box removes its container and bookkeeping and never the folder.

use std::path::{Path, PathBuf};

use crate::config::UserConfig;
use crate::git::repo::canonical;
use crate::harness::Harness;
use crate::names::Leaf;
use crate::provision::{run_setup, ProvisionError, Reporter};
use crate::state::layout::repo_key;
use crate::state::{BoxLock, Layout, Record};
use crate::vocab::{GitMode, RunnerKind};

/// The record's git mode for a folder box.
pub const MODE: GitMode = GitMode::Folder;

/// The bookkeeping layout of a folder's boxes.
pub fn layout(folder: &Path) -> Result<Layout, ProvisionError> {
    // The key's readable part is the folder's name; the suffix keeps it apart from a
    // repository that might one day live there.
    let key = repo_key(&folder.join(".treebox-folder"));
    Ok(Layout::keyed(
        folder.parent().map(Path::to_path_buf).unwrap_or_default(),
        &key,
    )?)
}

/// What `up` did.
#[derive(Debug, Clone)]
pub struct FolderUp {
    pub record: Record,
    pub resumed: bool,
    pub session_path: PathBuf,
    pub layout: Layout,
}

/// What the user asked of `up` in a folder.
#[derive(Debug, Clone)]
pub struct FolderRequest {
    pub folder: PathBuf,
    pub name: String,
    pub runner: RunnerKind,
    pub template: String,
    pub firewall: bool,
    pub harness: Harness,
}

/// Provision a folder box: record, lock, setup (on the host or in the container).
pub fn up(
    req: &FolderRequest,
    cfg: &UserConfig,
    reporter: &mut dyn Reporter,
) -> Result<FolderUp, ProvisionError> {
    let leaf = Leaf::parse(&req.name)?;
    let folder = canonical(&req.folder);
    if req.runner.is_container() {
        crate::template::find(&req.template).map_err(crate::runner::oci::ContainerError::from)?;
        if !crate::runner::oci::mountable(&folder) {
            return Err(crate::runner::oci::ContainerError::Unmountable { path: folder }.into());
        }
    }
    let layout = layout(&folder)?;
    let lock = BoxLock::try_acquire(&layout.lock_path(&leaf), leaf.as_str())?;
    let record_path = layout.record_path(&leaf);
    let previous = Record::load(&record_path)?;
    let resumed = previous.is_some();
    let mut record = match previous {
        Some(r) if r.setup_completed => {
            return Err(ProvisionError::BoxExists {
                leaf: leaf.to_string(),
                path: folder,
            })
        }
        Some(r) if r.git_mode != MODE => {
            return Err(ProvisionError::ModeMismatch {
                leaf: leaf.to_string(),
                built: r.git_mode.to_string(),
                requested: MODE.to_string(),
            })
        }
        Some(r) => r,
        None => Record::begin(
            leaf.as_str(),
            &folder,
            &folder,
            &folder,
            MODE,
            req.runner,
            req.harness,
            (&req.template, req.firewall),
        ),
    };
    if record.runner.is_container() && record.container.is_none() {
        // The limits its container is made with (SPEC §7).
        record.limits = Some(cfg.limits());
    }
    record.save(&record_path)?;
    let ecos = crate::provision::setup::detect(&folder);
    record.ecosystems = ecos.clone();
    if !record.runner.is_container() {
        let mut warnings = Vec::new();
        let (report, _) = run_setup(&folder, cfg, &[], None, reporter, &mut warnings)?;
        for w in warnings {
            reporter.warn(w);
        }
        record.setup_completed = report.completed;
        record.lockfile_hash = crate::provision::setup::lockfile_hash(&folder, &ecos);
        record.save(&record_path)?;
    } else {
        // Saves the record itself, hash and setup state included.
        crate::provision::container_up(
            None,
            &layout,
            &leaf,
            &mut record,
            cfg,
            req.harness,
            true,
            reporter,
        )?;
    }
    drop(lock);
    Ok(FolderUp {
        session_path: layout.session_path(&leaf),
        record,
        resumed,
        layout,
    })
}

/// The folder box NAME of `folder` (exact name: a folder has few boxes).
pub fn find(folder: &Path, name: &str) -> Result<(Layout, Record), ProvisionError> {
    let folder = canonical(folder);
    let layout = layout(&folder)?;
    let not_found = || {
        ProvisionError::Resolve(crate::boxes::ResolveError::NotFound {
            reference: name.to_string(),
            branch_exists: false,
        })
    };
    let leaf = Leaf::parse(name).map_err(|_| not_found())?;
    match Record::load(&layout.record_path(&leaf))? {
        Some(r) if r.git_mode == MODE => Ok((layout, r)),
        _ => Err(not_found()),
    }
}

/// Remove a folder box: its container (and unused image) and its bookkeeping. The
/// folder itself is never touched.
pub fn remove(layout: &Layout, record: &Record) -> Result<(), ProvisionError> {
    let leaf = Leaf::parse(&record.name)?;
    let lock = BoxLock::try_acquire(&layout.lock_path(&leaf), leaf.as_str())?;
    crate::runner::oci::remove_box_containers(record)?;
    let state = layout.box_state(&leaf);
    if state.exists() {
        std::fs::remove_dir_all(&state).map_err(|source| ProvisionError::Io {
            what: "could not remove",
            path: state.clone(),
            source,
        })?;
    }
    lock.release_and_remove();
    Ok(())
}
