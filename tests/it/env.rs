//! A hermetic test environment: temp HOME and XDG dirs, a private git config, a bare
//! `origin` and a clone of it, fake harness programs on PATH, and helpers to run the
//! real binaries and to snapshot a repository for "nothing was written" assertions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const TREEBOX: &str = env!("CARGO_BIN_EXE_git-treebox");
pub const SANDBOX: &str = env!("CARGO_BIN_EXE_git-sandbox");

pub struct TestEnv {
    pub tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub bin: PathBuf,
    pub origin: PathBuf,
    pub repo: PathBuf,
    pub gitconfig: PathBuf,
    pub extra_env: Vec<(String, String)>,
}

/// What a finished command left behind.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from_output(o: Output) -> Run {
        use std::os::unix::process::ExitStatusExt;
        Run {
            code: o
                .status
                .code()
                .unwrap_or_else(|| 128 + o.status.signal().unwrap_or(0)),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    #[track_caller]
    pub fn ok(&self) -> &Run {
        assert_eq!(self.code, 0, "expected success\n{self:#?}");
        self
    }

    #[track_caller]
    pub fn code(&self, code: i32) -> &Run {
        assert_eq!(self.code, code, "expected exit {code}\n{self:#?}");
        self
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{self:#?}"))
    }
}

/// The observable state of a repository: refs, worktrees, config, excludes, the box
/// root, the checkouts root and the state dir. Equal snapshots mean nothing was written.
#[derive(Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub refs: String,
    pub worktrees: Vec<String>,
    config: String,
    exclude: String,
    files: BTreeMap<String, u64>,
    state: Vec<String>,
    /// The files under the checkouts root (container boxes' checkouts).
    checkouts: Vec<String>,
}

pub(crate) const FAKE_HARNESS: &str = r#"#!/bin/sh
# Records how it was launched, then exits with $FAKE_EXIT (default 0).
# With `--fake-hooks` among its arguments it stays up, as the real CLI does: each line
# on stdin names an event, answered on stdout with `done EVENT` once handled. `claude`
# runs the hooks its `--settings` file gives for that event, with Claude Code's hook
# JSON on stdin (through `sh -c`, in the project dir); `codex` runs its
# `-c notify=[...]` program after the event `turn`, with a turn's notification JSON as
# the last argument.
{
  printf 'prog=%s\n' "$(basename "$0")"
  printf 'cwd=%s\n' "$PWD"
  printf 'box=%s\n' "$TREEBOX_BOX"
  printf 'gh_token=%s\n' "${GH_TOKEN-unset}"
  for a in "$@"; do printf 'arg=%s\n' "$a"; done
} >> "$HOME/harness.log"
settings= notify= stay= prev=
for a in "$@"; do
  case $prev in
    --settings) settings=$a ;;
    -c) case $a in notify=*) notify=${a#notify=} ;; esac ;;
  esac
  [ "$a" = --fake-hooks ] && stay=1
  prev=$a
done
[ -n "$stay" ] || exit "${FAKE_EXIT:-0}"
# The commands of one event's hooks in a settings file as serde_json pretty-prints it.
hooks_for() {
  awk -v want="$1" '
    /^ *"[A-Za-z]+": \[/ { k = $0; sub(/^ *"/, "", k); sub(/".*/, "", k); if (k != "hooks") ev = k; next }
    /^ *"command": "/ && ev == want { c = $0; sub(/^ *"command": "/, "", c); sub(/",?$/, "", c); gsub(/\\"/, "\"", c); print c }
  ' "$settings"
}
extra() {
  case $1 in
    UserPromptSubmit) printf ',"prompt":"go on"' ;;
    PreToolUse) printf ',"tool_name":"Bash","tool_input":{"command":"true"}' ;;
    Notification) printf ',"message":"Claude is waiting for your input"' ;;
    Stop) printf ',"stop_hook_active":false' ;;
  esac
}
# notify=["sh","/x/status","idle"] -> sh /x/status idle (no spaces in a test's paths)
notify_argv=$(printf '%s' "$notify" | sed 's/^\[//; s/\]$//; s/","/ /g; s/"//g')
while IFS= read -r event; do
  case $(basename "$0") in
    codex)
      [ "$event" = turn ] && [ -n "$notify_argv" ] && $notify_argv '{"type":"agent-turn-complete","turn-id":"1","input-messages":["go on"],"last-assistant-message":"done"}'
      ;;
    *)
      json=$(printf '{"session_id":"fake-%s","transcript_path":"%s/fake.jsonl","cwd":"%s","permission_mode":"bypassPermissions","hook_event_name":"%s"%s}' "$$" "$HOME" "$PWD" "$event" "$(extra "$event")")
      [ -n "$settings" ] && hooks_for "$event" | while IFS= read -r cmd; do
        printf '%s\n' "$json" | CLAUDE_PROJECT_DIR=$PWD sh -c "$cmd"
        printf 'hook %s %s\n' "$event" "$json" >> "$HOME/harness.log"
      done
      ;;
  esac
  printf 'done %s\n' "$event"
