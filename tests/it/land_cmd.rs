//! `git treebox land` (SPEC §10b, issue 30): a box's work onto its base — squash, rebase
//! and merge, for host worktrees, clones and sandboxed worktrees — and every refusal
//! leaving the repository as it was. A bare origin plays the forge; a fake `gh` on PATH
//! records what `--pr` asks of it.

use crate::env::{write_exec, Run, TestEnv};
use crate::schema::assert_valid;

/// `git ARGS` in `dir`, its output trimmed.
fn git(env: &TestEnv, dir: &std::path::Path, args: &[&str]) -> String {
    env.git(dir, args).trim().to_string()
}

/// Host worktree box `name` with two commits (`<name>.txt`, `<name>-2.txt`).
fn worked(env: &TestEnv, name: &str, extra: &[&str]) -> std::path::PathBuf {
    let mut args = vec!["create", name, "--no-launch"];
    args.extend_from_slice(extra);
    env.treebox(&args).ok();
    let bx = env.box_path(name);
    env.commit_file(&bx, &format!("{name}.txt"), "new\n", &format!("add {name}"));
    env.commit_file(&bx, &format!("{name}-2.txt"), "more\n", "add another");
    bx
}

/// Everything a refused land must leave as it was: the user's refs (origin's
/// included), origin's own, and the main checkout's status.
fn state(env: &TestEnv) -> String {
    let refs = git(
        env,
        &env.repo,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    );
    let origin = git(env, &env.root().join("origin.git"), &["for-each-ref"]);
    let status = git(env, &env.repo, &["status", "--porcelain"]);
    format!("{refs}\n--\n{origin}\n--\n{status}")
}

/// `land ARGS` refused with `code` and error kind `kind`, changing nothing.
#[track_caller]
fn refused(env: &TestEnv, args: &[&str], code: i32, kind: &str) -> Run {
    git(env, &env.repo, &["fetch", "-q", "origin"]);
    let before = state(env);
    let mut a = vec!["land"];
    a.extend_from_slice(args);
    let r = env.treebox(&a);
    r.code(code);
    assert_eq!(state(env), before, "{args:?} changed something: {r:?}");
    let mut j = a.clone();
    j.push("--json");
    let e = env.treebox(&j);
    e.code(code);
    let doc: serde_json::Value = serde_json::from_str(e.stderr.trim()).expect("JSON error");
    assert_valid("error", &doc, "land refused");
    assert_eq!(doc["error"]["kind"], kind, "{doc}");
    assert_eq!(state(env), before);
    r
}

fn log(env: &TestEnv, range: &str) -> String {
    git(env, &env.repo, &["log", "--format=%s|%an", range])
}

#[test]
fn squash_rebase_and_merge_land_a_host_worktree_and_the_main_checkout_follows() {
    let env = &TestEnv::new();
    worked(env, "feat-sq", &["--isolation", "host"]);
    worked(env, "feat-rb", &["--isolation", "host"]);
    worked(env, "feat-mg", &["--isolation", "host"]);
    // origin moves on meanwhile: every land is onto a base the boxes did not start from.
    env.push_to_origin("mate.txt", "mate\n");

    let doc = env.treebox(&["land", "feat-sq", "--json"]).ok().json();
    assert_valid("land", &doc, "land --json");
    assert_eq!(doc["strategy"], "squash");
    assert_eq!(doc["outcome"], "landed");
    assert_eq!(doc["commits"], 2);
    let head = git(env, &env.repo, &["log", "-1", "--format=%B|%P", "main"]);
    assert!(
        head.contains("* add feat-sq") && head.contains("* add another"),
        "{head}"
    );
    assert_eq!(
        head.rsplit('|').next().unwrap().split(' ').count(),
        1,
        "{head}"
    );
    // The main checkout, clean and on main, has the files; origin/main's too.
    for f in ["feat-sq.txt", "feat-sq-2.txt", "mate.txt"] {
        assert!(env.repo.join(f).exists(), "{f}");
    }
    assert_eq!(git(env, &env.repo, &["status", "--porcelain"]), "");
    assert_eq!(
        doc["new"].as_str().unwrap(),
        git(env, &env.repo, &["rev-parse", "main"])
    );

    env.treebox(&["land", "feat-rb", "--rebase"]).ok();
    assert!(
        log(env, "-2").starts_with("add another|"),
        "{}",
        log(env, "-3")
    );
    assert!(log(env, "-2").contains("add feat-rb|"));

    env.treebox(&["land", "feat-mg", "--merge"]).ok();
    let merge = git(env, &env.repo, &["log", "-1", "--format=%P%n%s", "main"]);
    assert_eq!(
        merge.lines().next().unwrap().split(' ').count(),
        2,
        "{merge}"
    );
    assert!(merge.contains("Merge branch 'feat-mg'"), "{merge}");

    // Landed now: every box leaves without --force, the land says so again.
    let again = env.treebox(&["land", "feat-sq", "--json"]).ok().json();
    assert_eq!(again["outcome"], "already-landed");
    for name in ["feat-sq", "feat-rb", "feat-mg"] {
        env.treebox(&["teardown", name]).ok();
        assert!(!env.box_path(name).exists(), "{name}");
    }
    // Nothing was pushed.
    assert_ne!(
        git(env, &env.repo, &["rev-parse", "main"]),
        git(env, &env.repo, &["rev-parse", "origin/main"])
    );
}

