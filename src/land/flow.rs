//! `land` as engine calls, the same under every front end (`git treebox land`,
//! `watch`'s `l`, and the MCP server's `box_land`): the front end picks the strategy,
//! prints, and asks the user; these calls decide and write (SPEC §10b).
//!
//! In order, nothing written before the last refusal ([`prepare`]): the box must have
//! a record, its lock (so `enter` and `teardown` wait), a history and tip tree within
//! land's bounds ([`scan::tip_fits`], judged from its commits before its checkout is
//! read), no live agent, no uncommitted work (its checkout, and for a clone or
//! sandboxed worktree its other branches, tags and stash); origin is fetched; a
//! clone's or sandboxed worktree's branch is fetched back into
//! `refs/hort/<name>/incoming` ([`super::back`]). Then [`Landing::onto`] makes and
//! moves the base ([`super::onto`]) and [`Landing::push_base`] publishes it, or
//! [`Landing::open_pr`] pushes the box's branch as it is now and opens a pull request
//! with `gh`. Host pushes run no hooks, so the guard's decision is asked here.

use git2::Oid;

use super::back::{self, BackError};
use super::onto::{self, Base, Composed, LandError, MainCheckout, Strategy, Work};
use super::publish::{self, PublishError};
use super::scan::{self, Refusal, Scan};
use crate::boxes::{self, BoxEntry};
use crate::git::cli::GitCli;
use crate::git::Repo;
use crate::provision::ProvisionError;
use crate::state::{BoxLock, Layout};

/// Why a box is not landed: every refusal [`prepare`] makes, nothing written.
#[derive(Debug, thiserror::Error)]
pub enum NotReady {
    #[error("`{leaf}` has no record, so its base is unknown")]
    NoRecord { leaf: String },
    /// The box's lock is held, origin could not be fetched, or the box's checkout
    /// and git are gone.
    #[error(transparent)]
    Provision(#[from] ProvisionError),
    /// Past land's bounds, or not reviewable (SPEC §8.11).
    #[error(transparent)]
    Unreviewable(Refusal),
    #[error("box `{leaf}` has a live agent session: its work may still change")]
    SessionLive { leaf: String },
    #[error("box `{leaf}` has {}", if *.unknown {
        "a checkout whose changes cannot be read"
    } else {
        "uncommitted changes (untracked files count)"
    })]
    Dirty {
        leaf: String,
        path: std::path::PathBuf,
        /// The changes could not be read within the bounds (else: there are some).
        unknown: bool,
    },
    #[error("box `{leaf}` holds work outside its branch (another branch, a tag or a stash)")]
    Unreturned { leaf: String },
    #[error("box `{leaf}` has no commits on a branch to land")]
    NoBranch { leaf: String },
    #[error("could not read box `{leaf}`'s git")]
    Open {
        leaf: String,
        #[source]
        source: super::OpenError,
    },
    /// A clone's (a sandboxed worktree's) work could not be brought back.
    #[error(transparent)]
    Back(#[from] BackError),
}

/// A box ready to land: its lock held (released when this is dropped), origin
/// fetched, the tip the host trusts.
pub struct Landing {
    _lock: BoxLock,
    pub leaf: String,
    /// The box's branch.
    pub branch: String,
    /// Its tip as the host trusts it (a clone's: `refs/hort/<name>/incoming`'s).
    pub tip: Oid,
    /// The base branch it was made from.
    pub base: String,
    git: GitCli,
}

/// What [`Landing::onto`] did.
#[derive(Debug)]
pub struct Landed {
    /// The base as it was, and where the work landed on.
    pub base: Base,
    /// The new base commit; `None` when the work was already in the base.
    pub composed: Option<Composed>,
    /// What became of the user's checkout of the base.
    pub main: MainCheckout,
}

/// Why `--pr` opened nothing.
#[derive(Debug, thiserror::Error)]
pub enum PrError {
    #[error(transparent)]
    Unreviewable(Refusal),
    /// Refused before anything was pushed, or the push failed.
    #[error(transparent)]
    Publish(PublishError),
    /// Pushed, but `gh pr create` failed; `slug` is origin's forge repository.
    #[error("{source}")]
    Open {
        #[source]
        source: PublishError,
        slug: String,
    },
}

