//! Reads of the user's repository through libgit2.
//!
//! libgit2 runs no hooks, filter drivers, fsmonitor or credential helpers, so these
//! reads are safe even after a box has written the repository's shared config.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use git2::{BranchType, Oid, Repository};

#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    #[error("not inside a git repository ({path})")]
    NotARepo { path: PathBuf },
    #[error(
        "{path} is in a container box's checkout whose record names no repository that owns it"
    )]
    Ownerless { path: PathBuf },
    #[error("{path} is a bare repository; treebox needs a repository with a working tree")]
    Bare { path: PathBuf },
    #[error("could not read the repository at {path}")]
    Open {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
}

/// The user's repository: its main worktree and its common git dir.
pub struct Repo {
    pub git: Repository,
    /// Top of the main worktree (the user's own checkout).
    pub main_root: PathBuf,
    /// The shared git dir (`<main_root>/.git` for an ordinary repository).
    pub common_dir: PathBuf,
}

impl std::fmt::Debug for Repo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repo")
            .field("main_root", &self.main_root)
            .field("common_dir", &self.common_dir)
            .finish()
    }
}

/// A resolved base: the ref it came from and its commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedRef {
    /// e.g. `refs/remotes/origin/main` or `refs/heads/main`.
    pub refname: String,
    pub oid: Oid,
}

impl Repo {
    /// Does the repository track a `.env` at its top? Asked of the main checkout's HEAD
    /// tree (one tree lookup) rather than its index, which can be large. A tracked
    /// `.env` symlink is repo-provided, so it is never followed (SPEC §4): provisioning
    /// copies no `.env` then, and doctor says so.
    pub fn tracks_env(&self) -> bool {
        self.git
            .head()
            .ok()
            .and_then(|h| h.peel_to_tree().ok())
            .is_some_and(|t| t.get_name(".env").is_some())
    }

    /// Find the repository containing `cwd`; from inside a linked worktree (a box),
    /// this is still the user's main repository. From inside a container box's
    /// checkout (under treebox's checkouts root, outside the user's working tree) it is
    /// the repository that box's record names ([`moved_box_owner`]): the box's own git
    /// data, which its agent wrote, is never opened to find it.
    pub fn discover(cwd: &Path) -> Result<Repo, RepoError> {
        if let Some(found) = moved_box_owner(cwd) {
            return found;
        }
        let here = Repository::discover(cwd).map_err(|e| match e.code() {
            git2::ErrorCode::NotFound => RepoError::NotARepo {
                path: cwd.to_path_buf(),
            },
            _ => RepoError::Open {
                path: cwd.to_path_buf(),
                source: e,
            },
        })?;
        let common_dir = canonical(here.commondir());
        let git = if here.is_worktree() {
            Repository::open(&common_dir).map_err(|source| RepoError::Open {
                path: common_dir.clone(),
                source,
            })?
        } else {
            here
        };
        if git.is_bare() {
            return Err(RepoError::Bare { path: common_dir });
        }
        let main_root = match git.workdir() {
            Some(w) => canonical(w),
            None => return Err(RepoError::Bare { path: common_dir }),
        };
        // Inside a clone-mode box (`<repo>/.treebox/worktrees/<leaf>`), the repository
        // that owns the box is the one around it.
        if let Some(owner) = box_owner(&main_root) {
            if let Ok(outer) = Repo::discover(&owner) {
                if outer.main_root == owner {
                    return Ok(outer);
                }
            }
        }
        Ok(Repo {
            git,
            main_root,
            common_dir,
        })
    }

    pub fn has_remote(&self, name: &str) -> bool {
        self.git.find_remote(name).is_ok()
    }

    /// origin's default branch: the branch the symbolic ref `refs/remotes/origin/HEAD`
    /// names (`git clone` and `git remote set-head` write it; a fetch by git 2.48 or
    /// newer creates it, see [`Repo::record_origin_head`]). `None` when it is missing, or
    /// not a symbolic ref to one of origin's branches.
    pub fn origin_head_branch(&self) -> Option<String> {
        let head = self.git.find_reference("refs/remotes/origin/HEAD").ok()?;
        let target = head.symbolic_target().ok()??;
        let branch = target.strip_prefix("refs/remotes/origin/")?;
        (!branch.is_empty() && branch != "HEAD").then(|| branch.to_string())
    }

