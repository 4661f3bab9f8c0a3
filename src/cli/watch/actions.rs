//! What `n`, `x` and `d` do, each on a worker thread of [`super::live`]: the commands'
//! own code, run in-process, so the rules are theirs.
//!
//! - `n`: `git treebox create -d NAME`'s engine call
//!   ([`crate::provision::launch::create_detached`]); the box appears on the next refresh.
//! - `x`: teardown's assessment and its refusals ([`crate::cli::teardown::refusal`],
//!   the very function `teardown` uses), then teardown's question on the dashboard,
//!   then [`crate::teardown::remove_as_decided`], which assesses again under the lock.
//! - `l`: after the dashboard's own question, the engine calls `git treebox land`
//!   makes ([`crate::land::flow`]), its refusals worded as `land` words them.
//! - `d`: [`crate::land::diff::diff`], as `git treebox diff` reads it.

use super::live::{open, Msg};
use crate::cli::error::{CliError, ErrorKind};
use crate::watch::Row;

/// An error as one line: what failed, and the first hint.
pub fn line(e: &CliError) -> String {
    let mut s = e.message.clone();
    if let Some(h) = e.hints.first() {
        s.push_str(". ");
        s.push_str(h);
    }
    s
}

/// `n`: create box `name` detached, in `repo` (`git sandbox watch`: the selected box's
/// repository), else in the current directory's: `create -d NAME`'s engine call
/// ([`crate::provision::launch::create_detached`]), its outcome in one line.
pub fn create(name: &str, repo: Option<String>) -> Msg {
    match create_detached(name, repo) {
        Ok((said, failed)) => Msg::Done(said, failed),
        Err(e) => Msg::Done(format!("create {name}: {}", line(&e)), true),
    }
}

fn create_detached(name: &str, repo: Option<String>) -> Result<(String, bool), CliError> {
    use crate::session::{detached::Started, Readiness};
    let cfg = crate::cli::load_config()?;
    let cwd = match repo {
        Some(r) => std::path::PathBuf::from(r),
        None => crate::cli::cwd()?,
    };
    let req = crate::provision::CreateRequest {
        cwd,
        name: Some(name.to_string()),
        launch: true,
        ..Default::default()
    };
    let (_, _, started) =
        crate::provision::launch::create_detached(&req, &cfg, &mut crate::provision::Silent)
            .map_err(crate::cli::create::from_launch)?;
    let q = crate::cmd::quote(name);
    Ok(match started {
        Started::AlreadyRunning => (format!("box `{name}`'s agent was already running"), false),
        Started::Now(Readiness::Ready) => (
            format!("created box `{name}`; its agent runs detached"),
            false,
        ),
        Started::Now(Readiness::Exited { code, .. }) => (
            format!("create {name}: the agent exited with code {code} before it was ready; start it with `git treebox enter {q}` to see it"),
            true,
        ),
        Started::Now(Readiness::Asks { what, .. }) => (
            format!("created box `{name}`; its agent waits at a screen for a person (\"{what}\"): answer it with `git treebox enter {q}`"),
            true,
        ),
        Started::Now(Readiness::NotYet { .. }) => (
            format!("created box `{name}`; its agent is not at its prompt yet: look with `git treebox enter {q}`"),
            true,
        ),
    })
}

/// `l`, answered yes: the box's work landed with the config's strategy, through the
/// engine calls `git treebox land` makes ([`crate::land::flow`]: every refusal, then
/// onto the base; no push, no pull request, no removal) and its refusals as `land`
/// words them, in the box's repository.
pub fn land(repo: &str, name: &str, machine: bool) -> Msg {
    if machine {
        if let Err(e) = std::env::set_current_dir(repo) {
            return Msg::Done(format!("cannot land in {repo}: {e}"), true);
        }
    }
    match land_here(name) {
        Ok(said) => Msg::Done(format!("landed `{name}`: {said}"), false),
        Err(e) => Msg::Done(
            format!("land refused (exit {}): {}", e.code(), line(&e)),
            true,
        ),
    }
}

