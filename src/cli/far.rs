//! A box on another machine, its work brought back here (issue 41's second slice):
//! `git sandbox fetch`/`bundle`, `diff` and `land` of a box there. A front end over
//! [`crate::remote::back`] (the bundle that machine's treebox makes, taken into a
//! capped file) and [`crate::land::far`] (checked as box-written data, then imported
//! into `refs/hort/<name>/incoming`); after that each verb works on the imported
//! commits as it does on a clone's. What the machine says of the box (its base, its
//! session, its other work) is a claim, shown sanitised.

use std::path::Path;

use super::error::{CliError, ErrorKind};
use super::on::Far;
use crate::git::Repo;
use crate::land::back::FetchedBack;
use crate::land::flow::{FarState, Landing};
use crate::remote::back::{BringError, Brought};
use crate::state::Layout;

/// A machine's failure to bring the box's work, as the user sees it.
fn from_bring(e: BringError) -> CliError {
    match e {
        BringError::Remote(e) => super::on::from_remote(e),
        e @ BringError::Room(..) => CliError::of(ErrorKind::Io, e),
    }
}

/// A refusal of what came back, with the machine named.
fn from_back(e: crate::land::back::BackError, far: &Far) -> CliError {
    let mut e = super::land_report::from_back(e, &far.leaf);
    e.message = format!("machine `{}`: {}", far.machine.name, e.message);
    e
}

/// The box's bundle from its machine, unchecked, in this repository's state.
fn bring(far: &Far) -> Result<(Repo, Layout, Brought), CliError> {
    let (repo, layout) = super::here()?;
    let b = crate::remote::back::bring(&far.machine, &far.key, &far.leaf, &repo, &layout)
        .map_err(from_bring)?;
    Ok((repo, layout, b))
}

/// `git sandbox fetch NAME` of a box there: its branch checked and imported into
/// `refs/hort/<name>/incoming`.
pub(crate) fn fetch(far: &Far) -> Result<FetchedBack, CliError> {
    let (repo, layout, b) = bring(far)?;
    b.import(&repo, &layout).map_err(|e| from_back(e, far))
}

/// `git sandbox bundle NAME [-o FILE]` of a box there: its bundle, checked, kept at
/// `out` (default: this repository's state, as `bundle` keeps a clone's).
pub(crate) fn bundle(
    far: &Far,
    out: Option<&Path>,
) -> Result<crate::provision::clone::Bundle, CliError> {
    let (repo, layout, b) = bring(far)?;
    let default = layout.repo_state.join("far");
    let out = out.unwrap_or(&default);
    b.keep(&repo, &layout, out).map_err(|e| from_back(e, far))
}

/// `diff NAME` of a box there: its branch brought back into `incoming`, then its
/// commits since its base, read here; its checkout there is not read, and when the
/// machine says it holds uncommitted work, `dirty` says so.
pub(crate) fn diff(
    far: &Far,
    stat: bool,
) -> Result<(crate::land::diff::BoxDiff, Option<bool>), CliError> {
    let (repo, layout, b) = bring(far)?;
    let fetched = b.import(&repo, &layout).map_err(|e| from_back(e, far))?;
    let base = b.base().or_else(|| repo.origin_head_branch());
    let base = base.unwrap_or_else(|| "main".into());
    let start = repo
        .git
        .refname_to_id(&crate::land::far::sent_ref(&far.leaf))
        .ok();
    let of = crate::land::diff::Of {
        leaf: far.leaf.clone(),
        base: &base,
        start,
    };
    let d = crate::land::diff::diff_far(&repo, &of, &fetched.branch, fetched.tip, !stat)
        .map_err(|e| CliError::of(ErrorKind::Repo, e))?;
    Ok((d, b.dirty()))
}

/// `land NAME` of a box there, up to the [`Landing`]: refused as a box here is on its
/// machine's word (a live agent, uncommitted or other work), then its work brought
/// back and checked.
pub(crate) fn landing(far: &Far, can_ask: bool) -> Result<(Repo, Landing), CliError> {
    let (repo, layout, b) = bring(far)?;
    let Some(base) = b.base() else {
        return Err(CliError::new(
            ErrorKind::NotABox,
            format!(
                "machine `{}` names no base branch for box `{}`",
                far.machine.name, far.leaf
            ),
        ));
    };
    let state = FarState {
        leaf: far.leaf.clone(),
        base,
        path: crate::sanitize::line(b.doc["path"].as_str().unwrap_or("?")).into(),
        live: b.live(),
        dirty: b.dirty(),
        unreturned_other: b.unreturned_other(),
    };
    let landing = crate::land::flow::prepare_far(
        &repo,
        &layout,
        &state,
        || b.import(&repo, &layout),
        can_ask,
    )
    .map_err(|e| {
        let mut e = super::land_report::from_not_ready(e, &far.leaf);
        e.message = format!("machine `{}`: {}", far.machine.name, e.message);
        e
    })?;
    Ok((repo, landing))
}
