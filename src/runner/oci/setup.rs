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
        let key = hex::encode(h.finalize());
        crate::state::layout::guard_run_marker(&key).ok()
    });
    if marker.as_ref().is_some_and(|m| m.is_file()) {
        return Ok(());
    }
    let argv = [guard.to_string_lossy().into_owned(), "--version".into()];
    let out = super::agent_exec(engine, rec, true, box_path, &[], super::Io::Held, &argv)
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
/// The last lines a failed step printed (stderr, else stdout: docker prints its own
/// "executable file not found" there), and its status; `missing`: the program the
/// image lacks ([`program_missing`]), which says it all.
fn failure_detail(missing: Option<&str>, out: &std::process::Output) -> String {
    let pick = |b: &[u8]| {
        let text = String::from_utf8_lossy(b).into_owned();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(5)..].join(" / ")
    };
    let text = match pick(&out.stderr) {
        t if t.is_empty() => pick(&out.stdout),
        t => t,
    };
    if let Some(program) = missing {
        return format!(
            "`{program}` is not installed in the box's image ({})",
            out.status
        );
    }
    if text.is_empty() {
        format!("no output ({})", out.status)
    } else {
        format!("{text} ({})", out.status)
    }
}

/// Is there no such program in the container? The launcher's `setpriv` exits 127 and
/// says `failed to execute …: No such file or directory`; an engine running the program
/// itself (a container of an earlier version) exits 126 or 127 and says `executable
/// file not found`.
fn program_missing(out: &std::process::Output) -> bool {
    let said = |b: &[u8]| {
        let t = String::from_utf8_lossy(b);
        t.contains("executable file not found")
            || (t.contains("setpriv: failed to execute") && t.contains("No such file or directory"))
    };
    matches!(out.status.code(), Some(126 | 127)) && (said(&out.stdout) || said(&out.stderr))
}

/// A template's `postCreate` or `postStart` commands as steps (`sh -c`, as the agent, in
/// the box), `${containerWorkspaceFolder}` (and its `Basename`) in them replaced by the
/// box's path, quoted: a dev container's commands name the workspace so.
pub fn hook_steps(
    key: &str,
    commands: &[String],
    box_path: &Path,
) -> Vec<(String, Vec<String>, EnvVars)> {
    let path = box_path.to_string_lossy();
    let base = box_path
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    commands
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let c = c
                .replace(
                    "${containerWorkspaceFolderBasename}",
                    &crate::cmd::quote(&base),
                )
                .replace("${containerWorkspaceFolder}", &crate::cmd::quote(&path));
            (
                format!("{key}[{i}]"),
                vec!["sh".into(), "-c".into(), c],
                vec![],
            )
        })
        .collect()
}

/// Run the template's `postCreate` commands (`post_create`: a container just made again,
/// whose own files are new) and then its `postStart` ones in a container just started,
/// as the agent in the box; the first that fails stops them.
pub fn after_start(
    engine: Engine,
    rec: &ContainerRecord,
    box_path: &Path,
    (post_create, post_start): (&[String], &[String]),
) -> Result<(), ContainerError> {
    setup_inside(
        engine,
        rec,
        box_path,
        Vec::new(),
        (post_create, post_start),
        &mut |_| {},
    )
}

/// Run `steps` (and the template's commands) in the box's container, as the agent,
/// each named to `on_step` first; the first that fails stops them.
pub fn setup_inside(
    engine: Engine,
    rec: &ContainerRecord,
    box_path: &Path,
    steps: Vec<(String, Cmd)>,
    (post_create, post_start): (&[String], &[String]),
    on_step: &mut dyn FnMut(&str),
) -> Result<(), ContainerError> {
    let mut steps: Vec<(String, Vec<String>, EnvVars)> = steps
        .into_iter()
        .map(|(name, cmd)| (name, cmd.argv(), cmd.env_strings()))
        .collect();
    steps.extend(hook_steps("postCreate", post_create, box_path));
    steps.extend(hook_steps("postStart", post_start, box_path));
    for (name, argv, env) in steps {
        on_step(&name);
        let out = super::agent_exec(engine, rec, true, box_path, &env, super::Io::Held, &argv)
            .output_any()
            .map_err(ContainerError::Engine)?;
        if !out.status.success() {
            let missing = program_missing(&out).then(|| argv.first().cloned().unwrap_or_default());
            return Err(ContainerError::Setup {
                detail: crate::sanitize::line(&failure_detail(missing.as_deref(), &out)),
                missing,
                step: name,
                leaf: None,
                template: None,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn output(code: i32, stdout: &str, stderr: &str) -> std::process::Output {
        std::process::Output {
            status: std::process::ExitStatus::from_raw(code << 8),
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
        }
    }

    #[test]
    fn a_program_the_image_lacks_is_named() {
        // docker prints it on stdout, podman on stderr.
        for out in [
            output(126, "OCI runtime exec failed: exec failed: unable to start container process: exec: \"uv\": executable file not found in $PATH: unknown\n", ""),
            output(127, "", "Error: runc: runc create failed: unable to start container process: exec: \"uv\": executable file not found in $PATH: OCI runtime attempted to invoke a command that was not found\n"),
            // The launcher's `setpriv`, as a container of this version says it.
            output(127, "", "setpriv: failed to execute uv: No such file or directory\n"),
        ] {
            assert!(program_missing(&out));
            assert!(failure_detail(Some("uv"), &out).starts_with("`uv` is not installed"));
        }
    }

    #[test]
    fn a_failing_step_shows_its_last_lines_from_either_stream() {
        let d = failure_detail(None, &output(1, "", "a\n\nb\nc\nd\ne\nf\n"));
        assert_eq!(d, "b / c / d / e / f (exit status: 1)");
        let d = failure_detail(None, &output(2, "only stdout\n", ""));
        assert_eq!(d, "only stdout (exit status: 2)");
        let d = failure_detail(None, &output(3, "", ""));
        assert_eq!(d, "no output (exit status: 3)");
        assert!(!program_missing(&output(127, "", "sh: 1: uv: not found\n")));
    }
}
