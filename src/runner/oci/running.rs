//! Keeping a recorded box's container running (`ensure_running`): the hot path asks
//! `/proc`, then at most one `inspect`; a stopped container is started (its firewall
//! applied again, its template's `postStart` run), a removed one made again (its
//! `postCreate` and `postStart` run), and one
//! restarted behind treebox's back gets its firewall again (a restart loses its rules).

use super::container::{observe, ContainerRecord};
use super::engine::Engine;
use super::error::{io_err, ContainerError};
use super::image::Spec;
use crate::git::Repo;
use crate::names::Leaf;
use crate::state::{Layout, Record};
use crate::template;

/// Make sure a recorded container runs: start it when stopped (re-applying the
/// firewall), recreate it when it was removed.
pub fn ensure_running(
    repo: Option<&Repo>,
    layout: &Layout,
    record: &Record,
    cfg_allow: &[String],
) -> Result<ContainerRecord, ContainerError> {
    // The user's entries and, with `--allow-forge`, the forge's hosts.
    let allow: Vec<String> = cfg_allow
        .iter()
        .chain(&record.forge_hosts)
        .cloned()
        .collect();
    let cfg_allow = allow.as_slice();
    let Some(rec) = record.container.as_ref() else {
        return Err(ContainerError::NoEngine);
    };
    let engine = Engine::parse(&rec.engine).ok_or(ContainerError::NoEngine)?;
    // Every program starts through the launcher file: a container made by an earlier
    // version (which passed the launcher as argv) gets it in its mounted env dir.
    if rec.launcher {
        if let Ok(leaf) = Leaf::parse(&record.name) {
            let path = layout.container_launcher_path(&leaf);
            super::launch::keep_launcher(&path).map_err(io_err("could not write", &path))?;
        }
    }
    if crate::runner::oci::running_by_proc(&rec.id, rec.pid) {
        return Ok(rec.clone());
    }
    // The hot path (`run`, `attach`, `enter`): one `inspect`, nothing else, when the
    // container is already running. An engine that does not answer fails here.
    let state = engine.state(&rec.name).map_err(|e| {
        if e.is_not_found() {
            ContainerError::EngineDown {
                engine: rec.engine.clone(),
            }
        } else {
            ContainerError::Engine(e)
        }
    })?;
    if let Some(s) = state.as_ref().filter(|s| s.running) {
        if s.pid == rec.pid && s.id == rec.id {
            return Ok(rec.clone());
        }
        // Running, but restarted behind our back (its first process changed), or
        // never observed (a container just made, whose first process is asked for
        // here): a restart loses the firewall's rules, so apply them again.
        let mut rec = rec.clone();
        if record.firewall {
            let template = template::find(record.template.as_deref().unwrap_or("default"))?;
            keep_firewall(engine, layout, record, &template, cfg_allow)?;
        }
        rec.id = s.id.clone();
        rec.pid = s.pid;
        return Ok(rec);
    }
    let template = template::find(record.template.as_deref().unwrap_or("default"))?;
    match state {
        Some(_) => {
            engine
                .start(&rec.name)
                .output()
                .map_err(ContainerError::Run)?;
            if record.firewall {
                keep_firewall(engine, layout, record, &template, cfg_allow)?;
            }
            let mut rec = rec.clone();
            observe(&mut rec, engine)?;
            let post_start = &template.spec().post_start;
            super::setup::after_start(engine, &rec, &record.path, (&[], post_start))?;
            Ok(rec)
        }
        None => {
            let leaf = Leaf::parse(&record.name).map_err(|_| ContainerError::NoEngine)?;
            // A new container: what the template's `postCreate` put in the old one's own
            // files (outside the box's mounts) is gone, so it runs again, as a dev
            // container's does when its container is rebuilt.
            let hooks = (
                template.spec().post_create.clone(),
                template.spec().post_start.clone(),
            );
            let spec = Spec {
                repo,
                layout,
                leaf: &leaf,
                record,
                engine,
                template,
                harness: record.harness,
                firewall: record.firewall,
                extra_allow: cfg_allow.to_vec(),
            };
            let rec = spec.create(&record.ecosystems)?;
            super::setup::after_start(engine, &rec, &record.path, (&hooks.0, &hooks.1))?;
            Ok(rec)
        }
    }
}

/// Apply a recorded box's firewall and keep the rules for [`super::firewall::verify_firewall`].
fn keep_firewall(
    engine: Engine,
    layout: &Layout,
    record: &Record,
    template: &template::Template,
    allow: &[String],
) -> Result<(), ContainerError> {
    let Some(rec) = record.container.as_ref() else {
        return Ok(());
    };
    let leaf = Leaf::parse(&record.name).map_err(|_| ContainerError::NoEngine)?;
    super::firewall::apply_and_keep(
        engine,
        &rec.name,
        template,
        allow,
        &layout.firewall_rules_path(&leaf),
    )
}
