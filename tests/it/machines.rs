//! Other machines over real OpenSSH (issue 41, first slice: the contract and
//! `doctor`). Each test starts its own `sshd` (Debian's openssh-server) on a loopback
//! port with a host key of its own, for an account that is not the test's user (its
//! own HOME and treebox state), reached through a client config of the test's own
//! given as the machine's `sshCommand` (OpenSSH reads `~/.ssh` from the passwd entry,
//! not `$HOME`). [`Sshd`] puts everything back when dropped: the shared connections
//! closed, the server stopped, the account and its processes gone.
//!
//! Needs root (an account of its own) and `/usr/sbin/sshd`; without them the tests say
//! so and do not run, unless `TREEBOX_REQUIRE_SSH=1` (CI), where that fails them.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::env::{write_exec, TestEnv, TREEBOX};

const SSHD: &str = "/usr/sbin/sshd";

/// A test's own sshd and the account it lets in.
pub(crate) struct Sshd {
    /// The account's name and home.
    pub(crate) user: String,
    pub(crate) home: PathBuf,
    /// Where the keys, configs and logs are (a directory of the test's root).
    dir: PathBuf,
    pub(crate) port: u16,
    child: Option<Child>,
    /// The runtime dir treebox keeps its shared connections in.
    runtime: PathBuf,
}

