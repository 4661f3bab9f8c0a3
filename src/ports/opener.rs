//! Opening a box's URL in the desktop's browser (`git treebox open`), where there is
//! one: the program is the desktop's own opener (`xdg-open`, macOS's `open`), given the
//! URL as one argument (never through a shell), and not waited for.

use std::io::IsTerminal;

/// The opener to run, if this session has a desktop: `display` (DISPLAY or
/// WAYLAND_DISPLAY set), `ssh` (SSH_CONNECTION or SSH_TTY set: the display would be
/// the far side's), `terminal` (stdout is one: a script capturing the URL gets it
/// printed, not a browser), and the opener found on PATH.
pub fn choose(display: bool, ssh: bool, terminal: bool, found: Option<&str>) -> Option<&str> {
    let desktop = cfg!(target_os = "macos") || display;
    (desktop && !ssh && terminal).then_some(found).flatten()
}

/// [`choose`] for this process.
pub fn detect() -> Option<&'static str> {
    let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    let program = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let found = crate::cmd::on_path(program).then_some(program);
    choose(
        set("DISPLAY") || set("WAYLAND_DISPLAY"),
        set("SSH_CONNECTION") || set("SSH_TTY"),
        std::io::stdout().is_terminal(),
        found,
    )
}

/// Start `program URL`, its output discarded; whether it started.
pub fn open(program: &str, url: &str) -> bool {
    std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_browser_only_on_this_desktop_and_for_a_person() {
        let xdg = Some("xdg-open");
        if !cfg!(target_os = "macos") {
            assert_eq!(choose(true, false, true, xdg), xdg);
            assert_eq!(choose(false, false, true, xdg), None, "no display");
        }
        assert_eq!(choose(true, true, true, xdg), None, "over SSH");
        assert_eq!(choose(true, false, false, xdg), None, "in a script");
        assert_eq!(choose(true, false, true, None), None, "no opener");
    }
}
