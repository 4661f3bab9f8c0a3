//! The container runners' stage of provisioning: start (or make) a box's container and
//! run its setup inside, keeping the record in step so an interruption is finished by
//! the next `enter`. Callers: `apply` (create), `enter`, `folder`.

use std::path::PathBuf;

use crate::config::UserConfig;
use crate::git::Repo;
use crate::harness::Harness;
use crate::names::Leaf;
use crate::plan::Plan;
use crate::state::{Layout, Record};
use crate::vocab::Isolation;

use super::apply::Created;
use super::request::Context;
use super::{copy, guard, setup, timed, ProvisionError, Reporter};

/// The container runners' part of `create`: build or reuse the image, start the
/// container (mounts, credentials, firewall), then run setup inside it. Unlike host
/// setup, a failure here is an error: the record keeps `setupCompleted: false` so that
/// `enter` or a re-run finishes it.
#[allow(clippy::too_many_arguments)]
pub(super) fn container_stage(
    plan: &Plan,
    cfg: &UserConfig,
    ctx: &Context,
    leaf: &Leaf,
    mut record: Record,
    resumed: bool,
    env: copy::EnvOutcome,
    submodules: usize,
    mut warnings: Vec<String>,
    reporter: &mut dyn Reporter,
) -> Result<Created, ProvisionError> {
    let harness = record.harness;
    // Where the box reaches the user's provider URLs (an engine call when one names
    // this machine) is asked beside the container's start, not before it.
    let runner = record.runner;
    let made_now = record.container.is_none();
    let (reach, up) = std::thread::scope(|s| {
        let reach = s.spawn(move || loopback_urls(runner, harness));
        // Built on a dev container imported from this repository that has changed since.
        warnings.extend(crate::template::devcontainer::drift(
            &ctx.repo,
            record.template.as_deref(),
        ));
        let up = container_up(
            Some(&ctx.repo),
            &ctx.layout,
            leaf,
            &mut record,
            cfg,
            harness,
            true,
            reporter,
        );
        (reach.join().unwrap_or_default(), up)
    });
    let (notes, reach_warnings) = reach;
    for n in notes {
        reporter.note(n);
    }
    warnings.extend(reach_warnings);
    // Said whether or not the container came up: a failure is often why they matter.
    for w in &warnings {
        reporter.warn(w.clone());
    }
    let crec = up?;
    // A box handed back with no agent started is one a host `git` may use at once:
    // its new container's first process is done giving the agent its files (and
    // writing the index) before it is. An agent's launcher waits for that itself.
    if made_now && !plan.launch && crec.anchor_hands {
        let engine = crate::runner::oci::Engine::parse(&crec.engine)
            .ok_or(crate::runner::oci::ContainerError::NoEngine)?;
        let status = ctx.layout.status_dir(leaf);
        timed(reporter, "hand-over", || {
            crate::runner::oci::await_handed(engine, &crec.name, leaf, &status)
        })?;
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
        main_trusted: None,
    })
}

/// A new box's container could not start because a port of its block was taken
/// meanwhile: that container is removed (it never ran), and the box gets another block,
/// recorded before the next container is made with it.
fn other_block(
    engine: crate::runner::oci::Engine,
    layout: &Layout,
    leaf: &Leaf,
    record: &mut Record,
    cfg: &UserConfig,
    reporter: &mut dyn Reporter,
) -> Result<(), ProvisionError> {
    let name = crate::runner::oci::container_name(layout, leaf);
    engine
        .remove(&name)
        .output()
        .map_err(crate::runner::oci::ContainerError::Engine)?;
    let record_path = layout.record_path(leaf);
    let taken = std::mem::take(&mut record.ports);
    crate::ports::release(&record_path);
    record.container = None;
    record.ports =
        crate::ports::allocate_avoiding(cfg.ports.count(), cfg.ports.from(), &record_path, &taken)?;
    record.save(&record_path)?;
    reporter.warn(format!(
        "port(s) {} were taken while the box was being made: it has {} instead",
        words(&taken),
        words(&record.ports)
    ));
    Ok(())
}

