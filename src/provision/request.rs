//! The request stage: what the user asked `create` for ([`CreateRequest`]) resolved
//! against the repository and the config into a `Context` — git mode, runner,
//! template, base, harness, state layout — and the box's name and branch.
//!
//! Refusals of bad flags happen here, before anything is written. Callers: the planner
//! (`dry_run`) and `apply::create`; `enter` resolves the runner with `resolve_runner`.

use std::path::PathBuf;

use crate::config::{ProjectConfig, UserConfig};
use crate::git::{GitCli, Repo};
use crate::harness::Harness;
use crate::names::{self, BoxName, Leaf};
use crate::plan::{BaseFrom, Fetch};
use crate::state::Layout;
use crate::vocab::{GitMode, Isolation, RunnerKind};

use super::ProvisionError;

/// What the user asked `create` to do.
#[derive(Debug, Clone, Default)]
pub struct CreateRequest {
    pub cwd: PathBuf,
    pub name: Option<String>,
    pub checkout: Option<String>,
    pub base: Option<String>,
    pub no_fetch: bool,
    pub cold: bool,
    /// `--warm` (copy) / `--no-warm` (off); None: the config's `warm`, else auto.
    pub warm: Option<crate::vocab::Warm>,
    pub harness: Option<Harness>,
    pub isolation: Option<String>,
    pub git_mode: Option<String>,
    pub launch: bool,
    pub extra_args: Vec<String>,
    /// Seed for petnames (`TREEBOX_SEED`).
    pub seed: Option<u64>,
    /// Retry a failed silent fetch with prompts (only on a terminal).
    pub interactive: bool,
    /// Bookkeeping root instead of `$XDG_STATE_HOME/treebox` (tests).
    pub state_root: Option<PathBuf>,
    /// Container runners: the template (else config, else `default`).
    pub template: Option<String>,
    /// Container runners: default-deny egress with an allowlist.
    pub firewall: bool,
    /// Environment variables to forward into the box (`--token-from`), by name.
    pub token_from: Vec<String>,
    /// `--allow-forge`: add origin's forge hosts to the firewall's allowlist.
    pub allow_forge: bool,
}

/// Everything resolved before the plan: the repository, its layout and the choices.
pub(super) struct Context {
    pub(super) repo: Repo,
    pub(super) layout: Layout,
    pub(super) git: GitCli,
    pub(super) base: String,
    /// Where `base` came from (`--base`, a file, or origin's default branch).
    pub(super) base_from: BaseFrom,
    pub(super) harness: Harness,
    pub(super) runner: RunnerKind,
    /// Why `runner` was chosen, in words (`create --dry-run` says it).
    pub(super) runner_reason: String,
    pub(super) git_mode: GitMode,
    pub(super) template: String,
    /// `template` was named (flag or config), not the built-in default.
    pub(super) template_named: bool,
    pub(super) firewall: bool,
    pub(super) warnings: Vec<String>,
    pub(super) notes: Vec<String>,
    /// What origin's branches are right now (`--dry-run` asks with `ls-remote`, so it
    /// plans against what the fetch would bring without fetching). `None`: use the
    /// local remote-tracking refs.
    pub(super) remote_heads: Option<std::collections::HashMap<String, git2::Oid>>,
}

impl Context {
    /// Read origin's default branch again when the base is not named anywhere: a fetch
    /// by a newer git creates a missing `origin/HEAD` (`remote.origin.followRemoteHEAD`).
    pub(super) fn refresh_default_base(&mut self) {
        if matches!(self.base_from, BaseFrom::OriginHead | BaseFrom::Default) {
            (self.base, self.base_from) = default_base(&self.repo);
        }
    }

    /// Where nothing names the base and `origin/HEAD` is missing, ask origin which branch
    /// its HEAD names (one `ls-remote`), as a fetch by git 2.48 or newer learns it. After
    /// a fetch (`record`), write it as `origin/HEAD` as that git would and read the base
    /// again; for `--dry-run`, only plan with it. A remote that does not answer, or names
    /// no branch, leaves the default (`main`) and its refusal, which says how to fix it.
    pub(super) fn learn_origin_head(&mut self, record: bool) {
        if self.base_from != BaseFrom::Default || !self.repo.follows_origin_head() {
            return;
        }
        let Ok(Some(branch)) = super::fetch::origin_default_branch(&self.git, &self.repo.main_root)
        else {
            return;
        };
        if record {
            self.repo.record_origin_head(&branch);
            self.refresh_default_base();
        } else if self.origin_branch(&branch).is_some()
            && names::check_existing_branch(&branch).is_ok()
        {
            (self.base, self.base_from) = (branch, BaseFrom::OriginHead);
        }
    }

