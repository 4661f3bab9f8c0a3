//! The capped walk against libgit2's own (uncapped) revwalk, on histories made with
//! libgit2: linear work, merges both ways, dates skewed, and the bounds.

use super::*;

struct Fx {
    _dir: tempfile::TempDir,
    repo: Repository,
}

impl Fx {
    fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        Fx { _dir: dir, repo }
    }

    /// A commit of an empty tree, dated `time`, on `parents`.
    fn commit(&self, parents: &[Oid], time: i64, msg: &str) -> Oid {
        let sig = git2::Signature::new("t", "t@e", &git2::Time::new(time, 0)).unwrap();
        let tree = self
            .repo
            .find_tree(self.repo.treebuilder(None).unwrap().write().unwrap())
            .unwrap();
        let parents: Vec<git2::Commit> = parents
            .iter()
            .map(|p| self.repo.find_commit(*p).unwrap())
            .collect();
        let refs: Vec<&git2::Commit> = parents.iter().collect();
        self.repo
            .commit(None, &sig, &sig, msg, &tree, &refs)
            .unwrap()
    }

    /// `n` commits on `from`, one a minute from `time`.
    fn line(&self, from: Oid, n: usize, time: i64) -> Vec<Oid> {
        let mut out = Vec::new();
        let mut at = from;
        for i in 0..n {
            at = self.commit(&[at], time + 60 * i as i64, &format!("{time}+{i}"));
            out.push(at);
        }
        out
    }

    /// libgit2's answer, uncapped, as a sorted set.
    fn libgit2(&self, tip: Oid, hide: &[Oid]) -> Vec<Oid> {
        let mut w = self.repo.revwalk().unwrap();
        w.push(tip).unwrap();
        for h in hide {
            w.hide(*h).unwrap();
        }
        let mut v: Vec<Oid> = w.map(|o| o.unwrap()).collect();
        v.sort();
        v
    }

    fn ours(&self, tip: Oid, hide: &[Oid]) -> Vec<Oid> {
        let mut v = since(&self.repo, tip, hide, MAX_COMMITS).unwrap();
        v.sort();
        assert_eq!(v, self.libgit2(tip, hide), "tip {tip}, hide {hide:?}");
        v
    }
}

#[test]
fn linear_work_beyond_a_base_that_moved_on() {
    let fx = Fx::new();
    let root = fx.commit(&[], 1_000_000, "root");
    let base = fx.line(root, 20, 1_000_100);
    let fork = base[9];
    let work = fx.line(fork, 3, 1_000_700);
    let tip = *work.last().unwrap();
    let main = *base.last().unwrap();
    assert_eq!(fx.ours(tip, &[main]).len(), 3);
    // Newest first.
    assert_eq!(
        since(&fx.repo, tip, &[main], 10).unwrap(),
        vec![work[2], work[1], work[0]]
    );
    assert!(!within(&fx.repo, tip, main).unwrap());
    assert!(within(&fx.repo, fork, main).unwrap());
    assert!(within(&fx.repo, main, main).unwrap());
    assert_eq!(merge_base(&fx.repo, tip, main).unwrap(), Some(fork));
    // The base's own commits beyond the box's tip.
    assert_eq!(fx.ours(main, &[tip]).len(), 10);
}

#[test]
fn merged_work_is_within_and_has_nothing_of_its_own() {
    let fx = Fx::new();
    let root = fx.commit(&[], 2_000_000, "root");
    let base = fx.line(root, 5, 2_000_100);
    let work = fx.line(base[1], 4, 2_000_200);
    let merge = fx.commit(&[base[4], work[3]], 2_010_000, "merge");
    let after = fx.line(merge, 3, 2_020_000);
    let main = after[2];
    assert!(fx.ours(work[3], &[main]).is_empty());
    assert!(within(&fx.repo, work[3], main).unwrap());
    // The merge's other side is the base's history, not the box's.
    assert_eq!(fx.ours(main, &[work[3]]).len(), 3 + 3 + 1);
    // Several hidden tips: only what none of them reaches.
    let side = fx.line(work[1], 2, 2_030_000);
    assert_eq!(fx.ours(side[1], &[main, work[0]]).len(), 2);
}

#[test]
fn dates_the_box_chose_do_not_change_the_answer() {
    let fx = Fx::new();
    let root = fx.commit(&[], 3_000_000, "root");
    let base = fx.line(root, 30, 3_000_100);
    // The box's commits dated long before their parents, and one far in the future.
    let past = fx.line(base[20], 6, 10);
    let future = fx.commit(&[past[5]], 4_000_000_000, "future");
    let main = base[29];
    assert_eq!(fx.ours(future, &[main]).len(), 7);
    assert!(!within(&fx.repo, future, main).unwrap());
    assert!(within(&fx.repo, base[3], main).unwrap());
    assert_eq!(merge_base(&fx.repo, future, main).unwrap(), Some(base[20]));
    // Merged back, dated in the past: all hidden.
    let merged = fx.commit(&[main, future], 5, "merge dated 1970");
    assert!(fx.ours(future, &[merged]).is_empty());
}

#[test]
fn unrelated_histories_have_no_merge_base() {
    let fx = Fx::new();
    let a = fx.line(fx.commit(&[], 5_000_000, "a"), 3, 5_000_100);
    let b = fx.line(fx.commit(&[], 5_000_000, "b"), 2, 5_000_100);
    assert_eq!(fx.ours(a[2], &[b[1]]).len(), 4);
    assert_eq!(merge_base(&fx.repo, a[2], b[1]).unwrap(), None);
}

#[test]
fn over_the_cap_or_the_reads_is_too_large() {
    let fx = Fx::new();
    let root = fx.commit(&[], 6_000_000, "root");
    let work = fx.line(root, 40, 6_000_100);
    let tip = work[39];
    assert_eq!(since(&fx.repo, tip, &[root], 40).unwrap().len(), 40);
    assert!(matches!(
        since(&fx.repo, tip, &[root], 39),
        Err(WalkError::TooLarge(39))
    ));
    // The reads bound the base's side too: the box's commits dated in 1970 make the
    // walk read the base's newer history first.
    let base = fx.line(root, 60, 7_000_000);
    let old = fx.line(root, 2, 100);
    assert_eq!(
        walk(&fx.repo, old[1], &[base[59]], 10, 100).unwrap().len(),
        2
    );
    assert!(matches!(
        walk(&fx.repo, old[1], &[base[59]], 10, 30),
        Err(WalkError::TooLarge(30))
    ));
    // A commit that is not there is an error, not an answer.
    let missing = Oid::from_str("0123456789012345678901234567890123456789").unwrap();
    assert!(matches!(
        since(&fx.repo, missing, &[root], 10),
        Err(WalkError::Git(_))
    ));
}
