//! Issue 38, points 6, 8 and 9 (SPEC §8.11): `land` writes into the user's repository
//! only what a reviewer would. The payloads are planted from inside a real docker
//! container as the agent — a commit into `.treebox/worktrees/good/` (`git add -f`, and
//! the `.TreeBox/` spelling macOS folds onto it), a commit whose message and author
//! carry OSC 52, OSC 0, CSI and a C1 CSI, a file name with ESC, BEL, C1 and a bidi
//! control — and judged from the host, each hostile command under `timeout`: refused
//! (exit 5, `unreviewable`) with the user's refs, index, main checkout and the other
//! box `good` as they were, or replayed with the text made plain. `create` from a base
//! that tracks `.treebox/` is refused with nothing written.

use std::path::Path;

use crate::container::{tree_digest, Boxed};
use crate::env::{Run, TestEnv, TREEBOX};
use crate::hostile_boxes::timed;
use crate::schema::assert_valid;

/// Everything of the user's a refused land must leave as it was: refs (origin's
/// included; treebox's own `refs/hort/<box>/incoming`, where the box's branch is
/// fetched back before it is judged, aside), origin's own, the index, the main
/// checkout's files (the boxes' root aside), and box `good`'s checkout.
fn user_state(env: &TestEnv) -> String {
    let refs = env
        .git(
            &env.repo,
            &["for-each-ref", "--format=%(refname) %(objectname)"],
        )
        .lines()
        .filter(|l| !l.starts_with("refs/hort/"))
        .map(str::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    let origin = env.git(&env.root().join("origin.git"), &["for-each-ref"]);
    let index = env.git(&env.repo, &["ls-files", "-s"]);
    let status = env.git(&env.repo, &["status", "--porcelain", "--ignored"]);
    let files: Vec<_> = tree_digest(&env.repo)
        .into_iter()
        .filter(|(p, _)| {
            let rel = p.strip_prefix(&env.repo).unwrap();
            !rel.starts_with(".git") && !rel.starts_with(".treebox")
        })
        .collect();
    let good = tree_digest(&env.box_path("good"));
    format!("{refs}\n--\n{origin}\n--\n{index}\n--\n{status}\n--\n{files:?}\n--\n{good:?}")
}

/// `land ARGS` refused with exit 5 (`unreviewable`), from the host under a time
/// bound, changing nothing of the user's; the refusal's text (raw control bytes
/// never in it).
#[track_caller]
fn refused(env: &TestEnv, args: &[&str]) -> String {
    env.git(&env.repo, &["fetch", "-q", "origin"]);
    let before = user_state(env);
    let mut a = vec!["land"];
    a.extend_from_slice(args);
    let r = timed(env, TREEBOX, &a);
    r.code(5);
    assert_eq!(user_state(env), before, "{args:?} changed something: {r:?}");
    assert!(
        !r.stderr.contains('\u{1b}') && !r.stderr.contains('\u{9b}'),
        "{r:?}"
    );
    assert!(r.stderr.contains("hint:"), "{r:?}");
    a.push("--json");
    let e = timed(env, TREEBOX, &a);
    e.code(5);
    let doc: serde_json::Value = serde_json::from_str(e.stderr.trim()).expect("JSON error");
    assert_valid("error", &doc, "land refused");
    assert_eq!(doc["error"]["kind"], "unreviewable", "{doc}");
    assert_eq!(user_state(env), before);
    r.stderr.clone()
}

/// A host box `good` with work in progress of its own (committed and not).
fn good_box(env: &TestEnv) {
    env.treebox(&["create", "good", "--isolation", "host", "--no-launch"])
        .ok();
    let good = env.box_path("good");
    env.commit_file(&good, "good.txt", "mine\n", "good work");
    std::fs::write(good.join("wip.txt"), "uncommitted\n").unwrap();
}

/// `sh -c script` in box `leaf` as the agent; the box's HEAD.
fn inside(b: &Boxed, leaf: &str, script: &str) -> String {
    b.commit_inside(leaf, script)
}

/// No raw control byte in `bytes` but newline (what `git log` shows on a terminal).
fn assert_plain(bytes: &[u8], what: &str) {
    let text = String::from_utf8_lossy(bytes);
    let bad: Vec<char> = text
        .chars()
        .filter(|c| (c.is_control() && *c != '\n') || ('\u{202a}'..='\u{202e}').contains(c))
        .collect();
    assert!(bad.is_empty(), "{what} shows raw controls {bad:?}: {text}");
}

#[test]
fn a_box_writing_into_the_boxes_dir_is_refused_by_every_strategy_and_pr() {
    let Some(b) = Boxed::new("docker") else {
        return;
    };
    let env = &b.env;
    good_box(env);
    env.treebox(&["create", "evil", "--no-launch"]).ok();
    inside(
        &b,
        "evil",
        "mkdir -p .treebox/worktrees/good && echo 'require(\"fs\").writeFileSync(\"/tmp/pwned\", \"\")' > .treebox/worktrees/good/INJECTED.test.js && git add -f .treebox && git commit -qm 'add tests'",
    );
    // diff marks it, human and JSON.
    let d = timed(env, TREEBOX, &["diff", "evil", "--json"]);
    let doc = d.ok().json();
    assert_valid("diff", &doc, "diff of a box writing into .treebox/");
    let f = &doc["files"][0];
    assert_eq!(
        f["path"], ".treebox/worktrees/good/INJECTED.test.js",
        "{doc}"
    );
    assert_eq!(f["flag"], "boxes-root", "{doc}");
    let h = timed(env, TREEBOX, &["diff", "evil", "--stat"]);
    assert!(h.ok().stderr.contains("is under `.treebox/`"), "{h:?}");

    for args in [
        &["evil"][..],
        &["evil", "--rebase"],
        &["evil", "--merge"],
        &["evil", "--squash", "--push"],
        &["evil", "--pr"],
    ] {
        let msg = refused(env, args);
        assert!(msg.contains(".treebox"), "{args:?}: {msg}");
        assert!(msg.contains(":(icase).treebox"), "{args:?}: {msg}");
    }
    assert!(!env.box_path("good").join("INJECTED.test.js").exists());

    // The spelling a case-insensitive file system folds onto it.
    inside(
        &b,
        "evil",
        "git rm -q -r --cached .treebox && rm -rf .treebox && mkdir -p .TreeBox/worktrees/good && echo x > .TreeBox/worktrees/good/INJECTED.test.js && git add -f .TreeBox && git commit -qm 'again'",
    );
    for args in [&["evil"][..], &["evil", "--rebase"], &["evil", "--merge"]] {
        let msg = refused(env, args);
        assert!(
            msg.contains(".TreeBox") || msg.contains(".treebox"),
            "{msg}"
        );
    }
    assert!(!Path::new("/tmp/pwned").exists());
}

#[test]
fn commit_text_with_terminal_controls_is_replayed_plain_by_rebase_and_refused_by_merge() {
    let Some(b) = Boxed::new("docker") else {
        return;
    };
    let env = &b.env;
    good_box(env);
    env.treebox(&["create", "txt", "--no-launch"]).ok();
    // OSC 52 (clipboard), OSC 0 (title), CSI, and a C1 CSI (U+009B), in the message
    // and in the author's name.
    let tip = inside(
        &b,
        "txt",
        r#"printf 'fix \033]52;c;cHduZWQ=\007 \033]0;owned\007\033[2J \302\23331m\n\nbody \033[8mhidden\n' > /tmp/msg && echo w > w.txt && git add w.txt && git commit -q -F /tmp/msg --author "$(printf 'Ev\033]0;t\007il\033[31m\302\2330m') <e@example.com>""#,
    );
    let short = &tip[..12];
    let msg = refused(env, &["txt", "--merge"]);
    assert!(msg.contains(short), "{msg}");
    let msg = refused(env, &["txt", "--pr"]);
    assert!(msg.contains(short), "{msg}");

    // Rebase: the base did not move, yet no fast-forward onto the raw commit.
    let doc = timed(env, TREEBOX, &["land", "txt", "--rebase", "--json"])
        .ok()
        .json();
    assert_valid("land", &doc, "rebase of commits carrying controls");
    assert_eq!(doc["commits"], 1, "{doc}");
    let main = env.git(&env.repo, &["rev-parse", "main"]);
    assert_ne!(main, tip, "fast-forwarded onto the raw commit");
    let log = env
        .command("git", &env.repo)
        .args(["--no-pager", "log", "main"])
        .output()
        .unwrap();
    assert!(log.status.success());
    assert_plain(&log.stdout, "git log of main");
    let text = String::from_utf8_lossy(&log.stdout);
    assert!(
        text.contains("fix \\u{1b}]52;c;cHduZWQ=\\u{7}") && text.contains("body \\u{1b}[8mhidden"),
        "{text}"
    );
    assert!(text.contains("Author: Ev\\u{1b}]0;t\\u{7}il"), "{text}");
    assert!(env.repo.join("w.txt").exists());
    // The raw commit is in no ref of the user's.
    let contains = env.git(&env.repo, &["branch", "--contains", &tip]);
    assert!(!contains.contains("main"), "{contains}");
    assert!(tree_digest(&env.box_path("good"))
        .iter()
        .any(|(p, _)| p.ends_with("wip.txt")));
}

#[test]
fn a_file_name_with_esc_bel_c1_and_bidi_is_refused_and_marked() {
    let Some(b) = Boxed::new("docker") else {
        return;
    };
    let env = &b.env;
    good_box(env);
    env.treebox(&["create", "names", "--no-launch"]).ok();
    inside(
        &b,
        "names",
        r#"f="$(printf 'a\033]0;x\007b\302\233c\342\200\256sj.txt')" && echo x > "$f" && git add -- "$f" && git commit -qm names"#,
    );
    let doc = timed(env, TREEBOX, &["diff", "names", "--json"])
        .ok()
        .json();
    assert_valid("diff", &doc, "diff of a box with a control in a file name");
    assert_eq!(doc["files"][0]["flag"], "controls", "{doc}");
    let h = timed(env, TREEBOX, &["diff", "names", "--stat"]);
    assert!(
        h.ok().stderr.contains("holds terminal control characters"),
        "{h:?}"
    );
    assert!(!h.stderr.contains('\u{1b}'), "{h:?}");
    for args in [
        &["names"][..],
        &["names", "--rebase"],
        &["names", "--merge"],
        &["names", "--pr"],
    ] {
        let msg = refused(env, args);
        assert!(
            msg.contains("a\\u{1b}]0;x\\u{7}b\\u{9b}c\\u{202e}sj.txt"),
            "{msg}"
        );
    }
    let names: Vec<String> = std::fs::read_dir(&env.repo)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains('\u{1b}')), "{names:?}");
}

