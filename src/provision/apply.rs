//! The apply stage: [`create`] runs the pipeline (request → plan → fetch → lock →
//! plan again → apply) and `apply` makes the box: record first, then the checkout,
//! guard, submodules, `.env`, setup (host) or the container stage, then the record.
//!
//! Invariant: the record exists before the checkout does, so a crash is resumable; a
//! failure before the box is usable is rolled back ([`super::rollback`]). Callers: the
//! CLI (`create`, `sandbox`), `enter` and `folder` (for `env_tracked`).

use std::path::PathBuf;

use crate::config::UserConfig;
use crate::git::{GitCli, Repo};
use crate::names::Leaf;
use crate::plan::{Checkout, Fetch, Plan};
use crate::state::{BoxLock, Record};
use crate::vocab::GitMode;

use super::beside::Beside;
use super::container_stage::container_stage;
use super::deps::run_setup;
use super::error::io_err;
use super::planner::make_plan;
use super::repair::{blocking_registration, repair_checkout};
use super::request::{choose_name, context, fetch_mode, Context};
use super::rollback::{disk_full, undo_checkout};
use super::{checkout, clone, copy, fetch, guard, setup, timed, CreateRequest};
use super::{ProvisionError, Reporter};

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
    /// Whether the user trusts the main checkout, where provisioning read it already.
    pub main_trusted: Option<bool>,
}

