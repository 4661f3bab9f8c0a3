//! The pure pre-push decision: parse git's pre-push stdin and decide whether to allow
//! the push.
//!
//! Every box starts on (or may sit on) a placeholder branch `treebox/<petname>`. Such a
//! name describes a box, not a piece of work, and must never be published by accident.
//! The guard binary (`git-treebox-guard`, runtime in [`crate::guard::hook`]) is installed
//! as every client-side hook of a box's worktree; when it acts as `pre-push` it feeds its
//! stdin to [`parse_pre_push`] and the result to [`decide`].
//!
//! Invariants:
//! - Pure: no I/O, no environment, no subprocess. The caller supplies the branch `HEAD`
//!   points to when (and only when) a pushed local ref is `HEAD`.
//! - A push is refused when any line's local ref *or* remote ref is a placeholder branch
//!   (`refs/heads/treebox/…`, or the short form `treebox/…`). `git push origin HEAD`
//!   reports the local ref as the literal `HEAD`, so the caller's head branch stands in
//!   for it; pushing a placeholder under a real remote name is refused too.
//! - Deleting a remote placeholder branch (local ref `(delete)`) is allowed: cleaning up
//!   a branch that slipped out publishes nothing.
//! - Malformed input is an error, never a silent allow: the hook fails closed.
//! - `--no-verify` skips every pre-push hook; it stays the deliberate human escape hatch.

/// One line of git's pre-push stdin:
/// `<local ref> SP <local oid> SP <remote ref> SP <remote oid> LF`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushLine {
    /// `refs/heads/x`, `HEAD`, a raw object id, or `(delete)` for a deletion.
    pub local_ref: String,
    /// All zeros for a deletion.
    pub local_oid: String,
    pub remote_ref: String,
    /// All zeros when the remote ref does not exist yet.
    pub remote_oid: String,
}

impl PushLine {
    /// True when this line deletes `remote_ref` on the remote.
    pub fn is_deletion(&self) -> bool {
        self.local_ref == DELETE_MARKER
    }
}

/// What git writes as the local ref of a deletion (`git push origin :x`, `--delete x`).
pub const DELETE_MARKER: &str = "(delete)";

/// Why pre-push stdin could not be understood. Line numbers start at 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("pre-push input line {line}: expected 4 space-separated fields, found {found}")]
    FieldCount { line: usize, found: usize },
    #[error("pre-push input line {line}: {field} is empty")]
    EmptyRef { line: usize, field: &'static str },
    #[error("pre-push input line {line}: {field} `{value}` is not an object id")]
    BadOid {
        line: usize,
        field: &'static str,
        value: String,
    },
}

/// The directory beside the guard (inside the box's hooks dir) that holds the hooks a
/// hook manager run in the box wrote where the guard belongs (`lefthook install`,
/// husky, …): treebox moves them there and puts the guard back, and the guard runs
/// them as the repository's own hook of that name.
pub const CHAINED_DIR: &str = "chained";

/// Every client-side hook name the guard is installed as and forwards to the repo's own
/// hook of the same name, so a per-worktree `core.hooksPath` does not switch the repo's
/// hooks (husky, lefthook, `.git/hooks`) off inside a box.
///
/// Left out on purpose:
/// - `push-to-checkout`: its mere presence changes what git does when a push updates a
///   checked-out branch (`receive.denyCurrentBranch=updateInstead`), so forwarding it
///   would alter behaviour even when the repo has no such hook.
/// - server-side hooks (`pre-receive`, `update`, `proc-receive`, `post-receive`,
///   `post-update`): they run in the receiving repository, never for a box's own
///   commands, and `proc-receive`'s presence changes how `receive-pack` handles refs.
pub const HOOK_NAMES: &[&str] = &[
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "post-rewrite",
    "pre-auto-gc",
    "reference-transaction",
    "sendemail-validate",
    "post-index-change",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
];

