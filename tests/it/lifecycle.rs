//! `enter`, `list`, `teardown`: the rest of the lifecycle, end to end, including races,
//! crashes and hostile boxes.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::env::{write_exec, TestEnv, TREEBOX};

fn repo_state(env: &TestEnv) -> PathBuf {
    env.repo_state()
}

fn list(env: &TestEnv) -> Vec<serde_json::Value> {
    let doc = env.treebox(&["list", "--json"]).ok().json();
    doc["boxes"].as_array().unwrap().clone()
}

fn row(env: &TestEnv, name: &str) -> serde_json::Value {
    list(env)
        .into_iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no row {name}"))
}

#[test]
fn enter_resolves_leaf_live_branch_and_unique_substring() {
    let env = TestEnv::new();
    env.treebox(&["create", "feat/login", "--no-launch"]).ok();
    env.treebox(&["create", "feat/logout", "--no-launch"]).ok();
    env.treebox(&["create", "bugfix", "--no-launch"]).ok();
    let leaf = |r: &crate::env::Run| r.json()["name"].as_str().unwrap().to_string();
    assert_eq!(
        leaf(env.treebox(&["enter", "feat--login", "--json"]).ok()),
        "feat--login"
    );
    assert_eq!(
        leaf(env.treebox(&["enter", "feat/logout", "--json"]).ok()),
        "feat--logout"
    );
    assert_eq!(
        leaf(env.treebox(&["enter", "bug", "--json"]).ok()),
        "bugfix"
    );
    // A rename inside the box is followed (the branch is read live).
    env.git(&env.box_path("bugfix"), &["branch", "-m", "fix/crash"]);
    let r = env.treebox(&["enter", "fix/crash", "--json"]);
    assert_eq!(leaf(r.ok()), "bugfix");
    assert_eq!(r.json()["branch"], "fix/crash");
    assert_eq!(row(&env, "bugfix")["branch"], "fix/crash");
    // Ambiguous: exit 2 listing the candidates; refusals change nothing.
    let before = env.snapshot();
    let r = env.treebox(&["enter", "feat/log"]);
    r.code(2);
    assert_eq!(env.snapshot(), before);
    assert!(
        r.stderr.contains("feat--login") && r.stderr.contains("feat--logout"),
        "{r:?}"
    );
    // None: exit 3; a branch without a box gets the --checkout hint.
    env.treebox(&["enter", "nothing-like-it"]).code(3);
    env.git(&env.repo, &["branch", "lonely"]);
    let r = env.treebox(&["enter", "lonely"]);
    r.code(3);
    // The whole refusal: what failed, and the hint naming `--checkout lonely`.
    crate::screens::settings(&env)
        .bind(|| insta::assert_snapshot!("enter-branch-without-box", crate::screens::screen(&r)));
}

#[test]
fn enter_launches_with_recorded_harness_and_session_override() {
    let mut env = TestEnv::new();
    env.treebox(&["create", "e", "--harness", "codex", "--no-launch"])
        .ok();
    env.extra_env.push(("FAKE_EXIT".into(), "9".into()));
    env.treebox(&["enter", "e", "--", "go on"]).code(9);
    let log = env.harness_log();
    assert!(log.contains("prog=codex"), "{log}");
    assert!(log.contains("arg=go on"), "{log}");
    // --harness overrides this session only; the record keeps codex.
    env.treebox(&["enter", "e", "--harness", "claude"]).code(9);
    assert!(env.harness_log().contains("prog=claude"));
    assert_eq!(row(&env, "e")["harness"], "codex");
    // --print gives the recorded harness again.
    let line = env.treebox(&["enter", "e", "--print"]).ok().stdout.clone();
    assert!(
        line.contains("codex --dangerously-bypass-approvals-and-sandbox"),
        "{line}"
    );
    // An explicit --isolation that disagrees with the record: conflict, nothing changes.
    let before = env.snapshot();
    let r = env.treebox(&["enter", "e", "--isolation", "docker", "--print"]);
    r.code(5);
    assert_eq!(env.snapshot(), before);
    assert!(r.stderr.contains("--isolation host"), "{r:?}");
    env.treebox(&["enter", "e", "--isolation", "host", "--print"])
        .ok();
}

