//! Clone mode and the `git sandbox` front end, on the host runner.

use std::collections::BTreeMap;
use std::path::Path;

use crate::env::{write_exec, TestEnv};

/// Every file under `dir` with its content hash: "byte for byte" comparisons.
fn tree_digest(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    fn go(base: &Path, d: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                go(base, &p, out);
            } else {
                let data = std::fs::read(&p).unwrap_or_default();
                out.insert(rel, treebox::provision::copy::sha256_hex(&data));
            }
        }
    }
    go(dir, dir, &mut out);
    out
}

fn refs(env: &TestEnv) -> String {
    env.git(
        &env.repo,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    )
}

#[test]
fn a_clone_box_borrows_objects_and_never_writes_the_users_repo() {
    let env = TestEnv::new();
    let doc = env
        .treebox(&["create", "agent/work", "--git", "clone", "--json"])
        .ok()
        .json();
    assert_eq!(doc["gitMode"], "clone");
    let bx = env.box_path("agent--work");
    assert!(bx.join(".git").is_dir(), "a clone has its own .git");
    let alternates = std::fs::read_to_string(bx.join(".git/objects/info/alternates")).unwrap();
    assert_eq!(
        alternates.trim(),
        env.repo
            .join(".git/objects")
            .canonicalize()
            .unwrap()
            .to_string_lossy()
    );
    // The branch exists in the clone only.
    assert_eq!(
        env.git(&bx, &["symbolic-ref", "--short", "HEAD"]).trim(),
        "agent/work"
    );
    assert!(!refs(&env).contains("refs/heads/agent/work"));
    // Remotes: origin is the user's origin; hort-base is the user's repo, fetch only.
    assert_eq!(
        env.git(&bx, &["remote", "get-url", "origin"]).trim(),
        env.origin.to_string_lossy()
    );
    assert_eq!(
        env.git(&bx, &["remote", "get-url", "hort-base"]).trim(),
        env.repo.to_string_lossy()
    );
    // The pin names the start commit.
    let pin = env.git(&env.repo, &["rev-parse", "refs/hort/agent--work/base"]);
    assert_eq!(pin, env.git(&env.repo, &["rev-parse", "origin/main"]));

    // The agent commits and tries to push through hort-base: it fails, nothing written.
    let before = tree_digest(&env.repo.join(".git"));
    env.commit_file(&bx, "agent.txt", "agent work\n", "agent commit");
    env.git(&bx, &["branch", "side"]);
    let push = env.git_run(&bx, &["push", "hort-base", "agent/work", "side"]);
    assert_ne!(push.code, 0, "{push:?}");
    let after = tree_digest(&env.repo.join(".git"));
    assert_eq!(before, after, "the user's .git changed");
    assert!(!refs(&env).contains("refs/heads/side"));
    // The guard binds the clone too.
    env.git(&bx, &["switch", "-q", "-c", "treebox/oops"]);
    let r = env.git_run(&bx, &["push", "origin", "HEAD"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("git branch -m"), "{r:?}");
}

#[test]
fn the_pin_survives_gc_and_pins_are_independent() {
    let env = TestEnv::new();
    let root = env.root();
    env.git(&root, &["clone", "-q", "origin.git", "mate"]);
    let mate = root.join("mate");
    env.git(&mate, &["switch", "-q", "-c", "feature"]);
    env.commit_file(&mate, "f.txt", "only on feature\n", "feature work");
    env.git(&mate, &["push", "-q", "origin", "feature"]);
    let tip = env.git(&mate, &["rev-parse", "HEAD"]).trim().to_string();
    env.treebox(&[
        "create",
        "one",
        "--git",
        "clone",
        "--base",
        "feature",
        "--no-launch",
    ])
    .ok();
    env.treebox(&["create", "two", "--git", "clone", "--no-launch"])
        .ok();
    // The source branch disappears from the user's repo; gc prunes hard.
    env.git(
        &env.repo,
        &["update-ref", "-d", "refs/remotes/origin/feature"],
    );
    env.git(&env.repo, &["reflog", "expire", "--expire=now", "--all"]);
    env.git(&env.repo, &["gc", "-q", "--prune=now"]);
    env.git(&env.repo, &["cat-file", "-e", &tip]);
    env.git(&env.box_path("one"), &["fsck", "--no-progress"]);
    assert!(env.box_path("one").join("f.txt").is_file());
    // Removing one box removes exactly its pin, whatever directory it runs from.
    env.treebox_in(&env.box_path("two"), &["teardown", "--force", "one"])
        .ok();
    let r = refs(&env);
    assert!(!r.contains("refs/hort/one/"), "{r}");
    assert!(r.contains("refs/hort/two/base"), "{r}");
}

#[test]
fn bundle_fetch_and_down_guard_unreturned_work() {
    let env = TestEnv::new();
    env.sandbox(&["up", "solo", "--git", "clone", "--json"])
        .ok();
    let bx = env.box_path("solo");
    env.commit_file(&bx, "s.txt", "solo\n", "solo work");
    let tip = env.git(&bx, &["rev-parse", "HEAD"]).trim().to_string();
    // The repo lacks the tip: down refuses without a terminal, removing nothing.
    let r = env.sandbox(&["down", "solo"]);
    r.code(5);
    assert!(r.stderr.contains("sandbox fetch solo"), "{r:?}");
    assert!(bx.exists());
    let ls = env.sandbox(&["ls", "--json"]).ok().json();
    assert_eq!(ls["boxes"][0]["mode"], "clone, work only in the box");
    // A bundle, verified by git in the user's repo.
    let file = env.root().join("solo.bundle");
    env.sandbox(&["bundle", "solo", "-o", &file.to_string_lossy()])
        .ok();
    env.git(
        &env.repo,
        &["bundle", "verify", "-q", &file.to_string_lossy()],
    );
    // fetch-back: a quarantined ref, and the box no longer holds unreturned work.
    let doc = env.sandbox(&["fetch", "solo", "--json"]).ok().json();
    assert_eq!(doc["ref"], "refs/hort/solo/incoming");
    assert_eq!(
        env.git(&env.repo, &["rev-parse", "refs/hort/solo/incoming"])
            .trim(),
        tip
    );
    let ls = env.sandbox(&["ls", "--json"]).ok().json();
    assert_eq!(ls["boxes"][0]["mode"], "clone");
    env.sandbox(&["down", "solo"]).ok();
    assert!(!bx.exists());
    // The pin goes; the work fetched back stays (the user's now), and survives gc.
    let r = refs(&env);
    assert!(!r.contains("refs/hort/solo/base"), "{r}");
    assert!(r.contains(&format!("refs/hort/solo/incoming {tip}")), "{r}");
    env.git(&env.repo, &["gc", "-q", "--prune=now"]);
    env.git(&env.repo, &["cat-file", "-e", &tip]);
    // With -f, unreturned work goes without asking.
    env.sandbox(&["up", "lossy", "--git", "clone", "--json"])
        .ok();
    env.commit_file(&env.box_path("lossy"), "l.txt", "l", "lost");
    env.sandbox(&["down", "-f", "lossy"]).ok();
    assert!(!env.box_path("lossy").exists());
}

#[test]
fn run_passes_exit_codes_and_signals_through() {
    let env = TestEnv::new();
    env.sandbox(&["up", "r", "--json"]).ok();
    env.sandbox(&["run", "r", "--", "sh", "-c", "exit 7"])
        .code(7);
    env.sandbox(&["run", "r", "--", "sh", "-c", "kill -9 $$"])
        .code(137);
    let r = env.sandbox(&["run", "r", "--", "pwd"]);
    assert_eq!(r.ok().stdout.trim(), env.box_path("r").to_string_lossy());
    env.sandbox(&["run", "nope", "--", "true"]).code(3);
}

#[test]
fn both_front_ends_see_and_remove_each_others_boxes() {
    let env = TestEnv::new();
    env.sandbox(&["up", "from-sandbox", "--json"]).ok();
    env.treebox(&["create", "from-treebox", "--git", "clone", "--no-launch"])
        .ok();
    let names = |v: serde_json::Value| {
        let mut n: Vec<String> = v["boxes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["name"].as_str().unwrap().to_string())
            .collect();
        n.sort();
        n
    };
    let a = names(env.treebox(&["list", "--json"]).ok().json());
    let b = names(env.sandbox(&["ls", "--json"]).ok().json());
    assert_eq!(a, ["from-sandbox", "from-treebox"]);
    assert_eq!(a, b);
    env.treebox(&["enter", "from-sandbox", "--print"]).ok();
    env.sandbox(&["run", "from-treebox", "--", "true"]).ok();
    env.treebox(&["teardown", "--force", "from-sandbox"]).ok();
    env.sandbox(&["down", "from-treebox"]).ok();
    assert!(env.treebox(&["list", "--json"]).ok().json()["boxes"]
        .as_array()
        .unwrap()
        .is_empty());
}

#[test]
fn git_mode_precedence_flag_project_user_default() {
    let env = TestEnv::new();
    let mode = |args: &[&str]| {
        env.treebox(args).ok().json()["gitMode"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(mode(&["create", "d0", "--json"]), "worktree");
    env.write_config(r#"{"git": "clone"}"#);
    assert_eq!(mode(&["create", "u1", "--json"]), "clone");
    std::fs::write(env.repo.join(".treebox.json"), r#"{"git": "worktree"}"#).unwrap();
    assert_eq!(mode(&["create", "p1", "--json"]), "worktree");
    assert_eq!(mode(&["create", "f1", "--git", "clone", "--json"]), "clone");
    env.write_config(r#"{"git": "worktree"}"#);
    std::fs::write(env.repo.join(".treebox.json"), r#"{"git": "clone"}"#).unwrap();
    assert_eq!(mode(&["create", "p2", "--json"]), "clone");
    assert_eq!(
        mode(&["create", "f2", "--git", "worktree", "--json"]),
        "worktree"
    );
}

#[test]
fn resuming_a_half_built_box_in_the_other_mode_is_refused() {
    let env = TestEnv::new();
    env.write_config(r#"{"setup": ["false"]}"#);
    env.treebox(&["create", "half", "--git", "clone", "--no-launch"])
        .ok();
    let before = env.snapshot();
    let r = env.treebox(&["create", "half", "--git", "worktree", "--no-launch"]);
    r.code(5);
    assert!(
        r.stderr.contains("clone") && r.stderr.contains("worktree"),
        "{r:?}"
    );
    assert!(r.stderr.contains("--git clone"), "{r:?}");
    assert_eq!(env.snapshot(), before);
    // An explicit mode that disagrees with the record is a conflict for enter too.
    env.treebox(&["enter", "half", "--git", "worktree", "--print"])
        .code(5);
}

#[test]
fn clone_flag_outside_a_repository_is_refused() {
    let env = TestEnv::new();
    let plain = env.root().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let r = env.treebox_in(&plain, &["create", "x", "--git", "clone", "--no-launch"]);
    r.code(2);
    assert_eq!(std::fs::read_dir(&plain).unwrap().count(), 0);
}

#[test]
fn a_repo_without_origin_gives_a_clone_without_origin() {
    let env = TestEnv::new();
    env.git(&env.repo, &["remote", "remove", "origin"]);
    env.treebox(&["create", "lonely", "--git", "clone", "--no-launch"])
        .ok();
    let remotes = env.git(&env.box_path("lonely"), &["remote"]);
    assert_eq!(remotes.trim(), "hort-base");
}

#[test]
fn prune_removes_leftovers_after_listing_them() {
    let env = TestEnv::new();
    env.treebox(&["create", "kept", "--no-launch"]).ok();
    env.treebox(&["create", "gone", "--git", "clone", "--no-launch"])
        .ok();
    std::fs::remove_dir_all(env.box_path("gone")).unwrap();
    env.git(&env.repo, &["update-ref", "refs/hort/ghost/base", "HEAD"]);
    // Without a terminal and without -f: listed, refused, nothing removed.
    let before = env.snapshot();
    let r = env.sandbox(&["prune"]);
    r.code(5);
    assert!(
        r.stderr.contains("gone") && r.stderr.contains("refs/hort/ghost/base"),
        "{r:?}"
    );
    assert_eq!(env.snapshot(), before);
    env.sandbox(&["prune", "-f"]).ok();
    let r = refs(&env);
    assert!(
        !r.contains("refs/hort/ghost") && !r.contains("refs/hort/gone"),
        "{r}"
    );
    assert!(env.box_path("kept").exists());
    let names: Vec<_> = env.treebox(&["list", "--json"]).ok().json()["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].clone())
        .collect();
    assert_eq!(names, ["kept"]);
}

#[test]
fn planted_config_in_a_clone_never_runs_on_the_host() {
    let env = TestEnv::new();
    env.treebox(&["create", "hostile", "--git", "clone", "--no-launch"])
        .ok();
    let bx = env.box_path("hostile");
    let m = env.root().join("pwned").display().to_string();
    for (k, v) in [
        ("filter.evil.clean", format!("touch {m}.clean; cat")),
        ("core.fsmonitor", format!("touch {m}.fsmonitor; false")),
        ("core.sshCommand", format!("touch {m}.ssh; false")),
        ("credential.helper", format!("!touch {m}.cred")),
        ("diff.external", format!("touch {m}.diff")),
        ("core.pager", format!("touch {m}.pager; cat")),
        (
            "core.hooksPath",
            bx.join(".git/hooks").display().to_string(),
        ),
    ] {
        env.git(&bx, &["config", k, &v]);
    }
    write_exec(
        &bx.join(".git/hooks/post-checkout"),
        &format!("#!/bin/sh\ntouch {m}.hook\n"),
    );
    std::fs::write(bx.join(".gitattributes"), "* filter=evil\n").unwrap();
    std::fs::write(bx.join("x.txt"), "x\n").unwrap();
    env.commit_file(&bx, "y.txt", "y\n", "y");
    for f in std::fs::read_dir(env.root()).unwrap().flatten() {
        if f.file_name().to_string_lossy().starts_with("pwned") {
            std::fs::remove_file(f.path()).unwrap();
        }
    }
    let check = |what: &str| {
        let fired: Vec<_> = std::fs::read_dir(env.root())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("pwned"))
            .collect();
        assert!(fired.is_empty(), "{what} ran planted config: {fired:?}");
    };
    env.treebox(&["list", "--json"]).ok();
    env.sandbox(&["ls"]).ok();
    check("list / ls");
    env.treebox(&["enter", "hostile", "--print"]).ok();
    check("enter --print");
    let file = env.root().join("h.bundle");
    env.sandbox(&["bundle", "hostile", "-o", &file.to_string_lossy()])
        .ok();
    env.sandbox(&["fetch", "hostile"]).ok();
    check("bundle / fetch");
    env.treebox(&["teardown", "hostile"]).code(5);
    check("teardown (dirty check)");
    env.treebox(&["teardown", "--force", "hostile"]).ok();
    check("teardown --force");
}

fn sandbox_in(env: &TestEnv, dir: &Path, args: &[&str]) -> crate::env::Run {
    let out = env
        .command(crate::env::SANDBOX, dir)
        .args(args)
        .output()
        .unwrap();
    crate::env::Run::from_output(out)
}

#[test]
fn a_folder_without_git_is_sandboxed_as_itself_and_never_removed() {
    let env = TestEnv::new();
    let folder = env.root().join("project");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("notes.txt"), "mine\n").unwrap();
    // A git mode asked for by flag cannot be honoured here: refused, nothing made.
    for flag in ["clone", "worktree"] {
        let r = sandbox_in(&env, &folder, &["up", "p", "--git", flag, "--json"]);
        r.code(2);
        assert!(r.stderr.contains("requires a git repository"), "{r:?}");
    }
    assert!(!env.state_dir().join("treebox/repos").exists());
    // From the config only: a warning, and the folder itself is the box.
    env.write_config(r#"{"git": "clone"}"#);
    let r = sandbox_in(&env, &folder, &["up", "p", "-d"]);
    r.ok();
    assert!(r.stderr.contains("mounts the folder itself"), "{r:?}");
    assert_eq!(r.stdout.trim(), folder.to_string_lossy());
    let out = sandbox_in(&env, &folder, &["run", "p", "--", "cat", "notes.txt"]);
    assert_eq!(out.ok().stdout, "mine\n");
    let ls = env.sandbox(&["ls", "--json"]).ok().json();
    let row = ls["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "p")
        .cloned()
        .unwrap();
    assert_eq!(row["mode"], "folder");
    // `up -d` left its shell running in the box's session.
    assert_eq!(row["state"], "live");
    // A second up of the same box is a conflict, as for any box.
    sandbox_in(&env, &folder, &["up", "p", "-d"]).code(5);
    // down removes the box, never the folder; while the shell runs, only with -f.
    sandbox_in(&env, &folder, &["down", "p"]).code(5);
    sandbox_in(&env, &folder, &["down", "-f", "p"]).ok();
    assert_eq!(
        std::fs::read_to_string(folder.join("notes.txt")).unwrap(),
        "mine\n"
    );
    sandbox_in(&env, &folder, &["run", "p", "--", "true"]).code(3);
    assert!(env.sandbox(&["ls", "--json"]).ok().json()["boxes"]
        .as_array()
        .unwrap()
        .is_empty());
}

/// `git sandbox up --harness` names the agent of a folder box too (it was the
/// config's, the flag ignored), and the config's harness stays the default.
#[test]
fn a_folder_box_takes_the_harness_its_up_names() {
    let env = TestEnv::new();
    let folder = env.root().join("project");
    std::fs::create_dir_all(&folder).unwrap();
    env.write_config(r#"{"harness": "claude"}"#);
    let doc = sandbox_in(&env, &folder, &["up", "f", "--harness", "codex", "--json"])
        .ok()
        .json();
    assert_eq!(doc["harness"], "codex", "{doc}");
    let doc = sandbox_in(&env, &folder, &["up", "g", "--json"])
        .ok()
        .json();
    assert_eq!(doc["harness"], "claude", "{doc}");
    for name in ["f", "g"] {
        sandbox_in(&env, &folder, &["down", "-f", name]).ok();
    }
}

#[test]
fn a_clone_box_keeps_env_out_of_git() {
    let env = TestEnv::new();
    std::fs::write(env.repo.join(".env"), "SECRET=1\n").unwrap();
    env.treebox(&["create", "sec", "--git", "clone", "--no-launch"])
        .ok();
    let bx = env.box_path("sec");
    assert_eq!(
        std::fs::read_to_string(bx.join(".env")).unwrap(),
        "SECRET=1\n"
    );
    assert_eq!(env.git(&bx, &["status", "--porcelain"]), "");
    env.git(&bx, &["add", "-A"]);
    assert_eq!(env.git(&bx, &["diff", "--cached", "--name-only"]), "");
}

#[test]
fn attach_opens_the_login_shell_in_the_box_and_passes_its_code() {
    let mut env = TestEnv::new();
    env.sandbox(&["up", "sh", "--json"]).ok();
    let shell = env.bin.join("fake-shell");
    crate::env::write_exec(
        &shell,
        &format!(
            "#!/bin/sh\necho \"pwd=$PWD args=$* box=$TREEBOX_BOX\" > {}/shell.log\nexit 4\n",
            env.home.display()
        ),
    );
    env.extra_env
        .push(("SHELL".into(), shell.to_string_lossy().into_owned()));
    env.sandbox(&["attach", "sh"]).code(4);
    let log = std::fs::read_to_string(env.home.join("shell.log")).unwrap();
    assert_eq!(
        log.trim(),
        format!("pwd={} args=-l box=sh", env.box_path("sh").display())
    );
    env.sandbox(&["attach", "nope"]).code(3);
}

#[test]
fn prune_leaves_a_lock_someone_holds() {
    let env = TestEnv::new();
    env.treebox(&["create", "real", "--no-launch"]).ok();
    let locks = env.repo_state().join("locks");
    let held_path = locks.join("busy.lock");
    let held = treebox::state::BoxLock::try_acquire(&held_path, "busy").unwrap();
    std::fs::write(locks.join("stray.lock"), "").unwrap();
    let doc = env.sandbox(&["prune", "-f", "--json"]).ok().json();
    let removed = doc["removed"].to_string();
    assert!(removed.contains("stray.lock"), "{doc}");
    assert!(
        !removed.contains("busy.lock"),
        "a held lock is not stray: {doc}"
    );
    assert!(held_path.exists());
    assert!(!locks.join("stray.lock").exists());
    drop(held);
}

#[test]
fn up_with_branch_checks_out_an_existing_branch_in_either_mode() {
    let env = TestEnv::new();
    // A branch only origin has, and one only the user's repo has.
    let root = env.root();
    env.git(&root, &["clone", "-q", "origin.git", "mate"]);
    let mate = root.join("mate");
    env.git(&mate, &["switch", "-q", "-c", "feature"]);
    env.commit_file(&mate, "f.txt", "feature\n", "feature work");
    env.git(&mate, &["push", "-q", "origin", "feature"]);
    let feature = env.git(&mate, &["rev-parse", "HEAD"]).trim().to_string();
    env.git(&env.repo, &["branch", "local-only"]);
    let local = env
        .git(&env.repo, &["rev-parse", "local-only"])
        .trim()
        .to_string();

    // Clone mode: the clone is on the existing branch; the user's repo gains no branch.
    env.sandbox(&[
        "up", "cf", "--branch", "feature", "--git", "clone", "--json",
    ])
    .ok();
    let cf = env.box_path("cf");
    assert_eq!(
        env.git(&cf, &["symbolic-ref", "--short", "HEAD"]).trim(),
        "feature"
    );
    assert_eq!(env.git(&cf, &["rev-parse", "HEAD"]).trim(), feature);
    assert!(cf.join("f.txt").is_file());
    assert!(
        !refs(&env).contains("refs/heads/feature "),
        "{}",
        refs(&env)
    );
    env.sandbox(&[
        "up",
        "cl",
        "--branch",
        "local-only",
        "--git",
        "clone",
        "--json",
    ])
    .ok();
    let cl = env.box_path("cl");
    assert_eq!(
        env.git(&cl, &["symbolic-ref", "--short", "HEAD"]).trim(),
        "local-only"
    );
    assert_eq!(env.git(&cl, &["rev-parse", "HEAD"]).trim(), local);

    // Worktree mode: the worktree is on the branch (a local one made from origin's).
    env.sandbox(&["up", "wf", "--branch", "feature", "--json"])
        .ok();
    let wf = env.box_path("wf");
    assert_eq!(
        env.git(&wf, &["symbolic-ref", "--short", "HEAD"]).trim(),
        "feature"
    );
    assert_eq!(env.git(&wf, &["rev-parse", "HEAD"]).trim(), feature);
    // Both front ends list the branch each box is on.
    let ls = env.sandbox(&["ls", "--json"]).ok().json();
    let branch_of = |leaf: &str| {
        ls["boxes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["name"] == leaf)
            .map(|b| b["branch"].clone())
    };
    assert_eq!(branch_of("cf").unwrap(), "feature");
    assert_eq!(branch_of("cl").unwrap(), "local-only");
    assert_eq!(branch_of("wf").unwrap(), "feature");
    // A branch that exists nowhere: not found, nothing made.
    let before = env.snapshot();
    env.sandbox(&[
        "up", "nb", "--branch", "no-such", "--git", "clone", "--json",
    ])
    .code(3);
    assert_eq!(env.snapshot(), before);
}

#[test]
fn up_opens_a_login_shell_in_the_new_box_and_passes_its_code() {
    let mut env = TestEnv::new();
    let shell = env.bin.join("fake-shell");
    write_exec(
        &shell,
        &format!(
            "#!/bin/sh\necho \"pwd=$PWD args=$* box=$TREEBOX_BOX\" > {}/shell.log\nexit 6\n",
            env.home.display()
        ),
    );
    env.extra_env
        .push(("SHELL".into(), shell.to_string_lossy().into_owned()));
    env.sandbox(&["up", "shelled", "--git", "clone"]).code(6);
    let log = std::fs::read_to_string(env.home.join("shell.log")).unwrap();
    assert_eq!(
        log.trim(),
        format!(
            "pwd={} args=-l box=shelled",
            env.box_path("shelled").display()
        )
    );
    // The box stays after the shell exits, complete.
    let doc = env.treebox(&["list", "--json"]).ok().json();
    assert_eq!(doc["boxes"][0]["name"], "shelled");
    assert_eq!(doc["boxes"][0]["state"], "ok");
    assert_eq!(doc["boxes"][0]["deps"], "fresh", "setup completed");
}

#[test]
fn on_a_terminal_down_asks_before_losing_unreturned_work() {
    let env = TestEnv::new();
    env.sandbox(&["up", "held", "--git", "clone", "--json"])
        .ok();
    let bx = env.box_path("held");
    env.commit_file(&bx, "h.txt", "held\n", "work only in the box");
    // No: nothing removed, the pin stays.
    let (ok, text) = env.on_tty(crate::env::SANDBOX, "down held", "n\n");
    assert!(ok, "{text}");
    assert!(
        text.contains("holds commits the repository does not have"),
        "{text}"
    );
    assert!(text.contains("[y/N]"), "{text}");
    assert!(bx.join("h.txt").is_file());
    assert!(refs(&env).contains("refs/hort/held/base"));
    // Yes: the box and its pin go.
    let (ok, text) = env.on_tty(crate::env::SANDBOX, "down held", "y\n");
    assert!(ok, "{text}");
    assert!(!bx.exists(), "{text}");
    assert!(!refs(&env).contains("refs/hort/held/"));
    // A clean box is not asked about: naming it is the decision.
    env.sandbox(&["up", "plain", "--git", "clone", "--json"])
        .ok();
    let (ok, text) = env.on_tty(crate::env::SANDBOX, "down plain", "");
    assert!(ok, "{text}");
    assert!(!text.contains("[y/N]"), "{text}");
    assert!(!env.box_path("plain").exists());
}

#[test]
fn a_clone_box_can_start_in_a_repository_with_no_commits() {
    let mut env = TestEnv::new();
    let empty = env.root().join("empty");
    env.git(&env.root(), &["init", "-q", "empty"]);
    env.repo = empty.clone();
    // A worktree needs a commit: exit 3, a hint naming the way out, nothing written.
    let before = env.snapshot();
    let r = env.treebox(&["create", "wt", "--no-launch"]);
    r.code(3);
    assert!(r.stderr.contains("no commits yet"), "{r:?}");
    assert!(r.stderr.contains("--git clone"), "{r:?}");
    // A base named on the command line cannot be honoured either.
    env.treebox(&[
        "create",
        "nb",
        "--git",
        "clone",
        "--base",
        "main",
        "--no-launch",
    ])
    .code(3);
    assert_eq!(env.snapshot(), before);

    // The plan says what will happen, and matches its schema.
    let plan = env
        .treebox(&["create", "fresh", "--git", "clone", "--dry-run", "--json"])
        .ok()
        .json();
    crate::schema::assert_valid("plan", &plan, "dry-run in a repository with no commits");
    assert_eq!(plan["checkout"]["kind"], "unborn");
    assert_eq!(plan["baseCommit"], serde_json::Value::Null);
    assert_eq!(env.snapshot(), before, "--dry-run wrote something");

    // A clone on an unborn branch: no pin (there is nothing to pin), no error.
    let doc = env
        .treebox(&["create", "fresh", "--git", "clone", "--no-launch", "--json"])
        .ok()
        .json();
    crate::schema::assert_valid("create", &doc, "create in a repository with no commits");
    let bx = env.box_path("fresh");
    assert_eq!(
        env.git(&bx, &["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/fresh"
    );
    assert!(
        env.git_run(&bx, &["rev-parse", "--verify", "-q", "HEAD"])
            .code
            != 0
    );
    assert_eq!(refs(&env), "", "the user's repository has no refs at all");
    // Nothing committed yet: nothing unreturned.
    let ls = env.sandbox(&["ls", "--json"]).ok().json();
    assert_eq!(ls["boxes"][0]["mode"], "clone");
    assert_eq!(ls["boxes"][0]["branch"], "fresh");

    // The agent's first commit is work only the box holds, until it is fetched back.
    env.commit_file(&bx, "first.txt", "first\n", "first commit");
    let tip = env.git(&bx, &["rev-parse", "HEAD"]).trim().to_string();
    let ls = env.sandbox(&["ls", "--json"]).ok().json();
    assert_eq!(ls["boxes"][0]["mode"], "clone, work only in the box");
    env.sandbox(&["down", "fresh"]).code(5);
    assert!(bx.join("first.txt").is_file());
    env.sandbox(&["fetch", "fresh"]).ok();
    assert_eq!(
        env.git(&empty, &["rev-parse", "refs/hort/fresh/incoming"])
            .trim(),
        tip
    );
    env.sandbox(&["down", "fresh"]).ok();
    assert!(!bx.exists());
}

/// Set the modification time of every file under each of `dirs` to `ago` seconds back.
fn backdate(dirs: &[std::path::PathBuf], ago: u64) {
    for d in dirs {
        let st = std::process::Command::new("find")
            .arg(d)
            .args(["-type", "f", "-exec", "touch", "-m", "-d"])
            .arg(format!("@{}", now_secs() - ago))
            .args(["{}", "+"])
            .status()
            .unwrap();
        assert!(st.success(), "touch under {}", d.display());
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[test]
fn prune_idle_removes_unused_boxes_that_hold_nothing_to_lose() {
    let env = TestEnv::new();
    for (name, mode) in [
        ("clean", "worktree"),
        ("dirty", "worktree"),
        ("clone-clean", "clone"),
        ("clone-work", "clone"),
    ] {
        env.treebox(&["create", name, "--git", mode, "--no-launch"])
            .ok();
    }
    std::fs::write(env.box_path("dirty").join("notes.txt"), "draft\n").unwrap();
    env.commit_file(
        &env.box_path("clone-work"),
        "w.txt",
        "w\n",
        "only in the box",
    );

    // Every box was used a moment ago: nothing is idle for an hour.
    let before = env.snapshot();
    let r = env.sandbox(&["prune", "--idle", "1h"]);
    r.ok();
    assert!(r.stderr.contains("nothing to prune"), "{r:?}");
    // Idle for 0s: the two with something at stake are kept and say why; without a
    // terminal and without -f, nothing is removed.
    let r = env.sandbox(&["prune", "--idle", "0s"]);
    r.code(5);
    // The hint is the command that removes what was listed: with its --idle.
    assert!(r.stderr.contains("git sandbox prune -f --idle 0`"), "{r:?}");
    assert!(r.stderr.contains("kept box `dirty`"), "{r:?}");
    assert!(r.stderr.contains("uncommitted changes"), "{r:?}");
    assert!(r.stderr.contains("kept box `clone-work`"), "{r:?}");
    assert!(
        r.stderr
            .contains("holds commits the repository does not have"),
        "{r:?}"
    );
    assert_eq!(env.snapshot(), before);
    let doc = env
        .sandbox(&["prune", "--idle", "0s", "-f", "--json"])
        .ok()
        .json();
    crate::schema::assert_valid("sandbox-prune", &doc, "prune --idle --json");
    let removed: Vec<String> = doc["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["kind"].as_str().unwrap(),
                e["what"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(removed.len(), 2, "{removed:?}");
    assert!(
        removed.iter().all(|r| r.starts_with("idle ")),
        "{removed:?}"
    );
    for gone in ["clean", "clone-clean"] {
        crate::proof::assert_gone(&env, gone);
    }
    for kept in ["dirty", "clone-work"] {
        assert!(env.box_path(kept).exists(), "{kept} was removed");
    }
    assert!(refs(&env).contains("refs/hort/clone-work/base"));

    // Idleness is measured: a box whose record and git files are 3 hours old goes with
    // --idle 2h; one just used stays.
    env.treebox(&["create", "old", "--no-launch"]).ok();
    env.treebox(&["create", "new", "--no-launch"]).ok();
    let state = env.state_dir();
    let old_record = std::fs::read_dir(state.join("treebox/repos"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("boxes/old"))
        .find(|p| p.is_dir())
        .expect("old's bookkeeping");
    backdate(&[old_record, env.repo.join(".git/worktrees/old")], 3 * 3600);
    let r = env.sandbox(&["prune", "--idle", "2h", "-f"]);
    r.ok();
    assert!(r.stderr.contains("box `old` (idle 3h"), "{r:?}");
    crate::proof::assert_gone(&env, "old");
    assert!(env.box_path("new").exists());
    // A bad duration is a usage error, and nothing is removed.
    let before = env.snapshot();
    env.sandbox(&["prune", "--idle", "soon"]).code(2);
    assert_eq!(env.snapshot(), before);
}

#[test]
fn sandbox_ls_shows_every_box_on_the_machine_and_each_command_stays_in_its_repo() {
    let env = TestEnv::new();
    let root = env.root();
    env.git(&root, &["clone", "-q", "origin.git", "second"]);
    let second = root.join("second");
    env.sandbox(&["up", "here", "--git", "clone", "--json"])
        .ok();
    env.treebox_in(&second, &["create", "there", "--no-launch"])
        .ok();
    // The clone box gets an untracked file: dirty, read without running its config.
    std::fs::write(env.box_path("here").join("scratch.txt"), "x\n").unwrap();
    let rows = |dir: &Path| {
        let out = env
            .command(crate::env::SANDBOX, dir)
            .args(["ls", "--json"])
            .output()
            .unwrap();
        let doc = crate::env::Run::from_output(out).ok().json();
        let mut v: Vec<(String, String, String, bool)> = doc["boxes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                (
                    b["name"].as_str().unwrap().to_string(),
                    b["repo"].as_str().unwrap().to_string(),
                    b["mode"].as_str().unwrap().to_string(),
                    b["dirty"].as_bool().unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let want = vec![
        (
            "here".to_string(),
            env.repo.to_string_lossy().into_owned(),
            "clone".to_string(),
            true,
        ),
        (
            "there".to_string(),
            second.to_string_lossy().into_owned(),
            "worktree".to_string(),
            false,
        ),
    ];
    // The same machine-wide list from either repository and from outside both.
    assert_eq!(rows(&env.repo), want);
    assert_eq!(rows(&second), want);
    assert_eq!(rows(&env.home), want);
    // Commands that take a name act in the repository they run in.
    // A name from another repository: not found here, and the hint says where it is.
    let before = env.snapshot();
    let there = format!("belongs to {}", second.display());
    for r in [
        env.sandbox(&["down", "-f", "there"]),
        env.sandbox(&["run", "there", "--", "true"]),
        env.treebox(&["enter", "there", "--print"]),
        env.treebox(&["teardown", "--force", "there"]),
    ] {
        r.code(3);
        assert!(r.stderr.contains(&there), "{r:?}");
    }
    let outside = env
        .command(crate::env::SANDBOX, &env.home)
        .args(["down", "-f", "there"])
        .output()
        .unwrap();
    let r = crate::env::Run::from_output(outside);
    r.code(3);
    assert!(r.stderr.contains(&there), "{r:?}");
    assert_eq!(env.snapshot(), before);
    env.treebox_in(&second, &["teardown", "--force", "there"])
        .ok();
    assert_eq!(rows(&env.home).len(), 1);
}

/// Work on a branch the clone is not on, or in its stash, is work all the same: `down`
/// asks for it and `prune --idle` keeps the box.
#[test]
fn work_on_other_branches_or_in_the_stash_is_unreturned_work() {
    let env = TestEnv::new();
    env.sandbox(&["up", "side", "--git", "clone", "--json"])
        .ok();
    let bx = env.box_path("side");
    env.git(&bx, &["switch", "-q", "-c", "elsewhere"]);
    env.commit_file(&bx, "e.txt", "e\n", "on another branch");
    env.git(&bx, &["switch", "-q", "side"]);
    env.sandbox(&["up", "stashed", "--git", "clone", "--json"])
        .ok();
    let st = env.box_path("stashed");
    std::fs::write(st.join("README.md"), "changed\n").unwrap();
    env.git(&st, &["stash", "-q"]);
    for name in ["side", "stashed"] {
        let ls = env.sandbox(&["ls", "--json"]).ok().json();
        let row = crate::env::named(&ls, "boxes", name);
        assert_eq!(row["mode"], "clone, work only in the box", "{name}");
        env.sandbox(&["down", name]).code(5);
    }
    let r = env.sandbox(&["prune", "--idle", "0s", "-f"]);
    r.ok();
    assert!(env.box_path("side").exists() && st.exists(), "{r:?}");
}

/// A box can plant a FIFO where git keeps a small file; reading it would block
/// forever. Listing still answers, the box's work counts as unknown, and `-f`
/// removes it without reading it.
#[test]
fn a_fifo_in_a_box_never_hangs_the_host() {
    let env = TestEnv::new();
    env.sandbox(&["up", "fifo", "--git", "clone", "--json"])
        .ok();
    env.treebox(&["create", "wfifo", "--no-launch"]).ok();
    let mkfifo = crate::env::mkfifo;
    let bx = env.box_path("fifo");
    mkfifo(&bx.join(".git/config"));
    mkfifo(&bx.join(".git/objects/info/alternates"));
    mkfifo(&env.repo.join(".git/worktrees/wfifo/HEAD"));
    mkfifo(&env.repo.join(".git/worktrees/wfifo/gitdir"));
    // Every command is bounded by `timeout`: a hang fails the test instead of
    // stalling it.
    let timed = |bin: &str, args: &[&str]| {
        let out = env
            .command("timeout", &env.repo)
            .arg("20")
            .arg(bin)
            .args(args)
            .output()
            .unwrap();
        let r = crate::env::Run::from_output(out);
        assert_ne!(r.code, 124, "{bin} {args:?} hung");
        r
    };
    timed(crate::env::SANDBOX, &["ls", "--json"]).ok();
    timed(crate::env::TREEBOX, &["list", "--json"]).ok();
    let r = timed(crate::env::SANDBOX, &["down", "fifo"]);
    r.code(5);
    timed(crate::env::SANDBOX, &["down", "-f", "fifo"]).ok();
    assert!(!bx.exists());
    // git itself would hang on the planted registration: create goes on without it
    // (no fetch, the worktree registered by hand), and says so.
    let r = timed(crate::env::TREEBOX, &["create", "blocked", "--no-launch"]);
    r.ok();
    assert!(r.stderr.contains("origin not fetched"), "{r:?}");
    timed(crate::env::TREEBOX, &["teardown", "--force", "wfifo"]).ok();
    assert!(!env.repo.join(".git/worktrees/wfifo").exists());
    timed(crate::env::TREEBOX, &["create", "after", "--no-launch"]).ok();
}

/// A clone whose record was lost is still a box: listed, kept by prune while it holds
/// work, its pin kept, and removable by name.
#[test]
fn a_clone_without_its_record_is_still_a_box() {
    let env = TestEnv::new();
    env.treebox(&["create", "kept", "--no-launch"]).ok();
    env.sandbox(&["up", "lost", "--git", "clone", "--json"])
        .ok();
    env.commit_file(&env.box_path("lost"), "l.txt", "l\n", "work");
    let record = crate::proof::record_path(&env, "lost");
    std::fs::remove_file(&record).unwrap();
    let list = env.treebox(&["list", "--json"]).ok().json();
    let row = list["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "lost")
        .expect("listed")
        .clone();
    assert_eq!(row["state"], "no-record");
    let ls = env.sandbox(&["ls", "--json"]).ok().json();
    let row = ls["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "lost")
        .expect("listed by ls")
        .clone();
    assert_eq!(row["mode"], "clone, work only in the box");
    // prune keeps it (it holds work) and its pin.
    let r = env.sandbox(&["prune", "-f"]);
    r.ok();
    assert!(r.stderr.contains("kept directory"), "{r:?}");
    assert!(env.box_path("lost").exists());
    assert!(refs(&env).contains("refs/hort/lost/base"));
    // down asks (no terminal: refused); -f removes it and its pin.
    env.sandbox(&["down", "lost"]).code(5);
    env.sandbox(&["down", "-f", "lost"]).ok();
    assert!(!env.box_path("lost").exists());
    assert!(!refs(&env).contains("refs/hort/lost/base"));
}

/// A box whose `.git` is gone sits inside the user's checkout: git run there would
/// find the user's repository. Nothing is run in it; list says it is broken.
#[test]
fn a_box_without_its_git_is_never_run_in() {
    let env = TestEnv::new();
    env.sandbox(&["up", "c", "--git", "clone", "--json"]).ok();
    env.treebox(&["create", "w", "--no-launch"]).ok();
    std::fs::remove_dir_all(env.box_path("c").join(".git")).unwrap();
    std::fs::remove_file(env.box_path("w").join(".git")).unwrap();
    let main_before = env.git(&env.repo, &["rev-parse", "HEAD"]);
    for name in ["c", "w"] {
        let r = env.sandbox(&[
            "run",
            name,
            "--",
            "git",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ]);
        r.code(1);
        assert!(r.stderr.contains("lost its `.git`"), "{r:?}");
        env.treebox(&["enter", name, "--print"]).code(1);
        assert_eq!(crate::proof::row(&env, name).unwrap()["state"], "broken");
    }
    assert_eq!(env.git(&env.repo, &["rev-parse", "HEAD"]), main_before);
    // The worktree's hint works: git repairs its pointer, and the box runs again.
    let r = env.sandbox(&["run", "w", "--", "true"]);
    assert!(r.stderr.contains("worktree repair"), "{r:?}");
    env.git(&env.repo, &["worktree", "repair"]);
    env.sandbox(&["run", "w", "--", "true"]).ok();
    // Even if git is started in a box some other way, it stops at the box root.
    let r = env.sandbox(&[
        "run",
        "w",
        "--",
        "sh",
        "-c",
        "echo $GIT_CEILING_DIRECTORIES",
    ]);
    assert_eq!(
        r.ok().stdout.trim(),
        env.box_path("w").parent().unwrap().to_string_lossy()
    );
    env.treebox(&["teardown", "--force", "c"]).ok();
}

#[test]
fn bundle_and_fetch_edges() {
    let env = TestEnv::new();
    env.sandbox(&["up", "b", "--git", "clone", "--json"]).ok();
    let bx = env.box_path("b");
    env.commit_file(&bx, "b.txt", "b\n", "work");
    // The bundle made by `bundle` is the user's: fetch does not delete it.
    let made = env.sandbox(&["bundle", "b"]).ok().stdout.trim().to_string();
    env.sandbox(&["fetch", "b"]).ok();
    assert!(Path::new(&made).is_file(), "fetch deleted {made}");
    // A second fetch with nothing new is a no-op, not an error.
    let doc = env.sandbox(&["fetch", "b", "--json"]).ok().json();
    crate::schema::assert_valid("sandbox-fetch", &doc, "fetch with nothing new");
    assert_eq!(doc["commits"], 0);
    // -o DIR writes <leaf>.bundle inside it; -o - writes to stdout.
    let dir = env.root().join("out");
    std::fs::create_dir(&dir).unwrap();
    env.commit_file(&bx, "c.txt", "c\n", "more");
    env.sandbox(&["bundle", "b", "-o", &dir.to_string_lossy()])
        .ok();
    env.git(
        &env.repo,
        &[
            "bundle",
            "verify",
            "-q",
            &dir.join("b.bundle").to_string_lossy(),
        ],
    );
    let out = env
        .command(crate::env::SANDBOX, &env.repo)
        .args(["bundle", "b", "-o", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stdout.starts_with(b"# v2 git bundle\n"),
        "not a bundle on stdout"
    );
    assert!(!env.repo.join("-").exists());
    // Detached HEAD: refused with the way out.
    env.git(&bx, &["switch", "-q", "--detach"]);
    let r = env.sandbox(&["fetch", "b"]);
    r.code(2);
    assert!(r.stderr.contains("git switch -c"), "{r:?}");
}

#[test]
fn a_clone_can_check_out_the_repositorys_current_branch() {
    let env = TestEnv::new();
    env.sandbox(&[
        "up", "onmain", "--branch", "main", "--git", "clone", "--json",
    ])
    .ok();
    let bx = env.box_path("onmain");
    assert_eq!(
        env.git(&bx, &["symbolic-ref", "--short", "HEAD"]).trim(),
        "main"
    );
    assert_eq!(
        env.git(&bx, &["rev-parse", "HEAD"]),
        env.git(&env.repo, &["rev-parse", "main"])
    );
}

#[test]
fn small_refusals_say_what_is_wrong() {
    let env = TestEnv::new();
    env.sandbox(&["up", "r", "--json"]).ok();
    // A command that does not exist in the box: 127, as a shell says it.
    let r = env.sandbox(&["run", "r", "--", "/nonexistent/cmd"]);
    r.code(127);
    assert!(r.stderr.contains("command not found"), "{r:?}");
    assert!(!r.stderr.contains("agent CLI"), "{r:?}");
    // Durations that would overflow are usage errors, not a wrap-around.
    let before = env.snapshot();
    for d in ["999999999999999d", "213503982334602d"] {
        env.sandbox(&["prune", "--idle", d, "-f"]).code(2);
        env.sandbox(&["park", "--idle", d]).code(2);
    }
    assert_eq!(env.snapshot(), before);
    // A fetch that fails says why, not git's closing advice.
    env.git(
        &env.repo,
        &[
            "remote",
            "set-url",
            "origin",
            &env.root().join("missing.git").to_string_lossy(),
        ],
    );
    let r = env.treebox(&["create", "nofetch", "--no-launch"]);
    r.code(4);
    assert!(
        r.stderr.contains("does not appear to be a git repository"),
        "{r:?}"
    );
}

/// The repository went away (moved or deleted): its boxes' records are listed as
/// such, naming one says so, and prune — from anywhere — removes them.
#[test]
fn the_records_of_a_repository_that_is_gone_can_be_pruned() {
    let env = TestEnv::new();
    env.sandbox(&["up", "orphan", "--git", "clone", "--json"])
        .ok();
    let moved = env.root().join("moved");
    std::fs::rename(&env.repo, &moved).unwrap();
    let outside = |args: &[&str]| {
        let out = env
            .command(crate::env::SANDBOX, &env.home)
            .args(args)
            .output()
            .unwrap();
        crate::env::Run::from_output(out)
    };
    let ls = outside(&["ls", "--json"]).ok().json();
    assert_eq!(ls["boxes"][0]["state"], "repo-missing");
    let r = outside(&["down", "orphan"]);
    r.code(3);
    assert!(
        r.stderr.contains("no longer exists") && r.stderr.contains("prune"),
        "{r:?}"
    );
    // Listed first; without a terminal and without -f, nothing is removed.
    let r = outside(&["prune"]);
    r.code(5);
    assert!(r.stderr.contains("it no longer exists"), "{r:?}");
    assert_eq!(
        outside(&["ls", "--json"]).ok().json()["boxes"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let doc = outside(&["prune", "-f", "--json"]).ok().json();
    crate::schema::assert_valid("sandbox-prune", &doc, "prune of a gone repository");
    assert_eq!(doc["removed"][0]["kind"], "repo-gone");
    assert!(outside(&["ls", "--json"]).ok().json()["boxes"]
        .as_array()
        .unwrap()
        .is_empty());
    // In its new place the clone is a box without a record, kept while it could hold
    // work, and removable by name.
    let r = sandbox_in(&env, &moved, &["prune", "-f"]);
    r.ok();
    let r = sandbox_in(&env, &moved, &["down", "-f", "orphan"]);
    r.ok();
    assert!(!moved.join(".treebox/worktrees/orphan").exists());
}

/// Records that cannot be read hide nothing: `ls` still finds the repository (through
/// the note its state dir keeps), shows the boxes as `bad-record`, and a clone among
/// them keeps its pin and its question before removal.
#[test]
fn boxes_whose_records_are_all_unreadable_are_still_listed() {
    let env = TestEnv::new();
    env.sandbox(&["up", "one", "--git", "clone", "--json"]).ok();
    env.treebox(&["create", "two", "--no-launch"]).ok();
    env.commit_file(&env.box_path("one"), "o.txt", "o\n", "work");
    for leaf in ["one", "two"] {
        std::fs::write(
            crate::proof::record_path(&env, leaf),
            "{\"schemaVersion\":1,",
        )
        .unwrap();
    }
    let out = env
        .command(crate::env::SANDBOX, &env.home)
        .args(["ls", "--json"])
        .output()
        .unwrap();
    let doc = crate::env::Run::from_output(out).ok().json();
    crate::schema::assert_valid("sandbox-ls", &doc, "ls with unreadable records");
    let states: Vec<(String, String)> = doc["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["name"].as_str().unwrap().into(),
                b["state"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            ("one".into(), "bad-record".into()),
            ("two".into(), "bad-record".into())
        ]
    );
    env.sandbox(&["prune", "-f"]).ok();
    assert!(refs(&env).contains("refs/hort/one/base"));
    env.sandbox(&["down", "one"]).code(5);
    assert!(env.box_path("one").join("o.txt").is_file());
}

/// Commits on a detached HEAD in a worktree box are work: not "empty", kept by
/// `prune --idle`, and not removed by `down` without a question.
#[test]
fn detached_head_work_in_a_worktree_box_is_not_empty() {
    let env = TestEnv::new();
    env.treebox(&["create", "det", "--no-launch"]).ok();
    let bx = env.box_path("det");
    env.git(&bx, &["switch", "-q", "--detach"]);
    env.commit_file(&bx, "d.txt", "d\n", "detached work");
    let r = env.sandbox(&["prune", "--idle", "0s", "-f"]);
    r.ok();
    assert!(bx.join("d.txt").is_file(), "{r:?}");
    assert!(r.stderr.contains("kept box `det`"), "{r:?}");
}

/// A FIFO where a worktree's admin dir keeps `gitdir` (its registration then cannot
/// be matched) hangs nothing either.
#[test]
fn a_fifo_gitdir_in_an_admin_dir_hangs_nothing() {
    let env = TestEnv::new();
    env.treebox(&["create", "w1", "--no-launch"]).ok();
    let gitdir = env.repo.join(".git/worktrees/w1/gitdir");
    crate::env::mkfifo(&gitdir);
    for (bin, args) in [
        (crate::env::SANDBOX, vec!["ls", "--json"]),
        (crate::env::SANDBOX, vec!["down", "w1"]),
        (crate::env::TREEBOX, vec!["teardown", "w1"]),
        (crate::env::SANDBOX, vec!["prune", "--idle", "0s"]),
    ] {
        let out = env
            .command("timeout", &env.repo)
            .arg("20")
            .arg(bin)
            .args(&args)
            .output()
            .unwrap();
        assert_ne!(out.status.code(), Some(124), "{bin} {args:?} hung");
    }
}

/// A kill between renaming `origin` to `hort-base` and setting its push URL leaves a
/// `hort-base` that could push into the user's repository; finishing the box makes
/// sure it cannot.
#[test]
fn finishing_a_clone_always_makes_hort_base_fetch_only() {
    let env = TestEnv::new();
    env.treebox(&["create", "x", "--git", "clone", "--no-launch"])
        .ok();
    let bx = env.box_path("x");
    env.git(&bx, &["config", "--unset", "remote.hort-base.pushurl"]);
    let record = crate::proof::record_path(&env, "x");
    let text = std::fs::read_to_string(&record).unwrap();
    std::fs::write(
        &record,
        text.replace(
            "\"checkoutCompleted\": true",
            "\"checkoutCompleted\": false",
        )
        .replace("\"setupCompleted\": true", "\"setupCompleted\": false"),
    )
    .unwrap();
    env.treebox(&["create", "x", "--git", "clone", "--no-launch"])
        .ok();
    env.commit_file(&bx, "p.txt", "p\n", "planted");
    let push = env.git_run(&bx, &["push", "hort-base", "HEAD:refs/heads/planted"]);
    assert_ne!(push.code, 0, "{push:?}");
    assert!(!refs(&env).contains("refs/heads/planted"));
}

/// A clone already holding unreturned work: new work on another branch or in the
/// stash while `down` asks still stops the removal.
#[test]
fn work_added_elsewhere_while_down_asks_stops_it() {
    let env = TestEnv::new();
    env.sandbox(&["up", "cb", "--git", "clone", "--json"]).ok();
    let bx = env.box_path("cb");
    env.commit_file(&bx, "c.txt", "c\n", "first work");
    let (ok, text) = env.on_tty_answering(crate::env::SANDBOX, "down cb", "y\n", || {
        env.git(&bx, &["switch", "-q", "-c", "other"]);
        env.commit_file(&bx, "o.txt", "o\n", "on another branch");
        env.git(&bx, &["switch", "-q", "cb"]);
    });
    assert!(!ok, "{text}");
    assert!(text.contains("changed since"), "{text}");
    assert!(bx.exists());
}

/// After the repository moves, its worktree boxes still show up in the new place (git
/// lists them again only after `git worktree repair`), and prune keeps one whose
/// changes it cannot read.
#[test]
fn worktree_boxes_of_a_moved_repository_are_still_seen() {
    let env = TestEnv::new();
    env.treebox(&["create", "w1", "--no-launch"]).ok();
    std::fs::write(env.box_path("w1").join("notes.txt"), "unsaved\n").unwrap();
    let moved = env.root().join("moved");
    std::fs::rename(&env.repo, &moved).unwrap();
    let out = env
        .command(crate::env::TREEBOX, &moved)
        .args(["list", "--json"])
        .output()
        .unwrap();
    let doc = crate::env::Run::from_output(out).ok().json();
    assert_eq!(doc["boxes"][0]["name"], "w1", "{doc}");
    let r = sandbox_in(&env, &moved, &["prune", "-f"]);
    r.ok();
    assert!(
        moved.join(".treebox/worktrees/w1/notes.txt").is_file(),
        "{r:?}"
    );
}

/// Work on a branch other than the box's current one: `down` says that `fetch` takes
/// the current branch, and how to bring the other one. Fetching a second line of work
/// never drops the first from `incoming` while nothing else keeps it (exit 5, nothing
/// changed); a fast-forward, or the first kept on a branch, goes through.
#[test]
fn fetch_brings_each_branch_without_dropping_the_last_one() {
    let env = TestEnv::new();
    env.treebox(&["create", "two", "--git", "clone", "--no-launch"])
        .ok();
    let bx = env.box_path("two");
    env.git(&bx, &["switch", "-q", "-c", "side"]);
    env.commit_file(&bx, "side.txt", "side\n", "side work");
    env.git(&bx, &["switch", "-q", "two"]);
    let r = env.sandbox(&["down", "two"]);
    r.code(5);
    assert!(
        r.stderr.contains("not on the box's current branch"),
        "{r:?}"
    );
    env.git(&bx, &["switch", "-q", "side"]);
    env.sandbox(&["fetch", "two"]).ok();
    let first = env.git(&env.repo, &["rev-parse", "refs/hort/two/incoming"]);
    // A fast-forward of the same line: fine.
    env.commit_file(&bx, "side2.txt", "more\n", "more side work");
    env.sandbox(&["fetch", "two"]).ok();
    let second = env.git(&env.repo, &["rev-parse", "refs/hort/two/incoming"]);
    assert_ne!(first, second);
    // Another line: refused while nothing keeps the one fetched.
    env.git(&bx, &["switch", "-q", "-c", "other", "two"]);
    env.commit_file(&bx, "other.txt", "other\n", "other work");
    let before = env.snapshot();
    let r = env.sandbox(&["fetch", "two", "--json"]);
    r.code(5);
    assert_eq!(env.snapshot(), before, "a refused fetch changed something");
    assert!(r.stderr.contains("incoming-unkept"), "{r:?}");
    assert!(
        r.stderr
            .contains("git branch <name> refs/hort/two/incoming"),
        "{r:?}"
    );
    assert_eq!(
        env.git(&env.repo, &["rev-parse", "refs/hort/two/incoming"]),
        second,
        "a refused fetch moved incoming"
    );
    env.git(
        &env.repo,
        &["branch", "side-work", "refs/hort/two/incoming"],
    );
    env.sandbox(&["fetch", "two"]).ok();
    let other = env.git(&bx, &["rev-parse", "HEAD"]);
    assert_eq!(
        env.git(&env.repo, &["rev-parse", "refs/hort/two/incoming"]),
        other
    );
    // Everything is back: down goes without -f.
    env.git(&bx, &["switch", "-q", "two"]);
    env.sandbox(&["down", "two"]).ok();
}

/// What the user ignores in `.git/info/exclude` stays ignored in a clone box (a clone
/// has an `info/exclude` of its own): a file `.worktreeinclude` copies in does not make
/// the new box dirty, so `down` removes it without asking.
#[test]
fn a_clone_box_ignores_what_the_users_info_exclude_ignores() {
    let env = TestEnv::new();
    let exclude = env.repo.join(".git/info/exclude");
    let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
    text.push_str("# mine\nlocal.settings\n");
    std::fs::write(&exclude, text).unwrap();
    std::fs::write(env.repo.join("local.settings"), "mine\n").unwrap();
    env.commit_file(&env.repo, ".worktreeinclude", "local.settings\n", "include");
    env.git(&env.repo, &["push", "-q", "origin", "main"]);
    env.treebox(&["create", "inc", "--git", "clone", "--no-launch"])
        .ok();
    let bx = env.box_path("inc");
    assert_eq!(
        std::fs::read_to_string(bx.join("local.settings")).unwrap(),
        "mine\n"
    );
    assert_eq!(env.git(&bx, &["status", "--porcelain"]), "");
    let own = std::fs::read_to_string(bx.join(".git/info/exclude")).unwrap();
    assert!(
        own.contains("local.settings") && !own.contains("# mine"),
        "{own}"
    );
    env.sandbox(&["down", "inc"]).ok();
}
