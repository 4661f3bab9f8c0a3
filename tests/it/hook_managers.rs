//! Hook managers vs the guard (SPEC §9, issue 14 point 3): lefthook, husky and
//! pre-commit install by writing into the hooks dir git reports — inside a box, the
//! guard's. Simulated by doing what they do (`git rev-parse --git-path hooks`, the old
//! hook moved aside to `<name>.old`, their own script written in its place); then
//! every command that opens the box puts the guard back with the manager's hook
//! chained behind it, and `doctor` names a box whose guard is not in place. Clone boxes
//! (and sandboxed worktrees, see `sandboxed.rs`) run the repository's own hooks.

use std::path::{Path, PathBuf};

use crate::env::{write_exec, TestEnv};

/// What `lefthook install` does in `dir`: into the hooks dir git reports, the old
/// `pre-push` moved to `pre-push.old`, a script of its own (here: leaves a marker).
fn lefthook_install(env: &TestEnv, dir: &Path, marker: &Path) {
    let hooks = PathBuf::from(
        env.git(
            dir,
            &["rev-parse", "--path-format=absolute", "--git-path", "hooks"],
        )
        .trim(),
    );
    let hook = hooks.join("pre-push");
    if hook.exists() {
        std::fs::rename(&hook, hooks.join("pre-push.old")).unwrap();
    }
    write_exec(
        &hook,
        &format!(
            "#!/bin/sh\ncat >/dev/null\ntouch '{}'\nexit 0\n",
            marker.display()
        ),
    );
}

/// A new box on a placeholder branch: its leaf and its path.
fn placeholder_box(env: &TestEnv) -> (String, PathBuf) {
    let doc = env
        .treebox(&["create", "--no-launch", "--json"])
        .ok()
        .json();
    let leaf = doc["name"].as_str().unwrap().to_string();
    let path = env.box_path(&leaf);
    (leaf, path)
}

/// Push HEAD of `dir` to origin under its own name; the result.
fn push(env: &TestEnv, dir: &Path) -> crate::env::Run {
    env.git_run(dir, &["push", "-q", "origin", "HEAD"])
}

fn boxes_check(env: &TestEnv) -> serde_json::Value {
    let doc = env.treebox(&["doctor", "--json"]).json();
    crate::env::named(&doc, "checks", "boxes")
}

#[test]
fn a_hook_manager_in_a_box_never_lets_a_placeholder_through() {
    let env = TestEnv::new();
    let (leaf, path) = placeholder_box(&env);
    let marker = env.root().join("lefthook-ran");
    lefthook_install(&env, &path, &marker);

    // Until the box is opened again, doctor says the guard is not in place.
    let check = boxes_check(&env);
    assert_eq!(check["status"], "advisory", "{check}");
    assert!(
        check["summary"].as_str().unwrap().contains(&leaf),
        "{check}"
    );
    assert!(
        check["hint"]
            .as_str()
            .unwrap()
            .contains("git treebox enter"),
        "{check}"
    );

    // `enter` puts the guard back, says so, and keeps the manager's hook.
    let r = env.treebox(&["enter", &leaf, "--print"]);
    r.ok();
    assert!(r.stderr.contains("hook manager"), "{r:?}");
    assert_eq!(boxes_check(&env)["status"], "ok");
    let r = push(&env, &path);
    assert_ne!(r.code, 0, "a placeholder push went through: {r:?}");
    assert!(r.stderr.contains("git branch -m"), "{r:?}");
    assert!(
        !marker.exists(),
        "the manager's hook ran for a refused push"
    );
    // Renamed, the push goes through, with the manager's hook run behind the guard.
    env.git(&path, &["branch", "-m", "feat/managed"]);
    push(&env, &path).ok();
    assert!(marker.exists(), "the manager's pre-push did not run");

    // `git sandbox run` (and attach) put it back too.
    std::fs::remove_file(&marker).unwrap();
    lefthook_install(&env, &path, &marker);
    env.git(&path, &["switch", "-q", "-c", "treebox/again"]);
    env.sandbox(&["run", &leaf, "--", "true"]).ok();
    let r = push(&env, &path);
    assert_ne!(
        r.code, 0,
        "a placeholder push went through after run: {r:?}"
    );
    assert!(!marker.exists());
}

