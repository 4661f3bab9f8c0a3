//! `git treebox doctor`: hard failures exit 1, advisories exit 0, the JSON document
//! matches its schema, and talking to origin runs nothing the repository planted.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::env::{Run, TestEnv};

const NAMES: [&str; 16] = [
    "git",
    "repo",
    "uid",
    "sessions",
    "harness.claude",
    "harness.codex",
    "env",
    "origin",
    "runner",
    "limits",
    "boxes",
    "ports",
    "devcontainer",
    "logins",
    "versions",
    "hooks",
];

fn schema() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/schema/doctor.schema.json");
    let text = std::fs::read_to_string(&path).expect("read doctor.schema.json");
    serde_json::from_str(&text).expect("doctor.schema.json is JSON")
}

/// The schema with every object that declares `properties` closed to undeclared ones.
fn strict(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out: serde_json::Map<String, Value> =
                map.iter().map(|(k, v)| (k.clone(), strict(v))).collect();
            if map.get("properties").is_some_and(Value::is_object) {
                out.remove("additionalProperties");
                out.insert("unevaluatedProperties".into(), Value::Bool(false));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(strict).collect()),
        other => other.clone(),
    }
}

/// Parse `doctor --json` output and validate it against the published schema (and a
/// strict copy of it, so an undeclared field fails).
#[track_caller]
fn document(r: &Run) -> Value {
    let doc = r.json();
    let schema = schema();
    for s in [schema.clone(), strict(&schema)] {
        let v = jsonschema::validator_for(&s).expect("the schema compiles");
        let errs: Vec<String> = v
            .iter_errors(&doc)
            .map(|e| format!("  at `{}`: {e}", e.instance_path()))
            .collect();
        assert!(
            errs.is_empty(),
            "doctor --json does not match doctor.schema.json:\n{}\n{r:#?}",
            errs.join("\n")
        );
    }
    doc
}

#[track_caller]
fn check<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["checks"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no check `{name}` in {doc:#}"))
}

fn summary(c: &Value) -> &str {
    c["summary"].as_str().unwrap_or_default()
}

#[test]
fn doctor_healthy_repo() {
    let env = TestEnv::new();
    let r = env.treebox(&["doctor", "--json"]);
    r.ok();
    let doc = document(&r);
    assert_eq!(doc["schemaVersion"], 1);
    assert_eq!(doc["ok"], true);
    let names: Vec<&str> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, NAMES);
    for name in ["git", "repo", "origin", "runner"] {
        assert_eq!(check(&doc, name)["status"], "ok", "{doc:#}");
    }
    assert!(summary(check(&doc, "git")).starts_with("git version "));
    assert!(summary(check(&doc, "repo")).contains(&*env.repo.to_string_lossy()));
    // `auto` is the default: an unmarked machine runs new boxes on the host, and says why.
    let runner = summary(check(&doc, "runner"));
    assert!(
        runner.starts_with("auto → host: this machine is not marked"),
        "{runner}"
    );
    // The fake harnesses are on PATH, but nobody logged in: advisories with a hint.
    let claude = check(&doc, "harness.claude");
    assert_eq!(claude["status"], "advisory", "{doc:#}");
    assert!(
        summary(claude).contains(&*env.bin.to_string_lossy()),
        "{claude}"
    );
    assert!(summary(claude).contains("default harness"), "{claude}");
    assert!(!summary(check(&doc, "harness.codex")).contains("default"));
    assert_eq!(check(&doc, "env")["status"], "advisory");

    // Logged in: ok. The login dirs follow CLAUDE_CONFIG_DIR / CODEX_HOME.
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    let codex_home = env.root().join("codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    let mut env = env;
    env.extra_env
        .push(("CODEX_HOME".into(), codex_home.to_string_lossy().into()));
    std::fs::write(env.repo.join(".env"), "SECRET=1\n").unwrap();
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    assert_eq!(check(&doc, "harness.claude")["status"], "ok", "{doc:#}");
    let codex = check(&doc, "harness.codex");
    assert_eq!(codex["status"], "ok", "{doc:#}");
    assert!(summary(codex).contains(&*codex_home.to_string_lossy()));
    assert_eq!(check(&doc, "env")["status"], "ok", "{doc:#}");

    // The human report: one line per check on stdout, hints beneath.
    let r = env.treebox(&["doctor"]);
    r.ok();
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].starts_with("ok    git "), "{r:#?}");
    assert!(lines[1].starts_with("ok    repo "), "{r:#?}");
    for name in NAMES {
        assert!(
            lines
                .iter()
                .any(|l| l.split_whitespace().nth(1) == Some(name)),
            "{name}: {r:#?}"
        );
    }
    for l in &lines {
        assert!(
            ["ok ", "warn ", "FAIL ", "      "]
                .iter()
                .any(|p| l.starts_with(p)),
            "{l:?}"
        );
    }
}

