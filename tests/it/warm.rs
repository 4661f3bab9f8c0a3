//! Warm build outputs: a new box starts with the main checkout's `target/` (by reflink,
//! or copied with `--warm`), a build there is incremental and never touches the main
//! checkout's outputs, and `off` brings nothing. Real cargo on a real (tiny) crate.

use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::env::TestEnv;

/// A one-file cargo crate on origin's main, built once in the main checkout.
fn cargo_project() -> TestEnv {
    let mut env = TestEnv::new();
    // The real toolchain (not rustup's proxy, which would look in the test's HOME).
    let cargo = PathBuf::from(std::env::var("CARGO").expect("cargo runs the tests"));
    let tools = cargo.parent().unwrap();
    env.add_to_path(tools);
    env.extra_env.push((
        "CARGO_HOME".into(),
        env.home.join(".cargo").display().to_string(),
    ));
    let repo = env.repo.clone();
    std::fs::write(
        repo.join("Cargo.toml"),
        "[package]\nname = \"warmth\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(
        repo.join("src/main.rs"),
        "fn main() { println!(\"warm\"); }\n",
    )
    .unwrap();
    std::fs::write(repo.join(".gitignore"), "/target\n").unwrap();
    cargo_in(&env, &repo, &["generate-lockfile", "--offline"]);
    env.git(&repo, &["add", "."]);
    env.git(&repo, &["commit", "-q", "-m", "a crate"]);
    env.git(&repo, &["push", "-q", "origin", "main"]);
    cargo_in(&env, &repo, &["build", "--offline"]);
    env
}

/// Run cargo in `dir`; returns its stderr (where it says what it compiled).
#[track_caller]
fn cargo_in(env: &TestEnv, dir: &Path, args: &[&str]) -> String {
    let run = crate::env::Run::from_output(env.command("cargo", dir).args(args).output().unwrap());
    run.ok();
    run.stderr
}

/// Wait until a background clone of the box's `target/` (if any) is done: take its
/// profile's `.cargo-lock` as cargo does, and let it go.
fn settled(boxed: &Path) {
    if let Ok(f) = std::fs::File::open(boxed.join("target/debug/.cargo-lock")) {
        // SAFETY: a valid descriptor; the lock goes with it.
        assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) }, 0);
    }
}

