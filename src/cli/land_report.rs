//! What a land looks like to the user, under every front end that lands
//! (`git treebox land` and the MCP server's `box_land`): its `--json` document
//! ([`LandDocument`]), and each refusal with its exit code and the step that fixes it —
//! the box not ready ([`from_not_ready`]), the landing itself ([`from_land`]), `--pr`
//! ([`crate::land::flow::Landing::open_pr`]), `--push`, and the commits land will not
//! write (SPEC §8.11).
//!
//! Not a command: a front end's shared vocabulary, so neither imports the other.

use serde::Serialize;

use super::error::{CliError, ErrorKind};
use super::json::{Document, V1};
use crate::land::back::BackError;
use crate::land::flow::{Landed, NotReady, PrError};
use crate::land::onto::{LandError, Strategy};
use crate::land::publish::PublishError;
use crate::land::scan::Refusal;
use crate::provision::clone::BundleError;

/// `docs/schema/land.schema.json`: `git treebox land --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct LandDocument<'a> {
    pub schema_version: V1,
    pub name: &'a str,
    pub branch: &'a str,
    pub base: &'a str,
    /// `squash`, `rebase`, `merge`, or `pr`.
    pub strategy: &'a str,
    /// `landed`, `already-landed` or `pr-opened`.
    pub outcome: &'a str,
    /// The box's tip that landed (for a clone: `refs/hort/<name>/incoming`'s).
    pub tip: String,
    /// The base before and after (absent with `--pr`; `old` absent where there was no
    /// local base).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<String>,
    pub commits: usize,
    pub pushed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pr_url: Option<String>,
    pub removed: bool,
}

impl Document for LandDocument<'_> {}

impl<'a> LandDocument<'a> {
    /// The document of a land that wrote (or found the work already in the base):
    /// `git treebox land --json`'s and `box_land`'s, neither pushed nor removed (the
    /// CLI sets those when it did).
    pub(super) fn landed(
        name: &'a str,
        branch: &'a str,
        base: &'a str,
        tip: git2::Oid,
        strategy: Strategy,
        landed: &Landed,
    ) -> LandDocument<'a> {
        LandDocument {
            schema_version: V1,
            name,
            branch,
            base,
            strategy: strategy.as_str(),
            outcome: if landed.composed.is_some() {
                "landed"
            } else {
                "already-landed"
            },
            tip: tip.to_string(),
            old: landed.base.old.map(|o| o.to_string()),
            new: landed.composed.as_ref().map(|c| c.new.to_string()),
            commits: landed.composed.as_ref().map_or(0, |c| c.commits),
            pushed: false,
            pr_url: None,
            removed: false,
        }
    }
}

/// A refusal before anything was written, as the user sees it: its kind (exit code)
/// and the step that fixes it.
pub(super) fn from_not_ready(e: NotReady, leaf: &str) -> CliError {
    let q = crate::cmd::quote(leaf);
    match e {
        NotReady::NoRecord { .. } => CliError::of(ErrorKind::NotABox, e),
        NotReady::Provision(p) => CliError::from(p),
        NotReady::Unreviewable(r) => refused(r, leaf),
        NotReady::SessionLive { .. } => CliError::of(ErrorKind::SessionLive, e).hint(format!(
            "Let the agent finish and exit (`git treebox enter {q}`, then quit it), then run `git treebox land {q}` again."
        )),
        NotReady::Dirty { ref path, .. } => {
            let hint = format!(
                "Commit them in {} (or remove them), then land again; `git treebox diff {q}` shows them.",
                path.display()
            );
            CliError::of(ErrorKind::Dirty, e).hint(hint)
        }
        NotReady::Unreturned { .. } => CliError::of(ErrorKind::Unreturned, e).hint(format!(
            "Put it on the box's branch, or drop it there, then land again; `git sandbox bundle {q}` keeps a copy of the branch."
        )),
        NotReady::NoBranch { .. } => CliError::of(ErrorKind::NoBranch, e).hint(
            "Commit its work on a branch there (`git switch -c <name>`), then land again.",
        ),
        NotReady::Open { .. } => CliError::of(ErrorKind::Repo, e),
        NotReady::Back(b) => from_back(b, leaf),
    }
}

