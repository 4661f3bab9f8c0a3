//! The landed check against real git: a bare origin plays the forge, a second clone
//! (`forge`) does what the forge's merge button does, and the user's repository
//! (`repo`) fetches and asks.

use std::path::{Path, PathBuf};

use super::*;

struct Fx {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    forge: PathBuf,
    /// Where `feat` started: origin/main when it was cut.
    start: Oid,
}

use crate::testing::git;

fn commit(dir: &Path, file: &str, content: &str) -> String {
    std::fs::write(dir.join(file), content).unwrap();
    git(dir, &["add", file]);
    git(dir, &["commit", "-q", "-m", &format!("{file}: {content}")]);
    git(dir, &["rev-parse", "HEAD"])
}

impl Fx {
    /// origin with `main` (a.txt, b.txt); the user's clone with `feat` cut from
    /// origin/main; the forge's clone.
    fn new() -> Fx {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        git(&root, &["init", "-q", "--bare", "-b", "main", "origin.git"]);
        git(&root, &["clone", "-q", "origin.git", "repo"]);
        let repo = root.join("repo");
        git(&repo, &["checkout", "-q", "-b", "main"]);
        commit(&repo, "a.txt", "a1\na2\na3\n");
        commit(&repo, "b.txt", "b1\n");
        git(&repo, &["push", "-q", "origin", "main"]);
        git(&repo, &["checkout", "-q", "-b", "feat", "origin/main"]);
        let start = Oid::from_str(&git(&repo, &["rev-parse", "HEAD"])).unwrap();
        git(&root, &["clone", "-q", "origin.git", "forge"]);
        let forge = root.join("forge");
        Fx {
            _tmp: tmp,
            repo,
            forge,
            start,
        }
    }

    /// Two commits on `feat` (new file c.txt, a change to a.txt), pushed to origin.
    fn work(&self) {
        commit(&self.repo, "c.txt", "c1\n");
        commit(&self.repo, "a.txt", "a1\nA2\na3\n");
        git(&self.repo, &["push", "-q", "origin", "feat"]);
        git(&self.forge, &["fetch", "-q", "origin"]);
    }

    /// Run git in the forge's clone on `main`, then push main and fetch in the repo.
    fn forge(&self, steps: &[&[&str]]) {
        git(&self.forge, &["checkout", "-q", "main"]);
        for s in steps {
            git(&self.forge, s);
        }
        git(&self.forge, &["push", "-q", "origin", "main"]);
        git(&self.repo, &["fetch", "-q", "origin"]);
    }

    fn forge_commit(&self, file: &str, content: &str) {
        git(&self.forge, &["checkout", "-q", "main"]);
        commit(&self.forge, file, content);
        git(&self.forge, &["push", "-q", "origin", "main"]);
        git(&self.repo, &["fetch", "-q", "origin"]);
    }

    fn verdict(&self) -> Verdict {
        let r = Repository::open(&self.repo).unwrap();
        let tip = r.refname_to_id("refs/heads/feat").unwrap();
        let targets = targets_for_base(&r, "main");
        let v = verdict(&r, tip, Some(self.start), &targets).unwrap();
        // `list`'s form agrees but for the count, the second time from kept patch-ids
        // alone (every commit it needs is kept by then).
        let uncounted = match &v {
            Verdict::NotLanded { .. } => Verdict::NotLanded { ahead: None },
            v => v.clone(),
        };
        let known = Patches::default();
        for round in 0..2 {
            let w = verdict_with(&r, tip, Some(self.start), &targets, &known).unwrap();
            assert_eq!(w, uncounted, "round {round}");
        }
        v
    }
}

fn landed_as(v: &Verdict, how: How) {
    assert_eq!(
        v,
        &Verdict::Landed {
            how,
            into: "origin/main".into()
        }
    );
}

fn not_landed(v: &Verdict, count: usize) {
    assert_eq!(
        v,
        &Verdict::NotLanded {
            ahead: Some(Ahead {
                count,
                of: "origin/main".into(),
                capped: false
            })
        }
    );
    assert!(!v.nothing_to_lose());
}