/// Parses git's pre-push stdin. Blank (or whitespace-only) lines are ignored; a trailing
/// `\r` is tolerated. Object ids must be hex (SHA-1 or SHA-256 length), except that a
/// local "ref" may itself be an object id (`git push origin <sha>:refs/heads/x`).
pub fn parse_pre_push(stdin: &str) -> Result<Vec<PushLine>, ParseError> {
    let mut lines = Vec::new();
    for (index, raw) in stdin.split('\n').enumerate() {
        let line_no = index + 1;
        let text = raw.strip_suffix('\r').unwrap_or(raw);
        if text.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = text.split(' ').collect();
        let [local_ref, local_oid, remote_ref, remote_oid] = fields[..] else {
            return Err(ParseError::FieldCount {
                line: line_no,
                found: fields.len(),
            });
        };
        for (field, value) in [("local ref", local_ref), ("remote ref", remote_ref)] {
            if value.is_empty() {
                return Err(ParseError::EmptyRef {
                    line: line_no,
                    field,
                });
            }
        }
        for (field, value) in [("local oid", local_oid), ("remote oid", remote_oid)] {
            if !is_oid(value) {
                return Err(ParseError::BadOid {
                    line: line_no,
                    field,
                    value: sanitize(value),
                });
            }
        }
        lines.push(PushLine {
            local_ref: local_ref.to_owned(),
            local_oid: local_oid.to_owned(),
            remote_ref: remote_ref.to_owned(),
            remote_oid: remote_oid.to_owned(),
        });
    }
    Ok(lines)
}

fn is_oid(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The guard's verdict on one push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// `refs` are the offending placeholder branches in short form (`treebox/x`),
    /// deduplicated, in input order; `message` is the multi-line explanation for the
    /// user (already sanitised for a terminal; the caller adds its own prefix).
    Refuse {
        refs: Vec<String>,
        message: String,
    },
}

/// Decides a push. `head_branch` is the branch `HEAD` points to (full `refs/heads/x` or
/// short `x`), or `None` when detached or unknown; it is consulted only for lines whose
/// local ref is `HEAD`.
pub fn decide(lines: &[PushLine], head_branch: Option<&str>) -> Decision {
    let mut refs: Vec<String> = Vec::new();
    let mut local_placeholder = false;
    for line in lines {
        // A deletion publishes nothing: removing a stray remote placeholder is allowed.
        if line.is_deletion() {
            continue;
        }
        let local = if line.local_ref == "HEAD" {
            head_branch
        } else {
            Some(line.local_ref.as_str())
        };
        if let Some(name) = local.and_then(placeholder_branch) {
            local_placeholder = true;
            add_unique(&mut refs, name);
        }
        if let Some(name) = placeholder_branch(&line.remote_ref) {
            add_unique(&mut refs, name);
        }
    }
    if refs.is_empty() {
        return Decision::Allow;
    }
    let message = refusal_message(&refs, local_placeholder);
    Decision::Refuse { refs, message }
}

fn add_unique(refs: &mut Vec<String>, name: &str) {
    let name = sanitize(name);
    if !refs.contains(&name) {
        refs.push(name);
    }
}

/// The short name (`treebox/x`) when `r` names a placeholder branch, full or short form.
/// Other namespaces (`refs/tags/treebox/x`, `refs/remotes/…`) are not branches.
fn placeholder_branch(r: &str) -> Option<&str> {
    let short = r.strip_prefix("refs/heads/").unwrap_or(r);
    short.starts_with("treebox/").then_some(short)
}

fn refusal_message(refs: &[String], local_placeholder: bool) -> String {
    let quoted: Vec<String> = refs.iter().map(|r| format!("`{r}`")).collect();
    let (list, what) = if refs.len() == 1 {
        (quoted.join(""), "is a placeholder branch")
    } else {
        (quoted.join(", "), "are placeholder branches")
    };
    // One plain sentence with the command that fixes it; the escape hatch
    // (`--no-verify`) is the README's to mention, not something to offer an agent.
    if local_placeholder {
        format!(
            "push refused: {list} {what}, never published; rename it with \
             `git branch -m <type>/<short-name>` (e.g. `git branch -m feat/login-form`) and push again."
        )
    } else {
        format!(
            "push refused: {list} {what}, never published; push under a real name with \
             `git push origin HEAD:<type>/<short-name>` (e.g. `git push origin HEAD:feat/login-form`), \
             or rename a local one with `git branch -m <type>/<short-name>`."
        )
    }
}