/// A landing failure as the user sees it: its kind (exit code) and the step that
/// fixes it.
pub(super) fn from_land(e: LandError, leaf: &str) -> CliError {
    let e = match e {
        LandError::Refused(r) => return refused(r, leaf),
        e => e,
    };
    let q = crate::cmd::quote(leaf);
    let (kind, hint) = match &e {
        LandError::NoBase { base } => (
            ErrorKind::BaseNotFound,
            format!("Fetch origin (`git fetch origin`); if `{base}` is gone, land onto a branch that exists by recreating the box from it."),
        ),
        LandError::Diverged { base, .. } => (
            ErrorKind::Diverged,
            format!("Reconcile them first (`git switch {base} && git pull --rebase`), then land again."),
        ),
        LandError::CheckedOutElsewhere { path, .. } => (
            ErrorKind::BranchCheckedOut,
            format!("Switch that worktree to another branch (`git -C {} switch --detach`), then land again.", crate::cmd::quote(&path.to_string_lossy())),
        ),
        LandError::CheckoutInTheWay { .. } => (
            ErrorKind::Dirty,
            "Move the untracked files git names above out of the way (or commit them), then land again; nothing was changed.".into(),
        ),
        LandError::DirtyCheckout { .. } => (
            ErrorKind::Dirty,
            "Commit or stash your changes (`git stash`), then land again; nothing was changed.".into(),
        ),
        LandError::Conflict { base, .. } | LandError::Unrelated { base } => (
            ErrorKind::LandConflict,
            format!("Nothing was changed. Rebase the box onto `{base}` inside it (`git treebox enter {q}`, then `git rebase origin/{base}`), or land with `--pr` and resolve it there."),
        ),
        LandError::BaseMoved { .. } => (
            ErrorKind::Changed,
            format!("Run `git treebox land {q}` again."),
        ),
        LandError::CheckoutBehind { old, new, .. } => (
            ErrorKind::Runtime,
            format!("Bring your checkout along once its changes are out of the way: `git read-tree -m -u {old} {new}`."),
        ),
        LandError::AlreadyIn { .. }
        | LandError::Git(_)
        | LandError::Cmd(_)
        | LandError::Refused(_) => {
            (ErrorKind::Repo, String::new())
        }
    };
    let e = CliError::of(kind, e);
    if hint.is_empty() {
        e
    } else {
        e.hint(hint)
    }
}

/// A `--pr` failure as the user sees it: its kind (exit code) and the step that fixes
/// it.
pub(super) fn from_pr(e: PrError, leaf: &str, branch: &str, base: &str) -> CliError {
    match e {
        PrError::Unreviewable(r) => refused(r, leaf),
        PrError::Publish(p) => from_publish(p, leaf),
        PrError::Open { source, slug } => from_publish(source, leaf).hint(format!(
            "Open it yourself: `gh pr create --repo {slug} --base {base} --head {}`.",
            crate::cmd::quote(branch)
        )),
    }
}

/// A [`Refusal`] as the user sees it (exit 5, `unreviewable`) and its way out.
pub(super) fn refused(r: Refusal, leaf: &str) -> CliError {
    if let Refusal::Git(_) = r {
        return CliError::of(ErrorKind::Repo, r);
    }
    let hint = refused_hint(&r, leaf);
    CliError::of(ErrorKind::Unreviewable, r).hint(hint)
}

/// A publishing failure as the user sees it: its kind (exit code) and the step that
/// fixes it.
pub(super) fn from_publish(e: PublishError, leaf: &str) -> CliError {
    let q = crate::cmd::quote(leaf);
    let rename = format!(
        "Rename the box's branch to a real one there (`git branch -m <type>/<short-name>` in `git treebox enter {q}`), then run it again."
    );
    let (kind, hint) = match &e {
        PublishError::NotABranch { .. } | PublishError::IsTheBase { .. } => {
            (ErrorKind::PushRefused, Some(rename))
        }
        PublishError::Guard { .. } => (ErrorKind::PushRefused, None),
        PublishError::NotAForge { .. } => (
            ErrorKind::ForgeCli,
            Some(format!("Land it here instead (`git treebox land {q}`, optionally with `--push`).")),
        ),
        PublishError::GhMissing => (
            ErrorKind::ForgeCli,
            Some("Install it (`apt install gh`, or https://cli.github.com), log in with `gh auth login`, then run it again.".into()),
        ),
        PublishError::GhBroken(_) | PublishError::PrCreate { .. } => (ErrorKind::ForgeCli, None),
        PublishError::GhLoggedOut { host, .. } => (
            ErrorKind::ForgeCli,
            Some(format!("Log in with `gh auth login --hostname {host}`, then run it again.")),
        ),
        PublishError::Push { .. } => (
            ErrorKind::FetchFailed,
            Some("Nothing was opened. If origin's branch of that name holds other work, rename the box's branch; then run it again.".into()),
        ),
    };
    let e = CliError::of(kind, e);
    match hint {
        Some(h) => e.hint(h),
        None => e,
    }
}

