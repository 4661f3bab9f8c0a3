//! One error type for the command line, and the one table that picks exit codes.
//!
//! Exit codes (SPEC §10, both binaries): 0 ok · 1 runtime failure · 2 usage or invalid
//! input/config · 3 not found · 4 fetch/auth · 5 conflict (lock held, exists, dirty,
//! needs confirmation, mode/isolation mismatch).
//!
//! Every failure the CLI reports is a [`CliError`]: an [`ErrorKind`] (which alone decides
//! the exit code and the machine-readable `kind` of the JSON error, in the one table
//! below), a one-line message, runnable hints, and the cause chain (`source`). Call sites
//! name the kind, never the code. Modelled on jj's `cli/src/command_error.rs`.
//!
//! The engine's errors say only what failed and keep what caused it as their `source`;
//! every conversion here keeps that error as the cause ([`CliError::caused_by`],
//! [`CliError::of`]). A human sees `error: <what failed>`, one `caused by:` line per
//! cause, then `hint:` lines; the JSON `message` is the whole chain on one line
//! ([`CliError::chain`]).
//!
//! Who calls it: every `cli/` subcommand; [`super::Ui::error`] prints it.

use crate::provision::ProvisionError;
use crate::state::LockError;

pub const OK: i32 = 0;
pub const RUNTIME: i32 = 1;
pub const USAGE: i32 = 2;
pub const NOT_FOUND: i32 = 3;
pub const FETCH: i32 = 4;
pub const CONFLICT: i32 = 5;

/// The kinds of failure: `Variant = "json-kind" => EXIT_CODE`, one row each. This table
/// is the only place that maps a failure to an exit code.
macro_rules! kinds {
    ($($(#[$doc:meta])* $variant:ident = $name:literal => $code:ident,)*) => {
        /// What went wrong, as scripts see it (`error.kind` in JSON, and the exit code).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ErrorKind {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorKind {
            /// The machine-readable kind of the JSON error object, e.g. `branch-exists`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorKind::$variant => $name,)*
                }
            }

            /// The process exit code of this kind of failure.
            pub fn exit_code(self) -> i32 {
                match self {
                    $(ErrorKind::$variant => $code,)*
                }
            }

            /// The kind spelled `name` with exit code `code` (another machine's
            /// treebox refusing: its kind kept, never one it could not have said).
            pub fn known(name: &str, code: i32) -> Option<ErrorKind> {
                [$(ErrorKind::$variant,)*]
                    .into_iter()
                    .find(|k| k.as_str() == name && k.exit_code() == code)
            }
        }
    };
}