#[test]
fn doctor_outside_a_repo_fails_repo() {
    let env = TestEnv::new();
    let outside = env.root().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let r = env.treebox_in(&outside, &["doctor", "--json"]);
    r.code(1);
    let doc = document(&r);
    assert_eq!(doc["ok"], false);
    let repo = check(&doc, "repo");
    assert_eq!(repo["status"], "fail");
    assert!(repo["hint"].is_string(), "{repo}");
    assert_eq!(check(&doc, "git")["status"], "ok");

    let r = env.treebox_in(&outside, &["doctor"]);
    r.code(1);
    assert!(r.stdout.contains("FAIL  repo"), "{r:#?}");

    // A bare repository is no place for boxes either.
    let r = env.treebox_in(&env.origin, &["doctor", "--json"]);
    r.code(1);
    let doc = document(&r);
    assert_eq!(check(&doc, "repo")["status"], "fail");
    assert!(summary(check(&doc, "repo")).contains("bare"), "{doc:#}");
}

#[test]
fn doctor_unreachable_or_missing_origin_is_advisory() {
    let env = TestEnv::new();
    env.git(
        &env.repo,
        &["remote", "set-url", "origin", "/nonexistent/origin.git"],
    );
    let r = env.treebox(&["doctor", "--json"]);
    r.ok();
    let doc = document(&r);
    assert_eq!(doc["ok"], true);
    let origin = check(&doc, "origin");
    assert_eq!(origin["status"], "advisory", "{doc:#}");
    assert!(summary(origin).contains("nonexistent"), "{origin}");
    assert_eq!(origin["hint"], "git fetch origin");

    env.git(&env.repo, &["remote", "remove", "origin"]);
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    let origin = check(&doc, "origin");
    assert_eq!(origin["status"], "advisory");
    assert!(summary(origin).contains("local refs"), "{origin}");
}