fn run_ok(c: &mut Command) -> String {
    let out = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
    assert!(out.status.success(), "{c:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl Sshd {
    /// Start one for `env`, or `None` (with a note) where this machine cannot.
    pub(crate) fn start(env: &TestEnv) -> Option<Sshd> {
        let required = std::env::var("TREEBOX_REQUIRE_SSH").as_deref() == Ok("1");
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        if !root || !Path::new(SSHD).is_file() {
            let why = format!("needs root and {SSHD} (openssh-server)");
            assert!(!required, "TREEBOX_REQUIRE_SSH=1, but this test {why}");
            eprintln!("note: this machines test {why}; it did not run");
            return None;
        }
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let user = format!(
            "tbm{}x{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        run_ok(Command::new("useradd").args(["-m", "-s", "/bin/sh", &user]));
        let home = PathBuf::from(
            run_ok(Command::new("getent").args(["passwd", &user]))
                .trim()
                .split(':')
                .nth(5)
                .unwrap(),
        );
        let dir = env.root().join("ssh");
        let runtime = env.root().join("run");
        let mut sshd = Sshd {
            user,
            home,
            dir: dir.clone(),
            port: 0,
            child: None,
            runtime: runtime.clone(),
        };
        // From here on, dropping `sshd` puts everything back.
        run_ok(Command::new("usermod").args(["-p", "*", &sshd.user]));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&runtime).unwrap();
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
        for key in ["client", "host"] {
            run_ok(
                Command::new("ssh-keygen")
                    .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                    .arg(dir.join(key)),
            );
        }
        let dot_ssh = sshd.home.join(".ssh");
        std::fs::create_dir_all(&dot_ssh).unwrap();
        std::fs::copy(dir.join("client.pub"), dot_ssh.join("authorized_keys")).unwrap();
        run_ok(
            Command::new("chown")
                .arg("-R")
                .arg(&sshd.user)
                .arg(&dot_ssh),
        );
        std::fs::set_permissions(&dot_ssh, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::create_dir_all("/run/sshd").unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        sshd.port = port;
        std::fs::write(
            dir.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nPidFile {pid}\nUsePAM no\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
                 AuthorizedKeysFile .ssh/authorized_keys\nAllowUsers {user}\nPermitRootLogin no\n",
                host = dir.join("host").display(),
                pid = dir.join("sshd.pid").display(),
                user = sshd.user,
            ),
        )
        .unwrap();
        let host_pub = std::fs::read_to_string(dir.join("host.pub")).unwrap();
        std::fs::write(
            dir.join("known_hosts"),
            format!("[127.0.0.1]:{port} {host_pub}"),
        )
        .unwrap();
        std::fs::write(
            dir.join("ssh_config"),
            format!(
                "Host big\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  IdentityFile {key}\n  \
                 IdentitiesOnly yes\n  UserKnownHostsFile {known}\n  StrictHostKeyChecking yes\n",
                user = sshd.user,
                key = dir.join("client").display(),
                known = dir.join("known_hosts").display(),
            ),
        )
        .unwrap();
        sshd.child = Some(
            Command::new(SSHD)
                .args(["-D", "-e", "-f"])
                .arg(dir.join("sshd_config"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(dir.join("sshd.log")).unwrap())
                .spawn()
                .unwrap(),
        );
        let since = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                since.elapsed() < Duration::from_secs(10),
                "sshd did not listen: {}",
                sshd.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(sshd)
    }

    /// The machine's `sshCommand`: ssh with the test's client config.
    pub(crate) fn ssh_command(&self) -> String {
        format!("ssh -F {}", self.dir.join("ssh_config").display())
    }

    /// A directory the account may read, for programs it runs (a fake treebox).
    pub(crate) fn bin_dir(&self, name: &str) -> PathBuf {
        let d = self.home.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&self.home, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        d
    }

    /// A directory the account may run this build's binaries from, whatever the
    /// modes of the directories above the build (hard links, else copies).
    pub(crate) fn treebox_dir(&self) -> String {
        let d = self.bin_dir("treebox-bin");
        for from in [
            TREEBOX,
            crate::env::SANDBOX,
            env!("CARGO_BIN_EXE_git-treebox-guard"),
        ] {
            let to = d.join(Path::new(from).file_name().unwrap());
            if std::fs::hard_link(from, &to).is_err() {
                std::fs::copy(from, &to).unwrap();
            }
        }
        d.to_string_lossy().into_owned()
    }

    /// `env` with the runtime dir of this sshd's shared connections.
    pub(crate) fn for_treebox(&self, env: &mut TestEnv) {
        env.extra_env.push((
            "XDG_RUNTIME_DIR".into(),
            self.runtime.to_string_lossy().into_owned(),
        ));
    }

    /// Stop the server (its port then refuses).
    pub(crate) fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            // SAFETY: kill(2) with the server's pid; no memory is touched.
            unsafe {
                libc::kill(c.id() as i32, libc::SIGTERM);
            }
            let _ = c.wait();
        }
    }

    pub(crate) fn log(&self) -> String {
        let mut s = String::new();
        if let Ok(mut f) = std::fs::File::open(self.dir.join("sshd.log")) {
            let _ = f.read_to_string(&mut s);
        }
        s
    }

    /// The account's running processes.
    fn processes(&self) -> Vec<i32> {
        let uid: u32 = run_ok(Command::new("id").args(["-u", &self.user]))
            .trim()
            .parse()
            .unwrap();
        crate::env::processes_where(|p| {
            std::fs::read_to_string(p.join("status"))
                .unwrap_or_default()
                .lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
                .is_some_and(|u| u == uid.to_string())
        })
    }
}

