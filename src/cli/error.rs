//! One error type for the command line, and the one function that picks exit codes.
//!
//! Exit codes (SPEC §10, both binaries): 0 ok · 1 runtime failure · 2 usage or invalid
//! input/config · 3 not found · 4 fetch/auth · 5 conflict (lock held, exists, dirty,
//! needs confirmation, mode/isolation mismatch).

use crate::provision::ProvisionError;
use crate::state::LockError;

pub const OK: i32 = 0;
pub const RUNTIME: i32 = 1;
pub const USAGE: i32 = 2;
pub const NOT_FOUND: i32 = 3;
pub const FETCH: i32 = 4;
pub const CONFLICT: i32 = 5;

/// A failure as the user sees it: one line, an exit code, and runnable hints.
#[derive(Debug)]
pub struct CliError {
    pub code: i32,
    pub message: String,
    pub hints: Vec<String>,
    /// A short machine-readable kind for JSON errors, e.g. `branch-exists`.
    pub kind: &'static str,
}

impl CliError {
    pub fn new(code: i32, kind: &'static str, message: impl Into<String>) -> CliError {
        CliError {
            code,
            message: message.into(),
            hints: Vec::new(),
            kind,
        }
    }

    pub fn hint(mut self, h: impl Into<String>) -> CliError {
        self.hints.push(h.into());
        self
    }
}

/// The lock file git and libgit2 take to write `path`.
fn lock_of(path: &std::path::Path) -> std::path::PathBuf {
    let mut p = path.as_os_str().to_os_string();
    p.push(".lock");
    p.into()
}

fn q(s: &str) -> String {
    crate::cmd::quote(s)
}