done
exit "${FAKE_EXIT:-0}"
"#;

impl TestEnv {
    /// An origin with one commit on `main`, and a clone of it as the user's repo.
    pub fn new() -> TestEnv {
        let env = TestEnv::empty();
        let root = env.root();
        env.git(&root, &["init", "-q", "--bare", "origin.git"]);
        let seed = root.join("seed");
        env.git(&root, &["init", "-q", "seed"]);
        env.commit_file(&seed, "README.md", "hello\n", "initial");
        env.git(
            &seed,
            &["push", "-q", &env.origin.to_string_lossy(), "main"],
        );
        env.git(&root, &["clone", "-q", "origin.git", "repo"]);
        std::fs::remove_dir_all(&seed).unwrap();
        env
    }

    /// The hermetic world alone: temp HOME, git config and fake harnesses, but no
    /// `origin` or repository yet (`origin` and `repo` name paths that do not exist).
    /// The bench (`benches/speed.rs`) builds its own fixtures in it.
    pub fn empty() -> TestEnv {
        let tmp = tempfile::Builder::new()
            .prefix("treebox-it-")
            .tempdir()
            .expect("temp dir");
        let root = tmp.path().canonicalize().expect("canonical temp");
        let home = root.join("home");
        let bin = root.join("bin");
        for d in [&home, &bin] {
            std::fs::create_dir_all(d).unwrap();
        }
        let gitconfig = home.join(".gitconfig");
        std::fs::write(
            &gitconfig,
            "[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n[advice]\n\tdetachedHead = false\n",
        )
        .unwrap();
        for name in ["claude", "codex"] {
            write_exec(&bin.join(name), FAKE_HARNESS);
        }
        TestEnv {
            origin: root.join("origin.git"),
            repo: root.join("repo"),
            tmp,
            home,
            bin,
            gitconfig,
            extra_env: Vec::new(),
        }
    }

    pub fn root(&self) -> PathBuf {
        self.tmp.path().canonicalize().unwrap()
    }

    pub fn state_dir(&self) -> PathBuf {
        self.home.join(".local/state")
    }

    /// `$XDG_STATE_HOME/treebox/repos/<key>`: the fixture repository's bookkeeping.
    pub fn repo_state(&self) -> PathBuf {
        let common = self.repo.join(".git").canonicalize().unwrap();
        self.state_dir()
            .join("treebox/repos")
            .join(treebox::state::layout::repo_key(&common))
    }

    /// The bookkeeping dir of the fixture repository's box `leaf`.
    pub fn box_state(&self, leaf: &str) -> PathBuf {
        self.repo_state().join("boxes").join(leaf)
    }

    pub fn config_dir(&self) -> PathBuf {
        self.home.join(".config")
    }

