//! The `harness.claude` and `harness.codex` checks: is each harness CLI on `PATH`
//! (or where the config's `harnesses.<h>.program` points), and does its login dir exist?
//! A missing CLI is only an advisory: it can be installed later.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{Check, Status};
use crate::config::UserConfig;
use crate::harness::Harness;

/// The harness's login (config) dir: `$CLAUDE_CONFIG_DIR` / `$CODEX_HOME` when set,
/// else `~/.claude` / `~/.codex`.
pub fn login_dir(h: Harness, env_override: Option<&OsStr>, home: Option<&Path>) -> Option<PathBuf> {
    if let Some(o) = env_override.filter(|o| !o.is_empty()) {
        return Some(PathBuf::from(o));
    }
    let leaf = match h {
        Harness::Claude => ".claude",
        Harness::Codex => ".codex",
    };
    home.map(|h| h.join(leaf))
}

fn install_hint(h: Harness) -> &'static str {
    match h {
        Harness::Claude => "npm install -g @anthropic-ai/claude-code",
        Harness::Codex => "npm install -g @openai/codex",
    }
}

fn login_hint(h: Harness) -> &'static str {
    match h {
        Harness::Claude => "claude",
        Harness::Codex => "codex login",
    }
}

fn harness_name(h: Harness) -> &'static str {
    match h {
        Harness::Claude => "harness.claude",
        Harness::Codex => "harness.codex",
    }
}

pub(super) fn check_harness(h: Harness, is_default: bool, cfg: &UserConfig, cwd: &Path) -> Check {
    let program = cfg.harness_program(h);
    let found = crate::cmd::find_program(&program, std::env::var_os("PATH").as_deref(), cwd);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let login = login_dir(
        h,
        std::env::var_os(h.login_env()).as_deref(),
        home.as_deref(),
    );
    harness_finding(h, is_default, &program, found.as_deref(), login.as_deref())
}

/// The verdict on one harness from what was found. A missing CLI is only an advisory,
/// even for the default harness: it can be installed later.
fn harness_finding(
    h: Harness,
    is_default: bool,
    program: &str,
    found: Option<&Path>,
    login: Option<&Path>,
) -> Check {
    let name = harness_name(h);
    let default = if is_default {
        " (the default harness)"
    } else {
        ""
    };
    let Some(found) = found else {
        let hint = if program == h.as_str() {
            install_hint(h).to_string()
        } else {
            format!(
                "Install {h}, or fix `harnesses.{h}.program` in the config (now {})",
                crate::cmd::quote(program)
            )
        };
        return Check::new(
            name,
            Status::Advisory,
            format!("`{program}` not found on PATH{default}"),
        )
        .hint(hint);
    };
    match login {
        Some(dir) if dir.is_dir() => Check::new(
            name,
            Status::Ok,
            format!("{}; login dir {}{default}", found.display(), dir.display()),
        ),
        Some(dir) => Check::new(
            name,
            Status::Advisory,
            format!(
                "{}; no login dir at {} (not logged in yet?){default}",
                found.display(),
                dir.display()
            ),
        )
        .hint(login_hint(h)),
        None => Check::new(
            name,
            Status::Advisory,
            format!(
                "{}; HOME is not set, so its login dir is unknown{default}",
                found.display()
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn login_dirs() {
        let home = Path::new("/home/u");
        assert_eq!(
            login_dir(Harness::Claude, None, Some(home)),
            Some(PathBuf::from("/home/u/.claude"))
        );
        assert_eq!(
            login_dir(Harness::Codex, None, Some(home)),
            Some(PathBuf::from("/home/u/.codex"))
        );
        assert_eq!(
            login_dir(Harness::Codex, Some(OsStr::new("/x/codex")), Some(home)),
            Some(PathBuf::from("/x/codex"))
        );
        assert_eq!(
            login_dir(Harness::Claude, Some(OsStr::new("")), Some(home)),
            Some(PathBuf::from("/home/u/.claude"))
        );
        assert_eq!(login_dir(Harness::Claude, None, None), None);
    }

    #[test]
    fn harness_findings() {
        let d = tempfile::tempdir().unwrap();
        let missing = harness_finding(Harness::Codex, true, "codex", None, None);
        assert_eq!(missing.status, Status::Advisory);
        assert!(missing.summary.contains("default"), "{missing:?}");
        assert_eq!(missing.hint.as_deref(), Some(install_hint(Harness::Codex)));
        let other = harness_finding(Harness::Claude, false, "claude", None, None);
        assert!(!other.summary.contains("default"), "{other:?}");
        let bin = d.path().join("claude");
        let ok = harness_finding(Harness::Claude, false, "claude", Some(&bin), Some(d.path()));
        assert_eq!(ok.status, Status::Ok);
        let no_login = harness_finding(
            Harness::Claude,
            false,
            "claude",
            Some(&bin),
            Some(&d.path().join(".claude")),
        );
        assert_eq!(no_login.status, Status::Advisory);
        assert_eq!(no_login.hint.as_deref(), Some("claude"));
    }
}
