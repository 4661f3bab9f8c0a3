//! Sandboxed worktrees (SPEC §6): a worktree box in a container hangs off a bare clone
//! of its own, never off the user's repository, whose git dir (config, hooks, refs,
//! every other worktree) the container would otherwise have to mount.
//!
//! The bare clone is made by hand, as `git clone --bare --shared` would leave it but
//! without its cost: an empty bare repository (libgit2, no template), an alternates
//! line borrowing the user's object store, `origin` = the user's origin URL, and one
//! `packed-refs` holding the user's remote-tracking refs and tags (context for the
//! agent: `git log origin/main` works inside) and the box's branch. Then
//! `git worktree add` in it — the only git process, run before the box ever has.
//!
//! The branch lives in the bare clone: the user's repository gets only the pin
//! `refs/hort/<leaf>/base` (so `git gc` there keeps what the box borrows). The work
//! comes back as a clone's does (`git sandbox fetch`, or a push to origin from inside).

use std::io::Write;
use std::path::Path;

use crate::cmd::CmdError;
use crate::git::{GitCli, Repo};
use crate::plan::Checkout;

use super::clone::{write_pin, CloneError};

/// Make the bare clone at `bare` and the worktree at `path` on the plan's branch, and
/// pin the start commit in the user's repository. Returns the start commit.
pub fn make(
    repo: &Repo,
    bare: &Path,
    path: &Path,
    leaf: &str,
    checkout: &Checkout,
    base_commit: Option<&str>,
) -> Result<git2::Oid, CloneError> {
    let (branch, start, tracks) = match checkout {
        Checkout::NewBranch { branch, start } => (
            branch,
            base_commit
                .and_then(|c| git2::Oid::from_str(c).ok())
                .or_else(|| repo.git.refname_to_id(start).ok()),
            false,
        ),
        Checkout::ExistingLocal { branch } => (branch, repo.local_branch(branch), false),
        Checkout::FromRemote { branch, .. } => (branch, repo.remote_branch(branch), true),
        // A worktree needs a commit to check out; the planner never asks for these.
        Checkout::Resume { branch } | Checkout::Unborn { branch } => (branch, None, false),
    };
    let Some(start) = start else {
        return Err(CloneError::Checkout {
            branch: branch.clone(),
            source: CmdError::Failed {
                line: "resolve start commit".into(),
                status: std::os::unix::process::ExitStatusExt::from_raw(256),
                stderr: "the start commit is not in the repository".into(),
            },
        });
    };
    init_bare(repo, bare, branch, start, tracks).map_err(CloneError::Remotes)?;
    let git = GitCli::for_repo(bare, None);
    git.cmd(bare)
        .arg(format!("--git-dir={}", bare.display()))
        .args(["worktree", "add", "--quiet"])
        .arg(path.as_os_str())
        .arg(branch)
        .output()
        .map_err(|source| CloneError::Checkout {
            branch: branch.clone(),
            source,
        })?;
    write_pin(repo, leaf, start)?;
    Ok(start)
}

/// The bare clone, before its worktree: config, alternates and refs.
fn init_bare(
    repo: &Repo,
    bare: &Path,
    branch: &str,
    start: git2::Oid,
    tracks: bool,
) -> Result<(), git2::Error> {
    let io = |e: std::io::Error| git2::Error::from_str(&e.to_string());
    let mut opts = git2::RepositoryInitOptions::new();
    opts.bare(true)
        .no_reinit(true)
        .mkpath(true)
        .external_template(false);
    let b = git2::Repository::init_opts(bare, &opts)?;
    let objects = std::fs::canonicalize(repo.common_dir.join("objects")).map_err(io)?;
    let info = bare.join("objects/info");
    std::fs::create_dir_all(&info).map_err(io)?;
    let mut line = objects.into_os_string().into_encoded_bytes();
    line.push(b'\n');
    std::fs::write(info.join("alternates"), line).map_err(io)?;

    let mut cfg = b.config()?;
    cfg.set_bool("core.logAllRefUpdates", true)?;
    // The guard turns on `extensions.worktreeConfig`, under which a `core.bare` in the
    // shared config would make every worktree bare too (git-worktree(1)): it belongs
    // to the bare clone's own `config.worktree`.
    cfg.remove("core.bare")?;
    std::fs::write(bare.join("config.worktree"), "[core]\n\tbare = true\n").map_err(io)?;
    let origin_url = repo
        .git
        .find_remote("origin")
        .ok()
        .and_then(|r| r.url().ok().map(str::to_string));
    if let Some(url) = &origin_url {
        cfg.set_str("remote.origin.url", url)?;
        cfg.set_str("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")?;
        if tracks {
            cfg.set_str(&format!("branch.{branch}.remote"), "origin")?;
            cfg.set_str(
                &format!("branch.{branch}.merge"),
                &format!("refs/heads/{branch}"),
            )?;
        }
    }

    // One file instead of a loose ref each: the user's view of origin and its tags,
    // and the box's branch. No `peeled` trait, so git peels tags itself.
    let mut refs: Vec<(String, git2::Oid)> = Vec::new();
    if origin_url.is_some() {
        for r in repo.git.references_glob("refs/remotes/origin/*")?.flatten() {
            if let (Ok(name), Some(oid)) = (r.name(), r.target()) {
                refs.push((name.to_string(), oid));
            }
        }
    }
    for r in repo.git.references_glob("refs/tags/*")?.flatten() {
        if let (Ok(name), Some(oid)) = (r.name(), r.target()) {
            refs.push((name.to_string(), oid));
        }
    }
    refs.retain(|(n, _)| !n.ends_with("/HEAD") && !n.contains(['\n', ' ']));
    refs.push((format!("refs/heads/{branch}"), start));
    refs.sort();
    refs.dedup_by(|a, b| a.0 == b.0);
    let mut text = Vec::with_capacity(64 * refs.len() + 32);
    text.extend_from_slice(b"# pack-refs with: sorted \n");
    for (name, oid) in &refs {
        writeln!(text, "{oid} {name}").map_err(io)?;
    }
    std::fs::write(bare.join("packed-refs"), text).map_err(io)?;
    Ok(())
}