    /// Would a fetch by git 2.48 or newer create a missing `origin/HEAD`? Yes unless the
    /// user set `remote.origin.followRemoteHEAD` to `never`.
    pub fn follows_origin_head(&self) -> bool {
        !self.git.config().ok().is_some_and(|c| {
            c.get_string("remote.origin.followRemoteHEAD")
                .is_ok_and(|v| v.eq_ignore_ascii_case("never"))
        })
    }

    /// Point a missing `origin/HEAD` at `origin/<branch>`, as a fetch by git 2.48 or
    /// newer does: never over an existing one, and only at a branch the fetch brought.
    /// The caller asks [`Repo::follows_origin_head`] first. Whether it was written.
    pub fn record_origin_head(&self, branch: &str) -> bool {
        if crate::names::check_existing_branch(branch).is_err()
            || self.remote_branch(branch).is_none()
        {
            return false;
        }
        self.git
            .reference_symbolic(
                "refs/remotes/origin/HEAD",
                &format!("refs/remotes/origin/{branch}"),
                false,
                "treebox: origin's HEAD, as git fetch records it",
            )
            .is_ok()
    }

    /// `origin/<base>` when the repo has an origin and that ref exists, else the local
    /// branch `<base>`.
    pub fn resolve_base(&self, base: &str) -> Option<ResolvedRef> {
        let candidates = [
            format!("refs/remotes/origin/{base}"),
            format!("refs/heads/{base}"),
        ];
        candidates.into_iter().find_map(|refname| {
            let oid = self.git.refname_to_id(&refname).ok()?;
            let commit = self
                .git
                .find_object(oid, None)
                .ok()?
                .peel_to_commit()
                .ok()?;
            Some(ResolvedRef {
                refname,
                oid: commit.id(),
            })
        })
    }

    /// A repository nothing has been committed to yet: HEAD is unborn and no ref
    /// names a commit.
    pub fn has_no_commits(&self) -> bool {
        if self.git.head().is_ok() {
            return false;
        }
        let Ok(mut refs) = self.git.references() else {
            return false;
        };
        refs.all(|r| r.ok().and_then(|r| r.peel_to_commit().ok()).is_none())
    }

    pub fn local_branch(&self, name: &str) -> Option<Oid> {
        self.git
            .find_branch(name, BranchType::Local)
            .ok()
            .and_then(|b| b.get().target())
    }

    pub fn remote_branch(&self, name: &str) -> Option<Oid> {
        self.git
            .find_branch(&format!("origin/{name}"), BranchType::Remote)
            .ok()
            .and_then(|b| b.get().target())
    }

    /// The admin dir under `<common>/worktrees/` of the linked worktree at `path`,
    /// found through the repository's own registration (its `gitdir` file), so it
    /// works even when the worktree's `.git` pointer file is gone.
    pub fn worktree_admin_dir(&self, path: &Path) -> Option<PathBuf> {
        let want = path.join(".git");
        // Another spelling of `want` (through a symlink) names the same file: compared
        // by identity first, by resolved path only for the file that is it. A `want`
        // that does not exist can only be named as it is spelled.
        let want_id = std::cell::OnceCell::new();
        let want_canon = std::cell::OnceCell::new();
        let same = |p: &Path| {
            p == want
                || want_id
                    .get_or_init(|| std::fs::metadata(&want).ok().map(|m| (m.dev(), m.ino())))
                    .is_some_and(|id| {
                        std::fs::metadata(p).is_ok_and(|m| (m.dev(), m.ino()) == id)
                            && canonical(p) == *want_canon.get_or_init(|| canonical(&want))
                    })
        };
        let names_it = |admin: &Path| {
            read_plain(&admin.join("gitdir"))
                .is_some_and(|text| same(Path::new(text.trim_end_matches(['\n', '\r']))))
        };
        // git names the admin dir after the checkout's directory unless that name is
        // taken: try it first, so this stays O(1) with hundreds of boxes.
        if let Some(leaf) = path.file_name() {
            let guess = self.common_dir.join("worktrees").join(leaf);
            if names_it(&guess) {
                return Some(guess);
            }
        }
        // Where `want` does not exist, only a registration that spells it exactly can
        // name it, and git names such a registration after the checkout's directory,
        // plus a number when that name is taken: only those are read (a directory
        // name git would have sanitized is looked for everywhere).
        let leaf = path.file_name().and_then(|n| n.to_str());
        let narrow = leaf.filter(|l| {
            !l.is_empty()
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                && std::fs::symlink_metadata(&want).is_err()
        });
        let dir = std::fs::read_dir(self.common_dir.join("worktrees")).ok()?;
        for entry in dir.flatten() {
            if let Some(l) = narrow {
                let name = entry.file_name();
                let rest = name.as_encoded_bytes().strip_prefix(l.as_bytes());
                if !rest.is_some_and(|r| r.iter().all(u8::is_ascii_digit)) {
                    continue;
                }
            }
            let Some(text) = read_plain(&entry.path().join("gitdir")) else {
                continue;
            };
            if same(Path::new(text.trim_end_matches(['\n', '\r']))) {
                return Some(entry.path());
            }
        }
        None
    }

