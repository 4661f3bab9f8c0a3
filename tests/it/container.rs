//! Container isolation against the real engines (docker, and podman where it works).
//!
//! Images are built from the local test image (`../shared/scripts/make-test-image`,
//! `treebox-test-base:1`) through a user template with `INSTALL_AGENTS=0`, so nothing
//! is pulled. Each test gets a build argument of its own, which docker's layer cache
//! ignores (the Dockerfile does not declare it) but which gives the test an image tag of
//! its own, so one test removing its image never pulls another's away. Every container
//! a test made is removed when it ends, through the repository label.
//!
//! With `TREEBOX_REQUIRE_ENGINE=1` (CI sets it) a missing engine fails the test;
//! otherwise the test says so and passes without checking anything else.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::env::{write_exec, Run, TestEnv};

pub(crate) const BASE: &str = "treebox-test-base:1";

pub(crate) fn engine_works(engine: &str) -> bool {
    let ok = Command::new(engine)
        .args(["image", "inspect", BASE])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok && std::env::var("TREEBOX_REQUIRE_ENGINE").is_ok_and(|v| v == "1") {
        panic!("{engine} with {BASE} is required (TREEBOX_REQUIRE_ENGINE=1); run ../shared/scripts/setup-engines");
    }
    if !ok {
        eprintln!("note: {engine} or {BASE} not available; container test skipped");
    }
    ok
}

/// A test environment with a user template `test` for `engine`, and cleanup.
pub(crate) struct Boxed {
    pub(crate) env: TestEnv,
    pub(crate) engine: &'static str,
    pub(crate) id: String,
    /// Environment for every engine command of the test (and its cleanup).
    engine_env: Vec<(String, String)>,
    /// The engine is this user's own (rootless podman): the test's engine commands run
    /// as that user, in the test's environment.
    engine_user: Option<u32>,
}

impl Drop for Boxed {
    fn drop(&mut self) {
        let label = format!("label=org.treebox.repo={}", self.env.repo.display());
        if let Ok(out) = self.engine_cmd(&["ps", "-aq", "--filter", &label]).output() {
            for id in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let _ = self.engine_cmd(&["rm", "-f", id]).output();
            }
        }
        for srv in ["allowed", "denied", "git"] {
            let _ = self
                .engine_cmd(&["rm", "-f", &format!("tbsrv-{srv}-{}", self.id)])
                .output();
        }
        let _ = self
            .engine_cmd(&["network", "rm", &format!("tbnet-{}", self.id)])
            .output();
        // The test's images stay until the last test process goes (see
        // `remove_test_images_at_exit`): they are tags over shared layers, and removing
        // one while another test builds on those layers breaks that build.
    }
}

fn unique() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{}x{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// The lock every test process holding images of its own shares (`LOCK_SH`) while it
/// lives; machine-wide, so concurrent test runs see each other.
const IMAGES_LOCK: &str = "/tmp/treebox-test-images.lock";

/// Remove the test images (every image carrying `org.treebox.test-id`) when the last test
/// process on this machine that made some exits. One test's tag cannot go earlier: its
/// layers may be the cache another test's build is using at that moment. The base image
/// (`treebox-test-base:1`) carries no such label and stays.
fn remove_test_images_at_exit() {
    use std::os::fd::IntoRawFd;
    static ONCE: std::sync::Once = std::sync::Once::new();
    static FD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);
    extern "C" fn last_one_out() {
        let fd = FD.load(std::sync::atomic::Ordering::SeqCst);
        // SAFETY: a descriptor this process opened and never closed.
        if fd < 0 || unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return;
        }
        for engine in ["docker", "podman"] {
            let Ok(out) = Command::new(engine)
                .args(["images", "-q", "--filter", "label=org.treebox.test-id"])
                .output()
            else {
                continue;
            };
            let ids: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .map(String::from)
                .collect();
            if !ids.is_empty() {
                let _ = Command::new(engine)
                    .args(["image", "rm", "-f"])
                    .args(&ids)
                    .output();
            }
        }
    }
    ONCE.call_once(|| {
        let Ok(f) = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(IMAGES_LOCK)
        else {
            return;
        };
        let fd = f.into_raw_fd();
        // SAFETY: a descriptor just opened; the handler is a plain extern "C" fn.
        unsafe {
            if libc::flock(fd, libc::LOCK_SH) == 0 {
                FD.store(fd, std::sync::atomic::Ordering::SeqCst);
                libc::atexit(last_one_out);
            }
        }
    });
}

/// Build the test template's layers once per engine in this process, before any test
/// builds its own image: tests start together, and builds that all miss the layer cache
/// each run every step of the Dockerfile (on two cores that doubled the suite's time).
/// The others wait for this one; their own builds then add only their final label.
fn warm_the_layers(engine: &'static str) {
    static WARMED: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut warmed = WARMED.lock().unwrap_or_else(|e| e.into_inner());
    if warmed.contains(&engine) {
        return;
    }
    let b = Boxed::prepared(engine);
    let r = b.env.treebox(&["create", "warm-layers", "--no-launch"]);
    if r.code != 0 {
        eprintln!("note: {engine}: warming the test image's layers failed: {r:?}");
    }
    // Its container goes with it (Drop); its image stays until the run ends.
    drop(b);
    warmed.push(engine);
}

impl Boxed {
    pub(crate) fn new(engine: &'static str) -> Option<Boxed> {
        if !engine_works(engine) {
            return None;
        }
        remove_test_images_at_exit();
        warm_the_layers(engine);
        Some(Boxed::prepared(engine))
    }

    /// A test environment whose `test` template builds from `base` (an image of the
    /// test's own, such as [`agents_image`]'s), with no warm-up: the first box builds
    /// the layers.
    pub(crate) fn on_base(engine: &'static str, base: &str) -> Option<Boxed> {
        if !engine_works(engine) {
            return None;
        }
        remove_test_images_at_exit();
        let b = Boxed::prepared_on(engine, base);
        // No `gh`: its package source is out of reach here, and the first build on a
        // new base would wait on apt for it (about 70 s on docker) with no layer to reuse.
        let path = b
            .env
            .config_dir()
            .join("treebox/templates/test/container.json");
        let mut spec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        spec["buildArgs"]["INSTALL_GH"] = "0".into();
        std::fs::write(&path, serde_json::to_string_pretty(&spec).unwrap()).unwrap();
        Some(b)
    }

