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
