//! treebox as Claude Code's worktree backend (SPEC §10a, issue 15) and
//! `.worktreeinclude`: the hook round trip with real payloads, the settings snippet,
//! and which ignored files a new box gets.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use crate::env::{Run, TestEnv, TREEBOX};

/// `git treebox claude-worktree SUB` with `input` on stdin, run in `cwd`.
fn hook(env: &TestEnv, cwd: &std::path::Path, sub: &str, input: &str) -> Run {
    let mut child = env
        .command(TREEBOX, cwd)
        .args(["claude-worktree", sub])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    Run::from_output(child.wait_with_output().unwrap())
}

#[test]
fn the_settings_snippet_wires_both_hooks() {
    let env = TestEnv::new();
    let r = env.treebox(&["claude-worktree", "settings"]);
    r.ok();
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    for (event, sub) in [("WorktreeCreate", "create"), ("WorktreeRemove", "remove")] {
        let h = &doc["hooks"][event][0]["hooks"][0];
        assert_eq!(h["type"], "command", "{doc}");
        assert_eq!(
            h["command"],
            format!("git treebox claude-worktree {sub}"),
            "{doc}"
        );
    }
}

#[test]
fn worktree_create_and_remove_round_trip() {
    let env = TestEnv::new();
    std::fs::write(env.repo.join(".env"), "K=v\n").unwrap();
    let repo = env.repo.display().to_string();
    // Current Claude Code: `worktree_name`, with fields treebox does not know.
    let input = format!(
        r#"{{"session_id":"s1","transcript_path":"/t","hook_event_name":"WorktreeCreate","cwd":"{repo}","worktree_name":"feat-x","isolation_type":"worktree"}}"#
    );
    let r = hook(&env, &env.root(), "create", &input);
    r.ok();
    let path = env.box_path("feat-x");
    assert_eq!(
        r.stdout,
        format!("{}\n", path.display()),
        "exactly one line: {r:?}"
    );
    assert!(path.join("README.md").is_file());
    assert_eq!(std::fs::read_to_string(path.join(".env")).unwrap(), "K=v\n");
    env.git(&env.repo, &["rev-parse", "--verify", "refs/heads/feat-x"]);
    // The guard binds the box.
    let hooks = env.git(&path, &["config", "core.hooksPath"]);
    assert!(hooks.contains("treebox-hooks"), "{hooks}");

    // Older spelling `name`, no cwd: the repository the hook runs in; a base.
    let r = hook(
        &env,
        &env.repo,
        "create",
        r#"{"name":"JIRA-2","base_ref":"main"}"#,
    );
    r.ok();
    assert_eq!(r.stdout.lines().count(), 1, "{r:?}");
    assert!(env.box_path("JIRA-2").is_dir());

    // A name that would escape is a name, never a path.
    let r = hook(&env, &env.repo, "create", r#"{"name":"../../etc/evil"}"#);
    r.ok();
    assert_eq!(
        r.stdout.trim(),
        env.box_path("etc--evil").display().to_string()
    );
    assert!(!env.root().join("etc").exists());

    // Remove: that box, as teardown --force would.
    let input = format!(
        r#"{{"worktree_path":"{}","session_id":"s1"}}"#,
        path.display()
    );
    let r = hook(&env, &env.repo, "remove", &input);
    r.ok();
    assert!(r.stdout.is_empty(), "{r:?}");
    assert!(!path.exists());
}

#[test]
fn bad_payloads_are_refused_and_write_nothing() {
    let env = TestEnv::new();
    let before = env.snapshot();
    let src = env.repo.join("src");
    std::fs::create_dir_all(&src).unwrap();
    for (sub, input) in [
        ("create", "garbage".to_string()),
        ("create", "[1,2]".to_string()),
        ("create", r#"{"session_id":"s"}"#.to_string()),
        ("create", r#"{"name":".."}"#.to_string()),
        ("create", r#"{"name":"x","cwd":"relative/dir"}"#.to_string()),
        ("remove", "{}".to_string()),
        ("remove", r#"{"worktree_path":"relative"}"#.to_string()),
        // Not a box: the repository's own files, another directory, a box never made.
        (
            "remove",
            format!(r#"{{"worktree_path":"{}"}}"#, src.display()),
        ),
        (
            "remove",
            format!(r#"{{"worktree_path":"{}"}}"#, env.repo.display()),
        ),
        ("remove", r#"{"worktree_path":"/tmp"}"#.to_string()),
        (
            "remove",
            format!(
                r#"{{"worktree_path":"{}"}}"#,
                env.box_path("never").display()
            ),
        ),
    ] {
        let r = hook(&env, &env.repo, sub, &input);
        assert_ne!(r.code, 0, "{sub} {input}: {r:?}");
        assert!(r.stdout.is_empty(), "{sub} {input}: {r:?}");
        assert!(!r.stderr.is_empty(), "{sub} {input}: {r:?}");
    }
    assert!(src.is_dir() && env.repo.join("README.md").is_file());
    std::fs::remove_dir(&src).unwrap();
    assert_eq!(env.snapshot(), before, "something was written");
}

/// `.worktreeinclude`: ignored files it matches come into each new box (both modes),
/// with their modes; tracked ones, symlinks, and anything outside the repo never do.
#[test]
fn worktreeinclude_copies_ignored_files_it_matches() {
    let env = TestEnv::new();
    let repo = &env.repo;
    std::fs::write(
        repo.join(".gitignore"),
        "*.local\nsecrets/\nnode_modules/\n/link.local\n",
    )
    .unwrap();
    std::fs::write(
        repo.join(".worktreeinclude"),
        "# copied into every box\n.env.local\nsecrets/\nconfig/**/*.local\n../outside.local\n/etc/passwd\n",
    )
    .unwrap();
    env.git(repo, &["add", ".gitignore", ".worktreeinclude"]);
    env.git(repo, &["commit", "-qm", "ignore rules"]);
    let write = |rel: &str, text: &str, mode: u32| {
        let p = repo.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    write(".env.local", "LOCAL=1\n", 0o640);
    write("secrets/a.key", "key\n", 0o600);
    write("secrets/deep/b.key", "b\n", 0o644);
    write("config/dev/app.local", "app\n", 0o644);
    write("node_modules/pkg/.env.local", "nm\n", 0o644);
    write("other.local", "not included\n", 0o644);
    std::fs::write(env.root().join("outside.local"), "outside\n").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", repo.join("link.local")).unwrap();
    // Tracked despite the ignore rule: the checkout has it.
    write("tracked.local", "tracked\n", 0o644);
    env.git(repo, &["add", "-f", "tracked.local"]);
    env.git(repo, &["commit", "-qm", "tracked"]);
    env.git(repo, &["push", "-q", "origin", "main"]);

    let want = [
        ".env.local",
        "config/dev/app.local",
        "secrets/a.key",
        "secrets/deep/b.key",
    ];
    let plan = env
        .treebox(&["create", "inc", "--dry-run", "--json"])
        .ok()
        .json();
    assert_eq!(plan["included"], serde_json::json!(want), "{plan}");
    for (name, mode) in [("inc", "worktree"), ("incl", "clone")] {
        env.treebox(&["create", name, "--git", mode, "--no-launch"])
            .ok();
        let b = env.box_path(name);
        for rel in want {
            assert_eq!(
                std::fs::read(b.join(rel)).unwrap(),
                std::fs::read(repo.join(rel)).unwrap(),
                "{mode}: {rel}"
            );
        }
        let m = std::fs::metadata(b.join(".env.local")).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o640, "{mode}");
        for never in ["other.local", "link.local", "node_modules", "outside.local"] {
            assert!(
                std::fs::symlink_metadata(b.join(never)).is_err(),
                "{mode}: {never} copied"
            );
        }
        assert!(!env.root().join("outside.local.copied").exists());
        assert_eq!(
            std::fs::read_to_string(b.join("tracked.local")).unwrap(),
            "tracked\n"
        );
    }
}

/// Claude Code's WorktreeCreate then WorktreeRemove for box `name`; the remove's run.
fn create_then_remove(env: &TestEnv, name: &str, work: impl FnOnce(&std::path::Path)) -> Run {
    let repo = env.repo.display().to_string();
    let input = format!(r#"{{"cwd":"{repo}","worktree_name":"{name}"}}"#);
    hook(env, &env.repo, "create", &input).ok();
    let path = env.box_path(name);
    work(&path);
    let input = format!(r#"{{"worktree_path":"{}"}}"#, path.display());
    let r = hook(env, &env.repo, "remove", &input);
    r.ok();
    assert!(!path.exists(), "{r:?}");
    r
}

fn has_branch(env: &TestEnv, name: &str) -> bool {
    env.git_run(
        &env.repo,
        &["rev-parse", "--verify", "-q", &format!("refs/heads/{name}")],
    )
    .code
        == 0
}

#[test]
fn remove_deletes_a_branch_with_no_work() {
    let env = TestEnv::new();
    // Also when origin moved on since the box started.
    let r = create_then_remove(&env, "idle-otter", |_| {
        env.push_to_origin("other.txt", "x\n");
    });
    assert!(!has_branch(&env, "idle-otter"), "{r:?}");
    assert!(
        r.stderr
            .contains("deleted branch `idle-otter` (no work beyond its start)"),
        "{r:?}"
    );
}

#[test]
fn remove_deletes_a_branch_squash_merged_on_origin() {
    let env = TestEnv::new();
    let r = create_then_remove(&env, "feat-sq", |path| {
        env.commit_file(path, "one.txt", "1\n", "one");
        env.commit_file(path, "two.txt", "2\n", "two");
        env.git(path, &["push", "-q", "origin", "feat-sq"]);
        // The forge squash-merges it into main and deletes the branch; the user's
        // repository has not fetched since.
        env.push_to_origin("unrelated.txt", "u\n");
        let mate = env.root().join("teammate");
        env.git(&mate, &["fetch", "-q", "origin"]);
        env.git(&mate, &["merge", "-q", "--squash", "origin/feat-sq"]);
        env.git(&mate, &["commit", "-q", "-m", "feat-sq (#1)"]);
        env.git(&mate, &["push", "-q", "origin", "main", ":feat-sq"]);
    });
    assert!(!has_branch(&env, "feat-sq"), "{r:?}");
    assert!(
        r.stderr
            .contains("deleted branch `feat-sq` (squash-merged into origin/main)"),
        "{r:?}"
    );
}

#[test]
fn remove_keeps_a_branch_with_unlanded_work_and_says_so() {
    let env = TestEnv::new();
    let r = create_then_remove(&env, "feat-wip", |path| {
        env.commit_file(path, "one.txt", "1\n", "one");
        env.commit_file(path, "two.txt", "2\n", "two");
        // Origin got only part of it: a near-miss is not landed.
        env.push_to_origin("one.txt", "1\n");
    });
    assert!(has_branch(&env, "feat-wip"), "{r:?}");
    assert!(
        r.stderr.contains(
            "kept branch `feat-wip`: 2 commits not in origin/main. To delete it anyway, run `git branch -D feat-wip`."
        ),
        "{r:?}"
    );
}
