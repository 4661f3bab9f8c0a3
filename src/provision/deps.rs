//! Installing a box's dependencies on the host (SPEC §3): `create`, `enter` and folder
//! boxes run the steps [`super::setup`] plans, with the box's ports in their
//! environment, and turn failures into warnings.

use std::path::{Path, PathBuf};

use super::error::io_err;
use super::rollback::make_writable_and_remove;
use super::{setup, ProvisionError, Reporter};
use crate::config::UserConfig;

/// Install the box's dependencies (SPEC §3): the user's `setup` commands, else one
/// install per detected ecosystem, against the shared caches or throwaway ones
/// (`cold_dir`, the box's [`Layout::cold_cache_dir`] for `--cold`). Failures become
/// warnings; the report says whether every step succeeded.
pub(crate) fn run_setup(
    path: &Path,
    cfg: &UserConfig,
    ports: &[u16],
    cold_dir: Option<PathBuf>,
    reporter: &mut dyn Reporter,
    warnings: &mut Vec<String>,
) -> Result<(setup::SetupReport, Vec<setup::Ecosystem>), ProvisionError> {
    let ecos = setup::detect(path);
    let cache = match &cold_dir {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(io_err("could not create", d))?;
            setup::CacheMode::Cold(d.clone())
        }
        None => setup::CacheMode::Shared,
    };
    // The box's block of ports, as its agent will have it (a setup step may write it
    // into a config).
    let steps = setup::plan_steps(path, &ecos, cfg.setup.as_deref(), &cache)
        .into_iter()
        .map(|(name, cmd)| {
            let cmd = crate::ports::env(ports, false)
                .into_iter()
                .fold(cmd, |c, (k, v)| c.env(k, v));
            (name, cmd)
        })
        .collect();
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
