//! Making untrusted text safe to print on a terminal.
//!
//! Branch names, paths, and output of children (package managers, containers) can
//! carry escape sequences that rewrite a terminal. Before any of it reaches a human,
//! control characters are replaced by their escaped form.

/// Unicode bidirectional controls: they reorder how the rest of a line is displayed
/// ("Trojan Source"), so a branch name could make a row read as something else.
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// C1 controls (U+0080–U+009F: U+009B is CSI in xterm and VTE) and bidirectional
/// controls: what serde_json writes as they are, so the `--json` documents escape them
/// themselves (`cli::safe_json`), and the MCP server makes them harmless in its results.
pub fn is_c1_or_bidi(c: char) -> bool {
    ('\u{80}'..='\u{9f}').contains(&c) || is_bidi_control(c)
}

/// One line: every control character (including newlines) and every bidirectional
/// control escaped.
pub fn line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() || is_bidi_control(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Several lines: newlines kept, every other control character escaped.
pub fn block(s: &str) -> String {
    s.lines().map(line).collect::<Vec<_>>().join("\n")
}

/// A commit message a box wrote, as it is written into the user's history (`land`):
/// newlines and tabs kept, a CR ending a line dropped (CRLF becomes LF), every other
/// control character and bidirectional control escaped (`\u{1b}`), the rest as it was.
pub fn message(s: &str) -> String {
    text(&s.replace("\r\n", "\n"))
}

/// Text a box wrote (a patch): newlines and tabs kept, every other control character
/// and bidirectional control escaped.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The texts of an error and of each of its causes, outermost first, as they are
/// (not escaped). A cause whose text an outer one already spells out is left out, so
/// an error that still copies its cause into its own message shows it once.
pub fn causes(e: &dyn std::error::Error) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut next = Some(e);
    while let Some(e) = next {
        let text = e.to_string();
        if !text.is_empty() && !out.iter().any(|o| o.contains(&text)) {
            out.push(text);
        }
        next = e.source();
    }
    out
}

/// An error and its causes as one text: `what failed: cause: cause` (not escaped).
/// For the places that keep an error as a string (warnings, doctor checks, details).
pub fn chain(e: &dyn std::error::Error) -> String {
    causes(e).join(": ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_controls() {
        assert_eq!(super::line("a\u{1b}[2Jb\n"), "a\\u{1b}[2Jb\\n");
        assert_eq!(super::block("x\ny\u{7}"), "x\ny\\u{7}");
    }

    #[test]
    fn escapes_c1_and_bidi_controls() {
        assert_eq!(super::line("a\u{9b}2J"), "a\\u{9b}2J");
        assert_eq!(super::line("x\u{202e}txt.exe"), "x\\u{202e}txt.exe");
        assert_eq!(super::line("\u{2066}a\u{2069}"), "\\u{2066}a\\u{2069}");
        assert_eq!(super::line("héllo wörld"), "héllo wörld");
    }

    #[test]
    fn a_message_keeps_its_lines_and_tabs_and_loses_its_controls() {
        let m = "fix\u{1b}]52;c;aGk=\u{7}\r\n\n\tcode\u{9b}31m\u{202e}x\ry\n";
        assert_eq!(
            super::message(m),
            "fix\\u{1b}]52;c;aGk=\\u{7}\n\n\tcode\\u{9b}31m\\u{202e}x\\ry\n"
        );
        assert_eq!(super::message("plain\n\nbody\n"), "plain\n\nbody\n");
    }

    #[test]
    fn chain_joins_causes_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("could not write x")]
        struct Outer(#[source] std::io::Error);
        let e = Outer(std::io::Error::other("disk on fire"));
        assert_eq!(super::chain(&e), "could not write x: disk on fire");
        #[derive(Debug, thiserror::Error)]
        #[error("could not write x: {0}")]
        struct Flat(#[source] std::io::Error);
        let e = Flat(std::io::Error::other("disk on fire"));
        assert_eq!(super::chain(&e), "could not write x: disk on fire");
    }
}
