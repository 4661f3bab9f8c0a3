//! Two roots (issue 38, point 1): a box whose checkout sits under treebox's checkouts
//! root (`$XDG_DATA_HOME/treebox/checkouts/<key>/<leaf>`, outside the user's working
//! tree) is found, listed, entered from and removed where its record says; a checkout
//! there without a record is still a box to prune; and from inside such a checkout,
//! commands find the owning repository through treebox's state without opening the
//! box's own git data.

use std::path::Path;

use crate::env::{mkfifo, Run, TestEnv};

/// `git-treebox ARGS` in `cwd`, bounded: a hang fails the test.
fn timed_in(env: &TestEnv, cwd: &Path, args: &[&str]) -> Run {
    let out = env
        .command("timeout", cwd)
        .arg("30")
        .arg(crate::env::TREEBOX)
        .args(args)
        .output()
        .unwrap();
    let r = Run::from_output(out);
    assert_ne!(r.code, 124, "{args:?} hung");
    r
}

/// A clone box `leaf` made by hand under the checkouts root, with its record (host
/// runner: nothing here needs a container).
fn moved_clone(env: &TestEnv, leaf: &str) -> std::path::PathBuf {
    let path = env.checkout_path(leaf);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    env.git(
        path.parent().unwrap(),
        &["clone", "-q", &env.repo.to_string_lossy(), leaf],
    );
    env.git(&path, &["checkout", "-q", "-b", leaf]);
    let common = env.repo.join(".git").canonicalize().unwrap();
    let mut r = treebox::state::Record::begin(
        leaf,
        &env.repo,
        &common,
        &path,
        treebox::vocab::GitMode::Clone,
        treebox::vocab::RunnerKind::Host,
        Default::default(),
        ("default", false),
    );
    r.branch = leaf.into();
    r.base = "main".into();
    r.base_commit = Some(env.git(&path, &["rev-parse", "HEAD"]).trim().to_string());
    r.setup_completed = true;
    r.checkout_completed = true;
    r.save(&env.box_state(leaf).join("record.json")).unwrap();
    path
}