/// A clone box runs the repository's own hooks behind the guard: the executables in
/// the user's hooks dir, or the user's `core.hooksPath` (husky's `.husky/_`).
#[test]
fn a_clone_box_runs_the_repositorys_own_hooks_behind_the_guard() {
    let env = TestEnv::new();
    let commit_marker = env.root().join("pre-commit-ran");
    let push_marker = env.root().join("pre-push-ran");
    write_exec(
        &env.repo.join(".git/hooks/pre-commit"),
        &format!("#!/bin/sh\ntouch '{}'\n", commit_marker.display()),
    );
    write_exec(
        &env.repo.join(".git/hooks/pre-push"),
        &format!(
            "#!/bin/sh\ncat >/dev/null\ntouch '{}'\n",
            push_marker.display()
        ),
    );
    env.treebox(&["create", "cl", "--git", "clone", "--no-launch"])
        .ok();
    let path = env.box_path("cl");
    env.commit_file(&path, "a.txt", "a\n", "in the clone");
    assert!(commit_marker.exists(), "the repo's pre-commit did not run");
    push(&env, &path).ok();
    assert!(push_marker.exists(), "the repo's pre-push did not run");
    // The guard still binds.
    env.git(&path, &["switch", "-q", "-c", "treebox/x"]);
    let r = push(&env, &path);
    assert_ne!(r.code, 0, "{r:?}");

    // husky: the user's repository sets core.hooksPath = .husky/_, which husky fills
    // in each checkout when it runs (here: by hand, as setup's `npm ci` would).
    let husky_marker = env.root().join("husky-ran");
    env.git(&env.repo, &["config", "core.hooksPath", ".husky/_"]);
    env.treebox(&["create", "hk", "--git", "clone", "--no-launch"])
        .ok();
    let hk = env.box_path("hk");
    write_exec(
        &hk.join(".husky/_/pre-commit"),
        &format!("#!/bin/sh\ntouch '{}'\n", husky_marker.display()),
    );
    env.commit_file(&hk, "b.txt", "b\n", "husky");
    assert!(
        husky_marker.exists(),
        "husky's pre-commit did not run in the clone"
    );
}

/// `pre-commit install` refuses while `core.hooksPath` is set and suggests unsetting
/// it; done in a box, that switches the guard off until the box is opened again.
#[test]
fn unsetting_the_boxs_hooks_path_is_undone_when_the_box_is_opened() {
    let env = TestEnv::new();
    let (leaf, path) = placeholder_box(&env);
    env.git(
        &path,
        &["config", "--worktree", "--unset-all", "core.hooksPath"],
    );
    let r = push(&env, &path);
    assert_eq!(r.code, 0, "without its hooksPath the guard is off: {r:?}");
    assert_eq!(boxes_check(&env)["status"], "advisory");
    env.git(
        &env.origin,
        &["update-ref", "-d", &format!("refs/heads/treebox/{leaf}")],
    );
    env.treebox(&["enter", &leaf, "--print"]).ok();
    assert_eq!(boxes_check(&env)["status"], "ok");
    let r = push(&env, &path);
    assert_ne!(r.code, 0, "the guard is still off after enter: {r:?}");
}

/// A fixture with the real `tool` on PATH, from the directory `TREEBOX_TEST_TOOLS`
/// names (`.ci/run` fills one from PyPI when it answers); `None`, said on stderr, when
/// the test run has none.
fn with_real_tool(tool: &str) -> Option<TestEnv> {
    let Some(tools) = std::env::var_os("TREEBOX_TEST_TOOLS").map(PathBuf::from) else {
        eprintln!("note: TREEBOX_TEST_TOOLS unset: the real-{tool} test did not run");
        return None;
    };
    assert!(
        tools.join(tool).is_file(),
        "no {tool} in {}",
        tools.display()
    );
    let mut env = TestEnv::new();
    env.add_to_path(&tools);
    Some(env)
}

