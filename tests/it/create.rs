//! `git treebox create`, end to end through the real binary on temp repos.

use std::os::unix::fs::PermissionsExt;

use crate::env::{write_exec, TestEnv};

pub(crate) fn record(env: &TestEnv, leaf: &str) -> serde_json::Value {
    let text =
        std::fs::read_to_string(env.box_state(leaf).join("record.json")).expect("record exists");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn create_name_provisions_a_worktree_box() {
    let env = TestEnv::new();
    let r = env.treebox(&["create", "fix/login", "--no-launch"]);
    r.ok();
    let path = env.box_path("fix--login");
    assert_eq!(r.stdout.trim(), path.to_string_lossy());
    assert!(path.join("README.md").is_file());
    // On branch fix/login at origin/main, not tracking anything.
    let head = env.git(&path, &["symbolic-ref", "HEAD"]);
    assert_eq!(head.trim(), "refs/heads/fix/login");
    assert_eq!(
        env.git(&path, &["rev-parse", "HEAD"]),
        env.git(&env.repo, &["rev-parse", "origin/main"])
    );
    let upstream = env.git_run(&path, &["rev-parse", "--abbrev-ref", "@{upstream}"]);
    assert_ne!(
        upstream.code, 0,
        "a new box must not track origin/main: {upstream:?}"
    );
    // The main checkout stays clean; excludes are in info/exclude, never .gitignore.
    assert_eq!(env.git(&env.repo, &["status", "--porcelain"]), "");
    let exclude = std::fs::read_to_string(env.repo.join(".git/info/exclude")).unwrap();
    assert_eq!(exclude.matches("/.treebox/").count(), 1);
    assert_eq!(exclude.matches("/.env").count(), 1);
    assert!(!env.repo.join(".gitignore").exists());
    // The guard is installed through the worktree's private config only.
    let hooks = env.git(&path, &["config", "--worktree", "core.hooksPath"]);
    assert!(hooks.trim().ends_with("/treebox-hooks"), "{hooks}");
    assert!(env
        .git_run(&env.repo, &["config", "--local", "core.hooksPath"])
        .stdout
        .is_empty());
    let rec = record(&env, "fix--login");
    assert_eq!(rec["setupCompleted"], true);
    assert_eq!(rec["branch"], "fix/login");
    assert_eq!(rec["gitMode"], "worktree");
    assert_eq!(rec["runner"], "host");
    // A second create of the same box appends nothing more to the excludes.
    env.treebox(&["create", "other", "--no-launch"]).ok();
    let exclude = std::fs::read_to_string(env.repo.join(".git/info/exclude")).unwrap();
    assert_eq!(exclude.matches("/.treebox/").count(), 1);
}

/// A box's registration is what `git worktree add` writes, made without it: git lists
/// it, its files say what git's say (the branch's reflog too), and what git carries from
/// the main worktree comes along: the sparse-checkout patterns, and `config.worktree`
/// less `core.bare` and `core.worktree`.
#[test]
fn a_box_is_registered_as_git_worktree_add_registers_one() {
    let env = TestEnv::new();
    let repo = env.repo.clone();
    env.git(&repo, &["config", "extensions.worktreeConfig", "true"]);
    env.sparse_main();
    env.git(&repo, &["config", "--worktree", "treebox.test", "carried"]);
    env.git(
        &repo,
        &[
            "config",
            "--worktree",
            "core.worktree",
            &repo.to_string_lossy(),
        ],
    );
    env.treebox(&["create", "reg", "--no-launch"]).ok();
    // git's own, beside it.
    let raw = env.root().join("raw");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "raw",
            &raw.to_string_lossy(),
            "origin/main",
        ],
    );
    let boxed = env.box_path("reg");
    let (ours, theirs) = (
        repo.join(".git/worktrees/reg"),
        repo.join(".git/worktrees/raw"),
    );
    for (dir, admin) in [(&boxed, &ours), (&raw, &theirs)] {
        let gitdir = std::fs::read_to_string(admin.join("gitdir")).unwrap();
        assert_eq!(
            gitdir.trim_end(),
            dir.canonicalize().unwrap().join(".git").to_string_lossy()
        );
        assert_eq!(
            std::fs::read_to_string(admin.join("commondir"))
                .unwrap()
                .trim(),
            "../.."
        );
        assert!(!admin.join("locked").exists());
        let pointer = std::fs::read_to_string(dir.join(".git")).unwrap();
        assert_eq!(
            pointer.trim_end(),
            format!("gitdir: {}", admin.canonicalize().unwrap().display())
        );
        assert_eq!(
            std::fs::read(admin.join("info/sparse-checkout")).unwrap(),
            std::fs::read(repo.join(".git/info/sparse-checkout")).unwrap()
        );
        // Sparse, as the main worktree is.
        assert!(dir.join("kept/a.txt").is_file());
        assert!(!dir.join("left").exists(), "{}", dir.display());
        assert_eq!(
            env.git(dir, &["config", "--worktree", "treebox.test"])
                .trim(),
            "carried"
        );
        assert!(env
            .git_run(dir, &["config", "--worktree", "core.worktree"])
            .stdout
            .is_empty());
        assert_eq!(env.git(dir, &["status", "--porcelain"]), "");
    }
    let list = env.git(&repo, &["worktree", "list", "--porcelain"]);
    assert!(
        list.contains(&format!(
            "worktree {}\n",
            boxed.canonicalize().unwrap().display()
        )),
        "{list}"
    );
    assert!(list.contains("branch refs/heads/reg\n"), "{list}");
    // The branch's reflog says where it came from, as `git branch` writes it.
    let log = env.git(&repo, &["reflog", "show", "--format=%gs", "refs/heads/reg"]);
    assert!(log.starts_with("branch: Created from"), "{log}");
}

