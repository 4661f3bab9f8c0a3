//! Issue 18, points 3 and 4: a box with hostile files is broken for commands on that
//! box only, and `git sandbox down` never loses work unasked.

use std::path::Path;

use crate::env::{Run, TestEnv, SANDBOX, TREEBOX};

/// `BIN ARGS` in the repository, killed after 30 s: a hang fails instead of stalling.
pub(crate) fn timed(env: &TestEnv, bin: &str, args: &[&str]) -> Run {
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

/// Plant `kind` at `file`, in place of what git wrote there (if anything).
pub(crate) fn plant(env: &TestEnv, file: &Path, kind: &str) {
    match std::fs::remove_file(file) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => panic!("{e}"),
        _ => {}
    }
    match kind {
        "fifo" => {
            crate::env::mkfifo(file);
        }
        "zero" => std::os::unix::fs::symlink("/dev/zero", file).unwrap(),
        "huge" => {
            let big = env.root().join("huge");
            if !big.exists() {
                let f = std::fs::File::create(&big).unwrap();
                f.set_len(512 << 20).unwrap();
            }
            std::os::unix::fs::symlink(&big, file).unwrap();
        }
        "junk" => std::fs::write(file, b"\x00\xff\x1b[2Jjunk\n\x01\x02\n").unwrap(),
        _ => unreachable!(),
    }
}

/// The row of box `name` in `list --json` / `ls --json`.
pub(crate) fn state_of(doc: &serde_json::Value, name: &str) -> String {
    doc["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {doc}"))["state"]
        .as_str()
        .unwrap()
        .to_string()
}

/// One kind of hostile file at a box's admin `HEAD`, another box's `gitdir`, a third's
/// `commondir`: each of those boxes is broken and refused by name; creating other
/// boxes, `list`, `ls`, `doctor` and `prune` keep working, without hanging.
fn one_box_blocks_none(kind: &str) {
    let env = TestEnv::new();
    for (name, file) in [("h", "HEAD"), ("g", "gitdir"), ("c", "commondir")] {
        env.treebox(&["create", name, "--no-launch"]).ok();
        plant(
            &env,
            &env.repo.join(".git/worktrees").join(name).join(file),
            kind,
        );
    }
    let r = timed(&env, TREEBOX, &["create", "fresh", "--no-launch"]);
    r.ok();
    assert!(env.box_path("fresh").join("README.md").is_file(), "{r:?}");
    timed(&env, SANDBOX, &["up", "--json", "upped"]).ok();
    assert!(env.box_path("upped").join("README.md").is_file());
    timed(&env, SANDBOX, &["up", "--json", "--git", "clone", "cloned"]).ok();
    assert!(env.box_path("cloned").join("README.md").is_file());
    // The new boxes are whole: git in them works, their guard is in place.
    let st = env.git(&env.box_path("fresh"), &["status", "--porcelain"]);
    assert_eq!(st.trim(), "", "{st}");
    let list = timed(&env, TREEBOX, &["list", "--json"]);
    let ls = timed(&env, SANDBOX, &["ls", "--json"]);
    for name in ["h", "g", "c"] {
        assert_eq!(
            state_of(&list.ok().json(), name),
            "broken",
            "list, {kind} in {name}"
        );
        assert_eq!(
            state_of(&ls.ok().json(), name),
            "broken",
            "ls, {kind} in {name}"
        );
    }
    for name in ["fresh", "upped", "cloned"] {
        assert_ne!(state_of(&list.json(), name), "broken", "{name}");
    }
    let doctor = timed(&env, TREEBOX, &["doctor", "--json"]).json();
    let check = crate::env::named(&doctor, "checks", "boxes");
    assert_eq!(check["status"], "advisory", "{check}");
    assert!(
        check["summary"].as_str().unwrap().contains("c, g, h"),
        "{check}"
    );
    // Commands naming a broken box refuse it (5), writing nothing.
    for name in ["h", "g", "c"] {
        let before = env.snapshot();
        for (bin, args) in [
            (TREEBOX, vec!["enter", name]),
            (SANDBOX, vec!["run", name, "--", "true"]),
            (SANDBOX, vec!["attach", name]),
        ] {
            let r = timed(&env, bin, &args);
            r.code(5);
            assert!(r.stderr.contains("git would hang"), "{args:?}: {r:?}");
            assert!(r.stderr.contains("teardown --force"), "{args:?}: {r:?}");
        }
        assert_eq!(
            env.snapshot(),
            before,
            "{kind} in {name}: something was written"
        );
    }
    assert!(
        !env.harness_log().contains("box=h"),
        "{}",
        env.harness_log()
    );
    timed(&env, SANDBOX, &["prune", "-f"]).ok();
    for name in ["h", "g", "c"] {
        timed(&env, SANDBOX, &["down", "-f", name]).ok();
        assert!(!env.box_path(name).exists());
    }
    // With the hostile boxes gone, git's own bookkeeping is whole again.
    timed(&env, "git", &["worktree", "list"]).ok();
    timed(&env, TREEBOX, &["create", "after", "--no-launch"]).ok();
}

#[test]
fn a_fifo_in_one_registration_blocks_no_other_box() {
    one_box_blocks_none("fifo");
}

#[test]
fn a_symlink_to_dev_zero_in_one_registration_blocks_no_other_box() {
    one_box_blocks_none("zero");
}

#[test]
fn a_symlink_to_a_huge_file_in_one_registration_blocks_no_other_box() {
    one_box_blocks_none("huge");
}

#[test]
fn junk_in_one_registration_blocks_no_other_box() {
    one_box_blocks_none("junk");
}

/// Enough boxes that `list` and `ls` read them on several threads: every box is listed
/// once, in name order, run after run; the hostile ones (junk `HEAD`, a FIFO for
/// `gitdir`) are broken and no other; only the box with an untracked file is dirty.
#[test]
fn many_boxes_are_listed_in_order_with_one_judgement_each() {
    let env = TestEnv::new();
    let names: Vec<String> = (1..=40).map(|i| format!("b{i:02}")).collect();
    for n in &names {
        env.treebox(&["create", n, "--no-launch", "--no-fetch"])
            .ok();
    }
    let admin = |n: &str| env.repo.join(".git/worktrees").join(n);
    plant(&env, &admin("b07").join("HEAD"), "junk");
    plant(&env, &admin("b23").join("gitdir"), "fifo");
    std::fs::write(env.box_path("b31").join("new.txt"), "x\n").unwrap();
    let list = timed(&env, TREEBOX, &["list", "--json"]).ok().json();
    let again = timed(&env, TREEBOX, &["list", "--json"]).ok().json();
    assert_eq!(list, again, "list differs between runs");
    let ls = timed(&env, SANDBOX, &["ls", "--json"]).ok().json();
    for doc in [&list, &ls] {
        let shown: Vec<&str> = doc["boxes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["name"].as_str().unwrap())
            .collect();
        assert_eq!(shown, names, "{doc}");
    }
    for n in &names {
        let hostile = n == "b07" || n == "b23";
        assert_eq!(state_of(&list, n) == "broken", hostile, "list, {n}");
        assert_eq!(state_of(&ls, n) == "broken", hostile, "ls, {n}");
        let dirty = crate::env::named(&ls, "boxes", n)["dirty"].clone();
        if !hostile {
            assert_eq!(dirty, n == "b31", "ls dirty, {n}");
        }
    }
}
