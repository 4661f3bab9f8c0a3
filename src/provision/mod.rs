//! The provisioning pipeline (SPEC §4): everything `create` does on the host.
//!
//! ```text
//! fetch origin → resolve origin/<base> → worktree add → guard → submodules → .env
//!   → setup → record → (the CLI hands off to the runner)
//! ```
//!
//! [`create`] validates the request and builds a [`Plan`] before writing anything, so
//! every refusal leaves no trace; `--dry-run` stops there. Applying the plan writes a
//! record with `setupCompleted: false` *before* the checkout is made, so a crash at any
//! later point leaves a box that a re-run of `create` (or `enter`) finishes instead of
//! skipping. A failure before setup rolls the checkout back; a failing setup step only
//! warns (the box is usable) and leaves `setupCompleted: false`.
//!
//! This module never prints: progress and warnings go through [`Reporter`].

pub mod checkout;
pub mod clone;
pub mod copy;
pub mod enter;
pub mod fetch;
pub mod guard;
pub mod setup;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::config::{ConfigError, ProjectConfig, UserConfig};
use crate::git::repo::RepoError;
use crate::git::{GitCli, Repo};
use crate::harness::Harness;
use crate::names::{self, BoxName, Leaf, NameError};
use crate::plan::{Caches, Checkout, Fetch, Plan};
use crate::state::record::RecordError;
use crate::state::{BoxLock, Layout, LockError, Record};

/// Receives progress from the engine; the CLI renders it (or not).
pub trait Reporter {
    /// A stage starts.
    fn stage(&mut self, name: &str);
    /// The stage started last finished.
    fn stage_done(&mut self, name: &str, took: Duration);
    /// Something the user should know; the run goes on.
    fn warn(&mut self, message: String);
    /// Something worth a line, not a problem.
    fn note(&mut self, message: String);
}

/// A reporter that drops everything (tests, JSON mode collects warnings itself).
pub struct Silent;

impl Reporter for Silent {
    fn stage(&mut self, _: &str) {}
    fn stage_done(&mut self, _: &str, _: Duration) {}
    fn warn(&mut self, _: String) {}
    fn note(&mut self, _: String) {}
}

