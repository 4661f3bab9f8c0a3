//! A tool's outcome as an MCP result: the document as `structuredContent` (and as JSON
//! text, for clients that read only `content`), or a refusal with `isError: true`.
//!
//! A refusal carries exactly what the CLI would have said, as the JSON error document
//! of `docs/schema/error.schema.json`: `{"schemaVersion": 1, "error": {"code", "kind",
//! "message", "hint"}}`, where `code` is the exit code the command would have exited
//! with (2 usage, 3 not found, 5 conflict, …).
//!
//! Text from a box (branch names, commit subjects, paths, patches, screen lines) is
//! hostile. The `--json` documents escape C1 and bidi controls in their bytes
//! (`cli::safe_json`), but rmcp serialises with plain serde_json, and whatever it
//! escapes the client decodes back into the very character: to reach a lead agent's
//! terminal harmless, the *value* must hold no control. So every string of a result
//! (keys too) is walked, and each control character other than newline and tab, and
//! each bidi control, is written as its visible escape (`\u{9b}`), as the human
//! output and `watch` show it ([`crate::sanitize::text`]). A string without one is
//! left as it is, so an ordinary document is exactly the `--json` one.

use rmcp::model::CallToolResult;
use serde_json::Value;

use super::super::error::CliError;
use super::super::json::{Document, ErrorDocument};

/// The result of a tool that answered `doc`.
pub(super) fn answer(mut doc: Value) -> CallToolResult {
    defuse(&mut doc);
    CallToolResult::structured(doc)
}

/// The result of a tool the CLI would have refused: its error document, as an error.
pub(super) fn refusal(e: &CliError) -> CallToolResult {
    let message = e.chain();
    let mut doc = ErrorDocument::new(e.code(), e.kind.as_str(), &message, &e.hints).to_value();
    defuse(&mut doc);
    CallToolResult::structured_error(doc)
}

/// Does `c` have to be escaped in a result's string? Every control character but
/// newline and tab (C0, DEL, and C1: [`crate::sanitize::is_c1_or_bidi`]), and every
/// bidi control.
fn harmful(c: char) -> bool {
    crate::sanitize::is_c1_or_bidi(c) || (c.is_control() && c != '\n' && c != '\t')
}

/// Make every string in `v` (object keys too) harmless; see the module doc.
pub(super) fn defuse(v: &mut Value) {
    match v {
        Value::String(s) => {
            if s.chars().any(harmful) {
                *s = crate::sanitize::text(s);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(defuse),
        Value::Object(map) => {
            if map.keys().any(|k| k.chars().any(harmful)) {
                let old = std::mem::take(map);
                for (k, mut item) in old {
                    defuse(&mut item);
                    map.insert(crate::sanitize::text(&k), item);
                }
            } else {
                map.values_mut().for_each(defuse);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn controls_in_strings_and_keys_become_visible_escapes() {
        let mut v = json!({
            "branch": "fix\u{9b}31m\u{202e}gpj.exe",
            "commits": [{"subject": "a\u{1b}]0;x\u{7}b\u{2066}"}],
            "patch": "+line\twith tab\n-\u{85}gone\r\n",
            "k\u{9b}": 1,
            "plain": "héllo ✓",
        });
        defuse(&mut v);
        let text = v.to_string();
        assert!(!text.chars().any(harmful), "{text:?}");
        assert_eq!(v["branch"], "fix\\u{9b}31m\\u{202e}gpj.exe");
        assert_eq!(v["commits"][0]["subject"], "a\\u{1b}]0;x\\u{7}b\\u{2066}");
        assert_eq!(v["patch"], "+line\twith tab\n-\\u{85}gone\\r\n");
        assert_eq!(v["k\\u{9b}"], 1);
        assert_eq!(v["plain"], "héllo ✓");
    }

    #[test]
    fn a_document_without_controls_is_unchanged() {
        let doc = json!({"schemaVersion": 1, "boxes": [{"name": "a", "dirty": null}], "n": 2.5});
        let mut v = doc.clone();
        defuse(&mut v);
        assert_eq!(v, doc);
    }

    #[test]
    fn a_refusal_is_the_error_document_with_is_error() {
        let e = CliError::new(
            crate::cli::error::ErrorKind::BoxNotFound,
            "no box named `x\u{9b}`",
        )
        .hint("`git treebox list` shows the boxes of this repository.");
        let r = refusal(&e);
        assert_eq!(r.is_error, Some(true));
        assert_eq!(
            r.structured_content,
            Some(json!({"schemaVersion": 1, "error": {
                "code": 3, "kind": "box-not-found", "message": "no box named `x\\u{9b}`",
                "hint": "`git treebox list` shows the boxes of this repository."}}))
        );
    }
}
