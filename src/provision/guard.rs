//! Pipeline stage: install the pre-push guard into one box's worktree.
//!
//! The guard must bind every push made from the box — on the host and inside a
//! container, where the worktree's private git dir is mounted at its host path — without
//! touching the main worktree or any other box. So it lives in the worktree's *private*
//! git dir (`<repo>/.git/worktrees/<id>`):
//!
//! ```text
//! <private>/treebox-hooks/git-treebox-guard   a copy of the guard binary (0755)
//! <private>/treebox-hooks/<hook-name>         hard links to it, one per HOOK_NAMES entry
//! <private>/config.worktree                   core.hooksPath = <private>/treebox-hooks
//! <common>/config                             extensions.worktreeConfig = true
//! ```
//!
//! Invariants:
//! - The copy is self-sufficient: deleting or upgrading the original binary, or a PATH
//!   without treebox, does not disarm an existing box.
//! - Files appear atomically (temp name + rename): a concurrent git never runs half a
//!   binary.
//! - Idempotent: running it again repairs and refreshes, never duplicates.
//! - `extensions.worktreeConfig` is a repo-wide one-time step that concurrent creates of
//!   different boxes may race on; lock contention is retried, and nothing is written
//!   when it is already set.
//!
//! Called by the provisioning pipeline after the checkout exists. Writes config through
//! libgit2 only (no git subprocess, so no repo-controlled config is executed).

use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::guard::HOOK_NAMES;

/// Name of the guard binary, next to the treebox binaries and inside the hooks dir.
pub const GUARD_EXE_NAME: &str = "git-treebox-guard";
/// Name of the hooks directory inside a worktree's private git dir.
pub use crate::state::hooks::{HOOKS_DIR_NAME, HOOKS_README_NAME, PRE_COMMIT_IN_A_BOX};

/// How long a config write keeps retrying while another process holds `config.lock`.
const LOCK_PATIENCE: Duration = Duration::from_secs(10);