/// Where the box started is not known (a branch checked out as it was): a tip that is
/// the base's own is no work of the box's; one the base has moved past, or merged, is
/// landed.
#[test]
fn with_no_known_start_the_bases_own_tip_is_no_work() {
    let fx = Fx::new();
    let r = Repository::open(&fx.repo).unwrap();
    let tip = r.refname_to_id("refs/heads/feat").unwrap();
    let targets = targets_for_base(&r, "main");
    assert_eq!(verdict(&r, tip, None, &targets).unwrap(), Verdict::NoWork);
    // The base moved on (origin's and the local one): the tip is behind it, in it.
    fx.forge_commit("b.txt", "b2\n");
    git(&fx.repo, &["branch", "-f", "main", "origin/main"]);
    let r = Repository::open(&fx.repo).unwrap();
    let targets = targets_for_base(&r, "main");
    landed_as(&verdict(&r, tip, None, &targets).unwrap(), How::Ancestry);
}

#[test]
fn no_work_at_all() {
    let fx = Fx::new();
    assert_eq!(fx.verdict(), Verdict::NoWork);
    // Also when the base has moved on since.
    fx.forge_commit("b.txt", "b2\n");
    assert_eq!(fx.verdict(), Verdict::NoWork);
}

#[test]
fn unlanded_work_counts_the_commits_origin_lacks() {
    let fx = Fx::new();
    fx.work();
    not_landed(&fx.verdict(), 2);
}

#[test]
fn merged() {
    let fx = Fx::new();
    fx.work();
    fx.forge(&[&["merge", "-q", "--no-ff", "-m", "Merge feat", "origin/feat"]]);
    landed_as(&fx.verdict(), How::Ancestry);
}

#[test]
fn fast_forwarded() {
    let fx = Fx::new();
    fx.work();
    fx.forge(&[&["merge", "-q", "--ff-only", "origin/feat"]]);
    landed_as(&fx.verdict(), How::Ancestry);
}

#[test]
fn merged_then_reverted_is_landed() {
    let fx = Fx::new();
    fx.work();
    fx.forge(&[
        &["merge", "-q", "--no-ff", "-m", "Merge feat", "origin/feat"],
        &["revert", "--no-edit", "-m", "1", "HEAD"],
    ]);
    landed_as(&fx.verdict(), How::Ancestry);
}

#[test]
fn merged_into_the_local_base_only() {
    let fx = Fx::new();
    fx.work();
    git(&fx.repo, &["checkout", "-q", "main"]);
    git(&fx.repo, &["merge", "-q", "--no-ff", "-m", "local", "feat"]);
    let v = fx.verdict();
    assert_eq!(
        v,
        Verdict::Landed {
            how: How::Ancestry,
            into: "main".into()
        }
    );
}

#[test]
fn rebased_on_the_forge() {
    let fx = Fx::new();
    fx.work();
    fx.forge_commit("b.txt", "b2\n");
    fx.forge(&[
        &["checkout", "-q", "-B", "r", "origin/feat"],
        &["rebase", "-q", "main"],
        &["checkout", "-q", "main"],
        &["merge", "-q", "--ff-only", "r"],
    ]);
    assert!(fx.verdict().nothing_to_lose(), "{:?}", fx.verdict());
    // And when main later changed the same lines, only the patch-ids tell.
    fx.forge_commit("a.txt", "a1\nA2-again\na3\n");
    landed_as(&fx.verdict(), How::SamePatches);
}

#[test]
fn cherry_picked() {
    let fx = Fx::new();
    fx.work();
    fx.forge_commit("b.txt", "b2\n");
    fx.forge(&[&["cherry-pick", "origin/main..origin/feat"]]);
    assert!(fx.verdict().nothing_to_lose(), "{:?}", fx.verdict());
    fx.forge_commit("c.txt", "c-changed\n");
    landed_as(&fx.verdict(), How::SamePatches);
}

#[test]
fn squash_merged() {
    let fx = Fx::new();
    fx.work();
    fx.forge(&[
        &["merge", "-q", "--squash", "origin/feat"],
        &["commit", "-q", "-m", "feat (#1)"],
    ]);
    landed_as(&fx.verdict(), How::Contained);
}

