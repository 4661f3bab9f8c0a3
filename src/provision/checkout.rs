//! Stage 2: make the box's checkout (worktree mode: a linked worktree of the user's
//! repository).
//!
//! Runs before the box exists, so the git CLI is safe here (with the usual pins).
//! New branches never track `origin/<base>`: a fresh box is not "ahead of origin".
//!
//! The worktree is registered as `git worktree add` registers one — the admin dir
//! under `<common>/worktrees/`, marked `locked` while it is made, its `gitdir`,
//! `commondir` and `HEAD`, the main worktree's sparse-checkout patterns and filtered
//! `config.worktree` copied in, the `.git` pointer — and then checked out by one
//! `git read-tree -u` run in the new worktree. `git worktree add` itself reads every
//! other registration (and hangs on one a box filled with a FIFO), and runs three more
//! git processes (`branch`, `symbolic-ref`, `reset --hard`): with hundreds of boxes
//! that is most of the cost of a create.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};

use crate::cmd::CmdError;
use crate::git::{GitCli, Repo};
use crate::plan::Checkout;
use crate::state::atomic;

/// Make the worktree at `path` as the plan says. `base_commit` is the exact commit
/// resolved at planning time, so a concurrent fetch cannot move the start point. The
/// caller holds the registration lock.
pub fn add_worktree(
    git: &GitCli,
    repo: &Repo,
    path: &Path,
    checkout: &Checkout,
    base_commit: Option<&str>,
) -> Result<(), CmdError> {
    let branch = match checkout {
        Checkout::Resume { .. } => return Ok(()),
        Checkout::NewBranch { branch, start } => {
            make_branch(repo, branch, base_commit.unwrap_or(start), start)?;
            branch
        }
        Checkout::FromRemote { branch, remote_ref } => {
            let c = git
                .cmd(&repo.main_root)
                .args(["branch", "--quiet", "--track"]);
            c.arg(branch).arg(remote_ref).output()?;
            branch
        }
        Checkout::ExistingLocal { branch } => {
            // Planned only when no worktree had it; asked again under the lock.
            if repo.branch_checked_out(branch) {
                return Err(refused(
                    format!("check out {branch}"),
                    format!("'{branch}' is already checked out in another worktree"),
                ));
            }
            branch
        }
        Checkout::Unborn { branch } => branch,
    };
    let admin = register(repo, path, branch).map_err(|source| CmdError::Spawn {
        line: format!("register the worktree {}", path.display()),
        source,
    })?;
    if !matches!(checkout, Checkout::Unborn { .. }) {
        // The box's own `config.worktree` (copied from the main worktree's) is read
        // too: its exec-shaped keys are pinned like the shared config's.
        let git = GitCli::for_repo(&repo.common_dir, Some(&admin.join("config.worktree")));
        let c = git.cmd(path).args([
            "read-tree",
            "--reset",
            "-u",
            "--no-recurse-submodules",
            "HEAD",
        ]);
        c.output()?;
    }
    let _ = std::fs::remove_file(admin.join("locked"));
    Ok(())
}

/// The new branch `branch` at `at` (a commit id, or the start ref when none was
/// resolved), made in-process where `git branch` would be a process of its own; never
/// over a branch that exists.
fn make_branch(repo: &Repo, branch: &str, at: &str, start: &str) -> Result<(), CmdError> {
    let made = repo
        .git
        .revparse_single(at)
        .and_then(|o| o.peel_to_commit())
        .and_then(|c| {
            repo.git.reference(
                &format!("refs/heads/{branch}"),
                c.id(),
                false,
                &format!("branch: Created from {start}"),
            )
        });
    made.map(drop).map_err(|e| {
        refused(
            format!("create branch {branch} at {at}"),
            e.message().into(),
        )
    })
}

/// A step done in-process that failed, said as git would have said it (`fatal:`, exit
/// 128), so callers judge it as they judge git's own.
fn refused(line: String, why: String) -> CmdError {
    CmdError::Failed {
        line,
        status: std::process::ExitStatus::from_raw(128 << 8),
        stderr: format!("fatal: {why}"),
    }
}