/// Why the guard could not be found or installed.
#[derive(Debug, thiserror::Error)]
pub enum GuardInstallError {
    #[error(
        "cannot find `{GUARD_EXE_NAME}` next to {} or on PATH",
        .searched_dir.display()
    )]
    NotFound {
        searched_dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read git config {}", .path.display())]
    ReadConfig {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("cannot set `{key}` in {}", .path.display())]
    WriteConfig {
        path: PathBuf,
        key: &'static str,
        #[source]
        source: git2::Error,
    },
    #[error("cannot create the hooks directory {}", .path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot copy the guard binary {} to {}", .from.display(), .path.display())]
    Copy {
        from: PathBuf,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot write the note beside the guard, {}", .path.display())]
    WriteNote {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot link hook {}", .path.display())]
    Link {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("hooks directory path {} is not valid UTF-8", .path.display())]
    NonUtf8Path {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// Find the guard binary: next to `std::env::current_exe()` (same dir, named
/// `git-treebox-guard`), else on PATH.
pub fn find_guard_exe() -> Result<PathBuf, GuardInstallError> {
    let exe = std::env::current_exe().map_err(|source| GuardInstallError::NotFound {
        searched_dir: PathBuf::from("<current executable>"),
        source,
    })?;
    let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    let beside = dir.join(GUARD_EXE_NAME);
    if is_executable(&beside) {
        return Ok(beside);
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .filter(|d| d.is_absolute())
        .map(|d| d.join(GUARD_EXE_NAME))
        .find(|p| is_executable(p));
    on_path.ok_or_else(|| GuardInstallError::NotFound {
        searched_dir: dir,
        source: io::Error::new(io::ErrorKind::NotFound, "no executable file of that name"),
    })
}

/// Where a box's guard lives: its hooks dir (the host path, which is also its path
/// inside a container). A worktree of the user's repository keeps it in its private git
/// dir; a clone or a sandboxed worktree in host-owned bookkeeping. `None` for a folder
/// box (no guard), or a worktree git no longer registers.
pub fn box_hooks_dir(
    repo: &crate::git::Repo,
    layout: &crate::state::Layout,
    record: &crate::state::Record,
) -> Option<PathBuf> {
    let leaf = crate::names::Leaf::parse(&record.name).ok()?;
    match crate::boxes::OwnGit::of(record) {
        Some(_) => Some(layout.hooks_dir(&leaf)),
        None if record.git_mode == crate::vocab::GitMode::Worktree => repo
            .worktree_admin_dir(&record.path)
            .map(|a| a.join(HOOKS_DIR_NAME)),
        None => None,
    }
}

/// Where a box's guard is: its private git dir (where `config.worktree` names the
/// hooks dir), its common git dir and its hooks dir. `None` for a box with no guard (a
/// folder) or a worktree git no longer registers.
struct GuardPlaces {
    private: PathBuf,
    common: PathBuf,
    hooks: PathBuf,
}

fn guard_places(
    repo: &crate::git::Repo,
    layout: &crate::state::Layout,
    record: &crate::state::Record,
) -> Option<GuardPlaces> {
    let hooks = box_hooks_dir(repo, layout, record)?;
    let (private, common) = match crate::boxes::OwnGit::of(record) {
        Some(own) => (own.head_dir, own.common),
        None => (
            repo.worktree_admin_dir(&record.path)?,
            repo.common_dir.clone(),
        ),
    };
    Some(GuardPlaces {
        private,
        common,
        hooks,
    })
}

impl GuardPlaces {
    /// The guard whole in its hooks dir ([`guard_in_place`]) and that dir the box's
    /// `core.hooksPath` — `git config --unset core.hooksPath` (what pre-commit's
    /// refusal suggests) switches it off as surely as overwriting it.
    fn armed(&self, guard_exe: &Path) -> bool {
        let cfg = self.private.join("config.worktree");
        let pointed = fs::symlink_metadata(&cfg).is_ok_and(|m| m.is_file())
            && git2::Config::open(&cfg)
                .and_then(|c| c.get_string("core.hooksPath"))
                .is_ok_and(|v| Path::new(&v) == self.hooks);
        pointed && guard_in_place(&self.hooks, guard_exe)
    }
}

/// Is the box's guard armed (see [`keep_guard`])? `None`: the box has no guard. What
/// `doctor` reports.
pub fn guard_armed(
    repo: &crate::git::Repo,
    layout: &crate::state::Layout,
    record: &crate::state::Record,
    guard_exe: &Path,
) -> Option<bool> {
    guard_places(repo, layout, record).map(|g| g.armed(guard_exe))
}

/// Put a box's guard back if a hook manager replaced it, or its `core.hooksPath` was
/// unset ([`reassert`]), wherever the box keeps it. Every command that opens a box
/// calls this (after [`super::check_checkout`]). Returns the hook names moved aside
/// (now chained).
pub fn keep_guard(
    repo: &crate::git::Repo,
    layout: &crate::state::Layout,
    record: &crate::state::Record,
) -> Result<Vec<String>, GuardInstallError> {
    let Some(g) = guard_places(repo, layout, record) else {
        return Ok(Vec::new());
    };
    let exe = find_guard_exe()?;
    if g.armed(&exe) {
        // A box made before the note existed gets it too.
        write_readme(&g.hooks)?;
        return Ok(Vec::new());
    }
    reassert(&g.private, &g.common, Some(&g.hooks), &exe)
}

/// [`keep_guard`], with what happened said as a warning into `warnings`. Called when a
/// box is opened, and again after its setup ran: an install script (lefthook's
/// `postinstall`, husky's `prepare`) is a hook manager too.
pub fn keep_guard_noting(
    repo: &crate::git::Repo,
    layout: &crate::state::Layout,
    record: &crate::state::Record,
    warnings: &mut Vec<String>,
) {
    let leaf = &record.name;
    match keep_guard(repo, layout, record) {
        Ok(moved) if !moved.is_empty() => warnings.push(format!(
            "box `{leaf}`: a hook manager had replaced the guard's {}; the guard is back and runs them",
            moved.join(", ")
        )),
        Ok(_) => {}
        Err(e) => warnings.push(format!(
            "box `{leaf}`: the pre-push guard could not be put back: {}",
            crate::sanitize::line(&crate::sanitize::chain(&e))
        )),
    }
}

/// Give a box with git data of its own (a clone's `.git`, a sandboxed worktree's bare
/// clone: `box_git`) the repository's own hooks, which the guard chains to as it does
/// in a worktree: the user's `core.hooksPath` when their repository sets one (husky's
/// `.husky/_` resolves in the box's checkout as in the main one), else a copy of the
/// executables in the user's hooks dir (what `lefthook install` or `pre-commit
/// install` put there). Run once, at creation, before the box has run anything.
pub fn carry_repo_hooks(user: &crate::git::Repo, box_git: &Path) -> io::Result<()> {
    let to_io = |e: git2::Error| io::Error::other(e.message().to_string());
    let local = user
        .git
        .config()
        .and_then(|c| c.open_level(git2::ConfigLevel::Local))
        .map_err(to_io)?;
    if let Ok(path) = local.get_string("core.hooksPath") {
        let mut cfg = git2::Config::open(&box_git.join("config")).map_err(to_io)?;
        return cfg.set_str("core.hooksPath", &path).map_err(to_io);
    }
    let Ok(rd) = fs::read_dir(user.common_dir.join("hooks")) else {
        return Ok(());
    };
    let dest = box_git.join("hooks");
    for e in rd.flatten() {
        let name = e.file_name();
        let name_str = name.to_string_lossy();
        let Ok(m) = e.metadata() else { continue };
        if name_str.ends_with(".sample") || !m.is_file() || m.permissions().mode() & 0o111 == 0 {
            continue;
        }
        fs::create_dir_all(&dest)?;
        fs::copy(e.path(), dest.join(&name))?;
    }
    Ok(())
}

/// Is the guard whole in `hooks`: its copy an executable file the size of `guard_exe`
/// (a new treebox brings a new guard), and every hook name a link to that copy? (A hook
/// manager run in the box — `lefthook install`, husky, `pre-commit install` — writes
/// its own hook there, where git says hooks live.) Stat calls only, no link followed:
/// every command that opens a box asks.
pub fn guard_in_place(hooks: &Path, guard_exe: &Path) -> bool {
    let copy = hooks.join(GUARD_EXE_NAME);
    let Ok(meta) = fs::symlink_metadata(&copy) else {
        return false;
    };
    let whole = meta.is_file()
        && meta.permissions().mode() & 0o111 != 0
        && fs::metadata(guard_exe).is_ok_and(|m| m.len() == meta.len());
    whole
        && HOOK_NAMES.iter().all(|n| {
            fs::symlink_metadata(hooks.join(n))
                .is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
        })
}

/// Put the guard back where a hook manager replaced it: each hook that is not the
/// guard moves into `<hooks>/chained/` (the guard runs it as the repository's own
/// hook of that name, so the manager's hooks keep working), then the guard is
/// installed again ([`install_into`]). Returns the names moved aside. Nothing here
/// reads or runs what the box wrote: renames only.
pub fn reassert(
    private_git_dir: &Path,
    common_dir: &Path,
    hooks_dir: Option<&Path>,
    guard_exe: &Path,
) -> Result<Vec<String>, GuardInstallError> {
    let hooks = hooks_dir
        .map(Path::to_path_buf)
        .unwrap_or_else(|| private_git_dir.join(HOOKS_DIR_NAME));
    let copy = fs::symlink_metadata(hooks.join(GUARD_EXE_NAME)).ok();
    let chained = hooks.join(crate::guard::CHAINED_DIR);
    let mut moved = Vec::new();
    for name in HOOK_NAMES {
        let path = hooks.join(name);
        let Ok(m) = fs::symlink_metadata(&path) else {
            continue;
        };
        let is_guard = copy
            .as_ref()
            .is_some_and(|c| c.dev() == m.dev() && c.ino() == m.ino());
        if is_guard {
            continue;
        }
        let dir_err = |source| GuardInstallError::CreateDir {
            path: chained.clone(),
            source,
        };
        if !fs::symlink_metadata(&chained).is_ok_and(|c| c.is_dir()) {
            let _ = fs::remove_file(&chained);
            fs::create_dir_all(&chained).map_err(dir_err)?;
        }
        fs::rename(&path, chained.join(name)).map_err(|source| GuardInstallError::Link {
            path: path.clone(),
            source,
        })?;
        moved.push(name.to_string());
    }
    install_into(private_git_dir, common_dir, Some(&hooks), guard_exe)?;
    Ok(moved)
}

fn is_executable(p: &Path) -> bool {
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Make sure `extensions.worktreeConfig = true` is set in `<common_dir>/config`. Reads
/// first (no write when already set); retries for up to ~10 s while another writer
/// (git or libgit2) holds `config.lock`.
pub fn enable_worktree_config(common_dir: &Path) -> Result<(), GuardInstallError> {
    let path = common_dir.join("config");
    set_config(
        &path,
        "extensions.worktreeConfig",
        |cfg, key| {
            match cfg.get_bool(key) {
                Ok(v) => Ok(v),
                Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(false),
                Err(e) => Err(e),
            }
            .map(|set| (!set).then_some(()))
        },
        |cfg, key, ()| cfg.set_bool(key, true),
    )
}

/// Install into the worktree's PRIVATE git dir (e.g. `<repo>/.git/worktrees/<id>`):
/// create `<private>/treebox-hooks/` (0755), copy the guard into it as
/// `git-treebox-guard` (temp name + rename, mode 0755), hard-link every name in
/// [`HOOK_NAMES`] to that copy (replacing what is there), then set `core.hooksPath` to
/// the absolute hooks dir in `<private>/config.worktree`. Calls
/// [`enable_worktree_config`] first. Idempotent. Returns the hooks dir.
pub fn install(
    private_git_dir: &Path,
    common_dir: &Path,
    guard_exe: &Path,
) -> Result<PathBuf, GuardInstallError> {
    install_into(private_git_dir, common_dir, None, guard_exe)
}

/// Like [`install`], with the hooks dir at `hooks_dir` instead of inside the private
/// git dir. Clone mode uses it: a clone's `.git` is the agent's own to write, so its
/// guard lives in host-owned bookkeeping (mounted read-only into a container), and the
/// clone's `.git` stays as small as the objects it adds.
pub fn install_into(
    private_git_dir: &Path,
    common_dir: &Path,
    hooks_dir: Option<&Path>,
    guard_exe: &Path,
) -> Result<PathBuf, GuardInstallError> {
    enable_worktree_config(common_dir)?;

    let private =
        std::path::absolute(private_git_dir).map_err(|source| GuardInstallError::CreateDir {
            path: private_git_dir.to_path_buf(),
            source,
        })?;
    let hooks = match hooks_dir {
        Some(h) => std::path::absolute(h).map_err(|source| GuardInstallError::CreateDir {
            path: h.to_path_buf(),
            source,
        })?,
        None => private.join(HOOKS_DIR_NAME),
    };
    let create_err = |source| GuardInstallError::CreateDir {
        path: hooks.clone(),
        source,
    };
    fs::create_dir_all(&hooks).map_err(create_err)?;
    // Never write through a symlink planted where the hooks dir belongs.
    let real_dir = fs::symlink_metadata(&hooks).map_err(create_err)?;
    if !real_dir.is_dir() {
        return Err(create_err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "exists and is not a plain directory",
        )));
    }
    fs::set_permissions(&hooks, fs::Permissions::from_mode(0o755)).map_err(create_err)?;

    let copy = hooks.join(GUARD_EXE_NAME);
    let copy_err = |source| GuardInstallError::Copy {
        from: guard_exe.to_path_buf(),
        path: copy.clone(),
        source,
    };
    let tmp = temp_name(&hooks, GUARD_EXE_NAME);
    let copied = fs::copy(guard_exe, &tmp)
        .and_then(|_| fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755)))
        .and_then(|()| fs::rename(&tmp, &copy));
    if let Err(source) = copied {
        let _ = fs::remove_file(&tmp);
        return Err(copy_err(source));
    }

    let copy_meta = fs::metadata(&copy).map_err(copy_err)?;
    for name in HOOK_NAMES {
        link_hook(&copy, &copy_meta, &hooks.join(name))?;
    }
    write_readme(&hooks)?;

    let value = hooks
        .to_str()
        .ok_or_else(|| GuardInstallError::NonUtf8Path {
            path: hooks.clone(),
            source: io::Error::new(io::ErrorKind::InvalidData, "not UTF-8"),
        })?
        .to_owned();
    let worktree_config = private.join("config.worktree");
    set_config(
        &worktree_config,
        "core.hooksPath",
        // Exactly one value, ours. A box may have added others (`git config --add`),
        // which git reads last-wins: they all go.
        |cfg, key| {
            let mut values = Vec::new();
            if let Ok(entries) = cfg.multivar(key, None) {
                entries.for_each(|e| values.push(e.value().ok().map(str::to_owned)))?;
            }
            Ok((values != [Some(value.clone())]).then_some(()))
        },
        |cfg, key, ()| {
            match cfg.remove_multivar(key, ".*") {
                Err(e) if e.code() != git2::ErrorCode::NotFound => return Err(e),
                _ => {}
            }
            cfg.set_str(key, &value)
        },
    )?;
    Ok(hooks)
}

/// [`crate::state::hooks::write_note`], its failure as the guard's.
fn write_readme(hooks: &Path) -> Result<(), GuardInstallError> {
    crate::state::hooks::write_note(hooks).map_err(|source| GuardInstallError::WriteNote {
        path: hooks.join(HOOKS_README_NAME),
        source,
    })
}

/// Makes `link` a hard link to `copy`, atomically replacing whatever is there.
fn link_hook(copy: &Path, copy_meta: &fs::Metadata, link: &Path) -> Result<(), GuardInstallError> {
    // A new hooks dir (every create's): the link is made where nothing is yet.
    match fs::hard_link(copy, link) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(source) => {
            return Err(GuardInstallError::Link {
                path: link.to_path_buf(),
                source,
            })
        }
    }
    let same = fs::symlink_metadata(link)
        .is_ok_and(|m| m.dev() == copy_meta.dev() && m.ino() == copy_meta.ino());
    if same {
        return Ok(());
    }
    let dir = link.parent().unwrap_or(Path::new("."));
    let name = link.file_name().and_then(|n| n.to_str()).unwrap_or("hook");
    let tmp = temp_name(dir, name);
    let result = fs::hard_link(copy, &tmp).and_then(|()| fs::rename(&tmp, link));
    // rename() between two links to one inode succeeds without removing the source.
    let _ = fs::remove_file(&tmp);
    result.map_err(|source| GuardInstallError::Link {
        path: link.to_path_buf(),
        source,
    })
}

fn temp_name(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!(
        ".{name}.tmp.{}.{}",
        std::process::id(),
        jitter_seed()
    ))
}