kinds! {
    // 2: usage, invalid input or config.
    /// A command line clap did not accept, or a bad argument value.
    Usage = "usage" => USAGE,
    InvalidName = "invalid-name" => USAGE,
    InvalidConfig = "invalid-config" => USAGE,
    NotARepo = "not-a-repo" => USAGE,
    BareRepo = "bare-repo" => USAGE,
    Unsupported = "unsupported" => USAGE,
    Ambiguous = "ambiguous" => USAGE,
    MalformedRecord = "malformed-record" => USAGE,
    /// A path given to teardown that is no box (a usage error, unlike [`Self::NotABox`]).
    NotABoxPath = "not-a-box" => USAGE,
    Unmountable = "unmountable" => USAGE,
    Template = "template" => USAGE,
    InvalidTemplate = "invalid-template" => USAGE,
    NoBranch = "no-branch" => USAGE,
    NoConfigDir = "no-config-dir" => USAGE,
    NotAClone = "not-a-clone" => USAGE,
    /// `mcp` started inside a box: a lead agent there must not drive boxes.
    InsideABox = "inside-a-box" => USAGE,
    /// What the user's config does not allow a lead agent (the MCP server's `box_land`
    /// without `"mcp": {"land": true}`).
    NotAllowed = "not-allowed" => USAGE,
    /// `template import-devcontainer`: the file asks for something refused.
    DevcontainerRefused = "devcontainer-refused" => USAGE,
    // 3: not found.
    BoxNotFound = "box-not-found" => NOT_FOUND,
    /// A checkout treebox did not make (it has no record).
    NotABox = "not-a-box" => NOT_FOUND,
    BoxMissing = "box-missing" => NOT_FOUND,
    BaseNotFound = "base-not-found" => NOT_FOUND,
    BranchNotFound = "branch-not-found" => NOT_FOUND,
    NothingToBundle = "nothing-to-bundle" => NOT_FOUND,
    TemplateNotFound = "template-not-found" => NOT_FOUND,
    TemplateBundled = "template-bundled" => NOT_FOUND,
    /// A box with no live agent session (the MCP server's `box_screen`).
    NoSession = "no-session" => NOT_FOUND,
    /// `open`: the box has no block of ports (made before them, or with none).
    NoPorts = "no-ports" => NOT_FOUND,
    /// `open`: no port of the box's block listens now.
    NothingListens = "nothing-listens" => NOT_FOUND,
    /// `template import-devcontainer`: HEAD commits no dev container file.
    NoDevcontainer = "no-devcontainer" => NOT_FOUND,
    /// `--on` names no machine of the config.
    MachineUnknown = "machine-unknown" => USAGE,
    // 4: fetch or authentication.
    FetchFailed = "fetch-failed" => FETCH,
    /// Another machine that cannot be reached, or refuses the connection, over SSH.
    MachineUnreachable = "machine-unreachable" => FETCH,
    /// Another machine whose treebox answered what this one cannot take (another
    /// protocol, a document that is no document).
    MachineAnswer = "machine-answer" => RUNTIME,
    /// `land --pr`: no `gh`, not logged in, or an origin it cannot open a pull request on.
    ForgeCli = "forge-cli" => FETCH,
    // 5: conflict.
    ModeMismatch = "mode-mismatch" => CONFLICT,
    BlockingRegistration = "blocking-registration" => CONFLICT,
    /// A box whose git dir reaches object stores treebox did not give it (SPEC §8.4).
    ForeignObjects = "foreign-objects" => CONFLICT,
    IsolationMismatch = "isolation-mismatch" => CONFLICT,
    BranchExists = "branch-exists" => CONFLICT,
    BranchCheckedOut = "branch-checked-out" => CONFLICT,
    BoxExists = "box-exists" => CONFLICT,
    PathTaken = "path-taken" => CONFLICT,
    /// Another box's name differs only by case (SPEC §5).
    CaseConflict = "case-conflict" => CONFLICT,
    /// `git sandbox fetch` would move `refs/hort/<name>/incoming` off work nothing keeps.
    IncomingUnkept = "incoming-unkept" => CONFLICT,
    /// `git sandbox fetch`/`bundle`: a blob (or the box's history) over the cap on what
    /// is brought back (SPEC §8.10).
    TooLarge = "too-large" => CONFLICT,
    /// `land`: the local base and origin's have diverged.
    Diverged = "diverged" => CONFLICT,
    /// `land`: the box's work conflicts with the base (nothing was changed).
    LandConflict = "land-conflict" => CONFLICT,
    /// `land`: the work writes a path under `.treebox/` or with terminal controls, a
    /// commit whose text carries controls would enter the history as it is, or it is
    /// too large to check (SPEC §8.11; nothing was changed).
    Unreviewable = "unreviewable" => CONFLICT,
    /// `create`: the base tracks something under `.treebox/`, the boxes' directory.
    BaseTracksBoxes = "base-tracks-boxes" => CONFLICT,
    /// A push the guard (or `land --pr`'s own rule) refuses.
    PushRefused = "push-refused" => CONFLICT,
    Locked = "locked" => CONFLICT,
    Changed = "changed" => CONFLICT,
    /// A removal that must be confirmed, with no terminal to ask on.
    NeedsConfirmation = "needs-confirmation" => CONFLICT,
    TemplateExists = "template-exists" => CONFLICT,
    SessionLive = "session-live" => CONFLICT,
    Dirty = "dirty" => CONFLICT,
    Unreturned = "unreturned" => CONFLICT,
    Unpushed = "unpushed" => CONFLICT,
    /// `create`: no block of free ports is left from the config's `ports.from`.
    PortsExhausted = "ports-exhausted" => CONFLICT,
    // 1: runtime failure.
    Runtime = "runtime" => RUNTIME,
    Repo = "repo" => RUNTIME,
    CheckoutBroken = "checkout-broken" => RUNTIME,
    Lock = "lock" => RUNTIME,
    Fetch = "fetch" => RUNTIME,
    Container = "container" => RUNTIME,
    Engine = "engine" => RUNTIME,
    GuardCannotRun = "guard-cannot-run" => RUNTIME,
    DiskFull = "disk-full" => RUNTIME,
    Cwd = "cwd" => RUNTIME,
    State = "state" => RUNTIME,
    Teardown = "teardown" => RUNTIME,
    Bundle = "bundle" => RUNTIME,
    /// The agent's (or a `run` command's) program is not installed where it must run.
    HarnessMissing = "harness-missing" => RUNTIME,
    /// A detached agent ended before it was ready (the command exits with its code).
    AgentExited = "agent-exited" => RUNTIME,
    Io = "io" => RUNTIME,
    Launch = "launch" => RUNTIME,
    Park = "park" => RUNTIME,
    Prune = "prune" => RUNTIME,
    Runner = "runner" => RUNTIME,
}

