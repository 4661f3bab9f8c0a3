//! Which branch a box starts from (the base: `--base` > `.treebox.json` > config >
//! origin's default branch > `main`, SPEC §4) and which new names it may take, on real
//! repositories whose default branch is not `main`.

use crate::env::TestEnv;

/// An origin whose default branch is `default` (one commit), cloned as the user's repo:
/// `git clone` points `origin/HEAD` at `origin/<default>`.
fn env_on(default: &str) -> TestEnv {
    let env = TestEnv::empty();
    let root = env.root();
    env.git(
        &root,
        &["init", "-q", "--bare", "-b", default, "origin.git"],
    );
    let seed = root.join("seed");
    env.git(&root, &["init", "-q", "-b", default, "seed"]);
    env.commit_file(&seed, "README.md", "hello\n", "initial");
    env.git(
        &seed,
        &["push", "-q", &env.origin.to_string_lossy(), default],
    );
    env.git(&root, &["clone", "-q", "origin.git", "repo"]);
    std::fs::remove_dir_all(&seed).unwrap();
    env
}

/// An origin whose default branch is `master`, added by hand to a new repository and
/// fetched (`git init`, `git remote add origin`, `git fetch`): no `origin/HEAD`, as git
/// before 2.48 leaves it (a newer one is told not to write it), and origin has no main.
fn origin_added_by_hand() -> TestEnv {
    let env = env_on("master");
    std::fs::remove_dir_all(&env.repo).unwrap();
    env.git(&env.root(), &["init", "-q", "repo"]);
    env.git(&env.repo, &["remote", "add", "origin", "../origin.git"]);
    env.git(
        &env.repo,
        &[
            "-c",
            "remote.origin.followRemoteHEAD=never",
            "fetch",
            "-q",
            "origin",
        ],
    );
    assert_eq!(origin_head(&env), None);
    env
}

/// What `origin/HEAD` names in the user's repository, if it is a symbolic ref.
fn origin_head(env: &TestEnv) -> Option<String> {
    let r = env.git_run(
        &env.repo,
        &["symbolic-ref", "-q", "refs/remotes/origin/HEAD"],
    );
    (r.code == 0).then(|| r.stdout.trim().to_string())
}

/// A teammate commits on origin's `branch` (creating it from the default if new).
fn push_on_origin(env: &TestEnv, branch: &str, file: &str) -> String {
    let root = env.root();
    let mate = root.join("mate");
    if !mate.exists() {
        env.git(&root, &["clone", "-q", "origin.git", "mate"]);
    }
    env.git(&mate, &["fetch", "-q", "origin"]);
    let start = if env
        .git_run(
            &mate,
            &["rev-parse", "-q", "--verify", &format!("origin/{branch}")],
        )
        .code
        == 0
    {
        format!("origin/{branch}")
    } else {
        "HEAD".to_string()
    };
    env.git(&mate, &["switch", "-q", "-C", branch, &start]);
    env.commit_file(&mate, file, file, &format!("add {file}"));
    env.git(&mate, &["push", "-q", "origin", branch]);
    env.git(&mate, &["rev-parse", "HEAD"]).trim().to_string()
}

#[test]
fn origin_default_branch_is_the_base_with_no_flag() {
    for default in ["master", "trunk"] {
        let env = env_on(default);
        // Newer than what the clone has: the box must start at the fetched commit.
        let tip = push_on_origin(&env, default, "new.txt");
        let before = env.snapshot();
        let doc = env
            .treebox(&["create", "x", "--dry-run", "--json"])
            .ok()
            .json();
        assert_eq!(doc["base"], default);
        assert_eq!(doc["baseFrom"], "originHead");
        assert_eq!(doc["baseRef"], format!("refs/remotes/origin/{default}"));
        assert_eq!(doc["baseCommit"], tip);
        let r = env.treebox(&["create", "x", "--dry-run"]);
        assert!(
            r.ok()
                .stderr
                .contains(&format!("base {default}: origin's default branch")),
            "{r:?}"
        );
        assert_eq!(env.snapshot(), before, "the dry run wrote something");

        let r = env.treebox(&["create", "x", "--no-launch"]);
        r.ok();
        let path = env.box_path("x");
        assert_eq!(env.git(&path, &["rev-parse", "HEAD"]).trim(), tip);
        assert!(path.join("new.txt").is_file());
        // `git sandbox up` shares the pipeline.
        env.sandbox(&["up", "y", "--json"]).ok();
        assert_eq!(
            env.git(&env.box_path("y"), &["rev-parse", "HEAD"]).trim(),
            tip
        );
    }
}

