//! The sizes of what a box would bring back (SPEC §8.10), read from object headers
//! before anything is packed.
//!
//! A blob of 4 GiB of zeros is 4 MB of the box's disk (it compresses), and packing it
//! for `git sandbox fetch` inflated it whole: 35 s and 4.2 GB. Before a bundle is
//! written, every object the box's new commits bring (reachable from them and not in
//! the user's repository) has its size read from its header (libgit2's
//! `odb.read_header`, which inflates the few bytes of the header only); a blob over
//! [`cap_for`] refuses the whole fetch, naming the blob's path in the box's tree. The
//! trees are walked each once (a tree the user has, or one already seen, is not
//! walked again), with an entry budget ([`MAX_ENTRIES`]) and each tree object's size
//! read first too.

use std::collections::HashSet;
use std::path::Path;

use git2::{ObjectType, Oid, Repository};

/// A blob may be this large at least (the cap grows with the user's repository:
/// [`cap_for`]).
pub const MIN_CAP: u64 = 100 << 20;

/// Entries of the new trees looked at, in all, before the box's work is too large to
/// check.
pub const MAX_ENTRIES: u64 = 4 * super::trees::MAX_ENTRIES;

/// The largest object a box may bring into the repository whose git dir is
/// `user_common_dir`: the larger of [`MIN_CAP`] and its largest pack file (a
/// repository that already holds large files may get more of them). One `readdir`.
pub fn cap_for(user_common_dir: &Path) -> u64 {
    let largest = std::fs::read_dir(user_common_dir.join("objects/pack"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
                .filter_map(|e| e.metadata().ok().map(|m| m.len()))
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0);
    MIN_CAP.max(largest)
}

#[derive(Debug, thiserror::Error)]
pub enum Oversized {
    /// A blob over the cap, at `path` in the box's tree (raw bytes, lossily decoded).
    #[error("`{path}` in the box's commit {commit} is {size} bytes, over the {cap}-byte cap on what is brought back")]
    Blob {
        path: String,
        commit: Oid,
        size: u64,
        cap: u64,
    },
    /// A commit or tree object over the cap.
    #[error(
        "the box's {kind} {oid} is {size} bytes, over the {cap}-byte cap on what is brought back"
    )]
    Object {
        kind: &'static str,
        oid: Oid,
        size: u64,
        cap: u64,
    },
    /// More entries than [`MAX_ENTRIES`] in the new trees.
    #[error("the box's new trees hold more than {0} entries: too large to check")]
    Entries(u64),
    #[error(transparent)]
    Git(#[from] git2::Error),
}

/// The size of `oid` from its header; over `cap`, [`Oversized::Object`].
pub fn header_within(
    repo: &Repository,
    oid: Oid,
    cap: u64,
) -> Result<(u64, ObjectType), Oversized> {
    let (size, kind) = repo.odb()?.read_header(oid)?;
    let size = size as u64;
    if size > cap {
        return Err(Oversized::Object {
            kind: kind.str(),
            oid,
            size,
            cap,
        });
    }
    Ok((size, kind))
}

/// Refuse when a blob under `commits`' trees that `in_user` lacks is over `cap`, or
/// a tree is (see the module doc). `commits` are read already (their headers were
/// checked by the caller's walk).
pub fn check_new(
    repo: &Repository,
    commits: &[Oid],
    in_user: &dyn Fn(Oid) -> bool,
    cap: u64,
) -> Result<(), Oversized> {
    check_new_within(repo, commits, in_user, cap, MAX_ENTRIES)
}

