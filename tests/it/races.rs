//! Races: many treebox processes at once on one repository.
//!
//! On one name, `create`, `enter` and `teardown` conflict cleanly: each exits 0, 3
//! (the box does not exist yet, or any more) or 5 (another command holds the box), and
//! afterwards there is either a whole box or no trace of one. On distinct names,
//! every create succeeds and the repository stays consistent.

use std::process::Output;

use crate::env::{TestEnv, TREEBOX};
use crate::proof::{assert_gone, assert_whole, fsck, rows};

/// Run every argv at once (one thread each, released together); outputs in order.
fn all_at_once(env: &TestEnv, argvs: Vec<Vec<String>>) -> Vec<Output> {
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(argvs.len()));
    let handles: Vec<_> = argvs
        .into_iter()
        .map(|argv| {
            let mut c = env.command(TREEBOX, &env.repo);
            c.args(&argv);
            let b = barrier.clone();
            std::thread::spawn(move || {
                b.wait();
                c.output().unwrap()
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// `ops` mixed operations on one name, `rounds` times; the end state is checked after
/// every round.
fn race_one_name(mode: &str, ops: usize, rounds: usize) {
    let env = TestEnv::new();
    let name = "race";
    for round in 0..rounds {
        // The first round starts from nothing; later ones from a whole box.
        if round % 2 == 1 {
            env.treebox(&["create", name, "--git", mode, "--no-launch"])
                .ok();
        }
        let argvs: Vec<Vec<String>> = (0..ops)
            .map(|i| match (i + round) % 3 {
                0 => argv(&["create", name, "--git", mode, "--no-launch"]),
                1 => argv(&["enter", name, "--print"]),
                // Deleting the branch too lets a later create in the round succeed.
                _ if i % 2 == 0 => argv(&["teardown", "--force", "--delete-branch", name]),
                _ => argv(&["teardown", "--force", name]),
            })
            .collect();
        let outs = all_at_once(&env, argvs.clone());
        for (a, out) in argvs.iter().zip(&outs) {
            let code = out.status.code().unwrap_or(-1);
            let allowed: &[i32] = match a[0].as_str() {
                // A create that finds the branch left by a teardown: exit 5 too.
                "create" => &[0, 5],
                _ => &[0, 3, 5],
            };
            assert!(
                allowed.contains(&code),
                "round {round}: `{}` exited {code}\nstdout: {}\nstderr: {}",
                a.join(" "),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // Either a whole box, or none at all.
        if env.box_path(name).exists() {
            assert_whole(&env, name, name, mode);
        } else {
            assert_gone(&env, name);
        }
        fsck(&env);
        let r = env.treebox(&["teardown", "--force", "--delete-branch", name]);
        assert!(r.code == 0 || r.code == 3, "{r:#?}");
        let _ = env.git_run(&env.repo, &["branch", "-D", name]);
        assert_gone(&env, name);
    }
}

#[test]
fn sixteen_mixed_operations_on_one_name_worktree() {
    race_one_name("worktree", 16, 4);
}

#[test]
fn eight_mixed_operations_on_one_name_clone() {
    race_one_name("clone", 8, 4);
}

fn distinct_creates(mode: &str, n: usize) {
    let env = TestEnv::new();
    let argvs = (0..n)
        .map(|i| argv(&["create", &format!("par/{i}"), "--git", mode, "--no-launch"]))
        .collect();
    for (i, out) in all_at_once(&env, argvs).into_iter().enumerate() {
        assert!(
            out.status.success(),
            "create par/{i}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let rows = rows(&env);
    assert_eq!(rows.len(), n, "{rows:#?}");
    for r in &rows {
        if mode == "worktree" {
            assert_eq!(r["state"], "ok", "{r}");
        }
        assert_eq!(r["deps"], "fresh", "{r}");
        assert_eq!(r["gitMode"], mode, "{r}");
    }
    let refs = env.git(&env.repo, &["for-each-ref", "--format=%(refname)"]);
    for i in 0..n {
        let leaf = format!("par--{i}");
        assert!(env.box_path(&leaf).join("README.md").is_file(), "{leaf}");
        if mode == "clone" {
            assert!(refs.contains(&format!("refs/hort/{leaf}/base\n")), "{refs}");
            assert!(!refs.contains(&format!("refs/heads/par/{i}\n")), "{refs}");
        } else {
            assert!(refs.contains(&format!("refs/heads/par/{i}\n")), "{refs}");
        }
    }
    let wt = env.git(&env.repo, &["worktree", "list", "--porcelain"]);
    let expected = if mode == "worktree" { n + 1 } else { 1 };
    assert_eq!(wt.matches("worktree ").count(), expected, "{wt}");
    let cfg = std::fs::read_to_string(env.repo.join(".git/config")).unwrap();
    assert!(cfg.matches("worktreeConfig").count() <= 1, "{cfg}");
    let exclude = std::fs::read_to_string(env.repo.join(".git/info/exclude")).unwrap();
    assert_eq!(exclude.matches("/.treebox/").count(), 1, "{exclude}");
    fsck(&env);
    // And all of them go again, in parallel too.
    let argvs = (0..n)
        .map(|i| {
            argv(&[
                "teardown",
                "--force",
                "--delete-branch",
                &format!("par/{i}"),
            ])
        })
        .collect();
    for out in all_at_once(&env, argvs) {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for i in 0..n {
        assert_gone(&env, &format!("par--{i}"));
    }
}

#[test]
fn thirty_two_parallel_creates_of_distinct_names() {
    distinct_creates("worktree", 32);
}

#[test]
fn eight_parallel_clone_creates_of_distinct_names() {
    distinct_creates("clone", 8);
}

/// An `enter` that found the box just before a `teardown` removed it must not bring
/// the record back. Ten large malformed records of other boxes (read after the target,
/// in leaf order) widen the window between `enter` reading the box and taking its lock,
/// so the interleaving is hit in most rounds.
#[test]

fn an_enter_racing_a_teardown_never_resurrects_the_box() {
    use std::time::Duration;
    let env = TestEnv::new();
    let boxes = crate::proof::repo_state(&env).join("boxes");
    for i in 0..10 {
        let d = boxes.join(format!("zz-{i}"));
        std::fs::create_dir_all(&d).unwrap();
        let mut slow = b"{\"x\": \"".to_vec();
        slow.resize(1024 * 1024 - 16, b'y');
        slow.extend_from_slice(b"\"}");
        std::fs::write(d.join("record.json"), slow).unwrap();
    }
    let spawn = |args: &[&str]| {
        env.command(TREEBOX, &env.repo)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    for round in 0..8 {
        env.treebox(&["create", "aaa", "--no-launch"]).ok();
        let mut children = vec![spawn(&["teardown", "--force", "--delete-branch", "aaa"])];
        std::thread::sleep(Duration::from_millis(10));
        for _ in 0..4 {
            children.push(spawn(&["enter", "aaa", "--print"]));
            std::thread::sleep(Duration::from_millis(8));
        }
        for c in children {
            let out = c.wait_with_output().unwrap();
            let code = out.status.code().unwrap_or(-1);
            assert!(
                [0, 3, 5].contains(&code),
                "round {round}: exit {code}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        if env.box_path("aaa").exists() {
            assert_whole(&env, "aaa", "aaa", "worktree");
        } else {
            assert_gone(&env, "aaa");
        }
        let _ = env.treebox(&["teardown", "--force", "--delete-branch", "aaa"]);
        let _ = env.git_run(&env.repo, &["branch", "-D", "aaa"]);
    }
}
