//! JSON text that is safe on a terminal (SPEC §8.12): every `--json` document and the
//! JSON error on stderr are printed through here.
//!
//! serde_json escapes only the C0 controls, `"` and `\`. A branch or file name from a
//! box can also carry C1 controls (U+0080–U+009F: U+009B is CSI in xterm and VTE, so
//! `jq -r` or a plain `cat` of the document would run it) and the bidirectional
//! controls that reorder a line ("Trojan Source"). Those are written as `\uXXXX`
//! escapes: the document's value is unchanged for every JSON reader, and the bytes on
//! the terminal carry no control.
//!
//! Called by [`super::ui::Ui`] alone.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

use crate::sanitize::is_c1_or_bidi as escaped;

/// `doc` as pretty-printed JSON (two-space indent, as `to_string_pretty`), with C1 and
/// bidi controls escaped.
pub fn pretty(doc: &impl Serialize) -> String {
    render(doc, PrettyFormatter::new())
}

/// `doc` as one line of JSON (as `to_string`), with C1 and bidi controls escaped.
pub fn compact(doc: &impl Serialize) -> String {
    render(doc, CompactFormatter)
}

fn render<F: Formatter>(doc: &impl Serialize, inner: F) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Safe(inner));
    // A `Value` or a document of string keys: serialising cannot fail.
    if doc.serialize(&mut ser).is_err() {
        return "{}".to_string();
    }
    // The formatter writes only what serde_json gave it (UTF-8) and ASCII escapes.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A formatter that writes strings as `F` does, but with C1 and bidi controls as
/// `\uXXXX`. Only the structure (indentation) is `F`'s own; every other method is the
/// trait's default, the same for every serde_json formatter.
struct Safe<F>(F);

impl<F: Formatter> Formatter for Safe<F> {
    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, s: &str) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in s.char_indices() {
            if escaped(c) {
                w.write_all(&s.as_bytes()[start..i])?;
                // Every such character is in the Basic Multilingual Plane: one escape.
                write!(w, "\\u{:04x}", u32::from(c))?;
                start = i + c.len_utf8();
            }
        }
        w.write_all(&s.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn c1_and_bidi_controls_are_escaped_and_the_value_is_unchanged() {
        let name = "fix\u{9b}31m\u{85}x\u{202e}gpj.exe\u{2066}\u{200f}é✓";
        let doc = json!({"boxes": [{"branch": name, "k\u{9b}": 1}]});
        for text in [pretty(&doc), compact(&doc)] {
            assert!(
                !text.chars().any(escaped),
                "a control reached the text: {text:?}"
            );
            assert!(text.contains("fix\\u009b31m\\u0085x\\u202egpj.exe\\u2066\\u200fé✓"));
            assert!(text.contains("\"k\\u009b\""));
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back, doc);
        }
    }

    #[test]
    fn everything_else_prints_as_serde_json_prints_it() {
        let doc = json!({"a": [1, 2.5, null, true, "x\"\\\n\u{1b}[1m"], "b": {}, "c": [], "d": {"e": "ü"}});
        assert_eq!(pretty(&doc), serde_json::to_string_pretty(&doc).unwrap());
        assert_eq!(compact(&doc), serde_json::to_string(&doc).unwrap());
    }
}
