//! Faults: `kill -9` of a `create` at each stage of the pipeline, in both git modes.
//!
//! There is no test hook in the binary; slow fake steps pick the moment instead. A
//! `git` wrapper early on PATH delegates to the real git, pausing (touching a marker,
//! then sleeping) before or after the subcommand named in a control file; the config's
//! `setup` command pauses the setup stage. The test waits for the marker and kills the
//! whole process group (treebox and every child), as a crash or a closed terminal does.
//!
//! After each kill, one of the ways out must work: a re-run of `create` (or `enter`)
//! finishes the box, whole; or `teardown --force` removes it without a trace. Either
//! way `git fsck` of the user's repository stays clean.

use std::path::{Path, PathBuf};

use crate::env::{write_exec, TestEnv};
use crate::proof::{
    admin_dirs_for, assert_gone, assert_whole, euid, fsck, kill_group, repo_state, row,
    spawn_group, wait_for,
};

/// A test double for git: pauses at the stage written in `ctl`, else is the real git.
/// Every call is logged (its directory, then its arguments) to `log`.
///
/// Stages: `before-<sub>` pauses before the subcommand runs; `after-<sub>` runs it, then
/// pauses.
const GIT_WRAPPER: &str = r#"#!/bin/sh
real='@REAL@'
printf '%s %s\n' "$(pwd -P)" "$*" >>'@LOG@'
stage=$(cat '@CTL@' 2>/dev/null)
[ -n "$stage" ] || exec "$real" "$@"
sub= ; sub2= ; skip=
for a in "$@"; do
  if [ -n "$skip" ]; then skip= ; continue; fi
  case "$a" in
    -C|-c) skip=1 ;;
    -*) ;;
    *) if [ -z "$sub" ]; then sub=$a; elif [ -z "$sub2" ]; then sub2=$a; fi ;;
  esac
done
here=$sub
[ "$sub" = worktree ] && here="worktree-$sub2"
pause() { touch '@REACHED@'; sleep 60; exit 1; }
case "$stage" in
  "before-$here") pause ;;
  "after-$here") "$real" "$@" || exit $?; pause ;;
esac
exec "$real" "$@"
"#;

struct Faults {
    env: TestEnv,
    ctl: PathBuf,
    reached: PathBuf,
    fast: PathBuf,
    log: PathBuf,
}

impl Faults {
    fn new() -> Faults {
        let env = TestEnv::new();
        let ctl = env.root().join("git-stage");
        let reached = env.root().join("stage-reached");
        let fast = env.root().join("setup-fast");
        let log = env.root().join("git-calls");
        write_exec(
            &env.bin.join("git"),
            &GIT_WRAPPER
                .replace("@REAL@", &crate::env::real_git().to_string_lossy())
                .replace("@CTL@", &ctl.to_string_lossy())
                .replace("@REACHED@", &reached.to_string_lossy())
                .replace("@LOG@", &log.to_string_lossy()),
        );
        // The wrapper shadows the real git for treebox and for this test alike.
        let which = env
            .command("sh", &env.repo)
            .args(["-c", "command -v git"])
            .output();
        assert_eq!(
            String::from_utf8_lossy(&which.unwrap().stdout).trim(),
            env.bin.join("git").to_string_lossy()
        );
        // Setup pauses unless `fast` exists.
        env.write_config(&format!(
            r#"{{"setup": ["test -f '{f}' || {{ touch '{r}'; sleep 60; }}"]}}"#,
            f = fast.display(),
            r = reached.display()
        ));
        std::fs::write(&fast, "").unwrap();
        Faults {
            env,
            ctl,
            reached,
            fast,
            log,
        }
    }

    /// Start `create NAME` and kill it (the whole process group) at `stage`.
    fn kill_at(&self, stage: &str, name: &str, mode: &str) {
        self.kill_running(stage, &["create", name, "--git", mode, "--no-launch"]);
    }

