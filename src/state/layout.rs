//! Where things live on disk: the one place that spells the state layout.
//!
//! ```text
//! $XDG_STATE_HOME/treebox/                     state_root()
//!   guard-runs/<key>                           guard_run_marker
//!   machines/<machine>/<key>.json              machine_lists::path_of: a machine's last listing
//!   ports/<first port>                         ports_dir(): every box's block of ports
//!   repos/<repo-key>/                          Store::repo_state (repo_state_dirs() walks them)
//!     repo                                     the main checkout's path (remember_repo)
//!     worktrees.lock                           registration_lock_path
//!     list-cache.json                          list_cache_path
//!     landed-cache.json                        landed_cache_path
//!     locks/<leaf>.lock                        lock_path, lock_files
//!     boxes/<leaf>/                            box_state
//!       record.json  session.lock  park.seen  container.env
//!       credentials/  build/  hooks/  status/state  agent/  caches/
//! <main>/.treebox/worktrees/<leaf>             box_path: host boxes' checkouts
//! $XDG_DATA_HOME/treebox/checkouts/<repo-key>/<leaf>
//!                                              checkout_path: container boxes'
//! ```
//!
//! A box's checkout lives under one of two roots: a host box (and a container box made
//! before checkouts moved) under the repository's box root, a container box (sandboxed
//! worktree or container clone) under the checkouts root in treebox's data dir,
//! outside the user's working tree, where the user's own tools never walk (SPEC §5).
//! The record's `path` says which ([`Store::path_of`]); every check accepts both
//! ([`Store::is_root`]).
//!
//! [`Store`] (alias [`Layout`]) holds one repository's (or folder's) roots and names
//! every path under them; nobody else joins these segments. Callers: provision,
//! teardown, the runner, the maintenance passes (park, prune) and `cli/` (which only
//! asks for paths and records, never reads the disk itself).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::Record;
use crate::names::Leaf;

/// Directory of boxes, relative to the main worktree.
pub const BOX_ROOT: &str = ".treebox/worktrees";

pub use crate::names::BOXES_DIR;

/// `p` resolved when it can be, else as given (as `git::repo::canonical`).
fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Directory under the state root that holds one state dir per repository (or folder).
const REPOS: &str = "repos";
/// Directory under the data root that holds one checkouts root per repository.
const CHECKOUTS: &str = "checkouts";
/// Directory of a state dir that holds one bookkeeping dir per box.
const BOXES: &str = "boxes";
const RECORD: &str = "record.json";
const LOCKS: &str = "locks";

/// The paths of one repository's boxes and bookkeeping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    /// `<main>/.treebox/worktrees`: host boxes' checkouts.
    pub box_root: PathBuf,
    /// `$XDG_DATA_HOME/treebox/checkouts/<repo-key>`: container boxes' checkouts
    /// (empty when no data dir can be named: then no box lives there).
    pub checkout_root: PathBuf,
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

/// [`Layout::build_lock_path`] without a repository's layout: under [`state_root`].
pub fn build_lock_path(program: &str) -> Result<PathBuf, NoStateDir> {
    Ok(build_lock_in(&state_root()?, program))
}

fn build_lock_in(root: &Path, program: &str) -> PathBuf {
    root.join(format!("build-{program}.lock"))
}

/// `$XDG_DATA_HOME/treebox` (default `~/.local/share/treebox`).
pub fn data_root() -> Result<PathBuf, NoStateDir> {
    xdg::BaseDirectories::with_prefix("treebox")
        .get_data_home()
        .ok_or(NoStateDir)
}

/// `$XDG_STATE_HOME/treebox/ports`: the ledger of every box's ports ([`crate::ports`]).
pub fn ports_dir() -> Result<PathBuf, NoStateDir> {
    Ok(state_root()?.join("ports"))
}

/// `$XDG_DATA_HOME/treebox/checkouts`: every repository's checkouts root.
pub fn checkouts_dir() -> Result<PathBuf, NoStateDir> {
    Ok(data_root()?.join(CHECKOUTS))
}

/// `$XDG_DATA_HOME/treebox/checkouts/<key>`: the checkouts root of the repository
/// with this [`repo_key`] (empty when there is no data dir).
fn checkout_root_of(key: &std::ffi::OsStr) -> PathBuf {
    checkouts_dir().map(|d| d.join(key)).unwrap_or_default()
}

