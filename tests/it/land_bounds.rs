//! `diff` and `land` of a box past the bounds on what is walked (SPEC §8.8, issue 38
//! point 5), on host worktree boxes (the docker boxes planted as the agent are
//! `hostile_history.rs`'s): a history of more than `git::history::MAX_COMMITS`
//! commits of the box's own, and a tree of 4 M paths made of identical subtrees.
//! `diff` says what is too large (`tooLarge`) and lists nothing; `land` refuses
//! (exit 5, `unreviewable`) and changes nothing; `list` keeps the unknown landed
//! answer, so a warm `list` walks nothing of it.

use std::os::unix::fs::FileTypeExt;
use std::time::{Duration, Instant};

use crate::env::{named, TestEnv};
use crate::schema::assert_valid;

/// Far above what the bounded commands take (well under a second); before the caps,
/// the tree bomb took tens of seconds.
const QUICK: Duration = Duration::from_secs(10);

/// 4 M paths: 22 levels of two identical subtrees over one file, committed as the
/// box's tip by `sh` in the box; its index and files stay as they were (as an agent
/// leaves them with `commit-tree` and `update-ref`).
pub(crate) const BOMB: &str = "t=$(echo x | git hash-object -w --stdin | xargs printf '100644 blob %s\\tf\\n' | git mktree) && \
     for i in $(seq 22); do t=$(printf '040000 tree %s\\ta\\n040000 tree %s\\tb\\n' $t $t | git mktree); done && \
     top=$(git ls-tree HEAD | { cat; printf '040000 tree %s\\tbomb\\n' $t; } | git mktree) && \
     git update-ref HEAD $(git commit-tree $top -p HEAD -m bomb)";

/// The user's refs, index and work tree (and origin's refs): all a refused land must
/// leave as they were.
pub(crate) fn user_state(env: &TestEnv) -> String {
    let refs = env.git(
        &env.repo,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    );
    let index = std::fs::read(env.repo.join(".git/index")).unwrap();
    let status = env.git(
        &env.repo,
        &["status", "--porcelain", "--untracked-files=all"],
    );
    let origin = env.git(&env.root().join("origin.git"), &["for-each-ref"]);
    format!(
        "{refs}\n--\n{} bytes of index, {:x}\n--\n{status}\n--\n{origin}",
        index.len(),
        index
            .iter()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(*b)))
    )
}