    /// Start `git-treebox ARGS` and kill it (the whole process group) at `stage`.
    fn kill_running(&self, stage: &str, args: &[&str]) {
        let _ = std::fs::remove_file(&self.reached);
        if stage == "setup" {
            std::fs::remove_file(&self.fast).unwrap();
        } else {
            std::fs::write(&self.ctl, stage).unwrap();
        }
        let mut child = spawn_group(&self.env, args);
        let reached = wait_for(&self.reached, &mut child);
        kill_group(&mut child);
        std::fs::write(&self.ctl, "").unwrap();
        std::fs::write(&self.fast, "").unwrap();
        assert!(reached, "{args:?} never reached stage {stage}");
    }
}

/// Kill `create` at `stage` twice: once finished by `finisher`, once torn down.
fn kill_and_recover(f: &Faults, mode: &str, stage: &str, finisher: &str) {
    let env = &f.env;
    let name = format!("{}-{finisher}", stage.replace("worktree-", "wt-"));
    f.kill_at(stage, &name, mode);
    match finisher {
        "create" => {
            let r = env.treebox(&["create", &name, "--git", mode, "--no-launch"]);
            r.ok();
        }
        "enter" => {
            let doc = env.treebox(&["enter", &name, "--json"]).ok().json();
            assert_eq!(doc["finishedSetup"], true, "{doc}");
        }
        "teardown" => {
            let r = env.treebox(&["teardown", "--force", &name]);
            // Killed before anything was recorded: there is no box to remove.
            assert!(r.code == 0 || r.code == 3, "{r:#?}");
            assert_gone(env, &name);
            // And the name is free again.
            env.git_run(&env.repo, &["branch", "-D", &name]);
            env.treebox(&["create", &name, "--git", mode, "--no-launch"])
                .ok();
        }
        other => unreachable!("{other}"),
    }
    assert_whole(env, &name, &name, mode);
    // Whatever the way out, the box can then be removed without a trace.
    env.treebox(&["teardown", "--force", "--delete-branch", &name])
        .ok();
    assert_gone(env, &name);
}

#[test]
fn a_kill_during_fetch_leaves_nothing() {
    let f = Faults::new();
    let env = &f.env;
    let before = env.snapshot();
    f.kill_at("before-fetch", "during-fetch", "worktree");
    assert_eq!(
        env.snapshot(),
        before,
        "a create killed while fetching wrote something"
    );
    assert!(row(env, "during-fetch").is_none());
    env.treebox(&["teardown", "--force", "during-fetch"])
        .code(3);
    // The fetch lock was the kernel's, and went with the process.
    env.treebox(&["create", "during-fetch", "--no-launch"]).ok();
    assert_whole(env, "during-fetch", "during-fetch", "worktree");
}

/// A git killed in the middle of a fetch leaves a ref lock file behind, and every
/// later fetch fails on it. The refusal names the file and how to clear it; nothing
/// is written; once it is gone, create works.
#[test]
fn a_lock_file_left_by_a_killed_git_is_named_with_the_way_out() {
    let env = TestEnv::new();
    env.push_to_origin("new.txt", "new\n");
    let lock = env.repo.join(".git/refs/remotes/origin/main.lock");
    std::fs::write(&lock, "").unwrap();
    let before = env.snapshot();
    let r = env.treebox(&["create", "blocked", "--no-launch"]);
    r.code(4);
    assert!(r.stderr.contains(&*lock.to_string_lossy()), "{r:?}");
    assert!(
        r.stderr
            .contains(&format!("rm -f {}", lock.to_string_lossy())),
        "{r:?}"
    );
    let json = env.treebox(&["create", "blocked", "--no-launch", "--json"]);
    json.code(4);
    let err: serde_json::Value = serde_json::from_str(json.stderr.trim()).unwrap();
    assert_eq!(err["error"]["kind"], "fetch-failed");
    assert!(
        err["error"]["hint"].as_str().unwrap().contains("rm -f"),
        "{err}"
    );
    assert_eq!(env.snapshot(), before);
    std::fs::remove_file(&lock).unwrap();
    env.treebox(&["create", "blocked", "--no-launch"]).ok();
    assert!(env.box_path("blocked").join("new.txt").is_file());
}