impl From<ProvisionError> for CliError {
    fn from(e: ProvisionError) -> CliError {
        use crate::git::repo::RepoError;
        use ProvisionError as P;
        let msg = crate::sanitize::line(&e.to_string());
        match &e {
            P::Name(_) => CliError::new(USAGE, "invalid-name", msg).hint(
                "Names are lower-case letters, digits, '.', '_' and '-', with '/' between segments: e.g. `git treebox create fix/login-form`.",
            ),
            P::Config(c) => CliError::new(USAGE, "invalid-config", msg)
                .hint(format!("Fix it in {}.", c.file().display())),
            P::Repo(RepoError::NotARepo { .. }) => CliError::new(USAGE, "not-a-repo", msg)
                .hint("Run it inside a git repository (e.g. `cd ~/src/project`), or make one with `git init`."),
            P::Repo(RepoError::Bare { .. }) => CliError::new(USAGE, "bare-repo", msg)
                .hint("Run it in a clone with a working tree: `git clone <url>`."),
            P::Repo(RepoError::Open { .. }) => CliError::new(RUNTIME, "repo", msg),
            P::Unsupported { .. } => CliError::new(USAGE, "unsupported", msg)
                .hint("Use the host runner in worktree mode: `--isolation host --git worktree`."),
            P::ModeMismatch { leaf, built, .. } => CliError::new(CONFLICT, "mode-mismatch", msg)
                .hint(format!(
                    "Finish it in the mode it was built with (`--git {built}`), or remove it first (`git treebox teardown --force {leaf}`) and create it again."
                )),
            P::Resolve(crate::boxes::ResolveError::NotFound {
                reference,
                branch_exists,
            }) => {
                let e = CliError::new(NOT_FOUND, "box-not-found", msg);
                if *branch_exists {
                    e.hint(format!(
                        "`{}` is a branch without a box: run `git treebox create --checkout {}`.",
                        crate::sanitize::line(reference),
                        q(reference)
                    ))
                } else {
                    e.hint("`git treebox list` shows the boxes of this repository.")
                }
            }
            P::Resolve(crate::boxes::ResolveError::Ambiguous { .. }) => {
                CliError::new(USAGE, "ambiguous", msg)
                    .hint("Name the box exactly, as `git treebox list` shows it.")
            }
            P::MalformedRecord { .. } => CliError::new(USAGE, "malformed-record", msg),
            P::NoRecord { path, .. } => CliError::new(NOT_FOUND, "not-a-box", msg).hint(format!(
                "It was not made by treebox; remove it with `git worktree remove {}` if you no longer need it.",
                q(&path.to_string_lossy())
            )),
            P::BoxMissing { leaf, .. } => CliError::new(NOT_FOUND, "box-missing", msg).hint(format!(
                "To clean up what is left, run `git treebox teardown {}`.",
                q(leaf)
            )),
            P::BlockingRegistration { admin } => {
                let leaf = admin
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                CliError::new(CONFLICT, "blocking-registration", msg).hint(format!(
                    "Remove that box (`git treebox teardown --force {}`), or the registration itself (`rm -r {}`).",
                    q(&leaf),
                    q(&admin.to_string_lossy())
                ))
            }
            P::CheckoutBroken { leaf, repo, clone: false, .. } => {
                CliError::new(RUNTIME, "checkout-broken", msg).hint(format!(
                    "`git -C {} worktree repair` restores it; or remove the box: `git treebox teardown --force {}`.",
                    q(&repo.to_string_lossy()),
                    q(leaf)
                ))
            }
            P::CheckoutBroken { leaf, path, .. } => {
                CliError::new(RUNTIME, "checkout-broken", msg).hint(format!(
                    "Copy out what you need from {}, then remove the box: `git treebox teardown --force {}`.",
                    q(&path.to_string_lossy()),
                    q(leaf)
                ))
            }
            P::IsolationMismatch { recorded, .. } => {
                CliError::new(CONFLICT, "isolation-mismatch", msg).hint(format!(
                    "Boxes keep the runner they were made with: drop the flag or pass `--isolation {recorded}`."
                ))
            }
            P::BaseNotFound { empty: true, .. } => CliError::new(NOT_FOUND, "base-not-found", msg)
                .hint("Commit once (`git commit --allow-empty -m init`), or make a clone box, which can start empty: `--git clone` without `--base`."),
            P::BaseNotFound { .. } => CliError::new(NOT_FOUND, "base-not-found", msg)
                .hint("Name an existing base with `--base <branch>`; `git branch -a` lists them."),
            P::BranchNotFound { .. } => CliError::new(NOT_FOUND, "branch-not-found", msg)
                .hint("`git branch -a` lists the branches; to start a new one, run `git treebox create <name>`."),
            P::BranchExists { branch } => CliError::new(CONFLICT, "branch-exists", msg).hint(format!(
                "To work on the existing branch, run `git treebox create --checkout {}`.",
                q(branch)
            )),
            P::BranchCheckedOut { .. } => CliError::new(CONFLICT, "branch-checked-out", msg)
                .hint("`git worktree list` shows where; switch that checkout to another branch first."),
            P::BoxExists { path, .. } => CliError::new(CONFLICT, "box-exists", msg).hint(format!(
                "To work in it, run `cd {}`; or pick another name.",
                q(&path.to_string_lossy())
            )),
            P::PathTaken { path, .. } => CliError::new(CONFLICT, "path-taken", msg).hint(format!(
                "Move it away (`mv {} /tmp/`) or pick another name.",
                q(&path.to_string_lossy())
            )),
            P::Lock(LockError::Held { .. }) => CliError::new(CONFLICT, "locked", msg)
                .hint("Wait for the other treebox command on this box to finish, then run it again."),
            P::Lock(LockError::Io { .. }) => CliError::new(RUNTIME, "lock", msg),
            P::Fetch(crate::provision::fetch::FetchError::Failed(failed)) => {
                let e = CliError::new(FETCH, "fetch-failed", msg);
                match crate::provision::fetch::stale_lock(failed) {
                    Some(lock) => e.hint(format!(
                        "If no git command is running in this repository, remove it (`rm -f {}`) and run this again.",
                        q(&lock.to_string_lossy())
                    )),
                    None => e.hint(
                        "Check access with `git fetch origin`, or build on local refs with `--no-fetch`.",
                    ),
                }
            }
            P::Fetch(_) => CliError::new(RUNTIME, "fetch", msg),
            P::Record(crate::state::record::RecordError::Malformed { .. }) => {
                CliError::new(USAGE, "malformed-record", msg)
            }
            P::Container(crate::runner::oci::ContainerError::Unmountable { .. }) => {
                CliError::new(USAGE, "unmountable", msg)
                    .hint("Move the repository to a path without ',' or control characters.")
            }
            P::Container(crate::runner::oci::ContainerError::Template(_))
            | P::Container(crate::runner::oci::ContainerError::BadTemplate { .. }) => {
                CliError::new(USAGE, "template", msg)
                    .hint("`git treebox template list` shows the templates and their problems.")
            }
            P::Container(
                crate::runner::oci::ContainerError::EngineDown { .. }
                | crate::runner::oci::ContainerError::NoEngine,
            ) => CliError::new(RUNTIME, "engine", msg)
                .hint("`git treebox doctor --isolation docker` (or podman) says what is wrong."),
            P::Container(crate::runner::oci::ContainerError::GuardCannotRun { .. }) => {
                CliError::new(RUNTIME, "guard-cannot-run", msg).hint(
                    "Base the template on a glibc 2.34+ image (Debian 12, Ubuntu 22.04 or newer; not Alpine): set `baseImage` in its container.json (`git treebox template path <name>`), then remove this box and create it again.",
                )
            }
            P::Container(_) => CliError::new(RUNTIME, "container", msg),
            P::DiskFull { path } => CliError::new(RUNTIME, "disk-full", msg).hint(format!(
                "Free some space (`df -h {}` shows how much is left), then run it again.",
                q(&path.to_string_lossy())
            )),
            P::Guard(crate::provision::guard::GuardInstallError::WriteConfig { path, .. })
                if lock_of(path).exists() =>
            {
                CliError::new(RUNTIME, "runtime", msg).hint(format!(
                    "{} is in the way (left by a git or treebox that was killed?): if no git command is running, `rm -f {}`, then run this again.",
                    crate::sanitize::line(&lock_of(path).to_string_lossy()),
                    q(&lock_of(path).to_string_lossy())
                ))
            }
            P::Checkout(_) | P::Guard(_) | P::Clone(_) | P::Record(_) | P::State(_) | P::Io { .. } => {
                CliError::new(RUNTIME, "runtime", msg)
            }
        }
    }
}