/// The container box whose checkout holds `dir` (the checkout itself or anything in
/// it), when `dir` is under some repository's checkouts root
/// (`$XDG_DATA_HOME/treebox/checkouts/<key>/<leaf>/…`, compared literally, then
/// resolved): that repository's state dir and the box's leaf. Paths only: nothing
/// under `dir` is opened.
pub fn moved_box_of(dir: &Path) -> Option<(PathBuf, Leaf)> {
    let checkouts = checkouts_dir().ok()?;
    let split = |rel: &Path| -> Option<(String, Leaf)> {
        let mut parts = rel.components();
        let key = parts.next()?.as_os_str().to_str()?.to_string();
        let leaf = Leaf::parse(parts.next()?.as_os_str().to_str()?).ok()?;
        Some((key, leaf))
    };
    let (key, leaf) = match dir.strip_prefix(&checkouts).ok().and_then(split) {
        Some(found) => found,
        None => {
            let real = std::fs::canonicalize(dir).ok()?;
            let checkouts = std::fs::canonicalize(&checkouts).ok()?;
            split(real.strip_prefix(&checkouts).ok()?)?
        }
    };
    Some((repo_state_dir(&key).ok()?, leaf))
}

/// `$XDG_STATE_HOME/treebox/repos/<key>`: the state dir of the repository (or folder)
/// with this [`repo_key`].
pub fn repo_state_dir(key: &str) -> Result<PathBuf, NoStateDir> {
    Ok(state_root()?.join(REPOS).join(key))
}

/// `$XDG_STATE_HOME/treebox/guard-runs/<key>`: the marker that the guard was seen to
/// run in an image (`key` names the engine, image and guard binary).
pub fn guard_run_marker(key: &str) -> Result<PathBuf, NoStateDir> {
    Ok(state_root()?.join("guard-runs").join(key))
}

/// Every repository's (and folder's) state dir on this machine, sorted; none when the
/// state root does not exist yet.
pub fn repo_state_dirs() -> Result<Vec<PathBuf>, NoStateDir> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(state_root()?.join(REPOS))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// The readable records of the state dir `repo_state` (as [`repo_state_dirs`] lists
/// them), in directory order; unreadable ones are skipped.
pub fn records_in(repo_state: &Path) -> Vec<Record> {
    std::fs::read_dir(repo_state.join(BOXES))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|b| Record::load(&b.path().join(RECORD)).ok().flatten())
        .collect()
}

/// The record of box `leaf` in the state dir `repo_state`, if there is a readable one.
pub fn record_in(repo_state: &Path, leaf: &Leaf) -> Option<Record> {
    Record::load(&repo_state.join(BOXES).join(leaf.as_str()).join(RECORD))
        .ok()
        .flatten()
}

/// Remove a whole state dir (the bookkeeping of a repository that is gone).
pub fn remove_repo_state(repo_state: &Path) -> std::io::Result<()> {
    std::fs::remove_dir_all(repo_state)
}

