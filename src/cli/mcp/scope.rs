//! Which repositories a server serves, and in which one a call acts.
//!
//! `git treebox mcp` serves the repository of the directory it starts in
//! ([`Scope::One`]); with `--all`, every repository `git sandbox ls` knows
//! ([`Scope::All`]). Every tool takes an optional `repo` (a path in the repository,
//! its main checkout's as `box_list` shows it): with one repository it may only name
//! that one; with `--all` it picks the repository, and without it a box's name is
//! looked up in each (found in exactly one, or refused as ambiguous). `box_create` and
//! `box_wait` without names need `repo` under `--all`; `box_list` without it answers
//! `git sandbox ls --json`'s document there, every box of every repository.

use std::path::{Path, PathBuf};

use super::super::error::{CliError, ErrorKind};

/// The repositories a server serves.
#[derive(Debug, Clone)]
pub(super) enum Scope {
    /// The repository whose main checkout this is.
    One(PathBuf),
    /// Every repository `git sandbox ls` knows, looked up at each call.
    All,
}

impl Scope {
    pub(super) fn is_all(&self) -> bool {
        matches!(self, Scope::All)
    }

    /// The main checkout of the repository a call acts in: the one `repo` names, else
    /// the one holding box `name`, else (one repository served) that one.
    pub(super) fn dir(&self, repo: Option<&str>, name: Option<&str>) -> Result<PathBuf, CliError> {
        match (self, repo) {
            (Scope::One(root), None) => Ok(root.clone()),
            (Scope::One(root), Some(asked)) => {
                if main_root(asked).as_deref() == Some(root.as_path()) {
                    return Ok(root.clone());
                }
                Err(CliError::new(
                    ErrorKind::Usage,
                    format!(
                        "this server serves only the repository at {}, not `{}`",
                        crate::sanitize::line(&root.to_string_lossy()),
                        crate::sanitize::line(asked)
                    ),
                )
                .hint("Leave `repo` out; the user serves every repository with `git treebox mcp --all`."))
            }
            (Scope::All, Some(asked)) => {
                let known =
                    crate::boxes::known_repos().map_err(|e| CliError::of(ErrorKind::State, e))?;
                match main_root(asked) {
                    Some(root) if known.contains(&root) => Ok(root),
                    _ => Err(CliError::new(
                        ErrorKind::Usage,
                        format!(
                            "`{}` is none of the repositories with boxes on this machine",
                            crate::sanitize::line(asked)
                        ),
                    )
                    .hint("`box_list` without `repo` shows every box with its repository.")),
                }
            }
            (Scope::All, None) => {
                let Some(name) = name else {
                    return Err(CliError::new(
                        ErrorKind::Usage,
                        "serving every repository, this tool needs `repo`",
                    )
                    .hint("Name the repository by the `repo` path `box_list` shows."));
                };
                holding(name)
            }
        }
    }
}

/// The main checkout of the repository at `path`, if it is one.
fn main_root(path: &str) -> Option<PathBuf> {
    let path = Path::new(path);
    if !path.is_absolute() {
        return None;
    }
    crate::git::Repo::discover(path).ok().map(|r| r.main_root)
}

/// The one repository with a box `name` names.
fn holding(name: &str) -> Result<PathBuf, CliError> {
    let mut found = Vec::new();
    for root in crate::boxes::known_repos().map_err(|e| CliError::of(ErrorKind::State, e))? {
        if super::super::sandbox::find_at(&root, name).is_ok() {
            found.push(root);
        }
    }
    let q = crate::sanitize::line(name);
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(CliError::new(
            ErrorKind::BoxNotFound,
            format!("no repository on this machine has a box `{q}`"),
        )
        .hint("`box_list` shows every box with its repository.")),
        _ => {
            let repos: Vec<String> = found
                .iter()
                .map(|r| crate::sanitize::line(&r.to_string_lossy()))
                .collect();
            Err(CliError::new(
                ErrorKind::Usage,
                format!(
                    "box `{q}` is in more than one repository: {}",
                    repos.join(", ")
                ),
            )
            .hint("Name the repository with `repo`."))
        }
    }
}