/// A killed git (or treebox) can leave `.git/config.lock`; the box's guard needs one
/// config write. The error names the lock file and the `rm` to run; the create is
/// rolled back.
#[test]
fn a_config_lock_left_behind_is_named_with_the_way_out() {
    let env = TestEnv::new();
    let lock = env.repo.join(".git/config.lock");
    std::fs::write(&lock, "").unwrap();
    let before = env.snapshot();
    let r = env.treebox(&["create", "locked", "--no-fetch", "--no-launch"]);
    r.code(1);
    assert!(
        r.stderr
            .contains(&format!("rm -f {}", lock.to_string_lossy())),
        "{r:?}"
    );
    // Rolled back: no box, registration, record or ref (the repository-wide excludes
    // and box root stay, as after any create).
    let after = env.snapshot();
    assert_eq!(after.refs, before.refs);
    assert_eq!(after.worktrees, before.worktrees);
    assert!(!env.box_path("locked").exists());
    assert!(row(&env, "locked").is_none());
    std::fs::remove_file(&lock).unwrap();
    env.treebox(&["create", "locked", "--no-fetch", "--no-launch"])
        .ok();
}

#[test]
fn worktree_mode_recovers_from_a_kill_at_every_stage() {
    let f = Faults::new();
    for stage in ["before-read-tree", "after-read-tree", "setup"] {
        for finisher in ["create", "teardown"] {
            kill_and_recover(&f, "worktree", stage, finisher);
        }
    }
    kill_and_recover(&f, "worktree", "after-read-tree", "enter");
    kill_and_recover(&f, "worktree", "setup", "enter");
    fsck(&f.env);
}

/// Killed once the checkout is whole, before the record says so (it says so only
/// before the first code runs in the box, or at the end): the next create finishes the
/// box and runs no git in it, nor with it as an argument. (Killed before the checkout's
/// `initializing` mark is gone, the checkout is made again: nothing has run in it.)
#[test]
fn a_kill_after_the_checkout_is_finished_without_git_in_the_box() {
    let f = Faults::new();
    let env = &f.env;
    f.kill_at("after-read-tree", "whole", "worktree");
    // Killed just after the checkout's last step, the registration's `initializing`
    // mark taken away (no git runs between the two to pause in).
    let admins = admin_dirs_for(env, &env.box_path("whole"));
    assert_eq!(admins.len(), 1, "{admins:?}");
    std::fs::remove_file(admins[0].join("locked")).unwrap();
    let record = std::fs::read_to_string(crate::proof::record_path(env, "whole")).unwrap();
    assert!(record.contains("\"checkoutCompleted\": false"), "{record}");
    std::fs::write(&f.log, "").unwrap();
    let doc = env
        .treebox(&["create", "whole", "--no-launch", "--json"])
        .ok()
        .json();
    assert_eq!(doc["resumed"], true, "{doc}");
    let boxed = env.box_path("whole");
    let real = boxed.canonicalize().unwrap();
    let log = std::fs::read_to_string(&f.log).unwrap();
    assert!(!log.is_empty(), "the finishing create ran no git at all");
    for call in log.lines() {
        for p in [&boxed, &real] {
            assert!(
                !call.contains(&*p.to_string_lossy()),
                "git ran in or on the box: {call}"
            );
        }
    }
    let record = std::fs::read_to_string(crate::proof::record_path(env, "whole")).unwrap();
    assert!(record.contains("\"checkoutCompleted\": true"), "{record}");
    assert_whole(env, "whole", "whole", "worktree");
    fsck(env);
}

/// A kill between the registration and its checkout: registered (and marked locked,
/// as git marks a worktree it is still making), nothing checked out. Tearing it down
/// works.
#[test]
fn a_kill_before_the_checkout_is_torn_down() {
    let f = Faults::new();
    kill_and_recover(&f, "worktree", "before-read-tree", "teardown");
    let admin = f.env.repo.join(".git/worktrees/before-read-tree-teardown");
    assert!(!admin.exists());
}

