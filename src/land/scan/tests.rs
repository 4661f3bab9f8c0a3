//! The pure checks (names, messages) and the tree walk over trees built in memory.

use std::collections::BTreeMap;

use super::*;

fn repo() -> (tempfile::TempDir, Repository) {
    let d = tempfile::tempdir().unwrap();
    let r = Repository::init_bare(d.path()).unwrap();
    (d, r)
}

/// A tree holding a blob at each of `paths` (`/`-separated bytes).
fn tree(r: &Repository, paths: &[&[u8]]) -> Oid {
    #[derive(Default)]
    struct Dir(BTreeMap<Vec<u8>, Option<Dir>>);
    let mut top = Dir::default();
    for p in paths {
        let parts: Vec<&[u8]> = p.split(|b| *b == b'/').collect();
        let mut d = &mut top;
        for (i, part) in parts.iter().enumerate() {
            let leaf = i + 1 == parts.len();
            let slot =
                d.0.entry(part.to_vec())
                    .or_insert_with(|| (!leaf).then(Dir::default));
            if leaf {
                break;
            }
            d = slot.as_mut().unwrap();
        }
    }
    fn write(r: &Repository, d: &Dir) -> Oid {
        let blob = r.blob(b"x\n").unwrap();
        let mut b = r.treebuilder(None).unwrap();
        for (name, sub) in &d.0 {
            match sub {
                Some(s) => b.insert(name, write(r, s), 0o040000).unwrap(),
                None => b.insert(name, blob, 0o100644).unwrap(),
            };
        }
        b.write().unwrap()
    }
    write(r, &top)
}

#[test]
fn the_boxes_dir_is_the_top_level_treebox_as_macos_compares_it() {
    for p in [
        ".treebox/worktrees/good/INJECTED.test.js",
        ".TreeBox/worktrees/good/x",
        ".TREEBOX",
        ".tree\u{200c}box/x",
        "\u{feff}.treebox/x",
    ] {
        assert_eq!(path_flaw(p.as_bytes()), Some(PathFlaw::BoxesRoot), "{p:?}");
    }
    // Deeper down it is an ordinary name: nothing of treebox's lives there.
    for p in [
        "docs/.treebox/x",
        ".treebox.json",
        ".treeboxes/x",
        "treebox/x",
        "src/héllo wörld.rs",
    ] {
        assert_eq!(path_flaw(p.as_bytes()), None, "{p:?}");
    }
}

#[test]
fn a_path_with_c0_c1_or_bidi_controls_is_flawed() {
    for p in [
        &b"a\x1b[2Jb"[..],
        b"bell\x07.txt",
        b"tab\there",
        b"del\x7f",
        "c1\u{9b}31m".as_bytes(),
        "x\u{202e}txt.js".as_bytes(),
        "\u{2066}a\u{2069}".as_bytes(),
        b"dir\x1b]0;t\x07/file",
        // A raw C1 byte (not UTF-8): CSI to a terminal in an 8-bit locale.
        b"raw\x9b2J",
    ] {
        assert_eq!(path_flaw(p), Some(PathFlaw::Controls), "{p:?}");
    }
    // Latin-1 that is not UTF-8 but no control either.
    assert_eq!(path_flaw(b"caf\xe9.txt"), None);
}

#[test]
fn a_message_may_hold_newlines_tabs_and_crlf_only() {
    assert!(!message_has_controls(b"fix: it\r\n\n\tbody\n"));
    assert!(!message_has_controls("ünïcödé\n".as_bytes()));
    for m in [
        &b"copy \x1b]52;c;aGVsbG8=\x07"[..],
        b"title \x1b]0;pwned\x07",
        b"red \x1b[31m",
        "c1 \u{9b}2J".as_bytes(),
        b"hidden\rshown",
        "rtl \u{202e}".as_bytes(),
    ] {
        assert!(message_has_controls(m), "{m:?}");
    }
}

