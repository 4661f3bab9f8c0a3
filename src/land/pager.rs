//! The user's own pager for `git treebox diff` on a terminal, chosen as git chooses
//! it — `GIT_PAGER`, then `core.pager` from the user's own config (global, XDG or
//! system: never the repository's, which a worktree box can write), then `PAGER`, then
//! `less` — and given text already made plain ([`crate::sanitize::text`]), so a pager
//! that passes escape sequences through (`less -R`, delta) still cannot be driven by a
//! box's bytes. `cat` or an empty value means no pager. Callers: `cli/diff.rs`.

use std::io::Write;
use std::process::{Command, Stdio};

/// The pager command line to use, `None` for none.
pub fn user_pager() -> Option<String> {
    let env = |k: &str| std::env::var(k).ok();
    let chosen = env("GIT_PAGER")
        .or_else(user_level_pager)
        .or_else(|| env("PAGER"))
        .unwrap_or_else(|| "less".into());
    let trimmed = chosen.trim();
    (!trimmed.is_empty() && trimmed != "cat").then(|| trimmed.to_string())
}

/// `core.pager` as the user's own config files set it (the last one git would read of
/// system, XDG and global), never a repository's.
fn user_level_pager() -> Option<String> {
    let cfg = git2::Config::open_default().ok()?;
    let mut found = None;
    for level in [
        git2::ConfigLevel::System,
        git2::ConfigLevel::XDG,
        git2::ConfigLevel::Global,
    ] {
        if let Some(v) = cfg
            .open_level(level)
            .ok()
            .and_then(|c| c.get_string("core.pager").ok())
        {
            found = Some(v);
        }
    }
    found
}

/// Show `text` through `pager` (run by `sh -c`, as git runs it, with `LESS=FRX` and
/// `LV=-c` unless the user set them); returns once the pager has quit.
pub fn page(pager: &str, text: &str) -> std::io::Result<()> {
    let mut c = Command::new("sh");
    c.arg("-c").arg(pager).stdin(Stdio::piped());
    if std::env::var_os("LESS").is_none() {
        c.env("LESS", "FRX");
    }
    if std::env::var_os("LV").is_none() {
        c.env("LV", "-c");
    }
    let mut child = c.spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        // A pager that quits early closes the pipe: not a failure.
        let _ = stdin.write_all(text.as_bytes());
        let _ = stdin.write_all(b"\n");
    }
    child.wait()?;
    Ok(())
}
