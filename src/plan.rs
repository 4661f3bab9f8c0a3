//! The immutable provisioning plan (SPEC §4).
//!
//! [`crate::provision::create`] first decides everything — names, paths, base commit,
//! how the checkout is made, which runner and harness — into a [`Plan`], refusing bad
//! requests before anything is written. `--dry-run` prints the plan; the real run
//! applies exactly this plan. The plan is plain data (serialisable for `--json`).

use std::path::PathBuf;

use serde::Serialize;

use crate::ecosystem::Ecosystem;
use crate::harness::Harness;
use crate::vocab::{GitMode, RunnerKind, Warm, WarmMethod};

/// How the box's checkout is made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Checkout {
    /// A new branch from the base commit, not tracking anything.
    #[serde(rename_all = "camelCase")]
    NewBranch { branch: String, start: String },
    /// An existing local branch.
    #[serde(rename_all = "camelCase")]
    ExistingLocal { branch: String },
    /// A new local branch tracking `origin/<branch>`.
    #[serde(rename_all = "camelCase")]
    FromRemote { branch: String, remote_ref: String },
    /// A new branch with no commits (clone mode): the repository has none yet, so
    /// there is no base to start from and nothing to pin.
    #[serde(rename_all = "camelCase")]
    Unborn { branch: String },
    /// The checkout already exists: an interrupted create is being finished.
    #[serde(rename_all = "camelCase")]
    Resume { branch: String },
}

impl Checkout {
    pub fn branch(&self) -> &str {
        match self {
            Checkout::NewBranch { branch, .. }
            | Checkout::ExistingLocal { branch }
            | Checkout::FromRemote { branch, .. }
            | Checkout::Unborn { branch }
            | Checkout::Resume { branch } => branch,
        }
    }
}

/// Whether and how origin is fetched before the base is resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Fetch {
    /// `git fetch origin`.
    Origin,
    /// `--no-fetch`: the base may be stale.
    Skipped,
    /// The repository has no `origin` remote: local refs are used.
    NoOrigin,
}

/// Where the base branch's name came from (SPEC §4: the first of these that names one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum BaseFrom {
    /// `--base`.
    Flag,
    /// The project file's `base` (`.treebox.json`).
    ProjectFile,
    /// The user config's `base`.
    Config,
    /// origin's default branch, as `refs/remotes/origin/HEAD` names it.
    OriginHead,
    /// None of the above: `main`.
    Default,
}

impl BaseFrom {
    /// Why this base, for `--dry-run` on a terminal.
    pub fn describe(self) -> &'static str {
        match self {
            BaseFrom::Flag => "--base",
            BaseFrom::ProjectFile => "the project file .treebox.json",
            BaseFrom::Config => "the user config",
            BaseFrom::OriginHead => "origin's default branch (origin/HEAD)",
            BaseFrom::Default => "the default (origin/HEAD names no branch)",
        }
    }
}

/// Where setup's package managers keep their downloads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Caches {
    Shared,
    Cold,
}

/// Everything a create will do, decided before anything is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub repo: PathBuf,
    /// The box's permanent name (directory leaf).
    pub name: String,
    pub branch: String,
    pub placeholder: bool,
    pub path: PathBuf,
    pub fetch: Fetch,
    pub base: String,
    /// Where the name of `base` came from.
    pub base_from: BaseFrom,
    /// The ref the base resolved to (`refs/remotes/origin/main`), when a new branch is made.
    pub base_ref: Option<String>,
    pub base_commit: Option<String>,
    pub checkout: Checkout,
    pub git_mode: GitMode,
    pub runner: RunnerKind,
    /// Why this runner: the flag or config, or what `auto` found (SPEC §3).
    pub runner_reason: String,
    pub harness: Harness,
    /// Ecosystems found at the top of the base tree (what setup will install).
    pub ecosystems: Vec<Ecosystem>,
    /// The user's `setup` commands, when they replace detection.
    pub custom_setup: Option<Vec<String>>,
    pub caches: Caches,
    /// The canonical `.env` that will be copied in, if there is one.
    pub env_source: Option<PathBuf>,
    /// Ignored files of the main checkout that `.worktreeinclude` brings in, relative.
    pub included: Vec<PathBuf>,
    /// Build outputs of the main checkout brought into the box, and how.
    pub warm: Warming,
    /// Whether the harness is launched after provisioning.
    pub launch: bool,
    /// The harness command that will be run in the box.
    pub launch_argv: Vec<String>,
    /// Environment variables forwarded into the box (`--token-from`): names only.
    pub forward_tokens: Vec<String>,
    /// `--allow-forge`: origin's forge hosts added to the firewall's allowlist.
    pub forge_hosts: Vec<String>,
}