    /// The branch currently checked out in the linked worktree whose admin dir is
    /// `admin_dir`, read from its HEAD file (no subprocess).
    pub fn worktree_branch(admin_dir: &Path) -> Option<String> {
        let head = read_plain(&admin_dir.join("HEAD"))?;
        head.trim()
            .strip_prefix("ref: ")
            .map(|r| r.strip_prefix("refs/heads/").unwrap_or(r).to_string())
    }

    /// Is `branch` checked out in any worktree of this repository?
    /// The branch checked out in the main checkout (its `HEAD`), if it is on one.
    pub fn main_branch(&self) -> Option<String> {
        let head = read_plain(&self.common_dir.join("HEAD"))?;
        let name = head.trim().strip_prefix("ref: refs/heads/")?;
        crate::names::check_existing_branch(name).ok()?;
        Some(name.to_string())
    }

    pub fn branch_checked_out(&self, branch: &str) -> bool {
        let full = format!("refs/heads/{branch}");
        let main_head = read_plain(&self.common_dir.join("HEAD")).unwrap_or_default();
        if main_head.trim() == format!("ref: {full}") {
            return true;
        }
        let Ok(dir) = std::fs::read_dir(self.common_dir.join("worktrees")) else {
            return false;
        };
        dir.flatten().any(|e| {
            read_plain(&e.path().join("HEAD")).is_some_and(|h| h.trim() == format!("ref: {full}"))
        })
    }
}

/// The repository owning the container box whose checkout holds `cwd`, when `cwd` is
/// under treebox's checkouts root: the repository its record names, opened there,
/// whose state dir must be the one that record sits in. `None` when `cwd` is not
/// under that root; an error when it is but no record names a repository that owns it
/// (it is never looked for through the box's own git data).
fn moved_box_owner(cwd: &Path) -> Option<Result<Repo, RepoError>> {
    let (repo_state, leaf) = crate::state::layout::moved_box_of(cwd)?;
    let not_a_repo = || RepoError::Ownerless {
        path: cwd.to_path_buf(),
    };
    let Some(record) = crate::state::layout::record_in(&repo_state, &leaf) else {
        return Some(Err(not_a_repo()));
    };
    if crate::state::layout::moved_box_of(&record.repo).is_some() {
        return Some(Err(not_a_repo()));
    }
    Some(match Repo::discover(&record.repo) {
        Ok(outer)
            if crate::state::Layout::is_state_dir_of(&repo_state, &outer.common_dir)
                && outer.main_root == canonical(&record.repo) =>
        {
            Ok(outer)
        }
        _ => Err(not_a_repo()),
    })
}

/// `<repo>` when `dir` is `<repo>/.treebox/worktrees/<leaf>`.
fn box_owner(dir: &Path) -> Option<PathBuf> {
    let worktrees = dir.parent()?;
    let treebox = worktrees.parent()?;
    if worktrees.file_name()? != "worktrees" || treebox.file_name()? != ".treebox" {
        return None;
    }
    Some(treebox.parent()?.to_path_buf())
}

