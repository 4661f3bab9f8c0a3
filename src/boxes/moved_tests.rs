//! A box whose checkout sits under the checkouts root (a container box's, outside the
//! user's working tree): the inventory and `exact` find it where its record says, and
//! a checkout there without a record is still a box.

use std::path::{Path, PathBuf};

use super::{exact, inventory};
use crate::git::Repo;
use crate::harness::Harness;
use crate::names::Leaf;
use crate::state::{Layout, Record};
use crate::testing::git;
use crate::vocab::{GitMode, RunnerKind};

struct Fixture {
    _tmp: tempfile::TempDir,
    repo: Repo,
    layout: Layout,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let main = root.join("r");
    std::fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    git(&main, &["commit", "-q", "--allow-empty", "-m", "one"]);
    let repo = Repo::discover(&main).unwrap();
    let layout = Layout::with_state_root(&repo.main_root, &repo.common_dir, &root.join("st"));
    Fixture {
        _tmp: tmp,
        repo,
        layout,
    }
}

/// A clone of the repository at `path`, on branch `leaf`.
fn clone_at(f: &Fixture, path: &Path, leaf: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let from = f.repo.main_root.to_string_lossy().into_owned();
    git(
        path.parent().unwrap(),
        &["clone", "-q", &from, &path.to_string_lossy()],
    );
    git(path, &["checkout", "-q", "-b", leaf]);
}

fn record(f: &Fixture, leaf: &str, path: &Path) -> Record {
    let mut r = Record::begin(
        leaf,
        &f.repo.main_root,
        &f.repo.common_dir,
        path,
        GitMode::Clone,
        RunnerKind::Docker,
        Harness::default(),
        ("default", false),
    );
    r.branch = leaf.into();
    r.setup_completed = true;
    r.checkout_completed = true;
    r.save(&f.layout.record_path(&Leaf::parse(leaf).unwrap()))
        .unwrap();
    r
}

fn paths(f: &Fixture) -> Vec<(String, PathBuf, bool, Option<String>)> {
    inventory(&f.repo, &f.layout)
        .into_iter()
        .map(|e| (e.leaf.to_string(), e.path, e.record.is_some(), e.branch))
        .collect()
}

#[test]
fn a_recorded_box_under_the_checkouts_root_is_found_there() {
    let f = fixture();
    let leaf = Leaf::parse("dock").unwrap();
    let path = f.layout.checkout_path(&leaf);
    assert!(!path.starts_with(&f.repo.main_root));
    clone_at(&f, &path, "dock");
    record(&f, "dock", &path);
    assert_eq!(
        paths(&f),
        [("dock".into(), path.clone(), true, Some("dock".into()))]
    );
    let e = exact(&f.repo, &f.layout, "dock").unwrap();
    assert_eq!(e.path, path);
    assert!(e.dir_exists);
    assert_eq!(e.branch.as_deref(), Some("dock"));
    // Nothing of it under the working tree's box root.
    assert!(!f.layout.box_root.join("dock").exists());
}

#[test]
fn a_checkout_there_without_a_record_is_still_a_box() {
    let f = fixture();
    let host = f.layout.box_path(&Leaf::parse("host").unwrap());
    let stray = f.layout.checkout_path(&Leaf::parse("stray").unwrap());
    clone_at(&f, &host, "host");
    clone_at(&f, &stray, "stray");
    // A directory without git data of its own is not.
    std::fs::create_dir_all(f.layout.checkout_root.join("plain")).unwrap();
    assert_eq!(
        paths(&f),
        [
            ("host".into(), host, false, Some("host".into())),
            ("stray".into(), stray, false, Some("stray".into())),
        ]
    );
}

#[test]
fn a_record_gone_missing_its_checkout_is_found_where_it_was() {
    let f = fixture();
    let leaf = Leaf::parse("gone").unwrap();
    let path = f.layout.checkout_path(&leaf);
    record(&f, "gone", &path);
    let all = inventory(&f.repo, &f.layout);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].path, path);
    assert!(!all[0].dir_exists);
}