impl Sshd {
    /// treebox's shared connections: each master told to go.
    pub(crate) fn close_connections(&self) {
        let sockets = self.runtime.join("treebox-ssh");
        for sock in std::fs::read_dir(&sockets).into_iter().flatten().flatten() {
            let _ = Command::new("ssh")
                .arg("-S")
                .arg(sock.path())
                .args(["-O", "exit", "big"])
                .stdin(Stdio::null())
                .output();
        }
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.close_connections();
        self.stop();
        let since = Instant::now();
        loop {
            let left = self.processes();
            if left.is_empty() || since.elapsed() > Duration::from_secs(10) {
                break;
            }
            for pid in left {
                // SAFETY: kill(2) with one of the account's pids.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = Command::new("userdel").args(["-r", &self.user]).output();
    }
}

/// A user config naming `machines` (JSON of the object).
pub(crate) fn machines_config(env: &TestEnv, machines: Value) {
    env.write_config(&serde_json::json!({ "machines": machines }).to_string());
}

/// [`doctor_machines`], which must answer within `secs` (a machine never hangs it).
#[track_caller]
fn doctor_within(env: &TestEnv, secs: u64) -> Vec<Value> {
    let since = Instant::now();
    let checks = doctor_machines(env);
    let took = since.elapsed();
    assert!(took < Duration::from_secs(secs), "doctor took {took:?}");
    checks
}

fn doctor_machines(env: &TestEnv) -> Vec<Value> {
    let r = env.treebox(&["doctor", "--json"]);
    let doc = r.json();
    crate::schema::assert_valid("doctor", &doc, "doctor --json");
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == "machines")
        .cloned()
        .collect()
}

/// `doctor` asks each machine's treebox over real ssh: the real one answers with its
/// version, tmux and engines; one whose sshd is stopped is said to be unreachable
/// quickly, without failing the rest; each machine is one `machines` check.
#[test]
fn doctor_asks_each_machine_over_real_ssh() {
    let mut env = TestEnv::new();
    let Some(mut sshd) = Sshd::start(&env) else {
        return;
    };
    sshd.for_treebox(&mut env);
    let bin = sshd.treebox_dir();
    machines_config(
        &env,
        serde_json::json!({
            "big": {"ssh": "big", "sshCommand": sshd.ssh_command(), "path": bin},
            "nowhere": {"ssh": "big", "sshCommand": format!("{} -p 1", sshd.ssh_command())},
        }),
    );
    let checks = doctor_machines(&env);
    assert_eq!(checks.len(), 2, "{checks:?}");
    let big = checks[0]["summary"].as_str().unwrap();
    assert_eq!(checks[0]["status"], "ok", "{checks:?}\n{}", sshd.log());
    assert!(
        big.starts_with("machine `big` (big): treebox ") && big.contains("tmux"),
        "{big}"
    );
    assert!(big.contains(env!("CARGO_PKG_VERSION")), "{big}");
    assert_eq!(checks[1]["status"], "advisory", "{checks:?}");
    let nowhere = checks[1]["summary"].as_str().unwrap();
    assert!(nowhere.contains("`nowhere` cannot be reached"), "{nowhere}");
    assert!(
        checks[1]["hint"]
            .as_str()
            .unwrap()
            .contains("BatchMode=yes"),
        "{checks:?}"
    );
    // The shared connection came up and is reused: the second look is quick.
    let since = Instant::now();
    let again = doctor_machines(&env);
    assert_eq!(again[0]["status"], "ok");
    assert!(
        since.elapsed() < Duration::from_secs(5),
        "{:?}",
        since.elapsed()
    );

    // The server gone: the machine is unreachable, said at once, the rest as before.
    sshd.stop();
    sshd.close_connections();
    let gone = doctor_within(&env, 5);
    assert_eq!(gone[0]["status"], "advisory", "{gone:?}");
    assert!(
        gone[0]["summary"]
            .as_str()
            .unwrap()
            .contains("`big` cannot be reached"),
        "{gone:?}"
    );
}

/// A machine whose treebox speaks another protocol is refused with both versions; one
/// whose treebox answers escapes, a lie about its length or a flood is refused or
/// shown harmless — never trusted, never a hang.
#[test]
fn doctor_refuses_a_machine_that_speaks_another_protocol_or_lies() {
    let mut env = TestEnv::new();
    let Some(sshd) = Sshd::start(&env) else {
        return;
    };
    sshd.for_treebox(&mut env);
    let fake = |name: &str, body: &str| -> String {
        let d = sshd.bin_dir(name);
        write_exec(
            &d.join("git-treebox"),
            &format!("#!/bin/sh\ncat >/dev/null\n{body}\n"),
        );
        d.to_string_lossy().into_owned()
    };
    let old = fake(
        "old",
        r#"printf 'Welcome!\ntreebox-remote 0 21\n{"version": "0.0.1"}\n'"#,
    );
    let escapes = fake(
        "escapes",
        r#"doc='{"version": "9\u001b]0;owned\u0007", "tmux": "tmux 3\u009b31m"}'; printf 'treebox-remote 1 %s\n%s\n' "${#doc}" "$doc""#,
    );
    let liar = fake("liar", r#"printf 'treebox-remote 1 999\n{}\n'"#);
    let flood = fake("flood", "head -c 9000000 /dev/zero | tr '\\0' x");
    let hangs = fake("hangs", "exec sleep 600");
    let machine = |path: &str| serde_json::json!({"ssh": "big", "sshCommand": sshd.ssh_command(), "path": path});
    machines_config(
        &env,
        serde_json::json!({
            "old": machine(&old), "escapes": machine(&escapes),
            "liar": machine(&liar), "flood": machine(&flood), "hangs": machine(&hangs),
        }),
    );
    let checks = doctor_within(&env, 20);
    let by = |name: &str| -> Value {
        checks
            .iter()
            .find(|c| {
                c["summary"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("`{name}`"))
            })
            .cloned()
            .unwrap_or_else(|| panic!("no check of {name}: {checks:?}"))
    };
    let old = by("old");
    let s = old["summary"].as_str().unwrap();
    assert!(
        s.contains("protocol 0 (treebox 0.0.1)") && s.contains(env!("CARGO_PKG_VERSION")),
        "{s}"
    );
    assert!(
        old["hint"].as_str().unwrap().contains("sh install.sh"),
        "{old}"
    );
    // create --on there: refused before anything is made, naming both versions and
    // how to install the same one.
    let before = env.snapshot();
    let e = env.treebox(&["create", "feat/x", "--on", "old"]);
    e.code(1);
    assert!(
        e.stderr.contains("protocol 0 (treebox 0.0.1)")
            && e.stderr.contains(env!("CARGO_PKG_VERSION"))
            && e.stderr.contains("sh install.sh"),
        "{e:?}"
    );
    assert_eq!(env.snapshot(), before, "a refused create --on wrote here");
    let esc = by("escapes");
    let s = esc["summary"].as_str().unwrap();
    assert!(!s.chars().any(|c| c.is_control()), "{s:?}");
    assert!(s.contains("\\u{1b}]0;owned"), "{s}");
    assert!(
        by("liar")["summary"]
            .as_str()
            .unwrap()
            .contains("cut short"),
        "{checks:?}"
    );
    // One that never answers is given up at its deadline (and its ssh killed).
    assert!(
        by("hangs")["summary"]
            .as_str()
            .unwrap()
            .contains("did not answer within 10 s"),
        "{checks:?}"
    );
    assert!(
        by("flood")["summary"]
            .as_str()
            .unwrap()
            .contains("more than"),
        "{checks:?}"
    );
}

/// The machine account's own treebox config: its Claude Code is a stand-in that
/// reports itself ready (as Claude Code's `SessionStart` hook does) and stays up.
pub(crate) fn remote_agent(sshd: &Sshd) {
    let bin = sshd.bin_dir("agent-bin");
    write_exec(
        &bin.join("claude"),
        "#!/bin/sh\nsettings= prev=\nfor a in \"$@\"; do [ \"$prev\" = --settings ] && settings=$a; prev=$a; done\n\
         env > \"$HOME/agent-env\"\nsh \"$(dirname \"$settings\")/status\" idle up\nexec sleep 600\n",
    );
    // A returning user of Claude Code there: its config exists (trust is carried into
    // it, never into a file Claude Code has not made).
    std::fs::write(sshd.home.join(".claude.json"), "{}").unwrap();
    run_ok(
        Command::new("chown")
            .arg(&sshd.user)
            .arg(sshd.home.join(".claude.json")),
    );
    let cfg = sshd.home.join(".config/treebox");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("config.json"),
        // Ports from a range of its own: the account keeps its own ledger, and its
        // servers listen on this same machine as the other tests' do.
        serde_json::json!({"harnesses": {"claude": {"program": bin.join("claude")}},
                           "ports": {"from": 31000}})
        .to_string(),
    )
    .unwrap();
    run_ok(
        Command::new("chown")
            .arg("-R")
            .arg(&sshd.user)
            .arg(sshd.home.join(".config")),
    );
}

/// What the machine's treebox keeps of the laptop's repositories: each mirror's refs
/// and each clone's boxes and records.
fn far_state(sshd: &Sshd) -> Vec<String> {
    let machines = sshd.home.join(".local/share/treebox/machines");
    let mut out = Vec::new();
    for key in std::fs::read_dir(&machines).into_iter().flatten().flatten() {
        let k = key.file_name().to_string_lossy().into_owned();
        out.push(format!(
            "{k}: {}",
            git_in(&key.path().join("mirror.git"), &["for-each-ref"])
        ));
        let boxes = key.path().join("repo/.treebox/worktrees");
        let mut names: Vec<String> = std::fs::read_dir(&boxes)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        out.push(format!("{k} boxes: {names:?}"));
    }
    out.sort();
    out
}

/// `git -c safe.directory=* -C DIR ARGS` (a directory of the machine's account).
fn git_in(dir: &Path, args: &[&str]) -> String {
    run_ok(
        Command::new("git")
            .args(["-c", "safe.directory=*", "-C"])
            .arg(dir)
            .args(args),
    )
    .trim()
    .to_string()
}

/// `create --on` over real ssh: origin fetched here, origin/<base> sent as a bundle,
/// the box made by that machine's own treebox (another account, another HOME) at the
/// fresh tip, its agent up there; `list` shows it beside this machine's boxes with its
/// machine; a name taken here, a machine not in the config and a machine that is down
/// are refused with their codes.
#[test]
fn create_on_a_machine_and_list_it_beside_this_ones() {
    let mut env = TestEnv::new();
    let Some(mut sshd) = Sshd::start(&env) else {
        return;
    };
    sshd.for_treebox(&mut env);
    remote_agent(&sshd);
    let bin = sshd.treebox_dir();
    machines_config(
        &env,
        serde_json::json!({"big": {"ssh": "big", "sshCommand": sshd.ssh_command(), "path": bin,
                                    "forwardEnv": ["TREEBOX_TEST_MODEL_KEY"]}}),
    );
    let secret = "sk-stand-in-model-key-0123456789";
    env.extra_env
        .push(("TREEBOX_TEST_MODEL_KEY".into(), secret.into()));
    env.treebox(&[
        "create",
        "here",
        "--isolation",
        "host",
        "--no-launch",
        "--no-fetch",
    ])
    .ok();

    std::fs::write(env.repo.join(".env"), "DOTENV_TOKEN=dotenv-secret-42\n").unwrap();
    // An ignored file `.worktreeinclude` names travels with the box too.
    let early = env.root().join("early");
    env.git(
        &env.root(),
        &["clone", "-q", &env.origin.to_string_lossy(), "early"],
    );
    std::fs::write(early.join(".gitignore"), "config/local.json\n").unwrap();
    env.commit_file(&early, ".worktreeinclude", "config/local.json\n", "include");
    env.git(&early, &["add", ".gitignore"]);
    env.git(&early, &["commit", "-qm", "ignore"]);
    env.git(&early, &["push", "-q", "origin", "main"]);
    env.git(&env.repo, &["pull", "-q"]);
    std::fs::create_dir_all(env.repo.join("config")).unwrap();
    std::fs::write(env.repo.join("config/local.json"), "{\"local\": true}\n").unwrap();
    // Every process's command line on this machine (both sides of the channel are
    // here) watched while the create runs: the key is on none of them.
    let watching = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let watcher = {
        let watching = watching.clone();
        let secret = secret.to_string();
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while watching.load(std::sync::atomic::Ordering::Relaxed) {
                seen.extend(crate::env::processes_where(|p| {
                    String::from_utf8_lossy(&std::fs::read(p.join("cmdline")).unwrap_or_default())
                        .contains(&secret)
                }));
                std::thread::sleep(Duration::from_millis(5));
            }
            seen
        })
    };
    let r = env.treebox(&[
        "create",
        "feat/far",
        "--on",
        "big",
        "--isolation",
        "host",
        "--json",
    ]);
    watching.store(false, std::sync::atomic::Ordering::Relaxed);
    let seen = watcher.join().unwrap();
    assert_eq!(
        seen,
        Vec::<i32>::new(),
        "the key was on a command line during the create"
    );
    let doc = r.ok().json();
    crate::schema::assert_valid("box-create", &doc, "create --on --json");
    assert_eq!(doc["machine"], "big", "{doc}");
    assert_eq!(doc["agent"]["state"], "ready", "{doc}");
    let path = PathBuf::from(doc["box"]["path"].as_str().unwrap());
    // The forwarded key reached the agent there, and no command line on either side.
    let agent_env = std::fs::read_to_string(sshd.home.join("agent-env")).unwrap();
    assert!(
        agent_env.contains(&format!("TREEBOX_TEST_MODEL_KEY={secret}")),
        "{agent_env}"
    );
    let shown = crate::env::processes_where(|p| {
        String::from_utf8_lossy(&std::fs::read(p.join("cmdline")).unwrap_or_default())
            .contains(secret)
    });
    assert_eq!(shown, Vec::<i32>::new(), "the key is on a command line");
    assert_eq!(
        std::fs::read_to_string(path.join("config/local.json")).unwrap(),
        "{\"local\": true}\n"
    );
    // The .env the box would get here is the box's there, 0600.
    let dotenv = path.join(".env");
    assert_eq!(
        std::fs::read_to_string(&dotenv).unwrap(),
        "DOTENV_TOKEN=dotenv-secret-42\n"
    );
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&dotenv).unwrap().mode() & 0o777, 0o600);
    assert!(
        path.starts_with(&sshd.home),
        "{path:?} is not the machine's"
    );
    let origin_tip = env.git(&env.repo, &["rev-parse", "origin/main"]);
    assert_eq!(git_in(&path, &["rev-parse", "HEAD"]), origin_tip.trim());
    assert_eq!(git_in(&path, &["branch", "--show-current"]), "feat/far");

    // This machine's user never trusted the main checkout: that machine's claude will
    // ask, and create said so.
    assert!(
        doc["agent"]["warnings"][0]
            .as_str()
            .is_some_and(|w| w.contains("will ask whether to trust")),
        "{doc}"
    );
    // Now they have: the trust travels to the clone there, and the next box's agent
    // comes up without asking.
    let main_key = env
        .repo
        .canonicalize()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    std::fs::write(
        env.home.join(".claude.json"),
        serde_json::json!({"projects": {main_key: {"hasTrustDialogAccepted": true}}}).to_string(),
    )
    .unwrap();

    // Work pushed to origin since: the next box there starts from it.
    let seed = env.root().join("pusher");
    env.git(
        &env.root(),
        &["clone", "-q", &env.origin.to_string_lossy(), "pusher"],
    );
    env.commit_file(&seed, "later.txt", "later\n", "later work");
    env.git(&seed, &["push", "-q", "origin", "main"]);
    let r = env.treebox(&["create", "feat/later", "--on", "big", "--isolation", "host"]);
    r.ok();
    assert!(r.stderr.contains("made on machine `big`"), "{r:?}");
    assert!(!r.stderr.contains("will ask whether to trust"), "{r:?}");
    let there: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sshd.home.join(".claude.json")).unwrap()).unwrap();
    let clone = path
        .ancestors()
        .find(|a| a.ends_with("repo"))
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(
        there["projects"][&clone]["hasTrustDialogAccepted"], true,
        "{there}"
    );
    let later = PathBuf::from(r.stdout.trim());
    assert_eq!(
        git_in(&later, &["rev-parse", "HEAD"]),
        git_in(&seed, &["rev-parse", "HEAD"])
    );

    // A name a machine has is taken too; nothing is made on either side.
    let (here_before, there_before) = (env.snapshot(), far_state(&sshd));
    let e = env.treebox(&["create", "feat/later", "--on", "big"]);
    e.code(5);
    assert!(e.stderr.contains("on machine `big` already"), "{e:?}");
    assert_eq!(env.snapshot(), here_before);
    assert_eq!(far_state(&sshd), there_before);

    // list: both sides, the far ones with their machine.
    let listed = env.treebox(&["list", "--json"]).ok().json();
    crate::schema::assert_valid("list", &listed, "list --json with machines");
    let names: Vec<(String, String)> = listed["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["machine"].as_str().unwrap_or("-").to_string(),
                b["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("-".to_string(), "here".to_string()),
            ("big".into(), "feat--far".into()),
            ("big".into(), "feat--later".into())
        ]
    );
    let far = &listed["boxes"][1];
    assert_eq!(far["session"], "live", "{far}");
    assert_eq!(far["status"], "idle", "{far}");
    // git sandbox ls: every repository's boxes, those on machines with theirs.
    let ls = env.sandbox(&["ls", "--json"]).ok().json();
    crate::schema::assert_valid("sandbox-ls", &ls, "ls --json with machines");
    let far_ls = crate::env::named(&ls, "boxes", "feat--far");
    assert_eq!(far_ls["machine"], "big", "{ls}");
    assert_eq!(
        far_ls["repo"].as_str().unwrap(),
        env.repo.canonicalize().unwrap().to_string_lossy(),
        "{ls}"
    );
    // Both tables: a MACHINE column, the far box on big's row.
    for table in [
        env.sandbox(&["ls"]).ok().stdout.clone(),
        env.treebox(&["list"]).ok().stdout.clone(),
    ] {
        assert!(table.starts_with("MACHINE "), "{table}");
        let far_row = |l: &str| l.starts_with("big ") && l.contains("feat--far");
        assert!(table.lines().any(far_row), "{table}");
    }

    // run and enter by name, there: the command's own exit code and output.
    let r = env.sandbox(&[
        "run",
        "feat/far",
        "--",
        "sh",
        "-c",
        "pwd; echo \"$TREEBOX_BOX\"; exit 3",
    ]);
    r.code(3);
    assert_eq!(
        r.stdout.lines().collect::<Vec<_>>(),
        [path.to_string_lossy().as_ref(), "feat--far"],
        "{r:?}"
    );
    let r = env.treebox(&["enter", "-d", "feat--far"]);
    r.ok();
    assert!(r.stderr.contains("already running"), "{r:?}");

    // enter on a terminal attaches there; the SSH client killed, the agent runs on,
    // and a second enter attaches again.
    let socket = sshd.home.join(".local/state/treebox/tmux.sock");
    let clients = || {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["list-clients", "-F", "#{client_tty}"])
            .env_remove("TMUX")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).lines().count()
    };
    for round in 0..2 {
        let mut c = env.command("script", &env.repo);
        c.args(["-qec", &format!("{TREEBOX} enter feat--far"), "/dev/null"])
            .env("TERM", "xterm")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut attached = c.spawn().unwrap();
        let since = Instant::now();
        while clients() == 0 {
            assert!(
                since.elapsed() < Duration::from_secs(15),
                "round {round}: no client attached there"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // The laptop's end goes (a closed lid, a killed terminal).
        attached.kill().unwrap();
        attached.wait().unwrap();
        let since = Instant::now();
        while clients() > 0 {
            assert!(
                since.elapsed() < Duration::from_secs(15),
                "round {round}: the client there outlived the connection"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let row = env.treebox(&["list", "--json"]).ok().json();
        let far = crate::env::named(&row, "boxes", "feat--far");
        assert_eq!(far["session"], "live", "round {round}: {far}");
    }

    // git sandbox up --on: the box made there, a shell in it on this terminal.
    let mut c = env.command("script", &env.repo);
    c.args([
        "-qec",
        &format!(
            "{} up feat/shell --on big --isolation host",
            crate::env::SANDBOX
        ),
        "/dev/null",
    ])
    .env("TERM", "xterm")
    .stdin(Stdio::piped())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    let mut up = c.spawn().unwrap();
    let since = Instant::now();
    while clients() == 0 {
        assert!(since.elapsed() < Duration::from_secs(20), "no shell there");
        std::thread::sleep(Duration::from_millis(50));
    }
    {
        use std::io::Write;
        let stdin = up.stdin.as_mut().unwrap();
        stdin
            .write_all(b"echo up-$((40+2)) > up-was-here; exit\r")
            .unwrap();
    }
    let since = Instant::now();
    while up.try_wait().unwrap().is_none() {
        assert!(
            since.elapsed() < Duration::from_secs(20),
            "the shell there did not end"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let listed = env.treebox(&["list", "--json"]).ok().json();
    let shell_box = crate::env::named(&listed, "boxes", "feat--shell");
    assert_eq!(shell_box["machine"], "big", "{listed}");
    let shell_path = PathBuf::from(shell_box["path"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(shell_path.join("up-was-here")).unwrap(),
        "up-42\n"
    );
    env.sandbox(&["down", "-f", "feat--shell"]).ok();

    // rm and down there: refused off a terminal while its agent runs and it holds work
    // this repository does not have; removed with -f.
    env.sandbox(&[
        "run",
        "feat--far",
        "--",
        "sh",
        "-c",
        "echo w > w.txt && git add w.txt && git -c user.name=a -c user.email=a@b commit -qm work",
    ])
    .ok();
    let e = env.sandbox(&["down", "feat--far"]);
    e.code(5);
    assert!(e.stderr.contains("machine `big`"), "{e:?}");
    let e = env.treebox(&["rm", "feat--far"]);
    e.code(5);
    assert!(path.is_dir(), "a refused rm removed the box there");
    let r = env.treebox(&["rm", "--force", "feat--far", "--json"]);
    let doc = r.ok().json();
    assert_eq!(doc["machine"], "big", "{doc}");
    assert!(!path.exists(), "the box is still there");
    let r = env.sandbox(&["down", "-f", "feat--later"]);
    r.ok();
    assert!(r.stderr.contains("on machine `big`"), "{r:?}");
    let left = env.treebox(&["list", "--json"]).ok().json();
    assert_eq!(left["boxes"].as_array().unwrap().len(), 1, "{left}");

    // Refusals: a name taken here (5), a machine not in the config (2), nothing made
    // on either side.
    let (here_before, there_before) = (env.snapshot(), far_state(&sshd));
    let e = env.treebox(&["create", "here", "--on", "big"]);
    e.code(5);
    let e = env.treebox(&["create", "x", "--on", "small"]);
    e.code(2);
    assert!(e.stderr.contains("no machine `small`"), "{e:?}");
    // The machine down: 4, named; list still answers, with a warning.
    sshd.stop();
    sshd.close_connections();
    let e = env.treebox(&["create", "feat/down", "--on", "big"]);
    e.code(4);
    assert!(e.stderr.contains("machine `big`"), "{e:?}");
    assert_eq!(
        env.snapshot(),
        here_before,
        "a refused create --on wrote here"
    );
    assert_eq!(
        far_state(&sshd),
        there_before,
        "a refused create --on wrote there"
    );
    let listed = env.treebox(&["list", "--json"]).ok().json();
    assert_eq!(listed["boxes"].as_array().unwrap().len(), 1, "{listed}");
    let r = env.treebox(&["list"]);
    r.ok();
    assert!(r.stderr.contains("`big` cannot be reached"), "{r:?}");
    assert!(r.stdout.contains("here"), "{r:?}");
}

mod back;
mod far_agents;
mod far_ports;
mod hostile;
mod listing;