/// Provision a box: validate, fetch, plan, then apply the plan under the box's lock.
pub fn create(
    req: &CreateRequest,
    cfg: &UserConfig,
    reporter: &mut dyn Reporter,
) -> Result<Created, ProvisionError> {
    let mut ctx = context(req, cfg)?;
    for w in &ctx.warnings {
        reporter.warn(w.clone());
    }
    for n in &ctx.notes {
        reporter.note(n.clone());
    }
    let (leaf, branch, placeholder) = choose_name(req, &ctx)?;
    let mut fetch = fetch_mode(req, &ctx);
    // `git fetch` reads every worktree's admin files (`rev-list --all`): one a box made
    // unreadable would hang it. Such a box is the box's own problem: this create goes
    // on from local refs (and the checkout is registered without git, see `checkout`).
    if fetch == Fetch::Origin {
        if let Some(admin) = blocking_registration(&ctx.repo.common_dir) {
            fetch = Fetch::Skipped;
            reporter.warn(format!(
                "origin not fetched (the base may be stale): git would hang on {}, which a box made unreadable",
                admin.display()
            ));
        }
    }
    if fetch == Fetch::Origin {
        // Refuse early, before the (slow) fetch, whatever can be refused now; the
        // checks are repeated under the lock below.
        match make_plan(req, cfg, &ctx, &leaf, &branch, placeholder, Fetch::Skipped) {
            // The base or a remote branch may only appear (or, pruned, go) with the
            // fetch; a base tracking `.treebox/` may be put right on origin.
            Err(
                ProvisionError::BaseNotFound { .. }
                | ProvisionError::DefaultBaseNotFound { .. }
                | ProvisionError::BranchNotFound { .. }
                | ProvisionError::BranchOnOrigin { .. }
                | ProvisionError::BaseTracksBoxes { .. },
            ) => {}
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        timed(reporter, "fetch", || {
            fetch::fetch_origin(
                &ctx.git,
                &ctx.repo.main_root,
                &ctx.layout.repo_state,
                req.interactive,
            )
        })?;
    }
    if fetch == Fetch::Origin {
        ctx.refresh_default_base();
        ctx.learn_origin_head(true);
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
    // Said once the plan stands: a refusal is one line (and without a fetch, the plan
    // above is the only one).
    match fetch {
        Fetch::Skipped if req.no_fetch => reporter.warn("--no-fetch: the base may be stale".into()),
        Fetch::NoOrigin => reporter.note("no origin remote: using local refs".into()),
        Fetch::Origin | Fetch::Skipped => {}
    }
    let result = apply(&plan, req, cfg, &ctx, reporter);
    if result.is_err() && !ctx.layout.record_path(&leaf).exists() {
        // Undone: the block this run took goes back too.
        crate::ports::release(&ctx.layout.record_path(&leaf));
        lock.release_and_remove();
    } else {
        drop(lock);
    }
    let mut created = result?;
    created.fetched = fetch == Fetch::Origin;
    created.warnings.splice(0..0, ctx.warnings.iter().cloned());
    Ok(created)
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
                plan.git_mode,
                plan.runner,
                plan.harness,
                (&ctx.template, ctx.firewall),
            )
        },
    };
    if resumed && plan.runner.is_container() && record.container.is_none() {
        // No container was made (its image did not build, say): the re-run's template
        // and firewall are how that is mended. Naming none keeps the recorded one, and
        // a firewall once asked for stays.
        if ctx.template_named {
            record.template = Some(ctx.template.clone());
        }
        record.firewall |= ctx.firewall;
    } else if resumed
        && plan.runner.is_container()
        && ctx.template_named
        && record.template.as_deref() != Some(&ctx.template)
    {
        warnings.push(format!(
            "box `{}` keeps template `{}`: its container exists; to use `{}`, remove the box (`git treebox rm {}`) and create it again",
            plan.name,
            record.template.as_deref().unwrap_or("default"),
            ctx.template,
            crate::cmd::quote(&plan.name),
        ));
    }
    if plan.runner.is_container() && record.container.is_none() {
        // The limits its container is made with (SPEC §7); a container already made
        // keeps the ones it has.
        record.limits = Some(cfg.limits());
    }
    if !resumed {
        // Names only: the values are read where they are used (SPEC §7).
        record.forward_tokens = plan.forward_tokens.clone();
        record.forge_hosts = plan.forge_hosts.clone();
        if !plan.forward_tokens.is_empty() {
            warnings.push(format!(
                "{} forwarded into a box whose agent runs unwatched: scope the token to this one repository, and protect its branches on the forge",
                plan.forward_tokens.join(", ")
            ));
        }
    }
    if !resumed && plan.runner.is_container() {
        // A push from inside cannot reach an origin that is a path on this host.
        warnings.extend(crate::runner::oci::forge::origin_out_of_reach(
            &ctx.repo,
            &plan.name,
            &plan.branch,
            plan.placeholder,
        ));
    }
    if !resumed && !plan.runner.is_container() {
        warnings.extend(crate::runner::oci::forge::relative_origin_warning(
            &ctx.repo,
        ));
    }
    if !resumed && plan.git_mode == GitMode::Worktree && plan.runner.is_container() {
        // A sandboxed worktree (SPEC §6): its own bare clone, never the user's git dir.
        record.bare_clone = Some(ctx.layout.bare_clone_dir(&leaf));
    }
    if !resumed {
        // The box's block of ports, for life (SPEC §7b): in the ledger before the
        // record names it, so no other create can take it meanwhile. A record this
        // one replaces gives its block back first.
        crate::ports::release(&record_path);
        record.ports = crate::ports::allocate(cfg.ports.count(), cfg.ports.from(), &record_path)?;
    }
    // The record exists before the checkout does: a crash from here on is resumable.
    if let Err(e) = record.save(&record_path) {
        crate::ports::release(&record_path);
        return Err(e.into());
    }
    ctx.layout.remember_repo(&ctx.repo.main_root);

    // A host box's status producer (SPEC §7) lives in its bookkeeping, not the checkout:
    // it is written (and synced) while git makes the checkout.
    let status_hooks =
        std::cell::RefCell::new(Beside::start((!plan.runner.is_container()).then(|| {
            let (layout, leaf, runner) = (ctx.layout.clone(), leaf.clone(), plan.runner);
            move || crate::runner::oci::status::install(&layout, &leaf, runner)
        })));
    // What warming needs of the main checkout starts now too (see `warm::prestart`).
    let mut warming =
        (!resumed).then(|| super::warm::prestart(plan, &ctx.repo, &ctx.layout.box_state(&leaf)));
    let made_checkout = !resumed;
    // Undo what this run made. The status producer's writer is waited for first: it
    // writes into the bookkeeping the undo removes.
    let rollback = |reporter: &mut dyn Reporter| {
        let _ = status_hooks.borrow_mut().wait();
        undo_checkout(plan, ctx, &leaf, made_checkout, reporter)
    };

    if let Some(parent) = plan.path.parent() {
        std::fs::create_dir_all(parent).map_err(io_err("could not create", parent))?;
    }
    if let Err(e) = copy::ensure_excludes(&ctx.repo.common_dir) {
        warnings.push(format!("could not update .git/info/exclude: {e}"));
    }
    let clone_mode = plan.git_mode == GitMode::Clone;
    let bare = record.bare_clone.clone();
    if let Some(bare) = &bare {
        let made = timed(reporter, "checkout", || {
            if resumed {
                return Ok(());
            }
            super::sandboxed::make(
                &ctx.repo,
                bare,
                &plan.path,
                &plan.name,
                &plan.checkout,
                plan.base_commit.as_deref(),
            )
            .map(drop)
        });
        if let Err(e) = made {
            rollback(reporter);
            if disk_full(&plan.path) {
                return Err(ProvisionError::DiskFull {
                    path: plan.path.parent().unwrap_or(&plan.path).to_path_buf(),
                });
            }
            return Err(e.into());
        }
    } else if clone_mode {
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
                &ctx.repo,
                &plan.path,
                &plan.checkout,
                plan.base_commit.as_deref(),
            )
        });
        if let Err(e) = checkout_result {
            // Undo what was made of the worktree and its branch, and drop the record.
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
    // The checkout is whole. The record says so before anything can run in the box
    // (setup, the container, the agent: see `code_may_run`); from then on an
    // interrupted create is finished without running git in it again. Until then a
    // crash leaves a whole checkout that nothing has run in, which the next create
    // judges as it would a half-made one (`repair_checkout`).
    let mut saved_complete = record.checkout_completed;
    record.checkout_completed = true;
    let _early = Beside::start(Some({
        let p = plan.path.clone();
        move || std::fs::File::open(&p)?.sync_all()
    }));
    // The git dir that holds the box's own hooks and per-worktree config: the
    // worktree's admin dir (in the user's repository, or in the sandboxed worktree's
    // bare clone), or the clone's `.git`.
    let admin = if clone_mode {
        Some(plan.path.join(".git"))
    } else if let Some(bare) = &bare {
        Some(bare.join("worktrees").join(leaf.as_str()))
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
    let common_for_guard = match &bare {
        Some(bare) => bare.clone(),
        None if clone_mode => admin.clone(),
        None => ctx.repo.common_dir.clone(),
    };
    // A clone (a bare clone) has its own excludes: without them its `.env` would be one
    // `git add .` away from a commit.
    if clone_mode || bare.is_some() {
        let users = copy::user_excludes(&ctx.repo.common_dir);
        if let Err(e) = copy::ensure_excludes_with(&common_for_guard, &users) {
            warnings.push(format!("could not update the box's info/exclude: {e}"));
        }
    }

    let guard_result = timed(reporter, "guard", || {
        // The box's own git data is the agent's to write: its guard lives in host-owned
        // bookkeeping (mounted read-only into a container).
        let hooks = (clone_mode || bare.is_some()).then(|| ctx.layout.hooks_dir(&leaf));
        guard::find_guard_exe()
            .and_then(|exe| guard::install_into(&admin, &common_for_guard, hooks.as_deref(), &exe))
    });
    if let Err(e) = guard_result {
        rollback(reporter);
        return Err(e.into());
    }
    // The repository's own hooks run behind the guard in a clone and a sandboxed
    // worktree too (a worktree of the user's repository finds them by itself).
    if (clone_mode || bare.is_some()) && !resumed {
        if let Err(e) = guard::carry_repo_hooks(&ctx.repo, &common_for_guard) {
            warnings.push(format!(
                "the repository's own hooks were not carried into the box: {e}"
            ));
        }
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
                crate::sanitize::line(&crate::sanitize::chain(&e))
            ));
            0
        }
    };

    let env_tracked = env_tracked(&ctx.repo);
    let env = timed(reporter, "env", || {
        copy::copy_env(plan.env_source.as_deref(), &plan.path, env_tracked)
    });
    if !resumed && !plan.included.is_empty() {
        timed(reporter, "worktreeinclude", || {
            super::include::copy(
                &ctx.repo.main_root,
                &plan.path,
                &plan.included,
                &mut warnings,
            )
        });
    }
    // A background clone of `target/` starts once this is dropped: before anything
    // that could run cargo in the box (setup), or when create is done.
    let mut warmer = None;
    if !resumed {
        let (warm, w) = super::warm::stage(
            plan,
            &ctx.repo,
            &ctx.layout.repo_state,
            &ctx.layout.box_state(&leaf),
            &admin,
            warming.take().unwrap_or_default(),
            reporter,
            &mut warnings,
        );
        record.warm = Some(warm);
        warmer = w;
    }
    match &env {
        copy::EnvOutcome::Copied { hash } => record.env_hash = Some(hash.clone()),
        copy::EnvOutcome::Refused { reason } => warnings.push(format!(".env not copied: {reason}")),
        copy::EnvOutcome::Absent
        | copy::EnvOutcome::Unchanged
        | copy::EnvOutcome::KeptEdited { .. } => {}
    }

    // Say the checkout is whole before anything runs in the box.
    let mut code_may_run = |record: &mut Record, reporter: &mut dyn Reporter| {
        if saved_complete {
            return Ok(());
        }
        let saved = record.save(&record_path);
        if saved.is_err() {
            rollback(reporter);
        }
        saved_complete = saved.is_ok();
        saved
    };
    if plan.runner.is_container() {
        drop(warmer);
        code_may_run(&mut record, reporter)?;
        return container_stage(
            plan, cfg, ctx, &leaf, record, resumed, env, submodules, warnings, reporter,
        );
    }
    if setup::runs_anything(&plan.path, cfg.setup.as_deref()) {
        drop(warmer.take());
        code_may_run(&mut record, reporter)?;
    }
    let (report, ecos) = run_setup(
        &plan.path,
        cfg,
        &record.ports,
        req.cold.then(|| ctx.layout.cold_cache_dir(&leaf)),
        reporter,
        &mut warnings,
    )?;
    record.ecosystems = ecos.clone();
    record.lockfile_hash = setup::lockfile_hash(&plan.path, &ecos);
    record.setup_completed = setup_ok && report.completed;
    // Setup ran the repository's install scripts: a hook manager among them (lefthook's
    // `postinstall`) writes over the guard as it would in the box later.
    super::guard::keep_guard_noting(&ctx.repo, &ctx.layout, &record, &mut warnings);
    // The status producer the launch argv names (SPEC §7), in the box's bookkeeping.
    let hooks = ctx.layout.agent_hooks_dir(&leaf);
    let written = status_hooks.borrow_mut().wait();
    written.map_err(io_err("could not write the status hooks in", &hooks))?;
    timed(reporter, "record", || record.save(&record_path))?;
    // The trust the user gave the main checkout, carried to a host clone box.
    let before = super::host_trust::before_launch(
        record.harness,
        record.runner,
        record.git_mode,
        &record.repo,
        &record.path,
    );
    warnings.extend(before.warning);
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
        main_trusted: before.main_trusted,
    })
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