#[test]
fn doctor_missing_harness_is_advisory() {
    let env = TestEnv::new();
    std::fs::remove_file(env.bin.join("codex")).unwrap();
    env.write_config(r#"{"harness":"codex"}"#);
    let r = env.treebox(&["doctor", "--json"]);
    r.ok();
    let doc = document(&r);
    let codex = check(&doc, "harness.codex");
    assert_eq!(codex["status"], "advisory", "{doc:#}");
    assert!(summary(codex).contains("not found"), "{codex}");
    assert!(summary(codex).contains("default harness"), "{codex}");
    assert!(codex["hint"].is_string());
    assert!(!summary(check(&doc, "harness.claude")).contains("default"));

    // A configured program that does not exist is named.
    env.write_config(r#"{"harnesses":{"claude":{"program":"/nonexistent/claude-wrapper"}}}"#);
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    let claude = check(&doc, "harness.claude");
    assert_eq!(claude["status"], "advisory");
    assert!(summary(claude).contains("claude-wrapper"), "{claude}");
}

#[test]
fn doctor_tracked_env_symlink_is_advisory() {
    let env = TestEnv::new();
    let secret = env.root().join("secret");
    std::fs::write(&secret, "AWS=1\n").unwrap();
    std::os::unix::fs::symlink(&secret, env.repo.join(".env")).unwrap();
    env.git(&env.repo, &["add", ".env"]);
    env.git(&env.repo, &["commit", "-q", "-m", "env link"]);
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    let e = check(&doc, "env");
    assert_eq!(e["status"], "advisory", "{doc:#}");
    assert!(summary(e).contains("not be followed"), "{e}");
}

#[test]
fn doctor_bad_config_exits_2() {
    let env = TestEnv::new();
    env.write_config(r#"{"isolaton":"docker"}"#);
    let r = env.treebox(&["doctor", "--json"]);
    r.code(2);
    assert!(r.stdout.is_empty(), "{r:#?}");
    assert!(r.stderr.contains("isolaton"), "{r:#?}");
}

#[test]
fn doctor_runner_auto_on_an_unmarked_machine_is_host() {
    let env = TestEnv::new();
    let doc = document(
        env.treebox(&["doctor", "--isolation", "auto", "--json"])
            .ok(),
    );
    let runner = check(&doc, "runner");
    assert_eq!(runner["status"], "ok");
    assert!(summary(runner).starts_with("auto → host"), "{runner}");
}

#[test]
fn doctor_docker_runner_matches_docker_info() {
    let env = TestEnv::new();
    let probe = env
        .command("docker", &env.repo)
        .args(["info", "--format", "{{.ServerVersion}}"])
        .output();
    let version = match &probe {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => String::new(),
    };
    let r = env.treebox(&["doctor", "--isolation", "docker", "--json"]);
    let doc = document(&r);
    let runner = check(&doc, "runner");
    if version.is_empty() {
        r.code(1);
        assert_eq!(runner["status"], "fail", "{doc:#}");
        assert!(runner["hint"].is_string());
    } else {
        r.ok();
        assert_eq!(runner["status"], "ok", "{doc:#}");
        assert!(
            summary(runner).starts_with(&format!("docker {version}; ")),
            "{doc:#}"
        );
        assert!(summary(runner).contains("the agent runs as uid"), "{doc:#}");
    }
}

/// A PATH with the fake harnesses and git, and nothing else.
fn path_without_engines(env: &TestEnv) -> String {
    let git = ["/usr/local/bin/git", "/usr/bin/git", "/bin/git"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.exists())
        .expect("git is installed");
    let dir = env.root().join("git-only");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(git, dir.join("git")).unwrap();
    format!("{}:{}", env.bin.display(), dir.display())
}

#[test]
fn doctor_missing_podman_fails() {
    let mut env = TestEnv::new();
    let path = path_without_engines(&env);
    env.extra_env.push(("PATH".into(), path));
    let r = env.treebox(&["doctor", "--isolation", "podman", "--json"]);
    r.code(1);
    let doc = document(&r);
    assert_eq!(doc["ok"], false);
    let runner = check(&doc, "runner");
    assert_eq!(runner["status"], "fail", "{doc:#}");
    assert!(summary(runner).contains("podman"), "{runner}");
    assert!(runner["hint"].is_string());
    // Only the runner failed.
    assert_eq!(check(&doc, "git")["status"], "ok");
    assert_eq!(check(&doc, "repo")["status"], "ok");

    // `auto` on a marked runner with no engine at all fails too.
    env.extra_env.push(("TREEBOX_RUNNER".into(), "1".into()));
    let r = env.treebox(&["doctor", "--isolation", "auto", "--json"]);
    r.code(1);
    assert_eq!(check(&document(&r), "runner")["status"], "fail");

    let r = env.treebox(&["doctor", "--isolation", "podman"]);
    r.code(1);
    assert!(r.stdout.contains("FAIL  runner"), "{r:#?}");
}

#[test]
fn doctor_ls_remote_runs_nothing_the_repo_planted() {
    let env = TestEnv::new();
    let root = env.root();
    let ssh_marker = root.join("ssh-ran");
    let cred_marker = root.join("credential-ran");
    let pack_marker = root.join("uploadpack-ran");
    let repo = &env.repo;
    env.git(
        repo,
        &[
            "config",
            "core.sshCommand",
            &format!("touch {}; false", ssh_marker.display()),
        ],
    );
    env.git(
        repo,
        &[
            "config",
            "credential.helper",
            &format!("!touch {}", cred_marker.display()),
        ],
    );

    // Over ssh: the planted ssh command would run for plain git…
    env.git(
        repo,
        &["remote", "set-url", "origin", "ssh://git@127.0.0.1:9/x.git"],
    );
    let _ = env.git_run(repo, &["ls-remote", "--heads", "origin"]);
    assert!(ssh_marker.exists(), "the planted sshCommand is live");
    std::fs::remove_file(&ssh_marker).unwrap();
    // …but not for doctor.
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    assert_eq!(check(&doc, "origin")["status"], "advisory", "{doc:#}");
    assert!(
        !ssh_marker.exists(),
        "doctor ran the planted core.sshCommand"
    );
    assert!(
        !cred_marker.exists(),
        "doctor ran the planted credential.helper"
    );

    // A local origin: the planted upload-pack would run for plain git…
    env.git(
        repo,
        &["remote", "set-url", "origin", &env.origin.to_string_lossy()],
    );
    env.git(
        repo,
        &[
            "config",
            "remote.origin.uploadpack",
            &format!("touch {}; git-upload-pack", pack_marker.display()),
        ],
    );
    env.git(repo, &["ls-remote", "--heads", "origin"]);
    assert!(pack_marker.exists(), "the planted uploadpack is live");
    std::fs::remove_file(&pack_marker).unwrap();
    // …but not for doctor, which still reaches origin.
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    assert_eq!(check(&doc, "origin")["status"], "ok", "{doc:#}");
    assert!(!pack_marker.exists(), "doctor ran the planted uploadpack");
    assert!(
        !cred_marker.exists(),
        "doctor ran the planted credential.helper"
    );
}

/// A repository that configures pre-commit without its hooks installed is told so, with
/// the command that works in the main checkout and the one that works inside a box;
/// once a `pre-commit` hook is installed (or there is no configuration) the check is ok.
#[test]
fn pre_commit_configured_but_not_installed_is_an_advisory() {
    let env = TestEnv::new();
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    assert_eq!(check(&doc, "hooks")["status"], "ok", "{doc:#}");

    env.commit_file(
        &env.repo,
        ".pre-commit-config.yaml",
        "repos: []\n",
        "pre-commit",
    );
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    let hooks = check(&doc, "hooks");
    assert_eq!(hooks["status"], "advisory", "{doc:#}");
    assert!(
        summary(hooks).contains(".pre-commit-config.yaml"),
        "{hooks}"
    );
    let hint = hooks["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("`pre-commit install`"), "{hint}");
    assert!(
        hint.contains("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0= pre-commit install"),
        "{hint}"
    );

    crate::env::write_exec(
        &env.repo.join(".git/hooks/pre-commit"),
        "#!/bin/sh\nexit 0\n",
    );
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    assert_eq!(check(&doc, "hooks")["status"], "ok", "{doc:#}");
}

/// A background clone of `target/` that failed (its `warm.json`, as the warmer writes
/// it) is an advisory naming the box and why; one that finished is nothing to say.
#[test]
fn a_failed_background_clone_is_an_advisory() {
    let env = TestEnv::new();
    env.treebox(&["create", "cold", "--no-launch"]).ok();
    env.treebox(&["create", "fine", "--no-launch"]).ok();
    let outcome = |leaf: &str, text: &str| {
        std::fs::write(env.box_state(leaf).join("warm.json"), text).unwrap();
    };
    outcome(
        "fine",
        r#"{"state": "done", "files": 3, "bytes": 9, "seconds": 0.1}"#,
    );
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    assert_eq!(check(&doc, "boxes")["status"], "ok", "{doc:#}");
    outcome(
        "cold",
        r#"{"state": "failed", "error": "Operation not supported (os error 95)", "seconds": 0.1}"#,
    );
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    let boxes = check(&doc, "boxes");
    assert_eq!(boxes["status"], "advisory", "{doc:#}");
    let said = summary(boxes);
    assert!(
        said.contains("cold (Operation not supported (os error 95))") && !said.contains("fine"),
        "{said}"
    );
    assert!(boxes["hint"]
        .as_str()
        .unwrap_or_default()
        .contains("cargo build"));
}

/// A box whose background clone's warmer ended without saying how (killed mid-clone:
/// its `warm.lock` left, nobody holding it, no `warm.json`) is named too; one whose
/// warmer still runs (the lock held) is not.
#[test]
fn a_background_clone_cut_short_is_an_advisory() {
    use std::os::fd::AsRawFd;
    let env = TestEnv::new();
    env.treebox(&["create", "cut", "--no-launch"]).ok();
    // What a create whose clone went to the background records, and what its warmer
    // leaves when it is killed.
    let lock = std::fs::File::create(env.box_state("cut").join("warm.lock")).unwrap();
    // A warmer that could not start (create cloned in the foreground instead) leaves
    // the same lock, and a record whose clone did not go to the background: nothing.
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    assert_eq!(check(&doc, "boxes")["status"], "ok", "{doc:#}");
    let record = env.box_state("cut").join("record.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    doc["warm"]["background"] = true.into();
    std::fs::write(&record, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    let boxes = check(&doc, "boxes");
    assert_eq!(boxes["status"], "advisory", "{doc:#}");
    assert!(summary(boxes).contains("cut (cut short"), "{doc:#}");
    // Still running: nothing to say yet.
    // SAFETY: a valid descriptor; the lock goes with it.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    assert_eq!(check(&doc, "boxes")["status"], "ok", "{doc:#}");
}

/// An origin whose URL is a relative path answers from the main checkout, not from a
/// box: the origin check is an advisory with the command that makes it absolute.
#[test]
fn a_relative_origin_url_is_an_advisory() {
    let env = TestEnv::new();
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    assert_eq!(check(&doc, "origin")["status"], "ok", "{doc:#}");
    let relative = format!("../{}", env.origin.file_name().unwrap().to_string_lossy());
    env.git(&env.repo, &["remote", "set-url", "origin", &relative]);
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    let origin = check(&doc, "origin");
    assert_eq!(origin["status"], "advisory", "{doc:#}");
    assert!(summary(origin).contains("relative path"), "{doc:#}");
    assert_eq!(
        origin["hint"],
        format!(
            "git remote set-url origin {}",
            env.origin.canonicalize().unwrap().display()
        )
    );
}

/// A container made before the launcher (its record says nothing of one): its agent
/// may be root and its keys sit in the engine's config. `doctor` names the box, with
/// the way out. (No engine needed: the record is what tells.)
#[test]
fn a_container_of_an_earlier_version_is_named() {
    let env = TestEnv::new();
    env.treebox(&["create", "old", "--no-launch"]).ok();
    let record = env.box_state("old").join("record.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    doc["container"] = serde_json::json!({
        "engine": "docker", "name": "treebox-x-old", "image": "treebox-default:0",
        "user": "0:0", "home": "/root"
    });
    std::fs::write(&record, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let r = env.treebox(&["doctor", "--json"]);
    let doc = document(&r);
    let boxes = check(&doc, "boxes");
    assert_eq!(boxes["status"], "fail", "{doc:#}");
    assert!(summary(boxes).contains("earlier version: old"), "{doc:#}");
    assert!(
        boxes["hint"]
            .as_str()
            .unwrap_or("")
            .contains("git sandbox fetch old"),
        "{doc:#}"
    );
}

/// `safe.directory=*` in the user's git config switches off git's ownership check, the
/// one thing that keeps their own git from running a container box's config in its
/// checkout (SPEC §8.7): `doctor` says so, with the command that removes it.
#[test]
fn a_git_config_trusting_every_owner_is_an_advisory() {
    let env = TestEnv::new();
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    assert_eq!(check(&doc, "git")["status"], "ok", "{doc:#}");
    env.git(
        &env.repo,
        &["config", "--global", "--add", "safe.directory", "*"],
    );
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    let git = check(&doc, "git");
    assert_eq!(git["status"], "advisory", "{doc:#}");
    assert!(summary(git).contains("safe.directory=*"), "{doc:#}");
    assert!(
        git["hint"]
            .as_str()
            .unwrap_or("")
            .contains("--unset-all safe.directory"),
        "{doc:#}"
    );
}

#[test]
fn doctor_shows_the_limits_of_new_container_boxes() {
    let env = TestEnv::new();
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    let limits = check(&doc, "limits");
    assert_eq!(limits["status"], "ok", "{limits}");
    assert!(
        summary(limits).starts_with("each new container box gets at most 4096 processes, "),
        "{limits}"
    );
    // Switching off the limits that keep the machine answering is worth knowing; the
    // hint names the config file and the key.
    let file = env.write_config(r#"{"limits": {"pids": 0, "memory": "1g", "cpus": 1}}"#);
    let doc = document(env.treebox(&["doctor", "--json"]).ok());
    let limits = check(&doc, "limits");
    assert_eq!(limits["status"], "advisory", "{limits}");
    assert!(
        summary(limits).contains("no process limit, 1g memory, 1 CPU"),
        "{limits}"
    );
    let hint = limits["hint"].as_str().unwrap();
    assert!(
        hint.contains(&*file.to_string_lossy()) && hint.contains("\"pids\": 4096"),
        "{hint}"
    );
    // A limit that is not one is refused, naming the file and the key.
    env.write_config(r#"{"limits": {"memory": "lots"}}"#);
    let r = env.treebox(&["doctor", "--json"]);
    r.code(2);
    assert!(r.stderr.contains("`limits.memory` must be"), "{r:#?}");
}