/// Killed with the record saved and nothing registered yet (a branch only on origin
/// is made by `git branch --track` before the registration): the next create makes the
/// box whole, on a branch tracking origin's; or teardown leaves nothing.
#[test]
fn a_kill_before_the_registration_is_finished_or_torn_down() {
    let f = Faults::new();
    let env = &f.env;
    let root = env.root();
    env.git(&root, &["clone", "-q", "origin.git", "mate"]);
    for b in ["remote-one", "remote-two"] {
        env.git(
            &root.join("mate"),
            &["switch", "-q", "-c", b, "origin/main"],
        );
        env.git(&root.join("mate"), &["push", "-q", "origin", b]);
    }
    for (branch, finisher) in [("remote-one", "create"), ("remote-two", "teardown")] {
        let create = ["create", "--checkout", branch, "--no-launch"];
        f.kill_running("before-branch", &create);
        assert!(crate::proof::record_path(env, branch).is_file());
        assert!(admin_dirs_for(env, &env.box_path(branch)).is_empty());
        if finisher == "create" {
            env.treebox(&create).ok();
            assert_whole(env, branch, branch, "worktree");
            let boxed = env.box_path(branch);
            let upstream = env.git(&boxed, &["rev-parse", "--abbrev-ref", "@{upstream}"]);
            assert_eq!(upstream.trim(), format!("origin/{branch}"));
        } else {
            let r = env.treebox(&["teardown", "--force", branch]);
            assert!(r.code == 0 || r.code == 3, "{r:#?}");
            assert_gone(env, branch);
        }
    }
    fsck(env);
}

/// Killed while registering: the admin dir made and marked, nothing naming the checkout
/// yet. The next create takes the half-made registration away and makes its own under
/// the same name.
#[test]
fn a_kill_while_registering_is_finished_by_create() {
    let f = Faults::new();
    let env = &f.env;
    f.kill_at("before-read-tree", "early", "worktree");
    let admin = env.repo.join(".git/worktrees/early");
    // Rolled back to the moment after the admin dir and its mark were made.
    for name in ["gitdir", "HEAD", "commondir"] {
        std::fs::remove_file(admin.join(name)).unwrap();
    }
    std::fs::remove_dir_all(env.box_path("early")).unwrap();
    env.treebox(&["create", "early", "--no-launch"]).ok();
    assert_whole(env, "early", "early", "worktree");
    assert!(admin.join("gitdir").is_file());
    assert!(!env.repo.join(".git/worktrees/early1").exists());
    fsck(env);
}

#[test]
fn a_kill_before_the_checkout_is_finished_by_create() {
    let f = Faults::new();
    kill_and_recover(&f, "worktree", "before-read-tree", "create");
}

#[test]
fn a_kill_before_the_checkout_is_finished_by_enter() {
    let f = Faults::new();
    kill_and_recover(&f, "worktree", "before-read-tree", "enter");
}

#[test]
fn clone_mode_recovers_from_a_kill_at_every_stage() {
    let f = Faults::new();
    for stage in ["before-clone", "setup"] {
        for finisher in ["create", "teardown"] {
            kill_and_recover(&f, "clone", stage, finisher);
        }
    }
    kill_and_recover(&f, "clone", "setup", "enter");
    // Between the clone and its checkout, and between the checkout and the pin.
    for stage in ["before-checkout", "after-checkout"] {
        kill_and_recover(&f, "clone", stage, "teardown");
    }
    fsck(&f.env);
}

/// `git clone` done, checkout not: a re-run must finish the checkout and the pin.
#[test]

fn clone_mode_rerun_after_a_kill_between_clone_and_checkout() {
    let f = Faults::new();
    kill_and_recover(&f, "clone", "before-checkout", "create");
}

/// Checkout done, pin not yet written: a re-run must write the pin.
#[test]

fn clone_mode_rerun_after_a_kill_before_the_pin() {
    let f = Faults::new();
    kill_and_recover(&f, "clone", "after-checkout", "create");
}

