//! Automatic parking (SPEC §7): `git sandbox park --install` installs a systemd user
//! timer that runs `git-sandbox park` every 15 minutes, or — where systemd does not
//! answer — gives the crontab line that does the same.
//!
//! Invariants: the unit files are written (atomically) under the XDG config dir's
//! `systemd/user/` only when the user's systemd answers; an existing unit file that
//! treebox did not write is never replaced (refused before anything is written);
//! installing twice changes nothing. The service carries the `PATH` (and XDG dirs) of
//! the command that installed it, so the timer finds the same engines and the same
//! boxes. Called by `cli/sandbox/park.rs`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cmd::Cmd;
use crate::state::atomic;

/// The units' names.
pub const SERVICE: &str = "treebox-park.service";
pub const TIMER: &str = "treebox-park.timer";
/// How often the pass runs.
pub const EVERY_MINUTES: u32 = 15;
/// The first line of every unit file treebox writes: what makes it treebox's to replace.
const MARKER: &str = "# Written by `git sandbox park --install` (treebox).";

/// What `--install` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    /// The units are in place and the timer is enabled and started. `changed`: a file
    /// was written (false when they were already as they should be).
    Systemd { dir: PathBuf, changed: bool },
    /// systemd does not answer here: nothing was written; this crontab line parks.
    Cron { line: String },
}

#[derive(Debug, thiserror::Error)]
pub enum TimerError {
    #[error("cannot find the config directory: set HOME or XDG_CONFIG_HOME")]
    NoConfigDir,
    #[error("{} exists and was not written by treebox", path.display())]
    Foreign { path: PathBuf },
    #[error("could not write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("systemd would not enable the timer")]
    Systemctl(#[source] crate::cmd::CmdError),
}

/// The command the timer runs: this `git-sandbox`, by absolute path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParkCommand {
    pub program: PathBuf,
    pub idle: String,
    /// `PATH`, `XDG_STATE_HOME`, `XDG_CONFIG_HOME` as the installing command had them.
    pub env: Vec<(String, String)>,
}

impl ParkCommand {
    /// `git-sandbox park --idle IDLE`, from this executable (the `git-sandbox` beside
    /// it when this is `git-treebox`) and this process's environment.
    pub fn current(idle: &str) -> ParkCommand {
        let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("git-sandbox"));
        let program = exe.with_file_name("git-sandbox");
        let program = if program.is_file() { program } else { exe };
        let env = ["PATH", "XDG_STATE_HOME", "XDG_CONFIG_HOME"]
            .iter()
            .filter_map(|k| {
                let v = std::env::var(k).ok().filter(|v| !v.is_empty())?;
                Some((k.to_string(), v))
            })
            .collect();
        ParkCommand {
            program,
            idle: idle.to_string(),
            env,
        }
    }
}

/// `systemd/user` under the XDG config dir.
pub fn unit_dir() -> Result<PathBuf, TimerError> {
    xdg::BaseDirectories::new()
        .get_config_home()
        .map(|d| d.join("systemd/user"))
        .ok_or(TimerError::NoConfigDir)
}