fn words(ports: &[u16]) -> String {
    ports
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Before the agent starts in a container box: where the box reaches each of the
/// user's provider URLs that name this machine (a note), and a warning for one nothing
/// answers at from a container (a server listening on loopback only). The warnings.
pub(crate) fn loopback_urls_said(
    runner: crate::vocab::RunnerKind,
    harness: Harness,
    reporter: &mut dyn Reporter,
) -> Vec<String> {
    let (notes, warnings) = loopback_urls(runner, harness);
    for n in notes {
        reporter.note(n);
    }
    warnings
}

/// [`loopback_urls_said`]'s notes and warnings, not yet said.
fn loopback_urls(runner: crate::vocab::RunnerKind, harness: Harness) -> (Vec<String>, Vec<String>) {
    use crate::runner::oci::host_url;
    match crate::runner::oci::Engine::of(runner) {
        Some(engine) => host_url::reachability(engine, &host_url::user_loopback_urls(harness)),
        None => (Vec::new(), Vec::new()),
    }
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
    // A firewalled box reaches this machine where a provider URL of the user's names it.
    let mut allow = cfg.allowlist.clone();
    if let Some(engine) = crate::runner::oci::Engine::of(record.runner) {
        use crate::runner::oci::host_url;
        allow.extend(host_url::firewall_hosts(
            engine,
            &host_url::user_loopback_urls(harness),
        ));
    }
    let crec = if record.container.is_some() {
        timed(reporter, "container", || {
            crate::runner::oci::ensure_running(repo, layout, record, &allow)
        })?
    } else {
        let engine = crate::runner::oci::resolve_engine(Isolation::Runner(record.runner))?;
        let mut tries = 0;
        loop {
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
                extra_allow: allow.iter().chain(&record.forge_hosts).cloned().collect(),
            };
            // Recorded as soon as it exists, before it starts: an interruption leaves
            // a container that teardown removes and the next `enter` starts.
            match timed(reporter, "container", || spec.create_saying(&ecos)) {
                Ok((crec, said)) => {
                    for w in said {
                        reporter.warn(w);
                    }
                    break crec;
                }
                // A port of the block taken since it was handed out (the engine is
                // the judge): the unstarted container goes, and the box gets another
                // block.
                Err(e) if e.port_taken() && !record.ports.is_empty() && tries < 3 => {
                    tries += 1;
                    other_block(engine, layout, leaf, record, cfg, reporter)?;
                }
                Err(e) => return Err(e.into()),
            }
        }
    };
    record.container = Some(crec.clone());
    record.ecosystems = ecos.clone();
    record.save(&record_path)?;
    if setup {
        let engine = crate::runner::oci::Engine::parse(&crec.engine)
            .ok_or(crate::runner::oci::ContainerError::NoEngine)?;
        if let Some(guard) = guard_path(repo, layout, record) {
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
            (&template.spec().post_create, &template.spec().post_start),
            &mut |name| reporter.stage(&format!("setup: {name}")),
        );
        record.lockfile_hash = setup::lockfile_hash(&record.path, &ecos);
        record.setup_completed = result.is_ok();
        timed(reporter, "record", || record.save(&record_path))?;
        result.map_err(|e| match e {
            crate::runner::oci::ContainerError::Setup {
                step,
                detail,
                missing,
                ..
            } => crate::runner::oci::ContainerError::Setup {
                step,
                detail,
                missing,
                leaf: Some(leaf.to_string()),
                template: template
                    .source()
                    .dir()
                    .is_some()
                    .then(|| template.name().to_string()),
            },
            other => other,
        })?;
        // Setup ran the repository's install scripts inside: nothing of it may have
        // changed the firewall (SPEC §7), and the guard is checked again.
        if record.firewall {
            timed(reporter, "firewall", || {
                crate::runner::oci::firewall::verify_firewall(
                    engine,
                    &crec.name,
                    &layout.firewall_rules_path(leaf),
                )
            })?;
        }
        // Setup ran the repository's install scripts inside: the guard is checked again.
        if let Some(repo) = repo {
            let mut noted = Vec::new();
            super::guard::keep_guard_noting(repo, layout, record, &mut noted);
            for w in noted {
                reporter.warn(w);
            }
        }
    }
    Ok(crec)
}

/// Where the box's guard copy is (the host path, which is also its path inside the
/// container); `None` for a folder box, which has no guard.
fn guard_path(repo: Option<&Repo>, layout: &Layout, record: &Record) -> Option<PathBuf> {
    let hooks = guard::box_hooks_dir(repo?, layout, record)?;
    Some(hooks.join(guard::GUARD_EXE_NAME)).filter(|p| p.is_file())
}
