//! Shared checks for the proof suites (faults, races, bad input, hostile boxes): what
//! "a whole box" and "no box at all" mean, observed from outside through git, the
//! file system and `list --json`.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::env::{TestEnv, TREEBOX};

/// `$XDG_STATE_HOME/treebox/repos/<key>` for the fixture's repository.
pub fn repo_state(env: &TestEnv) -> PathBuf {
    env.repo_state()
}

#[allow(dead_code)] // used by some suites only
pub fn record_path(env: &TestEnv, leaf: &str) -> PathBuf {
    repo_state(env).join("boxes").join(leaf).join("record.json")
}

pub fn rows(env: &TestEnv) -> Vec<serde_json::Value> {
    let doc = env.treebox(&["list", "--json"]).ok().json();
    doc["boxes"].as_array().unwrap().clone()
}

pub fn row(env: &TestEnv, leaf: &str) -> Option<serde_json::Value> {
    rows(env).into_iter().find(|b| b["name"] == leaf)
}

/// Admin dirs under `.git/worktrees/` whose `gitdir` names `path`.
pub fn admin_dirs_for(env: &TestEnv, path: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(env.repo.join(".git/worktrees")) else {
        return Vec::new();
    };
    rd.flatten()
        .map(|e| e.path())
        .filter(|admin| {
            std::fs::read_to_string(admin.join("gitdir"))
                .map(|t| Path::new(t.trim_end()).parent() == Some(path))
                .unwrap_or(false)
        })
        .collect()
}

/// Is `path` one of the worktrees git lists?
pub fn registered(env: &TestEnv, path: &Path) -> bool {
    let out = env.git(&env.repo, &["worktree", "list", "--porcelain"]);
    out.lines()
        .any(|l| l.strip_prefix("worktree ") == Some(&*path.to_string_lossy()))
}

pub fn fsck(env: &TestEnv) {
    let r = env.git_run(&env.repo, &["fsck", "--no-progress", "--strict"]);
    assert_eq!(r.code, 0, "git fsck of the user's repo\n{r:#?}");
    assert!(
        !r.stderr.contains("error") && !r.stdout.contains("missing"),
        "{r:#?}"
    );
}

/// Nothing of box `leaf` remains: no directory, registration, record, lock file, pin
/// or row; the user's repository is intact.
#[track_caller]
pub fn assert_gone(env: &TestEnv, leaf: &str) {
    let path = env.box_path(leaf);
    assert!(!path.exists(), "{} still exists", path.display());
    assert!(!registered(env, &path), "{leaf} is still registered");
    assert!(
        admin_dirs_for(env, &path).is_empty(),
        "an admin dir of {leaf} is left"
    );
    let state = repo_state(env);
    assert!(
        !state.join("boxes").join(leaf).exists(),
        "the bookkeeping dir of {leaf} is left"
    );
    assert!(
        !state.join("locks").join(format!("{leaf}.lock")).exists(),
        "the lock file of {leaf} is left"
    );
    let refs = env.git(&env.repo, &["for-each-ref", "--format=%(refname)"]);
    assert!(
        !refs.contains(&format!("refs/hort/{leaf}/base")),
        "the pin of {leaf} is left:\n{refs}"
    );
    assert!(row(env, leaf).is_none(), "list still shows {leaf}");
    fsck(env);
}

/// Box `leaf` is whole: checked out on `branch`, registered (worktree) or pinned
/// (clone), guarded, recorded with setup completed, clean, and listed as `ok`.
#[track_caller]
pub fn assert_whole(env: &TestEnv, leaf: &str, branch: &str, mode: &str) {
    let path = env.box_path(leaf);
    let r = row(env, leaf).unwrap_or_else(|| panic!("list does not show {leaf}"));
    assert_eq!(r["state"], "ok", "{r}");
    assert_eq!(r["deps"], "fresh", "{r}");
    assert_eq!(r["gitMode"], mode, "{r}");
    assert_eq!(r["branch"], branch, "{r}");
    assert_eq!(
        std::fs::read_to_string(path.join("README.md"))
            .ok()
            .as_deref(),
        Some("hello\n"),
        "the checkout of {leaf} is incomplete"
    );
    assert_eq!(
        env.git(&path, &["symbolic-ref", "--short", "HEAD"]).trim(),
        branch
    );
    let status = env.git(&path, &["status", "--porcelain"]);
    assert!(status.is_empty(), "{leaf} is not clean:\n{status}");
    let hooks = env.git(&path, &["config", "--worktree", "core.hooksPath"]);
    assert!(!hooks.trim().is_empty(), "the guard of {leaf} is missing");
    let base = env.git(&env.repo, &["rev-parse", "origin/main"]);
    if mode == "clone" {
        assert!(path.join(".git").is_dir());
        let pin = env.git_run(&env.repo, &["rev-parse", &format!("refs/hort/{leaf}/base")]);
        assert_eq!(pin.code, 0, "the pin of {leaf} is missing\n{pin:#?}");
        assert_eq!(pin.stdout, base);
    } else {
        assert!(registered(env, &path), "{leaf} is not registered");
        let admins = admin_dirs_for(env, &path);
        assert_eq!(admins.len(), 1, "{admins:?}");
        assert!(
            !admins[0].join("locked").exists(),
            "git still sees {leaf} as locked (half-made)"
        );
    }
    fsck(env);
}

/// Start `git-treebox ARGS` in its own process group, so the whole tree (treebox and
/// every child it started) can be killed at once, as a crash or a closed terminal does.
pub fn spawn_group(env: &TestEnv, args: &[&str]) -> Child {
    use std::os::unix::process::CommandExt;
    env.command(TREEBOX, &env.repo)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("spawn git-treebox")
}

/// SIGKILL every process of `child`'s group, and reap the child.
pub fn kill_group(child: &mut Child) {
    let st = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status()
        .expect("kill");
    assert!(st.success(), "kill -KILL -{}", child.id());
    child.wait().unwrap();
}

/// Wait (at most 20 s) until `marker` exists; false when `child` exited first.
pub fn wait_for(marker: &Path, child: &mut Child) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(20) {
        if marker.exists() {
            return true;
        }
        if let Ok(Some(_)) = child.try_wait() {
            return marker.exists();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// The effective user id, through `id -u` (root ignores permission bits).
pub fn euid() -> u32 {
    let out = std::process::Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}