/// A word for a systemd unit line: double-quoted, `%` and `$` doubled (systemd
/// expands both), `\` and `"` escaped.
fn systemd_word(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '%' => out.push_str("%%"),
            '$' => out.push_str("$$"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The service unit's text.
pub fn service_unit(cmd: &ParkCommand) -> String {
    let mut s = format!(
        "{MARKER}\n[Unit]\nDescription=Park idle treebox containers (git sandbox park)\n\n[Service]\nType=oneshot\n"
    );
    for (k, v) in &cmd.env {
        s.push_str(&format!(
            "Environment={}\n",
            systemd_word(&format!("{k}={v}"))
        ));
    }
    s.push_str(&format!(
        "ExecStart={} park --idle {}\n",
        systemd_word(&cmd.program.to_string_lossy()),
        systemd_word(&cmd.idle)
    ));
    s
}

/// The timer unit's text.
pub fn timer_unit() -> String {
    format!(
        "{MARKER}\n[Unit]\nDescription=Park idle treebox containers every {EVERY_MINUTES} minutes\n\n[Timer]\nOnBootSec={EVERY_MINUTES}min\nOnUnitActiveSec={EVERY_MINUTES}min\nPersistent=true\n\n[Install]\nWantedBy=timers.target\n"
    )
}

/// The crontab line for a machine without systemd (`%` is special to cron).
pub fn crontab_line(cmd: &ParkCommand) -> String {
    let env: Vec<String> = cmd
        .env
        .iter()
        .map(|(k, v)| format!("{k}={}", crate::cmd::quote(v)))
        .collect();
    let line = format!(
        "*/{EVERY_MINUTES} * * * * {}{}{} park --idle {} >/dev/null 2>&1",
        env.join(" "),
        if env.is_empty() { "" } else { " " },
        crate::cmd::quote(&cmd.program.to_string_lossy()),
        crate::cmd::quote(&cmd.idle)
    );
    line.replace('%', "\\%")
}

/// Does the user's systemd answer (`systemctl --user show-environment`, 5 s at most)?
pub fn systemd_answers() -> bool {
    Cmd::new("systemctl")
        .args(["--user", "show-environment"])
        .status_within(Duration::from_secs(5))
        .is_ok_and(|s| s.is_some_and(|s| s.success()))
}

/// Install the timer in `dir` when systemd answers (`systemd`), else give the crontab
/// line. A unit file there that treebox did not write is refused before anything is
/// written.
pub fn install(dir: &Path, cmd: &ParkCommand, systemd: bool) -> Result<Installed, TimerError> {
    if !systemd {
        return Ok(Installed::Cron {
            line: crontab_line(cmd),
        });
    }
    let files = [(SERVICE, service_unit(cmd)), (TIMER, timer_unit())];
    for (name, _) in &files {
        let path = dir.join(name);
        match std::fs::symlink_metadata(&path) {
            Err(_) => {}
            Ok(m) if m.is_file() => {
                let ours =
                    std::fs::read_to_string(&path).is_ok_and(|t| t.lines().next() == Some(MARKER));
                if !ours {
                    return Err(TimerError::Foreign { path });
                }
            }
            Ok(_) => return Err(TimerError::Foreign { path }),
        }
    }
    let mut changed = false;
    std::fs::create_dir_all(dir).map_err(|source| TimerError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    for (name, text) in &files {
        let path = dir.join(name);
        if std::fs::read_to_string(&path).is_ok_and(|t| t == *text) {
            continue;
        }
        atomic::write(&path, text.as_bytes(), 0o644)
            .map_err(|source| TimerError::Write { path, source })?;
        changed = true;
    }
    for args in [
        &["--user", "daemon-reload"][..],
        &["--user", "enable", "--now", TIMER],
    ] {
        Cmd::new("systemctl")
            .args(args)
            .output()
            .map_err(TimerError::Systemctl)?;
    }
    Ok(Installed::Systemd {
        dir: dir.to_path_buf(),
        changed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd() -> ParkCommand {
        ParkCommand {
            program: "/opt/tb %d/git-sandbox".into(),
            idle: "2h".into(),
            env: vec![("PATH".into(), "/usr/bin:/a$b".into())],
        }
    }

    #[test]
    fn units_run_this_binary_with_the_installing_path() {
        let s = service_unit(&cmd());
        assert!(s.starts_with(MARKER));
        assert!(s.contains("Type=oneshot\n"), "{s}");
        assert!(s.contains("Environment=\"PATH=/usr/bin:/a$$b\"\n"), "{s}");
        assert!(
            s.contains("ExecStart=\"/opt/tb %%d/git-sandbox\" park --idle \"2h\"\n"),
            "{s}"
        );
        let t = timer_unit();
        assert!(t.contains("OnUnitActiveSec=15min\n") && t.contains("WantedBy=timers.target"));
    }

    #[test]
    fn crontab_line_escapes_percent() {
        assert_eq!(
            crontab_line(&cmd()),
            "*/15 * * * * PATH='/usr/bin:/a$b' '/opt/tb \\%d/git-sandbox' park --idle 2h >/dev/null 2>&1"
        );
    }

    #[test]
    fn without_systemd_nothing_is_written() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("systemd/user");
        let r = install(&dir, &cmd(), false).unwrap();
        assert!(matches!(r, Installed::Cron { .. }));
        assert!(!dir.exists());
    }

    #[test]
    fn a_foreign_unit_is_refused_before_writing() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().to_path_buf();
        std::fs::write(dir.join(TIMER), "[Timer]\n").unwrap();
        let r = install(&dir, &cmd(), true);
        assert!(matches!(r, Err(TimerError::Foreign { .. })), "{r:?}");
        assert!(!dir.join(SERVICE).exists());
        assert_eq!(
            std::fs::read_to_string(dir.join(TIMER)).unwrap(),
            "[Timer]\n"
        );
    }
}