/// The way out of a [`Refusal`] (SPEC §8.11): the box's branch put right inside the
/// box, or the same work landed made plain.
fn refused_hint(r: &Refusal, leaf: &str) -> String {
    let q = crate::cmd::quote(leaf);
    match r {
        Refusal::BoxesRoot { commit, .. } => format!(
            "Nothing was changed. Take it off the box's branch inside the box (`git treebox enter {q}`, then `git rm -r --cached -- ':(icase).treebox'` and commit){}; `git treebox diff {q}` marks it.",
            if commit.is_some() { "; a commit that added it needs rewriting (`git rebase -i`), or land with `--squash`" } else { "" }
        ),
        Refusal::ControlPath { commit, .. } => format!(
            "Nothing was changed. Rename it inside the box (`git treebox enter {q}`, then `git mv` and commit){}; `git treebox diff {q}` marks it.",
            if commit.is_some() { "; a commit that added it needs rewriting (`git rebase -i`), or land with `--squash`" } else { "" }
        ),
        Refusal::ControlText { .. } => format!(
            "Nothing was changed. Land with `--squash` or `--rebase` (they write its message and names made plain): `git treebox land {q} --rebase`; or reword it inside the box (`git rebase -i`)."
        ),
        Refusal::TooLarge { .. } => format!(
            "Nothing was changed. Look at the work yourself in the box (`git treebox enter {q}`; `git treebox diff {q}` says what is too large) and bring over what you trust with git."
        ),
        Refusal::Git(_) => String::new(),
    }
}

/// A bringing-back failure as the user sees it.
pub(super) fn from_back(e: BackError, leaf: &str) -> CliError {
    match e {
        BackError::Bundle(e) => from_bundle(e, leaf),
        e @ BackError::Dir { .. } => CliError::of(ErrorKind::Io, e),
        BackError::Far(e) => from_far(e, leaf),
    }
}

/// A bundle from a box's machine, refused here: nothing was imported.
fn from_far(e: crate::land::far::FarError, leaf: &str) -> CliError {
    use crate::land::far::FarError as F;
    let msg = crate::sanitize::line(&e.to_string());
    let quoted = crate::cmd::quote(leaf);
    let out = match e {
        F::TooLarge(_) | F::TooManyCommits(_) | F::Slow => CliError::new(ErrorKind::TooLarge, msg)
            .hint(format!(
                "Nothing was fetched. Drop it from the box's branch there (`git sandbox run {quoted} -- git log --stat`), or remove the box: `git sandbox down -f {quoted}`."
            )),
        F::Quarantine(..) => CliError::new(ErrorKind::Io, msg),
        F::Git(_) => CliError::new(ErrorKind::Bundle, msg),
        F::Header(_) | F::Borrows(_) | F::Thin | F::Reaches(_) => {
            CliError::new(ErrorKind::ForeignObjects, msg).hint(format!(
                "Nothing was imported. That machine's treebox sent what no treebox makes: check it (`git treebox doctor`); to remove the box: `git sandbox down -f {quoted}`."
            ))
        }
    };
    out.caused_by(e)
}

fn from_bundle(e: BundleError, leaf: &str) -> CliError {
    let msg = crate::sanitize::line(&e.to_string());
    let out = match e {
        BundleError::ForeignObjects(_) => CliError::new(ErrorKind::ForeignObjects, msg).hint(format!(
            "Nothing was read or imported. Look at what the box wrote there; to remove the box: `git sandbox down -f {}`.",
            crate::cmd::quote(leaf)
        )),
        BundleError::Import(_) => CliError::new(ErrorKind::Fetch, msg),
        // As `enter` and `run` refuse a broken box: 5, nothing read.
        BundleError::Broken { .. } => CliError::new(ErrorKind::BlockingRegistration, msg).hint(format!(
            "Nothing was read. Copy out what you need, then remove it: `git sandbox down -f {}`.",
            crate::cmd::quote(leaf)
        )),
        BundleError::WouldDrop { ref incoming, .. } => CliError::new(ErrorKind::IncomingUnkept, msg.clone()).hint(format!(
            "Keep it first — merge it, or `git branch <name> {incoming}` — then fetch again.",
        )),
        BundleError::TooLarge(_) | BundleError::TooManyCommits(_) => CliError::new(ErrorKind::TooLarge, msg).hint(format!(
            "Nothing was fetched. Drop it from the box's branch (in the box: `git log --stat`, then rewrite the commit that added it) and try again, or remove the box: `git sandbox down -f {}`.",
            crate::cmd::quote(leaf)
        )),
        BundleError::Empty => CliError::new(ErrorKind::NothingToBundle, msg)
            .hint("This takes the box's current branch: commit there first, or, for work on another branch, switch to it in the box."),
        BundleError::NoBranch => CliError::new(ErrorKind::NoBranch, msg).hint(
            "Put the work on a branch in the box first (`git switch -c <name>` there), then run this again.",
        ),
        _ => CliError::new(ErrorKind::Bundle, msg),
    };
    out.caused_by(e)
}