/// The real lefthook (from PyPI: `pip install lefthook`), where the test run has it:
/// `TREEBOX_TEST_TOOLS` names a directory holding `lefthook` (`.ci/run` fills one when
/// PyPI answers); without it the test says so and passes.
#[test]
fn real_lefthook_installed_in_a_box_runs_behind_the_guard() {
    let Some(env) = with_real_tool("lefthook") else {
        return;
    };
    let marker = env.root().join("lefthook-ran");
    env.commit_file(
        &env.repo,
        "lefthook.yml",
        &format!(
            "pre-push:\n  commands:\n    mark:\n      run: touch '{}'\n",
            marker.display()
        ),
        "lefthook",
    );
    env.git(&env.repo, &["push", "-q", "origin", "main"]);
    let (leaf, path) = placeholder_box(&env);
    // The agent installs the repository's hook manager, as its README says to.
    let r = crate::env::Run::from_output(
        env.command("lefthook", &path)
            .arg("install")
            .output()
            .unwrap(),
    );
    r.ok();
    assert_eq!(
        boxes_check(&env)["status"],
        "advisory",
        "lefthook displaced the guard"
    );
    env.treebox(&["enter", &leaf, "--print"]).ok();
    assert_eq!(boxes_check(&env)["status"], "ok");
    let r = push(&env, &path);
    assert_ne!(r.code, 0, "a placeholder push went through: {r:?}");
    assert!(!marker.exists(), "lefthook ran for a refused push");
    env.git(&path, &["branch", "-m", "feat/lefthook"]);
    // lefthook's pre-push skips a push that carries no new files.
    env.commit_file(&path, "work.txt", "done\n", "work");
    let r = push(&env, &path);
    r.ok();
    assert!(
        marker.exists(),
        "lefthook's pre-push did not run behind the guard: {r:?}"
    );
}

/// The hooks dir git reports in a box — where an agent looks when a hook manager
/// refuses — holds a note saying what the directory is and the command that installs
/// pre-commit's hooks from inside the box. A link planted at the note's name is
/// replaced when the box is opened, never written through.
#[test]
fn the_guards_directory_explains_itself() {
    let env = TestEnv::new();
    env.treebox(&["create", "noted", "--no-launch"]).ok();
    let path = env.box_path("noted");
    let hooks = PathBuf::from(
        env.git(
            &path,
            &["rev-parse", "--path-format=absolute", "--git-path", "hooks"],
        )
        .trim(),
    );
    let note = std::fs::read_to_string(hooks.join("README")).expect("a note beside the guard");
    assert!(note.contains(PRE_COMMIT_IN_A_BOX), "{note}");
    assert!(note.contains("git branch -m"), "{note}");

    let target = env.root().join("elsewhere.txt");
    std::fs::write(&target, "mine\n").unwrap();
    std::fs::remove_file(hooks.join("README")).unwrap();
    std::os::unix::fs::symlink(&target, hooks.join("README")).unwrap();
    env.treebox(&["enter", "noted", "--print"]).ok();
    let meta = std::fs::symlink_metadata(hooks.join("README")).unwrap();
    assert!(meta.is_file(), "the planted link is still there");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "mine\n");
    assert_eq!(std::fs::read_to_string(hooks.join("README")).unwrap(), note);
}

/// The command the note names, as the note spells it.
const PRE_COMMIT_IN_A_BOX: &str =
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0= pre-commit install";