/// A host box `name` with one commit of work, then `plant` run in it by `sh`.
fn planted(env: &TestEnv, name: &str, plant: &str) -> std::path::PathBuf {
    env.treebox(&["create", name, "--isolation", "host", "--no-launch"])
        .ok();
    let bx = env.box_path(name);
    env.commit_file(&bx, "work.txt", "work\n", "work");
    let mut c = env.command("sh", &bx);
    let out = c.args(["-c", plant]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    bx
}

/// `diff --json` (schema-valid) and `diff`: quick, exit 0, too large in `what`, no
/// file listed.
fn diff_is_too_large(env: &TestEnv, name: &str, what: &str) -> serde_json::Value {
    let started = Instant::now();
    let doc = env.treebox(&["diff", name, "--json"]).ok().json();
    assert!(
        started.elapsed() < QUICK,
        "diff took {:?}",
        started.elapsed()
    );
    assert_valid("diff", &doc, "diff of a box past a bound");
    assert_eq!(doc["tooLarge"]["what"], what, "{doc}");
    assert_eq!(doc["files"], serde_json::json!([]), "{doc}");
    assert!(doc.get("patch").is_none(), "{doc}");
    let r = env.treebox(&["diff", name]);
    r.ok();
    assert!(r.stderr.contains("too large to compare"), "{r:?}");
    assert!(r.stderr.contains(what), "{r:?}");
    doc
}

/// `land` (each strategy, and `--json`): refused quickly, exit 5, `unreviewable`,
/// naming `what`, nothing changed.
fn land_is_refused(env: &TestEnv, name: &str, what: &str) {
    env.git(&env.repo, &["fetch", "-q", "origin"]);
    let before = user_state(env);
    for how in ["--squash", "--rebase", "--merge"] {
        let started = Instant::now();
        let r = env.treebox(&["land", name, how]);
        assert!(
            started.elapsed() < QUICK,
            "land took {:?}",
            started.elapsed()
        );
        r.code(5);
        assert!(r.stderr.contains("too large"), "{r:?}");
        assert!(r.stderr.contains(what), "{r:?}");
        assert!(r.stderr.contains("\nhint: "), "{r:?}");
        assert_eq!(
            user_state(env),
            before,
            "land {how} changed something: {r:?}"
        );
    }
    let e = env.treebox(&["land", name, "--json"]);
    e.code(5);
    let doc: serde_json::Value = serde_json::from_str(e.stderr.trim()).expect("JSON error");
    assert_valid("error", &doc, "land refused as too large");
    assert_eq!(doc["error"]["kind"], "unreviewable", "{doc}");
    assert_eq!(user_state(env), before);
}

#[test]
fn a_history_past_the_cap_is_too_large_to_diff_or_land_and_listed_unknown_from_the_cache() {
    let env = TestEnv::new();
    let over = treebox::git::history::MAX_COMMITS + 1;
    let bx = planted(
        &env,
        "long",
        &format!(
            r#"b=$(git symbolic-ref HEAD) && awk -v b="$b" -v from="$(git rev-parse HEAD)" 'BEGIN{{for(i=0;i<{over};i++){{printf "commit %s\ncommitter a <a@b> %d +0000\ndata 0\n", b, 1767225600+i; if(i==0) printf "from %s\n", from; printf "\n"}}}}' | git fast-import --quiet --force"#
        ),
    );
    let doc = diff_is_too_large(&env, "long", "commits");
    assert!(doc["mergeBase"].is_null(), "{doc}");
    assert_eq!(doc["commits"], serde_json::json!([]), "{doc}");
    land_is_refused(&env, "long", "commits");

    // `list`: unknown, and kept as such under the box's tip.
    let settle = treebox::maintain::summary::SETTLE + Duration::from_millis(200);
    std::thread::sleep(settle);
    for _ in 0..2 {
        let doc = env.treebox(&["list", "--json"]).ok().json();
        assert!(named(&doc, "boxes", "long")["landed"].is_null(), "{doc}");
    }
    let tip = env.git(&bx, &["rev-parse", "HEAD"]);
    let cache = env
        .state_dir()
        .join("treebox/repos")
        .join(treebox::state::layout::repo_key(
            &env.repo.join(".git").canonicalize().unwrap(),
        ))
        .join("landed-cache.json");
    let kept = std::fs::read_to_string(&cache).unwrap();
    let line = kept
        .lines()
        .find(|l| l.contains(tip.trim()))
        .unwrap_or_else(|| panic!("the too-large answer is kept: {kept}"));
    assert!(line.contains("\"landed\":null"), "{line}");
    // The next `list` answers from the cache, not by walking: a forged answer shows.
    std::fs::write(
        &cache,
        kept.replace(line, &line.replace("\"landed\":null", "\"landed\":false")),
    )
    .unwrap();
    let doc = env.treebox(&["list", "--json"]).ok().json();
    assert_eq!(named(&doc, "boxes", "long")["landed"], false, "{doc}");
}

#[test]
fn a_tree_bomb_is_too_large_to_diff_or_land() {
    let env = TestEnv::new();
    planted(&env, "bomb", BOMB);
    let doc = diff_is_too_large(&env, "bomb", "tree entries");
    // The history is within its bounds: the commits are listed.
    assert_eq!(doc["commits"][0]["subject"], "bomb", "{doc}");
    assert!(doc["mergeBase"].is_string(), "{doc}");
    land_is_refused(&env, "bomb", "tree entries");
}

/// A work tree `diff` must not hand to libgit2: a FIFO where an ignore file is read
/// (the status's bounds see it), and a FIFO deep in an untracked directory, past
/// where the status looks (libgit2's diff would block on it: the comparison's
/// deadline gives up on it). Either way `diff` answers with the commits alone
/// (`worktreeRead` false) in time, and the box is left as it was.
#[test]
fn an_unreadable_work_tree_is_diffed_as_its_commits() {
    let env = TestEnv::new();
    let bx = planted(&env, "fifo", "mkfifo .gitignore");
    let commits_only = |why: &str, limit: Duration| {
        let started = Instant::now();
        let doc = env.treebox(&["diff", "fifo", "--json"]).ok().json();
        assert!(started.elapsed() < limit, "{why}: {:?}", started.elapsed());
        assert_valid("diff", &doc, why);
        assert_eq!(doc["worktreeRead"], false, "{why}: {doc}");
        assert_eq!(doc["commits"][0]["subject"], "work", "{why}: {doc}");
        assert_eq!(file(&doc, "work.txt")["status"], "added", "{doc}");
        let r = env.treebox(&["diff", "fifo", "--stat"]);
        r.ok();
        assert!(r.stderr.contains("its checkout not read"), "{why}: {r:?}");
    };
    commits_only("a FIFO .gitignore", QUICK);
    std::fs::remove_file(bx.join(".gitignore")).unwrap();
    std::fs::create_dir_all(bx.join("new/deep")).unwrap();
    std::fs::write(bx.join("new/a.txt"), "a\n").unwrap();
    let fifo = bx.join("new/deep/.gitignore");
    assert!(env
        .command("mkfifo", &bx)
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // The comparison's deadline (10 s), then the commits alone.
    commits_only("a FIFO in an untracked directory", Duration::from_secs(30));
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    // Without the FIFO the work tree is read again.
    std::fs::remove_file(&fifo).unwrap();
    let doc = env.treebox(&["diff", "fifo", "--json"]).ok().json();
    assert_eq!(doc["worktreeRead"], true, "{doc}");
    assert_eq!(file(&doc, "new/a.txt")["status"], "added", "{doc}");
}

/// A patch past its cap (64 MiB) stops there and says so; `--stat` and the file list
/// still name every file.
#[test]
fn a_patch_past_its_cap_is_cut() {
    let env = TestEnv::new();
    // Ten files of 7 MiB of text (each under the 8 MiB a file is read whole up to):
    // 70 MiB of patch.
    planted(
        &env,
        "big",
        "for i in 0 1 2 3 4 5 6 7 8 9; do yes \"line $i of a large text file\" | head -c 7M > t$i.txt; done && \
         git add . && git commit -qm big",
    );
    let doc = env.treebox(&["diff", "big", "--json"]).ok().json();
    assert_valid("diff", &doc, "a cut patch");
    assert_eq!(doc["patchCut"], true);
    let patch = doc["patch"].as_str().unwrap();
    assert!(patch.len() <= 64 << 20, "{}", patch.len());
    assert!(patch.len() > 60 << 20, "{}", patch.len());
    assert_eq!(
        doc["files"].as_array().unwrap().len(),
        11,
        "{}",
        doc["files"]
    );
    let r = env.treebox(&["diff", "big"]);
    r.ok();
    assert!(
        r.stderr.contains("the patch is cut at 64 MiB"),
        "{}",
        r.stderr
    );
    let stat = env.treebox(&["diff", "big", "--stat"]);
    assert!(stat.stdout.contains("t9.txt"), "{}", stat.stdout);
    assert!(!stat.stderr.contains("cut"), "{}", stat.stderr);
}

/// The entry of `diff --json`'s `files` at `path`.
fn file<'a>(doc: &'a serde_json::Value, path: &str) -> &'a serde_json::Value {
    doc["files"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["path"] == path))
        .unwrap_or_else(|| panic!("no file {path} in {doc}"))
}