fn check_new_within(
    repo: &Repository,
    commits: &[Oid],
    in_user: &dyn Fn(Oid) -> bool,
    cap: u64,
    budget: u64,
) -> Result<(), Oversized> {
    let odb = repo.odb()?;
    let mut seen: HashSet<Oid> = HashSet::new();
    let mut looked: u64 = 0;
    for &commit in commits {
        let root = repo.find_commit(commit)?.tree_id();
        let mut stack: Vec<(Oid, Vec<u8>)> = vec![(root, Vec::new())];
        while let Some((tree, prefix)) = stack.pop() {
            if !seen.insert(tree) || in_user(tree) {
                continue;
            }
            header_within(repo, tree, cap)?;
            let t = repo.find_tree(tree)?;
            looked += t.len() as u64;
            if looked > budget {
                return Err(Oversized::Entries(budget));
            }
            for e in t.iter() {
                let mut path = prefix.clone();
                if !path.is_empty() {
                    path.push(b'/');
                }
                path.extend_from_slice(e.name_bytes());
                match e.kind() {
                    Some(ObjectType::Tree) => stack.push((e.id(), path)),
                    Some(ObjectType::Blob) => {
                        let oid = e.id();
                        if !seen.insert(oid) || in_user(oid) {
                            continue;
                        }
                        let (size, _) = odb.read_header(oid)?;
                        let size = size as u64;
                        if size > cap {
                            return Err(Oversized::Blob {
                                path: String::from_utf8_lossy(&path).into_owned(),
                                commit,
                                size,
                                cap,
                            });
                        }
                    }
                    // A submodule's commit is not brought.
                    _ => {}
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(repo: &Repository, files: &[(&str, Oid)], dirs: &[(&str, Oid)]) -> Oid {
        let mut tb = repo.treebuilder(None).unwrap();
        for (name, blob) in files {
            tb.insert(name, *blob, 0o100644).unwrap();
        }
        for (name, sub) in dirs {
            tb.insert(name, *sub, 0o040000).unwrap();
        }
        tb.write().unwrap()
    }

    #[test]
    fn a_blob_over_the_cap_is_named_by_its_path_and_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let small = repo.blob(b"small").unwrap();
        let big = repo.blob(&vec![0u8; 4096]).unwrap();
        let sub = tree(&repo, &[("big.bin", big)], &[]);
        let root = tree(&repo, &[("a", small)], &[("dir", sub)]);
        let sig = git2::Signature::now("t", "t@e").unwrap();
        let t = repo.find_tree(root).unwrap();
        let c = repo.commit(None, &sig, &sig, "c", &t, &[]).unwrap();
        let none = |_: Oid| false;
        // Under the cap: fine.
        check_new(&repo, &[c], &none, 4096).unwrap();
        match check_new(&repo, &[c], &none, 4095) {
            Err(Oversized::Blob { path, size, .. }) => {
                assert_eq!((path.as_str(), size), ("dir/big.bin", 4096));
            }
            other => panic!("{other:?}"),
        }
        // What the user has already is not the box's to bring.
        let has_big = |o: Oid| o == big;
        check_new(&repo, &[c], &has_big, 4095).unwrap();
        let has_sub = |o: Oid| o == sub;
        check_new(&repo, &[c], &has_sub, 4095).unwrap();
        // The entry budget: three entries in two trees.
        assert!(matches!(
            check_new_within(&repo, &[c], &none, 1 << 20, 2),
            Err(Oversized::Entries(2))
        ));
        check_new_within(&repo, &[c], &none, 1 << 20, 3).unwrap();
        // The cap of a repository with no packs is the floor; a larger pack raises it.
        assert_eq!(cap_for(dir.path().join(".git").as_path()), MIN_CAP);
        let pack = dir.path().join(".git/objects/pack/pack-x.pack");
        std::fs::File::create(&pack)
            .unwrap()
            .set_len(MIN_CAP + 1)
            .unwrap();
        assert_eq!(cap_for(dir.path().join(".git").as_path()), MIN_CAP + 1);
    }

    /// 4 M files of identical subtrees are 23 trees to check, each once.
    #[test]
    fn identical_subtrees_are_checked_once() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let blob = repo.blob(b"x").unwrap();
        let mut t = tree(&repo, &[("f", blob)], &[]);
        for _ in 0..22 {
            t = tree(&repo, &[], &[("a", t), ("b", t)]);
        }
        let sig = git2::Signature::now("t", "t@e").unwrap();
        let c = repo
            .commit(None, &sig, &sig, "c", &repo.find_tree(t).unwrap(), &[])
            .unwrap();
        let began = std::time::Instant::now();
        check_new_within(&repo, &[c], &|_| false, 1 << 20, 100).unwrap();
        assert!(began.elapsed() < std::time::Duration::from_secs(2));
    }
}