#[test]
fn enter_resyncs_only_when_the_lockfile_changed() {
    let env = TestEnv::new();
    env.push_to_origin("uv.lock", "version = 1\n");
    let counter = env.home.join("setup-count");
    // Setup runs in the box: it logs where it ran.
    env.write_config(&format!(r#"{{"setup": ["pwd >> {}"]}}"#, counter.display()));
    let runs = || std::fs::read_to_string(&counter).unwrap_or_default();
    // Clone boxes keep freshness exactly as worktrees do.
    for (d, mode) in [("d", "worktree"), ("dc", "clone")] {
        let _ = std::fs::remove_file(&counter);
        let count = || runs().lines().count();
        env.treebox(&["create", d, "--git", mode, "--no-launch"])
            .ok();
        assert_eq!(count(), 1, "{mode}");
        assert_eq!(runs().trim(), env.box_path(d).to_string_lossy(), "{mode}");
        let r = env.treebox(&["enter", d, "--print"]);
        r.ok();
        assert!(r.stderr.contains("deps unchanged"), "{mode}: {r:?}");
        assert_eq!(count(), 1, "{mode}");
        assert_eq!(row(&env, d)["deps"], "fresh", "{mode}");
        // The lockfile changes in the box: list says stale, enter re-syncs.
        std::fs::write(env.box_path(d).join("uv.lock"), "version = 2\n").unwrap();
        assert_eq!(row(&env, d)["deps"], "stale", "{mode}");
        let doc = env.treebox(&["enter", d, "--json"]).ok().json();
        assert_eq!(doc["deps"], "synced", "{mode}");
        assert_eq!(count(), 2, "{mode}");
        assert_eq!(row(&env, d)["deps"], "fresh", "{mode}");
        // --cold forces a re-sync.
        env.treebox(&["enter", d, "--cold", "--print"]).ok();
        assert_eq!(count(), 3, "{mode}");
    }
}

#[test]
fn enter_refreshes_env_but_keeps_edits_made_in_the_box() {
    let env = TestEnv::new();
    std::fs::write(env.repo.join(".env"), "A=1\n").unwrap();
    env.treebox(&["create", "v", "--no-launch"]).ok();
    let boxed = env.box_path("v").join(".env");
    std::fs::write(env.repo.join(".env"), "A=2\n").unwrap();
    let doc = env.treebox(&["enter", "v", "--json"]).ok().json();
    assert_eq!(doc["env"], "copied");
    assert_eq!(std::fs::read_to_string(&boxed).unwrap(), "A=2\n");
    std::fs::write(&boxed, "A=mine\n").unwrap();
    // The main checkout's `.env` as copied: the edit is kept without a word.
    let r = env.treebox(&["enter", "v", "--print"]);
    r.ok();
    assert!(!r.stderr.contains(".env"), "{r:?}");
    assert_eq!(std::fs::read_to_string(&boxed).unwrap(), "A=mine\n");
    // It changed since: the edit is kept, and the warning says so.
    std::fs::write(env.repo.join(".env"), "A=3\n").unwrap();
    let r = env.treebox(&["enter", "v", "--print"]);
    r.ok();
    assert!(r.stderr.contains("edited in the box"), "{r:?}");
    assert_eq!(std::fs::read_to_string(&boxed).unwrap(), "A=mine\n");
}

#[test]
fn list_shows_every_box_and_never_the_main_checkout() {
    let env = TestEnv::new();
    assert!(list(&env).is_empty());
    env.treebox(&["create", "one", "--no-launch"]).ok();
    env.treebox(&["create", "--no-launch"]).ok();
    std::fs::write(env.repo.join(".env"), "E=1\n").unwrap();
    env.treebox(&["create", "gone", "--no-launch"]).ok();
    std::fs::remove_dir_all(env.box_path("gone")).unwrap();
    let rows = list(&env);
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(rows
        .iter()
        .all(|r| r["path"] != env.repo.to_string_lossy().as_ref()));
    let one = row(&env, "one");
    assert_eq!(one["branch"], "one");
    assert_eq!(one["placeholder"], false);
    assert_eq!(one["gitMode"], "worktree");
    assert_eq!(one["runner"], "host");
    assert_eq!(one["deps"], "fresh");
    assert_eq!(one["env"], "absent");
    assert_eq!(one["session"], "none");
    assert!(one["lastCommit"].as_i64().unwrap() > 0);
    let pet = rows.iter().find(|r| r["placeholder"] == true).unwrap();
    assert!(pet["branch"].as_str().unwrap().starts_with("treebox/"));
    assert_eq!(row(&env, "gone")["state"], "missing");
    // The human table has the same rows.
    let table = env.treebox(&["ls"]).ok().stdout.clone();
    assert!(
        table.contains("one")
            && table.contains("* placeholder branch")
            && table.contains("missing")
    );
    // 80 columns, however long the names: cut visibly, and the placeholder mark keeps
    // every column where it is.
    env.treebox(&[
        "create",
        "feature/a-rather-long-branch-name-indeed",
        "--no-launch",
    ])
    .ok();
    let table = env.treebox(&["ls"]).ok().stdout.clone();
    let lines: Vec<&str> = table.lines().collect();
    for l in &lines {
        assert!(l.chars().count() <= 80, "{} chars: {l}", l.chars().count());
    }
    assert!(table.contains("feature--a-ra…"), "{table}");
    let column = |l: &str| {
        l.find(" wt ")
            .map_or(usize::MAX, |at| l[..at].chars().count())
    };
    let rows: Vec<&&str> = lines.iter().filter(|l| l.contains(" wt ")).collect();
    assert!(rows.len() >= 3, "{table}");
    assert!(
        rows.iter().all(|l| column(l) == column(rows[0])),
        "columns shift: {table}"
    );
}

#[test]
fn teardown_protects_the_careless() {
    let env = TestEnv::new();
    env.treebox(&["create", "a", "--no-launch"]).ok();
    env.treebox(&["create", "b", "--no-launch"]).ok();
    // One typo among the refs: exit 3, nothing removed.
    let before = env.snapshot();
    env.treebox(&["teardown", "--force", "a", "typo"]).code(3);
    assert_eq!(env.snapshot(), before);
    // No terminal and no --force: needs confirmation, exit 5, nothing removed.
    let r = env.treebox(&["teardown", "a"]);
    r.code(5);
    assert!(r.stderr.contains("--force"), "{r:?}");
    assert_eq!(env.snapshot(), before);
    // A dirty box: exit 5 naming it, even before confirmation.
    std::fs::write(env.box_path("b").join("wip.txt"), "unsaved").unwrap();
    let before = env.snapshot();
    let r = env.treebox(&["rm", "b"]);
    r.code(5);
    assert!(
        r.stderr.contains("`b`") && r.stderr.contains("uncommitted"),
        "{r:?}"
    );
    assert_eq!(env.snapshot(), before);
    // --force removes both, with every bookkeeping file.
    let doc = env
        .treebox(&["teardown", "--force", "--json", "a", "b"])
        .ok()
        .json();
    assert_eq!(doc["removed"].as_array().unwrap().len(), 2);
    assert!(!env.box_path("a").exists() && !env.box_path("b").exists());
    assert!(list(&env).is_empty());
    let state = repo_state(&env);
    assert!(!state.join("boxes/a").exists());
    assert!(!state.join("locks/a.lock").exists());
    assert_eq!(
        env.git(&env.repo, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
    // The branches stay unless asked.
    env.git(&env.repo, &["rev-parse", "--verify", "refs/heads/a"]);
    env.git(&env.repo, &["fsck", "--no-progress"]);
}

#[test]
fn teardown_delete_branch_and_unpushed_work() {
    let env = TestEnv::new();
    env.treebox(&["create", "gone-too", "--no-launch"]).ok();
    env.treebox(&["teardown", "--force", "--delete-branch", "gone-too"])
        .ok();
    assert_ne!(
        env.git_run(&env.repo, &["rev-parse", "--verify", "refs/heads/gone-too"])
            .code,
        0
    );
    // Unpushed commits on a branch about to be deleted: exit 5 without --force.
    env.treebox(&["create", "work", "--no-launch"]).ok();
    env.commit_file(&env.box_path("work"), "w.txt", "w", "work");
    env.treebox(&["teardown", "--delete-branch", "work"])
        .code(5);
    assert!(env.box_path("work").exists());
    env.treebox(&["teardown", "--force", "--delete-branch", "work"])
        .ok();
}

#[test]
fn teardown_finds_boxes_whose_pointer_or_directory_is_gone() {
    let env = TestEnv::new();
    env.treebox(&["create", "nopointer", "--no-launch"]).ok();
    env.treebox(&["create", "nodir", "--no-launch"]).ok();
    std::fs::remove_file(env.box_path("nopointer").join(".git")).unwrap();
    std::fs::remove_dir_all(env.box_path("nodir")).unwrap();
    // Without its pointer the checkout cannot be read: it counts as dirty.
    env.treebox(&["teardown", "nopointer"]).code(5);
    env.treebox(&["teardown", "--force", "nopointer"]).ok();
    assert!(!env.box_path("nopointer").exists());
    // A directory deleted by hand: the registration and record are pruned.
    let doc = env
        .treebox(&["teardown", "--force", "--json", "nodir"])
        .ok()
        .json();
    assert_eq!(doc["removed"][0]["prunedOnly"], true);
    assert!(list(&env).is_empty());
    assert_eq!(
        env.git(&env.repo, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
}

#[test]
fn a_live_session_is_shown_and_protects_its_box() {
    let mut env = TestEnv::new();
    env.treebox(&["create", "busy", "--no-launch"]).ok();
    let flag = env.home.join("agent-running");
    write_exec(
        &env.bin.join("claude"),
        &format!(
            "#!/bin/sh\ntouch {}\nwhile [ ! -f {}.stop ]; do sleep 0.05; done\n",
            flag.display(),
            flag.display()
        ),
    );
    env.extra_env.clear();
    let mut agent = env
        .command(TREEBOX, &env.repo)
        .args(["enter", "busy"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !flag.exists() && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(row(&env, "busy")["session"], "live");
    let r = env.treebox(&["teardown", "busy"]);
    r.code(5);
    assert!(r.stderr.contains("live agent session"), "{r:?}");
    std::fs::write(format!("{}.stop", flag.display()), "").unwrap();
    assert!(agent.wait().unwrap().success());
    assert_eq!(row(&env, "busy")["session"], "none");
}

#[test]
fn a_held_lock_is_a_conflict_at_once() {
    let env = TestEnv::new();
    env.treebox(&["create", "locked", "--no-launch"]).ok();
    let lock_path = repo_state(&env).join("locks/locked.lock");
    let held = treebox::state::BoxLock::try_acquire(&lock_path, "locked").unwrap();
    let t = Instant::now();
    let r = env.treebox(&["enter", "locked", "--print"]);
    r.code(5);
    assert!(r.stderr.contains("busy"), "{r:?}");
    env.treebox(&["teardown", "--force", "locked"]).code(5);
    assert!(env.box_path("locked").exists());
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "a held lock must not be waited on"
    );
    drop(held);
    env.treebox(&["teardown", "--force", "locked"]).ok();
    // Lock files do not pile up.
    assert!(!lock_path.exists());
}

#[test]
fn a_killed_create_is_finished_by_enter_or_a_rerun() {
    let env = TestEnv::new();
    let started = env.home.join("setup-started");
    env.write_config(&format!(
        r#"{{"setup": ["touch {}; test -f \"$HOME/fast\" || sleep 30"]}}"#,
        started.display()
    ));
    for (name, finisher) in [("crash-a", "enter"), ("crash-b", "create")] {
        let _ = std::fs::remove_file(&started);
        let _ = std::fs::remove_file(env.home.join("fast"));
        let mut child = env
            .command(TREEBOX, &env.repo)
            .args(["create", name, "--no-launch"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let t = Instant::now();
        while !started.exists() && t.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(started.exists(), "setup never started");
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        assert_eq!(row(&env, name)["deps"], "unknown");
        std::fs::write(env.home.join("fast"), "").unwrap();
        match finisher {
            "enter" => {
                let doc = env.treebox(&["enter", name, "--json"]).ok().json();
                assert_eq!(doc["finishedSetup"], true);
            }
            _ => {
                let doc = env.treebox(&["create", name, "--json"]).ok().json();
                assert_eq!(doc["resumed"], true);
            }
        }
        assert_eq!(row(&env, name)["deps"], "fresh");
        let hooks = env.git(
            &env.box_path(name),
            &["config", "--worktree", "core.hooksPath"],
        );
        assert!(!hooks.trim().is_empty(), "the guard is installed");
    }
    env.git(&env.repo, &["fsck", "--no-progress"]);
}

#[test]
fn racing_creates_and_teardowns_of_one_name_stay_consistent() {
    let env = TestEnv::new();
    for round in 0..2 {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let mut c = env.command(TREEBOX, &env.repo);
                if i % 2 == 0 {
                    c.args(["create", "race", "--no-launch"]);
                } else {
                    c.args(["teardown", "--force", "race"]);
                }
                std::thread::spawn(move || (i, c.output().unwrap()))
            })
            .collect();
        for h in handles {
            let (i, out) = h.join().unwrap();
            let code = out.status.code().unwrap_or(-1);
            // create: 0 or 5; teardown: 0, 3 (already gone) or 5.
            let ok = if i % 2 == 0 { [0, 5, 5] } else { [0, 3, 5] };
            assert!(
                ok.contains(&code),
                "round {round} op {i}: exit {code}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // Either a whole box or none.
        let rows = list(&env);
        let exists = env.box_path("race").exists();
        let registered = env
            .git(&env.repo, &["worktree", "list", "--porcelain"])
            .contains("/race\n");
        if exists {
            assert!(registered);
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0]["state"], "ok", "{rows:?}");
        } else {
            assert!(!registered);
            assert!(rows.is_empty(), "{rows:?}");
        }
        env.git(&env.repo, &["fsck", "--no-progress"]);
        env.treebox(&["teardown", "--force", "--delete-branch", "race"]);
        let _ = env.git_run(&env.repo, &["branch", "-D", "race"]);
    }
}

#[test]
fn planted_config_never_runs_on_the_host() {
    let env = TestEnv::new();
    env.treebox(&["create", "hostile", "--no-launch"]).ok();
    let bx = env.box_path("hostile");
    let marker = env.root().join("pwned");
    let m = marker.display().to_string();
    // What an agent in the box can write: the shared config and its worktree config.
    for scope in ["--local", "--worktree"] {
        for (k, v) in [
            ("filter.evil.clean", format!("touch {m}.clean; cat")),
            ("filter.evil.smudge", format!("touch {m}.smudge; cat")),
            ("filter.evil.process", format!("touch {m}.process")),
            ("core.fsmonitor", format!("touch {m}.fsmonitor; false")),
            ("core.sshCommand", format!("touch {m}.ssh; false")),
            ("credential.helper", format!("!touch {m}.cred")),
            ("diff.external", format!("touch {m}.diff")),
            ("core.pager", format!("touch {m}.pager; cat")),
        ] {
            env.git(&bx, &["config", scope, k, &v]);
        }
    }
    std::fs::write(bx.join(".gitattributes"), "* filter=evil diff=evil\n").unwrap();
    std::fs::write(bx.join("file.txt"), "content\n").unwrap();
    let hooks = env.git(&bx, &["rev-parse", "--git-common-dir"]);
    let hooks = PathBuf::from(hooks.trim()).join("hooks");
    for h in [
        "post-checkout",
        "pre-commit",
        "reference-transaction",
        "post-index-change",
    ] {
        write_exec(&hooks.join(h), &format!("#!/bin/sh\ntouch {m}.{h}\n"));
    }
    // Control: plain git in the box does run what was planted.
    let _ = env.git_run(&bx, &["status"]);
    let fired: Vec<_> = std::fs::read_dir(env.root())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("pwned"))
        .map(|e| e.path())
        .collect();
    assert!(
        !fired.is_empty(),
        "the planted config should fire under plain git"
    );
    for f in fired {
        std::fs::remove_file(f).unwrap();
    }
    let check = |what: &str| {
        let planted: Vec<_> = std::fs::read_dir(env.root())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("pwned"))
            .collect();
        assert!(planted.is_empty(), "{what} ran planted config: {planted:?}");
    };
    env.treebox(&["list"]).ok();
    env.treebox(&["list", "--json"]).ok();
    check("list");
    env.treebox(&["enter", "hostile", "--print"]).ok();
    check("enter --print");
    env.treebox(&["teardown", "hostile"]).code(5); // dirty check
    check("teardown (dirty check)");
    env.treebox(&["create", "neighbour", "--no-launch"]).ok();
    check("create next to it");
    env.treebox(&["teardown", "--force", "hostile"]).ok();
    check("teardown --force");
}

#[test]
fn on_a_terminal_teardown_asks_and_the_picker_shows_what_would_be_lost() {
    let env = TestEnv::new();
    env.treebox(&["create", "keep", "--no-launch"]).ok();
    env.treebox(&["create", "drop", "--no-launch"]).ok();
    env.commit_file(&env.box_path("drop"), "d.txt", "d", "unpushed work");
    // Answering no keeps the box.
    let (ok, text) = env.on_tty(TREEBOX, "teardown keep", "n\n");
    assert!(ok, "{text}");
    assert!(text.contains("[y/N]"), "{text}");
    assert!(env.box_path("keep").exists());
    // The picker lists every box with what removing it would lose.
    let (ok, text) = env.on_tty(TREEBOX, "teardown", "2\ny\n");
    assert!(ok, "{text}");
    assert!(
        text.contains("drop") && text.contains("1 commit not in origin/main"),
        "{text}"
    );
    assert!(text.contains("keep") && text.contains("empty"), "{text}");
    // Boxes are listed by name: 1) drop, 2) keep.
    assert!(!env.box_path("keep").exists(), "{text}");
    assert!(env.box_path("drop").exists());
    // Answering yes removes it.
    let (ok, text) = env.on_tty(TREEBOX, "teardown drop", "y\n");
    assert!(ok, "{text}");
    assert!(!env.box_path("drop").exists(), "{text}");
}

#[test]
fn teardown_never_touches_the_main_worktree() {
    let env = TestEnv::new();
    env.treebox(&["create", "only", "--no-launch"]).ok();
    let before = env.snapshot();
    // The main checkout's branch, its directory name, and its path are not boxes.
    for r in ["main", "repo", env.repo.to_str().unwrap()] {
        env.treebox(&["teardown", "--force", r]).code(3);
        env.sandbox(&["down", "-f", r]).code(3);
    }
    assert_eq!(env.snapshot(), before);
    assert!(env.repo.join("README.md").is_file());
}

/// The answer to `[y/N]` is about what was shown. If the box gains something to lose
/// while the question waits (an agent writes a file), the removal is refused under the
/// box's lock and nothing is removed.
#[test]
fn work_done_while_the_question_waits_is_never_removed() {
    let env = TestEnv::new();
    env.treebox(&["create", "busy", "--no-launch"]).ok();
    // The agent writes while the user reads the question; then the user says yes.
    let (ok, text) = env.on_tty_answering(TREEBOX, "teardown busy", "y\n", || {
        std::fs::write(
            env.box_path("busy").join("late.txt"),
            "written after the question\n",
        )
        .unwrap();
    });
    assert!(!ok, "{text}");
    assert!(text.contains("changed since"), "{text}");
    assert!(env.box_path("busy").join("late.txt").is_file());
}

/// `prune` decides about an unrecorded directory again under its lock, and a lock
/// someone holds keeps that directory (with a warning) without stopping the rest.
#[test]
fn prune_rechecks_unrecorded_directories_under_their_lock() {
    let env = TestEnv::new();
    for n in ["a1", "b1"] {
        env.treebox(&["create", n, "--no-launch"]).ok();
        std::fs::remove_file(crate::proof::record_path(&env, n)).unwrap();
    }
    let state = crate::proof::repo_state(&env);
    let held = state.join("locks/b1.lock");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&held)
        .unwrap();
    fs4::fs_std::FileExt::lock_exclusive(&file).unwrap();
    let doc = env.sandbox(&["prune", "-f", "--json"]).ok().json();
    let removed = doc["removed"].to_string();
    assert!(removed.contains("a1"), "{removed}");
    assert!(!removed.contains("b1"), "{removed}");
    assert!(!env.box_path("a1").exists());
    assert!(env.box_path("b1").exists());
    drop(file);
}

/// A box of a sparse checkout leaves out what the main checkout leaves out (git marks
/// those files skip-worktree): that is not uncommitted work, so the box is clean and
/// `teardown` asks nothing about changes. A file really deleted still counts.
#[test]
fn a_sparse_box_is_clean_and_a_deletion_in_it_is_not() {
    let env = TestEnv::new();
    env.sparse_main();
    env.treebox(&["create", "sparse", "--no-launch"]).ok();
    let boxed = env.box_path("sparse");
    assert!(!boxed.join("left").exists());
    let dirty = || {
        let doc = env.treebox(&["list", "--dirty", "--json"]).ok().json();
        crate::env::named(&doc, "boxes", "sparse")["dirty"].clone()
    };
    assert_eq!(dirty(), false);
    let down = env.treebox(&["teardown", "sparse"]);
    assert!(!down.stderr.contains("uncommitted"), "{down:#?}");
    std::fs::remove_file(boxed.join("kept/a.txt")).unwrap();
    assert_eq!(dirty(), true);
}

#[test]
fn list_dirty_reads_each_working_tree_only_when_asked() {
    let env = TestEnv::new();
    env.treebox(&["create", "clean", "--no-launch"]).ok();
    env.treebox(&["create", "edited", "--no-launch"]).ok();
    std::fs::write(env.box_path("edited").join("README.md"), "changed\n").unwrap();
    env.treebox(&["create", "added", "--no-launch"]).ok();
    std::fs::write(env.box_path("added").join("new.txt"), "new\n").unwrap();
    // The plain list reads no working tree: no `dirty` at all.
    assert!(list(&env).iter().all(|b| b.get("dirty").is_none()));
    let doc = env.treebox(&["list", "--dirty", "--json"]).ok().json();
    crate::schema::assert_valid("list", &doc, "list --dirty --json");
    let dirty = |name: &str| crate::env::named(&doc, "boxes", name)["dirty"].clone();
    assert_eq!(dirty("clean"), false);
    assert_eq!(dirty("edited"), true);
    assert_eq!(dirty("added"), true);
    let table = env.treebox(&["list", "--dirty"]).ok().stdout.clone();
    let header = table.lines().next().unwrap();
    assert!(header.contains("DIRTY"), "{table}");
    let cell = |name: &str| {
        let line = table.lines().find(|l| l.starts_with(name)).unwrap();
        line[header.find("DIRTY").unwrap()..]
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        (cell("clean"), cell("edited")),
        ("-".into(), "yes".into()),
        "{table}"
    );
    assert!(!env.treebox(&["list"]).ok().stdout.contains("DIRTY"));
}

/// `git sandbox down NAME`: naming the box is the decision (SPEC §2), so a part of a
/// name is refused without a terminal, `-f` or not, and nothing is removed; the name or
/// the branch, whole, removes it.
#[test]
fn down_takes_a_whole_name_not_a_part_of_one() {
    let env = TestEnv::new();
    env.treebox(&["create", "bad-name", "--no-launch"]).ok();
    let before = env.snapshot();
    for args in [&["down", "bad"][..], &["down", "-f", "bad"][..]] {
        let r = env.sandbox(args);
        r.code(5);
        assert!(r.stderr.contains("git sandbox down bad-name"), "{r:?}");
        assert_eq!(env.snapshot(), before, "{args:?} changed something");
    }
    env.sandbox(&["down", "bad-name"]).ok();
    assert!(!env.box_path("bad-name").exists());
    // The branch, whole, names it too.
    env.treebox(&["create", "feat/whole", "--no-launch"]).ok();
    env.sandbox(&["down", "feat/whole"]).ok();
    assert!(!env.box_path("feat--whole").exists());
}

/// `git sandbox up` provisions as `create --no-launch` does, flags included: `--dry-run`
/// plans and writes nothing, `--harness` is recorded for `enter`, `--cold` is taken.
#[test]
fn up_takes_creates_dry_run_harness_and_cold() {
    let env = TestEnv::new();
    let before = env.snapshot();
    let r = env.sandbox(&["up", "planned", "--dry-run"]);
    r.ok();
    assert!(r.stderr.contains("would create box `planned`"), "{r:?}");
    let doc = env
        .sandbox(&["up", "planned", "--dry-run", "--json"])
        .ok()
        .json();
    assert_eq!(doc["dryRun"], true, "{doc}");
    assert_eq!(doc["name"], "planned", "{doc}");
    assert_eq!(env.snapshot(), before, "--dry-run wrote something");
    env.sandbox(&["up", "planned", "--harness", "codex", "--cold", "--json"])
        .ok();
    assert_eq!(crate::create::record(&env, "planned")["harness"], "codex");
    // Outside a repository there is no plan to show: refused, nothing written.
    let folder = env.root().join("plain-folder");
    std::fs::create_dir_all(&folder).unwrap();
    let r = crate::env::Run::from_output(
        env.command(crate::env::SANDBOX, &folder)
            .args(["up", "f", "--dry-run"])
            .output()
            .unwrap(),
    );
    r.code(2);
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
}
