//! Integration tests of the guard with real git: bare origin + clone + linked worktree.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use treebox::guard::HOOK_NAMES;
use treebox::provision::guard::{enable_worktree_config, install, GUARD_EXE_NAME};

const GUARD_BIN: &str = env!("CARGO_BIN_EXE_git-treebox-guard");

/// A hermetic playground: `origin.git` (bare), `repo` (clone, main worktree), and
/// `box` (a linked worktree on `treebox/brave-otter`), the guard not yet installed.
struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    origin: PathBuf,
    repo: PathBuf,
    wt: PathBuf,
}

impl Env {
    fn new() -> Env {
        Env::with_setup(|_| {})
    }

    /// `before_worktree` runs in the main worktree after the first commit is pushed and
    /// before the box's worktree is added (to commit e.g. `.husky/`).
    fn with_setup(before_worktree: impl FnOnce(&Env)) -> Env {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().canonicalize().expect("canonical tmp");
        fs::create_dir_all(root.join("home")).expect("home");
        fs::write(
            root.join("gitconfig"),
            "[user]\n\tname = T\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n\
             [advice]\n\tdetachedHead = false\n",
        )
        .expect("gitconfig");
        let env = Env {
            origin: root.join("origin.git"),
            repo: root.join("repo"),
            wt: root.join("box"),
            root,
            _tmp: tmp,
        };
        env.ok(&env.root, &["init", "-q", "--bare", "origin.git"]);
        env.ok(&env.root, &["clone", "-q", "origin.git", "repo"]);
        env.commit(&env.repo, "README", "hello\n");
        env.ok(&env.repo, &["push", "-q", "origin", "main"]);
        before_worktree(&env);
        env.ok(
            &env.repo,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "treebox/brave-otter",
                "../box",
                "main",
            ],
        );
        env
    }

    fn git(&self, dir: &Path, args: &[&str]) -> Output {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", self.root.join("home"))
            .env("GIT_CONFIG_GLOBAL", self.root.join("gitconfig"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
            .env("LC_ALL", "C")
            .output()
            .expect("run git")
    }

    fn ok(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.git(dir, args);
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
    }

    fn commit(&self, dir: &Path, file: &str, content: &str) {
        fs::write(dir.join(file), content).expect("write file");
        self.ok(dir, &["add", file]);
        self.ok(dir, &["commit", "-q", "-m", file]);
    }

    fn private_dir(&self) -> PathBuf {
        PathBuf::from(self.ok(&self.wt, &["rev-parse", "--absolute-git-dir"]))
    }

    fn common_dir(&self) -> PathBuf {
        self.repo.join(".git")
    }

    /// Installs from a copy of the built guard, which the test may delete afterwards.
    fn install(&self) -> PathBuf {
        let exe = self.original_exe();
        if !exe.exists() {
            fs::create_dir_all(exe.parent().expect("parent")).expect("bin dir");
            fs::copy(GUARD_BIN, &exe).expect("copy guard");
        }
        install(&self.private_dir(), &self.common_dir(), &exe).expect("install guard")
    }

    fn original_exe(&self) -> PathBuf {
        self.root.join("bin").join(GUARD_EXE_NAME)
    }

    fn origin_branches(&self) -> String {
        self.ok(
            &self.origin,
            &["for-each-ref", "--format=%(refname)", "refs/heads"],
        )
    }

    /// Writes an executable hook script.
    fn hook(&self, path: &Path, body: &str) {
        fs::create_dir_all(path.parent().expect("parent")).expect("hooks dir");
        fs::write(path, format!("#!/bin/sh\n{body}\n")).expect("write hook");
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    fn marker(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn push_of_placeholder_branch_is_refused() {
    let env = Env::new();
    env.install();
    env.commit(&env.wt, "a", "a\n");
    let out = env.git(&env.wt, &["push", "origin", "treebox/brave-otter"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("treebox guard: push refused: `treebox/brave-otter` is a placeholder branch"),
        "{err}"
    );
    assert!(err.contains("git branch -m"), "{err}");
    assert_eq!(env.origin_branches(), "refs/heads/main");
}

#[test]
fn push_of_head_from_placeholder_is_refused() {
    let env = Env::new();
    env.install();
    for spec in ["HEAD", "HEAD:refs/heads/feat/real", "@:feat/real"] {
        let out = env.git(&env.wt, &["push", "origin", spec]);
        assert!(!out.status.success(), "{spec} was pushed");
        assert!(
            stderr(&out).contains("push refused"),
            "{spec}: {}",
            stderr(&out)
        );
    }
    // Pushing some other branch under a placeholder name is refused too.
    let out = env.git(&env.wt, &["push", "origin", "main:treebox/other"]);
    assert!(!out.status.success());
    assert_eq!(env.origin_branches(), "refs/heads/main");
}

#[test]
fn normal_branch_pushes_and_repo_pre_push_runs_with_same_stdin() {
    let env = Env::new();
    let marker = env.marker("pre-push-ran");
    env.hook(
        &env.common_dir().join("hooks/pre-push"),
        &format!("echo \"$@\" > '{0}'; cat >> '{0}'", marker.display()),
    );
    env.install();
    env.ok(&env.wt, &["branch", "-m", "feat/login-form"]);
    env.commit(&env.wt, "a", "a\n");
    env.ok(&env.wt, &["push", "-q", "origin", "HEAD"]);
    assert!(env.origin_branches().contains("refs/heads/feat/login-form"));
    let seen = fs::read_to_string(&marker).expect("repo pre-push ran");
    let head = env.ok(&env.wt, &["rev-parse", "HEAD"]);
    assert!(seen.starts_with("origin "), "{seen}");
    assert!(
        seen.contains(&format!("HEAD {head} refs/heads/feat/login-form ")),
        "{seen}"
    );
}

#[test]
fn failing_repo_pre_push_blocks_allowed_push() {
    let env = Env::new();
    env.hook(
        &env.common_dir().join("hooks/pre-push"),
        "cat >/dev/null; exit 3",
    );
    env.install();
    env.ok(&env.wt, &["branch", "-m", "feat/x"]);
    let out = env.git(&env.wt, &["push", "origin", "feat/x"]);
    assert!(!out.status.success());
    assert_eq!(env.origin_branches(), "refs/heads/main");
}

#[test]
fn repo_pre_push_not_run_when_refused() {
    let env = Env::new();
    let marker = env.marker("pre-push-ran");
    env.hook(
        &env.common_dir().join("hooks/pre-push"),
        &format!("touch '{}'", marker.display()),
    );
    env.install();
    let out = env.git(&env.wt, &["push", "origin", "HEAD"]);
    assert!(!out.status.success());
    assert!(!marker.exists());
}

#[test]
fn repo_pre_commit_runs_in_box_and_its_exit_code_counts() {
    let env = Env::new();
    let marker = env.marker("pre-commit-ran");
    let hook = env.common_dir().join("hooks/pre-commit");
    env.hook(&hook, &format!("pwd > '{}'", marker.display()));
    env.install();
    env.commit(&env.wt, "a", "a\n");
    let cwd = fs::read_to_string(&marker).expect("repo pre-commit ran");
    assert_eq!(cwd.trim(), env.wt.display().to_string());

    env.hook(&hook, "echo no >&2; exit 1");
    fs::write(env.wt.join("b"), "b").expect("write");
    env.ok(&env.wt, &["add", "b"]);
    let out = env.git(&env.wt, &["commit", "-q", "-m", "b"]);
    assert!(!out.status.success(), "failing pre-commit did not block");
}

#[test]
fn non_executable_repo_hook_is_skipped_and_shebangless_hook_runs_via_sh() {
    let env = Env::new();
    let marker = env.marker("ran");
    let hook = env.common_dir().join("hooks/pre-commit");
    fs::write(&hook, format!("touch '{}'\n", marker.display())).expect("write");
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o644)).expect("chmod");
    env.install();
    env.commit(&env.wt, "a", "a\n");
    assert!(!marker.exists());

    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).expect("chmod");
    env.commit(&env.wt, "b", "b\n");
    assert!(marker.exists(), "shebang-less hook did not run");
}

#[test]
fn shared_hooks_path_in_repo_config_is_followed() {
    let env = Env::with_setup(|env| {
        let hook = env.repo.join(".husky/pre-commit");
        env.hook(&hook, "touch \"$MARKER\"");
        env.ok(&env.repo, &["add", ".husky/pre-commit"]);
        env.ok(&env.repo, &["commit", "-q", "-m", "husky"]);
        env.ok(&env.repo, &["config", "core.hooksPath", ".husky"]);
    });
    env.install();
    let marker = env.marker("husky-ran");
    let out = Command::new("git")
        .args(["commit", "-q", "--allow-empty", "-m", "x"])
        .current_dir(&env.wt)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", env.root.join("home"))
        .env("GIT_CONFIG_GLOBAL", env.root.join("gitconfig"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("MARKER", &marker)
        .output()
        .expect("commit");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(marker.exists(), "husky pre-commit did not run in the box");
    // The box's own placeholder push is still refused despite the shared hooksPath.
    let out = env.git(&env.wt, &["push", "origin", "HEAD"]);
    assert!(!out.status.success());
}

#[test]
fn main_worktree_is_unaffected() {
    let env = Env::new();
    let hooks = env.install();
    let scopes = env.git(
        &env.repo,
        &["config", "--show-scope", "--get-all", "core.hooksPath"],
    );
    assert_eq!(
        scopes.status.code(),
        Some(1),
        "main worktree has a hooksPath"
    );
    let git_path = env.ok(&env.repo, &["rev-parse", "--git-path", "hooks"]);
    assert_eq!(git_path, ".git/hooks");
    let in_box = env.ok(&env.wt, &["config", "--show-scope", "core.hooksPath"]);
    assert_eq!(in_box, format!("worktree\t{}", hooks.display()));
    // From the main worktree the guard does not run (it guards boxes only).
    let out = env.git(&env.repo, &["push", "-q", "origin", "treebox/brave-otter"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        env.ok(
            &env.common_dir(),
            &["config", "--file", "config", "extensions.worktreeConfig"]
        ),
        "true"
    );
}

#[test]
fn deleting_remote_placeholder_is_allowed_and_no_verify_escapes() {
    let env = Env::new();
    env.install();
    env.ok(&env.wt, &["push", "-q", "--no-verify", "origin", "HEAD"]);
    assert!(env.origin_branches().contains("treebox/brave-otter"));
    env.ok(
        &env.wt,
        &["push", "-q", "origin", "--delete", "treebox/brave-otter"],
    );
    assert_eq!(env.origin_branches(), "refs/heads/main");
}

#[test]
fn guard_copy_is_self_sufficient() {
    let env = Env::new();
    let hooks = env.install();
    fs::remove_file(env.original_exe()).expect("delete original");
    // env.git's PATH holds only system dirs: no treebox binary is reachable.
    let out = env.git(&env.wt, &["push", "origin", "HEAD"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("push refused"));
    assert!(hooks.join(GUARD_EXE_NAME).is_file());
}

#[test]
fn install_is_idempotent_and_atomic_looking() {
    let env = Env::new();
    let first = env.install();
    let second = env.install();
    assert_eq!(first, second);
    assert_eq!(first, env.private_dir().join("treebox-hooks"));
    let mode = fs::metadata(&first).expect("dir").permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
    let copy = fs::metadata(first.join(GUARD_EXE_NAME)).expect("copy");
    assert_eq!(copy.permissions().mode() & 0o777, 0o755);
    let mut names: Vec<String> = fs::read_dir(&first)
        .expect("read hooks dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = HOOK_NAMES.iter().map(|s| s.to_string()).collect();
    expected.push(GUARD_EXE_NAME.to_owned());
    expected.push(treebox::provision::guard::HOOKS_README_NAME.to_owned());
    expected.sort();
    assert_eq!(names, expected, "stray files in the hooks dir");
    let note = fs::metadata(first.join(treebox::provision::guard::HOOKS_README_NAME)).unwrap();
    assert!(note.is_file() && note.permissions().mode() & 0o111 == 0);
    for name in HOOK_NAMES {
        let m = fs::metadata(first.join(name)).expect("hook");
        assert_eq!((m.dev(), m.ino()), (copy.dev(), copy.ino()), "{name}");
    }
    assert_eq!(copy.nlink() as usize, HOOK_NAMES.len() + 1);
    let all = env.ok(
        &env.wt,
        &["config", "--show-scope", "--get-all", "core.hooksPath"],
    );
    assert_eq!(all.lines().count(), 1, "{all}");
}

#[test]
fn enable_worktree_config_survives_concurrent_writers() {
    for round in 0..5 {
        let env = Env::new();
        let common = env.common_dir();
        let start = std::sync::Barrier::new(8);
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        start.wait();
                        enable_worktree_config(&common)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("thread"))
                .collect()
        });
        for r in results {
            r.unwrap_or_else(|e| panic!("round {round}: {e:?}"));
        }
        assert_eq!(
            env.ok(
                &common,
                &[
                    "config",
                    "--file",
                    "config",
                    "--get-all",
                    "extensions.worktreeConfig"
                ]
            ),
            "true"
        );
        // The rest of the config survived the rewrites.
        assert!(env
            .ok(&env.repo, &["remote", "get-url", "origin"])
            .ends_with("origin.git"));
    }
}

#[test]
fn concurrent_installs_into_different_boxes() {
    let env = Env::new();
    let exe = env.original_exe();
    fs::create_dir_all(exe.parent().expect("parent")).expect("bin");
    fs::copy(GUARD_BIN, &exe).expect("copy");
    let boxes: Vec<PathBuf> = (0..4)
        .map(|i| {
            let name = format!("box{i}");
            env.ok(
                &env.repo,
                &[
                    "worktree",
                    "add",
                    "-q",
                    "-b",
                    &format!("treebox/b{i}"),
                    &format!("../{name}"),
                    "main",
                ],
            );
            env.root.join(name)
        })
        .collect();
    let common = env.common_dir();
    std::thread::scope(|s| {
        for b in &boxes {
            let private = PathBuf::from(env.ok(b, &["rev-parse", "--absolute-git-dir"]));
            let (common, exe) = (&common, &exe);
            s.spawn(move || install(&private, common, exe).expect("install"));
        }
    });
    for b in &boxes {
        let out = env.git(b, &["push", "origin", "HEAD"]);
        assert!(!out.status.success(), "{}", b.display());
    }
}

#[test]
fn guard_binary_cli() {
    let run = |args: &[&str]| Command::new(GUARD_BIN).args(args).output().expect("run");
    let v = run(&["--version"]);
    assert_eq!(v.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&v.stdout),
        format!("git-treebox-guard {}\n", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(run(&["--help"]).status.code(), Some(0));
    assert_eq!(run(&[]).status.code(), Some(2));
    assert_eq!(run(&["push-to-checkout"]).status.code(), Some(2));
}

#[test]
fn pre_push_fails_closed_on_garbage() {
    let env = Env::new();
    let hooks = env.install();
    let mut child = Command::new(hooks.join("pre-push"))
        .args(["origin", "url"])
        .current_dir(&env.wt)
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"this is not a push line\n")
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("line 1"), "{}", stderr(&out));
}