#[test]
fn squash_merged_then_the_base_moved_on_elsewhere() {
    let fx = Fx::new();
    fx.work();
    fx.forge(&[
        &["merge", "-q", "--squash", "origin/feat"],
        &["commit", "-q", "-m", "feat (#1)"],
    ]);
    fx.forge_commit("b.txt", "b2\n");
    fx.forge_commit("d.txt", "d1\n");
    landed_as(&fx.verdict(), How::Contained);
}

#[test]
fn kept_patch_ids_are_the_ones_compared() {
    let fx = Fx::new();
    fx.work();
    fx.forge_commit("b.txt", "b2\n");
    fx.forge(&[&["cherry-pick", "origin/main..origin/feat"]]);
    fx.forge_commit("c.txt", "c-changed\n");
    let r = Repository::open(&fx.repo).unwrap();
    let tip = r.refname_to_id("refs/heads/feat").unwrap();
    let targets = targets_for_base(&r, "main");
    let known = Patches::default();
    let v = verdict_with(&r, tip, Some(fx.start), &targets, &known).unwrap();
    landed_as(&v, How::SamePatches);
    // The box's two commits and the forge's four since the merge-base.
    assert_eq!(known.0.borrow().len(), 6);
    // Kept answers are not read again: made to differ, the same patches no longer match.
    for (commit, p) in known.0.borrow_mut().iter_mut() {
        *p = Some(Oid::hash_object(git2::ObjectType::Blob, commit.as_bytes()).unwrap());
    }
    let v = verdict_with(&r, tip, Some(fx.start), &targets, &known).unwrap();
    assert_eq!(v, Verdict::NotLanded { ahead: None });
}

#[test]
fn squash_merged_then_the_same_lines_changed_again() {
    let fx = Fx::new();
    fx.work();
    fx.forge(&[
        &["merge", "-q", "--squash", "origin/feat"],
        &["commit", "-q", "-m", "feat (#1)"],
    ]);
    fx.forge_commit("a.txt", "a1\nA2 later\na3\n");
    landed_as(&fx.verdict(), How::SquashPatch);
}

#[test]
fn a_squash_of_part_of_the_work_is_not_landed() {
    let fx = Fx::new();
    fx.work();
    // The forge's squash dropped a.txt's change.
    fx.forge(&[
        &["merge", "-q", "--squash", "origin/feat"],
        &["checkout", "HEAD", "--", "a.txt"],
        &["commit", "-q", "-m", "feat, partly"],
    ]);
    not_landed(&fx.verdict(), 2);
}

#[test]
fn a_cherry_pick_of_some_commits_is_not_landed() {
    let fx = Fx::new();
    fx.work();
    fx.forge_commit("b.txt", "b2\n");
    fx.forge(&[&["cherry-pick", "origin/feat~1"]]);
    not_landed(&fx.verdict(), 2);
}

#[test]
fn a_commit_amended_after_the_merge_is_not_landed() {
    let fx = Fx::new();
    fx.work();
    fx.forge(&[&["merge", "-q", "--ff-only", "origin/feat"]]);
    std::fs::write(fx.repo.join("a.txt"), "a1\nA2 amended\na3\n").unwrap();
    git(&fx.repo, &["commit", "-q", "-a", "--amend", "--no-edit"]);
    not_landed(&fx.verdict(), 1);
}

#[test]
fn without_a_start_or_a_target() {
    let fx = Fx::new();
    fx.work();
    let r = Repository::open(&fx.repo).unwrap();
    let tip = r.refname_to_id("refs/heads/feat").unwrap();
    assert_eq!(
        verdict(&r, tip, None, &[]).unwrap(),
        Verdict::NotLanded { ahead: None }
    );
    // Without a start, a tip that is the base's own is no work of the box's.
    let start = fx.start;
    let main = targets_for_base(&r, "main");
    assert_eq!(verdict(&r, start, None, &main).unwrap(), Verdict::NoWork);
    // An unrelated target holds nothing of the box.
    git(&fx.repo, &["checkout", "-q", "--orphan", "other"]);
    git(&fx.repo, &["rm", "-q", "-rf", "."]);
    commit(&fx.repo, "z.txt", "z\n");
    let other = Target {
        name: "other".into(),
        oid: r.refname_to_id("refs/heads/other").unwrap(),
    };
    assert_eq!(
        verdict(&r, tip, None, std::slice::from_ref(&other)).unwrap(),
        Verdict::NotLanded {
            ahead: Some(Ahead {
                count: 4,
                of: "other".into(),
                capped: false
            })
        }
    );
}

