//! `git treebox doctor`: check the machine and the repository.
//!
//! The checks themselves are [`crate::doctor`]; this prints them — one line per check
//! on stdout (the answer), hints indented beneath, or one JSON document
//! (`docs/schema/doctor.schema.json`) — and picks the exit code: 1 when any check
//! failed (git, repo, runner), else 0; advisories never fail. Outside a repository
//! doctor still runs and reports `repo` as failed.

use clap::Args;

use super::error::{self, CliError};
use super::json::{DoctorCheck, DoctorDocument, Document, V1};
use super::ui::Ui;
use crate::doctor::{self, Check, Status};
use crate::sanitize;

#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Check this runner instead of the configured one [default: auto: an engine on a
    /// machine marked as a runner, else the host].
    #[arg(long, value_parser = ["host", "docker", "podman", "auto"])]
    pub isolation: Option<String>,
}

pub fn run(args: DoctorArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let cfg = super::load_config()?;
    let cwd = crate::cli::cwd()?;
    let checks = doctor::run_checks(&cwd, &cfg, args.isolation.as_deref());
    let ok = !checks.iter().any(|c| c.status == Status::Fail);
    if args.json {
        ui.out_json(&document(&checks));
    } else {
        for line in lines(&checks) {
            ui.out(&line);
        }
    }
    Ok(if ok { error::OK } else { error::RUNTIME })
}

/// The `doctor` result document, ready to print.
pub fn document(checks: &[Check]) -> serde_json::Value {
    DoctorDocument {
        schema_version: V1,
        ok: !checks.iter().any(|c| c.status == Status::Fail),
        checks: checks
            .iter()
            .map(|c| DoctorCheck {
                name: c.name,
                status: c.status.as_str(),
                summary: &c.summary,
                hint: c.hint.as_deref(),
            })
            .collect(),
    }
    .to_value()
}

/// The human report: `ok    git             git version 2.47.3`, hints beneath.
pub fn lines(checks: &[Check]) -> Vec<String> {
    let width = checks.iter().map(|c| c.name.len()).max().unwrap_or(0) + 1;
    let mut out = Vec::new();
    for c in checks {
        let label = match c.status {
            Status::Ok => "ok",
            Status::Advisory => "warn",
            Status::Fail => "FAIL",
        };
        out.push(format!(
            "{label:<5} {:<width$} {}",
            c.name,
            sanitize::line(&c.summary)
        ));
        if let Some(h) = &c.hint {
            out.push(format!(
                "{:<6}{:<width$} hint: {}",
                "",
                "",
                sanitize::line(h)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Check> {
        vec![
            Check {
                name: "git",
                status: Status::Ok,
                summary: "git version 2.47.3".into(),
                hint: None,
            },
            Check {
                name: "origin",
                status: Status::Advisory,
                summary: "origin: no answer\u{1b}[2J".into(),
                hint: Some("git fetch origin".into()),
            },
        ]
    }

    #[test]
    fn human_lines() {
        assert_eq!(
            lines(&sample()),
            [
                "ok    git     git version 2.47.3",
                "warn  origin  origin: no answer\\u{1b}[2J",
                "              hint: git fetch origin",
            ]
        );
    }

    #[test]
    fn json_document() {
        let doc = document(&sample());
        assert_eq!(doc["ok"], true);
        assert_eq!(doc["checks"][1]["status"], "advisory");
        assert!(doc["checks"][0].get("hint").is_none());
        let mut failing = sample();
        failing[0].status = Status::Fail;
        assert_eq!(document(&failing)["ok"], false);
    }
}
