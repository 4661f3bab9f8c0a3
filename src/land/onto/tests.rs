//! Landing against real git: a bare origin, the user's clone on `main`, and a box's
//! branch `feat` cut from origin/main in the user's repository.

use std::path::{Path, PathBuf};

use super::*;
use crate::land::scan::Refusal;
use crate::testing::git;

struct Fx {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    repo_dir: PathBuf,
}

fn commit(dir: &Path, file: &str, content: &str, msg: &str) -> Oid {
    std::fs::write(dir.join(file), content).unwrap();
    git(dir, &["add", file]);
    git(dir, &["commit", "-q", "-m", msg]);
    Oid::from_str(&git(dir, &["rev-parse", "HEAD"])).unwrap()
}

impl Fx {
    /// origin with `main` (a.txt); the user's clone on main, its own identity in its
    /// config (commit-tree reads it); `feat` checked out in a worktree `box`.
    fn new() -> Fx {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        git(&root, &["init", "-q", "--bare", "-b", "main", "origin.git"]);
        git(&root, &["clone", "-q", "origin.git", "repo"]);
        let repo_dir = root.join("repo");
        git(&repo_dir, &["checkout", "-q", "-b", "main"]);
        git(&repo_dir, &["config", "user.name", "User"]);
        git(&repo_dir, &["config", "user.email", "user@example.com"]);
        commit(&repo_dir, "a.txt", "a1\na2\na3\n", "init");
        git(&repo_dir, &["push", "-q", "origin", "main"]);
        git(
            &repo_dir,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "feat",
                "../box",
                "origin/main",
            ],
        );
        Fx {
            _tmp: tmp,
            root,
            repo_dir,
        }
    }
    fn boxdir(&self) -> PathBuf {
        self.root.join("box")
    }
    fn repo(&self) -> Repo {
        Repo::discover(&self.repo_dir).unwrap()
    }
    fn rev(&self, r: &str) -> Oid {
        Oid::from_str(&git(&self.repo_dir, &["rev-parse", r])).unwrap()
    }
    /// Two commits in the box: c.txt, then a change to a.txt's first line.
    fn work(&self) -> Oid {
        let b = self.boxdir();
        commit(&b, "c.txt", "c1\n", "add c");
        commit(&b, "a.txt", "A1\na2\na3\n", "change a1")
    }
    /// origin's main moves on (another change, in a.txt's last line), fetched.
    fn base_moves(&self, content: &str) -> Oid {
        let other = self.root.join("other");
        if !other.exists() {
            git(&self.root, &["clone", "-q", "origin.git", "other"]);
            git(&other, &["config", "user.name", "O"]);
            git(&other, &["config", "user.email", "o@example.com"]);
        }
        git(&other, &["pull", "-q", "origin", "main"]);
        let c = commit(&other, "a.txt", content, "base moves");
        git(&other, &["push", "-q", "origin", "HEAD:main"]);
        git(&self.repo_dir, &["fetch", "-q", "origin"]);
        c
    }
    fn land(&self, s: Strategy) -> Result<(Base, Composed), LandError> {
        let repo = self.repo();
        let cli = GitCli::plain();
        let base = base_of(&repo, "main")?;
        let tip = self.rev("feat");
        let work = Work {
            tip,
            branch: "feat",
            leaf: "feat",
        };
        let c = compose(&repo, &cli, s, &base, &work)?;
        let main = checkout_check(&repo, &cli, "main")?;
        move_base(&repo, &cli, &base, c.new, "feat", main)?;
        Ok((base, c))
    }
    fn show(&self, r: &str) -> String {
        git(&self.repo_dir, &["show", "-s", "--format=%P|%an|%cn|%B", r])
    }
}

#[test]
fn squash_makes_one_commit_on_the_base_with_the_users_identity_and_the_subjects() {
    let fx = Fx::new();
    fx.work();
    fx.base_moves("a1\na2\nA3\n");
    let (base, c) = fx.land(Strategy::Squash).unwrap();
    assert_eq!(c.commits, 2);
    assert_eq!(fx.rev("main"), c.new);
    let shown = fx.show("main");
    let parent = fx.rev("origin/main").to_string();
    assert!(
        shown.starts_with(&format!("{parent}|User|User|")),
        "{shown}"
    );
    assert!(
        shown.contains("* add c") && shown.contains("* change a1"),
        "{shown}"
    );
    // Both changes, and the base's own, in the files; the main checkout followed.
    let a = std::fs::read_to_string(fx.repo_dir.join("a.txt")).unwrap();
    assert_eq!(a, "A1\na2\nA3\n");
    assert!(fx.repo_dir.join("c.txt").exists());
    assert_eq!(git(&fx.repo_dir, &["status", "--porcelain"]), "");
    // The local main was behind origin's: it moved from where it was.
    assert_eq!(base.old, Some(fx.rev("main~1~1")));
}

