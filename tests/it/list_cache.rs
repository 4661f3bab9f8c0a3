//! The summary cache of `list` (`maintain::summary`): reused only while every file a
//! box was read from is unchanged (ctime included), ignored when it is anything but
//! the file `list` wrote, and out of every box's reach.
//!
//! How a test sees that the cache was used: it forges a fact in the cache (as the host
//! could), and the forged value shows for exactly the boxes whose files did not change.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::env::{named, TestEnv};

/// Commits are dated 2026-01-01 in the tests; a forged last commit is not.
const FORGED: i64 = 12345;

fn repo_state(env: &TestEnv) -> PathBuf {
    let common = env.repo.join(".git").canonicalize().unwrap();
    env.state_dir()
        .join("treebox/repos")
        .join(treebox::state::layout::repo_key(&common))
}

fn cache_path(env: &TestEnv) -> PathBuf {
    repo_state(env).join("list-cache.json")
}

fn list(env: &TestEnv) -> Value {
    env.treebox(&["list", "--json"]).ok().json()
}

fn last_commit(doc: &Value, name: &str) -> Value {
    named(doc, "boxes", name)["lastCommit"].clone()
}

/// Boxes `names`, their files left to settle: only then does `list` keep them (a
/// change within the file system's timestamp granularity must not look unchanged).
fn boxes(env: &TestEnv, names: &[&str]) {
    for n in names {
        env.treebox(&["create", n, "--no-launch"]).ok();
    }
    std::thread::sleep(treebox::maintain::summary::SETTLE + std::time::Duration::from_millis(200));
}

