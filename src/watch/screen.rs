//! The selected box's screen, read from treebox's own tmux server: `capture-pane -p`
//! without `-e` (text only, no colour or other sequences), on treebox's socket — never
//! a program run in the box. What comes back is still the box's text: each line is
//! [`super::clean`]ed before the dashboard draws it.

use crate::names::Leaf;
use crate::session::Session;
use crate::state::Layout;

/// The last `n` non-empty lines of the box's pane, cleaned; `None` without a session
/// (or without tmux).
pub fn last_lines(layout: &Layout, leaf: &Leaf, n: usize) -> Option<Vec<String>> {
    let session = Session::for_marker(&layout.session_path(leaf)).ok()?;
    let text = session.screen()?;
    // `session::last_lines` cleans each line with the same rule as `super::clean`.
    Some(crate::session::last_lines(&text, n))
}