/// What `git worktree add` writes before it checks out, without reading any other
/// registration: the admin dir (named after the worktree's directory, with a number
/// when that name is taken; marked `initializing` until whole, as git does), its
/// files, the main worktree's sparse-checkout patterns and `config.worktree` (less
/// `core.bare` and `core.worktree`) as git copies them, and the `.git` pointer.
/// Returns the admin dir.
fn register(repo: &Repo, path: &Path, branch: &str) -> std::io::Result<PathBuf> {
    let name = path.file_name().ok_or(std::io::ErrorKind::InvalidInput)?;
    // `common_dir` is canonical (`Repo::discover`): the pointer names it as git would.
    let worktrees = repo.common_dir.join("worktrees");
    std::fs::create_dir_all(&worktrees)?;
    let mut admin = worktrees.join(name);
    let mut counter = 0u32;
    // Never into a registration that exists: that name is another worktree's.
    while let Err(e) = std::fs::create_dir(&admin) {
        counter += 1;
        if e.kind() != std::io::ErrorKind::AlreadyExists || counter > 10_000 {
            return Err(e);
        }
        let mut numbered = name.to_os_string();
        numbered.push(counter.to_string());
        admin = worktrees.join(numbered);
    }
    let mut made_path = false;
    let written = (|| {
        // Every file whole when it appears (temp file + rename), and `gitdir` last: git
        // passes over a registration it cannot read `gitdir` of, so a `git fetch` run
        // meanwhile (another box's create) never reads an empty `commondir` or `HEAD`.
        let put = |file: &str, data: &[u8]| atomic::write_unsynced(&admin.join(file), data, 0o644);
        put("locked", b"initializing\n")?;
        let parent = path.parent().ok_or(std::io::ErrorKind::InvalidInput)?;
        std::fs::create_dir_all(parent)?;
        let real = std::fs::canonicalize(parent)?.join(name);
        let mut gitdir = real.join(".git").into_os_string().into_encoded_bytes();
        gitdir.push(b'\n');
        put("HEAD", format!("ref: refs/heads/{branch}\n").as_bytes())?;
        put("commondir", b"../..\n")?;
        copy_main_worktree_settings(repo, &admin);
        put("gitdir", &gitdir)?;
        std::fs::create_dir(path)?;
        made_path = true;
        let mut pointer = b"gitdir: ".to_vec();
        pointer.extend(admin.clone().into_os_string().into_encoded_bytes());
        pointer.push(b'\n');
        std::fs::write(path.join(".git"), pointer)
    })();
    if let Err(e) = written {
        // As git removes its junk: what this made, and nothing else.
        if made_path {
            let _ = std::fs::remove_dir_all(path);
        }
        let _ = std::fs::remove_dir_all(&admin);
        return Err(e);
    }
    Ok(admin)
}

/// What `git worktree add` carries from the worktree it runs in (the main one) into
/// the new one: its sparse-checkout patterns when sparse checkout is on, and with
/// `extensions.worktreeConfig` its `config.worktree`, less a true `core.bare` and any
/// `core.worktree`. Best effort, as git's own copy is.
fn copy_main_worktree_settings(repo: &Repo, admin: &Path) {
    let common = &repo.common_dir;
    let config = repo.git.config().and_then(|mut c| c.snapshot());
    let flag = |key: &str| {
        config
            .as_ref()
            .is_ok_and(|c| c.get_bool(key).unwrap_or(false))
    };
    let main_worktree_config = common.join("config.worktree");
    let per_worktree = flag("extensions.worktreeConfig") && main_worktree_config.is_file();
    let sparse = flag("core.sparseCheckout")
        || (per_worktree
            && git2::Config::open(&main_worktree_config)
                .and_then(|c| c.get_bool("core.sparseCheckout"))
                .unwrap_or(false));
    let patterns = common.join("info/sparse-checkout");
    if sparse && patterns.is_file() {
        let to = admin.join("info");
        let _ = std::fs::create_dir_all(&to)
            .and_then(|()| std::fs::copy(&patterns, to.join("sparse-checkout")));
    }
    if per_worktree {
        let to = admin.join("config.worktree");
        if std::fs::copy(&main_worktree_config, &to).is_ok() {
            if let Ok(mut c) = git2::Config::open(&to) {
                if c.get_bool("core.bare").unwrap_or(false) {
                    let _ = c.remove("core.bare");
                }
                let _ = c.remove("core.worktree");
            }
        }
    }
}

/// Undo a checkout made by this run: remove the worktree and, when this run created
/// it, the branch. Best effort: used only on the way out of a failed create. With a
/// registration git would hang on, without git's worktree commands.
pub fn remove_worktree(
    git: &GitCli,
    common_dir: &Path,
    main_root: &Path,
    path: &Path,
    branch: Option<&str>,
) {
    if super::repair::blocking_registration(common_dir).is_some() {
        let admin = common_dir
            .join("worktrees")
            .join(path.file_name().unwrap_or_default());
        let ours = crate::git::repo::read_plain(&admin.join("gitdir"))
            .is_some_and(|t| Path::new(t.trim_end()) == path.join(".git"));
        let _ = std::fs::remove_dir_all(path);
        if ours {
            let _ = std::fs::remove_dir_all(&admin);
        }
        if let Some(b) = branch {
            let full = format!("refs/heads/{b}");
            let _ = git
                .cmd(main_root)
                .args(["update-ref", "-d", &full])
                .output();
        }
        return;
    }
    let _ = git
        .cmd(main_root)
        .args(["worktree", "remove", "--force", "--force"])
        .arg(path.as_os_str())
        .output();
    if path.exists() {
        let _ = std::fs::remove_dir_all(path);
        let _ = git.cmd(main_root).args(["worktree", "prune"]).output();
    }
    if let Some(b) = branch {
        let _ = git.cmd(main_root).args(["branch", "-D", "--", b]).output();
    }
}