    /// The commit of `origin/<branch>`.
    pub(super) fn origin_branch(&self, branch: &str) -> Option<git2::Oid> {
        match &self.remote_heads {
            Some(heads) => heads.get(branch).copied(),
            None => self.repo.remote_branch(branch),
        }
    }

    /// `origin/<base>` else the local `<base>`.
    pub(super) fn resolve_base(&self) -> Option<crate::git::repo::ResolvedRef> {
        match &self.remote_heads {
            Some(heads) => {
                match heads.get(&self.base) {
                    Some(oid) => Some(crate::git::repo::ResolvedRef {
                        refname: format!("refs/remotes/origin/{}", self.base),
                        oid: *oid,
                    }),
                    None => self.repo.local_branch(&self.base).map(|oid| {
                        crate::git::repo::ResolvedRef {
                            refname: format!("refs/heads/{}", self.base),
                            oid,
                        }
                    }),
                }
            }
            None => self.repo.resolve_base(&self.base),
        }
    }
}

pub(super) fn context(req: &CreateRequest, cfg: &UserConfig) -> Result<Context, ProvisionError> {
    // Flags are checked before the repository is even opened: bad input is bad anywhere.
    if let Some(n) = &req.name {
        if req.checkout.is_some() {
            Leaf::parse(n)?;
        } else {
            BoxName::parse(n)?;
        }
    }
    if let Some(b) = &req.checkout {
        names::check_existing_branch(b)?;
    }
    if let Some(b) = &req.base {
        names::check_existing_branch(b)?;
    }
    // A template name is checked whatever the runner: bad input is bad anywhere.
    if let Some(t) = &req.template {
        crate::template::check_name(t).map_err(crate::runner::oci::ContainerError::from)?;
    }
    let repo = Repo::discover(&req.cwd)?;
    let (project, mut warnings) = ProjectConfig::load(&repo.main_root)?;
    let mut notes = Vec::new();
    let git_mode_name = req
        .git_mode
        .clone()
        .or(project.git.clone())
        .or(cfg.git.clone())
        .unwrap_or_else(|| GitMode::Worktree.to_string());
    // A folder box is made by `folder`, never asked for as a git mode.
    let git_mode = match git_mode_name.parse() {
        Ok(m @ (GitMode::Worktree | GitMode::Clone)) => m,
        Ok(GitMode::Folder) | Err(_) => {
            return Err(ProvisionError::Unsupported {
                what: format!("git mode `{git_mode_name}`"),
            })
        }
    };
    let (runner, runner_reason) =
        runner_choice(req.isolation.as_deref().or(cfg.isolation.as_deref()), cfg)?;
    let template = req
        .template
        .clone()
        .or(cfg.template.clone())
        .unwrap_or_else(|| "default".into());
    if runner.is_container() {
        // A missing or invalid template, or a path a mount cannot express, is refused
        // before anything is written.
        crate::template::find(&template).map_err(crate::runner::oci::ContainerError::from)?;
        if let Some(engine) = crate::runner::oci::Engine::of(runner) {
            if !engine.installed() {
                return Err(crate::runner::oci::ContainerError::EngineDown {
                    engine: runner.to_string(),
                }
                .into());
            }
        }
        for p in [&repo.main_root, &repo.common_dir] {
            if !crate::runner::oci::mountable(p) {
                return Err(
                    crate::runner::oci::ContainerError::Unmountable { path: p.clone() }.into(),
                );
            }
        }
        let asked = req.isolation.as_deref().or(cfg.isolation.as_deref());
        if asked.is_none_or(|s| s.parse().ok() == Some(Isolation::Auto)) {
            notes.push(format!(
                "isolation auto: this machine is a runner; using {runner}"
            ));
        }
    }
    let (base, base_from) = if let Some(b) = &req.base {
        (b.clone(), BaseFrom::Flag)
    } else if let Some(b) = &project.base {
        (b.clone(), BaseFrom::ProjectFile)
    } else if let Some(b) = &cfg.base {
        (b.clone(), BaseFrom::Config)
    } else {
        default_base(&repo)
    };
    let harness = req.harness.or(cfg.harness).unwrap_or_default();
    let layout = match &req.state_root {
        Some(root) => Layout::with_state_root(&repo.main_root, &repo.common_dir, root),
        None => Layout::new(&repo.main_root, &repo.common_dir)?,
    };
    let git = GitCli::for_repo(
        &repo.common_dir,
        Some(&repo.common_dir.join("config.worktree")),
    );
    warnings.retain(|w| !w.is_empty());
    Ok(Context {
        repo,
        layout,
        git,
        base,
        base_from,
        harness,
        runner,
        runner_reason,
        git_mode,
        template,
        template_named: req.template.is_some() || cfg.template.is_some(),
        firewall: req.firewall || cfg.firewall.unwrap_or(false),
        warnings,
        notes,
        remote_heads: None,
    })
}