/// Every file under `dir` but cargo's `.rustc_info.json`, relative, with its bytes (links as
/// their target).
fn digest(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            if rel == Path::new(".rustc_info.json") {
                // cargo's cache of rustc's version: setup's `cargo fetch` in the box
                // writes its own, and the background clone keeps it.
                continue;
            }
            let kind = e.file_type().unwrap();
            if kind.is_symlink() {
                out.push((
                    rel,
                    std::fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                ));
            } else if kind.is_dir() {
                stack.push(p);
            } else {
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_copied_target_is_identical_its_build_is_fresh_and_the_main_one_is_untouched() {
    let env = cargo_project();
    let main_target = env.repo.join("target");
    let before = digest(&main_target);
    let plan = env
        .treebox(&["create", "w", "--warm", "--dry-run", "--json"])
        .ok()
        .json();
    assert_eq!(plan["warm"]["mode"], "copy");
    assert_eq!(plan["warm"]["dirs"], serde_json::json!(["target"]));
    assert!(!env.box_path("w").exists(), "--dry-run writes nothing");

    let doc = env
        .treebox(&["create", "w", "--warm", "--json"])
        .ok()
        .json();
    assert_eq!(doc["warm"]["dirs"], serde_json::json!(["target"]));
    let method = doc["warm"]["method"].as_str().unwrap().to_string();
    assert!(method == "copy" || method == "reflink", "{doc}");
    let boxed = env.box_path("w");
    let box_target = boxed.join("target");
    settled(&boxed);
    assert_eq!(digest(&box_target), before, "byte-identical");
    // The box's own files, never the main checkout's.
    let exe = Path::new("debug/warmth");
    let (a, b) = (
        std::fs::metadata(main_target.join(exe)).unwrap(),
        std::fs::metadata(box_target.join(exe)).unwrap(),
    );
    assert_ne!((a.dev(), a.ino()), (b.dev(), b.ino()));
    assert_eq!(b.uid(), unsafe { libc::geteuid() });
    // The record says so too.
    let record = crate::create::record(&env, "w");
    assert_eq!(record["warm"]["method"], method.as_str());

    // Same sources, same outputs: nothing to compile. git sees a clean box.
    let first = cargo_in(&env, &boxed, &["build", "--offline"]);
    assert!(
        !first.contains("Compiling"),
        "a warm build is fresh:\n{first}"
    );
    assert_eq!(env.git(&boxed, &["status", "--porcelain"]), "");
    // A change is compiled, in the box only.
    std::fs::write(
        boxed.join("src/main.rs"),
        "fn main() { println!(\"changed\"); }\n",
    )
    .unwrap();
    let second = cargo_in(&env, &boxed, &["build", "--offline"]);
    assert!(second.contains("Compiling warmth"), "{second}");
    assert_eq!(
        digest(&main_target),
        before,
        "the main checkout's target/ is untouched"
    );
}

#[test]
fn off_brings_nothing_and_the_flag_beats_the_config() {
    let env = cargo_project();
    env.write_config(r#"{"warm": "off"}"#);
    let plan = env.treebox(&["create", "cold", "--dry-run"]);
    plan.ok();
    assert!(plan.stderr.contains("warm build outputs: off"), "{plan:#?}");
    let doc = env.treebox(&["create", "cold", "--json"]).ok().json();
    assert_eq!(doc["warm"]["mode"], "off");
    assert_eq!(doc["warm"]["method"], serde_json::Value::Null);
    assert!(!env.box_path("cold").join("target").exists());
    let doc = env
        .treebox(&["create", "hot", "--warm", "--json"])
        .ok()
        .json();
    assert_eq!(doc["warm"]["mode"], "copy");
    assert!(env.box_path("hot").join("target/debug").is_dir());
    env.write_config(r#"{}"#);
    let doc = env
        .treebox(&["create", "none", "--no-warm", "--json"])
        .ok()
        .json();
    assert_eq!(doc["warm"]["mode"], "off");
    assert!(!env.box_path("none").join("target").exists());
    // `git sandbox up` takes the same flags through the same pipeline.
    let doc = env
        .sandbox(&["up", "uphot", "--warm", "--json"])
        .ok()
        .json();
    assert_eq!(doc["warm"]["mode"], "copy");
    settled(&env.box_path("uphot"));
    assert_eq!(
        digest(&env.box_path("uphot").join("target")),
        digest(&env.repo.join("target"))
    );
    env.write_config(r#"{"warm": "copy"}"#);
    let doc = env
        .sandbox(&["up", "upcold", "--no-warm", "--json"])
        .ok()
        .json();
    assert_eq!(doc["warm"]["mode"], "off");
    assert!(!env.box_path("upcold").join("target").exists());
}

/// A node project: the build caches a lockfile install does not bring back
/// (`.next/cache`, `.turbo`) come in, when git ignores them; `node_modules` (what the
/// install makes) and a cache git tracks or that is a link stay out.
#[test]
fn a_node_project_gets_its_build_caches_and_nothing_else() {
    let env = TestEnv::new();
    let repo = env.repo.clone();
    std::fs::write(repo.join("package-lock.json"), "{\"lockfileVersion\": 3}\n").unwrap();
    std::fs::write(
        repo.join(".gitignore"),
        "/.next/\n/.turbo/\n/node_modules/\n/.parcel-cache\n",
    )
    .unwrap();
    env.git(&repo, &["add", "."]);
    env.git(&repo, &["commit", "-q", "-m", "a node project"]);
    env.git(&repo, &["push", "-q", "origin", "main"]);
    // No npm registry here: no install, only the warm stage.
    env.write_config(r#"{"setup": []}"#);
    for (dir, file) in [
        (".next/cache/webpack", "chunk.pack"),
        (".turbo", "run.log"),
        ("node_modules/left-pad", "index.js"),
        ("elsewhere", "x"),
    ] {
        std::fs::create_dir_all(repo.join(dir)).unwrap();
        std::fs::write(repo.join(dir).join(file), format!("{dir}\n")).unwrap();
    }
    // A cache that is a link: never followed.
    std::os::unix::fs::symlink(repo.join("elsewhere"), repo.join(".parcel-cache")).unwrap();
    let plan = env
        .treebox(&["create", "n", "--warm", "--dry-run", "--json"])
        .ok()
        .json();
    assert_eq!(
        plan["warm"]["dirs"],
        serde_json::json!([".next/cache", ".turbo"]),
        "{plan}"
    );
    let doc = env
        .treebox(&["create", "n", "--warm", "--json"])
        .ok()
        .json();
    assert_eq!(
        doc["warm"]["dirs"],
        serde_json::json!([".next/cache", ".turbo"])
    );
    let boxed = env.box_path("n");
    assert_eq!(
        digest(&boxed.join(".next/cache")),
        digest(&repo.join(".next/cache"))
    );
    assert_eq!(digest(&boxed.join(".turbo")), digest(&repo.join(".turbo")));
    assert!(!boxed.join("node_modules").exists());
    assert!(std::fs::symlink_metadata(boxed.join(".parcel-cache")).is_err());
    // Nothing but the caches is in the box that the checkout did not put there.
    assert_eq!(env.git(&boxed, &["status", "--porcelain"]), "");
}

/// Asked to warm a box of a repository with nothing to bring in (no ecosystem that
/// leaves build outputs), the plan says so; left to `auto`, it says nothing.
#[test]
fn a_plan_asked_to_warm_says_when_there_is_nothing_to_bring_in() {
    let env = TestEnv::new();
    let asked = env.treebox(&["create", "x", "--warm", "--dry-run"]);
    asked.ok();
    assert!(
        asked.stderr.contains("warm: no build outputs to bring in"),
        "{asked:?}"
    );
    let auto = env.treebox(&["create", "x", "--dry-run"]);
    auto.ok();
    assert!(!auto.stderr.contains("warm"), "{auto:?}");
}

#[test]
fn auto_clones_only_by_reflink_and_says_once_why_it_skipped() {
    let env = cargo_project();
    let plan = env
        .treebox(&["create", "a1", "--dry-run", "--json"])
        .ok()
        .json();
    let warm = &plan["warm"];
    assert_eq!(warm["mode"], "auto");
    let first = env.treebox(&["create", "a1", "--no-launch"]);
    first.ok();
    let doc = crate::create::record(&env, "a1");
    if warm["method"] == "reflink" {
        // This filesystem clones: the box has it all.
        assert_eq!(doc["warm"]["method"], "reflink");
        settled(&env.box_path("a1"));
        assert_eq!(
            digest(&env.box_path("a1").join("target")),
            digest(&env.repo.join("target"))
        );
        return;
    }
    assert_eq!(warm["method"], serde_json::Value::Null);
    let why = warm["skipped"].as_str().unwrap();
    assert!(
        why.contains("cannot clone files") && why.contains("--warm"),
        "{why}"
    );
    assert!(!env.box_path("a1").join("target").exists());
    assert_eq!(
        doc["warm"]["dirs"],
        serde_json::json!([]),
        "nothing brought in"
    );
    assert_eq!(doc["warm"]["skipped"], why);
    assert!(
        first.stderr.contains("warm build outputs skipped"),
        "{first:#?}"
    );
    let second = env.treebox(&["create", "a2", "--no-launch"]);
    second.ok();
    assert!(
        !second.stderr.contains("warm build outputs skipped"),
        "said once per repository:\n{second:#?}"
    );
}

/// By reflink on the host, `target/` is cloned after create returns, by a warmer that
/// holds cargo's build lock from before create returns: a build started at once waits
/// for it and compiles nothing, and the clone is whole and the box's own.
#[test]
fn a_background_clone_is_waited_for_by_cargo() {
    let env = cargo_project();
    let main_target = env.repo.join("target");
    let before = digest(&main_target);
    let plan = env
        .treebox(&["create", "bg", "--dry-run", "--json"])
        .ok()
        .json();
    if plan["warm"]["method"] != "reflink" {
        // This filesystem cannot clone (ext4): nothing goes to the background.
        assert_eq!(plan["warm"].get("background"), None, "{plan}");
        let doc = env.treebox(&["create", "bg", "--json"]).ok().json();
        assert_eq!(doc["warm"].get("background"), None, "{doc}");
        assert!(!env.box_state("bg").join("warm.json").exists());
        return;
    }
    assert_eq!(plan["warm"]["background"], true, "{plan}");
    crate::schema::assert_valid("plan", &plan, "create --dry-run --json");
    let doc = env.treebox(&["create", "bg", "--json"]).ok().json();
    assert_eq!(doc["warm"]["background"], true, "{doc}");
    crate::schema::assert_valid("create", &doc, "create --json");
    assert_eq!(doc["warm"]["dirs"], serde_json::json!(["target"]));
    let boxed = env.box_path("bg");
    // Made, and locked, before create returned.
    assert!(boxed.join("target/debug/.cargo-lock").is_file());
    // A build at once: cargo waits for the clone, then finds everything fresh.
    let first = cargo_in(&env, &boxed, &["build", "--offline"]);
    assert!(!first.contains("Compiling"), "{first}");
    let outcome: serde_json::Value =
        serde_json::from_slice(&std::fs::read(env.box_state("bg").join("warm.json")).unwrap())
            .unwrap();
    assert_eq!(outcome["state"], "done", "{outcome}");
    assert!(outcome["files"].as_u64().unwrap() > 0, "{outcome}");
    assert_eq!(
        digest(&main_target),
        before,
        "the main checkout's is untouched"
    );
    // The box's own copy: a change builds in the box only.
    let exe = Path::new("debug/warmth");
    let (a, b) = (
        std::fs::metadata(main_target.join(exe)).unwrap(),
        std::fs::metadata(boxed.join("target").join(exe)).unwrap(),
    );
    assert_ne!((a.dev(), a.ino()), (b.dev(), b.ino()));
    std::fs::write(boxed.join("src/main.rs"), "fn main() {}\n").unwrap();
    let second = cargo_in(&env, &boxed, &["build", "--offline"]);
    assert!(second.contains("Compiling warmth"), "{second}");
    assert_eq!(digest(&main_target), before);

    // Removed at once after its create: the warmer is stopped or done, nothing is left.
    let doc = env.treebox(&["create", "gone", "--json"]).ok().json();
    assert_eq!(doc["warm"]["background"], true, "{doc}");
    env.treebox(&["rm", "--force", "gone"]).ok();
    assert!(!env.box_path("gone").exists());
    assert!(!env.box_state("gone").exists());
    let box_arg = env.box_path("gone").join("target");
    let still: Vec<_> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|c| {
            c.split(|b| *b == 0)
                .any(|a| a == box_arg.as_os_str().as_encoded_bytes())
        })
        .collect();
    assert!(still.is_empty(), "a warmer outlived its box");
}

/// A build running in the main checkout is waited for, as cargo waits for another
/// cargo: what it writes before it lets go of cargo's lock is in the box, never half of
/// it. A copy says that it waits.
#[test]
fn a_build_running_in_the_main_checkout_is_waited_for() {
    let env = cargo_project();
    let lock = env.repo.join("target/debug/.cargo-lock");
    // A "build": holds cargo's lock of the profile, writes an output late, lets go.
    let mut build = std::process::Command::new("flock")
        .arg(&lock)
        .args(["sh", "-c", "sleep 1; echo whole > target/debug/late-output"])
        .current_dir(&env.repo)
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let probe = std::fs::File::open(&lock).unwrap();
    let start = std::time::Instant::now();
    // SAFETY: a valid descriptor; a lock taken here is let go at once.
    while unsafe { libc::flock(probe.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        unsafe { libc::flock(probe.as_raw_fd(), libc::LOCK_UN) };
        assert!(
            start.elapsed().as_secs() < 10,
            "the build never took the lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let r = env.treebox(&["create", "w", "--warm", "--no-launch"]);
    r.ok();
    let boxed = env.box_path("w");
    settled(&boxed);
    assert!(build.wait().unwrap().success());
    assert_eq!(
        std::fs::read_to_string(boxed.join("target/debug/late-output")).unwrap(),
        "whole\n"
    );
    let record = crate::create::record(&env, "w");
    if record["warm"]["method"] == "copy" {
        assert!(
            r.stderr
                .contains("warm: waiting for cargo in the main checkout (target/debug is locked)"),
            "{r:?}"
        );
    }
    // Nothing was built or changed in the box by the wait: its build is fresh.
    let first = cargo_in(&env, &boxed, &["build", "--offline"]);
    assert!(!first.contains("Compiling"), "{first}");
}

/// A create whose checkout fails, after what warming needs had started beside it (the
/// survey of the main checkout; by reflink, the warmer, not yet armed) and the status
/// producer was being written: nothing of it is left, and the main checkout's outputs
/// are free.
#[test]
fn a_failed_checkout_leaves_no_warmer_and_no_bookkeeping() {
    let env = cargo_project();
    // A box first, so that what any create writes once per repository is there.
    env.treebox(&["create", "first", "--no-warm", "--no-launch"])
        .ok();
    crate::env::write_exec(
        &env.bin.join("git"),
        &format!(
            "#!/bin/sh\ncase \" $* \" in *' read-tree '*) echo 'fatal: planted failure' >&2; exit 128 ;; esac\nexec '{}' \"$@\"\n",
            crate::env::real_git().display()
        ),
    );
    let before = env.snapshot();
    let run = env.treebox(&["create", "broken", "--no-launch"]);
    assert_ne!(run.code, 0, "{run:#?}");
    assert!(run.stderr.contains("planted failure"), "{run:#?}");
    assert_eq!(env.snapshot(), before, "a failed create left something");
    assert!(!env.box_state("broken").exists());
    assert!(!env.box_path("broken").exists());
    // No warmer holds (or waits for) the main checkout's build lock.
    let lock = std::fs::File::open(env.repo.join("target/debug/.cargo-lock")).unwrap();
    // SAFETY: a valid descriptor; the lock goes with it.
    let taken = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(taken, 0, "the main checkout's build lock is held");
    drop(lock);
    // And the name is free: the same create works once git does.
    std::fs::remove_file(env.bin.join("git")).unwrap();
    env.treebox(&["create", "broken", "--no-launch"]).ok();
    settled(&env.box_path("broken"));
}

/// With hundreds of tracked files the box's files are given the main checkout's times on
/// several threads: each file the main checkout has byte for byte carries its time, the
/// box's index is written to match (git sees nothing to refresh), and a file that
/// differs from the main checkout's keeps its own.
#[test]
fn many_files_keep_the_main_checkouts_times_and_a_clean_index() {
    let env = cargo_project();
    let repo = env.repo.clone();
    std::fs::create_dir_all(repo.join("data")).unwrap();
    for i in 0..300 {
        std::fs::write(
            repo.join(format!("data/f{i:03}.txt")),
            format!("file {i}\n"),
        )
        .unwrap();
    }
    env.git(&repo, &["add", "data"]);
    env.git(&repo, &["commit", "-q", "-m", "many files"]);
    env.git(&repo, &["push", "-q", "origin", "main"]);
    // A main checkout that has been worked in: its index written after its files.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    env.git(&repo, &["update-index", "-q", "--really-refresh"]);
    // One file edited in the main checkout, not committed: the box's differs.
    std::fs::write(repo.join("data/f007.txt"), "edited\n").unwrap();

    env.treebox(&["create", "many", "--warm", "--no-launch"])
        .ok();
    let boxed = env.box_path("many");
    settled(&boxed);
    let mtime = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        (m.mtime(), m.mtime_nsec())
    };
    let mut kept = 0;
    for i in 0..300 {
        let rel = format!("data/f{i:03}.txt");
        if i == 7 {
            assert_ne!(mtime(&boxed.join(&rel)), mtime(&repo.join(&rel)), "{rel}");
            continue;
        }
        assert_eq!(mtime(&boxed.join(&rel)), mtime(&repo.join(&rel)), "{rel}");
        kept += 1;
    }
    assert_eq!(kept, 299);
    // The index has the new stat: nothing is stat-dirty, without a refresh.
    assert_eq!(env.git(&boxed, &["diff-files", "--name-only"]), "");
    assert_eq!(env.git(&boxed, &["status", "--porcelain"]), "");
}

#[test]
fn a_bad_warm_value_in_the_config_is_refused_and_nothing_is_written() {
    let env = cargo_project();
    env.write_config(r#"{"warm": "hot"}"#);
    let before = env.snapshot();
    let run = env.treebox(&["create", "x", "--no-launch"]);
    run.code(2);
    assert!(run.stderr.contains("warm"), "{run:#?}");
    assert_eq!(env.snapshot(), before);
    env.write_config("{}");
    let before = env.snapshot();
    let run = env.treebox(&["create", "x", "--warm", "--no-warm", "--no-launch"]);
    run.code(2);
    assert!(run.stderr.contains("--no-warm"), "{run:#?}");
    assert_eq!(env.snapshot(), before);
}

#[test]
fn in_a_container_the_copy_sits_inside_the_box() {
    let Some(b) = crate::container::Boxed::new("docker") else {
        return;
    };
    let env = &b.env;
    // No cargo in the test image: no setup step (a failing one would fail the create).
    env.write_config(r#"{"template": "test", "isolation": "docker", "setup": []}"#);
    let repo = env.repo.clone();
    std::fs::write(
        repo.join("Cargo.toml"),
        "[package]\nname = \"w\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::write(repo.join("Cargo.lock"), "version = 3\n").unwrap();
    std::fs::write(repo.join(".gitignore"), "/target\n").unwrap();
    env.git(&repo, &["add", "."]);
    env.git(&repo, &["commit", "-q", "-m", "a crate"]);
    env.git(&repo, &["push", "-q", "origin", "main"]);
    std::fs::create_dir_all(repo.join("target/debug")).unwrap();
    std::fs::write(repo.join("target/debug/artifact"), "built on the host\n").unwrap();
    let doc = env
        .treebox(&["create", "boxed", "--warm", "--json"])
        .ok()
        .json();
    assert_eq!(doc["warm"]["dirs"], serde_json::json!(["target"]), "{doc}");
    let path = doc["path"].as_str().unwrap().to_string();
    let artifact = format!("{path}/target/debug/artifact");
    let seen = b.exec(&["boxed", "--", "cat", &artifact]);
    assert_eq!(seen.ok().stdout, "built on the host\n");
    // The agent writes its own copy; the main checkout's stays as it was.
    b.exec(&[
        "boxed",
        "--",
        "sh",
        "-c",
        &format!("echo rebuilt > {artifact}"),
    ])
    .ok();
    assert_eq!(
        std::fs::read_to_string(repo.join("target/debug/artifact")).unwrap(),
        "built on the host\n"
    );
}

/// A setup step that builds (`cargo build` in the user's `setup`) runs after the
/// background clone is let go: it waits on cargo's lock for the clone, not the other
/// way round (a deadlock), and finds the outputs fresh.
#[test]
fn a_setup_step_that_builds_waits_for_the_clone() {
    let env = cargo_project();
    env.write_config(
        r#"{"setup": ["cargo build --offline 2>build.log; s=$?; cat build.log >&2; exit $s"]}"#,
    );
    let doc = env.treebox(&["create", "built", "--json"]).ok().json();
    assert_eq!(doc["setupCompleted"], true, "{doc}");
    let log = std::fs::read_to_string(env.box_path("built").join("build.log")).unwrap();
    if doc["warm"]["method"] == "reflink" {
        assert_eq!(doc["warm"]["background"], true, "{doc}");
        assert!(!log.contains("Compiling"), "built on the clone:\n{log}");
    }
    // Either way the box's outputs are its own and whole enough to run.
    assert!(env.box_path("built").join("target/debug/warmth").is_file());
}