/// `create` from a base tracking `.treebox/` (either spelling): refused (5), with a
/// hint, and nothing written — no directory, no record, no branch, no lock.
#[test]
fn create_from_a_base_tracking_the_boxes_dir_writes_nothing() {
    let env = &TestEnv::new();
    for dir in [".treebox", ".TreeBox"] {
        let p = env.repo.join(dir).join("x");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "x\n").unwrap();
        env.git(&env.repo, &["add", "-f", "--", &format!("{dir}/x")]);
        env.git(&env.repo, &["commit", "-qm", "track it"]);
        env.git(&env.repo, &["push", "-q", "origin", "HEAD:main"]);
        let before = env.snapshot();
        let r: Run = timed(env, TREEBOX, &["create", "nb", "--no-launch"]);
        r.code(5);
        assert!(r.stderr.contains(&format!("`{dir}/`")), "{r:?}");
        assert!(
            r.stderr.contains("hint:") && r.stderr.contains("--base"),
            "{r:?}"
        );
        let j = timed(env, TREEBOX, &["create", "nb", "--no-launch", "--json"]);
        j.code(5);
        let doc: serde_json::Value = serde_json::from_str(j.stderr.trim()).unwrap();
        assert_eq!(doc["error"]["kind"], "base-tracks-boxes", "{doc}");
        assert_eq!(env.snapshot(), before, "{dir}");
        assert!(!env.box_path("nb").exists());
        assert!(
            env.git_run(&env.repo, &["rev-parse", "--verify", "-q", "nb"])
                .code
                != 0
        );
        assert!(!env.box_state("nb").join("record.json").exists());
        env.git(&env.repo, &["rm", "-q", "-r", "--cached", "--", dir]);
        std::fs::remove_dir_all(env.repo.join(dir)).unwrap();
        env.git(&env.repo, &["commit", "-qm", "untrack it"]);
        env.git(&env.repo, &["push", "-q", "origin", "HEAD:main"]);
    }
    // Put right, the same create goes through; a `.treebox` deeper down is an
    // ordinary directory.
    std::fs::create_dir_all(env.repo.join("docs/.treebox")).unwrap();
    std::fs::write(env.repo.join("docs/.treebox/x"), "x\n").unwrap();
    env.git(&env.repo, &["add", "-f", "--", "docs/.treebox/x"]);
    env.git(&env.repo, &["commit", "-qm", "deeper"]);
    env.git(&env.repo, &["push", "-q", "origin", "HEAD:main"]);
    env.treebox(&["create", "nb", "--no-launch"]).ok();
    assert!(env.box_path("nb").join("docs/.treebox/x").is_file());
}