/// Every check before anything is written (see the module doc); the box's lock is
/// held from here until the [`Landing`] is dropped. `can_ask`: origin's fetch may ask
/// for credentials on a terminal.
pub fn prepare(
    repo: &Repo,
    layout: &Layout,
    entry: &BoxEntry,
    can_ask: bool,
) -> Result<Landing, NotReady> {
    let leaf = entry.leaf.to_string();
    let Some(record) = entry.record.as_ref() else {
        return Err(NotReady::NoRecord { leaf });
    };
    let lock = BoxLock::try_acquire(&layout.lock_path(&entry.leaf), &leaf)
        .map_err(ProvisionError::from)?;
    tip_fits(entry, repo, &record.base)?;
    ready(entry, repo, layout)?;
    let git = GitCli::for_repo(&repo.common_dir, None);
    crate::provision::fetch::fetch_origin(&git, &repo.main_root, &layout.repo_state, can_ask)
        .map_err(ProvisionError::from)?;
    let (branch, tip) = box_tip(entry, repo, layout)?;
    Ok(Landing {
        _lock: lock,
        leaf,
        branch,
        tip,
        base: record.base.clone(),
        git,
    })
}

/// What a box's machine says of it before it lands (claims: see
/// [`crate::remote::back`]); a box there is refused on them as [`prepare`] refuses one
/// here.
#[derive(Debug, Clone)]
pub struct FarState {
    pub leaf: String,
    pub base: String,
    /// Its checkout there (sanitised), for the messages.
    pub path: std::path::PathBuf,
    pub live: bool,
    pub dirty: Option<bool>,
    pub unreturned_other: Option<bool>,
}

/// [`prepare`] for a box on another machine: its lock here held, the machine's word on
/// its session and work weighed, origin fetched, then its work brought back by
/// `import` (checked, into `refs/hort/<name>/incoming`) and judged within land's
/// bounds from the commits here.
pub fn prepare_far(
    repo: &Repo,
    layout: &Layout,
    state: &FarState,
    import: impl FnOnce() -> Result<back::FetchedBack, BackError>,
    can_ask: bool,
) -> Result<Landing, NotReady> {
    let leaf = state.leaf.clone();
    let named = crate::names::Leaf::parse(&leaf)
        .map_err(|e| NotReady::Provision(ProvisionError::from(e)))?;
    let lock =
        BoxLock::try_acquire(&layout.lock_path(&named), &leaf).map_err(ProvisionError::from)?;
    if state.live {
        return Err(NotReady::SessionLive { leaf });
    }
    if state.dirty != Some(false) {
        return Err(NotReady::Dirty {
            leaf,
            path: state.path.clone(),
            unknown: state.dirty.is_none(),
        });
    }
    if state.unreturned_other == Some(true) {
        return Err(NotReady::Unreturned { leaf });
    }
    let git = GitCli::for_repo(&repo.common_dir, None);
    crate::provision::fetch::fetch_origin(&git, &repo.main_root, &layout.repo_state, can_ask)
        .map_err(ProvisionError::from)?;
    let b = import()?;
    let onto = crate::git::landed::targets_for_base(&repo.git, &state.base)
        .first()
        .map(|t| t.oid);
    scan::tip_fits(&repo.git, onto, b.tip).map_err(NotReady::Unreviewable)?;
    Ok(Landing {
        _lock: lock,
        leaf,
        branch: b.branch,
        tip: b.tip,
        base: state.base.clone(),
        git,
    })
}

impl Landing {
    /// Land the work onto the base with `strategy`, moving the base (and the user's
    /// checkout of it, when it follows): [`onto::compose`], then [`onto::move_base`].
    /// Work already in the base lands nothing (`composed` is `None`).
    pub fn onto(&self, repo: &Repo, strategy: Strategy) -> Result<Landed, LandError> {
        let base = onto::base_of(repo, &self.base)?;
        let work = Work {
            tip: self.tip,
            branch: &self.branch,
            leaf: &self.leaf,
        };
        let main = onto::checkout_check(repo, &self.git, &self.base)?;
        let composed = match onto::compose(repo, &self.git, strategy, &base, &work) {
            Ok(c) => Some(c),
            Err(LandError::AlreadyIn { .. }) => None,
            Err(e) => return Err(e),
        };
        if let Some(c) = &composed {
            onto::move_base(repo, &self.git, &base, c.new, &self.leaf, main)?;
        }
        Ok(Landed {
            base,
            composed,
            main,
        })
    }

    /// `--push`: the base to origin, the guard asked first (host pushes run no hooks).
    pub fn push_base(&self, repo: &Repo, base: &Base) -> Result<(), PublishError> {
        let refname = base.refname();
        publish::guard_allows(&refname, &refname)?;
        publish::push(repo, &self.git, &refname, &refname).map_err(|source| PublishError::Push {
            branch: base.name.clone(),
            source,
        })
    }