    /// A test environment with the `test` template for `engine` (no checks, no warm-up).
    fn prepared(engine: &'static str) -> Boxed {
        Boxed::prepared_on(engine, BASE)
    }

    fn prepared_on(engine: &'static str, base: &str) -> Boxed {
        let env = TestEnv::new();
        let id = unique();
        env.treebox(&["template", "init", "test"]).ok();
        let dir = env.config_dir().join("treebox/templates/test");
        let path = dir.join("container.json");
        let mut spec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        spec["baseImage"] = base.into();
        spec["buildArgs"]["INSTALL_AGENTS"] = "0".into();
        spec["buildArgs"]["TREEBOX_TEST_ID"] = id.clone().into();
        std::fs::write(&path, serde_json::to_string_pretty(&spec).unwrap()).unwrap();
        // Declared last, after every layer: the cache reuses all of them.
        let dockerfile = dir.join("Dockerfile");
        let mut text = std::fs::read_to_string(&dockerfile).unwrap();
        text.push_str(&format!(
            "\nARG TREEBOX_TEST_ID\nLABEL org.treebox.test-id=\"{id}\"\n"
        ));
        std::fs::write(&dockerfile, text).unwrap();
        env.write_config(&format!(
            r#"{{"template": "test", "isolation": "{engine}"}}"#
        ));
        Boxed {
            env,
            engine,
            id,
            engine_env: Vec::new(),
            engine_user: None,
        }
    }

    /// The engine is `user`'s rootless podman: the test's engine commands, and treebox
    /// (which the test then runs as that user), use its storage and runtime dir.
    pub(crate) fn rootless(&mut self, user: &crate::rootless::RootlessUser) {
        self.env.extra_env.extend(user.engine_env());
        self.engine_user = Some(user.uid);
    }

    /// `create LEAF --no-launch --json` in this engine (the test's default runner):
    /// its document, the runner checked.
    pub(crate) fn create_here(&self, leaf: &str) -> serde_json::Value {
        let doc = self
            .env
            .treebox(&["create", leaf, "--no-launch", "--json"])
            .ok()
            .json();
        assert_eq!(doc["runner"], self.engine, "{doc}");
        doc
    }

    pub(crate) fn exec(&self, args: &[&str]) -> Run {
        self.env.sandbox(&[&["run"], args].concat())
    }

    pub(crate) fn container(&self, leaf: &str) -> String {
        let doc = self.env.treebox(&["list", "--json"]).ok().json();
        let _ = doc;
        let rec = self.record(leaf);
        rec["container"]["name"].as_str().unwrap().to_string()
    }

    pub(crate) fn record(&self, leaf: &str) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(record_path(&self.env, leaf)).unwrap())
            .unwrap()
    }

    pub(crate) fn engine_cmd(&self, args: &[&str]) -> Command {
        if let Some(uid) = self.engine_user {
            let mut c = self.env.command("setpriv", &self.env.root());
            c.args([
                &format!("--reuid={uid}"),
                &format!("--regid={uid}"),
                "--clear-groups",
                "--",
                self.engine,
            ])
            .args(args)
            .stdin(std::process::Stdio::null());
            return c;
        }
        let mut c = Command::new(self.engine);
        c.args(args);
        for (k, v) in &self.engine_env {
            c.env(k, v);
        }
        c
    }

    pub(crate) fn engine(&self, args: &[&str]) -> std::process::Output {
        self.engine_cmd(args).output().unwrap()
    }

    /// Run `sh -c script` in box `leaf` (it commits there), then the box's HEAD.
    pub(crate) fn commit_inside(&self, leaf: &str, script: &str) -> String {
        self.exec(&[leaf, "--", "sh", "-c", script]).ok();
        self.exec(&[leaf, "--", "git", "rev-parse", "HEAD"])
            .ok()
            .stdout
            .trim()
            .to_string()
    }

    /// A container `name` of the test's own on the test's network `net` (with these
    /// DNS aliases there) that accepts connections on port 8080; its address.
    pub(crate) fn listener(&self, name: &str, net: &str, aliases: &[&str]) -> String {
        let mut args = vec!["run", "-d", "--name", name, "--network", net];
        for a in aliases {
            args.extend(["--network-alias", a]);
        }
        args.extend([
            BASE,
            "sh",
            "-c",
            "while true; do nc -l -p 8080 </dev/null >/dev/null; done",
        ]);
        let out = self.engine(&args);
        assert!(out.status.success(), "{out:?}");
        let ip = self.engine(&[
            "container",
            "inspect",
            "--format",
            "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
            name,
        ]);
        String::from_utf8_lossy(&ip.stdout).trim().to_string()
    }

    /// Make the test's own `--internal` network `net`. Tests run in parallel, and two
    /// engines' network creations at once can pick the same free subnet (podman with
    /// CNI): one at a time in this process, and a failed one tried again.
    pub(crate) fn internal_network(&self, net: &str) -> bool {
        static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        for attempt in 0..5 {
            let out = self.engine(&["network", "create", "--internal", net]);
            if out.status.success() {
                return true;
            }
            eprintln!(
                "note: {} network create {net} (attempt {}): {}",
                self.engine,
                attempt + 1,
                String::from_utf8_lossy(&out.stderr).trim()
            );
            let _ = self.engine(&["network", "rm", net]);
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
        false
    }

    /// Podman with the CNI network backend, for this test and the boxes it makes:
    /// Debian bookworm's netavark 1.4 does not route between containers on an
    /// `--internal` network, CNI does. The rest of the engine's settings (those
    /// `setup-engines` wrote) are kept.
    pub(crate) fn use_cni(&mut self) {
        let mut conf = String::new();
        if let Ok(rd) = std::fs::read_dir("/etc/containers/containers.conf.d") {
            let mut files: Vec<_> = rd.flatten().map(|e| e.path()).collect();
            files.sort();
            for f in files {
                conf.push_str(&std::fs::read_to_string(f).unwrap_or_default());
                conf.push('\n');
            }
        }
        conf.push_str("[network]\nnetwork_backend = \"cni\"\n");
        let path = self.env.root().join("containers-cni.conf");
        std::fs::write(&path, conf).unwrap();
        let kv = (
            "CONTAINERS_CONF".to_string(),
            path.to_string_lossy().into_owned(),
        );
        self.engine_env.push(kv.clone());
        self.env.extra_env.push(kv);
    }
}