/// The real pre-commit (from PyPI: `pip install pre-commit`), where the test run has it
/// in `TREEBOX_TEST_TOOLS`: inside a worktree box and a clone box, plain `pre-commit
/// install` refuses and writes nothing; the command in the guard's note installs its
/// hook where git keeps the repository's hooks; a commit in the box runs it behind the
/// guard, and the guard still refuses a placeholder push.
#[test]
fn real_pre_commit_installs_in_a_box_with_the_notes_command() {
    let Some(mut env) = with_real_tool("pre-commit") else {
        return;
    };
    let store = env.root().join("pre-commit-store");
    env.extra_env
        .push(("PRE_COMMIT_HOME".into(), store.display().to_string()));
    let marker = env.root().join("pre-commit-ran");
    // A local hook of language `system`: pre-commit fetches nothing to run it.
    env.commit_file(
        &env.repo,
        ".pre-commit-config.yaml",
        &format!(
            "repos:\n- repo: local\n  hooks:\n  - id: mark\n    name: mark\n    entry: touch {}\n    language: system\n    pass_filenames: false\n    always_run: true\n",
            marker.display()
        ),
        "pre-commit",
    );
    env.git(&env.repo, &["push", "-q", "origin", "main"]);

    for (leaf, git_mode) in [("pcw", "worktree"), ("pcc", "clone")] {
        let _ = std::fs::remove_file(&marker);
        env.treebox(&["create", leaf, "--git", git_mode, "--no-launch"])
            .ok();
        let path = env.box_path(leaf);
        let common = PathBuf::from(
            env.git(
                &path,
                &["rev-parse", "--path-format=absolute", "--git-common-dir"],
            )
            .trim(),
        );
        let installed = common.join("hooks/pre-commit");
        let _ = std::fs::remove_file(&installed);

        let r = crate::env::Run::from_output(
            env.command("pre-commit", &path)
                .arg("install")
                .output()
                .unwrap(),
        );
        assert_ne!(r.code, 0, "{leaf}: plain pre-commit install: {r:?}");
        assert!(
            format!("{}{}", r.stdout, r.stderr).contains("core.hooksPath"),
            "{leaf}: {r:?}"
        );
        assert!(
            !installed.exists(),
            "{leaf}: a refused install wrote a hook"
        );

        let r = crate::env::Run::from_output(
            env.command("sh", &path)
                .args(["-c", PRE_COMMIT_IN_A_BOX])
                .output()
                .unwrap(),
        );
        r.ok();
        assert!(
            installed.is_file(),
            "{leaf}: nothing at {}",
            installed.display()
        );
        assert_eq!(boxes_check(&env)["status"], "ok", "{leaf}: the guard moved");

        env.commit_file(&path, &format!("{leaf}.txt"), "work\n", "work");
        assert!(marker.exists(), "{leaf}: pre-commit's hook did not run");
        env.git(&path, &["switch", "-q", "-c", &format!("treebox/{leaf}")]);
        let r = push(&env, &path);
        assert_ne!(r.code, 0, "{leaf}: a placeholder push went through: {r:?}");
        assert!(r.stderr.contains("git branch -m"), "{leaf}: {r:?}");
    }
}

/// An install script run by setup is a hook manager too (lefthook's npm `postinstall`
/// runs `lefthook install`): the guard is checked again once setup has run, on
/// `create` and on an `enter` that re-runs setup, so a placeholder push from the new
/// box is refused and the manager's hook runs behind the guard.
#[test]
fn a_hook_manager_run_by_setup_is_kept_behind_the_guard() {
    let env = TestEnv::new();
    let marker = env.root().join("managed-pre-push-ran");
    let script = env.root().join("install-hooks.sh");
    std::fs::write(
        &script,
        format!(
            "h=$(git rev-parse --path-format=absolute --git-path hooks)\n\
             [ -e \"$h/pre-push\" ] && mv \"$h/pre-push\" \"$h/pre-push.old\"\n\
             printf '#!/bin/sh\\ncat >/dev/null\\ntouch {}\\n' > \"$h/pre-push\"\n\
             chmod +x \"$h/pre-push\"\n",
            marker.display()
        ),
    )
    .unwrap();
    env.write_config(&format!(r#"{{"setup": ["sh {}"]}}"#, script.display()));
    let (leaf, path) = placeholder_box(&env);
    assert_eq!(boxes_check(&env)["status"], "ok", "the guard is in place");
    let r = push(&env, &path);
    assert_ne!(r.code, 0, "a placeholder push went through: {r:?}");
    assert!(
        !marker.exists(),
        "the manager's hook ran for a refused push"
    );
    env.git(&path, &["branch", "-m", "feat/set-up"]);
    push(&env, &path).ok();
    assert!(
        marker.exists(),
        "the manager's pre-push did not run behind the guard"
    );

    // `enter --cold` runs setup again, which displaces the guard again.
    std::fs::remove_file(&marker).unwrap();
    env.git(&path, &["switch", "-q", "-c", "treebox/again"]);
    env.treebox(&["enter", &leaf, "--cold", "--print"]).ok();
    assert_eq!(boxes_check(&env)["status"], "ok");
    let r = push(&env, &path);
    assert_ne!(
        r.code, 0,
        "a placeholder push went through after enter: {r:?}"
    );
    assert!(!marker.exists());
}