/// `diff --json` marks both kinds of path `land` refuses, and the document (with its
/// `flag` field) matches its schema, strictly. A host box: the marks are the host's
/// reading, whoever wrote the files.
#[test]
fn diff_json_marks_refused_paths_under_its_schema() {
    let env = &TestEnv::new();
    env.treebox(&["create", "marks", "--isolation", "host", "--no-launch"])
        .ok();
    let bx = env.box_path("marks");
    std::fs::create_dir_all(bx.join(".treebox/worktrees/x")).unwrap();
    std::fs::write(bx.join(".treebox/worktrees/x/t.js"), "x\n").unwrap();
    std::fs::write(bx.join("bell\u{7}.txt"), "x\n").unwrap();
    std::fs::write(bx.join("docs.treebox.md"), "x\n").unwrap();
    env.git(&bx, &["add", "-f", "-A"]);
    env.git(&bx, &["commit", "-qm", "marks"]);
    let doc = timed(env, TREEBOX, &["diff", "marks", "--json"])
        .ok()
        .json();
    assert_valid("diff", &doc, "diff --json with marked paths");
    let flag = |path: &str| {
        doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("{path}: {doc}"))
            .get("flag")
            .cloned()
    };
    assert_eq!(flag(".treebox/worktrees/x/t.js").unwrap(), "boxes-root");
    assert_eq!(flag("bell\u{7}.txt").unwrap(), "controls");
    assert_eq!(flag("docs.treebox.md"), None);
}