    /// Where box `leaf`'s checkout is: where its record says when that is under the
    /// checkouts root (a container box), or when the record is gone and a checkout is
    /// there; else under the repository's box root (a host box, a box not made yet).
    pub fn box_path(&self, leaf: &str) -> PathBuf {
        let moved = self.checkout_path(leaf);
        let recorded = self
            .repo
            .join(".git")
            .exists()
            .then(|| std::fs::read(self.box_state(leaf).join("record.json")).ok())
            .flatten()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v["path"].as_str().map(PathBuf::from));
        match recorded {
            Some(p) if p == moved => moved,
            None if moved.exists() => moved,
            _ => self.in_tree_path(leaf),
        }
    }

    /// `<repo>/.treebox/worktrees/<leaf>`: a host box's checkout (and a container
    /// box's made before checkouts moved out of the working tree).
    pub fn in_tree_path(&self, leaf: &str) -> PathBuf {
        self.repo.join(".treebox/worktrees").join(leaf)
    }

    /// Where a container box `leaf` of the fixture repository keeps its checkout:
    /// `$XDG_DATA_HOME/treebox/checkouts/<key>/<leaf>`, outside the working tree.
    pub fn checkout_path(&self, leaf: &str) -> PathBuf {
        let git = self.repo.join(".git");
        let common = git.canonicalize().unwrap_or(git);
        self.home
            .join(".local/share/treebox/checkouts")
            .join(treebox::state::layout::repo_key(&common))
            .join(leaf)
    }

    /// The user config file (`$XDG_CONFIG_HOME/treebox/config.json`).
    pub fn write_config(&self, json: &str) -> PathBuf {
        let p = self.config_dir().join("treebox/config.json");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, json).unwrap();
        p
    }

    /// Put `dir` on every child's PATH, after the fake harnesses and before the
    /// system's directories (a real tool the test needs: cargo, lefthook).
    pub fn add_to_path(&mut self, dir: &Path) {
        self.extra_env.push((
            "PATH".into(),
            format!(
                "{}:{}:/usr/local/bin:/usr/bin:/bin",
                self.bin.display(),
                dir.display()
            ),
        ));
    }

    /// The base environment every child gets (nothing inherited but PATH's system dirs).
    pub fn apply_env(&self, c: &mut Command) {
        c.env_clear()
            .env("HOME", &self.home)
            .env(
                "PATH",
                format!(
                    "{}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    self.bin.to_string_lossy()
                ),
            )
            .env("XDG_CONFIG_HOME", self.config_dir())
            .env("XDG_STATE_HOME", self.state_dir())
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .env("GIT_CONFIG_GLOBAL", &self.gitconfig)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .env("TREEBOX_SEED", "42")
            .env("LC_ALL", "C")
            // One ledger of ports for every test's boxes (each has its own state dir):
            // two tests' containers never publish one port.
            .env("TREEBOX_PORTS_DIR", ports_ledger())
            .stdin(Stdio::null());
        for (k, v) in &self.extra_env {
            c.env(k, v);
        }
    }

    pub fn command(&self, program: &str, cwd: &Path) -> Command {
        let mut c = Command::new(program);
        self.apply_env(&mut c);
        c.current_dir(cwd);
        c
    }

    /// Run `git-treebox ARGS` in the user's repo.
    pub fn treebox(&self, args: &[&str]) -> Run {
        self.treebox_in(&self.repo, args)
    }

    pub fn treebox_in(&self, cwd: &Path, args: &[&str]) -> Run {
        Run::from_output(
            self.command(TREEBOX, cwd)
                .args(args)
                .output()
                .expect("run git-treebox"),
        )
    }

    pub fn sandbox(&self, args: &[&str]) -> Run {
        Run::from_output(
            self.command(SANDBOX, &self.repo)
                .args(args)
                .output()
                .expect("run git-sandbox"),
        )
    }

    /// Give the test's whole tree to `uid` (the tests that become a user who is not
    /// root).
    pub fn give_to(&self, uid: u32) {
        let chown = Command::new("chown")
            .args(["-R", &format!("{uid}:{uid}")])
            .arg(self.root())
            .status()
            .unwrap();
        assert!(chown.success());
    }

    /// `program ARGS` in the repo, run as `uid` with the extra group `group` (root
    /// drops to them with `setpriv`).
    pub fn run_as(&self, uid: u32, group: u32, program: &str, args: &[&str]) -> Run {
        let mut c = self.command("setpriv", &self.repo);
        c.args([
            &format!("--reuid={uid}"),
            &format!("--regid={uid}"),
            &format!("--groups={group}"),
            "--",
            program,
        ])
        .args(args);
        Run::from_output(c.output().unwrap())
    }

    /// Run git, which must succeed; returns stdout.
    #[track_caller]
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        run_ok(self.command("git", dir).args(args))
    }

    pub fn git_run(&self, dir: &Path, args: &[&str]) -> Run {
        Run::from_output(
            self.command("git", dir)
                .args(args)
                .output()
                .expect("run git"),
        )
    }

    /// Write `path` in the checkout at `dir` and commit it.
    pub fn commit_file(&self, dir: &Path, path: &str, content: &str, msg: &str) {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        self.git(dir, &["add", "--", path]);
        self.git(dir, &["commit", "-q", "-m", msg]);
    }

    /// Give the fixture two directories, `kept/a.txt` and `left/b.txt`, on origin's main
    /// too, and make the main checkout sparse: only `kept` is checked out.
    pub fn sparse_main(&self) {
        let repo = &self.repo;
        for (dir, file) in [("kept", "a.txt"), ("left", "b.txt")] {
            std::fs::create_dir_all(repo.join(dir)).unwrap();
            std::fs::write(repo.join(dir).join(file), format!("{file}\n")).unwrap();
        }
        self.git(repo, &["add", "."]);
        self.git(repo, &["commit", "-q", "-m", "two dirs"]);
        self.git(repo, &["push", "-q", "origin", "main"]);
        self.git(repo, &["sparse-checkout", "set", "kept"]);
    }

    /// Commit a file on origin's main (through a scratch clone), as a teammate would.
    pub fn push_to_origin(&self, path: &str, content: &str) -> String {
        let root = self.root();
        let mate = root.join("teammate");
        if !mate.exists() {
            self.git(&root, &["clone", "-q", "origin.git", "teammate"]);
        } else {
            self.git(&mate, &["pull", "-q"]);
        }
        self.commit_file(&mate, path, content, &format!("add {path}"));
        self.git(&mate, &["push", "-q", "origin", "main"]);
        self.git(&mate, &["rev-parse", "HEAD"]).trim().to_string()
    }

    /// Run `BINARY ARGS` in the repository on a pseudo-terminal (util-linux `script`),
    /// typing `input`. Returns whether it succeeded and what the terminal showed.
    pub fn on_tty(&self, binary: &str, args: &str, input: &str) -> (bool, String) {
        use std::io::Write;
        let line = format!("{binary} {args}");
        let mut child = self
            .command("script", &self.repo)
            .args(["-qec", &line, "/dev/null"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("util-linux script");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    /// Like [`TestEnv::on_tty`], but waits for the `[y/N]` question, runs `meanwhile`
    /// (what changes while the user reads it), and only then types `answer`.
    pub fn on_tty_answering(
        &self,
        binary: &str,
        args: &str,
        answer: &str,
        meanwhile: impl FnOnce(),
    ) -> (bool, String) {
        use std::io::{Read, Write};
        use std::time::{Duration, Instant};
        let line = format!("{binary} {args}");
        let mut child = self
            .command("script", &self.repo)
            .args(["-qec", &line, "/dev/null"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("util-linux script");
        let mut out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let mut seen = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !String::from_utf8_lossy(&seen).contains("[y/N]") {
            assert!(
                Instant::now() < deadline,
                "no question: {}",
                String::from_utf8_lossy(&seen)
            );
            if let Ok(chunk) = rx.recv_timeout(Duration::from_millis(200)) {
                seen.extend(chunk);
            }
        }
        meanwhile();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(answer.as_bytes()).unwrap();
        drop(stdin);
        let status = child.wait().unwrap();
        reader.join().unwrap();
        while let Ok(chunk) = rx.try_recv() {
            seen.extend(chunk);
        }
        (
            status.success(),
            String::from_utf8_lossy(&seen).into_owned(),
        )
    }

    pub fn harness_log(&self) -> String {
        std::fs::read_to_string(self.home.join("harness.log")).unwrap_or_default()
    }

    pub fn snapshot(&self) -> Snapshot {
        let refs = self.git(
            &self.repo,
            &["for-each-ref", "--format=%(refname) %(objectname)"],
        );
        let worktrees = walk_names(&self.repo.join(".git/worktrees"));
        let config = std::fs::read_to_string(self.repo.join(".git/config")).unwrap_or_default();
        let exclude =
            std::fs::read_to_string(self.repo.join(".git/info/exclude")).unwrap_or_default();
        let mut files = BTreeMap::new();
        collect_files(&self.repo, &self.repo, &mut files);
        let state = walk_names(&self.state_dir())
            .into_iter()
            // Files only: the fetch's repo-wide lock and stamp are not the box's.
            .filter(|p| self.state_dir().join(p).is_file())
            // Repository-wide locks and stamps, not a box's.
            .filter(|p| {
                !p.ends_with("fetch.lock")
                    && !p.ends_with("fetch.stamp")
                    && !p.ends_with("worktrees.lock")
            })
            // What machines last listed: a cache of their answers, not a box's.
            .filter(|p| !p.starts_with("treebox/machines/"))
            .collect();
        let data = self.home.join(".local/share/treebox/checkouts");
        let checkouts = walk_names(&data)
            .into_iter()
            .filter(|p| !data.join(p).is_dir())
            .collect();
        Snapshot {
            refs,
            worktrees,
            config,
            exclude,
            files,
            state,
            checkouts,
        }
    }
}

/// Make a FIFO at `path`, replacing a file there (what a hostile box plants where a
/// file belongs).
/// The ledger of ports the tests' boxes share (`TREEBOX_PORTS_DIR`), in the build's
/// own temp dir: every test's boxes, the tests that become another user included
/// (the directory is everyone's, sticky, and its lock file writable by all), so no two
/// tests' containers publish one port.
pub fn ports_ledger() -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    static MADE: std::sync::Once = std::sync::Once::new();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ports");
    MADE.call_once(|| {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let lock = dir.join(".lock");
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock)
            .unwrap();
        std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o666)).unwrap();
    });
    dir
}

