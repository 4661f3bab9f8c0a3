//! The `origin` check: does `origin` answer `git ls-remote`, within
//! [`PROBE_TIMEOUT`](super::PROBE_TIMEOUT) and without prompting (the git command comes
//! from [`GitCli::silent_remote_cmd`])?

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::probe::{first_line, output_within};
use super::{Check, Status};
use crate::git::GitCli;
use crate::sanitize;

pub(super) fn check_origin(
    has_origin: bool,
    common_dir: &Path,
    main_root: &Path,
    limit: Duration,
) -> Check {
    if !has_origin {
        return Check::new(
            "origin",
            Status::Advisory,
            "no origin remote: local refs will be used",
        );
    }
    let git = GitCli::for_repo(common_dir, None);
    let c = git
        .silent_remote_cmd(main_root)
        .arg("ls-remote")
        .args(git.upload_pack_arg("origin"))
        .args(["--heads", "origin"]);
    let failed = |why: String| {
        Check::new("origin", Status::Advisory, format!("origin: {why}")).hint("git fetch origin")
    };
    match output_within(&c, limit) {
        Ok(Some(o)) if o.status.success() => {
            let heads = String::from_utf8_lossy(&o.stdout).lines().count();
            let s = if heads == 1 { "" } else { "es" };
            Check::new(
                "origin",
                Status::Ok,
                format!("origin answers `git ls-remote` ({heads} branch{s})"),
            )
        }
        Ok(Some(o)) => {
            let why = super::probe::first_stderr_line(&o.stderr)
                .unwrap_or_else(|| format!("`git ls-remote` failed ({})", o.status));
            failed(why)
        }
        Ok(None) => failed(format!("no answer after {} s", limit.as_secs())),
        Err(e) => failed(first_line(&sanitize::chain(&e))),
    }
}

/// An origin that answers from the main checkout but whose URL is a relative path
/// (`relative`, with the absolute path it names: see `forge::relative_origin`): an
/// advisory, since git reads that URL from where it runs and a push from a box fails.
pub(super) fn relative_url(check: Check, relative: Option<(String, PathBuf)>) -> Check {
    match relative {
        Some((url, absolute)) if check.status == Status::Ok => Check::new(
            "origin",
            Status::Advisory,
            format!(
                "origin answers here, but its URL ({}) is a relative path: from a box it names another place, and a push there fails",
                sanitize::line(&url)
            ),
        )
        .hint(crate::runner::oci::forge::set_url_absolute(&absolute)),
        _ => check,
    }
}
