//! Where things live on disk.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::names::Leaf;

/// Directory of boxes, relative to the main worktree.
pub const BOX_ROOT: &str = ".treebox/worktrees";

/// The paths of one repository's boxes and bookkeeping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// `<main>/.treebox/worktrees`
    pub box_root: PathBuf,
    /// `$XDG_STATE_HOME/treebox/repos/<repo-key>`
    pub repo_state: PathBuf,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot find a state directory: set HOME or XDG_STATE_HOME")]
pub struct NoStateDir;

/// `$XDG_STATE_HOME/treebox` (default `~/.local/state/treebox`).
pub fn state_root() -> Result<PathBuf, NoStateDir> {
    xdg::BaseDirectories::with_prefix("treebox")
        .get_state_home()
        .ok_or(NoStateDir)
}

/// A stable, readable key for a repository: `<dir name>-<12 hex of sha256(path)>`.
pub fn repo_key(common_dir: &Path) -> String {
    let digest = Sha256::digest(common_dir.as_os_str().as_encoded_bytes());
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    let main = common_dir
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repo".into());
    let readable: String = main
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{readable}-{hex}")
}

impl Layout {
    /// The layout under the user's state dir (`$XDG_STATE_HOME/treebox`).
    pub fn new(main_root: &Path, common_dir: &Path) -> Result<Layout, NoStateDir> {
        Ok(Layout::with_state_root(
            main_root,
            common_dir,
            &state_root()?,
        ))
    }

    /// The layout under an explicit state root.
    pub fn with_state_root(main_root: &Path, common_dir: &Path, root: &Path) -> Layout {
        Layout {
            box_root: main_root.join(BOX_ROOT),
            repo_state: root.join("repos").join(repo_key(common_dir)),
        }
    }

    pub fn box_path(&self, leaf: &Leaf) -> PathBuf {
        self.box_root.join(leaf.as_str())
    }

    /// Per-box bookkeeping directory (record, and later rendered config, credentials).
    /// Note which repository this state dir belongs to (`<repo_state>/repo`, the main
    /// checkout's path), once: `git sandbox ls` finds the repository through it even
    /// when none of its records can be read.
    pub fn remember_repo(&self, main_root: &Path) {
        let marker = self.repo_state.join("repo");
        if marker.is_file() {
            return;
        }
        let _ = std::fs::create_dir_all(&self.repo_state);
        let _ = super::atomic::write(&marker, main_root.as_os_str().as_encoded_bytes(), 0o600);
    }

    /// The repository a state dir belongs to, as [`Layout::remember_repo`] noted it.
    pub fn remembered_repo(repo_state: &Path) -> Option<PathBuf> {
        crate::git::repo::read_plain(&repo_state.join("repo")).map(PathBuf::from)
    }

    pub fn box_state(&self, leaf: &Leaf) -> PathBuf {
        self.repo_state.join("boxes").join(leaf.as_str())
    }

    pub fn record_path(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("record.json")
    }

    /// The lock serialising changes to git's worktree registrations.
    pub fn registration_lock_path(&self) -> PathBuf {
        self.repo_state.join("worktrees.lock")
    }

    /// The session marker held while an agent runs in the box.
    pub fn session_path(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("session.lock")
    }

    pub fn lock_path(&self, leaf: &Leaf) -> PathBuf {
        self.repo_state
            .join("locks")
            .join(format!("{}.lock", leaf.as_str()))
    }

    /// Every leaf with a record, sorted.
    pub fn recorded_leaves(&self) -> Vec<Leaf> {
        let mut out: Vec<Leaf> = std::fs::read_dir(self.repo_state.join("boxes"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| Leaf::parse(&e.file_name().to_string_lossy()).ok())
            .collect();
        out.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_stable_and_readable() {
        let k = repo_key(Path::new("/home/u/my repo/.git"));
        assert!(k.starts_with("my_repo-"), "{k}");
        assert_eq!(k, repo_key(Path::new("/home/u/my repo/.git")));
        assert_ne!(k, repo_key(Path::new("/home/v/my repo/.git")));
    }
}