fn listed_path(run: &Run, leaf: &str) -> String {
    let doc = run.json();
    crate::env::named(&doc, "boxes", leaf)["path"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn placement_a_box_under_the_checkouts_root_is_listed_found_and_removed_there() {
    let env = TestEnv::new();
    let path = moved_clone(&env, "mv");
    assert!(!env.repo.join(".treebox").exists());
    let list = env.treebox(&["list", "--json"]);
    list.ok();
    assert_eq!(listed_path(&list, "mv"), path.to_string_lossy());
    // From inside the checkout (and a directory in it): the owning repository, found
    // through its record. The box's git config is a FIFO: any open of the box's own
    // git data to find the repository would hang.
    let config = std::fs::read(path.join(".git/config")).unwrap();
    std::fs::remove_file(path.join(".git/config")).unwrap();
    mkfifo(&path.join(".git/config"));
    std::fs::create_dir_all(path.join("src")).unwrap();
    for cwd in [path.clone(), path.join("src")] {
        let inside = timed_in(&env, &cwd, &["list", "--json"]);
        inside.ok();
        assert_eq!(listed_path(&inside, "mv"), path.to_string_lossy());
    }
    std::fs::remove_file(path.join(".git/config")).unwrap();
    std::fs::write(path.join(".git/config"), config).unwrap();
    // Teardown removes it there (its checkout, its record), nothing else.
    timed_in(&env, &env.repo, &["teardown", "--force", "mv"]).ok();
    assert!(!path.exists(), "the checkout is removed");
    assert!(!env.box_state("mv").join("record.json").exists());
    assert!(env.repo.join("README.md").is_file());
}

/// `git sandbox prune --force` from outside any repository.
fn prune_from_outside(env: &TestEnv) -> Run {
    let out = env
        .command("timeout", &env.root())
        .args(["60", crate::env::SANDBOX, "prune", "--force"])
        .output()
        .unwrap();
    let r = Run::from_output(out);
    assert_ne!(r.code, 124, "prune hung");
    r
}

/// A repository deleted with container boxes of it: their checkouts, outside it, may
/// hold the only copy of some work. prune assesses each before it removes anything of
/// that repository: uncommitted changes, or commits of its own, keep it all.
#[test]
fn placement_prune_of_a_gone_repository_assesses_its_checkouts_first() {
    let env = TestEnv::new();
    let dirty = moved_clone(&env, "dirty");
    let ahead = moved_clone(&env, "ahead");
    let state = env.repo_state();
    std::fs::write(dirty.join("work.txt"), "uncommitted\n").unwrap();
    env.git(&ahead, &["commit", "-q", "--allow-empty", "-m", "work"]);
    std::fs::remove_dir_all(&env.repo).unwrap();

    let r = prune_from_outside(&env);
    r.ok();
    assert!(r.stderr.contains("uncommitted changes"), "{r:?}");
    assert!(r.stderr.contains("commits of its own"), "{r:?}");
    assert!(dirty.join("work.txt").is_file() && ahead.is_dir() && state.is_dir());

    // Work gone (taken elsewhere): both go, with the repository's bookkeeping.
    std::fs::remove_file(dirty.join("work.txt")).unwrap();
    env.git(&ahead, &["reset", "-q", "--hard", "HEAD~1"]);
    let r = prune_from_outside(&env);
    r.ok();
    assert!(
        !dirty.exists() && !ahead.exists(),
        "the checkouts are removed: {r:?}"
    );
    assert!(!dirty.parent().unwrap().exists(), "and their empty root");
    assert!(!state.exists(), "and the bookkeeping");
}

#[test]
fn placement_a_checkout_there_whose_record_is_gone_names_no_repository() {
    let env = TestEnv::new();
    let path = moved_clone(&env, "lost");
    std::fs::remove_dir_all(env.box_state("lost")).unwrap();
    std::fs::remove_file(path.join(".git/HEAD")).unwrap();
    mkfifo(&path.join(".git/HEAD"));
    let r = timed_in(&env, &path, &["list", "--json"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("container box's checkout"),
        "{}",
        r.stderr
    );
    // From the repository, the record-less checkout is still a box (for prune).
    std::fs::remove_file(path.join(".git/HEAD")).unwrap();
    std::fs::write(path.join(".git/HEAD"), "ref: refs/heads/lost\n").unwrap();
    let list = env.treebox(&["list", "--json"]);
    list.ok();
    assert_eq!(listed_path(&list, "lost"), path.to_string_lossy());
}

/// A command of the user's own in the main checkout, bounded (60 s): a runner that
/// walked a planted `u -> /` would not finish.
fn users_tool(env: &TestEnv, program: &Path, args: &[&str]) -> Run {
    let out = env
        .command("timeout", &env.repo)
        .arg("60")
        .arg(program)
        .args(args)
        .output()
        .unwrap();
    let r = Run::from_output(out);
    assert_ne!(r.code, 124, "{} {args:?} hung: {r:?}", program.display());
    r
}

/// Node's built-in test runner, or `None` (said on stderr) where this machine has no
/// `node` (`.ci/run` installs Debian's `nodejs`).
fn node() -> Option<std::path::PathBuf> {
    let found = ["/usr/bin/node", "/usr/local/bin/node"]
        .iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.is_file());
    if found.is_none() {
        eprintln!("note: node is not installed: the `node --test` half of the placement test did not run (apt-get install nodejs)");
    }
    found
}

/// pytest from `TREEBOX_TEST_TOOLS` (`.ci/run` installs it from PyPI), or `None`.
fn pytest() -> Option<std::path::PathBuf> {
    let Some(tools) = std::env::var_os("TREEBOX_TEST_TOOLS").map(std::path::PathBuf::from) else {
        eprintln!(
            "note: TREEBOX_TEST_TOOLS unset: the pytest half of the placement test did not run"
        );
        return None;
    };
    let p = tools.join("pytest");
    assert!(p.is_file(), "no pytest in {}", tools.display());
    Some(p)
}

/// Issue 38, point 1: a container box's checkout (a sandboxed worktree, a container
/// clone) lives outside the user's working tree. The agent, inside the container (each
/// engine), plants a test file for Node's runner, a pytest module and conftest, and a link
/// `u -> /`; the user's `node --test` and `pytest` (the project's own `norecursedirs`,
/// which drops pytest's default `.*`) in the main checkout run none of it.
#[test]
fn placement_the_users_test_runners_never_run_what_a_container_box_wrote() {
    crate::container::each_engine(|b| {
        let env = &b.env;
        env.treebox(&["create", "wt", "--no-launch"]).ok();
        env.treebox(&["create", "cl", "--git", "clone", "--no-launch"])
            .ok();
        let list = env.treebox(&["list", "--json"]);
        list.ok();
        for leaf in ["wt", "cl"] {
            let path = env.checkout_path(leaf);
            assert_eq!(listed_path(&list, leaf), path.to_string_lossy());
            assert!(
                path.join("README.md").is_file(),
                "{leaf}: checked out there"
            );
            assert_eq!(
                b.record(leaf)["path"].as_str(),
                Some(&*path.to_string_lossy())
            );
        }
        // `enter --print` names the checkout there (the container's working directory).
        let line = env.treebox(&["enter", "wt", "--print"]);
        line.ok();
        assert!(
            line.stdout
                .contains(&*env.checkout_path("wt").to_string_lossy())
                && !line.stdout.contains(".treebox/worktrees"),
            "{line:?}"
        );
        // Nothing of either box (no directory, no link) under the working tree.
        assert!(
            !env.repo.join(".treebox").exists(),
            "{:?}",
            std::fs::read_dir(env.repo.join(".treebox")).map(|d| d.count())
        );
        let (node_marker, py_marker) = (env.root().join("pwned-node"), env.root().join("pwned-py"));
        let payload = format!(
            r#"set -e
    printf '%s\n' "require('fs').writeFileSync('{node}', 'ran');" > pwn.test.js
    mkdir -p test
    cp pwn.test.js test/pwn.js
    printf '%s\n' "open('{py}', 'w').write('ran')" "def test_pwn(): pass" > test_pwn.py
    cp test_pwn.py conftest.py
    ln -s / u
    whoami"#,
            node = node_marker.display(),
            py = py_marker.display()
        );
        for leaf in ["wt", "cl"] {
            let who = b.exec(&[leaf, "--", "sh", "-c", &payload]);
            who.ok();
            assert_ne!(who.stdout.trim(), "root", "the agent is never root");
            assert!(env.checkout_path(leaf).join("pwn.test.js").is_file());
        }
        // The user's own tests, in the main checkout, with the project's pytest.ini.
        std::fs::write(
            env.repo.join("ok.test.js"),
            "require('node:test')('ok', () => {});\n",
        )
        .unwrap();
        std::fs::write(env.repo.join("test_ok.py"), "def test_ok(): pass\n").unwrap();
        std::fs::write(
            env.repo.join("pytest.ini"),
            "[pytest]\nnorecursedirs = build dist\n",
        )
        .unwrap();
        let planted = env.checkout_path("wt");
        if let Some(node) = node() {
            let r = users_tool(env, &node, &["--test"]);
            assert_eq!(r.code, 0, "{r:?}");
            assert!(
                r.stdout.contains("# tests 1"),
                "only the user's own test ran: {}",
                r.stdout
            );
            assert!(!node_marker.exists(), "node --test ran what the box wrote");
            // The payload is real: pointed at, it runs (and writes its marker).
            users_tool(
                env,
                &node,
                &["--test", &planted.join("pwn.test.js").to_string_lossy()],
            );
            assert!(
                node_marker.exists(),
                "the control: the planted test runs when named"
            );
        }
        if let Some(pytest) = pytest() {
            let r = users_tool(env, &pytest, &["-q", "-p", "no:cacheprovider"]);
            assert_eq!(r.code, 0, "{r:?}");
            assert!(
                r.stdout.contains("1 passed"),
                "only the user's own test ran: {}",
                r.stdout
            );
            assert!(!py_marker.exists(), "pytest ran what the box wrote");
            let named = planted.join("test_pwn.py");
            users_tool(
                env,
                &pytest,
                &["-q", "-p", "no:cacheprovider", &named.to_string_lossy()],
            );
            assert!(
                py_marker.exists(),
                "the control: the planted test runs when named"
            );
        }
        // The boxes go with their checkouts.
        for leaf in ["wt", "cl"] {
            env.sandbox(&["down", "--force", leaf]).ok();
            assert!(
                !env.checkout_path(leaf).exists(),
                "{leaf}: checkout removed"
            );
        }
    });
}

/// A container box made before checkouts moved out keeps its place, and `doctor`
/// names it with the way out (here by hand: a docker clone box's record naming a
/// checkout under `.treebox/worktrees/`).
#[test]
fn placement_doctor_names_a_container_box_still_in_the_working_tree() {
    let env = TestEnv::new();
    let path = env.in_tree_path("old");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    env.git(
        path.parent().unwrap(),
        &["clone", "-q", &env.repo.to_string_lossy(), "old"],
    );
    let common = env.repo.join(".git").canonicalize().unwrap();
    let mut r = treebox::state::Record::begin(
        "old",
        &env.repo,
        &common,
        &path,
        treebox::vocab::GitMode::Clone,
        treebox::vocab::RunnerKind::Docker,
        Default::default(),
        ("default", false),
    );
    r.branch = "old".into();
    r.setup_completed = true;
    r.checkout_completed = true;
    r.save(&env.box_state("old").join("record.json")).unwrap();
    // It is where its record says.
    let list = env.treebox(&["list", "--json"]);
    list.ok();
    assert_eq!(listed_path(&list, "old"), path.to_string_lossy());
    let r = env.treebox(&["doctor", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).expect("doctor --json");
    let boxes = doc["checks"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["name"] == "boxes"))
        .cloned()
        .unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(boxes["status"], "advisory", "{boxes:#}");
    let said = boxes.to_string();
    assert!(
        said.contains("old") && said.contains("working tree"),
        "{said}"
    );
    assert!(said.contains("git sandbox fetch old"), "{said}");
    assert!(said.contains("git sandbox down old"), "{said}");
}

/// A data dir the engine's mount syntax cannot spell (a comma) is refused before
/// anything is made: the checkout is mounted at its own path.
#[test]
fn placement_an_unmountable_checkouts_root_is_refused_before_any_write() {
    let Some(mut b) = crate::container::Boxed::new("docker") else {
        return;
    };
    let data = b.env.root().join("data,dir");
    b.env
        .extra_env
        .push(("XDG_DATA_HOME".into(), data.to_string_lossy().into()));
    let env = &b.env;
    let before = env.snapshot();
    let r = env.treebox(&["create", "wt", "--no-launch"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("data,dir"), "{r:?}");
    assert_eq!(env.snapshot(), before, "nothing written");
    assert!(!data.exists(), "not even the data dir");
}
