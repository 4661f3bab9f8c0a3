//! Making untrusted text safe to print on a terminal.
//!
//! Branch names, paths, and output of children (package managers, containers) can
//! carry escape sequences that rewrite a terminal. Before any of it reaches a human,
//! control characters are replaced by their escaped form.

/// One line: every control character (including newlines) escaped.
pub fn line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
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

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_controls() {
        assert_eq!(super::line("a\u{1b}[2Jb\n"), "a\\u{1b}[2Jb\\n");
        assert_eq!(super::block("x\ny\u{7}"), "x\ny\\u{7}");
    }
}