/// Reads `key` from the single config file at `path` and, when `check` says a write is
/// needed, writes it with `write` — reopening and retrying while the file is locked.
fn set_config<T>(
    path: &Path,
    key: &'static str,
    check: impl Fn(&git2::Config, &str) -> Result<Option<T>, git2::Error>,
    write: impl Fn(&mut git2::Config, &str, T) -> Result<(), git2::Error>,
) -> Result<(), GuardInstallError> {
    // libgit2 writes a config file through a symlink to its target. A box can plant
    // one where its config belongs (its own admin dir is writable inside a container),
    // so anything but a regular file there is removed first: the link, not its target.
    if let Ok(m) = fs::symlink_metadata(path) {
        if !m.is_file() {
            let removed = if m.is_dir() {
                fs::remove_dir_all(path)
            } else {
                fs::remove_file(path)
            };
            removed.map_err(|source| GuardInstallError::WriteConfig {
                path: path.to_path_buf(),
                key,
                source: git2::Error::from_str(&format!(
                    "{} is not a regular file and could not be removed: {source}",
                    path.display()
                )),
            })?;
        }
    }
    let deadline = Instant::now() + LOCK_PATIENCE;
    let mut seed = jitter_seed();
    let mut attempt: u32 = 0;
    loop {
        let read_err = |source| GuardInstallError::ReadConfig {
            path: path.to_path_buf(),
            source,
        };
        let mut cfg = git2::Config::open(path).map_err(read_err)?;
        let Some(token) = check(&cfg, key).map_err(read_err)? else {
            return Ok(());
        };
        match write(&mut cfg, key, token) {
            Ok(()) => return Ok(()),
            Err(e) if is_lock_error(&e) && Instant::now() < deadline => {
                attempt = attempt.saturating_add(1);
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let cap = 5 + 5 * u64::from(attempt.min(10));
                std::thread::sleep(Duration::from_millis(1 + (seed >> 33) % cap));
            }
            Err(source) => {
                return Err(GuardInstallError::WriteConfig {
                    path: path.to_path_buf(),
                    key,
                    source,
                })
            }
        }
    }
}

fn is_lock_error(e: &git2::Error) -> bool {
    e.code() == git2::ErrorCode::Locked || e.message().to_ascii_lowercase().contains("lock")
}

/// A per-call pseudo-random seed (time, pid, thread): enough to de-synchronise retries.
fn jitter_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(d.as_nanos());
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_errors_are_recognised() {
        let locked = git2::Error::new(git2::ErrorCode::Locked, git2::ErrorClass::Config, "locked");
        assert!(is_lock_error(&locked));
        let by_message = git2::Error::new(
            git2::ErrorCode::GenericError,
            git2::ErrorClass::Os,
            "failed to lock file '/x/config.lock' for writing",
        );
        assert!(is_lock_error(&by_message));
        let other = git2::Error::new(
            git2::ErrorCode::GenericError,
            git2::ErrorClass::Config,
            "invalid config",
        );
        assert!(!is_lock_error(&other));
    }

    #[test]
    fn temp_names_are_hidden_and_distinct() {
        let a = temp_name(Path::new("/d"), "pre-push");
        let b = temp_name(Path::new("/d"), "pre-push");
        assert_ne!(a, b);
        let name = a.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        assert!(name.starts_with(".pre-push.tmp."), "{name}");
    }
}
