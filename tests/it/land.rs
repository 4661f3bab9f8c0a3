//! Review and land (SPEC §10b, issue 30): `git treebox diff`, `landed` in `list`, and
//! landed boxes leaving `teardown` and `git sandbox prune` without `--force`. A bare
//! origin plays the forge; a teammate's clone presses its merge button.

use std::path::Path;

use crate::env::TestEnv;
use crate::schema::assert_valid;

/// Make host worktree box `name` with two commits (`<name>.txt`, `<name>-2.txt`), pushed.
fn worked_box(env: &TestEnv, name: &str) -> std::path::PathBuf {
    env.treebox(&["create", name, "--isolation", "host", "--no-launch"])
        .ok();
    let bx = env.box_path(name);
    env.commit_file(&bx, &format!("{name}.txt"), "new\n", "add a file");
    env.commit_file(&bx, &format!("{name}-2.txt"), "more\n", "add another");
    env.git(&bx, &["push", "-q", "origin", name]);
    bx
}

/// The forge: in the teammate's clone, on main, run `steps`, push main, delete the
/// box's branch on origin; then the user fetches with `--prune`.
fn forge(env: &TestEnv, branch: &str, steps: &[&[&str]]) {
    let root = env.root();
    let mate = root.join("teammate");
    if !mate.exists() {
        env.git(&root, &["clone", "-q", "origin.git", "teammate"]);
    }
    env.git(&mate, &["fetch", "-q", "origin"]);
    env.git(&mate, &["checkout", "-q", "main"]);
    env.git(&mate, &["reset", "-q", "--hard", "origin/main"]);
    for s in steps {
        env.git(&mate, s);
    }
    env.git(&mate, &["push", "-q", "origin", "main"]);
    env.git(&mate, &["push", "-q", "origin", "--delete", branch]);
    env.git(&env.repo, &["fetch", "-q", "--prune", "origin"]);
}

fn squash(env: &TestEnv, branch: &str) {
    let from = format!("origin/{branch}");
    forge(
        env,
        branch,
        &[
            &["merge", "-q", "--squash", &from],
            &["commit", "-q", "-m", "squashed"],
        ],
    );
}

fn landed_in_list(env: &TestEnv, name: &str) -> serde_json::Value {
    let doc = env.treebox(&["list", "--json"]).ok().json();
    assert_valid("list", &doc, "list with landed boxes");
    crate::env::named(&doc, "boxes", name)
}

#[test]
fn squash_merged_and_rebased_boxes_are_landed_and_leave_without_force() {
    let env = TestEnv::new();
    worked_box(&env, "feat-sq");
    worked_box(&env, "feat-rb");
    // Before the forge merged anything: work origin/main lacks.
    assert_eq!(landed_in_list(&env, "feat-sq")["landed"], false);
    // A box with no commits of its own has nothing landed: null (the schema's word),
    // also when the answer comes from the cache.
    env.treebox(&["create", "--no-launch", "idle-box"]).ok();
    for _ in 0..2 {
        let b = landed_in_list(&env, "idle-box");
        assert_eq!(b["landed"], serde_json::Value::Null, "{b}");
        assert_eq!(b["state"], "ok", "{b}");
    }
    squash(&env, "feat-sq");
    // A rebase on the forge: main moved on first, then the commits were replayed.
    env.push_to_origin("other.txt", "other\n");
    forge(
        &env,
        "feat-rb",
        &[&["cherry-pick", "origin/feat-rb~1", "origin/feat-rb"]],
    );
    for name in ["feat-sq", "feat-rb"] {
        let b = landed_in_list(&env, name);
        assert_eq!(b["landed"], true, "{name}: {b}");
        assert_eq!(b["state"], "landed", "{name}: {b}");
    }
    let table = env.treebox(&["list"]).ok().stdout.clone();
    assert!(table.contains("landed"), "{table}");
    // Kept answers: a second list says the same, from the cache.
    assert_eq!(landed_in_list(&env, "feat-rb")["landed"], true);

    // On a terminal the question says landed, and no "unpushed commits".
    let (_, shown) = env.on_tty(crate::env::TREEBOX, "teardown feat-sq", "n\n");
    assert!(
        shown.contains("landed (squash-merged into origin/main)"),
        "{shown}"
    );
    assert!(!shown.contains("unpushed"), "{shown}");
    // Off a terminal: removed without --force.
    let r = env.treebox(&["teardown", "feat-sq", "feat-rb"]);
    r.ok();
    assert!(!env.box_path("feat-sq").exists() && !env.box_path("feat-rb").exists());
}