type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A failure as the user sees it: one line, its kind (hence exit code), runnable hints,
/// and the chain of causes.
#[derive(Debug)]
pub struct CliError {
    pub kind: ErrorKind,
    pub message: String,
    pub hints: Vec<String>,
    /// What caused it; its chain is shown as `caused by:` lines.
    pub source: Option<Cause>,
}

impl CliError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> CliError {
        CliError {
            kind,
            message: message.into(),
            hints: Vec::new(),
            source: None,
        }
    }

    pub fn hint(mut self, h: impl Into<String>) -> CliError {
        self.hints.push(h.into());
        self
    }

    /// A failure of `kind` that says what `e` says (its own text, one line) and keeps
    /// `e` as the cause, so its chain is shown as `caused by:` lines.
    pub fn of(kind: ErrorKind, e: impl Into<Cause>) -> CliError {
        let e: Cause = e.into();
        CliError::new(kind, crate::sanitize::line(&e.to_string())).caused_by(e)
    }

    /// Keep `cause` (and its own chain) as the reason for this failure.
    pub fn caused_by(mut self, cause: impl Into<Cause>) -> CliError {
        self.source = Some(cause.into());
        self
    }

    /// The process exit code, from the kind.
    pub fn code(&self) -> i32 {
        self.kind.exit_code()
    }

    /// The causes to show as `caused by:` lines, outermost first. A cause whose text the
    /// message (or an outer cause) already spells out is not repeated.
    pub fn causes(&self) -> Vec<String> {
        let Some(source) = &self.source else {
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        for text in crate::sanitize::causes(source.as_ref()) {
            let text = crate::sanitize::line(&text);
            let shown = self.message.contains(&text) || out.iter().any(|o| o.contains(&text));
            if !shown {
                out.push(text);
            }
        }
        out
    }

    /// The message and every cause as one line, `what failed: cause: cause`: the
    /// `message` of the JSON error, so machine readers lose none of the chain.
    pub fn chain(&self) -> String {
        let mut parts = vec![self.message.clone()];
        parts.extend(self.causes());
        parts.join(": ")
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
        let out = classify(&e);
        out.caused_by(e)
    }
}

