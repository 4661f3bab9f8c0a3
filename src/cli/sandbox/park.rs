//! `git sandbox park [--idle DUR]`: stop containers nobody has used for a while.
//!
//! A box is idle when no agent session is live and nothing of it — session, status
//! report, record, git's index, HEAD or reflog — has changed for DUR (default 2h). A box seen for the first time is
//! never parked on that pass (it may have been made a moment ago by an older treebox,
//! or just now). A parked box starts again on the next `enter`, `attach` or `run`.
//!
//! Run it from a timer, e.g. cron: `*/15 * * * * git sandbox park`.

use std::time::{Duration, SystemTime};

use clap::Args;
use serde_json::json;

use crate::cli::error::{self, CliError, ErrorKind};
use crate::cli::ui::Ui;
use crate::names::Leaf;
use crate::runner::oci::Engine;
use crate::state::{layout, session, Layout, Record};

#[derive(Debug, Args)]
pub struct ParkArgs {
    /// Idle time before a box is stopped: e.g. 90m, 2h, 1d.
    #[arg(long, value_name = "DUR", default_value = "2h", value_parser = parse_duration)]
    pub idle: Duration,
    /// Print what was parked as JSON.
    #[arg(long)]
    pub json: bool,
}

/// When the box was last used: its session marker, the agent's last status report, its
/// record, and git's own files for the checkout (index, HEAD and its reflog) — in
/// `admin` (a worktree's admin dir), else in the git dir the box's `.git` names.
pub fn last_used(
    layout: &Layout,
    leaf: &Leaf,
    admin: Option<&std::path::Path>,
    box_path: &std::path::Path,
) -> SystemTime {
    let dot_git = box_path.join(".git");
    let git_dir = match admin {
        Some(a) => Some(a.to_path_buf()),
        None if dot_git.is_dir() => Some(dot_git),
        // A worktree's pointer file (read only if it is a regular file).
        None => crate::git::repo::read_plain(&dot_git).and_then(|t| {
            t.trim()
                .strip_prefix("gitdir: ")
                .map(std::path::PathBuf::from)
        }),
    };
    let mtime = |p: &std::path::Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let mut times = vec![
        session::last_activity(&layout.session_path(leaf)),
        crate::container::read_status(layout, leaf).map(|(_, t)| t),
        mtime(&layout.record_path(leaf)),
    ];
    if let Some(g) = git_dir {
        for f in ["index", "HEAD", "logs/HEAD"] {
            times.push(mtime(&g.join(f)));
        }
    }
    times
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// `90s`, `30m`, `2h`, `1d` (a bare number is seconds).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| format!("not a duration: {s:?} (use e.g. 90m, 2h, 1d)"))?;
    let per = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("unknown unit in {s:?} (use s, m, h or d)")),
    };
    // Beyond ~31,000 years a duration means nothing here; refuse it rather than wrap.
    n.checked_mul(per)
        .filter(|s| *s <= 1_000_000_000_000)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("duration too long: {s:?}"))
}

pub fn run(a: ParkArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let _cfg = crate::cli::load_config()?;
    let root = layout::state_root()
        .map_err(|e| CliError::new(ErrorKind::State, e.to_string()))?
        .join("repos");
    let now = SystemTime::now();
    let mut parked = Vec::new();
    let mut first_seen = Vec::new();
    for repo_state in std::fs::read_dir(&root).into_iter().flatten().flatten() {
        let repo_state = repo_state.path();
        for b in std::fs::read_dir(repo_state.join("boxes"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let Ok(Some(record)) = Record::load(&b.path().join("record.json")) else {
                continue;
            };
            let (Some(c), Ok(leaf)) = (record.container.as_ref(), Leaf::parse(&record.name)) else {
                continue;
            };
            let layout = Layout {
                box_root: record
                    .path
                    .parent()
                    .map(|p| p.to_path_buf())
                    .unwrap_or_default(),
                repo_state: repo_state.clone(),
            };
            let seen = layout.box_state(&leaf).join("park.seen");
            if !seen.exists() {
                let _ = std::fs::write(&seen, b"");
                first_seen.push(record.name.clone());
                continue;
            }
            let session_path = layout.session_path(&leaf);
            if session::is_live(&session_path) {
                continue;
            }
            let last = last_used(&layout, &leaf, None, &record.path);
            let idle = now.duration_since(last).unwrap_or_default();
            if idle < a.idle {
                continue;
            }
            let Some(engine) = Engine::parse(&c.engine) else {
                continue;
            };
            match engine.state(&c.name) {
                Ok(Some(s)) if s.running => {}
                _ => continue,
            }
            engine.stop(&c.name).output().map_err(|e| {
                CliError::new(ErrorKind::Park, crate::sanitize::line(&e.to_string()))
            })?;
            ui.info(&format!(
                "parked `{}` (idle {}m)",
                record.name,
                idle.as_secs() / 60
            ));
            parked.push(
                json!({"name": record.name, "repo": record.repo, "idleSeconds": idle.as_secs()}),
            );
        }
    }
    if a.json {
        ui.out_json(&json!({"schemaVersion": 1, "parked": parked, "firstSeen": first_seen}));
    } else if parked.is_empty() {
        ui.info("nothing to park");
    }
    Ok(error::OK)
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("1d").unwrap(), Duration::from_secs(86_400));
        assert!(parse_duration("2x").is_err());
        assert!(parse_duration("h").is_err());
        // No overflow, no wrap-around to a short duration.
        assert!(parse_duration("999999999999999d").is_err());
        assert!(parse_duration("213503982334602d").is_err());
        assert!(parse_duration("99999999999999999999").is_err());
    }
}