#[test]
fn near_misses_and_dirty_landed_boxes_are_refused() {
    let env = TestEnv::new();
    // Only part of the work squashed: the first commit's file alone.
    worked_box(&env, "feat-part");
    forge(&env, "feat-part", &[&["cherry-pick", "origin/feat-part~1"]]);
    // Merged, then a commit amended in the box after the merge.
    let amended = worked_box(&env, "feat-amend");
    forge(
        &env,
        "feat-amend",
        &[&["merge", "-q", "--ff-only", "origin/feat-amend"]],
    );
    assert_eq!(landed_in_list(&env, "feat-amend")["landed"], true);
    std::fs::write(amended.join("feat-amend-2.txt"), "more, amended\n").unwrap();
    env.git(
        &amended,
        &["commit", "-q", "-a", "--amend", "-m", "amended"],
    );
    // Landed, with an untracked file beside it.
    let dirty = worked_box(&env, "feat-dirty");
    squash(&env, "feat-dirty");
    std::fs::write(dirty.join("notes.txt"), "mine\n").unwrap();

    for name in ["feat-part", "feat-amend"] {
        assert_eq!(landed_in_list(&env, name)["landed"], false, "{name}");
        let r = env.treebox(&["teardown", name]);
        r.code(5);
        assert!(env.box_path(name).exists(), "{name} was removed");
    }
    // The question counts what origin/main lacks, and says so.
    let (_, shown) = env.on_tty(crate::env::TREEBOX, "teardown feat-part", "n\n");
    assert!(shown.contains("1 commit not in origin/main"), "{shown}");
    let r = env.treebox(&["teardown", "feat-dirty"]);
    r.code(5);
    assert!(r.stderr.contains("uncommitted"), "{r:?}");
    assert!(dirty.join("notes.txt").exists());
}

#[test]
fn prune_removes_idle_landed_boxes_and_keeps_pushed_unmerged_ones() {
    let env = TestEnv::new();
    worked_box(&env, "feat-sq");
    worked_box(&env, "feat-open");
    squash(&env, "feat-sq");
    let r = env.sandbox(&["prune", "--idle", "0s", "-f"]);
    r.ok();
    assert!(!env.box_path("feat-sq").exists(), "{r:?}");
    assert!(env.box_path("feat-open").exists(), "{r:?}");
    assert!(
        r.stderr.contains("kept box `feat-open`")
            && r.stderr.contains("`--pushed` would remove it"),
        "{r:?}"
    );
    env.sandbox(&["prune", "--idle", "0s", "--pushed", "-f"])
        .ok();
    assert!(!env.box_path("feat-open").exists());
}

/// Set up, in the checkout `bx` whose config git writes with `config_args`, every
/// exec-shaped thing a diff could run, each touching `marker`.
fn plant_hostile_config(env: &TestEnv, bx: &Path, config_args: &[&str], marker: &Path) {
    let cmd = format!("touch {}", marker.display());
    for key in [
        "diff.external",
        "core.pager",
        "pager.diff",
        "diff.evil.textconv",
        "diff.evil.command",
        "filter.evil.clean",
        "filter.evil.smudge",
        "core.fsmonitor",
    ] {
        let mut args = vec!["config"];
        args.extend_from_slice(config_args);
        args.extend([key, cmd.as_str()]);
        env.git(bx, &args);
    }
    std::fs::write(bx.join(".gitattributes"), "* diff=evil filter=evil\n").unwrap();
}

