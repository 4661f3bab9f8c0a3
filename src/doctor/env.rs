//! The `env` check: is there a canonical `.env` to copy into each box, and will
//! provisioning copy it? Asks the same questions provisioning does
//! (`provision::copy::env_source`, [`Repo::tracks_env`]), so the two cannot disagree.

use super::{Check, Status};
use crate::git::repo::Repo;

pub(super) fn check_env(repo: &Repo, env_file: Option<&str>) -> Check {
    let Some(source) = crate::provision::copy::env_source(&repo.main_root, env_file) else {
        let (where_, how) = match env_file {
            Some(f) => (
                format!("the configured envFile {f}"),
                "boxes get none until it exists",
            ),
            None => (
                format!("{}", repo.main_root.join(".env").display()),
                "boxes get none",
            ),
        };
        return Check::new(
            "env",
            Status::Advisory,
            format!("no .env at {where_}; {how}"),
        );
    };
    let is_link = std::fs::symlink_metadata(&source).is_ok_and(|m| m.file_type().is_symlink());
    if is_link && repo.tracks_env() {
        return Check::new(
            "env",
            Status::Advisory,
            format!(
                "{} is a symlink the repository tracks; it will not be followed, and boxes get no .env",
                source.display()
            ),
        );
    }
    match std::fs::metadata(&source) {
        Ok(m) if m.is_file() => Check::new(
            "env",
            Status::Ok,
            format!("{} (copied into each box)", source.display()),
        ),
        _ => Check::new(
            "env",
            Status::Advisory,
            format!(
                "{} is not a regular file; boxes get no .env",
                source.display()
            ),
        ),
    }
}
