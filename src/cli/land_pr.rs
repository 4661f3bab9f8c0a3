//! `git treebox land NAME --pr`: push the box's branch as it is now and open a pull
//! request with `gh` ([`crate::land::publish`]). Everything that could refuse is asked
//! before anything is pushed: the branch, origin's forge repository, and `gh` itself.

use super::error::{CliError, ErrorKind};
use super::ui::Ui;
use crate::boxes::BoxEntry;
use crate::git::cli::GitCli;
use crate::git::Repo;
use crate::land::publish::{self, PublishError};
use crate::land::scan::{self, Refusal, Scan};

/// Push `tip` as the box's `branch` and open a pull request onto `base`; its URL. The
/// commits the pull request would bring are checked as `land --merge` checks them
/// first: a merge on the forge bypasses treebox (SPEC §8.11).
pub(super) fn open(
    repo: &Repo,
    git: &GitCli,
    entry: &BoxEntry,
    branch: &str,
    tip: git2::Oid,
    base: &str,
    ui: &mut Ui,
) -> Result<String, CliError> {
    let leaf = entry.leaf.as_str();
    let err = |e| from_publish(e, leaf);
    reviewable(repo, tip, base).map_err(|e| refused(e, leaf))?;
    publish::check_pr_branch(repo, branch, base).map_err(err)?;
    let (host, slug) = publish::forge_repo(repo).map_err(err)?;
    publish::gh_ready(&host).map_err(err)?;
    let refname = format!("refs/heads/{branch}");
    let shown = crate::sanitize::line(branch);
    publish::push(repo, git, &tip.to_string(), &refname).map_err(|source| {
        err(PublishError::Push {
            branch: shown.clone(),
            source,
        })
    })?;
    ui.info(&format!("pushed `{shown}` to origin"));
    let (title, body) = publish::describe(repo, leaf, branch, tip, base);
    let url = publish::open_pr(repo, &slug, base, branch, &title, &body).map_err(|e| {
        from_publish(e, leaf).hint(format!(
            "Open it yourself: `gh pr create --repo {slug} --base {base} --head {}`.",
            crate::cmd::quote(branch)
        ))
    })?;
    ui.info(&format!("opened a pull request of `{shown}` onto `{base}`"));
    Ok(url)
}

/// The commits `tip` would bring onto origin's `base` (else the local one): no path
/// under `.treebox/` or with controls, no text with controls, within the budgets.
fn reviewable(repo: &Repo, tip: git2::Oid, base: &str) -> Result<(), Refusal> {
    let onto = repo.remote_branch(base).or_else(|| repo.local_branch(base));
    let all: Vec<git2::Oid> = scan::history(&repo.git, onto, tip)?
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