#[test]
fn merge_makes_a_merge_commit_of_base_and_tip() {
    let fx = Fx::new();
    let tip = fx.work();
    let (_, c) = fx.land(Strategy::Merge).unwrap();
    let shown = fx.show("main");
    let parents: Vec<&str> = shown.split('|').next().unwrap().split(' ').collect();
    assert_eq!(parents.len(), 2, "{shown}");
    assert_eq!(parents[1], tip.to_string());
    assert!(shown.contains("Merge branch 'feat'"), "{shown}");
    assert_eq!(fx.rev("main"), c.new);
}

#[test]
fn rebase_replays_each_commit_keeping_its_author_and_fast_forwards_when_it_can() {
    let fx = Fx::new();
    let tip = fx.work();
    // The base has not moved: a fast-forward to the box's own commits.
    let (_, c) = fx.land(Strategy::Rebase).unwrap();
    assert!(c.fast_forward);
    assert_eq!(fx.rev("main"), tip);

    let fx = Fx::new();
    let b = fx.boxdir();
    commit(&b, "c.txt", "c1\n", "add c");
    commit(&b, "d.txt", "d1\n", "add d");
    let moved = fx.base_moves("a1\na2\nA3\n");
    let (_, c) = fx.land(Strategy::Rebase).unwrap();
    assert!(!c.fast_forward);
    assert_eq!(c.commits, 2);
    let log = git(&fx.repo_dir, &["log", "--format=%an|%cn|%s", "-3", "main"]);
    // The testing git sets the author by environment; the committer is the user.
    assert_eq!(log, "T|User|add d\nT|User|add c\nT|T|base moves");
    assert_eq!(fx.rev("main~2"), moved);
}

#[test]
fn a_conflict_names_its_files_and_moves_nothing() {
    let fx = Fx::new();
    fx.work();
    fx.base_moves("B1\na2\na3\n");
    let before = fx.rev("main");
    for s in [Strategy::Squash, Strategy::Merge, Strategy::Rebase] {
        match fx.land(s) {
            Err(LandError::Conflict { files, .. }) => assert_eq!(files, vec!["a.txt"]),
            other => panic!("{s:?}: {other:?}"),
        }
        assert_eq!(fx.rev("main"), before);
    }
}

#[test]
fn work_already_in_the_base_is_nothing_to_land() {
    let fx = Fx::new();
    fx.work();
    fx.land(Strategy::Squash).unwrap();
    // The same work again: its tree is the base's.
    for s in [Strategy::Squash, Strategy::Rebase] {
        assert!(
            matches!(fx.land(s), Err(LandError::AlreadyIn { .. })),
            "{s:?}"
        );
    }
    // A tip in the base's history.
    let fx = Fx::new();
    fx.work();
    fx.land(Strategy::Rebase).unwrap();
    assert!(matches!(
        fx.land(Strategy::Merge),
        Err(LandError::AlreadyIn { .. })
    ));
}

#[test]
fn a_local_base_behind_origin_is_fast_forwarded_and_a_diverged_one_refused() {
    let fx = Fx::new();
    fx.work();
    let moved = fx.base_moves("a1\na2\nA3\n");
    let repo = fx.repo();
    let base = base_of(&repo, "main").unwrap();
    assert_eq!(base.onto, moved);
    assert_ne!(base.old, Some(moved));
    // A local commit on main that origin does not have, and origin moved: diverged.
    commit(&fx.repo_dir, "x.txt", "x\n", "local");
    let err = base_of(&fx.repo(), "main").unwrap_err();
    assert!(matches!(err, LandError::Diverged { .. }), "{err}");
}

#[test]
fn a_dirty_main_checkout_on_the_base_and_a_base_checked_out_elsewhere_are_refused() {
    let fx = Fx::new();
    std::fs::write(fx.repo_dir.join("a.txt"), "dirty\n").unwrap();
    let repo = fx.repo();
    let cli = GitCli::plain();
    assert!(matches!(
        checkout_check(&repo, &cli, "main"),
        Err(LandError::DirtyCheckout { .. })
    ));
    // Untracked files do not count.
    git_restore(&fx.repo_dir);
    std::fs::write(fx.repo_dir.join("new.txt"), "x\n").unwrap();
    assert_eq!(
        checkout_check(&repo, &cli, "main").unwrap(),
        MainCheckout::FollowsBase
    );
    // main checked out in another worktree (the main checkout switched away).
    git(&fx.repo_dir, &["checkout", "-q", "-b", "side"]);
    git(&fx.repo_dir, &["worktree", "add", "-q", "../w2", "main"]);
    let repo = fx.repo();
    match checkout_check(&repo, &cli, "main") {
        Err(LandError::CheckedOutElsewhere { path, .. }) => assert_eq!(path, fx.root.join("w2")),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        checkout_check(&repo, &cli, "feat2").unwrap(),
        MainCheckout::Elsewhere
    );
}