/// Why provisioning stopped. Each variant carries what the message needs; the CLI
/// maps them to exit codes.
#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    #[error(transparent)]
    Name(#[from] NameError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Repo(#[from] RepoError),
    #[error("{what} is not available yet in this version of treebox")]
    Unsupported { what: String },
    #[error(transparent)]
    Resolve(#[from] crate::boxes::ResolveError),
    #[error("{message}")]
    MalformedRecord { message: String },
    #[error("{} is not a treebox box (it has no record)", .path.display())]
    NoRecord { leaf: String, path: PathBuf },
    #[error("the directory of box `{leaf}` is gone ({})", .path.display())]
    BoxMissing { leaf: String, path: PathBuf },
    #[error("{} holds something other than files where git keeps its files (a FIFO?): git would hang on it", .admin.display())]
    BlockingRegistration { admin: PathBuf },
    #[error("box `{leaf}` has lost its `.git` ({}): git there would find the repository around it", .path.display())]
    CheckoutBroken {
        leaf: String,
        path: PathBuf,
        repo: PathBuf,
        clone: bool,
    },
    #[error("box `{leaf}` runs on {recorded}, not {requested}")]
    IsolationMismatch {
        leaf: String,
        recorded: String,
        requested: String,
    },
    #[error("box `{leaf}` was built in {built} git mode, not {requested}")]
    ModeMismatch {
        leaf: String,
        built: String,
        requested: String,
    },
    #[error("{}", if *.empty {
        format!("the repository has no commits yet: there is no base branch `{base}` to start from")
    } else {
        format!("base branch `{base}` not found (neither origin/{base} nor a local {base})")
    })]
    BaseNotFound { base: String, empty: bool },
    #[error("branch `{branch}` not found (neither a local branch nor origin/{branch})")]
    BranchNotFound { branch: String },
    #[error("branch `{branch}` already exists")]
    BranchExists { branch: String },
    #[error("branch `{branch}` is already checked out in another worktree")]
    BranchCheckedOut { branch: String },
    #[error("box `{leaf}` already exists at {}", .path.display())]
    BoxExists { leaf: String, path: PathBuf },
    #[error("{} exists but is not a treebox box", .path.display())]
    PathTaken { leaf: String, path: PathBuf },
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Fetch(#[from] fetch::FetchError),
    #[error("git worktree add failed: {0}")]
    Checkout(#[source] crate::cmd::CmdError),
    #[error("no space left on the disk holding {}", .path.display())]
    DiskFull { path: PathBuf },
    #[error(transparent)]
    Guard(#[from] guard::GuardInstallError),
    #[error(transparent)]
    Clone(#[from] clone::CloneError),
    #[error(transparent)]
    Container(#[from] crate::runner::oci::ContainerError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    State(#[from] crate::state::layout::NoStateDir),
    #[error("{what} {}: {source}", .path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What the user asked `create` to do.
#[derive(Debug, Clone, Default)]
pub struct CreateRequest {
    pub cwd: PathBuf,
    pub name: Option<String>,
    pub checkout: Option<String>,
    pub base: Option<String>,
    pub no_fetch: bool,
    pub cold: bool,
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
}

/// What `create` did.
#[derive(Debug, Clone)]
pub struct Created {
    pub plan: Plan,
    pub record: Record,
    pub resumed: bool,
    pub fetched: bool,
    pub env: copy::EnvOutcome,
    pub setup: setup::SetupReport,
    pub submodules: usize,
    pub warnings: Vec<String>,
    /// The marker to hold while an agent runs in the box.
    pub session_path: PathBuf,
}

/// Everything resolved before the plan: the repository, its layout and the choices.
struct Context {
    repo: Repo,
    layout: Layout,
    git: GitCli,
    base: String,
    /// The base was named with `--base` (not from a file or the default).
    base_named: bool,
    harness: Harness,
    runner: String,
    git_mode: String,
    template: String,
    firewall: bool,
    warnings: Vec<String>,
    notes: Vec<String>,
    /// What origin's branches are right now (`--dry-run` asks with `ls-remote`, so it
    /// plans against what the fetch would bring without fetching). `None`: use the
    /// local remote-tracking refs.
    remote_heads: Option<std::collections::HashMap<String, git2::Oid>>,
}

impl Context {
    /// The commit of `origin/<branch>`.
    fn origin_branch(&self, branch: &str) -> Option<git2::Oid> {
        match &self.remote_heads {
            Some(heads) => heads.get(branch).copied(),
            None => self.repo.remote_branch(branch),
        }
    }

    /// `origin/<base>` else the local `<base>`.
    fn resolve_base(&self) -> Option<crate::git::repo::ResolvedRef> {
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

fn context(req: &CreateRequest, cfg: &UserConfig) -> Result<Context, ProvisionError> {
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
    let repo = Repo::discover(&req.cwd)?;
    let (project, mut warnings) = ProjectConfig::load(&repo.main_root)?;
    let mut notes = Vec::new();
    let git_mode = req
        .git_mode
        .clone()
        .or(project.git.clone())
        .or(cfg.git.clone())
        .unwrap_or_else(|| "worktree".into());
    if git_mode != "worktree" && git_mode != "clone" {
        return Err(ProvisionError::Unsupported {
            what: format!("git mode `{git_mode}`"),
        });
    }
    let runner = resolve_runner(req.isolation.as_deref().or(cfg.isolation.as_deref()), cfg)?;
    let template = req
        .template
        .clone()
        .or(cfg.template.clone())
        .unwrap_or_else(|| "default".into());
    if runner != "host" {
        // A missing or invalid template, or a path a mount cannot express, is refused
        // before anything is written.
        crate::template::find(&template).map_err(crate::runner::oci::ContainerError::from)?;
        if let Some(engine) = crate::runner::oci::Engine::parse(&runner) {
            if !engine.installed() {
                return Err(
                    crate::runner::oci::ContainerError::EngineDown { engine: runner }.into(),
                );
            }
        }
        for p in [&repo.main_root, &repo.common_dir] {
            if !crate::runner::oci::mountable(p) {
                return Err(
                    crate::runner::oci::ContainerError::Unmountable { path: p.clone() }.into(),
                );
            }
        }
        if req.isolation.as_deref().or(cfg.isolation.as_deref()) == Some("auto") {
            notes.push(format!(
                "isolation auto: this machine is a runner; using {runner}"
            ));
        }
    }
    let base = req
        .base
        .clone()
        .or(project.base.clone())
        .or(cfg.base.clone())
        .unwrap_or_else(|| "main".into());
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
        base_named: req.base.is_some(),
        harness,
        runner,
        git_mode,
        template,
        firewall: req.firewall || cfg.firewall.unwrap_or(false),
        warnings,
        notes,
        remote_heads: None,
    })
}

/// `host`, or the container runners once they exist (SPEC §3 `auto`).
pub(crate) fn resolve_runner(
    isolation: Option<&str>,
    cfg: &UserConfig,
) -> Result<String, ProvisionError> {
    let marked =
        cfg.runner.unwrap_or(false) || std::env::var("TREEBOX_RUNNER").is_ok_and(|v| v == "1");
    match isolation.unwrap_or("host") {
        "host" => Ok("host".into()),
        "auto" if !marked => Ok("host".into()),
        "auto" => crate::runner::oci::resolve_engine("auto")
            .map(|e| e.program().to_string())
            .map_err(ProvisionError::from),
        "docker" | "podman" => Ok(isolation.unwrap_or_default().to_string()),
        other => Err(ProvisionError::Unsupported {
            what: format!("isolation `{other}`"),
        }),
    }
}

/// The box name, branch and leaf for this request (petname when nameless).
fn choose_name(req: &CreateRequest, ctx: &Context) -> Result<(Leaf, String, bool), ProvisionError> {
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
    // A petname whose leaf and branch are both free.
    let mut last = None;
    for attempt in 0..32 {
        let pet = names::petname(req.seed, attempt);
        let name = BoxName::placeholder(&pet)?;
        let leaf = name.leaf();
        let taken = ctx.layout.record_path(&leaf).exists()
            || ctx.layout.box_path(&leaf).exists()
            || ctx.repo.local_branch(name.as_str()).is_some();
        last = Some((leaf, name.as_str().to_string()));
        if !taken {
            break;
        }
    }
    let (leaf, branch) = last.expect("the loop runs at least once");
    Ok((leaf, branch, true))
}

/// Decide everything; refuse what the real run would refuse. Writes nothing.
fn make_plan(
    req: &CreateRequest,
    cfg: &UserConfig,
    ctx: &Context,
    leaf: &Leaf,
    branch: &str,
    placeholder: bool,
    fetch: Fetch,
) -> Result<Plan, ProvisionError> {
    let path = ctx.layout.box_path(leaf);
    let record = Record::load(&ctx.layout.record_path(leaf))?;
    // A checkout git knows: a registered worktree, or a clone with its own `.git`.
    let registered = ctx.repo.worktree_admin_dir(&path).is_some()
        || std::fs::symlink_metadata(path.join(".git")).is_ok_and(|m| m.is_dir());
    let mut base_ref = None;
    let mut base_commit = None;
    let checkout = match &record {
        Some(r) if r.setup_completed && path.exists() => {
            return Err(ProvisionError::BoxExists {
                leaf: leaf.to_string(),
                path,
            })
        }
        Some(r) if path.exists() && registered => {
            if r.git_mode != ctx.git_mode {
                return Err(ProvisionError::ModeMismatch {
                    leaf: leaf.to_string(),
                    built: r.git_mode.clone(),
                    requested: ctx.git_mode.clone(),
                });
            }
            base_commit = r.base_commit.clone();
            base_ref = r.base_ref.clone();
            Checkout::Resume {
                branch: r.branch.clone(),
            }
        }
        _ => {
            if path.exists() || registered {
                return Err(ProvisionError::PathTaken {
                    leaf: leaf.to_string(),
                    path,
                });
            }
            // An interrupted create may have made its branch before dying.
            let own_branch = record
                .as_ref()
                .is_some_and(|r| r.created_branch && r.branch == branch);
            if req.checkout.is_some() || own_branch {
                if ctx.repo.local_branch(branch).is_some() {
                    // A clone has its own branches; only a worktree competes with the
                    // other checkouts of this repository.
                    if ctx.git_mode == "worktree" && ctx.repo.branch_checked_out(branch) {
                        return Err(ProvisionError::BranchCheckedOut {
                            branch: branch.to_string(),
                        });
                    }
                    Checkout::ExistingLocal {
                        branch: branch.to_string(),
                    }
                } else if ctx.origin_branch(branch).is_some() {
                    Checkout::FromRemote {
                        branch: branch.to_string(),
                        remote_ref: format!("refs/remotes/origin/{branch}"),
                    }
                } else if own_branch {
                    new_branch(ctx, branch, &mut base_ref, &mut base_commit)?
                } else {
                    return Err(ProvisionError::BranchNotFound {
                        branch: branch.to_string(),
                    });
                }
            } else {
                if ctx.repo.local_branch(branch).is_some() {
                    return Err(ProvisionError::BranchExists {
                        branch: branch.to_string(),
                    });
                }
                new_branch(ctx, branch, &mut base_ref, &mut base_commit)?
            }
        }
    };
    let ecosystems = match &base_commit {
        Some(c) => ecosystems_in_tree(&ctx.repo, c),
        None => match &checkout {
            Checkout::ExistingLocal { branch } => ecosystems_in_tree(
                &ctx.repo,
                &ctx.repo
                    .local_branch(branch)
                    .map(|o| o.to_string())
                    .unwrap_or_default(),
            ),
            Checkout::FromRemote { branch, .. } => ecosystems_in_tree(
                &ctx.repo,
                &ctx.origin_branch(branch)
                    .map(|o| o.to_string())
                    .unwrap_or_default(),
            ),
            _ => Vec::new(),
        },
    };
    let program = cfg.harness_program(ctx.harness);
    Ok(Plan {
        repo: ctx.repo.main_root.clone(),
        name: leaf.to_string(),
        branch: branch.to_string(),
        placeholder,
        path,
        fetch,
        base: ctx.base.clone(),
        base_ref,
        base_commit,
        checkout,
        git_mode: ctx.git_mode.clone(),
        runner: ctx.runner.clone(),
        harness: ctx.harness.to_string(),
        ecosystems,
        custom_setup: cfg.setup.clone(),
        caches: if req.cold {
            Caches::Cold
        } else {
            Caches::Shared
        },
        env_source: copy::env_source(&ctx.repo.main_root, cfg.env_file.as_deref()),
        launch: req.launch,
        launch_argv: ctx.harness.argv(&program, &req.extra_args),
    })
}

fn new_branch(
    ctx: &Context,
    branch: &str,
    base_ref: &mut Option<String>,
    base_commit: &mut Option<String>,
) -> Result<Checkout, ProvisionError> {
    // What the fetch would bring (`--dry-run`) counts as commits too.
    let empty = ctx.repo.has_no_commits() && ctx.remote_heads.as_ref().is_none_or(|h| h.is_empty());
    let Some(resolved) = ctx.resolve_base() else {
        // A clone can start with no commits; a worktree needs one.
        if empty && ctx.git_mode == "clone" && !ctx.base_named {
            return Ok(Checkout::Unborn {
                branch: branch.to_string(),
            });
        }
        return Err(ProvisionError::BaseNotFound {
            base: ctx.base.clone(),
            empty,
        });
    };
    *base_ref = Some(resolved.refname.clone());
    *base_commit = Some(resolved.oid.to_string());
    Ok(Checkout::NewBranch {
        branch: branch.to_string(),
        start: resolved.refname,
    })
}

/// Ecosystems whose lockfile sits at the top of the commit's tree (libgit2, no checkout).
fn ecosystems_in_tree(repo: &Repo, commit: &str) -> Vec<String> {
    let Some(tree) = git2::Oid::from_str(commit)
        .ok()
        .and_then(|o| repo.git.find_commit(o).ok())
        .and_then(|c| c.tree().ok())
    else {
        return Vec::new();
    };
    let has = |name: &str| {
        tree.get_name(name)
            .is_some_and(|e| e.kind() == Some(git2::ObjectType::Blob) && e.filemode() != 0o120000)
    };
    let mut out = Vec::new();
    for eco in setup::Ecosystem::ALL {
        if eco == setup::Ecosystem::Npm && has(setup::Ecosystem::Pnpm.lockfile()) {
            continue;
        }
        if has(eco.lockfile()) {
            out.push(eco.as_str().to_string());
        }
    }
    out
}

/// Plan a create without doing anything (`--dry-run`): no fetch, current refs.
pub fn dry_run(
    req: &CreateRequest,
    cfg: &UserConfig,
) -> Result<(Plan, Vec<String>), ProvisionError> {
    let mut ctx = context(req, cfg)?;
    let (leaf, branch, placeholder) = choose_name(req, &ctx)?;
    let fetch = fetch_mode(req, &ctx);
    match fetch {
        // What the fetch would bring, without fetching; a remote the real run could
        // not fetch from is refused here too.
        Fetch::Origin => {
            ctx.remote_heads = Some(fetch::remote_heads(&ctx.git, &ctx.repo.main_root)?)
        }
        Fetch::Skipped => ctx
            .warnings
            .push("--no-fetch: the base may be stale".into()),
        Fetch::NoOrigin => {}
    }
    let plan = make_plan(req, cfg, &ctx, &leaf, &branch, placeholder, fetch)?;
    Ok((plan, ctx.warnings))
}

fn fetch_mode(req: &CreateRequest, ctx: &Context) -> Fetch {
    if !ctx.repo.has_remote("origin") {
        Fetch::NoOrigin
    } else if req.no_fetch {
        Fetch::Skipped
    } else {
        Fetch::Origin
    }
}

pub(crate) fn timed<T>(r: &mut dyn Reporter, name: &str, f: impl FnOnce() -> T) -> T {
    r.stage(name);
    let t = Instant::now();
    let out = f();
    r.stage_done(name, t.elapsed());
    out
}

/// Provision a box: validate, fetch, plan, then apply the plan under the box's lock.
pub fn create(
    req: &CreateRequest,
    cfg: &UserConfig,
    reporter: &mut dyn Reporter,
) -> Result<Created, ProvisionError> {
    let ctx = context(req, cfg)?;
    for w in &ctx.warnings {
        reporter.warn(w.clone());
    }
    for n in &ctx.notes {
        reporter.note(n.clone());
    }
    let (leaf, branch, placeholder) = choose_name(req, &ctx)?;
    let fetch = fetch_mode(req, &ctx);
    // git reads every worktree's admin files; one a box made unreadable would hang it.
    if let Some(admin) = blocking_registration(&ctx.repo.common_dir) {
        return Err(ProvisionError::BlockingRegistration { admin });
    }
    // Refuse early, before the (slow) fetch, whatever can be refused now; the checks
    // are repeated under the lock below.
    match make_plan(req, cfg, &ctx, &leaf, &branch, placeholder, Fetch::Skipped) {
        // The base or a remote branch may only appear with the fetch.
        Err(ProvisionError::BaseNotFound { .. } | ProvisionError::BranchNotFound { .. })
            if fetch == Fetch::Origin => {}
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    match fetch {
        Fetch::Origin => timed(reporter, "fetch", || {
            fetch::fetch_origin(
                &ctx.git,
                &ctx.repo.main_root,
                &ctx.layout.repo_state,
                req.interactive,
            )
        })?,
        Fetch::Skipped => reporter.warn("--no-fetch: the base may be stale".into()),
        Fetch::NoOrigin => reporter.note("no origin remote: using local refs".into()),
    }
    let lock = BoxLock::try_acquire(&ctx.layout.lock_path(&leaf), leaf.as_str())?;
    // An interrupted create of this very box: make its checkout whole first.
    if let Ok(Some(r)) = Record::load(&ctx.layout.record_path(&leaf)) {
        if r.git_mode == ctx.git_mode {
            repair_checkout(&ctx.repo, &ctx.layout, &r)?;
        }
    }
    let plan = match make_plan(req, cfg, &ctx, &leaf, &branch, placeholder, fetch.clone()) {
        Ok(p) => p,
        Err(e) => {
            if Record::load(&ctx.layout.record_path(&leaf))
                .ok()
                .flatten()
                .is_none()
            {
                lock.release_and_remove();
            }
            return Err(e);
        }
    };
    let result = apply(&plan, req, cfg, &ctx, reporter);
    if result.is_err() && !ctx.layout.record_path(&leaf).exists() {
        lock.release_and_remove();
    } else {
        drop(lock);
    }
    let mut created = result?;
    created.fetched = fetch == Fetch::Origin;
    created.warnings.splice(0..0, ctx.warnings.iter().cloned());
    Ok(created)
}

fn io_err<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> ProvisionError + 'a {
    move |source| ProvisionError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// Apply a plan. The caller holds the box's lock.
fn apply(
    plan: &Plan,
    req: &CreateRequest,
    cfg: &UserConfig,
    ctx: &Context,
    reporter: &mut dyn Reporter,
) -> Result<Created, ProvisionError> {
    let leaf = Leaf::parse(&plan.name)?;
    let record_path = ctx.layout.record_path(&leaf);
    let resumed = matches!(plan.checkout, Checkout::Resume { .. });
    let mut warnings = Vec::new();
    let previous = Record::load(&record_path)?;
    let mut record = match previous {
        Some(r) if resumed => r,
        _ => Record {
            branch: plan.branch.clone(),
            created_branch: matches!(
                plan.checkout,
                Checkout::NewBranch { .. } | Checkout::FromRemote { .. } | Checkout::Unborn { .. }
            ),
            base: plan.base.clone(),
            base_ref: plan.base_ref.clone(),
            base_commit: plan.base_commit.clone(),
            ..Record::begin(
                &plan.name,
                &ctx.repo.main_root,
                &ctx.repo.common_dir,
                &plan.path,
                &plan.git_mode,
                &plan.runner,
                &plan.harness,
                (&ctx.template, ctx.firewall),
            )
        },
    };
    // The record exists before the checkout does: a crash from here on is resumable.
    record.save(&record_path)?;
    ctx.layout.remember_repo(&ctx.repo.main_root);

    let made_checkout = !resumed;
    let rollback = |reporter: &mut dyn Reporter| {
        if made_checkout && plan.git_mode == "clone" {
            let _ = std::fs::remove_dir_all(&plan.path);
            let _ = clone::remove_pin(&ctx.repo.common_dir, &plan.name);
        } else if made_checkout {
            let _registration =
                crate::state::WaitedLock::acquire(&ctx.layout.registration_lock_path());
            let created_branch = record_created_branch(&plan.checkout);
            checkout::remove_worktree(&ctx.git, &ctx.repo.main_root, &plan.path, created_branch);
        }
        let _ = std::fs::remove_dir_all(ctx.layout.box_state(&leaf));
        reporter.note(format!("rolled back box `{leaf}`"));
    };

    if let Some(parent) = plan.path.parent() {
        std::fs::create_dir_all(parent).map_err(io_err("could not create", parent))?;
    }
    if let Err(e) = copy::ensure_excludes(&ctx.repo.common_dir) {
        warnings.push(format!("could not update .git/info/exclude: {e}"));
    }
    let clone_mode = plan.git_mode == "clone";
    if clone_mode {
        let made = timed(reporter, "checkout", || {
            if resumed {
                return Ok(None);
            }
            clone::make_clone(
                &ctx.repo,
                &plan.path,
                &plan.checkout,
                plan.base_commit.as_deref(),
            )
        });
        match made {
            Ok(Some(start)) => {
                if let Err(e) = clone::write_pin(&ctx.repo, &plan.name, start) {
                    rollback(reporter);
                    return Err(e.into());
                }
            }
            Ok(None) => {}
            Err(e) => {
                rollback(reporter);
                if disk_full(&plan.path) {
                    return Err(ProvisionError::DiskFull {
                        path: plan.path.parent().unwrap_or(&plan.path).to_path_buf(),
                    });
                }
                return Err(e.into());
            }
        }
    } else {
        let checkout_result = timed(reporter, "checkout", || {
            let _registration =
                crate::state::WaitedLock::acquire(&ctx.layout.registration_lock_path());
            checkout::add_worktree(
                &ctx.git,
                &ctx.repo.main_root,
                &plan.path,
                &plan.checkout,
                plan.base_commit.as_deref(),
            )
        });
        if let Err(e) = checkout_result {
            // `worktree add` cleans up after itself; make sure, and drop the record.
            rollback(reporter);
            if disk_full(&plan.path) {
                return Err(ProvisionError::DiskFull {
                    path: plan.path.parent().unwrap_or(&plan.path).to_path_buf(),
                });
            }
            return Err(match &plan.checkout {
                Checkout::ExistingLocal { branch } if e.stderr().contains("already") => {
                    ProvisionError::BranchCheckedOut {
                        branch: branch.clone(),
                    }
                }
                _ => ProvisionError::Checkout(e),
            });
        }
    }
    // From here on the box can run code (setup, the agent); an interrupted create is
    // finished without running git in it again.
    if !record.checkout_completed {
        record.checkout_completed = true;
        if let Err(e) = record.save(&record_path) {
            rollback(reporter);
            return Err(e.into());
        }
    }
    // The git dir that holds the box's own hooks and per-worktree config: the
    // worktree's admin dir, or the clone's `.git`.
    let admin = if clone_mode {
        Some(plan.path.join(".git"))
    } else {
        ctx.repo.worktree_admin_dir(&plan.path)
    };
    let admin = match admin {
        Some(a) => a,
        None => {
            rollback(reporter);
            return Err(ProvisionError::Io {
                what: "git did not register the worktree at",
                path: plan.path.clone(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            });
        }
    };
    let common_for_guard = if clone_mode {
        admin.clone()
    } else {
        ctx.repo.common_dir.clone()
    };
    // A clone has its own excludes: without them its `.env` would be one `git add .`
    // away from a commit.
    if clone_mode {
        if let Err(e) = copy::ensure_excludes(&admin) {
            warnings.push(format!("could not update the clone's info/exclude: {e}"));
        }
    }

    let guard_result = timed(reporter, "guard", || {
        let hooks = clone_mode.then(|| ctx.layout.box_state(&leaf).join("hooks"));
        guard::find_guard_exe()
            .and_then(|exe| guard::install_into(&admin, &common_for_guard, hooks.as_deref(), &exe))
    });
    if let Err(e) = guard_result {
        rollback(reporter);
        return Err(e.into());
    }

    // From here on the box is usable; problems are warnings, and the record says
    // whether setup completed.
    // Submodules only on a fresh checkout: git is never run in a box's worktree
    // after the box may have run (SPEC §8.1), and a resumed box may have.
    let box_git = GitCli::for_repo(&common_for_guard, Some(&admin.join("config.worktree")));
    let submodules = if resumed {
        Ok(0)
    } else {
        timed(reporter, "submodules", || {
            copy::update_submodules(&box_git, &plan.path)
        })
    };
    let mut setup_ok = true;
    let submodules = match submodules {
        Ok(n) => n,
        Err(e) => {
            setup_ok = false;
            warnings.push(format!(
                "submodules: {}",
                crate::sanitize::line(&e.to_string())
            ));
            0
        }
    };

    let env_tracked = env_tracked(&ctx.repo);
    let env = timed(reporter, "env", || {
        copy::copy_env(plan.env_source.as_deref(), &plan.path, env_tracked)
    });
    match &env {
        copy::EnvOutcome::Copied { hash } => record.env_hash = Some(hash.clone()),
        copy::EnvOutcome::Refused { reason } => warnings.push(format!(".env not copied: {reason}")),
        copy::EnvOutcome::Absent | copy::EnvOutcome::Unchanged | copy::EnvOutcome::KeptEdited => {}
    }

    if plan.runner != "host" {
        return container_stage(
            plan, cfg, ctx, &leaf, record, resumed, env, submodules, warnings, reporter,
        );
    }
    let (report, ecos) = run_setup(
        &plan.path,
        &leaf,
        &ctx.layout,
        cfg,
        req.cold,
        reporter,
        &mut warnings,
    )?;
    record.ecosystems = ecos.iter().map(|e| e.as_str().to_string()).collect();
    record.lockfile_hash = setup::lockfile_hash(&plan.path, &ecos);
    record.setup_completed = setup_ok && report.completed;
    timed(reporter, "record", || record.save(&record_path))?;
    for w in &warnings {
        reporter.warn(w.clone());
    }
    Ok(Created {
        plan: plan.clone(),
        record,
        resumed,
        fetched: false,
        env,
        setup: report,
        submodules,
        warnings,
        session_path: ctx.layout.session_path(&leaf),
    })
}

/// The container runners' part of `create`: build or reuse the image, start the
/// container (mounts, credentials, firewall), then run setup inside it. Unlike host
/// setup, a failure here is an error: the record keeps `setupCompleted: false` so that
/// `enter` or a re-run finishes it.
#[allow(clippy::too_many_arguments)]
fn container_stage(
    plan: &Plan,
    cfg: &UserConfig,
    ctx: &Context,
    leaf: &Leaf,
    mut record: Record,
    resumed: bool,
    env: copy::EnvOutcome,
    submodules: usize,
    warnings: Vec<String>,
    reporter: &mut dyn Reporter,
) -> Result<Created, ProvisionError> {
    let harness = record.harness.parse().unwrap_or_default();
    container_up(
        Some(&ctx.repo),
        &ctx.layout,
        leaf,
        &mut record,
        cfg,
        harness,
        true,
        reporter,
    )?;
    for w in &warnings {
        reporter.warn(w.clone());
    }
    Ok(Created {
        plan: plan.clone(),
        record,
        resumed,
        fetched: false,
        env,
        setup: setup::SetupReport {
            steps: Vec::new(),
            completed: true,
        },
        submodules,
        warnings,
        session_path: ctx.layout.session_path(leaf),
    })
}

/// Finish the checkout of an interrupted box in place, so that what follows (guard,
/// `.env`, setup) works on a whole checkout. Only boxes whose setup never completed
/// are touched, and only their checkout, which no agent has used yet:
///
/// - worktree: a registration `git worktree add` left half made (still marked
///   `initializing`, or without an index) is removed and the worktree added again, on
///   the branch the interrupted run made (or from the recorded base commit);
/// - clone: a clone without its `.git` is made again; then its remotes, its branch and
///   its pin are made sure of.
pub(crate) fn repair_checkout(
    repo: &Repo,
    layout: &Layout,
    record: &Record,
) -> Result<bool, ProvisionError> {
    // A whole checkout may have run code: never run git in it again.
    if record.setup_completed || record.checkout_completed {
        return Ok(false);
    }
    let path = &record.path;
    if record.git_mode == "clone" {
        let branch = record.branch.clone();
        let checkout = match (&record.base_commit, record.created_branch) {
            (Some(_), _) => Checkout::NewBranch {
                branch,
                start: record.base_ref.clone().unwrap_or_default(),
            },
            // Made with no base: from origin's branch, or with no commits at all.
            (None, true) if repo.remote_branch(&branch).is_some() => Checkout::FromRemote {
                remote_ref: format!("refs/remotes/origin/{branch}"),
                branch,
            },
            (None, true) => Checkout::Unborn { branch },
            (None, false) => Checkout::ExistingLocal { branch },
        };
        return Ok(clone::repair(
            repo,
            path,
            &record.name,
            &checkout,
            record.base_commit.as_deref(),
        )?);
    }
    let git = GitCli::for_repo(&repo.common_dir, None);
    let admin = repo.worktree_admin_dir(path);
    let half_made = match &admin {
        Some(a) => {
            let locked = std::fs::read_to_string(a.join("locked")).unwrap_or_default();
            locked.trim() == "initializing" || !a.join("index").exists() || !path.is_dir()
        }
        // A directory with nothing of git in it: the kill came before registration.
        None => {
            path.is_dir()
                && std::fs::read_dir(path)
                    .map(|mut d| d.next().is_none())
                    .unwrap_or(false)
        }
    };
    if !half_made {
        return Ok(false);
    }
    {
        let _registration = crate::state::WaitedLock::acquire(&layout.registration_lock_path());
        if let Some(a) = &admin {
            let _ = std::fs::remove_dir_all(a);
        }
        let _ = std::fs::remove_dir_all(path);
        let checkout = if repo.local_branch(&record.branch).is_some() {
            Checkout::ExistingLocal {
                branch: record.branch.clone(),
            }
        } else {
            Checkout::NewBranch {
                branch: record.branch.clone(),
                start: record.base_ref.clone().unwrap_or_default(),
            }
        };
        checkout::add_worktree(
            &git,
            &repo.main_root,
            path,
            &checkout,
            record.base_commit.as_deref(),
        )
        .map_err(ProvisionError::Checkout)?;
    }
    Ok(true)
}

/// The box's container, running — started when stopped, remade when removed, made
/// when it never existed — and, with `setup`, the box's setup run inside it. The
/// record follows along (container, ecosystems, lockfile hash, `setupCompleted`) and is
/// saved before setup starts, so an interruption is finished by the next `enter`.
/// Setup failing is an error here (SPEC §7: in-container setup fails loudly).
#[allow(clippy::too_many_arguments)]
pub(crate) fn container_up(
    repo: Option<&Repo>,
    layout: &Layout,
    leaf: &Leaf,
    record: &mut Record,
    cfg: &UserConfig,
    harness: Harness,
    setup: bool,
    reporter: &mut dyn Reporter,
) -> Result<crate::runner::oci::ContainerRecord, ProvisionError> {
    let record_path = layout.record_path(leaf);
    let ecos = setup::detect(&record.path);
    let crec = if record.container.is_some() {
        timed(reporter, "container", || {
            crate::runner::oci::ensure_running(repo, layout, record, &cfg.allowlist)
        })?
    } else {
        let engine = crate::runner::oci::resolve_engine(&record.runner)?;
        let template = crate::template::find(record.template.as_deref().unwrap_or("default"))
            .map_err(crate::runner::oci::ContainerError::from)?;
        let spec = crate::runner::oci::Spec {
            repo,
            layout,
            leaf,
            record,
            engine,
            template,
            harness,
            firewall: record.firewall,
            extra_allow: cfg.allowlist.clone(),
        };
        timed(reporter, "container", || spec.create(&ecos))?
    };
    record.container = Some(crec.clone());
    record.ecosystems = ecos.iter().map(|e| e.as_str().to_string()).collect();
    record.save(&record_path)?;
    if setup {
        let engine = crate::runner::oci::Engine::parse(&crec.engine)
            .ok_or(crate::runner::oci::ContainerError::NoEngine)?;
        if let Some(guard) = guard_path(repo, layout, leaf, record) {
            let checked = timed(reporter, "guard", || {
                crate::runner::oci::check_guard(engine, &crec, &record.path, &guard)
            });
            if let Err(e) = checked {
                record.setup_completed = false;
                record.save(&record_path)?;
                return Err(e.into());
            }
        }
        let template = crate::template::find(record.template.as_deref().unwrap_or("default"))
            .map_err(crate::runner::oci::ContainerError::from)?;
        let result = crate::runner::oci::setup_inside(
            engine,
            &crec,
            &record.path,
            setup::plan_steps(
                &record.path,
                &ecos,
                cfg.setup.as_deref(),
                &setup::CacheMode::Shared,
            ),
            &template.spec().post_create,
            &mut |name| reporter.stage(&format!("setup: {name}")),
        );
        record.lockfile_hash = setup::lockfile_hash(&record.path, &ecos);
        record.setup_completed = result.is_ok();
        timed(reporter, "record", || record.save(&record_path))?;
        result?;
    }
    Ok(crec)
}

/// A worktree registration whose files a read would block on (a FIFO a box planted in
/// its own admin dir): git itself would hang on it in `worktree add`, `fetch`, `gc`.
fn blocking_registration(common_dir: &Path) -> Option<PathBuf> {
    let rd = std::fs::read_dir(common_dir.join("worktrees")).ok()?;
    for e in rd.flatten() {
        let admin = e.path();
        let blocking = [
            "gitdir",
            "HEAD",
            "commondir",
            "locked",
            "index",
            "config.worktree",
        ]
        .iter()
        .any(|f| match std::fs::metadata(admin.join(f)) {
            Ok(m) => !m.is_file(),
            Err(err) => err.kind() != std::io::ErrorKind::NotFound,
        });
        if blocking {
            return Some(admin);
        }
    }
    None
}

/// Refuse to run anything in a box whose `.git` is gone or is the wrong kind (a clone
/// has a directory, a worktree a pointer file): git run there would walk up to the
/// user's own repository, which the box sits inside. Folder boxes have no `.git`.
pub fn check_checkout(record: &Record) -> Result<(), ProvisionError> {
    let want_dir = match record.git_mode.as_str() {
        "clone" => true,
        "worktree" => false,
        _ => return Ok(()),
    };
    let ok = std::fs::symlink_metadata(record.path.join(".git")).is_ok_and(|m| {
        if want_dir {
            m.is_dir()
        } else {
            m.is_file()
        }
    });
    match ok {
        true => Ok(()),
        false => Err(ProvisionError::CheckoutBroken {
            leaf: record.name.clone(),
            path: record.path.clone(),
            repo: record.repo.clone(),
            clone: want_dir,
        }),
    }
}

/// Where the box's guard copy is (the host path, which is also its path inside the
/// container); `None` for a folder box, which has no guard.
fn guard_path(
    repo: Option<&Repo>,
    layout: &Layout,
    leaf: &Leaf,
    record: &Record,
) -> Option<PathBuf> {
    let hooks = match (record.git_mode.as_str(), repo) {
        ("clone", Some(_)) => layout.box_state(leaf).join("hooks"),
        ("worktree", Some(repo)) => repo
            .worktree_admin_dir(&record.path)?
            .join(guard::HOOKS_DIR_NAME),
        _ => return None,
    };
    Some(hooks.join(guard::GUARD_EXE_NAME)).filter(|p| p.is_file())
}

/// Install the box's dependencies (SPEC §3): the user's `setup` commands, else one
/// install per detected ecosystem, against the shared caches or (`cold`) throwaway
/// ones. Failures become warnings; the report says whether every step succeeded.
pub(crate) fn run_setup(
    path: &Path,
    leaf: &Leaf,
    layout: &Layout,
    cfg: &UserConfig,
    cold: bool,
    reporter: &mut dyn Reporter,
    warnings: &mut Vec<String>,
) -> Result<(setup::SetupReport, Vec<setup::Ecosystem>), ProvisionError> {
    let ecos = setup::detect(path);
    let cold_dir = cold.then(|| layout.box_state(leaf).join("cold-cache"));
    let cache = match &cold_dir {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(io_err("could not create", d))?;
            setup::CacheMode::Cold(d.clone())
        }
        None => setup::CacheMode::Shared,
    };
    let steps = setup::plan_steps(path, &ecos, cfg.setup.as_deref(), &cache);
    let report = setup::run(steps, &mut |name| reporter.stage(&format!("setup: {name}")));
    if let Some(d) = &cold_dir {
        let _ = make_writable_and_remove(d);
    }
    for s in &report.steps {
        reporter.stage_done(&format!("setup: {}", s.name), s.duration);
        if !s.ok {
            let detail = s.detail.as_deref().unwrap_or("failed");
            warnings.push(format!(
                "setup step {} failed: {}",
                s.name,
                crate::sanitize::block(detail)
            ));
        }
    }
    Ok((report, ecos))
}

fn record_created_branch(c: &Checkout) -> Option<&str> {
    match c {
        Checkout::NewBranch { branch, .. }
        | Checkout::FromRemote { branch, .. }
        | Checkout::Unborn { branch } => Some(branch),
        _ => None,
    }
}

/// Does the repository track a `.env` at its top? Asked of the main checkout's HEAD
/// tree (one tree lookup) rather than its index, which can be large.
pub(crate) fn env_tracked(repo: &Repo) -> bool {
    repo.git
        .head()
        .ok()
        .and_then(|h| h.peel_to_tree().ok())
        .is_some_and(|t| t.get_name(".env").is_some())
}

/// Is the filesystem that would hold `path` (nearly) full? Asked after a failure, to
/// name the cause git's own message leaves out.
fn disk_full(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let mut p = path;
    while !p.exists() {
        match p.parent() {
            Some(parent) => p = parent,
            None => return false,
        }
    }
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: statvfs writes into the zeroed struct we own; the path is NUL-terminated.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            return false;
        }
        (st.f_bavail as u64).saturating_mul(st.f_frsize as u64) < 1024 * 1024
    }
}

/// Go's module cache is read-only by design; make it writable so it can be removed.
fn make_writable_and_remove(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fn walk(p: &Path) {
        if let Ok(m) = std::fs::symlink_metadata(p) {
            if m.is_dir() {
                let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700));
                if let Ok(rd) = std::fs::read_dir(p) {
                    for e in rd.flatten() {
                        walk(&e.path());
                    }
                }
            }
        }
    }
    walk(dir);
    std::fs::remove_dir_all(dir)
}

#[cfg(test)]
mod tests {
    //! The planner on real temp repositories: what it decides, and what it refuses
    //! without writing anything.
    use super::*;
    use std::process::Command;

    struct Fixture {
        _tmp: tempfile::TempDir,
        repo: PathBuf,
        state: PathBuf,
    }

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "T")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "T")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    /// origin (bare) with `main` holding `files`, cloned as the repo.
    fn fixture(files: &[&str]) -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        git(&root, &["init", "-q", "-b", "main", "seed"]);
        for f in files {
            std::fs::write(root.join("seed").join(f), "x").unwrap();
        }
        std::fs::write(root.join("seed/README"), "r").unwrap();
        git(&root.join("seed"), &["add", "."]);
        git(&root.join("seed"), &["commit", "-q", "-m", "i"]);
        git(&root, &["clone", "-q", "--bare", "seed", "origin.git"]);
        git(&root, &["clone", "-q", "origin.git", "repo"]);
        Fixture {
            repo: root.join("repo"),
            state: root.join("state"),
            _tmp: tmp,
        }
    }

    fn req(f: &Fixture, name: Option<&str>) -> CreateRequest {
        CreateRequest {
            cwd: f.repo.clone(),
            name: name.map(str::to_string),
            state_root: Some(f.state.clone()),
            seed: Some(1),
            launch: true,
            ..Default::default()
        }
    }

    fn plan(_f: &Fixture, r: &CreateRequest) -> Result<Plan, ProvisionError> {
        dry_run(r, &UserConfig::default()).map(|(p, _)| p)
    }

    #[test]
    fn new_branch_from_origin_base() {
        let f = fixture(&["Cargo.lock", "pnpm-lock.yaml", "package-lock.json"]);
        let p = plan(&f, &req(&f, Some("feat/x"))).unwrap();
        assert_eq!(p.name, "feat--x");
        assert_eq!(p.branch, "feat/x");
        assert!(!p.placeholder);
        assert_eq!(p.path, f.repo.join(".treebox/worktrees/feat--x"));
        assert_eq!(p.base_ref.as_deref(), Some("refs/remotes/origin/main"));
        assert!(matches!(p.checkout, Checkout::NewBranch { .. }));
        assert_eq!(p.fetch, Fetch::Origin);
        // pnpm wins over npm; detected from the base tree, before any checkout.
        assert_eq!(p.ecosystems, ["pnpm", "cargo"]);
        assert_eq!(p.launch_argv, ["claude", "--dangerously-skip-permissions"]);
        assert!(!f.state.exists(), "planning writes nothing");
        assert!(!p.path.exists());
    }

    #[test]
    fn nameless_gets_a_placeholder() {
        let f = fixture(&[]);
        let p = plan(&f, &req(&f, None)).unwrap();
        assert!(p.placeholder);
        assert_eq!(p.branch, format!("treebox/{}", p.name));
    }

    #[test]
    fn refusals() {
        let f = fixture(&[]);
        git(&f.repo, &["branch", "taken"]);
        assert!(matches!(
            plan(&f, &req(&f, Some("taken"))),
            Err(ProvisionError::BranchExists { .. })
        ));
        let mut r = req(&f, Some("x"));
        r.base = Some("nope".into());
        assert!(matches!(
            plan(&f, &r),
            Err(ProvisionError::BaseNotFound { .. })
        ));
        let mut r = req(&f, None);
        r.checkout = Some("ghost".into());
        assert!(matches!(
            plan(&f, &r),
            Err(ProvisionError::BranchNotFound { .. })
        ));
        assert!(matches!(
            plan(&f, &req(&f, Some("Bad Name"))),
            Err(ProvisionError::Name(_))
        ));
        let mut r = req(&f, Some("x"));
        r.isolation = Some("vm".into());
        assert!(matches!(
            plan(&f, &r),
            Err(ProvisionError::Unsupported { .. })
        ));
        // The main branch is checked out in the main worktree.
        let mut r = req(&f, None);
        r.checkout = Some("main".into());
        assert!(matches!(
            plan(&f, &r),
            Err(ProvisionError::BranchCheckedOut { .. })
        ));
        std::fs::create_dir_all(f.repo.join(".treebox/worktrees/squat")).unwrap();
        assert!(matches!(
            plan(&f, &req(&f, Some("squat"))),
            Err(ProvisionError::PathTaken { .. })
        ));
        assert!(!f.state.exists());
    }

    #[test]
    fn checkout_local_and_remote() {
        let f = fixture(&[]);
        git(&f.repo, &["branch", "mine"]);
        let mut r = req(&f, None);
        r.checkout = Some("mine".into());
        assert_eq!(
            plan(&f, &r).unwrap().checkout,
            Checkout::ExistingLocal {
                branch: "mine".into()
            }
        );
        git(&f.repo, &["push", "-q", "origin", "mine:theirs"]);
        git(&f.repo, &["fetch", "-q", "origin"]);
        r.checkout = Some("theirs".into());
        assert_eq!(
            plan(&f, &r).unwrap().checkout,
            Checkout::FromRemote {
                branch: "theirs".into(),
                remote_ref: "refs/remotes/origin/theirs".into()
            }
        );
    }

    #[test]
    fn flags_config_and_no_origin() {
        let f = fixture(&[]);
        let mut r = req(&f, Some("x"));
        r.no_fetch = true;
        r.harness = Some(Harness::Codex);
        r.extra_args = vec!["do it".into()];
        r.cold = true;
        let p = plan(&f, &r).unwrap();
        assert_eq!(p.fetch, Fetch::Skipped);
        assert_eq!(p.caches, Caches::Cold);
        assert_eq!(
            p.launch_argv,
            [
                "codex",
                "--dangerously-bypass-approvals-and-sandbox",
                "do it"
            ]
        );
        git(&f.repo, &["remote", "remove", "origin"]);
        let p = plan(&f, &req(&f, Some("y"))).unwrap();
        assert_eq!(p.fetch, Fetch::NoOrigin);
        assert_eq!(p.base_ref.as_deref(), Some("refs/heads/main"));
    }

    #[test]
    fn incomplete_box_is_resumed_and_complete_one_refused() {
        let f = fixture(&[]);
        let r = req(&f, Some("half"));
        let path = f.repo.join(".treebox/worktrees/half");
        git(
            &f.repo,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "half",
                path.to_str().unwrap(),
            ],
        );
        let repo = Repo::discover(&f.repo).unwrap();
        let layout = Layout::with_state_root(&repo.main_root, &repo.common_dir, &f.state);
        let leaf = Leaf::parse("half").unwrap();
        let mut rec = crate::state::record::tests::sample();
        rec.name = "half".into();
        rec.branch = "half".into();
        rec.path = path.clone();
        rec.save(&layout.record_path(&leaf)).unwrap();
        assert_eq!(
            plan(&f, &r).unwrap().checkout,
            Checkout::Resume {
                branch: "half".into()
            }
        );
        rec.setup_completed = true;
        rec.save(&layout.record_path(&leaf)).unwrap();
        assert!(matches!(
            plan(&f, &r),
            Err(ProvisionError::BoxExists { .. })
        ));
        // A record from another mode cannot be finished in this one.
        rec.setup_completed = false;
        rec.git_mode = "clone".into();
        rec.save(&layout.record_path(&leaf)).unwrap();
        assert!(matches!(
            plan(&f, &r),
            Err(ProvisionError::ModeMismatch { .. })
        ));
    }
}