/// The base when nothing names one (SPEC §4): the branch `origin/HEAD` names (read as a
/// symbolic ref with libgit2, so no git and no repository config runs), else `main`.
fn default_base(repo: &Repo) -> (String, BaseFrom) {
    match repo
        .origin_head_branch()
        .filter(|b| names::check_existing_branch(b).is_ok())
    {
        Some(b) => (b, BaseFrom::OriginHead),
        None => ("main".into(), BaseFrom::Default),
    }
}

/// The runner for the requested isolation (default `auto`): `auto` is a container
/// engine on a machine marked as a runner, else the host (SPEC §3).
pub(crate) fn resolve_runner(
    isolation: Option<&str>,
    cfg: &UserConfig,
) -> Result<RunnerKind, ProvisionError> {
    runner_choice(isolation, cfg).map(|(r, _)| r)
}

/// [`resolve_runner`], with why it chose that runner in words (`create --dry-run`).
pub(crate) fn runner_choice(
    isolation: Option<&str>,
    cfg: &UserConfig,
) -> Result<(RunnerKind, String), ProvisionError> {
    let asked = match isolation {
        None => Isolation::default(),
        Some(s) => s.parse().map_err(|_| ProvisionError::Unsupported {
            what: format!("isolation `{s}`"),
        })?,
    };
    let from = if isolation.is_some() {
        "asked for"
    } else {
        "the default"
    };
    Ok(match (asked, cfg.runner_mark()) {
        (Isolation::Runner(r), _) => (r, format!("isolation {r}, {from}")),
        (Isolation::Auto, None) => (
            RunnerKind::Host,
            format!(
                "isolation auto, {from}, and this machine is not marked as a runner \
                 (TREEBOX_RUNNER=1 or config `\"runner\": true` would sandbox new boxes)"
            ),
        ),
        (Isolation::Auto, Some(mark)) => {
            let engine = crate::runner::oci::resolve_engine(Isolation::Auto)?;
            (
                engine.kind(),
                format!(
                    "isolation auto, {from}; this machine is marked as a runner ({mark}) \
                     and {engine} is the first of podman, docker that answers"
                ),
            )
        }
    })
}

/// The box name, branch and leaf for this request (petname when nameless).
pub(super) fn choose_name(
    req: &CreateRequest,
    ctx: &Context,
) -> Result<(Leaf, String, bool), ProvisionError> {
    if let Some(branch) = &req.checkout {
        let leaf = match &req.name {
            Some(n) => Leaf::parse(n)?,
            None => Leaf::from_branch(branch)?,
        };
        return Ok((leaf, branch.clone(), false));
    }
    if let Some(n) = &req.name {
        let name = BoxName::parse(n)?;
        return Ok((name.leaf(), name.as_str().to_string(), false));
    }
    // A petname whose leaf and branch (here and on origin) are free.
    let mut last = None;
    for attempt in 0..32 {
        let pet = names::petname(req.seed, attempt);
        let name = BoxName::placeholder(&pet)?;
        let leaf = name.leaf();
        let taken = ctx.layout.record_path(&leaf).exists()
            || ctx.layout.box_path(&leaf).exists()
            || ctx.layout.checkout_path(&leaf).exists()
            || ctx.repo.local_branch(name.as_str()).is_some()
            || ctx.origin_branch(name.as_str()).is_some();
        last = Some((leaf, name.as_str().to_string()));
        if !taken {
            break;
        }
    }
    let (leaf, branch) = last.expect("the loop runs at least once");
    Ok((leaf, branch, true))
}

pub(super) fn fetch_mode(req: &CreateRequest, ctx: &Context) -> Fetch {
    if !ctx.repo.has_remote("origin") {
        Fetch::NoOrigin
    } else if req.no_fetch {
        Fetch::Skipped
    } else {
        Fetch::Origin
    }
}