/// Canonicalise when possible; otherwise keep the path as given.
pub fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Can the git dir at `git_dir` (a clone's `.git`, a worktree's admin dir) be read
/// without blocking? A box can put a FIFO (or a link to a device) where git keeps a
/// small file, and any read of it — by libgit2 or by us — would wait forever: list,
/// ls and teardown of every box would hang. Checks the files a read of the repository
/// opens (config, HEAD, index, packed-refs, alternates, info files, logs/HEAD), the
/// files the config includes, and every entry under `refs/` and `objects/pack/` (at most 100,000 entries).
///
/// And can it be read in the time and memory a small repository takes? Each of those
/// files, and each loose ref, must be within its cap ([`super::caps::Caps`], scaled
/// from the user's repository): libgit2 reads or maps them whole, so a sparse
/// `packed-refs` of gigabytes (which costs the box no disk) would stall every command
/// that lists the box. The loose refs together are held to the cap of `packed-refs`.
/// Pack files are not capped (libgit2 maps windows of them).
pub fn plain_git_dir(git_dir: &Path, caps: &super::caps::Caps) -> bool {
    const FILES: &[&str] = &[
        "HEAD",
        "config",
        "config.worktree",
        "commondir",
        "gitdir",
        "index",
        "packed-refs",
        "ORIG_HEAD",
        "FETCH_HEAD",
        "objects/info/alternates",
        "info/attributes",
        "info/exclude",
        "info/sparse-checkout",
        "logs/HEAD",
        "shallow",
        "objects/info/commit-graph",
        "objects/pack/multi-pack-index",
    ];
    if !std::fs::metadata(git_dir).is_ok_and(|m| m.is_dir()) {
        return false;
    }
    let plain = |f: &str| match std::fs::metadata(git_dir.join(f)) {
        Ok(m) => (m.is_file() && m.len() <= caps.of_file(f)) || m.is_dir(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    };
    if !FILES.iter().all(|f| plain(f)) {
        return false;
    }
    // An include in the config naming a FIFO or device blocks libgit2's open too.
    if ["config", "config.worktree"]
        .iter()
        .any(|f| super::blocking_include(&git_dir.join(f)).is_some())
    {
        return false;
    }
    let mut budget = 100_000usize;
    let refs = git_dir.join("refs");
    let mut loose = caps.of_file("packed-refs");
    let mut stack: Vec<PathBuf> = vec![refs.clone(), git_dir.join("objects/pack")];
    while let Some(dir) = stack.pop() {
        let is_refs = dir.starts_with(&refs);
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            budget = match budget.checked_sub(1) {
                Some(b) => b,
                None => return false,
            };
            let p = e.path();
            match std::fs::metadata(&p) {
                Ok(m) if m.is_dir() => stack.push(p),
                Ok(m) if m.is_file() && !is_refs => {}
                // A loose ref is one line, and all of them together hold no more than
                // a `packed-refs` may (libgit2 reads each whole when it lists refs).
                Ok(m) if m.is_file() && m.len() <= super::caps::SMALL => {
                    loose = match loose.checked_sub(m.len()) {
                        Some(left) => left,
                        None => return false,
                    };
                }
                _ => return false,
            }
        }
    }
    true
}

