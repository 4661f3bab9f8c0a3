//! Checks of the machine itself: the git CLI (`git`), the repository doctor was run in
//! (`repo`), the user running it (`uid`), and tmux, which hosts the agents' sessions
//! (`sessions`).

use std::path::Path;

use super::probe::first_line;
use super::{Check, Status};
use crate::git::repo::{Repo, RepoError};
use crate::git::GitCli;

/// The oldest git treebox supports.
pub const MIN_GIT: (u32, u32, u32) = (2, 30, 0);

/// `(major, minor, patch)` from `git --version` output, e.g. `git version 2.39.2
/// (Apple Git-143)` or `git version 2.45.1.windows.1`. A missing patch is 0.
pub fn parse_git_version(out: &str) -> Option<(u32, u32, u32)> {
    let word = out
        .trim()
        .strip_prefix("git version ")?
        .split_whitespace()
        .next()?;
    let mut parts = word.split('.').map(|p| {
        let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().ok()
    });
    let major = parts.next()??;
    let minor = parts.next()??;
    let patch = parts.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

pub(super) fn check_git(cwd: &Path) -> Check {
    let c = GitCli::plain().cmd(cwd).arg("--version");
    let out = match c.output() {
        Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
        Err(e) if e.is_not_found() => {
            return Check::new("git", Status::Fail, "git is not installed or not on PATH")
                .hint("Install git 2.30 or newer (e.g. `sudo apt-get install git`).")
        }
        Err(e) => return Check::new("git", Status::Fail, first_line(&crate::sanitize::chain(&e))),
    };
    let line = out.lines().next().unwrap_or("").trim().to_string();
    match parse_git_version(&out) {
        Some(v) if v >= MIN_GIT && trusts_every_owner(cwd) => Check::new(
            "git",
            Status::Advisory,
            format!(
                "{line}; your git config sets `safe.directory=*`: your own git then runs what a container box's agent configures in its checkout (core.fsmonitor, a pager, a diff driver), as you, whenever you, a shell prompt or an editor run git there"
            ),
        )
        .hint("Remove it: `git config --global --fixed-value --unset-all safe.directory '*'` (and `--system` where that is where it is set); name the directories you trust instead."),
        Some(v) if v >= MIN_GIT => Check::new("git", Status::Ok, line),
        Some(_) => Check::new(
            "git",
            Status::Fail,
            format!(
                "{line}: treebox needs git {}.{} or newer",
                MIN_GIT.0, MIN_GIT.1
            ),
        )
        .hint("Upgrade git (e.g. `sudo apt-get install git`), then run `git --version`."),
        None => Check::new(
            "git",
            Status::Fail,
            format!("could not read the version from `git --version`: {line:?}"),
        ),
    }
}

/// Does the user's git config trust repositories of every owner (`safe.directory=*`)?
/// Git's ownership check is what keeps the user's own git from running a container
/// box's config in its checkout (SPEC §8.7).
fn trusts_every_owner(cwd: &Path) -> bool {
    GitCli::plain()
        .cmd(cwd)
        .args(["config", "--get-all", "safe.directory"])
        .stdout_string()
        .is_ok_and(|s| s.lines().any(|l| l.trim() == "*"))
}

pub(super) fn check_repo(cwd: &Path, repo: &Result<Repo, RepoError>) -> Check {
    match repo {
        Ok(r) => Check::new(
            "repo",
            Status::Ok,
            format!("main worktree {}", r.main_root.display()),
        ),
        Err(RepoError::NotARepo { .. }) => Check::new(
            "repo",
            Status::Fail,
            format!("not inside a git repository ({})", cwd.display()),
        )
        .hint("cd into a repository (e.g. `cd ~/src/project`), or make one with `git init`."),
        Err(e @ RepoError::Ownerless { .. }) => Check::new("repo", Status::Fail, e.to_string())
            .hint("cd into the box's repository: `git sandbox ls` lists every repository's boxes."),
        Err(e @ RepoError::Bare { .. }) => {
            Check::new("repo", Status::Fail, e.to_string()).hint("git clone <url>")
        }
        Err(e @ RepoError::Open { .. }) => {
            Check::new("repo", Status::Fail, crate::sanitize::chain(&e)).hint(format!(
                "git -C {} status",
                crate::cmd::quote(&cwd.to_string_lossy())
            ))
        }
    }
}

pub(super) fn check_uid() -> Check {
    // SAFETY: getuid and getgid cannot fail and touch no memory.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    if uid == 0 {
        Check::new(
            "uid",
            Status::Advisory,
            format!(
                "uid 0 (root), gid {gid}: fine where a container maps root to a user, but boxes and their files will be owned by root"
            ),
        )
    } else {
        Check::new("uid", Status::Ok, format!("uid {uid}, gid {gid}"))
    }
}

/// tmux hosts the sessions that outlive the terminal (SPEC §7a); without it the agent
/// runs as a foreground child of the command, which is an advisory, not a failure.
pub(super) fn check_sessions() -> Check {
    match crate::session::version() {
        Some(v) if !crate::session::has_passthrough_option(&v) => Check::new(
            "sessions",
            Status::Advisory,
            format!("{v}: agents run in sessions that outlive the terminal, but tmux before 3.3 cannot stop a box's program passing escape sequences through to your terminal"),
        )
        .hint("Install tmux 3.3 or newer, then run `tmux -V` to see the version in use."),
        Some(v) => Check::new(
            "sessions",
            Status::Ok,
            format!("{v}: agents run in sessions that outlive the terminal"),
        ),
        None => Check::new(
            "sessions",
            Status::Advisory,
            "tmux not found: agents run in the foreground of the command that starts them, so closing the terminal ends them, `-d` is refused, and there is no session to re-attach to",
        )
        .hint("Install tmux (e.g. `sudo apt-get install tmux`)."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_versions() {
        assert_eq!(parse_git_version("git version 2.47.3\n"), Some((2, 47, 3)));
        assert_eq!(
            parse_git_version("git version 2.39.2 (Apple Git-143)"),
            Some((2, 39, 2))
        );
        assert_eq!(
            parse_git_version("git version 2.45.1.windows.1"),
            Some((2, 45, 1))
        );
        assert_eq!(parse_git_version("git version 2.30"), Some((2, 30, 0)));
        assert_eq!(
            parse_git_version("git version 2.43.0-rc1"),
            Some((2, 43, 0))
        );
        assert_eq!(parse_git_version("hub version 2.14.2"), None);
        assert_eq!(parse_git_version("git version"), None);
        assert_eq!(parse_git_version(""), None);
        assert!(parse_git_version("git version 2.29.9").unwrap() < MIN_GIT);
        assert!(parse_git_version("git version 2.30.0").unwrap() >= MIN_GIT);
        assert!(parse_git_version("git version 3.0.0").unwrap() >= MIN_GIT);
    }
}
