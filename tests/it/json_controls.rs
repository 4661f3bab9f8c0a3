//! Issue 38, point 10 (SPEC §8.12): a branch or file name a box chose reaches every
//! `--json` document with its C1 controls (U+0080–U+009F; U+009B is CSI in xterm and
//! VTE) and bidi controls written as `\uXXXX`, never raw, while a JSON reader still
//! gets the name exactly as the box spelled it.
//!
//! The names are made inside a real container, by the agent: it renames its branch and
//! commits a file, both carrying the controls. Then the host's documents are read.

use crate::container::on_docker;
use crate::env::Run;

/// The box's branch, as the agent renames it: C1 CSI, a right-to-left override, NEL.
const BRANCH: &str = "c1-\u{9b}31m-\u{85}-\u{202e}-x";
/// A file the agent commits: C1 CSI, a first-strong isolate, a right-to-left mark.
const FILE: &str = "f-\u{9b}-\u{2068}-\u{200f}.txt";

/// Is `c` a character no document may carry raw?
fn control(c: char) -> bool {
    ('\u{80}'..='\u{9f}').contains(&c)
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[track_caller]
fn no_raw_controls(r: &Run, what: &str) {
    for (stream, text) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
        assert!(
            !text.chars().any(control),
            "{what}: a raw control on {stream}: {text:?}"
        );
    }
}

/// `s` as the agent's shell spells it: octal escapes for `printf`.
fn octal(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._".contains(&b) {
                (b as char).to_string()
            } else {
                format!("\\{b:03o}")
            }
        })
        .collect()
}

#[test]
fn json_documents_escape_c1_and_bidi_controls_a_box_put_in_its_names() {
    on_docker(|b| {
        let env = &b.env;
        env.treebox(&["create", "hostile", "--no-launch"]).ok();
        b.commit_inside(
            "hostile",
            &format!(
                "set -e; git branch -m \"$(printf '{}')\"; printf x > \"$(printf '{}')\"; \
                 git add -A; git commit -qm named; printf y > \"$(printf '{}')\"",
                octal(BRANCH),
                octal(FILE),
                octal(&format!("u{FILE}")),
            ),
        );

        let list = env.treebox(&["list", "--json"]);
        no_raw_controls(&list, "list --json");
        let row = crate::env::named(&list.ok().json(), "boxes", "hostile");
        assert_eq!(
            row["branch"].as_str(),
            Some(BRANCH),
            "{:?}",
            row["branch"].as_str()
        );

        let dirty = env.treebox(&["list", "--dirty", "--json"]);
        no_raw_controls(&dirty, "list --dirty --json");

        let ls = env.sandbox(&["ls", "--json"]);
        no_raw_controls(&ls, "git sandbox ls --json");
        assert!(
            ls.ok().stdout.contains("c1-\\u009b31m-\\u0085-\\u202e-x"),
            "{}",
            ls.stdout
        );

        let watch = env.treebox(&["watch", "--once", "--json"]);
        no_raw_controls(&watch, "watch --once --json");
        assert!(watch.ok().stdout.contains("\\u009b"), "{}", watch.stdout);

        let diff = env.treebox(&["diff", "hostile", "--json"]);
        no_raw_controls(&diff, "diff --json");
        let doc = diff.ok().json();
        assert!(
            doc.to_string().contains(FILE),
            "the path as the box spelled it: {doc:#}"
        );

        // Whatever land answers (its refusal names the path), the document is escaped.
        let land = env.treebox(&["land", "hostile", "--json"]);
        no_raw_controls(&land, "land --json");

        // An error document carrying a name typed with controls.
        let missing = env.treebox(&["enter", &format!("no-{BRANCH}"), "--json"]);
        assert_ne!(missing.code, 0);
        no_raw_controls(&missing, "enter --json (error)");
    });
}