#[test]
fn a_commit_with_controls_in_its_message_or_names_is_named() {
    let (_d, r) = repo();
    let t = tree(&r, &[b"a"]);
    let t = r.find_tree(t).unwrap();
    let sig = |n: &str| git2::Signature::now(n, "a@example.com").unwrap();
    let mk = |author: &str, msg: &str| {
        let id = r
            .commit(None, &sig(author), &sig("C"), msg, &t, &[])
            .unwrap();
        commit_flaw(&r.find_commit(id).unwrap())
    };
    assert_eq!(mk("A", "plain\n\nbody\n"), None);
    assert_eq!(mk("A", "x\x1b]52;c;aGk=\x07\n"), Some("message"));
    assert_eq!(mk("A\x1b[31m", "plain\n"), Some("author"));
    assert_eq!(mk("A\u{9b}31m", "plain\n"), Some("author"));
}

#[test]
fn only_what_changed_is_walked_and_flawed_paths_are_named() {
    let (_d, r) = repo();
    let base = tree(&r, &[b"a.txt", b"docs/.treebox/x", b"src/lib.rs"]);
    let mut s = Scan::new(&r);
    // A `.treebox` deeper down, a new ordinary file: fine.
    let ok = tree(
        &r,
        &[
            b"a.txt",
            b"docs/.treebox/x",
            b"docs/.treebox/y",
            b"src/new.rs",
        ],
    );
    s.tree(Some(base), ok, None).unwrap();
    let bad = tree(&r, &[b"a.txt", b".TreeBox/worktrees/good/INJECTED.test.js"]);
    match Scan::new(&r).tree(Some(base), bad, None) {
        Err(Refusal::BoxesRoot { path, commit: None }) => assert_eq!(path, ".TreeBox"),
        other => panic!("{other:?}"),
    }
    let bad = tree(&r, &[b"a.txt", b"src/ev\x1b]0;x\x07il.js"]);
    let id = Oid::from_str("0123456789abcdef0123456789abcdef01234567").unwrap();
    match Scan::new(&r).tree(Some(base), bad, Some(id)) {
        Err(e @ Refusal::ControlPath { .. }) => {
            let text = e.to_string();
            assert!(text.contains("src/ev\\u{1b}]0;x\\u{7}il.js"), "{text}");
            assert!(text.contains("0123456789ab"), "{text}");
            assert!(!text.contains('\x1b'), "{text}");
        }
        other => panic!("{other:?}"),
    }
    // A flawed path the base already has is not the box's doing: not walked.
    let old_bad = tree(&r, &[b".treebox/x", b"a\x07"]);
    let newer = tree(&r, &[b".treebox/x", b"a\x07", b"b.txt"]);
    Scan::new(&r).tree(Some(old_bad), newer, None).unwrap();
}

#[test]
fn a_tree_of_identical_subtrees_counts_as_it_expands_and_is_walked_once_per_land() {
    let (_d, r) = repo();
    // 16^5 (1 M) paths from 6 trees.
    let names: Vec<String> = (0..16).map(|i| format!("{i:x}")).collect();
    let refs: Vec<&[u8]> = names.iter().map(|n| n.as_bytes()).collect();
    let mut t = tree(&r, &refs);
    for _ in 0..4 {
        let mut b = r.treebuilder(None).unwrap();
        for i in 0..16 {
            b.insert(format!("d{i:x}"), t, 0o040000).unwrap();
        }
        t = b.write().unwrap();
    }
    let started = std::time::Instant::now();
    // The count is not what refuses here: the walk's own budget is.
    let mut s = Scan::within(&r, u64::MAX);
    s.left = 100_000;
    assert!(matches!(
        s.tree(None, t, None),
        Err(Refusal::TooLarge {
            what: "tree entries",
            ..
        })
    ));
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // Within the budget, walked once; the same pair again costs nothing.
    let mut s = Scan::within(&r, 2_000_000);
    s.tree(None, t, None).unwrap();
    let left = s.left;
    s.tree(None, t, None).unwrap();
    assert_eq!(s.left, left);
    assert_eq!(
        ENTRY_BUDGET - left,
        16 + 16 * 16 + 16usize.pow(3) + 16usize.pow(4) + 16usize.pow(5)
    );
}