/// An origin whose URL is a relative path works from the main checkout and not from a
/// box (git reads it from where it runs): create warns, with the command that mends it,
/// and after that command a push from the box reaches origin.
#[test]
fn a_relative_origin_url_is_warned_of_with_its_absolute_form() {
    let env = TestEnv::new();
    let relative = format!("../{}", env.origin.file_name().unwrap().to_string_lossy());
    assert_eq!(
        env.repo.join(&relative).canonicalize().unwrap(),
        env.origin.canonicalize().unwrap()
    );
    env.git(&env.repo, &["remote", "set-url", "origin", &relative]);
    let r = env.treebox(&["create", "feat/rel", "--no-launch"]);
    r.ok();
    let absolute = env.origin.canonicalize().unwrap();
    let hint = format!("`git remote set-url origin {}`", absolute.display());
    assert!(
        r.stderr.contains("origin's URL (../") && r.stderr.contains(&hint),
        "{r:?}"
    );
    let boxed = env.box_path("feat--rel");
    env.commit_file(&boxed, "rel.txt", "rel\n", "from the box");
    assert_ne!(
        env.git_run(&boxed, &["push", "-q", "origin", "feat/rel"])
            .code,
        0,
        "git reads the relative URL from the box"
    );
    // The hint's command: then the push goes through, and no warning is left to give.
    env.git(
        &env.repo,
        &["remote", "set-url", "origin", &absolute.to_string_lossy()],
    );
    env.git(&boxed, &["push", "-q", "origin", "feat/rel"]);
    let r = env.treebox(&["create", "feat/abs", "--no-launch"]);
    r.ok();
    assert!(!r.stderr.contains("origin's URL"), "{r:?}");
}

#[test]
fn create_launches_the_harness_and_exits_with_its_code() {
    let mut env = TestEnv::new();
    env.extra_env.push(("FAKE_EXIT".into(), "7".into()));
    let r = env.treebox(&["create", "feat", "--", "-p", "fix it; now"]);
    r.code(7);
    let log = env.harness_log();
    let path = env.box_path("feat");
    assert!(log.contains("prog=claude"), "{log}");
    assert!(log.contains(&format!("cwd={}", path.display())), "{log}");
    assert!(log.contains("arg=--dangerously-skip-permissions"), "{log}");
    assert!(log.contains("arg=-p\narg=fix it; now\n"), "{log}");
    assert!(log.contains("box=feat"), "{log}");
}

#[test]
fn codex_harness_and_config_program_override() {
    let env = TestEnv::new();
    let prog = env.bin.join("my-codex");
    write_exec(
        &prog,
        "#!/bin/sh\necho \"wrapped $*\" > \"$HOME/wrapped.log\"\n",
    );
    env.write_config(&format!(
        r#"{{"harness": "codex", "harnesses": {{"codex": {{"program": "{}"}}}}}}"#,
        prog.display()
    ));
    env.treebox(&["create", "cx"]).ok();
    let log = std::fs::read_to_string(env.home.join("wrapped.log")).unwrap();
    // The flags, then the status producer's `notify` program (SPEC §7).
    assert!(
        log.trim()
            .starts_with("wrapped --dangerously-bypass-approvals-and-sandbox -c notify=[\"sh\","),
        "{log}"
    );
    // --harness overrides the config for this box.
    env.treebox(&["create", "cl", "--harness", "claude"]).ok();
    assert!(env.harness_log().contains("prog=claude"));
}

#[test]
fn print_gives_a_line_that_launches_from_anywhere() {
    let env = TestEnv::new();
    let r = env.treebox(&["create", "pr", "--print", "--", "hello world"]);
    r.ok();
    assert_eq!(r.stdout.lines().count(), 1, "{r:?}");
    assert!(env.harness_log().is_empty(), "--print must not launch");
    let line = r.stdout.trim();
    let out = env
        .command("sh", &env.root())
        .args(["-c", line])
        .output()
        .unwrap();
    assert!(out.status.success());
    let log = env.harness_log();
    assert!(
        log.contains(&format!("cwd={}", env.box_path("pr").display())),
        "{log}"
    );
    assert!(log.contains("arg=hello world"), "{log}");
}