#[test]

fn clone_mode_enter_after_a_kill_before_the_pin() {
    let f = Faults::new();
    kill_and_recover(&f, "clone", "after-checkout", "enter");
}

/// Not a fault, but every check above leans on it: `list` calls a healthy clone `ok`.
#[test]

fn a_whole_clone_box_lists_as_ok() {
    let env = TestEnv::new();
    env.treebox(&["create", "c", "--git", "clone", "--no-launch"])
        .ok();
    assert_eq!(row(&env, "c").unwrap()["state"], "ok");
}

/// Run `git-treebox ARGS` as `prefix` (e.g. an unprivileged user through `setpriv`).
fn treebox_as(env: &TestEnv, prefix: &[String], args: &[&str]) -> crate::env::Run {
    let (prog, pre) = match prefix.split_first() {
        Some((p, rest)) => (p.as_str(), rest.to_vec()),
        None => (crate::env::TREEBOX, Vec::new()),
    };
    let mut c = env.command(prog, &env.repo);
    c.args(&pre);
    if !prefix.is_empty() {
        c.arg(crate::env::TREEBOX);
    }
    let out = c.args(args).output().unwrap();
    crate::env::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn chmod(path: &Path, mode: &str) {
    let st = std::process::Command::new("chmod")
        .args(["-R", mode])
        .arg(path)
        .status()
        .unwrap();
    assert!(st.success());
}

/// A repository treebox may not write: a clear error (exit 1), and nothing half-made.
///
/// Root ignores permission bits, so as root the commands run as `nobody` through
/// `setpriv` (the fixture is handed to that user first); without `setpriv` the test
/// is skipped with a note.
#[test]
fn a_read_only_repository_gives_a_clear_error_and_nothing_half_made() {
    let env = TestEnv::new();
    let prefix: Vec<String> = if euid() == 0 {
        if !Path::new("/usr/bin/setpriv").is_file() {
            eprintln!("skipped: running as root and no setpriv to drop privileges");
            return;
        }
        // The snapshot's git (as root) reads a repository another user owns.
        let mut cfg = std::fs::read_to_string(&env.gitconfig).unwrap();
        cfg.push_str("[safe]\n\tdirectory = *\n");
        std::fs::write(&env.gitconfig, cfg).unwrap();
        let st = std::process::Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(env.root())
            .status()
            .unwrap();
        assert!(st.success());
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
        ]
        .map(String::from)
        .to_vec()
    } else {
        Vec::new()
    };
    // A first box makes the box root, the excludes and the bookkeeping dirs.
    treebox_as(&env, &prefix, &["create", "first", "--no-launch"]);
    assert!(env.box_path("first").is_dir(), "the first create failed");
    let cases = [
        (env.repo.join(".git/worktrees"), "worktree"),
        (env.repo.join(".treebox/worktrees"), "worktree"),
        (env.repo.join(".git/refs"), "clone"),
    ];
    for (i, (dir, mode)) in cases.iter().enumerate() {
        let name = format!("ro-{i}");
        chmod(dir, "a-w");
        let before = env.snapshot();
        let r = treebox_as(
            &env,
            &prefix,
            &["create", &name, "--git", mode, "--no-launch"],
        );
        chmod(dir, "u+w");
        assert_eq!(r.code, 1, "read-only {}: {r:#?}", dir.display());
        assert!(r.stderr.lines().any(|l| l.starts_with("error: ")), "{r:#?}");
        assert!(
            r.stderr.contains("Permission denied") || r.stderr.contains("permission"),
            "the cause is named: {r:#?}"
        );
        assert_eq!(
            env.snapshot(),
            before,
            "read-only {}: half-made",
            dir.display()
        );
        assert!(!repo_state(&env).join("boxes").join(&name).exists());
        assert!(!repo_state(&env)
            .join("locks")
            .join(format!("{name}.lock"))
            .exists());
        fsck(&env);
    }
}