/// A stable, readable key for a repository: `<dir name>-<12 hex of sha256(path)>`.
pub fn repo_key(common_dir: &Path) -> String {
    let digest = Sha256::digest(common_dir.as_os_str().as_encoded_bytes());
    let hex = hex::encode(&digest[..6]);
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

/// The name most callers know the store by.
pub type Layout = Store;

impl Store {
    /// The layout under the user's state dir (`$XDG_STATE_HOME/treebox`) and data dir
    /// (`$XDG_DATA_HOME/treebox`).
    pub fn new(main_root: &Path, common_dir: &Path) -> Result<Layout, NoStateDir> {
        Layout::keyed(main_root.join(BOX_ROOT), &repo_key(common_dir))
    }

    /// The layout under an explicit root, holding both the state and the checkouts
    /// (`<root>/repos/<key>`, `<root>/checkouts/<key>`).
    pub fn with_state_root(main_root: &Path, common_dir: &Path, root: &Path) -> Layout {
        let key = repo_key(common_dir);
        Layout {
            box_root: main_root.join(BOX_ROOT),
            checkout_root: root.join(CHECKOUTS).join(&key),
            repo_state: root.join(REPOS).join(key),
        }
    }

    /// The layout of a folder (or anything else with the state key `key`) whose boxes
    /// sit under `box_root`.
    pub fn keyed(box_root: PathBuf, key: &str) -> Result<Layout, NoStateDir> {
        Ok(Layout {
            box_root,
            checkout_root: checkout_root_of(key.as_ref()),
            repo_state: repo_state_dir(key)?,
        })
    }

    /// The store of a state dir found by [`repo_state_dirs`], for the repository whose
    /// main checkout is `main_root`.
    pub fn in_state_dir(main_root: &Path, repo_state: PathBuf) -> Store {
        Store {
            box_root: main_root.join(BOX_ROOT),
            checkout_root: Self::checkout_root_beside(&repo_state),
            repo_state,
        }
    }

    /// The store of a state dir found by [`repo_state_dirs`], its box root read off
    /// one box's path (for a folder box, or a box whose repository is gone). A box
    /// under the checkouts root leaves the box root to the repository the state dir
    /// remembers.
    pub fn around_box(box_path: &Path, repo_state: PathBuf) -> Store {
        let checkout_root = Self::checkout_root_beside(&repo_state);
        let parent = box_path.parent().map(Path::to_path_buf).unwrap_or_default();
        let box_root = match Self::remembered_repo(&repo_state) {
            Some(main) if !checkout_root.as_os_str().is_empty() && parent == checkout_root => {
                main.join(BOX_ROOT)
            }
            _ => parent,
        };
        Store {
            box_root,
            checkout_root,
            repo_state,
        }
    }

    /// The checkouts root with the key of the state dir `repo_state`.
    fn checkout_root_beside(repo_state: &Path) -> PathBuf {
        repo_state
            .file_name()
            .map(checkout_root_of)
            .unwrap_or_default()
    }

    /// Both roots a box's checkout may live under: the box root, the checkouts root.
    pub fn roots(&self) -> Vec<&Path> {
        let mut out = vec![self.box_root.as_path()];
        if !self.checkout_root.as_os_str().is_empty() {
            out.push(self.checkout_root.as_path());
        }
        out
    }

    /// Is `dir` one of the [`Self::roots`]? Compared literally first (the usual case,
    /// no syscall), then resolved.
    pub fn is_root(&self, dir: &Path) -> bool {
        let roots = self.roots();
        if roots.contains(&dir) {
            return true;
        }
        let real = canonical(dir);
        roots.iter().any(|r| canonical(r) == real)
    }

    /// [`Self::is_root`] against roots already resolved ([`Self::canonical_roots`]):
    /// for a caller asking of many paths.
    pub fn is_root_in(&self, dir: &Path, canonical_roots: &[PathBuf]) -> bool {
        self.roots().contains(&dir) || canonical_roots.contains(&canonical(dir))
    }

    /// The [`Self::roots`], resolved.
    pub fn canonical_roots(&self) -> Vec<PathBuf> {
        self.roots().into_iter().map(canonical).collect()
    }

    /// Is `repo_state` the state dir of the repository whose git dir is `common_dir`?
    pub fn is_state_dir_of(repo_state: &Path, common_dir: &Path) -> bool {
        repo_state.file_name() == Some(repo_key(common_dir).as_ref())
    }

    /// Where a host box's checkout lives (and a box's whose record does not say
    /// otherwise): `<main>/.treebox/worktrees/<leaf>`.
    pub fn box_path(&self, leaf: &Leaf) -> PathBuf {
        self.box_root.join(leaf.as_str())
    }

    /// Where a container box's checkout lives: under the checkouts root, outside the
    /// user's working tree ([`Self::box_path`] when no data dir can be named).
    pub fn checkout_path(&self, leaf: &Leaf) -> PathBuf {
        match self.checkout_root.as_os_str().is_empty() {
            true => self.box_path(leaf),
            false => self.checkout_root.join(leaf.as_str()),
        }
    }

    /// The checkout of box `leaf` as its record places it: the record's `path` when
    /// that is `leaf` under the checkouts root, else [`Self::box_path`] (which also
    /// follows a repository that was moved: the record names the old path then).
    pub fn path_of(&self, leaf: &Leaf, record: Option<&Record>) -> PathBuf {
        let Some(path) = record.map(|r| r.path.as_path()) else {
            return self.box_path(leaf);
        };
        let parent = path.parent().unwrap_or(path);
        let moved = path.file_name() == Some(leaf.as_str().as_ref())
            && parent != self.box_root
            && !self.checkout_root.as_os_str().is_empty()
            && (parent == self.checkout_root
                || canonical(parent) == canonical(&self.checkout_root));
        match moved {
            true => path.to_path_buf(),
            false => self.box_path(leaf),
        }
    }

    /// Where a new box `leaf` makes its checkout: a container box's (`container`: a
    /// sandboxed worktree or a container clone) under the checkouts root, outside the
    /// user's working tree, where the user's own tools (test runners, watchers) walk;
    /// a host box's under the box root (its agent runs as the user anyway).
    pub fn placed_path(&self, leaf: &Leaf, container: bool) -> PathBuf {
        match container {
            true => self.checkout_path(leaf),
            false => self.box_path(leaf),
        }
    }

    /// Is `record` a container box whose checkout sits in the user's working tree
    /// (under the box root: made before container boxes' checkouts moved out)?
    pub fn in_working_tree(&self, record: &Record) -> bool {
        record.runner.is_container()
            && record.git_mode != crate::vocab::GitMode::Folder
            && record.path.parent() == Some(self.box_root.as_path())
    }

    /// Every directory under either root whose name is a leaf, with that leaf (the
    /// box root's first): what the scans for checkouts without a record read.
    pub fn leaves_on_disk(&self) -> Vec<(Leaf, PathBuf)> {
        self.roots()
            .into_iter()
            .flat_map(|root| {
                std::fs::read_dir(root)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter_map(|e| {
                        let leaf = Leaf::parse(&e.file_name().to_string_lossy()).ok()?;
                        Some((leaf, e.path()))
                    })
            })
            .collect()
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
        // Host-owned, but held to the same bound as any small file read.
        let bytes = crate::untrusted::read_regular(
            &repo_state.join("repo"),
            1 << 20,
            crate::untrusted::Links::Refuse,
        )
        .ok()?;
        String::from_utf8(bytes).ok().map(PathBuf::from)
    }

    pub fn box_state(&self, leaf: &Leaf) -> PathBuf {
        self.repo_state.join(BOXES).join(leaf.as_str())
    }

    pub fn record_path(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join(RECORD)
    }

    /// Staged copies of the agent's login files, mounted into the box's container.
    pub fn credentials_dir(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("credentials")
    }

    /// The container build context of the box.
    pub fn build_dir(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("build")
    }

    /// The box's private hooks dir (clone boxes and containers).
    pub fn hooks_dir(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("hooks")
    }

    /// A sandboxed worktree's own bare clone, mounted read-write into its container
    /// (beside, never inside, the record and the other host-owned files).
    pub fn bare_clone_dir(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("git")
    }

    /// Where the agent's status hooks report, mounted into the container.
    pub fn status_dir(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("status")
    }

    /// The host-owned status producer (the writer and the harness's hook settings),
    /// mounted read-only into the container: the box cannot change what it runs.
    pub fn agent_hooks_dir(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("agent")
    }

    /// The agent's last reported state (`status/state`).
    pub fn status_state_path(&self, leaf: &Leaf) -> PathBuf {
        self.status_dir(leaf).join("state")
    }

    /// The 0600 env file a container's launcher reads (its directory is mounted
    /// read-only, so a rewrite reaches the next program started in the box).
    pub fn container_env_path(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("run").join("env")
    }

    /// The 0600 keys file beside the env file: model keys and forwarded tokens,
    /// rewritten on every `enter`.
    pub fn container_keys_path(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("run").join("keys")
    }

    /// The launcher beside the env file (`launch::LAUNCH_FILE` inside the container).
    pub fn container_launcher_path(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("run").join("launch")
    }

    /// The firewall rules in force when they were last applied (`iptables -S`), which
    /// later reads are compared with.
    pub fn firewall_rules_path(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("firewall.rules")
    }

    /// The marker `git sandbox park` leaves on a box it has seen once.
    pub fn park_seen_path(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("park.seen")
    }

    /// A container box's own writable package caches (one dir per ecosystem), seeded
    /// from the host's at container creation and mounted where the tools look; the
    /// host's own caches are never writable from the box (SPEC §7). Goes with the rest
    /// of the box's state at teardown.
    pub fn cache_dir(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("caches")
    }

    /// The throwaway caches of a `--cold` setup.
    pub fn cold_cache_dir(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("cold-cache")
    }

    /// The machine-wide lock serialising image builds of one engine (`program`): beside
    /// `repos/` under the state root.
    pub fn build_lock_path(&self, program: &str) -> PathBuf {
        build_lock_in(
            self.repo_state
                .parent()
                .and_then(Path::parent)
                .unwrap_or(&self.repo_state),
            program,
        )
    }

    /// A scratch file of the box's bookkeeping dir, e.g. `stdout.bundle`.
    pub fn scratch_path(&self, leaf: &Leaf, name: &str) -> PathBuf {
        self.box_state(leaf).join(name)
    }

    /// Note a one-time event of box `leaf` (a marker file `name` in its bookkeeping);
    /// true only the first time.
    pub fn first_time(&self, leaf: &Leaf, name: &str) -> bool {
        let marker = self.box_state(leaf).join(name);
        if std::fs::symlink_metadata(&marker).is_ok() {
            return false;
        }
        std::fs::write(&marker, b"").is_ok()
    }

    /// Note that park has seen box `leaf`; says whether it had been seen before.
    pub fn mark_park_seen(&self, leaf: &Leaf) -> bool {
        let seen = self.park_seen_path(leaf);
        if seen.exists() {
            return true;
        }
        let _ = std::fs::write(&seen, b"");
        false
    }

    /// The directory of the per-box lock files.
    pub fn locks_dir(&self) -> PathBuf {
        self.repo_state.join(LOCKS)
    }

    /// Every per-box lock file there is, with the leaf it locks.
    pub fn lock_files(&self) -> Vec<(PathBuf, Leaf)> {
        let Ok(rd) = std::fs::read_dir(self.locks_dir()) else {
            return Vec::new();
        };
        rd.flatten()
            .filter_map(|f| {
                let n = f.file_name().to_string_lossy().into_owned();
                let leaf = n.strip_suffix(".lock").and_then(|l| Leaf::parse(l).ok())?;
                Some((f.path(), leaf))
            })
            .collect()
    }

    /// The lock serialising changes to git's worktree registrations.
    pub fn registration_lock_path(&self) -> PathBuf {
        self.repo_state.join("worktrees.lock")
    }

    /// The summary cache of `list` (what it read of each box, and the file identities
    /// it read it from): beside the records, outside every box's mounts.
    pub fn list_cache_path(&self) -> PathBuf {
        self.repo_state.join("list-cache.json")
    }

    /// Whether each box's work has landed, kept by commit ids (`land::landed`).
    pub fn landed_cache_path(&self) -> PathBuf {
        self.repo_state.join("landed-cache.json")
    }

    /// Each box's committed diff size and last subject, kept by commit ids (`watch`).
    pub fn watch_cache_path(&self) -> PathBuf {
        self.repo_state.join("watch-cache.json")
    }

    /// The session marker held while an agent runs in the box.
    pub fn session_path(&self, leaf: &Leaf) -> PathBuf {
        self.box_state(leaf).join("session.lock")
    }

    pub fn lock_path(&self, leaf: &Leaf) -> PathBuf {
        self.locks_dir().join(format!("{}.lock", leaf.as_str()))
    }

    /// Every leaf with a record, sorted.
    pub fn recorded_leaves(&self) -> Vec<Leaf> {
        let mut out: Vec<Leaf> = std::fs::read_dir(self.repo_state.join(BOXES))
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

    #[test]
    fn store_names_every_bookkeeping_path() {
        let s = Store::with_state_root(Path::new("/r"), Path::new("/r/.git"), Path::new("/st"));
        let leaf = Leaf::parse("fix-x").unwrap();
        let b = s.repo_state.join("boxes/fix-x");
        assert_eq!(s.box_state(&leaf), b);
        assert_eq!(s.record_path(&leaf), b.join("record.json"));
        assert_eq!(s.credentials_dir(&leaf), b.join("credentials"));
        assert_eq!(s.build_dir(&leaf), b.join("build"));
        assert_eq!(s.hooks_dir(&leaf), b.join("hooks"));
        assert_eq!(s.agent_hooks_dir(&leaf), b.join("agent"));
        assert_eq!(s.status_state_path(&leaf), b.join("status/state"));
        assert_eq!(s.container_env_path(&leaf), b.join("run/env"));
        assert_eq!(s.park_seen_path(&leaf), b.join("park.seen"));
        assert_eq!(s.cache_dir(&leaf), b.join("caches"));
        assert_eq!(s.lock_path(&leaf), s.repo_state.join("locks/fix-x.lock"));
        assert!(s.repo_state.starts_with("/st/repos"));
        assert_eq!(s.box_path(&leaf), Path::new("/r/.treebox/worktrees/fix-x"));
    }

    #[test]
    fn two_roots_one_outside_the_working_tree() {
        let s = Store::with_state_root(Path::new("/r"), Path::new("/r/.git"), Path::new("/st"));
        let leaf = Leaf::parse("fix-x").unwrap();
        let key = repo_key(Path::new("/r/.git"));
        assert_eq!(s.checkout_root, Path::new("/st/checkouts").join(&key));
        assert_eq!(s.checkout_path(&leaf), s.checkout_root.join("fix-x"));
        assert!(
            !s.checkout_path(&leaf).starts_with("/r"),
            "outside the working tree"
        );
        assert_eq!(
            s.roots(),
            [Path::new("/r/.treebox/worktrees"), &s.checkout_root]
        );
        assert!(s.is_root(Path::new("/r/.treebox/worktrees")));
        assert!(s.is_root(&s.checkout_root));
        assert!(!s.is_root(Path::new("/r/.treebox")));
        assert!(!s.is_root(Path::new("/st/checkouts")));
    }

    #[test]
    fn the_record_says_which_root() {
        let s = Store::with_state_root(Path::new("/r"), Path::new("/r/.git"), Path::new("/st"));
        let leaf = Leaf::parse("fix").unwrap();
        let mut r = crate::state::record::tests::sample();
        // A host box, and a box without a record: under the box root.
        assert_eq!(s.path_of(&leaf, Some(&r)), s.box_path(&leaf));
        assert_eq!(s.path_of(&leaf, None), s.box_path(&leaf));
        // A container box: where its record says, under the checkouts root.
        r.path = s.checkout_path(&leaf);
        assert_eq!(s.path_of(&leaf, Some(&r)), s.checkout_path(&leaf));
        // A record naming anything else (another leaf, another directory, a repository
        // that was moved) is not followed out of the roots.
        for elsewhere in [
            "/etc",
            "/st/checkouts/other-0/fix",
            "/old/.treebox/worktrees/fix",
        ] {
            r.path = elsewhere.into();
            assert_eq!(s.path_of(&leaf, Some(&r)), s.box_path(&leaf), "{elsewhere}");
        }
        r.path = s.checkout_root.join("other");
        assert_eq!(s.path_of(&leaf, Some(&r)), s.box_path(&leaf));
    }

    #[test]
    fn a_new_container_box_goes_outside_and_an_old_one_is_told_apart() {
        use crate::vocab::{GitMode, RunnerKind};
        let s = Store::with_state_root(Path::new("/r"), Path::new("/r/.git"), Path::new("/st"));
        let leaf = Leaf::parse("fix").unwrap();
        assert_eq!(s.placed_path(&leaf, true), s.checkout_path(&leaf));
        assert_eq!(s.placed_path(&leaf, false), s.box_path(&leaf));
        let mut r = crate::state::record::tests::sample();
        r.runner = RunnerKind::Docker;
        r.git_mode = GitMode::Clone;
        assert!(s.in_working_tree(&r), "a container clone made before");
        r.path = s.checkout_path(&leaf);
        assert!(!s.in_working_tree(&r));
        r.path = s.box_path(&leaf);
        r.runner = RunnerKind::Host;
        assert!(!s.in_working_tree(&r), "a host box belongs there");
    }

    #[test]
    fn a_store_around_a_moved_box_keeps_its_repositorys_box_root() {
        let d = tempfile::tempdir().unwrap();
        let state = d.path().join("repos/r-0123456789ab");
        std::fs::create_dir_all(&state).unwrap();
        let s = Store {
            box_root: d.path().join("r").join(BOX_ROOT),
            checkout_root: Store::checkout_root_beside(&state),
            repo_state: state.clone(),
        };
        s.remember_repo(&d.path().join("r"));
        let host = Store::around_box(&s.box_root.join("b"), state.clone());
        assert_eq!(host.box_root, s.box_root);
        if !s.checkout_root.as_os_str().is_empty() {
            assert!(s.checkout_root.ends_with("checkouts/r-0123456789ab"));
            let moved = Store::around_box(&s.checkout_root.join("b"), state);
            assert_eq!(moved.box_root, s.box_root);
            assert_eq!(moved.checkout_root, s.checkout_root);
        }
    }

    #[test]
    fn leaves_on_disk_under_both_roots() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::with_state_root(&d.path().join("r"), &d.path().join("r/.git"), d.path());
        std::fs::create_dir_all(s.box_root.join("host")).unwrap();
        std::fs::create_dir_all(s.checkout_root.join("moved")).unwrap();
        std::fs::create_dir_all(s.checkout_root.join("..bad")).unwrap();
        let mut found: Vec<(String, PathBuf)> = s
            .leaves_on_disk()
            .into_iter()
            .map(|(l, p)| (l.to_string(), p))
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                ("host".to_string(), s.box_root.join("host")),
                ("moved".to_string(), s.checkout_root.join("moved")),
            ]
        );
    }
}