/// The cache as JSON, with every kept box's last commit set to [`FORGED`].
/// The cache's lines: its header, then one box per line.
fn cache_lines(env: &TestEnv) -> Vec<Value> {
    let text = std::fs::read_to_string(cache_path(env)).expect("list wrote its cache");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The cache as `list` wrote it, with every box's last commit forged.
fn forged(env: &TestEnv) -> String {
    let mut lines = cache_lines(env);
    for b in &mut lines[1..] {
        b["facts"]["lastCommit"] = FORGED.into();
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn kept(env: &TestEnv) -> usize {
    cache_lines(env).len() - 1
}

/// Rewrite `path` in place with `text` (same length), its mtime set back: only the
/// ctime can tell.
fn rewrite_keeping_mtime(path: &Path, text: &str) {
    let before = std::fs::symlink_metadata(path).unwrap();
    assert_eq!(before.len(), text.len() as u64);
    std::fs::write(path, text).unwrap();
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(before.modified().unwrap()).unwrap();
    drop(f);
    let after = std::fs::symlink_metadata(path).unwrap();
    let id = |m: &std::fs::Metadata| {
        (
            m.dev(),
            m.ino(),
            m.mode(),
            m.size(),
            m.mtime(),
            m.mtime_nsec(),
        )
    };
    assert_eq!(id(&before), id(&after), "all but the ctime kept");
}

#[test]
fn a_second_list_equals_the_first_and_a_changed_box_shows_its_new_truth() {
    let env = TestEnv::new();
    boxes(&env, &["a", "b", "c", "d", "e"]);
    let first = list(&env);
    let table = env.treebox(&["list"]).ok().stdout.clone();
    assert_eq!(kept(&env), 5, "every settled box is kept");
    assert_eq!(list(&env), first);
    // The AGE column counts seconds: two runs may straddle one.
    let without_age = |t: &str| -> Vec<Vec<String>> {
        t.lines()
            .map(|l| {
                let mut w: Vec<String> = l.split_whitespace().map(String::from).collect();
                if w.len() > 3 {
                    w.remove(3);
                }
                w
            })
            .collect()
    };
    assert_eq!(
        without_age(&env.treebox(&["list"]).ok().stdout),
        without_age(&table)
    );
    let ls = env.sandbox(&["ls", "--json"]).ok().json();
    for n in ["a", "b", "c", "d", "e"] {
        named(&ls, "boxes", n);
    }
    assert_eq!(env.sandbox(&["ls", "--json"]).ok().json(), ls);

    // The kept facts are what list shows while the boxes' files are unchanged.
    std::fs::write(cache_path(&env), forged(&env)).unwrap();
    let doc = list(&env);
    for n in ["a", "b", "c", "d", "e"] {
        assert_eq!(last_commit(&doc, n), FORGED, "{n} comes from the cache");
    }
    let real = last_commit(&first, "a");

    // A commit in a box.
    env.commit_file(&env.box_path("a"), "new.txt", "x\n", "work");
    let doc = list(&env);
    assert_eq!(last_commit(&doc, "a"), real);
    assert_eq!(
        last_commit(&doc, "b"),
        FORGED,
        "only the changed box is read again"
    );

    // Its branch renamed in the box.
    env.git(&env.box_path("b"), &["branch", "-m", "b", "b-renamed"]);
    let doc = list(&env);
    assert_eq!(named(&doc, "boxes", "b")["branch"], "b-renamed");
    assert_eq!(last_commit(&doc, "b"), real);

    // Its registration's HEAD rewritten in place, size and mtime kept: the ctime.
    env.git(&env.repo, &["branch", "x"]);
    let head = env.repo.join(".git/worktrees/c/HEAD");
    assert_eq!(
        std::fs::read_to_string(&head).unwrap(),
        "ref: refs/heads/c\n"
    );
    rewrite_keeping_mtime(&head, "ref: refs/heads/x\n");
    let doc = list(&env);
    assert_eq!(named(&doc, "boxes", "c")["branch"], "x");
    assert_eq!(last_commit(&doc, "c"), real);

    // Its record rewritten (in place, mtime kept).
    let record = repo_state(&env).join("boxes/d/record.json");
    let text = std::fs::read_to_string(&record).unwrap();
    assert!(text.contains("\"harness\": \"claude\""), "{text}");
    rewrite_keeping_mtime(
        &record,
        &text.replace("\"harness\": \"claude\"", "\"harness\": \"codex\" "),
    );
    let doc = list(&env);
    assert_eq!(named(&doc, "boxes", "d")["harness"], "codex");

    // Its registration removed.
    std::fs::remove_dir_all(env.repo.join(".git/worktrees/e")).unwrap();
    let doc = list(&env);
    assert_eq!(named(&doc, "boxes", "e")["state"], "unregistered");
    assert_eq!(last_commit(&doc, "e"), real);
    assert_eq!(doc["boxes"].as_array().unwrap().len(), 5);

    // A removed box leaves the cache with it; the others were never read again.
    env.treebox(&["rm", "--force", "a"]).ok();
    let doc = list(&env);
    assert_eq!(doc["boxes"].as_array().unwrap().len(), 4);
    // (The changed boxes are read again until their files settle.)
    assert!(!std::fs::read_to_string(cache_path(&env))
        .unwrap()
        .contains("\"leaf\":\"a\""));
}

#[test]
fn a_session_that_begins_or_ends_after_its_box_was_kept_shows() {
    use fs4::fs_std::FileExt;
    let env = TestEnv::new();
    boxes(&env, &["a", "b"]);
    list(&env);
    assert_eq!(kept(&env), 2);
    let lines = cache_lines(&env);
    assert!(
        lines[1..].iter().all(|b| b["facts"]["sessioned"] == false),
        "no session file yet: {lines:?}"
    );
    // A program takes a's session marker, as a session's wrapper does.
    let dir = repo_state(&env).join("boxes/a");
    let marker = std::fs::File::create(dir.join("session.lock")).unwrap();
    marker.lock_exclusive().unwrap();
    let doc = list(&env);
    assert_eq!(named(&doc, "boxes", "a")["session"], "live");
    assert_eq!(named(&doc, "boxes", "b")["session"], "none");
    // The session ends with code 3.
    std::fs::write(dir.join("session.exit"), "3\n").unwrap();
    FileExt::unlock(&marker).unwrap();
    drop(marker);
    let doc = list(&env);
    assert_eq!(named(&doc, "boxes", "a")["session"], "none");
    assert_eq!(named(&doc, "boxes", "a")["exitCode"], 3);
    // Settled and kept again, the box still shows how its session ended.
    std::thread::sleep(treebox::maintain::summary::SETTLE + std::time::Duration::from_millis(200));
    list(&env);
    let a = cache_lines(&env)
        .into_iter()
        .find(|b| b["leaf"] == "a")
        .expect("a is kept again");
    assert_eq!(a["facts"]["sessioned"], true);
    assert_eq!(named(&list(&env), "boxes", "a")["exitCode"], 3);
}

#[test]
fn a_corrupt_truncated_linked_or_oversized_cache_is_ignored_and_replaced() {
    let env = TestEnv::new();
    boxes(&env, &["a", "b"]);
    let truth = list(&env);
    let path = cache_path(&env);
    let good = std::fs::read(&path).unwrap();
    let forged = forged(&env);
    let elsewhere = env.root().join("forged.json");
    std::fs::write(&elsewhere, &forged).unwrap();
    type Plant = Box<dyn Fn(&Path)>;
    let plants: Vec<(&str, Plant)> = vec![
        (
            "truncated",
            Box::new(move |p: &Path| std::fs::write(p, &good[..good.len() / 2]).unwrap()),
        ),
        (
            "junk",
            Box::new(|p: &Path| std::fs::write(p, b"\0\xff{\"format\": 1").unwrap()),
        ),
        (
            "another format",
            Box::new({
                let now = format!("\"format\":{}", treebox::state::list_cache::FORMAT);
                assert!(forged.contains(&now));
                let f = forged.replace(&now, "\"format\":999");
                move |p: &Path| std::fs::write(p, &f).unwrap()
            }),
        ),
        (
            "a symlink to a forged cache",
            Box::new({
                let e = elsewhere.clone();
                move |p: &Path| std::os::unix::fs::symlink(&e, p).unwrap()
            }),
        ),
        (
            "oversized",
            Box::new({
                // A forged cache that would parse, padded past the cap.
                let mut big = forged.clone().into_bytes();
                big.resize(big.len() + (33 << 20), b' ');
                move |p: &Path| std::fs::write(p, &big).unwrap()
            }),
        ),
        (
            "a directory",
            Box::new(|p: &Path| std::fs::create_dir(p).unwrap()),
        ),
        ("a FIFO", Box::new(|p: &Path| crate::env::mkfifo(p))),
    ];
    for (what, plant) in plants {
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir(&path).unwrap(),
            Ok(_) => std::fs::remove_file(&path).unwrap(),
            Err(_) => {}
        }
        plant(&path);
        let r = env.treebox(&["list", "--json"]);
        r.ok();
        assert_eq!(r.json(), truth, "{what}: ignored");
        assert!(r.stderr.is_empty(), "{what}: never an error: {r:?}");
        if what != "a directory" {
            // Replaced by a whole cache (the directory cannot be renamed over).
            let m = std::fs::symlink_metadata(&path).unwrap();
            assert!(m.is_file(), "{what}: replaced");
            assert_eq!(kept(&env), 2, "{what}: replaced");
        }
        assert_eq!(
            std::fs::read_to_string(&elsewhere).unwrap(),
            forged,
            "a link's target is never written"
        );
    }
}

#[test]
fn a_box_cannot_plant_or_alter_the_cache_and_a_hostile_change_is_judged_again() {
    let env = TestEnv::new();
    boxes(&env, &["a", "b", "c", "d"]);
    let truth = list(&env);
    let cache = cache_path(&env);
    // Outside the repository (its worktrees, its git dir) and outside every box's
    // bookkeeping dir (whose status and git dirs are mounted into containers).
    assert!(!cache.starts_with(&env.repo), "{cache:?}");
    for n in ["a", "b", "c", "d"] {
        assert!(!cache.starts_with(repo_state(&env).join("boxes").join(n)));
    }
    // A forged cache planted where a box can write is never read.
    let forged = forged(&env);
    std::fs::remove_file(&cache).unwrap();
    for dir in [
        env.box_path("a"),
        env.repo.join(".git/worktrees/a"),
        repo_state(&env).join("boxes/a/status"),
        repo_state(&env).join("boxes/a"),
    ] {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("list-cache.json"), &forged).unwrap();
    }
    let doc = list(&env);
    assert_eq!(doc, truth);

    // A kept box whose registration turns hostile is judged again: broken.
    std::fs::write(&cache, &forged).unwrap();
    assert_eq!(last_commit(&list(&env), "b"), FORGED);
    let head = env.repo.join(".git/worktrees/b/HEAD");
    std::fs::remove_file(&head).unwrap();
    std::os::unix::fs::symlink(env.repo.join(".git/HEAD"), &head).unwrap();
    let orig = env.repo.join(".git/worktrees/c/ORIG_HEAD");
    crate::env::mkfifo(&orig);
    let doc = list(&env);
    assert_eq!(named(&doc, "boxes", "b")["state"], "broken");
    assert_eq!(named(&doc, "boxes", "c")["state"], "broken");
    assert_eq!(
        last_commit(&doc, "d"),
        FORGED,
        "the untouched box is still kept"
    );
    assert_eq!(
        env.treebox(&["list"]).ok().stdout.matches("broken").count(),
        2
    );
}