impl Plan {
    /// Human-readable lines for `--dry-run` on a terminal.
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        out.push(match self.fetch {
            Fetch::Origin => "fetch origin".to_string(),
            Fetch::Skipped => "skip fetch (--no-fetch): the base may be stale".to_string(),
            Fetch::NoOrigin => "no origin remote: use local refs".to_string(),
        });
        // A worktree in a container hangs off a bare clone of its own (SPEC §6).
        let sandboxed = self.git_mode == GitMode::Worktree && self.runner.is_container();
        let owns_git = self.git_mode == GitMode::Clone || sandboxed;
        let make = if self.git_mode == GitMode::Clone {
            "git clone --shared into"
        } else if sandboxed {
            "git worktree add (of the box's own bare clone)"
        } else {
            "git worktree add"
        };
        if matches!(self.checkout, Checkout::NewBranch { .. }) {
            out.push(format!("base {}: {}", self.base, self.base_from.describe()));
        }
        match &self.checkout {
            Checkout::NewBranch { branch, start } => out.push(format!(
                "{make} {} on new branch {branch} from {} ({})",
                self.path.display(),
                start,
                self.base_commit.as_deref().map(short).unwrap_or("?")
            )),
            Checkout::ExistingLocal { branch } => out.push(format!(
                "{make} {} on existing branch {branch}",
                self.path.display()
            )),
            Checkout::FromRemote { branch, remote_ref } => out.push(format!(
                "{make} {} on new branch {branch} {} {remote_ref}",
                self.path.display(),
                if self.git_mode == GitMode::Clone {
                    "from"
                } else {
                    "tracking"
                }
            )),
            Checkout::Unborn { branch } => out.push(format!(
                "{make} {} on new branch {branch}, with no commits (the repository has none yet)",
                self.path.display()
            )),
            Checkout::Resume { branch } => out.push(format!(
                "finish the interrupted box at {} (branch {branch})",
                self.path.display()
            )),
        }
        if owns_git && !matches!(self.checkout, Checkout::Unborn { .. }) {
            out.push(format!(
                "pin its start commit as refs/hort/{}/base in the repository",
                self.name
            ));
        }
        out.push(format!("runner {}: {}", self.runner, self.runner_reason));
        out.push("install the pre-push guard".into());
        out.push("check out submodules, if any".into());
        out.push(match &self.env_source {
            Some(p) => format!("copy {} (mode 0600)", p.display()),
            None => "no .env to copy".into(),
        });
        if !self.forge_hosts.is_empty() {
            out.push(format!(
                "firewall: also allow origin's forge: {}",
                self.forge_hosts.join(", ")
            ));
        }
        if !self.forward_tokens.is_empty() {
            out.push(format!(
                "forward into the box's environment: {} (names only; values read at start)",
                self.forward_tokens.join(", ")
            ));
        }
        if !self.included.is_empty() {
            let names: Vec<String> = self
                .included
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            out.push(format!("copy from .worktreeinclude: {}", names.join(", ")));
        }
        // Said whenever warming was asked for or off, not only when it brings something.
        if !self.warm.dirs.is_empty() || self.warm.mode != Warm::Auto {
            out.push(self.warm.describe());
        }
        match &self.custom_setup {
            Some(cmds) => out.push(format!("setup: {}", cmds.join("; "))),
            None if self.ecosystems.is_empty() => out.push("setup: no ecosystem detected".into()),
            None => out.push(format!(
                "setup: {} ({} caches)",
                self.ecosystems
                    .iter()
                    .map(|e| e.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                match self.caches {
                    Caches::Shared => "shared",
                    Caches::Cold => "throwaway",
                }
            )),
        }
        out.push("record the box".into());
        if self.launch {
            out.push(format!("launch: {}", self.launch_argv.join(" ")));
        }
        out
    }
}

/// What warming a box does (in the plan) or did (in the record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Warming {
    pub mode: Warm,
    /// The directories brought in, relative to the repository's top.
    pub dirs: Vec<PathBuf>,
    /// How: by reflink or by a copy; null when nothing is brought in.
    pub method: Option<WarmMethod>,
    /// Why nothing is brought in although the mode would have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// `target/` is cloned after `create` returns, under cargo's build lock (a cargo
    /// command started in the box meanwhile waits for it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub background: bool,
}

impl Warming {
    /// Nothing to warm, nothing to say.
    pub fn none(mode: Warm) -> Warming {
        Warming {
            mode,
            dirs: Vec::new(),
            method: None,
            skipped: None,
            background: false,
        }
    }

    /// The plan's line for `--dry-run`.
    pub fn describe(&self) -> String {
        let dirs = self.listed();
        match (self.mode, self.method, &self.skipped) {
            (Warm::Off, ..) => "warm build outputs: off".into(),
            (_, Some(WarmMethod::Reflink), _) if self.background => format!(
                "warm: clone {dirs} by reflink (target/ after create returns; cargo waits for it)"
            ),
            (_, Some(WarmMethod::Reflink), _) => format!("warm: clone {dirs} by reflink"),
            (_, Some(WarmMethod::Copy), _) => {
                format!("warm: copy {dirs} (this filesystem cannot clone files)")
            }
            (_, None, Some(why)) => format!("warm: skipped ({why})"),
            (_, None, None) => "warm: no build outputs to bring in".into(),
        }
    }

    pub(crate) fn listed(&self) -> String {
        let names: Vec<String> = self
            .dirs
            .iter()
            .map(|d| format!("{}/", d.display()))
            .collect();
        names.join(", ")
    }
}

fn short(oid: &str) -> &str {
    oid.get(..12).unwrap_or(oid)
}