/// The operator's own base image (SPEC §7, the route for a machine with no npm): the
/// test base with the real agent CLIs from `agents` (a directory holding `claude` and
/// `codex`) in `/usr/local/bin`, for a template with `INSTALL_AGENTS=0`. Built once per
/// engine in this process and labelled `org.treebox.test-id`, so the end of the run
/// removes it with the other test images. `None` (with a note) when the build fails.
pub(crate) fn agents_image(engine: &'static str, agents: &Path) -> Option<String> {
    static BUILT: std::sync::Mutex<Vec<(&'static str, String)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, tag)) = built.iter().find(|(e, _)| *e == engine) {
        return Some(tag.clone());
    }
    remove_test_images_at_exit();
    let tag = build_agents_image(agents, || Command::new(engine))?;
    built.push((engine, tag.clone()));
    Some(tag)
}

/// [`agents_image`]'s build, by the engine command `engine` makes (root's engine, or a
/// rootless user's: the build context is readable by every user). Its tag; `None`
/// (with a note) when the build fails.
pub(crate) fn build_agents_image(agents: &Path, engine: impl Fn() -> Command) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let id = format!("{}-agents", unique());
    let tag = format!("treebox-test-agents:{id}");
    // The context holds the two CLIs alone (hard links where the file system allows,
    // copies elsewhere) and a two-line Dockerfile: the build is one COPY layer.
    let ctx = tempfile::Builder::new()
        .prefix("treebox-agents-image-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(ctx.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for cli in ["claude", "codex"] {
        let src = std::fs::canonicalize(agents.join(cli)).unwrap();
        let dst = ctx.path().join(cli);
        if std::fs::hard_link(&src, &dst).is_err() {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
    std::fs::write(
        ctx.path().join("Dockerfile"),
        format!("FROM {BASE}\nCOPY claude codex /usr/local/bin/\n"),
    )
    .unwrap();
    let out = engine()
        .args(["build", "-q", "-t", &tag, "--label"])
        .arg(format!("org.treebox.test-id={id}"))
        .arg(ctx.path())
        .current_dir(ctx.path())
        .output()
        .unwrap();
    if !out.status.success() {
        eprintln!(
            "note: building the agents' base image failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    Some(tag)
}

/// The host's address on `engine`'s default bridge, as its containers reach it (docker's
/// `docker0`, podman's `podman` network gateway): where a test binds a server its boxes
/// must reach, never on every interface.
pub(crate) fn gateway(engine: &str) -> Option<String> {
    let out = match engine {
        "docker" => Command::new("ip")
            .args(["-4", "-o", "addr", "show", "dev", "docker0"])
            .output()
            .ok()?,
        _ => Command::new(engine)
            .args([
                "network",
                "inspect",
                "podman",
                "--format",
                "{{range .Subnets}}{{.Gateway}} {{end}}",
            ])
            .output()
            .ok()?,
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let addr = match engine {
        "docker" => text
            .split_whitespace()
            .skip_while(|w| *w != "inet")
            .nth(1)?
            .split('/')
            .next()?
            .to_string(),
        _ => text
            .split_whitespace()
            .find(|w| !w.contains(':'))?
            .to_string(),
    };
    addr.parse::<std::net::Ipv4Addr>()
        .ok()
        .map(|a| a.to_string())
}

pub(crate) fn each_engine(f: impl Fn(Boxed)) {
    for engine in ["docker", "podman"] {
        if engine == "podman"
            && !Command::new("podman")
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
            && !std::env::var("TREEBOX_REQUIRE_ENGINE").is_ok_and(|v| v == "1")
        {
            eprintln!("note: podman not installed; skipped");
            continue;
        }
        if let Some(b) = Boxed::new(engine) {
            f(b);
        }
    }
}

/// `f` against docker alone: for a test of what the host reads or writes after the
/// engine made the box (the engine only decides the mounts, which `sandboxed.rs` and
/// `container.rs` check against both). No podman box is made to be passed over.
pub(crate) fn on_docker(f: impl FnOnce(Boxed)) {
    if let Some(b) = Boxed::new("docker") {
        f(b);
    }
    eprintln!("note: podman: host-side reads and writes only; docker covers them");
}

pub(crate) fn tree_digest(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    fn go(d: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(d).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let p = e.path();
            if p.is_dir() && !p.is_symlink() {
                go(&p, out);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    go(dir, &mut out);
    out
}

#[test]
fn worktree_box_in_a_container() {
    each_engine(|b| {
        let env = &b.env;
        env.treebox(&["create", "host-side", "--isolation", "host", "--no-launch"])
            .ok();
        let doc = env.treebox(&["create", "boxed", "--json"]).ok().json();
        assert_eq!(doc["runner"], b.engine);
        let c = b.container("boxed");
        // git works inside, at the host paths.
        let st = b.exec(&["boxed", "--", "git", "status", "--porcelain"]);
        assert_eq!(st.ok().stdout, "");
        b.exec(&[
            "boxed",
            "--",
            "sh",
            "-c",
            "echo in > in.txt && git add in.txt && git commit -qm inside",
        ])
        .ok();
        // The checkout is the agent's: the user's own git refuses it (git's ownership
        // check), and the work comes back through treebox.
        let plain = env
            .command("git", &env.box_path("boxed"))
            .args(["log", "--oneline", "-1"])
            .output()
            .unwrap();
        assert!(!plain.status.success(), "{plain:?}");
        assert!(String::from_utf8_lossy(&plain.stderr).contains("dubious ownership"));
        env.sandbox(&["fetch", "boxed"]).ok();
        assert!(env
            .git(
                &env.repo,
                &["log", "--oneline", "-1", "refs/hort/boxed/incoming"]
            )
            .contains("inside"));
        // The hooks and the guard are read-only; other boxes' registrations survive prune.
        let hooks = env.repo.join(".git/hooks");
        b.exec(&[
            "boxed",
            "--",
            "sh",
            "-c",
            &format!("touch {}/planted", hooks.display()),
        ])
        .code(1);
        b.exec(&["boxed", "--", "git", "worktree", "prune"]);
        assert!(env.repo.join(".git/worktrees/host-side").is_dir());
        env.git(&env.box_path("host-side"), &["status"]);
        // The guard blocks an in-box push of a placeholder branch.
        let r = b.exec(&["boxed", "--", "sh", "-c",
            "git init -q --bare /tmp/remote.git && git switch -q -c treebox/tmp && git push /tmp/remote.git HEAD"]);
        assert_ne!(r.code, 0, "{r:?}");
        assert!(r.stderr.contains("git branch -m"), "{r:?}");
        // Exit codes pass through.
        b.exec(&["boxed", "--", "sh", "-c", "exit 7"]).code(7);
        // A stopped container runs again before `enter --print` returns.
        assert!(b.engine(&["stop", "-t", "0", &c]).status.success());
        let line = env
            .treebox(&["enter", "boxed", "--print"])
            .ok()
            .stdout
            .clone();
        assert!(line.contains(&format!("{} exec", b.engine)), "{line}");
        // One shell-quoted line (SPEC §10): the launcher is a file in the box's env dir.
        assert_eq!(line.trim_end().lines().count(), 1, "{line}");
        assert!(line.contains(" /bin/sh /run/treebox-env/launch "), "{line}");
        // A box made by an earlier version has no launcher file: the next run writes it.
        std::fs::remove_file(env.box_state("boxed").join("run/launch")).unwrap();
        b.exec(&["boxed", "--", "true"]).ok();
        let running = b.engine(&["container", "inspect", "--format", "{{.State.Running}}", &c]);
        assert_eq!(String::from_utf8_lossy(&running.stdout).trim(), "true");
        // The printed line works off a terminal.
        let out = env
            .command("sh", &env.root())
            .args([
                "-c",
                &line.replace("claude --dangerously-skip-permissions", "true"),
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        env.treebox(&["teardown", "--force", "boxed"]).ok();
        assert!(!b.engine(&["container", "inspect", &c]).status.success());
    });
}

#[test]
fn clone_box_in_a_container_cannot_write_the_users_repo() {
    each_engine(|b| {
        let env = &b.env;
        env.treebox(&["create", "cl", "--git", "clone", "--no-launch"])
            .ok();
        let objects = env.repo.join(".git/objects");
        let r = b.exec(&[
            "cl",
            "--",
            "sh",
            "-c",
            &format!("touch {}/anything", objects.display()),
        ]);
        assert_ne!(r.code, 0);
        assert!(r.stderr.contains("Read-only"), "{r:?}");
        let before = tree_digest(&env.repo.join(".git"));
        b.exec(&[
            "cl",
            "--",
            "sh",
            "-c",
            "echo c > c.txt && git add c.txt && git commit -qm in-clone && git log --oneline -1",
        ])
        .ok();
        assert_eq!(
            before,
            tree_digest(&env.repo.join(".git")),
            "the user's .git changed"
        );
        // The guard binds pushes made inside the container in clone mode too (its
        // hooks dir is host bookkeeping, mounted read-only at the same path).
        let r = b.exec(&[
            "cl",
            "--",
            "sh",
            "-c",
            "git init -q --bare /tmp/remote.git && git switch -q -c treebox/tmp && git push /tmp/remote.git HEAD",
        ]);
        assert_ne!(r.code, 0, "{r:?}");
        assert!(r.stderr.contains("git branch -m"), "{r:?}");
        let hooks = std::fs::read_dir(env.state_dir().join("treebox/repos"))
            .unwrap()
            .flatten()
            .next()
            .unwrap()
            .path()
            .join("boxes/cl/hooks");
        assert!(hooks.join("pre-push").is_file());
        let r = b.exec(&[
            "cl",
            "--",
            "sh",
            "-c",
            &format!("rm -f {}/pre-push", hooks.display()),
        ]);
        assert_ne!(r.code, 0, "the guard must be read-only inside: {r:?}");
        assert!(hooks.join("pre-push").is_file());
        // The host reads the clone (its alternates resolve at the same path).
        let doc = env.sandbox(&["ls", "--json"]).ok().json();
        assert_eq!(doc["boxes"][0]["mode"], "clone, work only in the box");
        env.sandbox(&["down", "-f", "cl"]).ok();
    });
}

/// A login dir moved with `CODEX_HOME` / `CLAUDE_CONFIG_DIR` is the one a box's login
/// comes from (the CLIs read those variables; so does treebox).
#[test]
fn a_moved_login_dir_is_the_one_staged() {
    each_engine(|mut b| {
        let moved = b.env.home.join("elsewhere/codex");
        std::fs::create_dir_all(&moved).unwrap();
        std::fs::write(moved.join("auth.json"), r#"{"token":"moved"}"#).unwrap();
        let old = b.env.home.join(".codex");
        std::fs::create_dir_all(&old).unwrap();
        std::fs::write(old.join("auth.json"), r#"{"token":"default"}"#).unwrap();
        b.env
            .extra_env
            .push(("CODEX_HOME".into(), moved.to_string_lossy().into_owned()));
        let env = &b.env;
        env.treebox(&["create", "mv", "--harness", "codex", "--no-launch"])
            .ok();
        let home = b.record("mv")["container"]["home"]
            .as_str()
            .unwrap()
            .to_string();
        let inside = b.exec(&["mv", "--", "cat", &format!("{home}/.codex/auth.json")]);
        assert!(inside.ok().stdout.contains("moved"), "{inside:?}");
        env.treebox(&["teardown", "--force", "mv"]).ok();
    });
}

#[test]
fn secrets_stay_out_of_layers_and_credentials_are_private() {
    each_engine(|mut b| {
        let secret = format!("sk-test-{}", b.id);
        b.env
            .extra_env
            .push(("ANTHROPIC_API_KEY".into(), secret.clone()));
        let claude = b.env.home.join(".claude");
        std::fs::create_dir_all(&claude).unwrap();
        std::fs::write(claude.join(".credentials.json"), r#"{"token":"login"}"#).unwrap();
        // The user's whole ~/.claude.json: other projects' history, MCP servers with
        // their tokens. A box gets only the answers it needs (SPEC §7).
        std::fs::write(
            b.env.home.join(".claude.json"),
            r#"{"hasCompletedOnboarding":true,"lastOnboardingVersion":"first","mcpServers":{"db":{"env":{"TOKEN":"mcp-token-1"}}},"projects":{"/elsewhere":{"history":["private prompt"]}}}"#,
        )
        .unwrap();
        std::fs::write(claude.join("projects.db"), "not copied").unwrap();
        let env = &b.env;
        env.treebox(&["create", "s", "--no-launch"]).ok();
        let rec = b.record("s");
        let image = rec["container"]["image"].as_str().unwrap().to_string();
        let history = b.engine(&["history", "--no-trunc", &image]);
        let inspect = b.engine(&["image", "inspect", &image]);
        for out in [&history, &inspect] {
            assert!(!String::from_utf8_lossy(&out.stdout).contains(&secret));
        }
        // It reached the container through the env file.
        let seen = b.exec(&["s", "--", "sh", "-c", "echo $ANTHROPIC_API_KEY"]);
        assert_eq!(seen.ok().stdout.trim(), secret);
        // Only the chosen harness's login files, 0700/0600, readable inside.
        use std::os::unix::fs::PermissionsExt;
        let creds = std::fs::read_dir(env.state_dir().join("treebox/repos"))
            .unwrap()
            .flatten()
            .next()
            .unwrap()
            .path()
            .join("boxes/s/credentials/claude");
        assert_eq!(
            std::fs::metadata(&creds).unwrap().permissions().mode() & 0o777,
            0o700
        );
        let f = creds.join(".credentials.json");
        assert_eq!(
            std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert!(!creds.join("projects.db").exists());
        let home = rec["container"]["home"].as_str().unwrap().to_string();
        let inside = b.exec(&[
            "s",
            "--",
            "cat",
            &format!("{home}/.claude/.credentials.json"),
        ]);
        assert!(inside.ok().stdout.contains("login"));
        // Refreshed on every enter: a new login on the host reaches the box.
        std::fs::write(claude.join(".credentials.json"), r#"{"token":"renewed"}"#).unwrap();
        env.treebox(&["enter", "s", "--print"]).ok();
        let inside = b.exec(&[
            "s",
            "--",
            "cat",
            &format!("{home}/.claude/.credentials.json"),
        ]);
        assert!(inside.ok().stdout.contains("renewed"), "{inside:?}");
        // Also the file mounted on its own (~/.claude.json), rewritten in place.
        let first = b.exec(&["s", "--", "cat", &format!("{home}/.claude.json")]);
        assert!(first.ok().stdout.contains("first"), "{first:?}");
        for private in ["mcp-token-1", "private prompt", "/elsewhere"] {
            assert!(!first.stdout.contains(private), "{private}: {first:?}");
        }
        std::fs::write(
            env.home.join(".claude.json"),
            r#"{"hasCompletedOnboarding":true,"lastOnboardingVersion":"second"}"#,
        )
        .unwrap();
        env.treebox(&["enter", "s", "--print"]).ok();
        let inside = b.exec(&["s", "--", "cat", &format!("{home}/.claude.json")]);
        assert!(inside.ok().stdout.contains("second"), "{inside:?}");
        // The live ~/.claude is not what is mounted: a write inside does not reach it.
        b.exec(&[
            "s",
            "--",
            "sh",
            "-c",
            &format!("echo x > {home}/.claude/new-file"),
        ])
        .ok();
        assert!(!claude.join("new-file").exists());
        // Host executables are never mounted.
        let cargo_bin = env.home.join(".cargo/bin");
        std::fs::create_dir_all(&cargo_bin).unwrap();
        write_exec(&cargo_bin.join("tool"), "#!/bin/sh\n");
        b.exec(&[
            "s",
            "--",
            "sh",
            "-c",
            &format!("test ! -e {}/tool", cargo_bin.display()),
        ])
        .ok();
    });
}

#[test]
fn teardown_after_a_manual_rm_still_removes_the_image() {
    each_engine(|b| {
        let env = &b.env;
        env.treebox(&["create", "t", "--no-launch"]).ok();
        let rec = b.record("t");
        let c = rec["container"]["name"].as_str().unwrap().to_string();
        let image = rec["container"]["image"].as_str().unwrap().to_string();
        assert!(b.engine(&["rm", "-f", &c]).status.success());
        env.treebox(&["teardown", "--force", "t"]).ok();
        assert!(
            !b.engine(&["image", "inspect", &image]).status.success(),
            "image {image} left"
        );
        assert!(!env.box_path("t").exists());
    });
}

#[test]
fn a_second_box_reuses_the_image() {
    each_engine(|b| {
        let env = &b.env;
        env.treebox(&["create", "one", "--no-launch"]).ok();
        let t = std::time::Instant::now();
        env.treebox(&["create", "two", "--no-launch"]).ok();
        let second = t.elapsed();
        assert_eq!(
            b.record("one")["container"]["image"],
            b.record("two")["container"]["image"]
        );
        eprintln!(
            "{}: second create with a warm image took {second:?}",
            b.engine
        );
        // The guard was checked once for the image: one answer kept, for both boxes.
        let answers = std::fs::read_dir(env.state_dir().join("treebox/guard-runs"))
            .map(|d| d.count())
            .unwrap_or(0);
        assert_eq!(answers, 1, "one guard check per image and guard build");
        // Teardown of one leaves the image the other uses.
        let image = b.record("two")["container"]["image"]
            .as_str()
            .unwrap()
            .to_string();
        env.treebox(&["teardown", "--force", "one"]).ok();
        assert!(b.engine(&["image", "inspect", &image]).status.success());
        env.treebox(&["teardown", "--force", "two"]).ok();
    });
}

#[test]
fn planted_config_from_inside_a_container_never_runs_on_the_host() {
    each_engine(|b| {
        let env = &b.env;
        env.treebox(&["create", "evil", "--no-launch"]).ok();
        let m = env.root().join("pwned").display().to_string();
        let plant = format!(
            "git config core.fsmonitor 'touch {m}.fsmonitor; false' && \
             git config --worktree core.sshCommand 'touch {m}.ssh' && \
             git config filter.evil.clean 'touch {m}.clean; cat' && \
             git config credential.helper '!touch {m}.cred' && \
             git config diff.external 'touch {m}.diff' && \
             echo '* filter=evil' > .gitattributes && echo dirt > dirt.txt"
        );
        b.exec(&["evil", "--", "sh", "-c", &plant]).ok();
        env.treebox(&["list"]).ok();
        env.treebox(&["enter", "evil", "--print"]).ok();
        env.treebox(&["teardown", "evil"]).code(5);
        env.treebox(&["teardown", "--force", "evil"]).ok();
        let fired: Vec<_> = std::fs::read_dir(env.root())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("pwned"))
            .collect();
        assert!(
            fired.is_empty(),
            "planted config ran on the host: {fired:?}"
        );
    });
}

#[test]
fn the_firewall_allows_the_allowlist_and_nothing_else() {
    each_engine(|mut b| {
        if b.engine == "podman" {
            b.use_cni();
        }
        let env = &b.env;
        let net = format!("tbnet-{}", b.id);
        assert!(
            b.internal_network(&net),
            "could not make the test's network"
        );
        let mut ips = Vec::new();
        for srv in ["allowed", "denied"] {
            let name = format!("tbsrv-{srv}-{}", b.id);
            ips.push(b.listener(&name, &net, &[]));
        }
        // Can containers on this network reach each other at all? If not, there is
        // nothing a firewall test could show.
        let probe_plain = b.engine(&[
            "run",
            "--rm",
            "--network",
            &net,
            BASE,
            "nc",
            "-z",
            "-w",
            "3",
            &ips[0],
            "8080",
        ]);
        if !probe_plain.status.success() {
            eprintln!(
                "note: {}: containers on an internal network cannot reach each other here; firewall test skipped for this engine",
                b.engine
            );
            return;
        }
        // The image has a `uv` (a stand-in that installs nothing), and the repository a
        // lockfile: setup runs `uv` in the box at create and again whenever the
        // lockfile changes.
        let dockerfile = env.config_dir().join("treebox/templates/test/Dockerfile");
        let mut text = std::fs::read_to_string(&dockerfile).unwrap();
        text.push_str(
            "USER root\nRUN printf '#!/bin/sh\\nexit 0\\n' > /usr/local/bin/uv && chmod 0755 /usr/local/bin/uv\nUSER ${AGENT_UID}:${AGENT_GID}\n",
        );
        std::fs::write(&dockerfile, text).unwrap();
        env.push_to_origin("uv.lock", "version = 1\n");
        // The template's allowlist names only the allowed server.
        let allow = env
            .config_dir()
            .join("treebox/templates/test/allowlist.txt");
        std::fs::write(&allow, format!("{}/32\n", ips[0])).unwrap();
        let mut env2_extra = env.extra_env.clone();
        env2_extra.push(("TREEBOX_NETWORK".into(), net.clone()));
        let run = |args: &[&str]| {
            let mut c = env.command(crate::env::TREEBOX, &env.repo);
            for (k, v) in &env2_extra {
                c.env(k, v);
            }
            c.args(args).output().unwrap()
        };
        let out = run(&["create", "fw", "--firewall", "--no-launch"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let probe = |ip: &str| {
            b.exec(&["fw", "--", "sh", "-c", &format!("nc -z -w 3 {ip} 8080")])
                .code
        };
        assert_eq!(
            probe(&ips[0]),
            0,
            "the allow-listed server must be reachable"
        );
        assert_ne!(probe(&ips[1]), 0, "the other server must not be reachable");
        // Re-applied after a restart.
        let c = b.container("fw");
        assert!(b.engine(&["restart", "-t", "0", &c]).status.success());
        env.treebox(&["enter", "fw", "--print"]).ok();
        assert_eq!(probe(&ips[0]), 0);
        assert_ne!(probe(&ips[1]), 0);
        // The agent cannot drop the rules.
        assert_ne!(b.exec(&["fw", "--", "iptables", "-F", "OUTPUT"]).code, 0);
        // Nor plant a `uv` that does it at the next setup: the image's programs are
        // not its to write, and setup runs as the agent, without NET_ADMIN, anyway.
        let plant = "printf '#!/bin/sh\\niptables -P OUTPUT ACCEPT; iptables -F OUTPUT\\n' > /usr/local/bin/uv";
        assert_ne!(b.exec(&["fw", "--", "sh", "-c", plant]).code, 0);
        b.exec(&["fw", "--", "sh", "-c", "echo '# bumped' >> uv.lock"])
            .ok();
        env.treebox(&["enter", "fw", "--print"]).ok();
        assert_eq!(probe(&ips[0]), 0);
        assert_ne!(probe(&ips[1]), 0, "egress opened by a setup re-sync");
        // Rules changed behind treebox's back (here: as root, from outside) are noticed
        // after the next setup: the container is stopped, and the next start applies
        // them again.
        assert!(b
            .engine(&["exec", "-u", "0", &c, "iptables", "-I", "OUTPUT", "-j", "ACCEPT"])
            .status
            .success());
        b.exec(&["fw", "--", "sh", "-c", "echo '# again' >> uv.lock"])
            .ok();
        let r = env.treebox(&["enter", "fw", "--print"]);
        assert_ne!(r.code, 0, "{r:?}");
        assert!(r.stderr.contains("firewall"), "{r:?}");
        let running = b.engine(&["container", "inspect", "--format", "{{.State.Running}}", &c]);
        assert_eq!(String::from_utf8_lossy(&running.stdout).trim(), "false");
        env.treebox(&["enter", "fw", "--print"]).ok();
        assert_eq!(probe(&ips[0]), 0);
        assert_ne!(probe(&ips[1]), 0);
        env.treebox(&["teardown", "--force", "fw"]).ok();
    });
}

#[test]
fn park_spares_first_sight_and_status_reaches_ls() {
    each_engine(|b| {
        let env = &b.env;
        env.treebox(&["create", "idle", "--no-launch"]).ok();
        let c = b.container("idle");
        // The agent reports through the status channel; ls shows it.
        b.exec(&[
            "idle",
            "--",
            "sh",
            "-c",
            "echo working > /run/treebox/status/state",
        ])
        .ok();
        let ls = env.sandbox(&["ls", "--json"]).ok().json();
        assert_eq!(ls["boxes"][0]["status"], "working");
        // Untrusted data: anything else, or too much, is `unknown`.
        b.exec(&[
            "idle",
            "--",
            "sh",
            "-c",
            "head -c 10000 /dev/zero | tr '\\0' a > /run/treebox/status/state",
        ])
        .ok();
        let ls = env.sandbox(&["ls", "--json"]).ok().json();
        assert_eq!(ls["boxes"][0]["status"], "unknown", "{ls}");
        // First pass: seen for the first time, never parked.
        let doc = env.sandbox(&["park", "--idle", "0", "--json"]).ok().json();
        assert_eq!(doc["firstSeen"], serde_json::json!(["idle"]));
        let running = |b: &Boxed| {
            String::from_utf8_lossy(
                &b.engine(&["container", "inspect", "--format", "{{.State.Running}}", &c])
                    .stdout,
            )
            .trim()
            .to_string()
        };
        assert_eq!(running(&b), "true");
        assert_eq!(
            env.sandbox(&["ls", "--json"]).ok().json()["boxes"][0]["state"],
            "ready",
            "{}: a running container is shown ready, not parked",
            b.engine
        );
        // Second pass: idle, parked.
        let doc = env.sandbox(&["park", "--idle", "0", "--json"]).ok().json();
        assert_eq!(doc["parked"][0]["name"], "idle");
        assert_eq!(running(&b), "false");
        assert_eq!(
            env.sandbox(&["ls", "--json"]).ok().json()["boxes"][0]["state"],
            "parked"
        );
        // Used again: started before the command runs.
        b.exec(&["idle", "--", "true"]).ok();
        assert_eq!(running(&b), "true");
        // Not idle long enough: left alone.
        let doc = env.sandbox(&["park", "--idle", "2h", "--json"]).ok().json();
        assert!(doc["parked"].as_array().unwrap().is_empty());
        env.treebox(&["teardown", "--force", "idle"]).ok();
    });
}

#[test]
fn auto_isolation_uses_an_engine_only_on_a_runner() {
    let Some(mut b) = Boxed::new("docker") else {
        return;
    };
    b.env
        .write_config(r#"{"template": "test", "isolation": "auto"}"#);
    let doc = b.env.treebox(&["create", "plain", "--json"]).ok().json();
    assert_eq!(doc["runner"], "host", "not a runner: auto means host");
    b.env.extra_env.push(("TREEBOX_RUNNER".into(), "1".into()));
    let r = b.env.treebox(&["create", "marked", "--no-launch"]);
    r.ok();
    assert!(r.stderr.contains("isolation auto"), "{r:?}");
    let runner = b.record("marked")["runner"].as_str().unwrap().to_string();
    assert!(runner == "podman" || runner == "docker", "{runner}");
    // The container lives in whichever engine auto chose: clean it up there.
    if runner == "podman" {
        b.env.treebox(&["teardown", "--force", "marked"]).ok();
    }
    // Existing boxes never change runner.
    let doc = b.env.treebox(&["enter", "plain", "--json"]).ok().json();
    assert_eq!(doc["runner"], "host");
}

#[test]
fn a_folder_box_in_a_container_mounts_the_folder_and_down_keeps_it() {
    each_engine(|b| {
        let env = &b.env;
        let folder = env.root().join("plain-project");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("notes.txt"), "mine\n").unwrap();
        let run = |args: &[&str]| {
            Run::from_output(
                env.command(crate::env::SANDBOX, &folder)
                    .args(args)
                    .output()
                    .unwrap(),
            )
        };
        run(&["up", "fp", "-d"]).ok();
        let out = run(&[
            "run",
            "fp",
            "--",
            "sh",
            "-c",
            "cat notes.txt && echo made > inside.txt",
        ]);
        assert_eq!(out.ok().stdout, "mine\n");
        assert_eq!(
            std::fs::read_to_string(folder.join("inside.txt")).unwrap(),
            "made\n"
        );
        let c = {
            let repos = env.state_dir().join("treebox/repos");
            let dir = std::fs::read_dir(&repos)
                .unwrap()
                .flatten()
                .next()
                .unwrap()
                .path();
            let rec: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(dir.join("boxes/fp/record.json")).unwrap(),
            )
            .unwrap();
            rec["container"]["name"].as_str().unwrap().to_string()
        };
        // `up -d` left the box's shell running in its session: `down` asks for it
        // (refuses without a terminal), `-f` ends it with the container.
        run(&["down", "fp"]).code(5);
        run(&["down", "-f", "fp"]).ok();
        assert!(!b.engine(&["container", "inspect", &c]).status.success());
        assert_eq!(
            std::fs::read_to_string(folder.join("notes.txt")).unwrap(),
            "mine\n"
        );
    });
}

#[test]
fn a_missing_engine_is_refused_before_anything_is_written() {
    let mut env = TestEnv::new();
    // A PATH with git but no container engine at all.
    let bin = env.root().join("onlygit");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(crate::env::real_git(), bin.join("git")).unwrap();
    env.extra_env.push((
        "PATH".into(),
        format!("{}:{}", env.bin.display(), bin.display()),
    ));
    let before = env.snapshot();
    let r = env.treebox(&["create", "x", "--isolation", "podman", "--no-launch"]);
    r.code(1);
    assert!(r.stderr.contains("podman does not answer"), "{r:?}");
    assert!(r.stderr.contains("doctor"), "{r:?}");
    assert_eq!(env.snapshot(), before);
}

#[test]
fn with_the_engine_gone_teardown_keeps_the_box_whole() {
    let Some(b) = Boxed::new("docker") else {
        return;
    };
    let env = &b.env;
    env.treebox(&["create", "kept", "--no-launch"]).ok();
    let c = b.container("kept");
    // The engine's program is no longer on PATH.
    let bin = env.root().join("onlygit");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(crate::env::real_git(), bin.join("git")).unwrap();
    let out = env
        .command(crate::env::TREEBOX, &env.repo)
        .env("PATH", format!("{}:{}", env.bin.display(), bin.display()))
        .args(["teardown", "--force", "kept"])
        .output()
        .unwrap();
    let r = Run::from_output(out);
    r.code(1);
    assert!(r.stderr.contains("docker does not answer"), "{r:?}");
    // Nothing was removed: the checkout, its record and its container are whole.
    assert!(env.box_path("kept").join("README.md").is_file());
    assert_eq!(b.record("kept")["container"]["name"], c.as_str());
    assert!(b.engine(&["container", "inspect", &c]).status.success());
    // With the engine back, teardown finishes the job.
    env.treebox(&["teardown", "--force", "kept"]).ok();
    assert!(!b.engine(&["container", "inspect", &c]).status.success());
}

/// An image that cannot run the guard (here: without `libgcc_s`, which the guard links
/// and `sh`/`git` do not; musl images and glibc older than 2.34 fail the same way)
/// would make git refuse every commit inside, since each hook is the guard. `create`
/// says so at once, with the way out, and the box can be removed.
#[test]
fn an_image_that_cannot_run_the_guard_is_refused_at_create() {
    let Some(b) = Boxed::new("docker") else {
        return;
    };
    let env = &b.env;
    let dockerfile = env.config_dir().join("treebox/templates/test/Dockerfile");
    let mut text = std::fs::read_to_string(&dockerfile).unwrap();
    text.push_str(
        "USER root\nRUN rm -f /usr/lib/x86_64-linux-gnu/libgcc_s.so.1 /lib/x86_64-linux-gnu/libgcc_s.so.1\n",
    );
    std::fs::write(&dockerfile, text).unwrap();
    let r = env.treebox(&["create", "noguard", "--no-launch"]);
    r.code(1);
    assert!(r.stderr.contains("guard cannot run"), "{r:?}");
    assert!(
        r.stderr.contains("libgcc_s"),
        "the loader's reason is shown: {r:?}"
    );
    assert!(r.stderr.contains("baseImage"), "{r:?}");
    // Not reported complete; removable like any half-made box.
    assert_eq!(b.record("noguard")["setupCompleted"], false);
    env.treebox(&["teardown", "--force", "noguard"]).ok();
    assert!(!env.box_path("noguard").exists());
}

/// A container box whose image did not build is mended by running `create` again
/// with a template that builds: the re-run's template is taken, since no container was
/// made from the old one. The box keeps its runner: a re-run on another one is refused
/// (exit 5) before anything runs. A setup step whose program the image lacks says so,
/// with the way out.
#[test]
fn a_failed_image_build_is_mended_by_a_rerun_with_another_template() {
    let Some(b) = Boxed::new("docker") else {
        return;
    };
    let env = &b.env;
    env.commit_file(
        &env.repo,
        "pyproject.toml",
        "[project]\nname = \"demo\"\nversion = \"0.1.0\"\n",
        "uv project",
    );
    env.commit_file(&env.repo, "uv.lock", "version = 1\n", "uv lock");
    env.git(&env.repo, &["push", "-q", "origin", "main"]);
    env.treebox(&["template", "init", "broken"]).ok();
    let path = env
        .config_dir()
        .join("treebox/templates/broken/container.json");
    let mut spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    spec["baseImage"] = "treebox-test-absent:0".into();
    spec["buildArgs"]["INSTALL_AGENTS"] = "0".into();
    std::fs::write(&path, serde_json::to_string_pretty(&spec).unwrap()).unwrap();

    let r = env.treebox(&["create", "mend", "--template", "broken", "--no-launch"]);
    r.code(1);
    assert!(r.stderr.contains("building the box image failed"), "{r:?}");
    assert_eq!(b.record("mend")["template"], "broken");

    // Another runner: refused, and the record is as it was.
    let record = std::fs::read(record_path(env, "mend")).unwrap();
    let before = env.snapshot();
    let r = env.treebox(&["create", "mend", "--isolation", "host", "--no-launch"]);
    r.code(5);
    assert_eq!(env.snapshot(), before, "a refused re-run changed something");
    assert!(r.stderr.contains("runs on docker, not host"), "{r:?}");
    assert!(r.stderr.contains("--isolation docker"), "{r:?}");
    assert_eq!(std::fs::read(record_path(env, "mend")).unwrap(), record);
    assert!(!env.box_path("mend").join(".venv").exists());
    // No runner named at all (`auto` is the host on this machine): the same refusal.
    env.write_config(r#"{"template": "test"}"#);
    let r = env.treebox(&["create", "mend", "--no-launch"]);
    r.code(5);
    assert!(r.stderr.contains("git treebox enter mend"), "{r:?}");
    assert_eq!(std::fs::read(record_path(env, "mend")).unwrap(), record);
    env.write_config(r#"{"template": "test", "isolation": "docker"}"#);

    // A template that builds: taken. Setup then finds no uv in the image, and says so.
    let r = env.treebox(&["create", "mend", "--template", "test", "--no-launch"]);
    r.code(1);
    assert_eq!(b.record("mend")["template"], "test");
    assert!(b.record("mend")["container"]["name"].is_string());
    assert!(
        r.stderr
            .contains("`uv` is not installed in the box's image"),
        "{r:?}"
    );
    assert!(r.stderr.contains("hint: Install `uv`"), "{r:?}");
    assert!(
        r.stderr.contains("git treebox template path test")
            && r.stderr.contains("git treebox enter mend"),
        "the hint names the template and the box: {r:?}"
    );

    // The container exists now: another template is not taken, and that is said.
    let r = env.treebox(&["create", "mend", "--template", "broken", "--no-launch"]);
    assert!(r.stderr.contains("keeps template `test`"), "{r:?}");
    assert_eq!(b.record("mend")["template"], "test");

    // Without the step, entering finishes the box.
    env.write_config(r#"{"template": "test", "isolation": "docker", "setup": []}"#);
    env.treebox(&["enter", "mend", "--print"]).ok();
    assert_eq!(b.record("mend")["setupCompleted"], true);
    env.treebox(&["teardown", "--force", "mend"]).ok();
}

/// The record of the fixture repository's box `leaf`.
fn record_path(env: &TestEnv, leaf: &str) -> PathBuf {
    env.box_state(leaf).join("record.json")
}