fn git_restore(dir: &Path) {
    git(dir, &["checkout", "--", "."]);
}

#[test]
fn a_base_that_moved_meanwhile_fails_cleanly() {
    let fx = Fx::new();
    fx.work();
    let repo = fx.repo();
    let cli = GitCli::plain();
    let base = base_of(&repo, "main").unwrap();
    let work = Work {
        tip: fx.rev("feat"),
        branch: "feat",
        leaf: "feat",
    };
    let c = compose(&repo, &cli, Strategy::Squash, &base, &work).unwrap();
    // Someone commits on main between compose and move.
    let theirs = commit(&fx.repo_dir, "y.txt", "y\n", "meanwhile");
    let err = move_base(&repo, &cli, &base, c.new, "feat", MainCheckout::FollowsBase).unwrap_err();
    assert!(matches!(err, LandError::BaseMoved { .. }), "{err}");
    assert_eq!(fx.rev("main"), theirs);
    assert_eq!(git(&fx.repo_dir, &["status", "--porcelain"]), "");
}

#[test]
fn the_users_commit_signing_applies() {
    let fx = Fx::new();
    fx.work();
    let key = fx.root.join("key");
    let made = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", ""])
        .arg("-f")
        .arg(&key)
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("note: no ssh-keygen; signing not checked");
        return;
    }
    git(&fx.repo_dir, &["config", "gpg.format", "ssh"]);
    let public = format!("{}.pub", key.display());
    git(&fx.repo_dir, &["config", "user.signingkey", &public]);
    git(&fx.repo_dir, &["config", "commit.gpgsign", "true"]);
    fx.land(Strategy::Squash).unwrap();
    let raw = git(&fx.repo_dir, &["cat-file", "-p", "main"]);
    assert!(
        raw.contains("gpgsig -----BEGIN SSH SIGNATURE-----"),
        "{raw}"
    );
}

#[test]
fn an_untracked_file_in_the_way_is_refused_before_the_base_moves() {
    let fx = Fx::new();
    fx.work();
    std::fs::write(fx.repo_dir.join("c.txt"), "mine, untracked\n").unwrap();
    let before = fx.rev("main");
    let err = fx.land(Strategy::Squash).unwrap_err();
    assert!(matches!(err, LandError::CheckoutInTheWay { .. }), "{err}");
    assert_eq!(fx.rev("main"), before);
    assert_eq!(
        std::fs::read_to_string(fx.repo_dir.join("c.txt")).unwrap(),
        "mine, untracked\n"
    );
}

/// The box's one commit, its message and author name carrying OSC 52, OSC 0, CSI and a
/// C1 CSI.
const HOSTILE_MSG: &str =
    "fix\u{1b}]52;c;aGVsbG8=\u{7} \u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\n\nbody\n";
const HOSTILE_AUTHOR: &str = "Ev\u{1b}[31mil\u{9b}0m <e@example.com>";

fn hostile_commit(dir: &Path) {
    std::fs::write(dir.join("h.txt"), "h\n").unwrap();
    git(dir, &["add", "h.txt"]);
    git(
        dir,
        &[
            "commit",
            "-q",
            "--author",
            HOSTILE_AUTHOR,
            "-m",
            HOSTILE_MSG,
        ],
    );
}

#[test]
fn rebase_replays_commits_with_controls_made_plain_instead_of_fast_forwarding() {
    let fx = Fx::new();
    hostile_commit(&fx.boxdir());
    let tip = fx.rev("feat");
    let (_, c) = fx.land(Strategy::Rebase).unwrap();
    // The base did not move, yet no fast-forward: the commit was replayed.
    assert!(!c.fast_forward);
    assert_ne!(c.new, tip);
    let log = git(&fx.repo_dir, &["log", "-1", "--format=%an|%B", "main"]);
    assert!(
        !log.chars().any(|ch| ch.is_control() && ch != '\n'),
        "{log:?}"
    );
    assert!(
        log.starts_with("Ev\\u{1b}[31mil\\u{9b}0m|fix\\u{1b}]52;c;aGVsbG8=\\u{7}"),
        "{log}"
    );
    assert!(log.contains("\n\nbody"), "{log}");
}