/// `n` empty commits on `feat` from `from`, made with `git fast-import`.
fn many_commits(repo: &Path, from: Oid, n: usize) -> Oid {
    use std::io::Write;
    let mut stream = String::new();
    for i in 0..n {
        stream.push_str(&format!(
            "commit refs/heads/feat\ncommitter T <t@e> {} +0000\ndata 2\nc\n",
            1_900_000_000 + i
        ));
        if i == 0 {
            stream.push_str(&format!("from {from}\n"));
        }
        stream.push('\n');
    }
    let mut child = std::process::Command::new("git")
        .args(["fast-import", "--quiet", "--force"])
        .current_dir(repo)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    Oid::from_str(&git(repo, &["rev-parse", "refs/heads/feat"])).unwrap()
}

/// A history past the capped walk's cap is too large to tell: an error that says so
/// (never landed), read in bounded time; a count of it is capped.
#[test]
fn a_history_past_the_cap_is_too_large() {
    let fx = Fx::new();
    fx.work();
    let r = Repository::open(&fx.repo).unwrap();
    let start = fx.start;
    let tip = many_commits(&fx.repo, start, history::MAX_COMMITS + 1);
    let targets = targets_for_base(&r, "main");
    let began = std::time::Instant::now();
    let e = verdict(&r, tip, Some(start), &targets).unwrap_err();
    assert!(e.is_too_large(), "{e}");
    let e = verdict_with(&r, tip, Some(start), &targets, &Patches::default()).unwrap_err();
    assert!(e.is_too_large(), "{e}");
    // Without a start, ancestry is asked of the target: too large as well.
    assert!(verdict(&r, tip, None, &targets).unwrap_err().is_too_large());
    assert!(began.elapsed() < std::time::Duration::from_secs(20));
    // The count alone is capped, not an error.
    let ahead = ahead_of(&r, tip, &targets[0]).unwrap();
    assert_eq!((ahead.count, ahead.capped), (COUNT_MAX, true));
}

/// A commit whose tree is 4 M files of identical subtrees: the squash checks are not
/// run over it (too large), and nothing is diffed.
#[test]
fn a_tree_bomb_is_too_large_to_compare() {
    let fx = Fx::new();
    let r = Repository::open(&fx.repo).unwrap();
    let blob = r.blob(b"x").unwrap();
    let mut tb = r.treebuilder(None).unwrap();
    tb.insert("f", blob, 0o100644).unwrap();
    let mut t = tb.write().unwrap();
    for _ in 0..22 {
        let mut tb = r.treebuilder(None).unwrap();
        tb.insert("a", t, 0o040000).unwrap();
        tb.insert("b", t, 0o040000).unwrap();
        t = tb.write().unwrap();
    }
    let start_commit = r.find_commit(fx.start).unwrap();
    let mut top = r.treebuilder(Some(&start_commit.tree().unwrap())).unwrap();
    top.insert("bomb", t, 0o040000).unwrap();
    let tree = r.find_tree(top.write().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@e").unwrap();
    let tip = r
        .commit(
            Some("refs/heads/feat"),
            &sig,
            &sig,
            "bomb",
            &tree,
            &[&start_commit],
        )
        .unwrap();
    fx.forge_commit("b.txt", "b2\n");
    let r = Repository::open(&fx.repo).unwrap();
    let targets = targets_for_base(&r, "main");
    let began = std::time::Instant::now();
    let e = verdict(&r, tip, Some(fx.start), &targets).unwrap_err();
    assert!(e.is_too_large(), "{e}");
    assert!(began.elapsed() < std::time::Duration::from_secs(10));
}
