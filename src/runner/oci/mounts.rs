//! What of the host a box's container sees: the bind [`Mount`]s.
//!
//! Invariants:
//! - The checkout at its host path, and its git data: a clone's own `.git` inside it; a
//!   sandboxed worktree's bare clone (SPEC §6) at its host path; for both, the
//!   borrowed object store (the user's) and the guard read-only. Nothing else of the
//!   user's git dir (a container worktree made by an earlier version still gets the
//!   repository's git dir, as then; `doctor` calls it unsafe). The detected ecosystems'
//!   package caches, never writable from the box ([`caches`]: the box's own writable
//!   layer, and read-only only what the tools check; never a directory holding host
//!   executables); the credentials copies; the status
//!   directory, and its host-owned producer read-only. Nothing else of the host.
//! - Every path is checked with [`mountable`] before the engine sees it.
//!
//! Called by `container` (`create`); `provision` and `folder` use [`mountable`] to
//! refuse an unmountable path before anything is written.

use std::path::{Path, PathBuf};

use super::credentials::stage_credentials;
use super::error::{io_err, ContainerError};
use super::image::Spec;
use super::status::{AGENT_DIR, STATUS_DIR, STATUS_ENV};
use super::{Ecosystem, EnvVars};

mod caches;

/// A bind mount. Paths are the same inside and out unless `dst` says otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub src: PathBuf,
    pub dst: PathBuf,
    pub readonly: bool,
}

impl Mount {
    pub fn same(path: &Path, readonly: bool) -> Mount {
        Mount {
            src: path.to_path_buf(),
            dst: path.to_path_buf(),
            readonly,
        }
    }

    pub(super) fn to_arg(&self) -> String {
        let mut s = format!(
            "type=bind,src={},dst={}",
            self.src.display(),
            self.dst.display()
        );
        if self.readonly {
            s.push_str(",readonly");
        }
        s
    }
}

/// Can `--mount` express this path? (It is a comma-separated list of key=value.)
pub fn mountable(p: &Path) -> bool {
    let s = p.to_string_lossy();
    p.is_absolute() && !s.contains([',', '\n', '\r', '"']) && !s.chars().any(char::is_control)
}

impl Spec<'_> {
    /// The mounts: the checkout and git data at host paths, the protections, caches,
    /// credentials and status.
    pub(super) fn mounts(
        &self,
        agent_home: &Path,
        ecos: &[Ecosystem],
    ) -> Result<(Vec<Mount>, EnvVars), ContainerError> {
        let r = self.record;
        let mut m = vec![Mount::same(&r.path, false)];
        match (r.git_mode.as_str(), self.repo) {
            // A folder box: the folder itself is all there is.
            ("folder", _) | (_, None) => {}
            ("clone", Some(repo)) => {
                m.push(Mount::same(&repo.common_dir.join("objects"), true));
                m.push(Mount::same(&self.layout.hooks_dir(self.leaf), true));
            }
            // A sandboxed worktree: its own bare clone, the borrowed store read-only,
            // the guard read-only; nothing else of the user's git dir.
            (_, Some(repo)) if r.bare_clone.is_some() => {
                if let Some(bare) = &r.bare_clone {
                    m.push(Mount::same(bare, false));
                }
                m.push(Mount::same(&repo.common_dir.join("objects"), true));
                m.push(Mount::same(&self.layout.hooks_dir(self.leaf), true));
            }
            // A container worktree made before sandboxed worktrees existed (unsafe:
            // `doctor` says so): the user's git dir, as it was mounted then.
            (_, Some(repo)) => {
                let common = &repo.common_dir;
                m.push(Mount::same(common, false));
                m.push(Mount::same(&common.join("hooks"), true));
                // Other boxes' registrations read-only, so an in-box `git worktree prune`
                // cannot delete them; this box's own admin dir writable, its guard not.
                let worktrees = common.join("worktrees");
                m.push(Mount::same(&worktrees, true));
                if let Some(admin) = repo.worktree_admin_dir(&r.path) {
                    m.push(Mount::same(&admin, false));
                    m.push(Mount::same(
                        &admin.join(crate::state::hooks::HOOKS_DIR_NAME),
                        true,
                    ));
                }
            }
        }
        let host_home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        let mut env = Vec::new();
        // The caches: the box's own writable layer, made afresh, beside read-only parts
        // of the host's (`caches`).
        let own = self.layout.cache_dir(self.leaf);
        caches::reset(&own)?;
        for eco in ecos {
            let view = caches::view(*eco, &host_home, &own, &r.path)?;
            m.extend(view.mounts);
            env.extend(view.env);
        }
        m.extend(stage_credentials(
            self.layout,
            self.record,
            self.harness,
            &host_home,
            agent_home,
        )?);
        // The status channel, writable, and its host-owned producer, read-only (SPEC §7).
        let status = self.layout.status_dir(self.leaf);
        let agent = self.layout.agent_hooks_dir(self.leaf);
        super::status::install(self.layout, self.leaf, self.record.runner)
            .map_err(io_err("could not write the status hooks in", &agent))?;
        m.push(Mount {
            src: status,
            dst: PathBuf::from(STATUS_DIR),
            readonly: false,
        });
        m.push(Mount {
            src: agent,
            dst: PathBuf::from(AGENT_DIR),
            readonly: true,
        });
        env.push((STATUS_ENV.to_string(), STATUS_DIR.to_string()));
        for mount in &m {
            for p in [&mount.src, &mount.dst] {
                if !mountable(p) {
                    return Err(ContainerError::Unmountable { path: p.clone() });
                }
            }
        }
        Ok((m, env))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_paths() {
        assert!(mountable(Path::new("/home/u/repo")));
        assert!(!mountable(Path::new("/home/u/a,b")));
        assert!(!mountable(Path::new("relative")));
        assert!(!mountable(Path::new("/x\ny")));
    }
}
