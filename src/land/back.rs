//! A clone's (a sandboxed worktree's) work brought back without trusting the box: its
//! current branch bundled with libgit2 ([`write_bundle`]; no git runs under the box's
//! config) and imported from the bundle into `refs/hort/<name>/incoming`
//! ([`fetch_back`]), the only tip of the box the host trusts. The engine under
//! `git sandbox bundle`, `git sandbox fetch` and `land`.

use std::path::PathBuf;

use crate::boxes::{BoxEntry, OwnGit};
use crate::git::Repo;
use crate::maintain;
use crate::provision::clone::{self, Bundle, BundleError};
use crate::state::Layout;

/// Why a box's work was not brought back.
#[derive(Debug, thiserror::Error)]
pub enum BackError {
    #[error("could not create {}", .dir.display())]
    Dir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// A box on another machine: its bundle refused here.
    #[error(transparent)]
    Far(super::far::FarError),
}

/// A clone's (a sandboxed worktree's) branch, brought back into
/// `refs/hort/<name>/incoming`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedBack {
    /// The box's branch, as its own git names it now.
    pub branch: String,
    /// `incoming`'s commit: the only tip of the box the host trusts.
    pub tip: git2::Oid,
    /// Commits brought in now (0: `incoming` was already there).
    pub commits: usize,
}

/// The box's own git data: a sandboxed worktree's bare clone, else the clone at its
/// path.
pub fn own_git(entry: &BoxEntry) -> OwnGit {
    entry
        .own_git()
        .unwrap_or_else(|| OwnGit::clone_at(&entry.path))
}

/// The common git dir of the repository the box borrows from, as its record says.
pub fn user_common_dir(repo: &Repo, entry: &BoxEntry) -> PathBuf {
    entry
        .record
        .as_ref()
        .map(|r| r.common_dir.clone())
        .unwrap_or_else(|| repo.common_dir.clone())
}

/// Write the box's bundle to `output` (a directory gets `<name>.bundle` inside it;
/// default: the box's bookkeeping dir); the path is made absolute.
pub fn write_bundle(
    repo: &Repo,
    layout: &Layout,
    entry: &BoxEntry,
    output: Option<PathBuf>,
) -> Result<Bundle, BackError> {
    let file_name = format!("{}.bundle", entry.leaf);
    let output = output.map(|o| std::path::absolute(&o).unwrap_or(o));
    let out = match output {
        Some(o) if o.is_dir() => o.join(&file_name),
        Some(o) => o,
        None => layout.scratch_path(&entry.leaf, &file_name),
    };
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        maintain::bundle::make_dir(dir).map_err(|source| BackError::Dir {
            dir: dir.to_path_buf(),
            source,
        })?;
    }
    Ok(clone::write_bundle(
        &own_git(entry),
        &user_common_dir(repo, entry),
        &out,
    )?)
}

/// Bring a clone box's (a sandboxed worktree's) current branch into
/// `refs/hort/<name>/incoming` (see the module doc). Nothing new is a success
/// (`commits` 0) when `incoming` already names the box's tip.
pub fn fetch_back(
    repo: &Repo,
    layout: &Layout,
    entry: &BoxEntry,
) -> Result<FetchedBack, BackError> {
    let incoming = clone::incoming_ref(entry.leaf.as_str());
    // Its own file: a bundle the user made with `bundle` (the default path) stays.
    let tmp = layout.scratch_path(&entry.leaf, &format!("{}.fetch.bundle", entry.leaf));
    let own = own_git(entry);
    let b = match write_bundle(repo, layout, entry, Some(tmp)) {
        Ok(b) => b,
        Err(BackError::Bundle(BundleError::Empty)) => {
            // Already fetched: the repository has the tip, and incoming names it.
            if let Some((Some(branch), Some(tip))) = own.head() {
                if repo.git.refname_to_id(&incoming).ok() == Some(tip) {
                    return Ok(FetchedBack {
                        branch,
                        tip,
                        commits: 0,
                    });
                }
            }
            return Err(BundleError::Empty.into());
        }
        Err(e) => return Err(e),
    };
    let common = user_common_dir(repo, entry);
    if let Err(e) = clone::check_incoming_kept(repo, entry.leaf.as_str(), own.open().as_ref(), &b) {
        maintain::bundle::discard(&b.path);
        return Err(e.into());
    }
    let imported = clone::import_bundle(repo, entry.leaf.as_str(), &own, &common, &b);
    maintain::bundle::discard(&b.path);
    imported?;
    Ok(FetchedBack {
        branch: b.branch,
        tip: b.tip,
        commits: b.commits,
    })
}