#[test]
fn a_named_base_beats_origin_head() {
    let env = env_on("master");
    let develop = push_on_origin(&env, "develop", "dev.txt");
    let release = push_on_origin(&env, "release", "rel.txt");
    let plan = |args: &[&str]| {
        let mut all = vec!["create", "x", "--dry-run", "--json"];
        all.extend_from_slice(args);
        env.treebox(&all).ok().json()
    };
    // The user config beats origin/HEAD.
    env.write_config(r#"{"base": "develop"}"#);
    let doc = plan(&[]);
    assert_eq!(
        (doc["base"].as_str(), doc["baseFrom"].as_str()),
        (Some("develop"), Some("config"))
    );
    // The project file beats the user config.
    std::fs::write(env.repo.join(".treebox.json"), r#"{"base": "release"}"#).unwrap();
    let doc = plan(&[]);
    assert_eq!(
        (doc["base"].as_str(), doc["baseFrom"].as_str()),
        (Some("release"), Some("projectFile"))
    );
    assert_eq!(doc["baseCommit"], release);
    // The flag beats everything.
    let doc = plan(&["--base", "master"]);
    assert_eq!(
        (doc["base"].as_str(), doc["baseFrom"].as_str()),
        (Some("master"), Some("flag"))
    );
    // And the real run does what the plan said.
    std::fs::remove_file(env.repo.join(".treebox.json")).unwrap();
    let doc = env.treebox(&["create", "c", "--json"]).ok().json();
    assert_eq!(doc["base"], "develop");
    assert_eq!(doc["baseCommit"], develop);
}

#[test]
fn no_origin_head_falls_back_to_main() {
    // A main repository whose origin/HEAD was removed: `main`, as before.
    let env = TestEnv::new();
    env.git(&env.repo, &["remote", "set-head", "origin", "--delete"]);
    let doc = env.treebox(&["create", "x", "--json"]).ok().json();
    assert_eq!(doc["base"], "main");
    assert_eq!(doc["baseRef"], "refs/remotes/origin/main");

    // origin added by hand and fetched, and origin's HEAD not followed: no origin/HEAD,
    // and origin has no main.
    let env = origin_added_by_hand();
    env.git(
        &env.repo,
        &["config", "remote.origin.followRemoteHEAD", "never"],
    );
    for args in [
        &["create", "x", "--no-launch"][..],
        &["create", "x", "--dry-run"],
        &["create", "x", "--no-fetch", "--no-launch"],
    ] {
        let before = env.snapshot();
        let r = env.treebox(args);
        r.code(3);
        assert!(r.stderr.contains("origin/HEAD is not set"), "{r:?}");
        assert!(r.stderr.contains("--base <branch>"), "{r:?}");
        assert!(
            r.stderr.contains("`git remote set-head origin --auto`"),
            "{r:?}"
        );
        assert_eq!(env.snapshot(), before, "{args:?} wrote something");
    }
    let before = env.snapshot();
    env.sandbox(&["up", "x", "--json"]).code(3);
    assert_eq!(env.snapshot(), before, "sandbox up wrote something");
    // The hint's command fixes it.
    env.git(&env.repo, &["remote", "set-head", "origin", "--auto"]);
    let doc = env.treebox(&["create", "x", "--json"]).ok().json();
    assert_eq!(doc["base"], "master");
}

#[test]
fn origin_added_by_hand_gets_its_default_branch_as_a_newer_git_fetch_records_it() {
    let env = origin_added_by_hand();
    // The plan asks origin, and writes nothing.
    let before = env.snapshot();
    let doc = env
        .treebox(&["create", "x", "--dry-run", "--json"])
        .ok()
        .json();
    assert_eq!(
        (doc["base"].as_str(), doc["baseFrom"].as_str()),
        (Some("master"), Some("originHead")),
        "{doc}"
    );
    assert_eq!(env.snapshot(), before, "--dry-run wrote something");
    assert_eq!(origin_head(&env), None);

    // The real run records origin/HEAD, as `git remote set-head origin --auto` would.
    let doc = env.treebox(&["create", "x", "--json"]).ok().json();
    assert_eq!(doc["base"], "master");
    assert_eq!(doc["baseRef"], "refs/remotes/origin/master");
    assert_eq!(
        origin_head(&env).as_deref(),
        Some("refs/remotes/origin/master")
    );
}

#[test]
fn a_new_name_that_only_origin_has_is_refused_and_checkout_takes_it() {
    let env = TestEnv::new();
    let theirs = push_on_origin(&env, "feat/theirs", "t.txt");
    let refused = |r: &crate::env::Run| {
        r.code(5);
        assert!(
            r.stderr
                .contains("branch `feat/theirs` already exists on origin"),
            "{r:?}"
        );
        assert!(
            r.stderr
                .contains("`git treebox create --checkout feat/theirs`"),
            "{r:?}"
        );
        assert_eq!(r.stderr.lines().count(), 2, "one line and a hint: {r:?}");
    };
    // Not fetched yet: the create's own fetch brings origin/feat/theirs, and nothing
    // else is written (no branch, worktree, record or lock).
    let before = env.snapshot();
    refused(&env.treebox(&["create", "feat/theirs", "--no-launch"]));
    let mut after = env.snapshot();
    assert!(after.refs.contains("refs/remotes/origin/feat/theirs "));
    after.refs = after
        .refs
        .lines()
        .filter(|l| !l.starts_with("refs/remotes/origin/feat/theirs "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(after, before, "the refusal wrote more than the fetch");
    // Fetched: refused the same by every front end, dry run and --no-fetch included.
    let before = env.snapshot();
    refused(&env.treebox(&["create", "feat/theirs", "--no-launch"]));
    refused(&env.treebox(&["create", "feat/theirs", "--dry-run"]));
    refused(&env.treebox(&["create", "feat/theirs", "--no-fetch", "--no-launch"]));
    refused(&env.sandbox(&["up", "feat/theirs", "-d"]));
    let r = env.treebox(&["create", "feat/theirs", "--json"]);
    r.code(5);
    let err: serde_json::Value = serde_json::from_str(r.stderr.trim()).unwrap();
    assert_eq!(err["error"]["kind"], "branch-exists");
    assert_eq!(env.snapshot(), before, "a refusal wrote something");
    assert!(!env.box_path("feat--theirs").exists());

    // The hint's command takes the existing branch, tracking origin's.
    env.treebox(&["create", "--checkout", "feat/theirs", "--no-launch"])
        .ok();
    let path = env.box_path("feat--theirs");
    assert_eq!(env.git(&path, &["rev-parse", "HEAD"]).trim(), theirs);
    assert_eq!(
        env.git(&path, &["rev-parse", "--abbrev-ref", "@{upstream}"])
            .trim(),
        "origin/feat/theirs"
    );
}

/// Real branch names carry ticket keys: upper case is a name like any other, for
/// `create` and `--checkout` alike; two names that differ only by case are one box.
#[test]
fn upper_case_names_are_boxes_and_case_twins_conflict() {
    let env = env_on("main");
    env.treebox(&["create", "JIRA-123-fix", "--no-launch"]).ok();
    assert!(env.box_path("JIRA-123-fix").join("README.md").is_file());
    env.git(
        &env.repo,
        &["rev-parse", "--verify", "refs/heads/JIRA-123-fix"],
    );
    env.treebox(&["create", "feature/ABC-7", "--no-launch"])
        .ok();
    assert!(env.box_path("feature--ABC-7").is_dir());
    // An existing branch keeps its case in the leaf too.
    env.git(&env.repo, &["branch", "Topic/Up"]);
    env.treebox(&["create", "--checkout", "Topic/Up", "--no-launch"])
        .ok();
    assert!(env.box_path("Topic--Up").is_dir());

    // A case twin is refused (5), writing nothing.
    for twin in ["jira-123-fix", "FEATURE/abc-7"] {
        let before = env.snapshot();
        let r = env.treebox(&["create", twin, "--no-launch", "--json"]);
        r.code(5);
        let err: serde_json::Value = serde_json::from_str(&r.stderr).unwrap();
        assert_eq!(err["error"]["kind"], "case-conflict", "{r:?}");
        assert_eq!(env.snapshot(), before, "{twin}: something was written");
    }
    let r = env.treebox(&["create", "jira-123-fix", "--no-launch"]);
    assert!(r.stderr.contains("differs from it only by case"), "{r:?}");
    assert!(r.stderr.contains("git treebox enter JIRA-123-fix"), "{r:?}");

    // Fragments match upper-case names; the `treebox/` prefix of placeholders is not
    // part of any name.
    env.treebox(&["enter", "ABC", "--print"]).ok();
    env.treebox(&["create", "--no-launch"]).ok();
    env.treebox(&["create", "--no-launch"]).ok();
    let r = env.treebox(&["enter", "tree", "--print"]);
    r.code(3);
    assert!(r.stderr.contains("no box matches"), "{r:?}");
}

/// A repository with no origin whose only branch is `trunk`: no base is found (the
/// default is `main`), and the hint names the branch the checkout is on, which works.
#[test]
fn a_missing_default_base_hint_names_the_checked_out_branch() {
    let env = TestEnv::new();
    env.git(&env.repo, &["remote", "remove", "origin"]);
    env.git(&env.repo, &["branch", "-m", "main", "trunk"]);
    let before = env.snapshot();
    let r = env.treebox(&["create", "x", "--no-launch"]);
    r.code(3);
    assert!(r.stderr.contains("`--base trunk`"), "{r:?}");
    assert_eq!(env.snapshot(), before, "a refused create wrote something");
    env.treebox(&["create", "x", "--base", "trunk", "--no-launch"])
        .ok();
}
