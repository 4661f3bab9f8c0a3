//! `git sandbox watch`: the dashboard over every repository's boxes on this machine,
//! grouped by repository (see [`crate::cli::watch`]).

use crate::cli::error::{CliError, ErrorKind};
use crate::cli::ui::Ui;
use crate::cli::watch::{Scope, WatchArgs};
use crate::git::Repo;
use crate::state::{layout, Layout};

pub fn run(args: WatchArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let cfg = crate::cli::load_config()?;
    crate::cli::watch::watch(Scope::Machine, args, &cfg, ui)
}

/// Every repository on this machine that has a state dir and still exists, with its
/// layout (the repositories `git sandbox ls` reads; a repository that is gone has no
/// live box to watch, and `ls` shows what is left of it).
pub fn repos() -> Result<Vec<(Repo, Layout)>, CliError> {
    let dirs = layout::repo_state_dirs().map_err(|e| CliError::of(ErrorKind::State, e))?;
    let mut out = Vec::new();
    for repo_state in dirs {
        let main = match layout::records_in(&repo_state).first() {
            Some(r) => r.repo.clone(),
            None => match Layout::remembered_repo(&repo_state) {
                Some(m) => m,
                None => continue,
            },
        };
        let Ok(repo) = Repo::discover(&main) else {
            continue;
        };
        if !Layout::is_state_dir_of(&repo_state, &repo.common_dir) {
            continue;
        }
        let layout = Layout::in_state_dir(&repo.main_root, repo_state);
        out.push((repo, layout));
    }
    Ok(out)
}