#[test]
fn merge_refuses_commits_with_controls_naming_one_and_squash_lands_them_plain() {
    let fx = Fx::new();
    hostile_commit(&fx.boxdir());
    let before = fx.rev("main");
    let tip = fx.rev("feat");
    match fx.land(Strategy::Merge) {
        Err(LandError::Refused(Refusal::ControlText { commit, field })) => {
            assert_eq!(commit, tip.to_string()[..12]);
            assert_eq!(field, "message");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(fx.rev("main"), before);
    fx.land(Strategy::Squash).unwrap();
    let log = git(&fx.repo_dir, &["log", "-1", "--format=%an|%B", "main"]);
    assert!(log.starts_with("User|fix\\u{1b}]52"), "{log}");
}

#[test]
fn a_path_under_the_boxes_dir_in_the_history_is_refused_by_merge_and_rebase() {
    let fx = Fx::new();
    let b = fx.boxdir();
    std::fs::create_dir_all(b.join(".treebox/worktrees/good")).unwrap();
    commit(
        &b,
        ".treebox/worktrees/good/INJECTED.test.js",
        "pwn\n",
        "inject",
    );
    git(&b, &["rm", "-q", "-r", ".treebox"]);
    commit(&b, "c.txt", "c\n", "hide it again");
    let before = fx.rev("main");
    for s in [Strategy::Merge, Strategy::Rebase] {
        match fx.land(s) {
            Err(LandError::Refused(Refusal::BoxesRoot { path, commit })) => {
                assert_eq!(path, ".treebox", "{s:?}");
                assert_eq!(commit.unwrap(), fx.rev("feat~1").to_string()[..12]);
            }
            other => panic!("{s:?}: {other:?}"),
        }
        assert_eq!(fx.rev("main"), before);
    }
    // The squash writes the result alone, which holds none of it.
    fx.land(Strategy::Squash).unwrap();
    assert!(!fx.repo_dir.join(".treebox").exists());
    // A result that keeps it is refused by every strategy, the squash too.
    commit(&b, ".TreeBox", "now a file\n", "again");
    let before = fx.rev("main");
    for s in [Strategy::Squash, Strategy::Merge, Strategy::Rebase] {
        assert!(
            matches!(
                fx.land(s),
                Err(LandError::Refused(Refusal::BoxesRoot { .. }))
            ),
            "{s:?}"
        );
        assert_eq!(fx.rev("main"), before);
    }
}

/// A tree bomb the box's history adds and takes away again: its tip is small, so a
/// squash lands it; a rebase would cherry-pick (and a merge bring in) the commit
/// holding 4 M paths: refused as too large by the count before libgit2 merges, and
/// nothing moves.
#[test]
fn a_tree_bomb_in_the_history_is_counted_before_any_replay_or_merge() {
    let fx = Fx::new();
    fx.work();
    fx.base_moves("a1\na2\nA3\n");
    let r = Repository::open(&fx.repo_dir).unwrap();
    let blob = r.blob(b"x").unwrap();
    let mut b = r.treebuilder(None).unwrap();
    b.insert("f", blob, 0o100644).unwrap();
    let mut t = b.write().unwrap();
    for _ in 0..22 {
        let mut b = r.treebuilder(None).unwrap();
        b.insert("a", t, 0o040000).unwrap();
        b.insert("b", t, 0o040000).unwrap();
        t = b.write().unwrap();
    }
    let tip = r.find_commit(fx.rev("feat")).unwrap();
    let mut top = r.treebuilder(Some(&tip.tree().unwrap())).unwrap();
    top.insert("bomb", t, 0o040000).unwrap();
    let bombed = r.find_tree(top.write().unwrap()).unwrap();
    let sig = git2::Signature::now("Box", "box@example.com").unwrap();
    let c1 = r
        .commit(None, &sig, &sig, "bomb", &bombed, &[&tip])
        .unwrap();
    let c1 = r.find_commit(c1).unwrap();
    let c2 = r
        .commit(None, &sig, &sig, "unbomb", &tip.tree().unwrap(), &[&c1])
        .unwrap();
    r.reference("refs/heads/feat", c2, true, "test").unwrap();
    let main = fx.rev("main");
    let started = std::time::Instant::now();
    for s in [Strategy::Rebase, Strategy::Merge] {
        match fx.land(s) {
            Err(LandError::Refused(Refusal::TooLarge {
                what: "tree entries",
                ..
            })) => {}
            other => panic!("{s:?}: {other:?}"),
        }
        assert_eq!(fx.rev("main"), main, "{s:?} moved main");
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let (_, c) = fx.land(Strategy::Squash).unwrap();
    assert!(!fx.repo_dir.join("bomb").exists());
    assert_eq!(fx.rev("main"), c.new);
}