/// The kind, message and hints of an engine failure.
fn classify(e: &ProvisionError) -> CliError {
    use crate::git::repo::RepoError;
    use ProvisionError as P;
    let msg = crate::sanitize::line(&e.to_string());
    match e {
            P::Name(n) if n.what == crate::names::Named::Branch => CliError::new(ErrorKind::InvalidName, msg)
                .hint("Name a branch that exists: `git branch -a` lists them."),
            P::Name(_) => CliError::new(ErrorKind::InvalidName, msg).hint(
                "Names are letters, digits, '.', '_' and '-', with '/' between segments: e.g. `git treebox create fix/JIRA-12-login`.",
            ),
            P::Config(c) => CliError::new(ErrorKind::InvalidConfig, msg)
                .hint(format!("Fix it in {}.", c.file().display())),
            P::Repo(RepoError::NotARepo { .. }) => CliError::new(ErrorKind::NotARepo, msg)
                .hint("Run it inside a git repository (e.g. `cd ~/src/project`), or make one with `git init`."),
            P::Repo(RepoError::Ownerless { .. }) => CliError::new(ErrorKind::NotARepo, msg)
                .hint("Run it in the box's repository (`git sandbox ls` lists every repository's boxes), or remove the stray checkout by hand."),
            P::Repo(RepoError::Bare { .. }) => CliError::new(ErrorKind::BareRepo, msg)
                .hint("Run it in a clone with a working tree: `git clone <url>`."),
            P::Repo(RepoError::Open { .. }) => CliError::new(ErrorKind::Repo, msg),
            P::ForgeNeedsFirewall => CliError::new(ErrorKind::Usage, msg).hint(
                "Add --firewall (with --isolation docker or podman); without a firewall every host is reachable already.",
            ),
            P::NoForge { .. } => CliError::new(ErrorKind::Usage, msg).hint(
                "--allow-forge reads the host from origin's URL (https://, ssh:// or user@host:); list hosts yourself in the config's allowlist otherwise.",
            ),
            P::TokenName { .. } => CliError::new(ErrorKind::Usage, msg)
                .hint("Name the variable to forward, e.g. `--token-from GH_TOKEN`."),
            P::Unsupported { .. } => CliError::new(ErrorKind::Unsupported, msg)
                .hint("Use the host runner in worktree mode: `--isolation host --git worktree`."),
            P::ModeMismatch { leaf, built, .. } => CliError::new(ErrorKind::ModeMismatch, msg)
                .hint(format!(
                    "Finish it in the mode it was built with (`--git {built}`), or remove it first (`git treebox teardown --force {leaf}`) and create it again."
                )),
            P::Resolve(crate::boxes::ResolveError::NotFound {
                reference,
                branch_exists,
            }) => {
                let e = CliError::new(ErrorKind::BoxNotFound, msg);
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
                CliError::new(ErrorKind::Ambiguous, msg)
                    .hint("Name the box exactly, as `git treebox list` shows it.")
            }
            P::MalformedRecord { .. } => CliError::new(ErrorKind::MalformedRecord, msg),
            P::NoRecord { path, .. } => CliError::new(ErrorKind::NotABox, msg).hint(format!(
                "It was not made by treebox; remove it with `git worktree remove {}` if you no longer need it.",
                q(&path.to_string_lossy())
            )),
            P::BoxMissing { leaf, .. } => CliError::new(ErrorKind::BoxMissing, msg).hint(format!(
                "To clean up what is left, run `git treebox teardown {}`.",
                q(leaf)
            )),
            // A box's own git data: removing it would only lose the box's work.
            P::BlockingRegistration {
                leaf,
                admin,
                own: true,
            } => CliError::new(ErrorKind::BlockingRegistration, msg).hint(format!(
                "Remove that box (`git treebox teardown --force {}`), or repair {} by hand.",
                q(leaf),
                q(&admin.to_string_lossy())
            )),
            P::BlockingRegistration { leaf, admin, .. } => {
                CliError::new(ErrorKind::BlockingRegistration, msg).hint(format!(
                    "Remove that box (`git treebox teardown --force {}`), or the registration itself (`rm -r {}`).",
                    q(leaf),
                    q(&admin.to_string_lossy())
                ))
            }
            P::CheckoutBroken { leaf, repo, clone: false, .. } => {
                CliError::new(ErrorKind::CheckoutBroken, msg).hint(format!(
                    "`git -C {} worktree repair` restores it; or remove the box: `git treebox teardown --force {}`.",
                    q(&repo.to_string_lossy()),
                    q(leaf)
                ))
            }
            P::CheckoutBroken { leaf, path, .. } => {
                CliError::new(ErrorKind::CheckoutBroken, msg).hint(format!(
                    "Copy out what you need from {}, then remove the box: `git treebox teardown --force {}`.",
                    q(&path.to_string_lossy()),
                    q(leaf)
                ))
            }
            P::IsolationMismatch { recorded, flagged: true, .. } => {
                CliError::new(ErrorKind::IsolationMismatch, msg).hint(format!(
                    "Boxes keep the runner they were made with: drop the flag or pass `--isolation {recorded}`."
                ))
            }
            P::IsolationMismatch { leaf, recorded, .. } => {
                CliError::new(ErrorKind::IsolationMismatch, msg).hint(format!(
                    "Boxes keep the runner they were made with: pass `--isolation {recorded}`, or finish it with `git treebox enter {}`.",
                    q(leaf)
                ))
            }
            P::BaseNotFound { empty: true, .. } => CliError::new(ErrorKind::BaseNotFound, msg)
                .hint("Commit once (`git commit --allow-empty -m init`), or make a clone box, which can start empty: `--git clone` without `--base`."),
            P::BaseNotFound { checked_out: Some(b), .. } => CliError::new(ErrorKind::BaseNotFound, msg)
                .hint(format!("Name an existing base, such as the branch your checkout is on: `--base {}`; `git branch -a` lists them.", q(b))),
            P::BaseNotFound { .. } => CliError::new(ErrorKind::BaseNotFound, msg)
                .hint("Name an existing base with `--base <branch>`; `git branch -a` lists them."),
            P::BranchNotFound { .. } => CliError::new(ErrorKind::BranchNotFound, msg)
                .hint("`git branch -a` lists the branches; to start a new one, run `git treebox create <name>`."),
            P::DefaultBaseNotFound { checked_out: Some(b), .. } => CliError::new(ErrorKind::BaseNotFound, msg)
                .hint(format!("Name the base, such as the branch your checkout is on: `--base {}`; or have git record origin's default branch: `git remote set-head origin --auto`.", q(b))),
            P::DefaultBaseNotFound { .. } => CliError::new(ErrorKind::BaseNotFound, msg)
                .hint("Name the base with `--base <branch>`, or have git record origin's default branch: `git remote set-head origin --auto`."),
            P::BranchExists { branch } | P::BranchOnOrigin { branch } => CliError::new(ErrorKind::BranchExists, msg).hint(format!(
                "To work on the existing branch, run `git treebox create --checkout {}`.",
                q(branch)
            )),
            P::BaseTracksBoxes { base, .. } => CliError::new(ErrorKind::BaseTracksBoxes, msg).hint(format!(
                "Untrack it on `{base}` (`git rm -r --cached -- ':(icase).treebox'`, commit, push), or name another base with `--base`; nothing was written."
            )),
            P::BranchCheckedOut { .. } => CliError::new(ErrorKind::BranchCheckedOut, msg)
                .hint("`git worktree list` shows where; switch that checkout to another branch first."),
            P::BoxExists { path, .. } => CliError::new(ErrorKind::BoxExists, msg).hint(format!(
                "To work in it, run `cd {}`; or pick another name.",
                q(&path.to_string_lossy())
            )),
            P::CaseConflict { other, .. } => CliError::new(ErrorKind::CaseConflict, msg).hint(format!(
                "Work in that box (`git treebox enter {}`), or pick a name that differs in more than case.",
                q(other)
            )),
            P::PathTaken { path, .. } => CliError::new(ErrorKind::PathTaken, msg).hint(format!(
                "Move it away (`mv {} /tmp/`) or pick another name.",
                q(&path.to_string_lossy())
            )),
            P::Lock(LockError::Held { .. }) => CliError::new(ErrorKind::Locked, msg)
                .hint("Wait for the other treebox command on this box to finish, then run it again."),
            P::Lock(LockError::Io { .. }) => CliError::new(ErrorKind::Lock, msg),
            P::Fetch(crate::provision::fetch::FetchError::Failed(failed)) => {
                let e = CliError::new(ErrorKind::FetchFailed, msg);
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
            P::Fetch(_) => CliError::new(ErrorKind::Fetch, msg),
            P::Record(crate::state::record::RecordError::Malformed { .. }) => {
                CliError::new(ErrorKind::MalformedRecord, msg)
            }
            P::Container(crate::runner::oci::ContainerError::Unmountable { .. }) => {
                CliError::new(ErrorKind::Unmountable, msg)
                    .hint("Move the repository to a path without ',' or control characters.")
            }
            P::Container(crate::runner::oci::ContainerError::Template(_))
            | P::Container(crate::runner::oci::ContainerError::BadTemplate { .. }) => {
                CliError::new(ErrorKind::Template, msg)
                    .hint("`git treebox template list` shows the templates and their problems.")
            }
            P::Container(
                crate::runner::oci::ContainerError::EngineDown { .. }
                | crate::runner::oci::ContainerError::NoEngine,
            ) => CliError::new(ErrorKind::Engine, msg)
                .hint("`git treebox doctor --isolation docker` (or podman) says what is wrong."),
            P::Container(crate::runner::oci::ContainerError::GuardCannotRun { .. }) => {
                CliError::new(ErrorKind::GuardCannotRun, msg).hint(
                    "Base the template on a glibc 2.34+ image (Debian 12, Ubuntu 22.04 or newer; not Alpine): set `baseImage` in its container.json (`git treebox template path <name>`), then remove this box and create it again.",
                )
            }
            P::Container(crate::runner::oci::ContainerError::Setup {
                missing: Some(program),
                leaf,
                template,
                ..
            }) => {
                let image = match template {
                    Some(t) => format!(
                        "template `{}`'s image (its Dockerfile is in `git treebox template path {}`)",
                        crate::sanitize::line(t),
                        q(t)
                    ),
                    None => "an image of your own (`git treebox template init mine` copies the bundled template to edit; then `\"template\": \"mine\"` in your config)".to_string(),
                };
                CliError::new(ErrorKind::Container, msg).hint(format!(
                    "Install `{}` in {image}, or leave the step out (`\"setup\": []` in your config); then `git treebox enter {}` finishes the setup.",
                    crate::sanitize::line(program),
                    leaf.as_deref().map_or_else(|| "<box>".to_string(), q)
                ))
            }
            P::Container(crate::runner::oci::ContainerError::NameTaken { engine, id, .. }) => {
                CliError::new(ErrorKind::PathTaken, msg).hint(format!(
                    "If it is left from an interrupted create, remove it (`{engine} rm -f {}`) and run this again.",
                    q(if id.is_empty() { "<id>" } else { id.as_str() })
                ))
            }
            P::Container(crate::runner::oci::ContainerError::HandOver { leaf, .. }) => {
                CliError::new(ErrorKind::Container, msg).hint(format!(
                    "The box stays, its agent not started; remove it with `git treebox teardown {}`, then create it again.",
                    q(leaf)
                ))
            }
            P::Container(crate::runner::oci::ContainerError::FirewallChanged { .. }) => {
                CliError::new(ErrorKind::Container, msg).hint(
                    "Something in the box changed its firewall; `git treebox enter` starts it again and re-applies the rules, and `git treebox doctor` lists the box.",
                )
            }
            P::Container(_) => CliError::new(ErrorKind::Container, msg),
            P::DiskFull { path } => CliError::new(ErrorKind::DiskFull, msg).hint(format!(
                "Free some space (`df -h {}` shows how much is left), then run it again.",
                q(&path.to_string_lossy())
            )),
            P::Guard(crate::provision::guard::GuardInstallError::WriteConfig { path, .. })
                if lock_of(path).exists() =>
            {
                CliError::new(ErrorKind::Runtime, msg).hint(format!(
                    "{} is in the way (left by a git or treebox that was killed?): if no git command is running, `rm -f {}`, then run this again.",
                    crate::sanitize::line(&lock_of(path).to_string_lossy()),
                    q(&lock_of(path).to_string_lossy())
                ))
            }
            P::Ports(crate::ports::PortsError::Exhausted { .. }) => {
                CliError::new(ErrorKind::PortsExhausted, msg).hint(
                    "`git treebox list` shows each box's ports: remove the boxes you are done with, or set a smaller `\"ports\": {\"count\": N}` (0: none) or another `\"from\"` in your config (`git treebox doctor` names the file).",
                )
            }
            P::Ports(_) => CliError::new(ErrorKind::State, msg),
            P::Checkout(_) | P::Guard(_) | P::Clone(_) | P::Record(_) | P::State(_) | P::Io { .. } => {
                CliError::new(ErrorKind::Runtime, msg)
            }
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_keep_their_codes_and_names() {
        assert_eq!(ErrorKind::BranchExists.exit_code(), CONFLICT);
        assert_eq!(ErrorKind::BranchExists.as_str(), "branch-exists");
        assert_eq!(ErrorKind::BoxNotFound.exit_code(), NOT_FOUND);
        assert_eq!(ErrorKind::FetchFailed.exit_code(), FETCH);
        assert_eq!(ErrorKind::Usage.exit_code(), USAGE);
        assert_eq!(ErrorKind::Runtime.exit_code(), RUNTIME);
        // The same JSON kind, two codes: a path that is no box is a usage error.
        assert_eq!(ErrorKind::NotABox.as_str(), ErrorKind::NotABoxPath.as_str());
        assert_eq!(ErrorKind::NotABoxPath.exit_code(), USAGE);
        assert_eq!(ErrorKind::NotABox.exit_code(), NOT_FOUND);
    }

    #[test]
    fn causes_are_shown_once() {
        let io = std::io::Error::other("disk on fire");
        let e = CliError::new(ErrorKind::Io, "could not write x").caused_by(io);
        assert_eq!(e.causes(), vec!["disk on fire".to_string()]);
        let io = std::io::Error::other("disk on fire");
        let e = CliError::new(ErrorKind::Io, "could not write x: disk on fire").caused_by(io);
        assert!(e.causes().is_empty());
        assert_eq!(e.code(), RUNTIME);
    }

    #[test]
    fn a_wrapped_cause_gets_its_own_line_and_stays_in_the_chain() {
        let io = std::io::Error::other("Permission denied");
        let e = CliError::from(ProvisionError::Io {
            what: "could not create",
            path: "/x/y".into(),
            source: io,
        });
        assert_eq!(e.message, "could not create /x/y");
        assert_eq!(e.causes(), vec!["Permission denied".to_string()]);
        assert_eq!(e.chain(), "could not create /x/y: Permission denied");
        let lock = crate::state::LockError::Io {
            path: "/x/lock".into(),
            source: std::io::Error::other("Read-only file system"),
        };
        let e = CliError::from(ProvisionError::Lock(lock));
        assert_eq!(e.message, "could not lock /x/lock");
        assert_eq!(e.causes(), vec!["Read-only file system".to_string()]);
    }

    #[test]
    fn teardown_and_template_failures_keep_their_cause() {
        let e = crate::cli::teardown::from_teardown(crate::teardown::TeardownError::Remove {
            path: "/x/box".into(),
            source: std::io::Error::other("Device or resource busy"),
        });
        assert_eq!(e.kind, ErrorKind::Teardown);
        assert_eq!(e.message, "could not remove /x/box");
        assert_eq!(e.causes(), vec!["Device or resource busy".to_string()]);
        let e = CliError::from(crate::template::TemplateError::Io {
            path: "/x/t".into(),
            source: std::io::Error::other("Permission denied"),
        });
        assert_eq!(e.chain(), "could not read or write /x/t: Permission denied");
    }
}