pub fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let ok = Command::new("mkfifo").arg(path).status().unwrap().success();
    assert!(ok, "mkfifo {}", path.display());
}

pub fn write_exec(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn walk_names(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    fn go(base: &Path, d: &Path, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            out.push(p.strip_prefix(base).unwrap().to_string_lossy().into_owned());
            if p.is_dir() && !p.is_symlink() {
                go(base, &p, out);
            }
        }
    }
    go(dir, dir, &mut out);
    out.sort();
    out
}

/// Files of the working tree (not .git), with sizes.
fn collect_files(base: &Path, d: &Path, out: &mut BTreeMap<String, u64>) {
    let Ok(rd) = std::fs::read_dir(d) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.file_name().is_some_and(|n| n == ".git") {
            continue;
        }
        let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
        let m = std::fs::symlink_metadata(&p).unwrap();
        if m.is_dir() {
            out.insert(format!("{rel}/"), 0);
            collect_files(base, &p, out);
        } else {
            out.insert(rel, m.len());
        }
    }
}

/// Run `c` to completion; it must succeed. Returns stdout.
#[track_caller]
pub fn run_ok(c: &mut Command) -> String {
    let out = c.output().unwrap_or_else(|e| panic!("spawn {c:?}: {e}"));
    let r = Run::from_output(out);
    assert_eq!(r.code, 0, "{c:?} failed\n{r:#?}");
    r.stdout
}

