//! Tree counts against libgit2's own diff, and the shapes that are cheap to make and
//! costly to walk: identical subtrees, deep nesting.

use super::*;

fn repo() -> (tempfile::TempDir, Repository) {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init(dir.path()).unwrap();
    (dir, repo)
}

/// A tree of `entries`: (name, blob text) or (name, subtree).
fn tree(repo: &Repository, files: &[(&str, &str)], dirs: &[(&str, Oid)]) -> Oid {
    let mut tb = repo.treebuilder(None).unwrap();
    for (name, text) in files {
        let blob = repo.blob(text.as_bytes()).unwrap();
        tb.insert(name, blob, 0o100644).unwrap();
    }
    for (name, sub) in dirs {
        tb.insert(name, *sub, 0o040000).unwrap();
    }
    tb.write().unwrap()
}

/// Levels of two identical subtrees over one file: 2^levels files.
fn bomb(repo: &Repository, levels: usize, leaf: &str) -> Oid {
    let mut t = tree(repo, &[("f", leaf)], &[]);
    for _ in 0..levels {
        t = tree(repo, &[], &[("a", t), ("b", t)]);
    }
    t
}

fn libgit2_deltas(repo: &Repository, old: Option<Oid>, new: Option<Oid>) -> u64 {
    let old = old.map(|o| repo.find_tree(o).unwrap());
    let new = new.map(|o| repo.find_tree(o).unwrap());
    let d = repo
        .diff_tree_to_tree(old.as_ref(), new.as_ref(), None)
        .unwrap();
    d.deltas().len() as u64
}

#[test]
fn counts_agree_with_libgit2s_diff() {
    let (_d, repo) = repo();
    let lib = tree(&repo, &[("a.rs", "a"), ("b.rs", "b")], &[]);
    let docs = tree(&repo, &[("x.md", "x")], &[]);
    let old = tree(
        &repo,
        &[("README", "r"), ("z", "z")],
        &[("lib", lib), ("docs", docs)],
    );
    let lib2 = tree(&repo, &[("a.rs", "a2"), ("b.rs", "b"), ("c.rs", "c")], &[]);
    // lib changed (two files), docs gone, README unchanged, z a file became a dir.
    let new = tree(&repo, &[("README", "r")], &[("lib", lib2), ("z", docs)]);
    let mut t = Trees::new(&repo, 1000);
    assert_eq!(t.entries(old).unwrap(), 5);
    assert_eq!(t.entries(new).unwrap(), 5);
    for (o, n) in [
        (Some(old), Some(new)),
        (Some(new), Some(old)),
        (None, Some(new)),
        (Some(old), None),
        (Some(old), Some(old)),
    ] {
        assert_eq!(
            t.changed(o, n).unwrap(),
            libgit2_deltas(&repo, o, n),
            "{o:?} {n:?}"
        );
    }
}

#[test]
fn identical_subtrees_are_counted_without_being_walked() {
    let (_d, repo) = repo();
    // 4 M files in 23 tree objects.
    let big = bomb(&repo, 22, "x");
    let other = bomb(&repo, 22, "y");
    let small = tree(&repo, &[("f", "x")], &[]);
    let mut t = Trees::new(&repo, u64::MAX / 2);
    let started = std::time::Instant::now();
    assert_eq!(t.entries(big).unwrap(), 1 << 22);
    assert_eq!(t.changed(Some(small), Some(big)).unwrap(), (1 << 22) + 1);
    // Every file differs between the two bombs: each pair of trees compared once.
    assert_eq!(t.changed(Some(big), Some(other)).unwrap(), 1 << 22);
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    // Within a budget: too large, whichever way it is asked.
    let mut t = Trees::new(&repo, MAX_ENTRIES);
    assert!(matches!(t.entries(big), Err(WalkError::TooManyEntries(_))));
    assert!(matches!(
        t.changed(Some(small), Some(big)),
        Err(WalkError::TooManyEntries(_))
    ));
    assert!(matches!(
        Trees::new(&repo, MAX_ENTRIES).changed(Some(big), Some(other)),
        Err(WalkError::TooManyEntries(_))
    ));
    assert_eq!(
        Trees::new(&repo, MAX_ENTRIES)
            .changed(Some(big), Some(big))
            .unwrap(),
        0
    );
}

#[test]
fn wide_and_deep_trees_are_too_large() {
    let (_d, repo) = repo();
    // One tree object of 300 entries against a budget of 100: not all read.
    let names: Vec<String> = (0..300).map(|i| format!("f{i}")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "x")).collect();
    let wide = tree(&repo, &files, &[]);
    assert!(matches!(
        Trees::new(&repo, 100).entries(wide),
        Err(WalkError::TooManyEntries(100))
    ));
    // Its object alone is over 64 bytes per entry of a budget of 10.
    assert!(matches!(
        Trees::new(&repo, 10).changed(None, Some(wide)),
        Err(WalkError::TooManyEntries(10))
    ));
    // Nested deeper than MAX_DEPTH: refused, not a stack overflow.
    let mut deep = tree(&repo, &[("f", "x")], &[]);
    let mut deep2 = tree(&repo, &[("f", "y")], &[]);
    for _ in 0..MAX_DEPTH + 1 {
        deep = tree(&repo, &[], &[("d", deep)]);
        deep2 = tree(&repo, &[], &[("d", deep2)]);
    }
    let mut t = Trees::new(&repo, u64::MAX / 2);
    assert!(matches!(t.entries(deep), Err(WalkError::TooManyEntries(_))));
    assert!(matches!(
        t.changed(Some(deep), Some(deep2)),
        Err(WalkError::TooManyEntries(_))
    ));
    assert_eq!(budget_for(10), MAX_ENTRIES);
    assert_eq!(budget_for(MAX_ENTRIES), 4 * MAX_ENTRIES);
}