/// Replaces control characters so a hostile ref name cannot drive the terminal.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "1cb1c23db75715539687bd6f37f3ee895a4e9791";
    const B: &str = "9f2c1d4e5b6a7980112233445566778899aabbcc";
    const Z: &str = "0000000000000000000000000000000000000000";

    fn line(local_ref: &str, local_oid: &str, remote_ref: &str, remote_oid: &str) -> PushLine {
        PushLine {
            local_ref: local_ref.into(),
            local_oid: local_oid.into(),
            remote_ref: remote_ref.into(),
            remote_oid: remote_oid.into(),
        }
    }

    fn push(local: &str, remote: &str) -> PushLine {
        line(local, A, remote, Z)
    }

    fn refused(d: &Decision) -> (&[String], &str) {
        match d {
            Decision::Refuse { refs, message } => (refs, message),
            Decision::Allow => panic!("expected a refusal, got Allow"),
        }
    }

    #[test]
    fn parse_normal_lines() {
        let input = format!("refs/heads/main {A} refs/heads/main {B}\nHEAD {A} refs/heads/x {Z}\n");
        let got = parse_pre_push(&input).unwrap();
        assert_eq!(
            got,
            vec![
                line("refs/heads/main", A, "refs/heads/main", B),
                line("HEAD", A, "refs/heads/x", Z)
            ]
        );
    }

    #[test]
    fn parse_deletion() {
        let got = parse_pre_push(&format!("(delete) {Z} refs/heads/treebox/x {A}\n")).unwrap();
        assert_eq!(got, vec![line("(delete)", Z, "refs/heads/treebox/x", A)]);
        assert!(got[0].is_deletion());
    }

    #[test]
    fn parse_raw_oid_as_local_ref_and_sha256() {
        let long = "a".repeat(64);
        let got = parse_pre_push(&format!("{A} {A} refs/heads/q {Z}\nx {long} y {long}")).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].local_ref, A);
        assert_eq!(got[1].local_oid, long);
    }

    #[test]
    fn parse_ignores_blank_lines_and_crlf() {
        let input = format!("\n  \nrefs/heads/a {A} refs/heads/a {Z}\r\n\n\t\n");
        let got = parse_pre_push(&input).unwrap();
        assert_eq!(got, vec![line("refs/heads/a", A, "refs/heads/a", Z)]);
        assert_eq!(parse_pre_push("").unwrap(), vec![]);
    }

    #[test]
    fn parse_malformed_names_the_line() {
        let input = format!("refs/heads/a {A} refs/heads/a {Z}\n\nrefs/heads/b {A} refs/heads/b\n");
        assert_eq!(
            parse_pre_push(&input),
            Err(ParseError::FieldCount { line: 3, found: 3 })
        );
        let err = parse_pre_push(&input).unwrap_err().to_string();
        assert!(err.contains("line 3"), "{err}");
    }

    #[test]
    fn parse_rejects_extra_fields_double_spaces_and_bad_oids() {
        assert_eq!(
            parse_pre_push(&format!("a {A} b {Z} extra")),
            Err(ParseError::FieldCount { line: 1, found: 5 })
        );
        assert_eq!(
            parse_pre_push(&format!("a  {A} b {Z}")),
            Err(ParseError::FieldCount { line: 1, found: 5 })
        );
        assert!(matches!(
            parse_pre_push(&format!("a nothex b {Z}")),
            Err(ParseError::BadOid {
                line: 1,
                field: "local oid",
                ..
            })
        ));
        assert!(matches!(
            parse_pre_push(&format!("a {A} b {}", &Z[1..])),
            Err(ParseError::BadOid {
                field: "remote oid",
                ..
            })
        ));
        assert!(matches!(
            parse_pre_push(&format!("\u{1b}[2J {A} b \u{1b}[2J")),
            Err(ParseError::BadOid { value, .. }) if !value.contains('\u{1b}')
        ));
    }

    #[test]
    fn allows_normal_push() {
        let lines = [
            push("refs/heads/feat/login", "refs/heads/feat/login"),
            push("refs/tags/v1", "refs/tags/v1"),
        ];
        assert_eq!(decide(&lines, None), Decision::Allow);
        assert_eq!(decide(&[], Some("treebox/x")), Decision::Allow);
    }

    #[test]
    fn refuses_local_placeholder() {
        let lines = [push("refs/heads/treebox/brave-otter", "refs/heads/feat/x")];
        let d = decide(&lines, None);
        let (refs, message) = refused(&d);
        assert_eq!(refs, ["treebox/brave-otter"]);
        let first = message.lines().next().unwrap();
        assert!(
            first.contains("`treebox/brave-otter` is a placeholder branch"),
            "{first}"
        );
        assert!(
            message.contains("git branch -m <type>/<short-name>"),
            "{message}"
        );
        assert!(
            message.contains("git branch -m feat/login-form"),
            "{message}"
        );
        assert_eq!(message.lines().count(), 1, "one sentence: {message}");
    }

    #[test]
    fn refuses_remote_placeholder() {
        let d = decide(&[push("refs/heads/main", "refs/heads/treebox/y")], None);
        let (refs, message) = refused(&d);
        assert_eq!(refs, ["treebox/y"]);
        assert!(message.lines().next().unwrap().contains("`treebox/y`"));
        assert!(message.contains("git branch -m"), "{message}");
    }

    #[test]
    fn refuses_short_forms() {
        assert!(matches!(
            decide(&[push("treebox/a", "refs/heads/ok")], None),
            Decision::Refuse { .. }
        ));
        assert!(matches!(
            decide(&[push("refs/heads/ok", "treebox/b")], None),
            Decision::Refuse { .. }
        ));
    }

    #[test]
    fn refuses_head_on_placeholder_branch() {
        // What git reports for `git push origin HEAD:refs/heads/feat` from treebox/x.
        let lines = [push("HEAD", "refs/heads/feat")];
        for head in ["refs/heads/treebox/x", "treebox/x"] {
            let d = decide(&lines, Some(head));
            assert_eq!(refused(&d).0, ["treebox/x"], "head = {head}");
        }
        // `git push origin HEAD` from treebox/x: the remote ref is the placeholder too.
        let d = decide(
            &[push("HEAD", "refs/heads/treebox/x")],
            Some("refs/heads/treebox/x"),
        );
        assert_eq!(refused(&d).0, ["treebox/x"]);
    }

    #[test]
    fn allows_head_on_normal_branch_or_detached() {
        let lines = [push("HEAD", "refs/heads/feat/x")];
        assert_eq!(decide(&lines, Some("refs/heads/feat/x")), Decision::Allow);
        assert_eq!(decide(&lines, Some("feat/x")), Decision::Allow);
        assert_eq!(decide(&lines, None), Decision::Allow);
    }

    #[test]
    fn head_branch_ignored_unless_local_ref_is_head() {
        let lines = [push("refs/heads/feat/x", "refs/heads/feat/x")];
        assert_eq!(
            decide(&lines, Some("refs/heads/treebox/x")),
            Decision::Allow
        );
    }

    #[test]
    fn allows_deleting_remote_placeholder() {
        let lines = [line("(delete)", Z, "refs/heads/treebox/old", A)];
        assert_eq!(decide(&lines, Some("treebox/current")), Decision::Allow);
    }

    #[test]
    fn deletion_does_not_hide_other_lines() {
        let lines = [
            line("(delete)", Z, "refs/heads/treebox/old", A),
            push("refs/heads/treebox/new", "refs/heads/treebox/new"),
        ];
        assert_eq!(refused(&decide(&lines, None)).0, ["treebox/new"]);
    }

    #[test]
    fn other_namespaces_are_not_placeholders() {
        let lines = [
            push("refs/tags/treebox/v1", "refs/tags/treebox/v1"),
            push("refs/remotes/origin/treebox/x", "refs/heads/ok"),
            push("refs/heads/not-treebox/x", "refs/heads/mytreebox/x"),
            push("refs/heads/treebox", "refs/heads/treebox"),
        ];
        assert_eq!(decide(&lines, None), Decision::Allow);
    }

    #[test]
    fn several_refs_deduplicated_in_order() {
        let lines = [
            push("refs/heads/treebox/a", "refs/heads/treebox/a"),
            push("refs/heads/main", "refs/heads/treebox/b"),
            push("HEAD", "refs/heads/treebox/a"),
        ];
        let d = decide(&lines, Some("treebox/a"));
        let (refs, message) = refused(&d);
        assert_eq!(refs, ["treebox/a", "treebox/b"]);
        assert!(message
            .lines()
            .next()
            .unwrap()
            .contains("`treebox/a`, `treebox/b` are placeholder branches"));
    }

    #[test]
    fn message_is_sanitised() {
        let d = decide(
            &[push("refs/heads/treebox/\u{1b}[31mred", "refs/heads/x")],
            None,
        );
        let (refs, message) = refused(&d);
        assert_eq!(refs, ["treebox/?[31mred"]);
        assert!(!message.contains('\u{1b}'));
    }

    #[test]
    fn hook_names_exclude_behaviour_changing_and_server_hooks() {
        for name in [
            "push-to-checkout",
            "pre-receive",
            "update",
            "proc-receive",
            "post-receive",
            "post-update",
        ] {
            assert!(!HOOK_NAMES.contains(&name), "{name}");
        }
        assert!(HOOK_NAMES.contains(&"pre-push"));
        assert_eq!(HOOK_NAMES.len(), 22);
        let mut sorted = HOOK_NAMES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), HOOK_NAMES.len());
    }

    mod props {
        //! Bad input, generated: the parser never panics, and no push of a placeholder
        //! branch — as local ref, remote ref, or through `HEAD` — is ever allowed.
        use super::super::*;
        use proptest::prelude::*;

        fn oid() -> impl Strategy<Value = String> {
            prop_oneof!["[0-9a-f]{40}", "[0-9a-f]{64}", Just("0".repeat(40))]
        }

        fn refname() -> impl Strategy<Value = String> {
            prop_oneof![
                "refs/heads/treebox/[a-z-]{1,12}",
                "treebox/[a-z-]{1,12}",
                "refs/heads/[a-z/]{1,12}",
                "refs/tags/treebox/[a-z]{1,6}",
                "refs/remotes/origin/treebox/[a-z]{1,6}",
                "refs/heads/feat/treebox/[a-z]{1,6}",
                Just("HEAD".to_string()),
                Just("refs/heads/treebox".to_string()),
                "[0-9a-f]{40}",
                "[^ \n\r]{1,16}",
            ]
        }

        fn push_line() -> impl Strategy<Value = PushLine> {
            (
                prop_oneof![4 => refname(), 1 => Just(DELETE_MARKER.to_string())],
                oid(),
                refname(),
                oid(),
            )
                .prop_map(|(local_ref, local_oid, remote_ref, remote_oid)| PushLine {
                    local_ref,
                    local_oid,
                    remote_ref,
                    remote_oid,
                })
        }

        fn head() -> impl Strategy<Value = Option<String>> {
            prop::option::of(prop_oneof![
                "refs/heads/treebox/[a-z]{1,8}",
                "treebox/[a-z]{1,8}",
                "refs/heads/[a-z]{1,8}",
            ])
        }

        fn is_placeholder(r: &str) -> bool {
            r.strip_prefix("refs/heads/")
                .unwrap_or(r)
                .starts_with("treebox/")
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn parse_never_panics(s in prop_oneof![
                any::<String>(),
                "([^\n]{0,20} ){0,5}[^\n]{0,20}(\r?\n[^\n]{0,30}){0,4}",
            ]) {
                if let Ok(lines) = parse_pre_push(&s) {
                    for l in &lines {
                        prop_assert!(!l.local_ref.is_empty() && !l.remote_ref.is_empty());
                        prop_assert!(is_oid(&l.local_oid) && is_oid(&l.remote_oid));
                        prop_assert!(!l.local_ref.contains(' ') && !l.remote_ref.contains('\n'));
                    }
                }
            }

            #[test]
            fn well_formed_input_round_trips(
                lines in prop::collection::vec(push_line(), 0..6),
                crlf in any::<bool>(),
                blank in any::<bool>(),
            ) {
                let eol = if crlf { "\r\n" } else { "\n" };
                let mut text = String::new();
                for l in &lines {
                    if blank {
                        text.push_str(eol);
                    }
                    text.push_str(&format!(
                        "{} {} {} {}{eol}",
                        l.local_ref, l.local_oid, l.remote_ref, l.remote_oid
                    ));
                }
                prop_assert_eq!(parse_pre_push(&text).unwrap(), lines);
            }

            #[test]
            fn no_placeholder_push_is_ever_allowed(
                lines in prop::collection::vec(push_line(), 0..6),
                head in head(),
            ) {
                let offending = lines.iter().any(|l| {
                    if l.is_deletion() {
                        // Deleting a stray remote placeholder publishes nothing.
                        return false;
                    }
                    let local = if l.local_ref == "HEAD" {
                        head.as_deref()
                    } else {
                        Some(l.local_ref.as_str())
                    };
                    local.is_some_and(is_placeholder) || is_placeholder(&l.remote_ref)
                });
                match decide(&lines, head.as_deref()) {
                    Decision::Allow => prop_assert!(!offending, "allowed {:?} (HEAD {:?})", lines, head),
                    Decision::Refuse { refs, message } => {
                        prop_assert!(offending, "refused {:?} (HEAD {:?})", lines, head);
                        prop_assert!(!refs.is_empty());
                        prop_assert!(refs.iter().all(|r| r.starts_with("treebox/")));
                        prop_assert!(
                            !message.chars().any(|c| c.is_control() && c != '\n'),
                            "{:?}", message
                        );
                    }
                }
            }

            #[test]
            fn refusal_text_is_terminal_safe(name in any::<String>()) {
                let l = PushLine {
                    local_ref: format!("refs/heads/treebox/{name}"),
                    local_oid: "a".repeat(40),
                    remote_ref: format!("refs/heads/treebox/{name}"),
                    remote_oid: "0".repeat(40),
                };
                let Decision::Refuse { refs, message } = decide(&[l], None) else {
                    panic!("a placeholder push was allowed");
                };
                prop_assert!(refs.iter().all(|r| !r.chars().any(char::is_control)));
                prop_assert!(!message.chars().any(|c| c.is_control() && c != '\n'));
            }
        }
    }
}