/// Disk full: the box root on a tiny tmpfs (mounting one needs root; elsewhere the
/// test says so and passes). The checkout fails part-way with ENOSPC; create exits 1
/// with the cause, and rolls back: no branch, no registration, no record, no lock.
#[test]
fn a_full_disk_gives_a_clear_error_and_nothing_half_made() {
    let env = TestEnv::new();
    // A file the tmpfs cannot hold.
    let big: String = "0123456789abcdef".repeat(64 * 1024);
    env.push_to_origin("big.bin", &big);
    let root = env.repo.join(".treebox");
    std::fs::create_dir_all(&root).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(&root)
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).output();
        }
    }
    let _unmount = Unmount(root.clone());
    env.git(&env.repo, &["fetch", "-q", "origin"]);
    let refs = env.git(&env.repo, &["for-each-ref"]);
    // Clone mode names the full disk and rolls back the same way.
    let r = env.treebox(&[
        "create",
        "fullclone",
        "--git",
        "clone",
        "--no-fetch",
        "--no-launch",
    ]);
    r.code(1);
    assert!(r.stderr.contains("no space left"), "{r:?}");
    assert!(!env.box_path("fullclone").exists());
    assert_eq!(
        env.git(&env.repo, &["for-each-ref"]),
        refs,
        "no pin left behind"
    );
    let r = env.treebox(&["create", "full", "--no-fetch", "--no-launch"]);
    r.code(1);
    assert!(r.stderr.contains("no space left"), "{r:?}");
    assert!(r.stderr.contains("df -h"), "{r:?}");
    // No branch, no checkout, no record, no lock: only the (complete) excludes and
    // the empty box root remain, as after any create.
    assert_eq!(env.git(&env.repo, &["for-each-ref"]), refs);
    assert!(!env.box_path("full").exists());
    let state = env.state_dir().join("treebox/repos");
    let leftovers: Vec<_> = walk(&state)
        .into_iter()
        .filter(|p| p.contains("full"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert_eq!(
        env.git(&env.repo, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
    env.git(&env.repo, &["fsck", "--no-progress"]);
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            out.push(p.to_string_lossy().into_owned());
            if p.is_dir() {
                out.extend(walk(&p));
            }
        }
    }
    out
}

/// A clone box in a repository with no commits, killed before its branch was made or
/// during setup: `create` and `enter` finish it on its unborn branch, with no pin.
#[test]
fn an_empty_repository_clone_recovers_from_a_kill() {
    let mut f = Faults::new();
    let empty = f.env.root().join("empty");
    f.env.git(&f.env.root(), &["init", "-q", "empty"]);
    f.env.repo = empty;
    let env = &f.env;
    for (stage, finisher) in [
        ("before-checkout", "create"),
        ("before-checkout", "enter"),
        ("setup", "enter"),
    ] {
        let name = format!("{stage}-{finisher}");
        f.kill_at(stage, &name, "clone");
        match finisher {
            "create" => {
                env.treebox(&["create", &name, "--git", "clone", "--no-launch"])
                    .ok();
            }
            _ => {
                let doc = env.treebox(&["enter", &name, "--json"]).ok().json();
                assert_eq!(doc["finishedSetup"], true, "{doc}");
            }
        }
        let path = env.box_path(&name);
        assert_eq!(
            env.git(&path, &["symbolic-ref", "HEAD"]).trim(),
            format!("refs/heads/{name}")
        );
        let row = crate::proof::row(env, &name).expect("listed");
        assert_eq!(row["state"], "ok", "{row}");
        assert_eq!(row["deps"], "fresh", "{row}");
        assert_eq!(row["branch"], name.as_str(), "{row}");
        let hooks = env.git(&path, &["config", "--worktree", "core.hooksPath"]);
        assert!(!hooks.trim().is_empty(), "the guard of {name} is missing");
        assert_eq!(
            env.git(&env.repo, &["for-each-ref"]),
            "",
            "no pin in a repository with nothing to pin"
        );
        env.treebox(&["teardown", "--force", &name]).ok();
        crate::proof::assert_gone(env, &name);
    }
}
