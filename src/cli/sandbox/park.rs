//! `git sandbox park [--idle DUR]`: stop containers nobody has used for a while.
//!
//! A box is idle when no agent session is live and nothing of it — session, status
//! report, container start, record, git's index, HEAD or reflog — has changed for DUR
//! (default 2h). A box
//! seen for the first time is never parked on that pass. A parked box starts again on
//! the next `enter`, `attach` or `run`. The pass itself is [`crate::maintain::park`].
//!
//! `--install` makes it automatic: a systemd user timer running it every 15 minutes,
//! or, where systemd does not answer, the crontab line to add ([`crate::maintain::timer`]).

use std::time::{Duration, SystemTime};

use clap::Args;

use crate::cli::error::{self, CliError, ErrorKind};
use crate::cli::json::{Document, ParkDocument, Parked, V1};
use crate::cli::ui::Ui;
use crate::maintain::park;

#[derive(Debug, Args)]
pub struct ParkArgs {
    /// Idle time before a box is stopped: e.g. 90m, 2h, 1d.
    #[arg(long, value_name = "DUR", default_value = "2h", value_parser = parse_duration)]
    pub idle: Duration,
    /// Print what was parked as JSON.
    #[arg(long)]
    pub json: bool,
    /// Park automatically: install a systemd user timer that runs this every 15 minutes
    /// (with this --idle), or print the crontab line where systemd does not answer.
    #[arg(long, conflicts_with = "json")]
    pub install: bool,
}

/// A duration as `--idle` takes it, in its largest whole unit.
pub(super) fn duration_word(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0 => "0".into(),
        _ if s.is_multiple_of(86_400) => format!("{}d", s / 86_400),
        _ if s.is_multiple_of(3600) => format!("{}h", s / 3600),
        _ if s.is_multiple_of(60) => format!("{}m", s / 60),
        _ => format!("{s}s"),
    }
}

fn install(a: &ParkArgs, ui: &mut Ui) -> Result<i32, CliError> {
    use crate::maintain::timer::{self, Installed, TimerError};
    let cmd = timer::ParkCommand::current(&duration_word(a.idle));
    let dir = timer::unit_dir().map_err(|e| CliError::of(ErrorKind::State, e))?;
    let done = timer::install(&dir, &cmd, timer::systemd_answers()).map_err(|e| match e {
        TimerError::Foreign { ref path } => {
            let p = crate::cmd::quote(&path.to_string_lossy());
            CliError::of(ErrorKind::PathTaken, e).hint(format!(
                "To let treebox install its own, move it aside: `mv {p} {p}.bak`, then run `git sandbox park --install` again."
            ))
        }
        e @ TimerError::NoConfigDir => CliError::of(ErrorKind::State, e),
        e @ TimerError::Write { .. } => CliError::of(ErrorKind::Io, e),
        e @ TimerError::Systemctl(_) => CliError::of(ErrorKind::Park, e)
            .hint(format!("`systemctl --user status {}` says why.", timer::TIMER)),
    })?;
    match done {
        Installed::Systemd { dir, changed } => {
            ui.info(&format!(
                "{} `{}` (in {}): `git sandbox park --idle {}` runs every {} minutes",
                if changed {
                    "installed"
                } else {
                    "already installed"
                },
                timer::TIMER,
                dir.display(),
                cmd.idle,
                timer::EVERY_MINUTES
            ));
            ui.info(&format!(
                "To see it: systemctl --user list-timers {}",
                timer::TIMER
            ));
        }
        Installed::Cron { line } => {
            ui.info("systemd does not answer here; to park automatically, add this line to your crontab (`crontab -e`):");
            ui.out(&line);
        }
    }
    Ok(error::OK)
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
    if a.install {
        return install(&a, ui);
    }
    let report = park::park_idle(a.idle, SystemTime::now(), |p| {
        ui.info(&format!(
            "parked `{}` (idle {}m)",
            p.name,
            p.idle.as_secs() / 60
        ))
    })
    .map_err(|e| match e {
        park::ParkError::State(e) => CliError::of(ErrorKind::State, e),
        e @ park::ParkError::Stop(_) => CliError::of(ErrorKind::Park, e),
    })?;
    let parked: Vec<_> = report
        .parked
        .iter()
        .map(|p| Parked {
            name: p.name.clone(),
            repo: p.repo.clone(),
            idle_seconds: p.idle.as_secs(),
        })
        .collect();
    let first_seen = report.first_seen;
    if a.json {
        let doc = ParkDocument {
            schema_version: V1,
            parked: &parked,
            first_seen: &first_seen,
        };
        ui.out_json(&doc.to_value());
    } else if parked.is_empty() {
        ui.info("nothing to park");
    }
    Ok(error::OK)
}

#[cfg(test)]
mod tests {
    use super::{duration_word, parse_duration};
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
        for w in ["90s", "30m", "2h", "1d", "0"] {
            assert_eq!(duration_word(parse_duration(w).unwrap()), w);
        }
    }
}