#[cfg(test)]
mod tests {
    /// Why `register` writes `gitdir` last: a `git fetch` in the repository reads every
    /// registration it can read `gitdir` of, and dies on one whose `commondir` is
    /// still empty; it passes over one without `gitdir`.
    #[test]
    fn git_passes_over_a_registration_until_its_gitdir_is_written() {
        use crate::testing::git;
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        git(root, &["init", "-q", "--bare", "-b", "main", "origin.git"]);
        git(root, &["clone", "-q", "origin.git", "repo"]);
        let repo = root.join("repo");
        std::fs::write(repo.join("a"), "a\n").unwrap();
        git(&repo, &["add", "a"]);
        git(&repo, &["commit", "-qm", "a"]);
        git(&repo, &["push", "-q", "origin", "HEAD:main"]);
        let admin = repo.join(".git/worktrees/half");
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::write(admin.join("commondir"), "").unwrap();
        std::fs::write(admin.join("HEAD"), "").unwrap();
        let fetch = || {
            std::process::Command::new("git")
                .args(["fetch", "-q", "origin"])
                .current_dir(&repo)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .unwrap()
        };
        let o = fetch();
        assert!(o.status.success(), "{o:?}");
        std::fs::write(
            admin.join("gitdir"),
            format!("{}/.git\n", root.join("half").display()),
        )
        .unwrap();
        let o = fetch();
        assert!(!o.status.success(), "the hazard gitdir-last avoids: {o:?}");
    }

    use super::*;

    /// A branch some worktree has checked out (the main one here) is refused under the
    /// registration lock, as git would refuse it, whatever the plan saw: nothing is
    /// registered and no directory is made.
    #[test]
    fn a_branch_checked_out_elsewhere_is_refused_and_nothing_is_made() {
        let d = tempfile::tempdir().unwrap();
        let main = d.path().canonicalize().unwrap().join("main");
        let git = crate::git::repo::tests::with_one_commit(&main);
        let head = git.head().unwrap().shorthand().unwrap().to_string();
        let repo = Repo::discover(&main).unwrap();
        let path = main.join(".treebox/worktrees/taken");
        let checkout = Checkout::ExistingLocal { branch: head };
        let e = add_worktree(&GitCli::plain(), &repo, &path, &checkout, None).unwrap_err();
        assert!(e.stderr().contains("already checked out"), "{e}");
        assert!(!repo.common_dir.join("worktrees").exists());
        assert!(!path.exists());
    }

    /// Of the main worktree's `config.worktree`, a box gets what git's own
    /// `worktree add` carries: all but a true `core.bare` (a bare main repository's
    /// worktrees are not bare) and `core.worktree`. A false `core.bare` stays, as in git.
    #[test]
    fn a_true_core_bare_and_core_worktree_stay_behind() {
        let d = tempfile::tempdir().unwrap();
        let main = d.path().canonicalize().unwrap().join("main");
        let git = crate::git::repo::tests::with_one_commit(&main);
        git.config()
            .unwrap()
            .set_bool("extensions.worktreeConfig", true)
            .unwrap();
        let repo = Repo::discover(&main).unwrap();
        let carried = |main_config: &str| {
            std::fs::write(repo.common_dir.join("config.worktree"), main_config).unwrap();
            let admin = d.path().join("admin");
            let _ = std::fs::remove_dir_all(&admin);
            std::fs::create_dir_all(&admin).unwrap();
            copy_main_worktree_settings(&repo, &admin);
            git2::Config::open(&admin.join("config.worktree"))
                .unwrap()
                .snapshot()
                .unwrap()
        };
        let c =
            carried("[core]\n\tbare = true\n\tworktree = /elsewhere\n[treebox]\n\ttest = kept\n");
        assert!(c.get_entry("core.bare").is_err());
        assert!(c.get_entry("core.worktree").is_err());
        assert_eq!(c.get_string("treebox.test").unwrap(), "kept");
        let c = carried("[core]\n\tbare = false\n");
        assert!(!c.get_bool("core.bare").unwrap());
    }
}
