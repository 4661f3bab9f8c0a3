//! Issue 18, points 3 and 4: a box with hostile files is broken for commands on that
//! box only, and `git sandbox down` never loses work unasked.

use crate::env::{Run, TestEnv, SANDBOX};

/// `BIN ARGS` in the repository, killed after 30 s: a hang fails instead of stalling.
fn timed(env: &TestEnv, bin: &str, args: &[&str]) -> Run {
    let out = env
        .command("timeout", &env.repo)
        .arg("30")
        .arg(bin)
        .args(args)
        .output()
        .unwrap();
    let r = Run::from_output(out);
    assert_ne!(r.code, 124, "{bin} {args:?} hung");
    r
}

/// Everything of a box that `down` would remove is still there.
#[track_caller]
fn box_whole(env: &TestEnv, name: &str) {
    assert!(env.box_path(name).is_dir(), "{name}: directory gone");
    assert!(
        crate::proof::record_path(env, name).is_file(),
        "{name}: record gone"
    );
    assert!(
        env.repo.join(".git/worktrees").join(name).is_dir(),
        "{name}: registration gone"
    );
}

/// `down` without a terminal: refused with exit 5, nothing written, a runnable hint.
#[track_caller]
fn down_refuses(env: &TestEnv, name: &str, why: &str) {
    let before = env.snapshot();
    let r = timed(env, SANDBOX, &["down", name]);
    r.code(5);
    assert!(r.stderr.contains(why), "{r:?}");
    assert!(
        r.stderr.contains(&format!("git sandbox down -f {name}")),
        "{r:?}"
    );
    assert_eq!(env.snapshot(), before, "down {name} wrote something");
    box_whole(env, name);
}

/// On a terminal it asks, and "n" keeps the box.
#[track_caller]
fn down_asks_and_no_keeps(env: &TestEnv, name: &str) {
    let before = env.snapshot();
    let (ok, shown) = env.on_tty(SANDBOX, &format!("down {name}"), "n\n");
    assert!(ok, "{shown}");
    assert!(shown.contains("[y/N]"), "{shown}");
    assert!(shown.contains("nothing removed"), "{shown}");
    assert_eq!(env.snapshot(), before);
    box_whole(env, name);
}

#[track_caller]
fn down_forced_removes(env: &TestEnv, name: &str) {
    timed(env, SANDBOX, &["down", "-f", name]).ok();
    assert!(!env.box_path(name).exists());
    assert!(!env.repo.join(".git/worktrees").join(name).exists());
}

#[test]
fn down_keeps_uncommitted_changes_unless_forced() {
    let env = TestEnv::new();
    env.treebox(&["create", "dirty", "--no-launch"]).ok();
    std::fs::write(env.box_path("dirty").join("README.md"), "edited\n").unwrap();
    down_refuses(&env, "dirty", "uncommitted or untracked changes");
    down_asks_and_no_keeps(&env, "dirty");
    down_forced_removes(&env, "dirty");
}

#[test]
fn down_keeps_untracked_files_unless_forced() {
    let env = TestEnv::new();
    env.treebox(&["create", "untracked", "--no-launch"]).ok();
    std::fs::write(env.box_path("untracked").join("new.txt"), "new\n").unwrap();
    down_refuses(&env, "untracked", "uncommitted or untracked changes");
    down_asks_and_no_keeps(&env, "untracked");
    // Saying yes removes it.
    let (ok, shown) = env.on_tty(SANDBOX, "down untracked", "y\n");
    assert!(ok, "{shown}");
    assert!(!env.box_path("untracked").exists());
}

/// A commit on a worktree box whose branch was then deleted in the user's repository
/// lives only in the box's HEAD (and its reflog): `down` asks for it.
#[test]
fn down_keeps_commits_only_the_box_has() {
    let env = TestEnv::new();
    for name in ["gone", "detached"] {
        env.treebox(&["create", name, "--no-launch"]).ok();
        // Distinct content: the test clock is fixed, so equal commits share an id.
        env.commit_file(&env.box_path(name), "w.txt", name, "only here");
    }
    // The branch deleted under the box: HEAD names a branch that no longer exists.
    env.git(&env.repo, &["update-ref", "-d", "refs/heads/gone"]);
    down_refuses(&env, "gone", "neither the repository nor origin has");
    down_asks_and_no_keeps(&env, "gone");
    down_forced_removes(&env, "gone");
    // HEAD detached on the commit, then the branch deleted.
    let bx = env.box_path("detached");
    env.git(&bx, &["switch", "-q", "--detach"]);
    env.git(&env.repo, &["branch", "-q", "-D", "detached"]);
    down_refuses(&env, "detached", "neither the repository nor origin has");
    down_forced_removes(&env, "detached");
}

/// A clean box whose work the repository holds goes without a question.
#[test]
fn down_removes_a_clean_box_without_asking() {
    let env = TestEnv::new();
    env.treebox(&["create", "clean", "--no-launch"]).ok();
    env.treebox(&["create", "pushed", "--no-launch"]).ok();
    let bx = env.box_path("pushed");
    env.commit_file(&bx, "p.txt", "p\n", "pushed work");
    env.git(&bx, &["push", "-q", "origin", "pushed"]);
    for name in ["clean", "pushed"] {
        timed(&env, SANDBOX, &["down", name]).ok();
        assert!(!env.box_path(name).exists(), "{name}");
    }
    // The branch stays: its commit is still in the repository.
    assert!(!env
        .git(&env.repo, &["branch", "--list", "pushed"])
        .is_empty());
}