#[test]
fn nameless_create_gets_a_seeded_petname_on_a_placeholder_branch() {
    let env = TestEnv::new();
    let r = env.treebox(&["create", "--json"]);
    r.ok();
    let doc = r.json();
    let name = doc["name"].as_str().unwrap().to_string();
    assert!(name.contains('-'), "{name}");
    assert_eq!(doc["branch"], format!("treebox/{name}"));
    assert_eq!(doc["placeholder"], true);
    // Same seed, next create: a different petname (the first is taken).
    let doc2 = env.treebox(&["create", "--json"]).ok().json();
    assert_ne!(doc2["name"], doc["name"]);
    // Deterministic: a fresh environment with the same seed picks the same first name.
    let env2 = TestEnv::new();
    let again = env2.treebox(&["create", "--json"]).ok().json();
    assert_eq!(again["name"], doc["name"]);
}

#[test]
fn checkout_existing_local_and_remote_branches() {
    let env = TestEnv::new();
    env.git(&env.repo, &["branch", "feature/local"]);
    let r = env.treebox(&["create", "--checkout", "feature/local", "--no-launch"]);
    r.ok();
    let path = env.box_path("feature--local");
    assert_eq!(
        env.git(&path, &["symbolic-ref", "--short", "HEAD"]).trim(),
        "feature/local"
    );
    // A branch only on origin: a local branch tracking it is made.
    let root = env.root();
    env.git(&root, &["clone", "-q", "origin.git", "mate"]);
    env.git(&root.join("mate"), &["switch", "-q", "-c", "remote-only"]);
    env.commit_file(&root.join("mate"), "r.txt", "r", "remote work");
    env.git(&root.join("mate"), &["push", "-q", "origin", "remote-only"]);
    let r = env.treebox(&["create", "--checkout", "remote-only", "--no-launch"]);
    r.ok();
    let path = env.box_path("remote-only");
    assert!(path.join("r.txt").is_file());
    assert_eq!(
        env.git(&path, &["rev-parse", "--abbrev-ref", "@{upstream}"])
            .trim(),
        "origin/remote-only"
    );
}

#[test]
fn refusals_exit_with_their_codes_and_write_nothing() {
    let env = TestEnv::new();
    env.git(&env.repo, &["branch", "taken"]);
    // Names that are not valid box names: exit 2.
    let long = "a".repeat(101);
    for bad in [
        "Bad Name",
        "treebox/x",
        "-x",
        "..",
        "a\u{7}b",
        long.as_str(),
        "../escape",
    ] {
        let before = env.snapshot();
        let r = env.treebox(&["create", bad, "--no-launch"]);
        r.code(2);
        if bad.starts_with('-') {
            // clap refuses it as an unknown option, with its own tip.
            assert!(r.stderr.contains("unexpected argument '-x'"), "{r:?}");
        } else {
            assert!(r.stderr.contains("invalid box name"), "{r:?}");
            assert!(r.stderr.contains("hint:"), "{r:?}");
        }
        assert_eq!(env.snapshot(), before, "{bad:?} wrote something");
    }
    let cases: &[(&[&str], i32, &str)] = &[
        // An existing branch for a new NAME: exit 5 with a hint naming --checkout.
        (&["create", "taken", "--no-launch"], 5, "--checkout taken"),
        // A missing base: exit 3.
        (
            &["create", "x", "--base", "nope", "--no-launch"],
            3,
            "--base",
        ),
        // A missing branch to check out: exit 3.
        (
            &["create", "--checkout", "ghost", "--no-launch"],
            3,
            "git branch -a",
        ),
        // The same, in dry-run mode: refused exactly as the real run.
        (&["create", "taken", "--dry-run"], 5, "--checkout"),
        (&["create", "x", "--base", "nope", "--dry-run"], 3, "--base"),
        // Isolation not available on this build: usage error.
        // A container template that does not exist: usage error, before any write.
        (
            &[
                "create",
                "x",
                "--isolation",
                "docker",
                "--template",
                "nope",
                "--no-launch",
            ],
            2,
            "template list",
        ),
    ];
    for (args, code, hint) in cases {
        let before = env.snapshot();
        let r = env.treebox(args);
        r.code(*code);
        assert!(r.stderr.contains(hint), "{args:?}: {r:?}");
        assert_eq!(env.snapshot(), before, "{args:?} wrote something");
    }
    // A taken leaf: exit 5, and the existing box is untouched.
    env.treebox(&["create", "dup", "--no-launch"]).ok();
    let before = env.snapshot();
    env.treebox(&["create", "dup", "--no-launch"]).code(5);
    assert_eq!(env.snapshot(), before);
    // A directory in the way that is not a box: exit 5.
    std::fs::create_dir_all(env.box_path("squat")).unwrap();
    let before = env.snapshot();
    env.treebox(&["create", "squat", "--no-launch"]).code(5);
    assert_eq!(env.snapshot(), before);
}