/// The git the fixture's PATH finds (outside any wrapper a test puts in `bin`).
pub fn real_git() -> PathBuf {
    ["/usr/local/bin/git", "/usr/bin/git", "/bin/git"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .expect("a git binary in /usr/local/bin, /usr/bin or /bin")
}

/// The element of the array `doc[list]` whose `name` is `name` (a row of `list --json`,
/// a check of `doctor --json`); panics, showing the document, when there is none.
pub fn named(doc: &serde_json::Value, list: &str, name: &str) -> serde_json::Value {
    doc[list]
        .as_array()
        .and_then(|a| a.iter().find(|e| e["name"] == name))
        .cloned()
        .unwrap_or_else(|| panic!("no {list} entry named {name:?} in {doc}"))
}

/// A test's detached sessions (`create -d`, `up -d`) live in a tmux server on the
/// test's own socket: it goes with the test, never left running on the machine.
impl Drop for TestEnv {
    fn drop(&mut self) {
        let sock = self.state_dir().join("treebox/tmux.sock");
        if sock.exists() {
            let _ = Command::new("tmux")
                .arg("-S")
                .arg(&sock)
                .arg("kill-server")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// The processes on this machine for which `keep` holds, given each one's `/proc/PID`
/// directory (a process gone meanwhile reads as nothing: `keep` sees empty files).
pub fn processes_where(keep: impl Fn(&Path) -> bool) -> Vec<i32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse::<i32>().ok()?;
            keep(&e.path()).then_some(pid)
        })
        .collect()
}