#[test]
fn a_tree_bomb_is_counted_and_refused_before_any_walk_or_merge() {
    let (_d, r) = repo();
    // 2^22 (4 M) paths from 23 trees, as a box makes them with `git mktree`.
    let mut t = tree(&r, &[b"f"]);
    for _ in 0..22 {
        let mut b = r.treebuilder(None).unwrap();
        b.insert("a", t, 0o040000).unwrap();
        b.insert("b", t, 0o040000).unwrap();
        t = b.write().unwrap();
    }
    let small = tree(&r, &[b"x.txt"]);
    let started = std::time::Instant::now();
    let mut s = Scan::new(&r);
    let too_large = |e: Result<(), Refusal>| {
        matches!(
            e,
            Err(Refusal::TooLarge {
                what: "tree entries",
                limit
            }) if limit as u64 == crate::git::trees::MAX_ENTRIES
        )
    };
    assert!(too_large(s.tree(Some(small), t, None)));
    // Refused by the count: the walk's own budget untouched.
    assert_eq!(s.left, ENTRY_BUDGET);
    assert!(too_large(s.fits(&[small, t])));
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    s.fits(&[small]).unwrap();
    // Scaled with the base's own tree: a base of 4 M paths takes a box of as many.
    let sig = git2::Signature::now("a", "a@b").unwrap();
    let big = r
        .commit(None, &sig, &sig, "base", &r.find_tree(t).unwrap(), &[])
        .unwrap();
    let mut s = Scan::on(&r, Some(big)).unwrap();
    s.fits(&[t]).unwrap();
}

#[test]
fn a_long_history_is_too_large_by_the_capped_walk() {
    let (_d, r) = repo();
    let sig = git2::Signature::now("a", "a@b").unwrap();
    let empty = r.find_tree(tree(&r, &[])).unwrap();
    let base = r.commit(None, &sig, &sig, "base", &empty, &[]).unwrap();
    let mut tip = base;
    for i in 0..=COMMIT_BUDGET {
        let parent = r.find_commit(tip).unwrap();
        tip = r
            .commit(None, &sig, &sig, &format!("c{i}"), &empty, &[&parent])
            .unwrap();
    }
    assert!(matches!(
        history(&r, Some(base), tip),
        Err(Refusal::TooLarge {
            what: "commits",
            limit: COMMIT_BUDGET
        })
    ));
    // Within the cap: oldest first.
    let parent = r.find_commit(tip).unwrap().parent_id(0).unwrap();
    let h = history(&r, Some(parent), tip).unwrap();
    assert_eq!(h, vec![(tip, false)]);
    let mut at = base;
    let mut made = Vec::new();
    for i in 0..3 {
        let p = r.find_commit(at).unwrap();
        at = r
            .commit(None, &sig, &sig, &format!("d{i}"), &empty, &[&p])
            .unwrap();
        made.push((at, false));
    }
    assert_eq!(history(&r, Some(base), at).unwrap(), made);
}

#[test]
fn past_the_entry_budget_or_the_depth_cap_it_is_too_large() {
    let (_d, r) = repo();
    let names: Vec<Vec<u8>> = (0..200).map(|i| format!("f{i}").into_bytes()).collect();
    let refs: Vec<&[u8]> = names.iter().map(|n| &n[..]).collect();
    let wide = tree(&r, &refs);
    let mut s = Scan::new(&r);
    s.left = 100;
    assert!(matches!(
        s.tree(None, wide, None),
        Err(Refusal::TooLarge {
            what: "tree entries",
            ..
        })
    ));
    let mut t = tree(&r, &[b"x"]);
    for _ in 0..MAX_DEPTH + 1 {
        let mut b = r.treebuilder(None).unwrap();
        b.insert("d", t, 0o040000).unwrap();
        t = b.write().unwrap();
    }
    // The count nests at most git::trees::MAX_DEPTH deep: it refuses first.
    assert!(matches!(
        Scan::new(&r).tree(None, t, None),
        Err(Refusal::TooLarge { .. })
    ));
}
