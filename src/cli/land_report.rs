//! How `git treebox land`'s publishing and reviewing refusals reach the user: `--pr`
//! ([`crate::land::flow::Landing::open_pr`]), `--push`, and the commits land will not
//! write (SPEC §8.11), each with its exit code and the step that fixes it.

use super::error::{CliError, ErrorKind};
use crate::land::flow::PrError;
use crate::land::publish::PublishError;
use crate::land::scan::Refusal;

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