#[test]
fn a_clone_box_is_fetched_back_and_landed_with_push_and_remove() {
    let env = &TestEnv::new();
    env.write_config(r#"{"land": "rebase"}"#);
    let bx = worked(env, "cl", &["--git", "clone"]);
    let tip = git(env, &bx, &["rev-parse", "HEAD"]);
    let doc = env
        .treebox(&["land", "cl", "--push", "--remove", "--json"])
        .ok()
        .json();
    assert_valid("land", &doc, "land a clone");
    // The config's strategy; the box's base did not move, so a fast-forward.
    assert_eq!(doc["strategy"], "rebase");
    assert_eq!(doc["tip"], tip.as_str());
    assert_eq!(
        git(env, &env.repo, &["rev-parse", "refs/hort/cl/incoming"]),
        tip
    );
    assert_eq!(git(env, &env.repo, &["rev-parse", "main"]), tip);
    assert_eq!(doc["pushed"], true);
    let origin_main = git(env, &env.root().join("origin.git"), &["rev-parse", "main"]);
    assert_eq!(origin_main, tip);
    assert_eq!(doc["removed"], true);
    assert!(!bx.exists());

    // Clones by squash and by merge, onto a base that moved on meanwhile.
    worked(env, "cl-sq", &["--git", "clone"]);
    worked(env, "cl-mg", &["--git", "clone"]);
    env.push_to_origin("mate.txt", "mate\n");
    env.treebox(&["land", "cl-sq", "--squash"]).ok();
    assert!(
        log(env, "-1").starts_with("cl-sq (2 commits, box cl-sq)|"),
        "{}",
        log(env, "-1")
    );
    let mg = env
        .treebox(&["land", "cl-mg", "--merge", "--json"])
        .ok()
        .json();
    let incoming = git(env, &env.repo, &["rev-parse", "refs/hort/cl-mg/incoming"]);
    let parents = git(env, &env.repo, &["log", "-1", "--format=%P", "main"]);
    assert!(parents.ends_with(&incoming), "{parents} {mg}");
    for f in ["cl-sq.txt", "cl-mg-2.txt", "mate.txt"] {
        assert!(env.repo.join(f).exists(), "{f}");
    }
}

#[test]
fn every_refusal_names_its_reason_and_changes_nothing() {
    let env = &TestEnv::new();
    // Uncommitted work in the box (an untracked file counts; the .env treebox copied
    // in does not).
    std::fs::write(env.repo.join(".env"), "KEY=1\n").unwrap();
    let bx = worked(env, "dirty", &["--isolation", "host"]);
    assert!(bx.join(".env").exists());
    std::fs::write(bx.join("notes.txt"), "wip\n").unwrap();
    let r = refused(env, &["dirty"], 5, "dirty");
    assert!(r.stderr.contains("uncommitted"), "{r:?}");
    std::fs::remove_file(bx.join("notes.txt")).unwrap();

    // A conflict with the base: the files are named.
    env.commit_file(&bx, "README.md", "box's readme\n", "readme in the box");
    env.push_to_origin("README.md", "mate's readme\n");
    let r = refused(env, &["dirty", "--squash"], 5, "land-conflict");
    assert!(r.stderr.contains("`README.md`"), "{r:?}");
    refused(env, &["dirty", "--rebase"], 5, "land-conflict");
    refused(env, &["dirty", "--merge"], 5, "land-conflict");

    worked(env, "clean", &["--isolation", "host"]);
    // The main checkout on main with a change to a tracked file.
    let readme = env.repo.join("README.md");
    let kept = std::fs::read_to_string(&readme).unwrap();
    std::fs::write(&readme, "mine, not committed\n").unwrap();
    let r = refused(env, &["clean"], 5, "dirty");
    assert!(r.stderr.contains("your checkout of `main`"), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(&readme).unwrap(),
        "mine, not committed\n"
    );
    std::fs::write(&readme, kept).unwrap();

    // main checked out in another worktree.
    git(env, &env.repo, &["switch", "-q", "-c", "side"]);
    let other = env.root().join("other-wt");
    git(
        env,
        &env.repo,
        &["worktree", "add", "-q", other.to_str().unwrap(), "main"],
    );
    let r = refused(env, &["clean"], 5, "branch-checked-out");
    assert!(r.stderr.contains("other-wt"), "{r:?}");
    git(
        env,
        &env.repo,
        &["worktree", "remove", other.to_str().unwrap()],
    );
    git(env, &env.repo, &["switch", "-q", "main"]);

    // A local main that diverged from origin's.
    git(
        env,
        &env.repo,
        &["pull", "-q", "--ff-only", "origin", "main"],
    );
    env.commit_file(&env.repo, "local.txt", "local\n", "local only");
    env.push_to_origin("remote.txt", "remote\n");
    refused(env, &["clean"], 5, "diverged");
    git(env, &env.repo, &["reset", "-q", "--hard", "origin/main"]);

    // --pr of a clone whose agent renamed its branch to the base: refused before
    // anything is pushed (its fetch-back, the documented first step, done before).
    let cl = worked(env, "cl-main", &["--git", "clone"]);
    git(env, &cl, &["branch", "-M", "main"]);
    env.sandbox(&["fetch", "cl-main"]).ok();
    let r = refused(env, &["cl-main", "--pr"], 5, "push-refused");
    assert!(r.stderr.contains("the base itself"), "{r:?}");
    // --pr without gh: nothing pushed.
    git(
        env,
        &env.repo,
        &[
            "remote",
            "set-url",
            "origin",
            "https://github.com/acme/widget.git",
        ],
    );
    let url = format!("url.{}.insteadOf", env.root().join("origin.git").display());
    git(
        env,
        &env.repo,
        &["config", &url, "https://github.com/acme/widget.git"],
    );
    let r = refused(env, &["clean", "--pr"], 4, "forge-cli");
    assert!(r.stderr.contains("gh"), "{r:?}");
    // Strategy and --pr together are a usage error.
    env.treebox(&["land", "clean", "--pr", "--squash"]).code(2);
    env.treebox(&["land", "nosuchbox"]).code(3);
}

#[test]
fn a_live_agent_is_refused() {
    let env = &TestEnv::new();
    let _server = crate::sessions::Server::of(env);
    write_exec(
        &env.bin.join("claude"),
        &crate::sessions::claude_like(
            "#!/bin/sh\nwhile [ ! -f \"$HOME/stop\" ]; do sleep 0.05; done\n",
        ),
    );
    env.treebox(&["create", "-d", "busy", "--isolation", "host"])
        .ok();
    env.commit_file(&env.box_path("busy"), "w.txt", "w\n", "work");
    let r = refused(env, &["busy"], 5, "session-live");
    assert!(r.stderr.contains("live agent"), "{r:?}");
    std::fs::write(env.home.join("stop"), "").unwrap();
}

#[test]
fn pr_pushes_the_box_branch_and_asks_gh_on_the_host() {
    let env = &mut TestEnv::new();
    let bx = worked(env, "feat-pr", &["--isolation", "host"]);
    let origin = env.root().join("origin.git");
    git(
        env,
        &env.repo,
        &[
            "remote",
            "set-url",
            "origin",
            "https://github.com/acme/widget.git",
        ],
    );
    let url = format!("url.{}.insteadOf", origin.display());
    git(
        env,
        &env.repo,
        &["config", &url, "https://github.com/acme/widget.git"],
    );
    let bin = env.root().join("gh-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let argv = env.root().join("gh.argv");
    write_exec(
        &bin.join("gh"),
        &format!(
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> {0}\necho --- >> {0}\n[ \"$1\" = pr ] && echo https://github.com/acme/widget/pull/7\nexit 0\n",
            argv.display()
        ),
    );
    env.add_to_path(&bin);
    let main_before = git(env, &env.repo, &["rev-parse", "main"]);
    let doc = env
        .treebox(&["land", "feat-pr", "--pr", "--json"])
        .ok()
        .json();
    assert_valid("land", &doc, "land --pr");
    assert_eq!(doc["outcome"], "pr-opened");
    assert_eq!(doc["prUrl"], "https://github.com/acme/widget/pull/7");
    // The branch is on origin, main is not moved, here or there.
    let tip = git(env, &bx, &["rev-parse", "HEAD"]);
    assert_eq!(git(env, &origin, &["rev-parse", "feat-pr"]), tip);
    assert_eq!(git(env, &env.repo, &["rev-parse", "main"]), main_before);
    let calls = std::fs::read_to_string(&argv).unwrap();
    let pr: Vec<&str> = calls
        .split("---\n")
        .find(|c| c.starts_with("pr\n"))
        .unwrap()
        .lines()
        .collect();
    for (flag, value) in [
        ("--repo", "acme/widget"),
        ("--base", "main"),
        ("--head", "feat-pr"),
        ("--title", "feat-pr"),
    ] {
        let at = pr
            .iter()
            .position(|a| *a == flag)
            .unwrap_or_else(|| panic!("{flag}: {pr:?}"));
        assert_eq!(pr[at + 1], value, "{pr:?}");
    }
    assert!(calls.contains("auth\nstatus\n"), "{calls}");
    let body = pr[pr.iter().position(|a| *a == "--body").unwrap() + 1..].join("\n");
    assert!(
        body.contains("- add feat-pr") && body.contains("- add another"),
        "{body}"
    );
}

#[test]
fn a_sandboxed_worktree_lands_through_its_fetched_back_branch() {
    crate::container::each_engine(|b| {
        let env = &b.env;
        env.treebox(&["create", "boxed", "--no-launch"]).ok();
        let tip = b.commit_inside(
            "boxed",
            "echo work > work.txt && git add work.txt && git commit -qm 'in the box' && git status --porcelain",
        );
        // A stray untracked file in the box: refused, nothing changed.
        b.exec(&["boxed", "--", "sh", "-c", "echo x > stray.txt"])
            .ok();
        refused(env, &["boxed"], 5, "dirty");
        b.exec(&["boxed", "--", "rm", "stray.txt"]).ok();
        let doc = env.treebox(&["land", "boxed", "--json"]).ok().json();
        assert_valid("land", &doc, "land a sandboxed worktree");
        assert_eq!(doc["tip"], tip.as_str(), "{}", b.engine);
        assert!(env.repo.join("work.txt").exists());
        assert_eq!(log(env, "-1"), "in the box|Test");
        // More work in the same box, landed by the other strategies: the commit
        // already squashed in is left out of the rebase; the merge joins both lines.
        b.commit_inside(
            "boxed",
            "echo more > more.txt && git add more.txt && git commit -qm 'more work'",
        );
        let doc = env
            .treebox(&["land", "boxed", "--rebase", "--json"])
            .ok()
            .json();
        assert_eq!(doc["commits"], 1, "{doc}");
        assert_eq!(log(env, "-2"), "more work|Test\nin the box|Test");
        let tip = b.commit_inside(
            "boxed",
            "echo last > last.txt && git add last.txt && git commit -qm 'last work'",
        );
        env.treebox(&["land", "boxed", "--merge"]).ok();
        let merge = git(env, &env.repo, &["log", "-1", "--format=%P", "main"]);
        assert!(merge.ends_with(&tip), "{merge} {tip}");
        assert!(env.repo.join("last.txt").exists());
        env.treebox(&["teardown", "boxed"]).ok();
    });
}