#[test]
fn diff_shows_commits_and_uncommitted_work_and_runs_nothing_the_box_configured() {
    let env = TestEnv::new();
    let marker = env.root().join("pwned");
    // A worktree box (its config per worktree) and a clone box (its own .git/config).
    env.treebox(&["create", "feat", "--isolation", "host", "--no-launch"])
        .ok();
    env.treebox(&["create", "cl", "--git", "clone", "--no-launch"])
        .ok();
    for (name, config) in [("feat", &["--worktree"][..]), ("cl", &[][..])] {
        let bx = env.box_path(name);
        env.commit_file(&bx, "c.txt", "committed\n", "commit c");
        std::fs::write(bx.join("README.md"), "hello\nunstaged\n").unwrap();
        std::fs::write(bx.join("untracked.txt"), "brand new\x1b[2J\n").unwrap();
        plant_hostile_config(&env, &bx, config, &marker);
        // origin/main moves on: three-dot leaves its change out.
        env.push_to_origin(&format!("mate-{name}.txt"), "mate\n");
        env.git(&env.repo, &["fetch", "-q", "origin"]);

        let patch = env.treebox(&["diff", name]).ok().stdout.clone();
        for want in [
            "+committed",
            "+unstaged",
            "+brand new",
            "c.txt",
            ".gitattributes",
        ] {
            assert!(patch.contains(want), "{name}: {want} missing:\n{patch}");
        }
        assert!(!patch.contains("mate"), "{name}: three-dot\n{patch}");
        let stat = env.treebox(&["diff", name, "--stat"]).ok().stdout.clone();
        assert!(
            stat.contains("untracked.txt") && stat.contains("c.txt"),
            "{stat}"
        );
        assert!(!stat.contains("+brand"), "{stat}");
        let doc = env.treebox(&["diff", name, "--json"]).ok().json();
        assert_valid("diff", &doc, "diff --json");
        assert_eq!(doc["commits"][0]["subject"], "commit c");
        assert_eq!(doc["uncommitted"], true);
        assert_eq!(doc["against"], "origin/main");
        let files: Vec<&str> = doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        assert!(
            files.contains(&"untracked.txt") && files.contains(&"README.md"),
            "{files:?}"
        );
        let stat_doc = env.treebox(&["diff", name, "--stat", "--json"]).ok().json();
        assert_valid("diff", &stat_doc, "diff --stat --json");
        assert!(stat_doc.get("patch").is_none());
        // On a terminal, the box's escape sequence is shown, not obeyed: through the
        // user's own pager (their global `core.pager`, not the one the box planted),
        // fed escaped text; and straight with --no-pager.
        let paged = env.root().join(format!("paged-{name}"));
        let pager = format!("tee {}", paged.display());
        env.git(&env.repo, &["config", "--global", "core.pager", &pager]);
        let (_, shown) = env.on_tty(crate::env::TREEBOX, &format!("diff {name}"), "");
        assert!(shown.contains("brand new\\u{1b}[2J"), "{shown}");
        let through = std::fs::read_to_string(&paged).expect("the user's pager ran");
        assert!(
            through.contains("brand new\\u{1b}[2J") && !through.contains('\x1b'),
            "{through}"
        );
        std::fs::remove_file(&paged).unwrap();
        let (_, shown) = env.on_tty(crate::env::TREEBOX, &format!("diff --no-pager {name}"), "");
        assert!(shown.contains("brand new\\u{1b}[2J"), "{shown}");
        assert!(!paged.exists());
    }
    assert!(!marker.exists(), "something the box configured ran");
    let r = env.treebox(&["diff", "nope"]);
    r.code(3);
}