    /// `--pr`: push the box's branch as it is now and open a pull request onto the
    /// base; its URL. Everything that could refuse is asked before anything is pushed:
    /// the commits it would bring (as `land --merge` checks them: a merge on the forge
    /// bypasses treebox, SPEC §8.11), the branch, origin's forge repository, and `gh`
    /// itself. `pushed` is told once the branch is on origin.
    pub fn open_pr(&self, repo: &Repo, pushed: impl FnOnce()) -> Result<String, PrError> {
        reviewable(repo, self.tip, &self.base).map_err(PrError::Unreviewable)?;
        let publish = PrError::Publish;
        publish::check_pr_branch(repo, &self.branch, &self.base).map_err(publish)?;
        let (host, slug) = publish::forge_repo(repo).map_err(publish)?;
        publish::gh_ready(&host).map_err(publish)?;
        let refname = format!("refs/heads/{}", self.branch);
        publish::push(repo, &self.git, &self.tip.to_string(), &refname).map_err(|source| {
            PrError::Publish(PublishError::Push {
                branch: crate::sanitize::line(&self.branch),
                source,
            })
        })?;
        pushed();
        let (title, body) = publish::describe(repo, &self.leaf, &self.branch, self.tip, &self.base);
        publish::open_pr(repo, &slug, &self.base, &self.branch, &title, &body)
            .map_err(|source| PrError::Open { source, slug })
    }
}

/// Refuse a box whose history or tip tree is past land's bounds, judged from its
/// commits alone (through the box's objects as `diff` reads them) before its
/// checkout's status is read.
fn tip_fits(entry: &BoxEntry, repo: &Repo, base: &str) -> Result<(), NotReady> {
    let Ok(git) = super::BoxGit::open(entry, repo) else {
        return Ok(());
    };
    let Some(tip) = git.tip else {
        return Ok(());
    };
    let onto = crate::git::landed::targets_for_base(&repo.git, base)
        .first()
        .map(|t| t.oid);
    scan::tip_fits(&git.objects, onto, tip).map_err(NotReady::Unreviewable)
}

/// Refuse a box with a live agent or uncommitted work.
fn ready(entry: &BoxEntry, repo: &Repo, layout: &Layout) -> Result<(), NotReady> {
    let leaf = entry.leaf.to_string();
    if crate::state::session::is_live(&layout.session_path(&entry.leaf)) {
        return Err(NotReady::SessionLive { leaf });
    }
    // A sandboxed worktree lands from its bare clone, its checkout gone or not.
    if !entry.git_left() {
        return Err(ProvisionError::BoxMissing {
            leaf,
            path: entry.path.clone(),
        }
        .into());
    }
    let a = boxes::assess(entry, repo);
    if a.dirty != Some(false) {
        return Err(NotReady::Dirty {
            leaf,
            path: entry.path.clone(),
            unknown: a.dirty.is_none(),
        });
    }
    if a.unreturned_other == Some(true) {
        return Err(NotReady::Unreturned { leaf });
    }
    Ok(())
}

/// The box's branch and tip as the host trusts them: a worktree's from the user's
/// repository, a clone's (a sandboxed worktree's) fetched back first.
fn box_tip(entry: &BoxEntry, repo: &Repo, layout: &Layout) -> Result<(String, Oid), NotReady> {
    let leaf = || entry.leaf.to_string();
    if entry.owns_git() {
        let b = back::fetch_back(repo, layout, entry)?;
        return Ok((b.branch, b.tip));
    }
    let git = super::BoxGit::open(entry, repo).map_err(|source| NotReady::Open {
        leaf: leaf(),
        source,
    })?;
    match (git.branch, git.tip) {
        (Some(b), Some(t)) => Ok((b, t)),
        _ => Err(NotReady::NoBranch { leaf: leaf() }),
    }
}

/// The commits `tip` would bring onto origin's `base` (else the local one): no path
/// under `.treebox/` or with controls, no text with controls, within the budgets.
fn reviewable(repo: &Repo, tip: Oid, base: &str) -> Result<(), Refusal> {
    let onto = repo.remote_branch(base).or_else(|| repo.local_branch(base));
    let all: Vec<Oid> = scan::history(&repo.git, onto, tip)?
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    match Scan::on(&repo.git, onto)?.commits(&all)? {
        Some((id, field)) => Err(Refusal::ControlText {
            commit: scan::short(id),
            field,
        }),
        None => Ok(()),
    }
}