#[test]
fn not_a_repository_is_a_usage_error() {
    let env = TestEnv::new();
    let elsewhere = env.root().join("plain");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let r = env.treebox_in(&elsewhere, &["create", "x", "--no-launch"]);
    r.code(2);
    assert!(r.stderr.contains("not inside a git repository"), "{r:?}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[test]
fn dry_run_prints_the_plan_and_changes_nothing() {
    let env = TestEnv::new();
    let before = env.snapshot();
    let r = env.treebox(&["create", "plan/me", "--dry-run"]);
    r.ok();
    assert!(r.stderr.contains("git worktree add"), "{r:?}");
    assert!(r.stderr.contains("fetch origin"), "{r:?}");
    let doc = env
        .treebox(&["create", "plan/me", "--dry-run", "--json"])
        .ok()
        .json();
    assert_eq!(doc["dryRun"], true);
    assert_eq!(doc["name"], "plan--me");
    assert_eq!(doc["checkout"]["kind"], "newBranch");
    assert_eq!(env.snapshot(), before);
}

#[test]
fn fetch_is_required_and_gives_a_fresh_base() {
    let env = TestEnv::new();
    let fresh = env.push_to_origin("new.txt", "new");
    let doc = env.treebox(&["create", "fresh", "--json"]).ok().json();
    assert_eq!(doc["baseCommit"], fresh);
    assert_eq!(doc["fetched"], true);
    assert!(env.box_path("fresh").join("new.txt").is_file());

    // --no-fetch: local refs, with a warning.
    let newer = env.push_to_origin("newer.txt", "newer");
    let r = env.treebox(&["create", "stale", "--no-fetch", "--json"]);
    r.ok();
    assert_ne!(r.json()["baseCommit"], newer);
    assert!(r.stderr.is_empty(), "JSON mode keeps stderr quiet: {r:?}");
    assert!(r.json()["warnings"][0]
        .as_str()
        .unwrap()
        .contains("--no-fetch"));

    // An unreachable origin: exit 4, nothing created.
    env.git(
        &env.repo,
        &["remote", "set-url", "origin", "/nonexistent/origin.git"],
    );
    let before = env.snapshot();
    let r = env.treebox(&["create", "offline", "--no-launch"]);
    r.code(4);
    assert!(r.stderr.contains("--no-fetch"), "{r:?}");
    assert_eq!(env.snapshot(), before);
    // With --json the error is one JSON object on stderr.
    let r = env.treebox(&["create", "offline", "--json"]);
    r.code(4);
    let err: serde_json::Value = serde_json::from_str(r.stderr.trim()).unwrap();
    assert_eq!(err["schemaVersion"], 1);
    assert_eq!(err["error"]["code"], 4);
    assert!(r.stdout.is_empty());
}

#[test]
fn no_origin_uses_local_refs_with_a_note() {
    let env = TestEnv::new();
    env.git(&env.repo, &["remote", "remove", "origin"]);
    let r = env.treebox(&["create", "local", "--json"]);
    r.ok();
    assert_eq!(r.json()["baseRef"], "refs/heads/main");
    assert_eq!(r.json()["fetched"], false);
}

#[test]
fn config_errors_name_the_file_and_key() {
    let env = TestEnv::new();
    let file = env.write_config(r#"{"harnes": "claude"}"#);
    let before = env.snapshot();
    let r = env.treebox(&["create", "x", "--no-launch"]);
    r.code(2);
    assert!(r.stderr.contains(&file.display().to_string()), "{r:?}");
    assert!(r.stderr.contains("did you mean `harness`"), "{r:?}");
    assert_eq!(env.snapshot(), before);
    env.write_config(r#"{"firewall": "yes"}"#);
    let r = env.treebox(&["create", "x", "--no-launch"]);
    r.code(2);
    assert!(
        r.stderr.contains("`firewall` must be true or false"),
        "{r:?}"
    );
    assert_eq!(env.snapshot(), before);
}

#[test]
fn project_file_sets_base_only_and_warns_on_the_rest() {
    let env = TestEnv::new();
    let root = env.root();
    env.git(&root, &["clone", "-q", "origin.git", "mate"]);
    let mate = root.join("mate");
    env.git(&mate, &["switch", "-q", "-c", "develop"]);
    env.commit_file(&mate, "dev.txt", "d", "dev");
    env.git(&mate, &["push", "-q", "origin", "develop"]);
    std::fs::write(
        env.repo.join(".treebox.json"),
        r#"{"base": "develop", "setup": ["touch /tmp/pwned"]}"#,
    )
    .unwrap();
    let r = env.treebox(&["create", "p", "--json"]);
    r.ok();
    assert_eq!(r.json()["base"], "develop");
    assert!(env.box_path("p").join("dev.txt").is_file());
    let warnings = r.json()["warnings"].to_string();
    assert!(warnings.contains("setup"), "{warnings}");
    // The flag still beats the project file.
    let r = env.treebox(&["create", "q", "--base", "main", "--json"]);
    assert_eq!(r.ok().json()["base"], "main");
}

#[test]
fn env_is_copied_private_and_never_through_a_symlink() {
    let env = TestEnv::new();
    std::fs::write(env.repo.join(".env"), "SECRET=1\n").unwrap();
    let doc = env.treebox(&["create", "e", "--json"]).ok().json();
    assert_eq!(doc["env"], "copied");
    let copied = env.box_path("e").join(".env");
    assert_eq!(std::fs::read_to_string(&copied).unwrap(), "SECRET=1\n");
    let mode = std::fs::metadata(&copied).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(env.git(&env.box_path("e"), &["status", "--porcelain"]), "");

    // A repo that commits `.env` as a symlink to a host secret: not followed.
    let secret = env.root().join("host-secret");
    std::fs::write(&secret, "AWS_KEY=precious\n").unwrap();
    let root = env.root();
    env.git(&root, &["clone", "-q", "origin.git", "evil"]);
    let evil = root.join("evil");
    std::os::unix::fs::symlink(&secret, evil.join(".env")).unwrap();
    env.git(&evil, &["add", ".env"]);
    env.git(&evil, &["commit", "-q", "-m", "plant"]);
    env.git(&evil, &["push", "-q", "origin", "main"]);
    env.git(&env.repo, &["pull", "-q", "--ff-only"]);
    let doc = env.treebox(&["create", "s", "--json"]).ok().json();
    assert_eq!(doc["env"], "refused");
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "AWS_KEY=precious\n"
    );
    let boxed = env.box_path("s").join(".env");
    assert!(std::fs::symlink_metadata(&boxed)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn setup_detects_cargo_and_records_the_hash() {
    let env = TestEnv::new();
    let root = env.root();
    env.git(&root, &["clone", "-q", "origin.git", "mate"]);
    let mate = root.join("mate");
    env.commit_file(
        &mate,
        "Cargo.toml",
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
        "crate",
    );
    env.commit_file(&mate, "src/lib.rs", "", "lib");
    env.commit_file(
        &mate,
        "Cargo.lock",
        "# This file is automatically @generated by Cargo.\nversion = 4\n\n[[package]]\nname = \"tiny\"\nversion = \"0.1.0\"\n",
        "lock",
    );
    env.git(&mate, &["push", "-q", "origin", "main"]);
    let mut env = env;
    // cargo lives in the user's toolchain; let the box see it.
    let cargo = which("cargo");
    env.extra_env.push((
        "PATH".into(),
        format!(
            "{}:{}:/usr/local/bin:/usr/bin:/bin",
            env.bin.display(),
            cargo.parent().unwrap().display()
        ),
    ));
    if let Ok(rh) = std::env::var("RUSTUP_HOME") {
        env.extra_env.push(("RUSTUP_HOME".into(), rh));
    }
    env.extra_env.push((
        "CARGO_HOME".into(),
        std::env::var("CARGO_HOME")
            .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap_or_default())),
    ));
    let r = env.treebox(&["create", "rs", "--json"]);
    r.ok();
    let doc = r.json();
    assert_eq!(doc["ecosystems"], serde_json::json!(["cargo"]));
    assert_eq!(doc["setupCompleted"], true, "{r:?}");
    assert_eq!(doc["setup"][0]["name"], "cargo");
    assert_eq!(doc["setup"][0]["ok"], true);
    let hash = doc["lockfileHash"].as_str().unwrap();
    assert_eq!(hash.len(), 64);
    assert_eq!(record(&env, "rs")["lockfileHash"], hash);
}

fn which(prog: &str) -> std::path::PathBuf {
    let path = std::env::var("PATH").unwrap_or_default();
    for dir in path.split(':') {
        let p = std::path::Path::new(dir).join(prog);
        if p.is_file() {
            return p;
        }
    }
    let home = std::env::var("HOME").unwrap_or_default();
    std::path::PathBuf::from(format!("{home}/.cargo/bin/{prog}"))
}

#[test]
fn missing_tool_warns_and_records_setup_incomplete() {
    let env = TestEnv::new();
    env.push_to_origin("uv.lock", "version = 1\n");
    let r = env.treebox(&["create", "py", "--json"]);
    r.ok();
    let doc = r.json();
    assert_eq!(doc["ecosystems"], serde_json::json!(["uv"]));
    assert_eq!(doc["setupCompleted"], false);
    assert_eq!(doc["setup"][0]["missingTool"], true);
    assert!(doc["warnings"].to_string().contains("uv"), "{doc}");
    assert_eq!(record(&env, "py")["setupCompleted"], false);
    // Without --json the warning is on stderr and the box is still made.
    let r = env.treebox(&["create", "py2", "--no-launch"]);
    r.ok();
    assert!(
        r.stderr.contains("warning:") && r.stderr.contains("uv"),
        "{r:?}"
    );
}

#[test]
fn custom_setup_replaces_detection() {
    let env = TestEnv::new();
    env.push_to_origin("uv.lock", "version = 1\n");
    env.write_config(r#"{"setup": ["echo made > marker.txt", "test -f marker.txt"]}"#);
    let doc = env.treebox(&["create", "c", "--json"]).ok().json();
    assert_eq!(doc["setupCompleted"], true);
    assert_eq!(doc["setup"].as_array().unwrap().len(), 2);
    assert!(env.box_path("c").join("marker.txt").is_file());
    env.write_config(r#"{"setup": ["exit 3"]}"#);
    let doc = env.treebox(&["create", "d", "--json"]).ok().json();
    assert_eq!(doc["setupCompleted"], false);
}

#[test]
fn interrupted_setup_is_finished_by_a_second_create() {
    let env = TestEnv::new();
    env.write_config(r#"{"setup": ["test -f \"$HOME/allow\""]}"#);
    let doc = env.treebox(&["create", "half", "--json"]).ok().json();
    assert_eq!(doc["setupCompleted"], false);
    std::fs::write(env.home.join("allow"), "").unwrap();
    let doc = env.treebox(&["create", "half", "--json"]).ok().json();
    assert_eq!(doc["resumed"], true);
    assert_eq!(doc["setupCompleted"], true);
    // Complete now: a third create is a conflict.
    env.treebox(&["create", "half", "--no-launch"]).code(5);
}

#[test]
fn submodules_are_checked_out_at_the_pinned_commit() {
    let env = TestEnv::new();
    let root = env.root();
    env.git(&root, &["init", "-q", "--bare", "sub.git"]);
    env.git(&root, &["clone", "-q", "sub.git", "subwork"]);
    let subwork = root.join("subwork");
    env.commit_file(&subwork, "lib.txt", "v1\n", "v1");
    env.git(&subwork, &["push", "-q", "origin", "HEAD:main"]);
    let v1 = env.git(&subwork, &["rev-parse", "HEAD"]).trim().to_string();
    // The project pins v1.
    env.git(
        &env.repo,
        &[
            "submodule",
            "add",
            "-q",
            &root.join("sub.git").to_string_lossy(),
            "vendor/sub",
        ],
    );
    env.git(&env.repo, &["commit", "-q", "-m", "add sub"]);
    env.git(&env.repo, &["push", "-q", "origin", "main"]);
    // The main checkout's submodule moves on and gets dirty.
    env.commit_file(&subwork, "lib.txt", "v2\n", "v2");
    env.git(&subwork, &["push", "-q", "origin", "HEAD:main"]);
    env.git(
        &env.repo.join("vendor/sub"),
        &["pull", "-q", "origin", "main"],
    );
    std::fs::write(env.repo.join("vendor/sub/lib.txt"), "dirty\n").unwrap();

    let doc = env.treebox(&["create", "withsub", "--json"]).ok().json();
    assert_eq!(doc["submodules"], 1);
    let sub = env.box_path("withsub").join("vendor/sub");
    assert_eq!(
        std::fs::read_to_string(sub.join("lib.txt")).unwrap(),
        "v1\n"
    );
    assert_eq!(env.git(&sub, &["rev-parse", "HEAD"]).trim(), v1);
}

#[test]
fn planted_exec_config_never_runs_during_create() {
    let env = TestEnv::new();
    let marker = env.root().join("pwned");
    let m = marker.display();
    // What a box could write into the shared config.
    for (k, v) in [
        ("core.fsmonitor", format!("touch {m}.fsmonitor; false")),
        ("core.sshCommand", format!("touch {m}.ssh; ssh")),
        (
            "remote.origin.uploadpack",
            format!("touch {m}.uploadpack; git-upload-pack"),
        ),
        ("credential.helper", format!("!touch {m}.cred")),
        ("filter.evil.smudge", format!("touch {m}.smudge; cat")),
        ("filter.evil.clean", format!("touch {m}.clean; cat")),
        (
            "core.hooksPath",
            env.root().join("evilhooks").display().to_string(),
        ),
    ] {
        env.git(&env.repo, &["config", k, &v]);
    }
    std::fs::create_dir_all(env.root().join("evilhooks")).unwrap();
    for h in [
        "post-checkout",
        "reference-transaction",
        "post-index-change",
    ] {
        write_exec(
            &env.root().join("evilhooks").join(h),
            &format!("#!/bin/sh\ntouch {m}.{h}\n"),
        );
    }
    env.push_to_origin(".gitattributes", "* filter=evil\n");
    env.treebox(&["create", "victim", "--no-launch"]).ok();
    let leftovers: Vec<_> = std::fs::read_dir(env.root())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pwned"))
        .collect();
    assert!(leftovers.is_empty(), "planted config ran: {leftovers:?}");
}

#[test]
fn parallel_creates_of_different_names_all_succeed() {
    let env = TestEnv::new();
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let mut c = env.command(crate::env::TREEBOX, &env.repo);
            c.args(["create", &format!("par-{i}"), "--no-launch"]);
            std::thread::spawn(move || c.output().unwrap())
        })
        .collect();
    for h in handles {
        let out = h.join().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for i in 0..8 {
        assert!(env
            .box_path(&format!("par-{i}"))
            .join("README.md")
            .is_file());
    }
    let cfg = std::fs::read_to_string(env.repo.join(".git/config")).unwrap();
    assert_eq!(cfg.matches("worktreeConfig").count(), 1, "{cfg}");
    let exclude = std::fs::read_to_string(env.repo.join(".git/info/exclude")).unwrap();
    assert_eq!(exclude.matches("/.treebox/").count(), 1);
    env.git(&env.repo, &["fsck", "--no-progress"]);
}

#[test]
fn parallel_creates_of_one_name_exactly_one_wins() {
    let env = TestEnv::new();
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let mut c = env.command(crate::env::TREEBOX, &env.repo);
            c.args(["create", "same", "--no-launch"]);
            std::thread::spawn(move || c.output().unwrap())
        })
        .collect();
    let codes: Vec<i32> = handles
        .into_iter()
        .map(|h| h.join().unwrap().status.code().unwrap_or(-1))
        .collect();
    assert_eq!(codes.iter().filter(|c| **c == 0).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 5).count(), 7, "{codes:?}");
    env.git(&env.repo, &["fsck", "--no-progress"]);
    assert_eq!(
        env.git(&env.repo, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        2
    );
}

#[test]
fn guard_in_a_created_box_blocks_placeholder_pushes_and_chains_repo_hooks() {
    let env = TestEnv::new();
    let marker = env.root().join("repo-pre-push-ran");
    write_exec(
        &env.repo.join(".git/hooks/pre-push"),
        &format!("#!/bin/sh\ncat > /dev/null\ntouch {}\n", marker.display()),
    );
    let doc = env.treebox(&["create", "--json"]).ok().json();
    let path = env.box_path(doc["name"].as_str().unwrap());
    env.commit_file(&path, "work.txt", "w", "work");
    // `git push origin HEAD` from the placeholder branch: refused, with the rename hint.
    let r = env.git_run(&path, &["push", "origin", "HEAD"]);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("git branch -m"), "{r:?}");
    assert!(
        !marker.exists(),
        "the repo's hook runs only for allowed pushes"
    );
    let remote = env.git(&env.origin, &["for-each-ref", "--format=%(refname)"]);
    assert!(!remote.contains("treebox/"), "{remote}");
    // Renamed: the push goes through, and the repo's own pre-push hook ran.
    env.git(&path, &["branch", "-m", "feat/real-name"]);
    env.git(&path, &["push", "-q", "origin", "HEAD"]);
    assert!(marker.exists());
    let remote = env.git(&env.origin, &["for-each-ref", "--format=%(refname)"]);
    assert!(remote.contains("refs/heads/feat/real-name"), "{remote}");
}

#[test]
fn sandbox_up_detached_provisions_like_create() {
    let env = TestEnv::new();
    let r = env.sandbox(&["up", "boxed", "-d"]);
    r.ok();
    assert_eq!(r.stdout.trim(), env.box_path("boxed").to_string_lossy());
    assert_eq!(record(&env, "boxed")["setupCompleted"], true);
    // The same box seen from the other front end: create refuses a duplicate.
    env.treebox(&["create", "boxed", "--no-launch"]).code(5);
}

#[test]
fn progress_and_timings_only_on_a_terminal() {
    let env = TestEnv::new();
    // Off a terminal: no spinner, no timings, nothing but the answer and notes.
    let r = env.treebox(&["create", "quiet", "--no-launch"]);
    r.ok();
    assert!(!r.stderr.contains('\u{1b}'), "{r:?}");
    assert!(!r.stderr.contains("checkout"), "{r:?}");
    // On a terminal (util-linux `script` gives the child a pty): per-stage timings.
    let line = format!("{} create loud --no-launch", crate::env::TREEBOX);
    let out = env
        .command("script", &env.repo)
        .args(["-qec", &line, "/dev/null"])
        .output()
        .expect("util-linux script");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for stage in ["fetch", "checkout", "guard", "record"] {
        assert!(text.contains(stage), "no {stage} timing in {text:?}");
    }
    assert!(text.contains("s\r\n") || text.contains("s\n"), "{text:?}");
    // NO_COLOR: no colour codes, the timings stay.
    let mut c = env.command("script", &env.repo);
    c.env("NO_COLOR", "1").args([
        "-qec",
        &format!("{} create plain --no-launch", crate::env::TREEBOX),
        "/dev/null",
    ]);
    let text = String::from_utf8_lossy(&c.output().unwrap().stdout).into_owned();
    assert!(!text.contains("\u{1b}[32m"), "{text:?}");
    assert!(text.contains("checkout"), "{text:?}");
}

#[test]
fn dry_run_plans_against_what_the_fetch_would_bring() {
    let env = TestEnv::new();
    let fresh = env.push_to_origin("f.txt", "f");
    let before = env.snapshot();
    let doc = env
        .treebox(&["create", "d", "--dry-run", "--json"])
        .ok()
        .json();
    assert_eq!(
        doc["baseCommit"], fresh,
        "planned against origin, not stale refs"
    );
    assert_eq!(env.snapshot(), before, "ls-remote fetched nothing");
    // A remote-only base: the dry run accepts it as the real run would.
    let root = env.root();
    env.git(
        &root.join("teammate"),
        &["push", "-q", "origin", "HEAD:refs/heads/release"],
    );
    env.treebox(&["create", "r", "--base", "release", "--dry-run"])
        .ok();
    env.treebox(&["create", "r", "--base", "release", "--no-launch"])
        .ok();
    // An unreachable origin: the dry run refuses with 4 as the real run does.
    env.git(
        &env.repo,
        &["remote", "set-url", "origin", "/nonexistent/x.git"],
    );
    env.treebox(&["create", "u", "--dry-run"]).code(4);
    // --no-fetch: planned on local refs, with the same warning as the real run.
    let doc = env
        .treebox(&["create", "n", "--dry-run", "--no-fetch", "--json"])
        .ok()
        .json();
    assert!(doc["warnings"].to_string().contains("--no-fetch"), "{doc}");
}

#[test]
fn usage_errors_in_json_mode_are_json() {
    let env = TestEnv::new();
    let r = env.treebox(&["create", "--json", "--bogus"]);
    r.code(2);
    let err: serde_json::Value = serde_json::from_str(r.stderr.trim()).unwrap();
    assert_eq!(err["error"]["code"], 2);
    assert!(err["error"]["message"]
        .as_str()
        .unwrap()
        .contains("--bogus"));
    // Without --json: clap's own text.
    let r = env.treebox(&["create", "--bogus"]);
    r.code(2);
    assert!(r.stderr.contains("unexpected argument"), "{r:?}");
    env.treebox(&["--help"]).ok();
    let v = env.treebox(&["--version"]);
    assert_eq!(
        v.ok().stdout.trim(),
        format!("git-treebox {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn verbose_gives_stage_timings_off_a_terminal() {
    let env = TestEnv::new();
    let r = env.treebox(&["-v", "create", "timed", "--no-launch"]);
    r.ok();
    // To the millisecond: a stage of a few milliseconds does not read 0.00s.
    let in_ms = |l: &str| {
        let t = l.split_whitespace().last().unwrap_or("");
        t.strip_suffix('s')
            .and_then(|n| n.split_once('.'))
            .is_some_and(|(_, frac)| frac.len() == 3 && frac.bytes().all(|b| b.is_ascii_digit()))
    };
    for stage in ["fetch", "checkout", "guard", "record"] {
        assert!(
            r.stderr.lines().any(|l| l.starts_with(stage) && in_ms(l)),
            "{r:?}"
        );
    }
    // Quiet by default, and never in JSON mode.
    let r = env.treebox(&["-v", "create", "json", "--json"]);
    assert!(r.ok().stderr.is_empty(), "{r:?}");
}

#[test]
fn cold_setup_uses_throwaway_caches_and_removes_them() {
    let env = TestEnv::new();
    env.push_to_origin("uv.lock", "version = 1\n");
    let log = env.home.join("uv.log");
    write_exec(
        &env.bin.join("uv"),
        &format!(
            "#!/bin/sh\necho \"cache=${{UV_CACHE_DIR:-shared}} args=$*\" >> {}\n",
            log.display()
        ),
    );
    env.treebox(&["create", "warm", "--no-launch"]).ok();
    env.treebox(&["create", "cold", "--cold", "--no-launch"])
        .ok();
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0], "cache=shared args=sync --frozen", "{text}");
    let cold = lines[1]
        .strip_prefix("cache=")
        .and_then(|l| l.split(' ').next())
        .unwrap();
    assert!(cold.contains("/boxes/cold/cold-cache/"), "{text}");
    assert!(cold.starts_with(&env.state_dir().to_string_lossy().into_owned()));
    assert!(
        !std::path::Path::new(cold).exists(),
        "throwaway cache left behind"
    );
}

#[test]
fn a_env_the_repository_tracks_is_left_as_checked_out() {
    let env = TestEnv::new();
    env.push_to_origin(".env", "FROM_REPO=1\n");
    env.git(&env.repo, &["pull", "-q", "--ff-only"]);
    // The user's checkout has edited its tracked .env; the box keeps the repo's.
    std::fs::write(env.repo.join(".env"), "LOCAL_EDIT=1\n").unwrap();
    let doc = env.treebox(&["create", "tracked", "--json"]).ok().json();
    assert_eq!(doc["env"], "refused");
    assert!(
        doc["warnings"]
            .to_string()
            .contains("tracked by the repository"),
        "{doc}"
    );
    let boxed = env.box_path("tracked").join(".env");
    assert_eq!(std::fs::read_to_string(boxed).unwrap(), "FROM_REPO=1\n");
    assert_eq!(
        env.git(&env.box_path("tracked"), &["status", "--porcelain"]),
        ""
    );
}
