//! What runs inside a fresh container at create time: the check that the image can
//! run the guard, then the setup steps (the ecosystems' installs or the user's `setup`
//! commands, then the template's `postCreate`). Fails loudly: the first failing step
//! is an error.
//!
//! Called by `provision` when it brings a box's container up. The steps are planned
//! by the caller (`provision::setup::plan_steps`) and handed in as commands: the
//! runner does not know how an ecosystem installs.

use std::path::Path;

use super::container::ContainerRecord;
use super::engine::Engine;
use super::error::ContainerError;
use super::EnvVars;
use crate::cmd::Cmd;

/// Can the box's image run the guard (a glibc ≥ 2.34 program, copied from the host)?
/// Every hook of the box is the guard, and git aborts a commit whose
/// `reference-transaction` hook cannot start, so an image without it is refused at
/// create time, with the reason, instead of failing on the agent's first commit.
///
/// Every container of one image loads the guard alike, so the answer is kept per image
/// and guard build (a marker in the state dir): only the first box of an image pays
/// the extra `exec`.
pub fn check_guard(
    engine: Engine,
    rec: &ContainerRecord,
    box_path: &Path,
    guard: &Path,
) -> Result<(), ContainerError> {
    let marker = std::fs::read(guard).ok().and_then(|bytes| {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(rec.engine.as_bytes());
        h.update([0]);
        h.update(rec.image.as_bytes());
        h.update([0]);
        h.update(&bytes);
        let key: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        crate::state::layout::guard_run_marker(&key).ok()
    });
    if marker.as_ref().is_some_and(|m| m.is_file()) {
        return Ok(());
    }
    let argv = [guard.to_string_lossy().into_owned(), "--version".into()];
    let out = engine
        .exec(&rec.name, &rec.user, box_path, &[], false, &argv)
        .output_any()
        .map_err(ContainerError::Engine)?;
    if out.status.success() {
        if let Some(m) = marker {
            if let Some(dir) = m.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = std::fs::write(&m, b"");
        }
        return Ok(());
    }
    let text = String::from_utf8_lossy(&out.stderr);
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Err(ContainerError::GuardCannotRun {
        detail: crate::sanitize::line(&format!("{last} ({})", out.status)),
    })
}

/// Run setup inside the container: `steps` (the ecosystems' installs against the
/// mounted caches, or the user's `setup` commands, as the caller planned them; only
/// each command's argv and environment are used), then the template's `postCreate`.
/// Fails loudly: the first failing step is an error.
pub fn setup_inside(
    engine: Engine,
    rec: &ContainerRecord,
    box_path: &Path,
    steps: Vec<(String, Cmd)>,
    post_create: &[String],
    on_step: &mut dyn FnMut(&str),
) -> Result<(), ContainerError> {
    let mut steps: Vec<(String, Vec<String>, EnvVars)> = steps
        .into_iter()
        .map(|(name, cmd)| (name, cmd.argv(), cmd.env_strings()))
        .collect();
    for (i, c) in post_create.iter().enumerate() {
        steps.push((
            format!("postCreate[{i}]"),
            vec!["sh".into(), "-c".into(), c.clone()],
            vec![],
        ));
    }
    for (name, argv, env) in steps {
        on_step(&name);
        let out = engine
            .exec(&rec.name, &rec.user, box_path, &env, false, &argv)
            .output_any()
            .map_err(ContainerError::Engine)?;
        if !out.status.success() {
            let text = String::from_utf8_lossy(&out.stderr);
            let detail: Vec<&str> = text.lines().rev().take(5).collect();
            let detail: Vec<&str> = detail.into_iter().rev().collect();
            return Err(ContainerError::Setup {
                step: name,
                detail: crate::sanitize::line(&format!("{} ({})", detail.join(" / "), out.status)),
            });
        }
    }
    Ok(())
}