/// A small file's text, without blocking on a FIFO planted in its place and without
/// following a symlink planted there (a box can make its `.git` pointer, `HEAD` or
/// `gitdir` a link to any file on the host): only a regular file of at most 1 MiB is
/// read, judged on the file opened, so nothing can be swapped in between.
pub fn read_plain(path: &Path) -> Option<String> {
    use crate::untrusted::{read_regular, Links};
    // Bounded: a box can make its `HEAD` or `gitdir` a huge file.
    let bytes = read_regular(path, 1 << 20, Links::Refuse).ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{read_plain, Repo};

    /// A new repository at `dir` with one (empty) commit on its first branch.
    pub(crate) fn with_one_commit(dir: &std::path::Path) -> git2::Repository {
        let git = git2::Repository::init(dir).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        let tree = git.treebuilder(None).unwrap().write().unwrap();
        let tree = git.find_tree(tree).unwrap();
        git.commit(Some("HEAD"), &sig, &sig, "c", &tree, &[])
            .unwrap();
        drop(tree);
        git
    }

    /// A worktree registered under one spelling of its path (through a symlinked
    /// directory) is found by the other, by its file's identity; a path that does not
    /// exist is matched by its text alone, and a sibling's never.
    #[test]
    fn a_registration_is_found_by_either_spelling_of_its_path() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let main = root.join("main");
        let git = with_one_commit(&main);
        std::fs::create_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("alias")).unwrap();
        git.worktree("box", &root.join("alias/box"), None).unwrap();
        git.worktree("other", &root.join("real/other"), None)
            .unwrap();
        let repo = Repo::discover(&main).unwrap();
        let admin = repo.common_dir.join("worktrees/box");
        assert_eq!(
            repo.worktree_admin_dir(&root.join("alias/box")),
            Some(admin.clone())
        );
        assert_eq!(
            repo.worktree_admin_dir(&root.join("real/box")),
            Some(admin.clone())
        );
        // Gone from disk: named only as its registration spells it (git2 may have
        // written either spelling), never by the other one.
        let text = read_plain(&admin.join("gitdir")).unwrap();
        let registered = std::path::Path::new(text.trim_end())
            .parent()
            .unwrap()
            .to_path_buf();
        let other = if registered.starts_with(root.join("alias")) {
            root.join("real/box")
        } else {
            root.join("alias/box")
        };
        std::fs::remove_dir_all(root.join("real/box")).unwrap();
        assert_eq!(repo.worktree_admin_dir(&registered), Some(admin));
        assert_eq!(repo.worktree_admin_dir(&other), None);
        assert_eq!(repo.worktree_admin_dir(&root.join("real/nothing")), None);
    }

    /// A checkout that does not exist (a box about to be made) is looked for only among
    /// the registrations git would name after its directory (`box`, `box2`, …): one
    /// with a number is found, and others are not read (not even one that spells it).
    #[test]
    fn a_missing_checkout_is_looked_for_under_its_own_names_only() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let main = root.join("main");
        let git = git2::Repository::init(&main).unwrap();
        let worktrees = main.join(".git/worktrees");
        let register = |name: &str, gitdir: &str| {
            std::fs::create_dir_all(worktrees.join(name)).unwrap();
            std::fs::write(worktrees.join(name).join("gitdir"), gitdir).unwrap();
        };
        let wanted = root.join("boxes/box");
        register("box2", &format!("{}/.git\n", wanted.display()));
        // A registration under another name that spells the same path (a worktree
        // moved there, then deleted) is not looked at: git would not have named it so.
        register("moved", &format!("{}/.git\n", wanted.display()));
        drop(git);
        let repo = Repo::discover(&main).unwrap();
        assert_eq!(
            repo.worktree_admin_dir(&wanted),
            Some(repo.common_dir.join("worktrees/box2"))
        );
        assert_eq!(repo.worktree_admin_dir(&root.join("boxes/bo")), None);
    }

    /// A box's file past its cap makes its git dir unreadable; the cap grows with the
    /// user's own file of that name (a monorepo's boxes are not broken), and a loose
    /// ref past one line's cap is refused too.
    #[test]
    fn plain_git_dir_holds_files_to_caps_scaled_from_the_users_repository() {
        use crate::git::caps::Caps;
        let d = tempfile::tempdir().unwrap();
        let sized = |p: &std::path::Path, len: u64| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::File::create(p).unwrap().set_len(len).unwrap();
        };
        let user = d.path().join("user");
        let bx = d.path().join("box");
        std::fs::create_dir_all(bx.join("refs/heads")).unwrap();
        std::fs::create_dir_all(&user).unwrap();
        sized(&bx.join("packed-refs"), 40 << 20);
        assert!(!super::plain_git_dir(&bx, &Caps::of(&user)));
        sized(&user.join("packed-refs"), 20 << 20);
        assert!(super::plain_git_dir(&bx, &Caps::of(&user)));
        assert!(!super::plain_git_dir(&bx, &Caps::FLOOR));
        sized(&bx.join("refs/heads/main"), (64 << 10) + 1);
        assert!(!super::plain_git_dir(&bx, &Caps::of(&user)));
        sized(&bx.join("refs/heads/main"), 41);
        sized(&bx.join("HEAD"), (64 << 10) + 1);
        assert!(!super::plain_git_dir(&bx, &Caps::of(&user)));
        sized(&bx.join("HEAD"), 23);
        assert!(super::plain_git_dir(&bx, &Caps::of(&user)));
        // Loose refs each within one line's cap, but together more than a
        // packed-refs may hold (600 × 60 KiB > 32 MiB).
        for i in 0..600 {
            sized(&bx.join(format!("refs/tags/t{i}")), 60 << 10);
        }
        assert!(
            !super::plain_git_dir(&bx, &Caps::FLOOR),
            "35 MiB of loose refs"
        );
        assert!(super::plain_git_dir(&bx, &Caps::of(&user)), "80 MiB may be");
    }

    #[test]
    fn read_plain_reads_only_a_small_regular_file_and_follows_no_link() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("HEAD");
        std::fs::write(&file, "ref: refs/heads/main\n").unwrap();
        assert_eq!(read_plain(&file).as_deref(), Some("ref: refs/heads/main\n"));

        let secret = d.path().join("secret");
        std::fs::write(&secret, "not yours\n").unwrap();
        let link = d.path().join("gitdir");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        assert_eq!(read_plain(&link), None, "a planted link was followed");

        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(read_plain(&fifo), None, "a FIFO was read");

        let big = d.path().join("big");
        std::fs::write(&big, vec![b'a'; (1 << 20) + 1]).unwrap();
        assert_eq!(read_plain(&big), None);
        assert_eq!(read_plain(&d.path().join("absent")), None);
        assert_eq!(read_plain(d.path()), None, "a directory is not a file");
    }
}