/// [`land`] in the current directory's repository: what happened, in a line.
fn land_here(name: &str) -> Result<String, CliError> {
    use crate::cli::land_report::{from_land, from_not_ready};
    let strategy = crate::cli::load_config()?.land.unwrap_or_default();
    let here = std::env::current_dir()
        .map_err(|e| CliError::new(ErrorKind::Io, "no current directory").caused_by(e))?;
    let (repo, layout) = open(&here.to_string_lossy())?;
    let entry = crate::boxes::exact(&repo, &layout, name).ok_or_else(|| {
        CliError::new(ErrorKind::BoxNotFound, format!("box `{name}` is gone"))
            .hint("`git treebox list` shows the boxes there are.")
    })?;
    let leaf = entry.leaf.to_string();
    let landing = crate::land::flow::prepare(&repo, &layout, &entry, false)
        .map_err(|e| from_not_ready(e, &leaf))?;
    let landed = landing
        .onto(&repo, strategy)
        .map_err(|e| from_land(e, &leaf))?;
    Ok(match &landed.composed {
        Some(c) => format!(
            "{} commit(s) onto `{}` ({}), now {}",
            c.commits,
            landing.base,
            strategy.as_str(),
            &c.new.to_string()[..12]
        ),
        None => format!("its work was already in `{}`", landing.base),
    })
}

/// The box a row shows, found again in its repository.
fn entry_of(
    row: &Row,
) -> Result<
    (
        crate::git::Repo,
        crate::state::Layout,
        crate::boxes::BoxEntry,
    ),
    CliError,
> {
    let (repo, layout) = open(&row.repo)?;
    let entry = crate::boxes::exact(&repo, &layout, &row.name).ok_or_else(|| {
        CliError::new(
            ErrorKind::BoxNotFound,
            format!("box `{}` is gone", row.name),
        )
        .hint("`git treebox list` shows the boxes there are.")
    })?;
    Ok((repo, layout, entry))
}

/// `x`: assess the box as `teardown` does; its refusal, or its question.
pub fn assess(row: &Row) -> Msg {
    let (repo, layout, entry) = match entry_of(row) {
        Ok(x) => x,
        Err(e) => return Msg::Done(line(&e), true),
    };
    let t = crate::teardown::target_for(entry, &repo, &layout, false);
    // On a terminal, as the dashboard is: teardown asks rather than refusing work only
    // the box holds.
    if let Some(e) = crate::cli::teardown::refusal(&t, true, false) {
        return Msg::Done(format!("refused (exit {}): {}", e.code(), line(&e)), true);
    }
    let question = format!(
        "Remove box `{}` ({})? [y/N]",
        t.entry.leaf,
        crate::teardown::describe(&t)
    );
    Msg::Ask(super::app::key_of(row), question, Box::new(t))
}

/// `x`, answered yes: remove as decided (assessed again under the box's lock).
pub fn remove(repo: &str, t: &crate::teardown::Target) -> Msg {
    let (repo, layout) = match open(repo) {
        Ok(x) => x,
        Err(e) => return Msg::Done(line(&e), true),
    };
    match crate::teardown::remove_as_decided(&repo, &layout, t, false, false) {
        Ok(r) => Msg::Done(format!("removed box `{}`", r.leaf), false),
        Err(e) => Msg::Done(line(&crate::cli::teardown::from_teardown(e)), true),
    }
}

/// `d`: the box's diff against its base, as lines (stat, then the patch).
pub fn diff(row: &Row) -> Msg {
    let (repo, _, entry) = match entry_of(row) {
        Ok(x) => x,
        Err(e) => return Msg::Done(line(&e), true),
    };
    match crate::land::diff::diff(&entry, &repo, true) {
        Ok(d) => {
            let mut lines: Vec<String> = d.stat.lines().map(str::to_string).collect();
            lines.push(String::new());
            let patch = d
                .patch
                .as_deref()
                .map(String::from_utf8_lossy)
                .unwrap_or_default();
            // Tabs as spaces: everything else a box wrote is escaped when drawn.
            lines.extend(patch.lines().map(|l| l.replace('\t', "    ")));
            let title = format!("{} · diff against {}", row.name, d.against);
            Msg::Diff(title, lines)
        }
        Err(e) => Msg::Done(crate::sanitize::chain(&e), true),
    }
}