/// A sandboxed worktree (docker, podman): its diff is read from its bare clone and
/// checkout on the host, nothing it configured runs there; `down` refuses while its
/// work is only in the box, and takes it without `-f` once the forge holds that work.
#[test]
fn a_sandboxed_box_diffs_and_leaves_once_its_work_landed() {
    crate::container::each_engine(|b| {
        let env = &b.env;
        let marker = env.root().join("pwned");
        env.treebox(&["create", "boxed", "--no-launch"]).ok();
        b.commit_inside(
            "boxed",
            &format!(
                "echo work > work.txt && git add work.txt && git commit -qm 'in the box' \
                 && echo more >> README.md && echo '* diff=evil' > .gitattributes \
                 && git config diff.external 'touch {m}' && git config core.pager 'touch {m}' \
                 && git config diff.evil.textconv 'touch {m}' && git config core.fsmonitor 'touch {m}'",
                m = marker.display()
            ),
        );
        let doc = env.treebox(&["diff", "boxed", "--json"]).ok().json();
        assert_valid("diff", &doc, "diff of a sandboxed worktree");
        assert_eq!(doc["commits"][0]["subject"], "in the box", "{doc}");
        assert_eq!(doc["uncommitted"], true, "{doc}");
        let patch = doc["patch"].as_str().unwrap();
        assert!(
            patch.contains("+work") && patch.contains("+more"),
            "{patch}"
        );
        assert!(
            !marker.exists(),
            "something the box configured ran on the host"
        );

        // Clean again (the fsmonitor it set ran inside, where it may: it left files);
        // its commit is only in the box: down refuses without a terminal.
        let restore = "git config --unset core.fsmonitor; git checkout -- README.md \
                       && rm .gitattributes && git clean -fq";
        b.exec(&["boxed", "--", "sh", "-c", restore]).ok();
        env.sandbox(&["down", "boxed"]).code(5);
        // The forge squash-merges the same change.
        let mate = env.root().join("mate");
        env.git(&env.root(), &["clone", "-q", "origin.git", "mate"]);
        env.commit_file(&mate, "work.txt", "work\n", "squashed from the box");
        env.git(&mate, &["push", "-q", "origin", "main"]);
        env.git(&env.repo, &["fetch", "-q", "origin"]);
        let ls = env.sandbox(&["ls", "--json"]).ok().json();
        assert_valid("sandbox-ls", &ls, "ls with a landed sandboxed box");
        assert_eq!(
            crate::env::named(&ls, "boxes", "boxed")["landed"],
            true,
            "{ls}"
        );
        env.sandbox(&["down", "boxed"]).ok();
        assert!(!env.box_path("boxed").exists());
        assert!(!marker.exists());
    });
}

/// `list` keeps each box's tip in its summary cache (no ref read per box while nothing
/// changed), and a tip that moves is judged again at once: a box whose landed work was
/// amended in the box is not `landed` on the very next `list`. Teardown never takes
/// `landed` from a cache: with the cache claiming every box landed, it still asks.
#[test]
fn a_moved_tip_is_judged_again_and_teardown_never_trusts_the_cache() {
    let env = TestEnv::new();
    let bx = worked_box(&env, "feat-kept");
    squash(&env, "feat-kept");
    // Settled: `list` keeps the box, its tip with it; the next one reads it back.
    let settle = treebox::maintain::summary::SETTLE + std::time::Duration::from_millis(200);
    std::thread::sleep(settle);
    assert_eq!(landed_in_list(&env, "feat-kept")["landed"], true);
    let state = env
        .state_dir()
        .join("treebox/repos")
        .join(treebox::state::layout::repo_key(
            &env.repo.join(".git").canonicalize().unwrap(),
        ));
    let kept = std::fs::read_to_string(state.join("list-cache.json")).unwrap();
    let tip = env.git(&bx, &["rev-parse", "HEAD"]);
    assert!(kept.contains(tip.trim()), "the tip is kept: {kept}");
    assert_eq!(landed_in_list(&env, "feat-kept")["landed"], true);
    // The box amends its last commit: work origin/main lacks, seen at once.
    std::fs::write(bx.join("feat-kept-2.txt"), "more, amended\n").unwrap();
    env.git(&bx, &["commit", "-q", "-a", "--amend", "-m", "amended"]);
    let b = landed_in_list(&env, "feat-kept");
    assert_eq!(b["landed"], false, "{b}");
    std::thread::sleep(settle);
    assert_eq!(landed_in_list(&env, "feat-kept")["landed"], false);
    // A landed cache that says yes to everything misleads `list` only.
    let cache = state.join("landed-cache.json");
    let lie = std::fs::read_to_string(&cache)
        .unwrap()
        .replace("\"landed\":false", "\"landed\":true");
    std::fs::write(&cache, lie).unwrap();
    assert_eq!(landed_in_list(&env, "feat-kept")["landed"], true);
    let r = env.treebox(&["teardown", "feat-kept"]);
    r.code(5);
    assert!(bx.exists(), "{r:?}");
}
