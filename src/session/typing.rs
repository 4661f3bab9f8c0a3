//! Typing a prompt into a box's agent, as a person pasting it and pressing Enter
//! would: the MCP server's `box_send` (and `box_create`'s first prompt).
//!
//! The text goes through a tmux paste buffer of its own, pasted with bracket control
//! codes around it when the agent asked for bracketed paste (Claude Code and Codex
//! both do), so a newline inside it is part of the prompt, not an early Enter; then a
//! separate Enter submits it. Nothing in the text is read as a key name or an escape:
//! [`check`] refuses every control character but newline and tab before anything is
//! sent. A pane a person left in copy mode is taken out of it first, or the paste
//! would go to the mode instead of the agent.

use std::time::Duration;

use super::{Session, SessionError};
use crate::cmd::Cmd;

/// The longest prompt taken, in bytes.
pub const MAX_PROMPT_BYTES: usize = 64 * 1024;

/// How long the agent gets to take in the paste before Enter is pressed: the paste and
/// the key go through the pane in order, but an agent that reads its input in chunks
/// may take a key that arrives in the paste's last chunk as part of the paste.
const AFTER_PASTE: Duration = Duration::from_millis(150);

/// Why a prompt is not typed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unfit {
    #[error("the text is empty")]
    Empty,
    #[error("the text is {0} bytes; at most {MAX_PROMPT_BYTES} are typed")]
    TooLong(usize),
    #[error("the text holds the control character U+{0:04X} (only newline and tab are typed)")]
    Control(u32),
}

/// Whether `text` may be typed: not empty, not over [`MAX_PROMPT_BYTES`], no control
/// character but newline and tab (an escape would drive the agent's screen, a carriage
/// return submit early).
pub fn check(text: &str) -> Result<(), Unfit> {
    if text.trim().is_empty() {
        return Err(Unfit::Empty);
    }
    if text.len() > MAX_PROMPT_BYTES {
        return Err(Unfit::TooLong(text.len()));
    }
    match text
        .chars()
        .find(|c| c.is_control() && *c != '\n' && *c != '\t')
    {
        Some(c) => Err(Unfit::Control(c as u32)),
        None => Ok(()),
    }
}

impl Session {
    /// Paste `text` into the session's pane and press Enter. The caller has checked
    /// it ([`check`]); the session must exist.
    pub fn type_prompt(&self, text: &str) -> Result<(), SessionError> {
        let buffer = format!("treebox-prompt-{}", super::launch_id());
        self.tmux()
            .args(["load-buffer", "-b", &buffer, "-"])
            .stdin_bytes(text.as_bytes().to_vec())
            .output()?;
        let pane = format!("{}:", self.target());
        let in_mode = self
            .tmux()
            .args(["display-message", "-p", "-t", &pane, "#{pane_in_mode}"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "1")
            .unwrap_or(false);
        if in_mode {
            let _ = self
                .tmux()
                .args(["send-keys", "-X", "-t", &pane, "cancel"])
                .output();
        }
        let pasted = self
            .tmux()
            .args(["paste-buffer", "-d", "-p", "-b", &buffer, "-t", &pane])
            .output();
        if let Err(e) = pasted {
            let _ = self.tmux().args(["delete-buffer", "-b", &buffer]).output();
            return Err(e.into());
        }
        std::thread::sleep(AFTER_PASTE);
        enter(self.tmux(), &pane).output()?;
        Ok(())
    }
}

/// `send-keys Enter` to `pane`: the one key name this module ever sends.
fn enter(tmux: Cmd, pane: &str) -> Cmd {
    tmux.args(["send-keys", "-t", pane, "Enter"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_newline_and_tab_pass_among_controls() {
        assert_eq!(check("fix the bug\n\nthen\trun the tests"), Ok(()));
        assert_eq!(check("  \n"), Err(Unfit::Empty));
        assert_eq!(check("a\rb"), Err(Unfit::Control(0x0d)));
        assert_eq!(check("\u{1b}[201~"), Err(Unfit::Control(0x1b)));
        assert_eq!(check("x\u{7f}"), Err(Unfit::Control(0x7f)));
        assert_eq!(check("x\u{9b}1m"), Err(Unfit::Control(0x9b)));
        assert_eq!(check("C-c"), Ok(()));
        let long = "a".repeat(MAX_PROMPT_BYTES + 1);
        assert_eq!(check(&long), Err(Unfit::TooLong(MAX_PROMPT_BYTES + 1)));
    }
}
