//! A box's container (SPEC §7): image, mounts, credentials, firewall, setup, start,
//! removal. Provisioning still happens on the host; this module makes the container
//! the agent runs in and keeps it running.
//!
//! Invariants:
//! - The template is operator-owned (bundled or the user's), never the repository's;
//!   it is rendered into the box's host-owned bookkeeping, outside every mount.
//! - Credentials never enter an image layer: the model keys and git identity go in a
//!   0600 env file given at start; only the chosen harness's login files are copied
//!   (0700 dir, 0600 files) into the bookkeeping and mounted; the live `~/.claude` or
//!   `~/.codex` is never mounted.
//! - Mounts: the checkout (and, for a worktree, the repository's git dir) at their host
//!   paths; `.git/hooks`, the guard and the other boxes' registrations read-only; in
//!   clone mode the borrowed object store read-only; the detected ecosystems' download
//!   caches (never a directory holding host executables); the status directory.
//!   Nothing else of the host.
//! - Images are tagged by a hash of the rendered template and its build arguments, so
//!   boxes share an image and an unchanged template never rebuilds.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cmd::CmdError;
use crate::git::Repo;
use crate::harness::Harness;
use crate::names::Leaf;
use crate::provision::setup::{self, Ecosystem};
use crate::runner::oci::{mountable, Engine, Mount, RunSpec};
use crate::state::{atomic, Layout, Record};
use crate::template::{self, Template};

/// Where the status directory appears inside every container.
pub const STATUS_DIR: &str = "/run/treebox/status";
/// The firewall script's path inside the image (see the default Dockerfile).
pub const FIREWALL: &str = "/usr/local/sbin/treebox-init-firewall";
/// Where the download caches appear inside.
const CACHE_ROOT: &str = "/var/cache/treebox";
/// Largest status file read.
const MAX_STATUS_BYTES: u64 = 4096;

/// Environment variables, in order.
type EnvVars = Vec<(String, String)>;

/// What the record keeps about a box's container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecord {
    pub engine: String,
    pub name: String,
    pub image: String,
    /// `uid:gid` the agent runs as.
    pub user: String,
    /// The agent's home inside.
    pub home: PathBuf,
    /// The container's id and first process, as last seen running: lets the hot path
    /// (`run`, `enter`) know it still runs without asking the engine.
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub pid: u32,
}

impl ContainerRecord {
    /// Refresh id and pid from the engine (after a start).
    fn observe(&mut self, engine: Engine) -> Result<(), ContainerError> {
        if let Some(s) = engine.state(&self.name).map_err(ContainerError::Engine)? {
            self.id = s.id;
            self.pid = s.pid;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    #[error("{engine} does not answer (is it installed and running?)")]
    EngineDown { engine: String },
    #[error("no container engine answers (tried podman and docker)")]
    NoEngine,
    #[error(transparent)]
    Template(#[from] template::TemplateError),
    #[error("template `{name}`: {problems}")]
    BadTemplate { name: String, problems: String },
    #[error("a mount cannot express the path {}", .path.display())]
    Unmountable { path: PathBuf },
    #[error("building the box image failed: {}", tail(.0))]
    Build(#[source] CmdError),
    #[error("starting the box's container failed: {}", tail(.0))]
    Run(#[source] CmdError),
    #[error("the firewall could not be applied (egress stays denied): {}", tail(.0))]
    Firewall(#[source] CmdError),
    #[error("setup step `{step}` failed in the container: {detail}")]
    Setup { step: String, detail: String },
    #[error("the pre-push guard cannot run in this box's image, so git would refuse every commit and push there: {detail}")]
    GuardCannotRun { detail: String },
    #[error("{what} {}: {source}", .path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the engine failed: {}", tail(.0))]
    Engine(#[source] CmdError),
}

fn tail(e: &CmdError) -> String {
    let s = e.stderr();
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    let last = lines
        .iter()
        .rev()
        .take(3)
        .rev()
        .cloned()
        .collect::<Vec<_>>()
        .join(" / ");
    if last.is_empty() {
        e.to_string()
    } else {
        crate::sanitize::line(&last)
    }
}

fn io_err<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> ContainerError + 'a {
    move |source| ContainerError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// An engine failure, said plainly when the engine is not answering at all.
fn explain(engine: Engine, e: ContainerError) -> ContainerError {
    match e {
        ContainerError::Build(_) | ContainerError::Run(_) | ContainerError::Engine(_)
            if engine.version().is_none() =>
        {
            ContainerError::EngineDown {
                engine: engine.program().to_string(),
            }
        }
        e => e,
    }
}

/// Resolve `docker`/`podman`/`auto` to an engine (`auto`: the first that answers).
pub fn resolve_engine(isolation: &str) -> Result<Engine, ContainerError> {
    match isolation {
        "auto" => [Engine::Podman, Engine::Docker]
            .into_iter()
            .find(|e| e.version().is_some())
            .ok_or(ContainerError::NoEngine),
        // An explicit engine is not asked whether it runs (a `docker info` costs tens
        // of milliseconds on every create): a failure later says so (`explain`).
        name => Engine::parse(name).ok_or(ContainerError::NoEngine),
    }
}

/// The container's name: unique per repository and box.
pub fn container_name(layout: &Layout, leaf: &Leaf) -> String {
    let key = layout
        .repo_state
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("treebox-{key}-{leaf}")
}

fn host_ids() -> (u32, u32) {
    // SAFETY: getuid/getgid cannot fail and touch no memory.
    unsafe { (libc::getuid(), libc::getgid()) }
}

/// The repository's declared Node major (`.nvmrc`, `.node-version`, `package.json`
/// engines, `.tool-versions`), read as untrusted data: only a leading number is taken.
pub fn node_major(root: &Path) -> Option<String> {
    fn read_small(p: &Path) -> Option<String> {
        let m = std::fs::symlink_metadata(p).ok()?;
        if !m.is_file() || m.len() > 64 * 1024 {
            return None;
        }
        std::fs::read_to_string(p).ok()
    }
    fn major(s: &str) -> Option<String> {
        let s = s.trim().trim_start_matches(['v', '^', '~', '>', '=', ' ']);
        let digits: String = s.chars().take_while(char::is_ascii_digit).take(3).collect();
        (!digits.is_empty()).then_some(digits)
    }
    for f in [".nvmrc", ".node-version"] {
        if let Some(m) = read_small(&root.join(f)).as_deref().and_then(major) {
            return Some(m);
        }
    }
    if let Some(text) = read_small(&root.join("package.json")) {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
            if let Some(m) = v["engines"]["node"].as_str().and_then(major) {
                return Some(m);
            }
        }
    }
    if let Some(text) = read_small(&root.join(".tool-versions")) {
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            if matches!(parts.next(), Some("nodejs" | "node")) {
                if let Some(m) = parts.next().and_then(major) {
                    return Some(m);
                }
            }
        }
    }
    None
}

/// The host download cache of an ecosystem and where it appears inside.
fn cache_mounts(eco: Ecosystem, home: &Path) -> Vec<(PathBuf, String, &'static str)> {
    let env_dir = |var: &str, default: PathBuf| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or(default)
    };
    match eco {
        Ecosystem::Uv => vec![(
            env_dir("UV_CACHE_DIR", home.join(".cache/uv")),
            format!("{CACHE_ROOT}/uv"),
            "UV_CACHE_DIR",
        )],
        Ecosystem::Npm => vec![(
            env_dir("npm_config_cache", home.join(".npm")),
            format!("{CACHE_ROOT}/npm"),
            "npm_config_cache",
        )],
        Ecosystem::Pnpm => vec![(
            home.join(".local/share/pnpm/store"),
            format!("{CACHE_ROOT}/pnpm"),
            "npm_config_store_dir",
        )],
        Ecosystem::Go => vec![(
            env_dir("GOMODCACHE", home.join("go/pkg/mod")),
            format!("{CACHE_ROOT}/gomod"),
            "GOMODCACHE",
        )],
        // The registry and git checkouts only: never CARGO_HOME/bin (host executables).
        Ecosystem::Cargo => {
            let cargo = env_dir("CARGO_HOME", home.join(".cargo"));
            vec![
                (
                    cargo.join("registry"),
                    format!("{CACHE_ROOT}/cargo/registry"),
                    "CARGO_HOME",
                ),
                (cargo.join("git"), format!("{CACHE_ROOT}/cargo/git"), ""),
            ]
        }
    }
}

fn cache_env_value(var: &str, dst: &str) -> String {
    if var == "CARGO_HOME" {
        format!("{CACHE_ROOT}/cargo")
    } else {
        dst.to_string()
    }
}

/// The login files each harness needs, relative to the host home: (source, whether
/// it is a directory entry under the harness dir or a file in home).
fn login_files(h: Harness) -> (&'static str, &'static [&'static str], Option<&'static str>) {
    match h {
        Harness::Claude => (
            ".claude",
            &[".credentials.json", "settings.json"],
            Some(".claude.json"),
        ),
        Harness::Codex => (".codex", &["auth.json", "config.toml"], None),
    }
}

/// Copy the chosen harness's login files into the box's credentials dir (0700/0600),
/// fresh each time. Returns the mounts that place them in the agent's home.
pub fn stage_credentials(
    layout: &Layout,
    leaf: &Leaf,
    harness: Harness,
    host_home: &Path,
    agent_home: &Path,
) -> Result<Vec<Mount>, ContainerError> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let creds = layout.box_state(leaf).join("credentials");
    if creds.exists() {
        std::fs::remove_dir_all(&creds).map_err(io_err("could not clear", &creds))?;
    }
    let (dir, files, home_file) = login_files(harness);
    let staged = creds.join(dir.trim_start_matches('.'));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&staged)
        .map_err(io_err("could not create", &staged))?;
    let copy = |src: &Path, dst: &Path| -> Result<bool, ContainerError> {
        let Ok(data) = std::fs::read(src) else {
            return Ok(false);
        };
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(dst)
            .map_err(io_err("could not write", dst))?;
        f.write_all(&data).map_err(io_err("could not write", dst))?;
        Ok(true)
    };
    for f in files {
        copy(&host_home.join(dir).join(f), &staged.join(f))?;
    }
    let mut mounts = vec![Mount {
        src: staged,
        dst: agent_home.join(dir),
        readonly: false,
    }];
    if let Some(hf) = home_file {
        let dst = creds.join(hf.trim_start_matches('.'));
        if copy(&host_home.join(hf), &dst)? {
            mounts.push(Mount {
                src: dst,
                dst: agent_home.join(hf),
                readonly: false,
            });
        }
    }
    Ok(mounts)
}

/// The git identity and model keys, for the 0600 env file.
fn env_lines(
    repo: Option<&Repo>,
    leaf: &Leaf,
    spec_env: &[(String, String)],
    extra: &[(String, String)],
) -> String {
    let mut vars: Vec<(String, String)> = vec![("TREEBOX_BOX".into(), leaf.to_string())];
    // The repository's view of the identity, or (a folder box) the user's own config.
    let cfg = match repo {
        Some(r) => r.git.config(),
        None => git2::Config::open_default(),
    };
    if let Ok(cfg) = cfg {
        for (key, names) in [
            ("user.name", ["GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"]),
            ("user.email", ["GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"]),
        ] {
            if let Ok(v) = cfg.get_string(key) {
                for n in names {
                    vars.push((n.into(), v.clone()));
                }
            }
        }
    }
    for k in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "CLAUDE_CODE_OAUTH_TOKEN",
    ] {
        if let Ok(v) = std::env::var(k) {
            vars.push((k.into(), v));
        }
    }
    vars.extend(spec_env.iter().cloned());
    vars.extend(extra.iter().cloned());
    let mut out = String::new();
    for (k, v) in vars {
        // The env-file format has no quoting: a value with a newline cannot be passed.
        if v.contains(['\n', '\r']) || k.is_empty() || k.contains(['=', '\n']) {
            continue;
        }
        out.push_str(&format!("{k}={v}\n"));
    }
    out
}

/// Everything needed to make (or remake) a box's container.
pub struct Spec<'a> {
    /// The user's repository; `None` for a folder box (a project without git).
    pub repo: Option<&'a Repo>,
    pub layout: &'a Layout,
    pub leaf: &'a Leaf,
    pub record: &'a Record,
    pub engine: Engine,
    pub template: Template,
    pub harness: Harness,
    pub firewall: bool,
    pub extra_allow: Vec<String>,
}

/// The image tag for a template and its build arguments.
fn image_tag(template: &Template, args: &[(String, String)]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(template.digest().as_bytes());
    for (k, v) in args {
        h.update(k.as_bytes());
        h.update([0]);
        h.update(v.as_bytes());
        h.update([0]);
    }
    let hex: String = h
        .finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("treebox-{}:{hex}", template.name())
}

impl Spec<'_> {
    fn agent_user(&self) -> (String, PathBuf) {
        let (uid, gid) = host_ids();
        let user = self
            .template
            .spec()
            .user
            .clone()
            .unwrap_or_else(|| format!("{uid}:{gid}"));
        let home = if uid == 0 && self.template.spec().user.is_none() {
            PathBuf::from("/root")
        } else {
            PathBuf::from("/home/agent")
        };
        (user, home)
    }

    fn build_args(&self) -> Vec<(String, String)> {
        let (uid, gid) = host_ids();
        let node = node_major(&self.record.path);
        let mut args: Vec<(String, String)> = Vec::new();
        if let Some(base) = self.template.spec().base_image_for(node.as_deref()) {
            args.push(("BASE_IMAGE".into(), base));
        }
        args.push(("HOST_UID".into(), uid.to_string()));
        args.push(("HOST_GID".into(), gid.to_string()));
        args.push((
            "NODE_VERSION".into(),
            node.unwrap_or_else(|| template::DEFAULT_NODE_VERSION.to_string()),
        ));
        for (k, v) in &self.template.spec().build_args {
            args.push((k.clone(), v.clone()));
        }
        args
    }

    /// Build the image unless one with the same template and arguments exists.
    pub fn ensure_image(&self) -> Result<String, ContainerError> {
        let args = self.build_args();
        let tag = image_tag(&self.template, &args);
        if self.engine.image_exists(&tag) {
            return Ok(tag);
        }
        // One build at a time per engine on this machine: concurrent creates would
        // build the same image twice, and podman's builds race with each other. The
        // first waits-and-builds; the rest find the image made when they get the lock.
        let lock_path = self
            .layout
            .repo_state
            .parent()
            .and_then(Path::parent)
            .unwrap_or(&self.layout.repo_state)
            .join(format!("build-{}.lock", self.engine.program()));
        let _build_lock = crate::state::WaitedLock::acquire(&lock_path)
            .map_err(io_err("could not lock", &lock_path))?;
        if self.engine.image_exists(&tag) {
            return Ok(tag);
        }
        let ctx = self.layout.box_state(self.leaf).join("build");
        if ctx.exists() {
            std::fs::remove_dir_all(&ctx).map_err(io_err("could not clear", &ctx))?;
        }
        std::fs::create_dir_all(&ctx).map_err(io_err("could not create", &ctx))?;
        self.template.write_to(&ctx)?;
        self.engine
            .build(&tag, &ctx, &args)
            .output()
            .map_err(ContainerError::Build)?;
        Ok(tag)
    }

    /// The mounts: the checkout and git data at host paths, the protections, caches,
    /// credentials and status.
    fn mounts(
        &self,
        agent_home: &Path,
        ecos: &[Ecosystem],
    ) -> Result<(Vec<Mount>, EnvVars), ContainerError> {
        let r = self.record;
        let mut m = vec![Mount::same(&r.path, false)];
        match (r.git_mode.as_str(), self.repo) {
            // A folder box: the folder itself is all there is.
            ("folder", _) | (_, None) => {}
            ("clone", Some(repo)) => {
                m.push(Mount::same(&repo.common_dir.join("objects"), true));
                m.push(Mount::same(
                    &self.layout.box_state(self.leaf).join("hooks"),
                    true,
                ));
            }
            (_, Some(repo)) => {
                let common = &repo.common_dir;
                m.push(Mount::same(common, false));
                m.push(Mount::same(&common.join("hooks"), true));
                // Other boxes' registrations read-only, so an in-box `git worktree prune`
                // cannot delete them; this box's own admin dir writable, its guard not.
                let worktrees = common.join("worktrees");
                m.push(Mount::same(&worktrees, true));
                if let Some(admin) = repo.worktree_admin_dir(&r.path) {
                    m.push(Mount::same(&admin, false));
                    m.push(Mount::same(
                        &admin.join(crate::provision::guard::HOOKS_DIR_NAME),
                        true,
                    ));
                }
            }
        }
        let host_home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        let mut env = Vec::new();
        for eco in ecos {
            for (src, dst, var) in cache_mounts(*eco, &host_home) {
                std::fs::create_dir_all(&src).map_err(io_err("could not create", &src))?;
                if !var.is_empty() {
                    env.push((var.to_string(), cache_env_value(var, &dst)));
                }
                m.push(Mount {
                    src,
                    dst: PathBuf::from(dst),
                    readonly: false,
                });
            }
        }
        m.extend(stage_credentials(
            self.layout,
            self.leaf,
            self.harness,
            &host_home,
            agent_home,
        )?);
        let status = self.layout.box_state(self.leaf).join("status");
        std::fs::create_dir_all(&status).map_err(io_err("could not create", &status))?;
        m.push(Mount {
            src: status,
            dst: PathBuf::from(STATUS_DIR),
            readonly: false,
        });
        for mount in &m {
            for p in [&mount.src, &mount.dst] {
                if !mountable(p) {
                    return Err(ContainerError::Unmountable { path: p.clone() });
                }
            }
        }
        Ok((m, env))
    }

    /// Make the container (image, env file, run), apply the firewall. Idempotent: an
    /// existing container is started if stopped. An engine that does not answer is
    /// reported as such, whatever step noticed it.
    pub fn create(&self, ecos: &[Ecosystem]) -> Result<ContainerRecord, ContainerError> {
        self.create_inner(ecos).map_err(|e| explain(self.engine, e))
    }

    fn create_inner(&self, ecos: &[Ecosystem]) -> Result<ContainerRecord, ContainerError> {
        let name = container_name(self.layout, self.leaf);
        let (user, home) = self.agent_user();
        let image = self.ensure_image()?;
        let mut rec = ContainerRecord {
            engine: self.engine.program().into(),
            name: name.clone(),
            image: image.clone(),
            user: user.clone(),
            home: home.clone(),
            id: String::new(),
            pid: 0,
        };
        // A box made before has a container to start; a new one has none to ask about.
        let existing = if self.record.container.is_some() {
            self.engine.state(&name).map_err(ContainerError::Engine)?
        } else {
            None
        };
        match existing {
            Some(s) if s.running => {}
            Some(_) => {
                self.engine
                    .start(&name)
                    .output()
                    .map_err(ContainerError::Run)?;
            }
            None => {
                let (mounts, cache_env) = self.mounts(&home, ecos)?;
                let env_file = self.layout.box_state(self.leaf).join("container.env");
                let spec_env: Vec<(String, String)> = self
                    .template
                    .spec()
                    .env
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let text = env_lines(self.repo, self.leaf, &spec_env, &cache_env);
                atomic::write(&env_file, text.as_bytes(), 0o600)
                    .map_err(io_err("could not write", &env_file))?;
                let mut caps: Vec<String> = Vec::new();
                if self.firewall {
                    caps.extend(
                        self.template
                            .spec()
                            .cap_add
                            .iter()
                            .map(|c| c.as_str().to_string()),
                    );
                    for c in ["NET_ADMIN", "NET_RAW"] {
                        if !caps.iter().any(|x| x == c) {
                            caps.push(c.into());
                        }
                    }
                }
                let spec = RunSpec {
                    name: name.clone(),
                    hostname: self.leaf.to_string(),
                    image,
                    labels: vec![
                        (
                            "org.treebox.repo".into(),
                            self.record.repo.to_string_lossy().into_owned(),
                        ),
                        ("org.treebox.box".into(), self.leaf.to_string()),
                    ],
                    env_file,
                    mounts,
                    cap_add: caps,
                    network: std::env::var("TREEBOX_NETWORK")
                        .ok()
                        .filter(|n| !n.is_empty()),
                    workdir: self.record.path.clone(),
                    user,
                };
                match self.engine.run(&spec).output() {
                    Ok(_) => {}
                    // An interrupted create made it before it could record it.
                    Err(e)
                        if e.stderr().contains("already in use")
                            || e.stderr().contains("already exists") =>
                    {
                        match self.engine.state(&name).map_err(ContainerError::Engine)? {
                            Some(s) if s.running => {}
                            _ => {
                                self.engine
                                    .start(&name)
                                    .output()
                                    .map_err(ContainerError::Run)?;
                            }
                        }
                    }
                    Err(e) => return Err(ContainerError::Run(e)),
                }
            }
        }
        if self.firewall {
            self.apply_firewall(&name)?;
        }
        rec.observe(self.engine)?;
        Ok(rec)
    }

    /// Apply the egress firewall as root, with the template's allowlist plus the
    /// user's; failing closed.
    pub fn apply_firewall(&self, name: &str) -> Result<(), ContainerError> {
        apply_firewall(self.engine, name, &self.template, &self.extra_allow)
    }
}

/// The allowlist the firewall gets: the template's plus the user's extra entries.
fn allowlist(template: &Template, extra: &[String]) -> Vec<u8> {
    let mut text = template
        .spec()
        .firewall
        .as_ref()
        .and_then(|f| template.file(&f.allowlist))
        .map(|f| f.contents.to_vec())
        .unwrap_or_default();
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    for e in extra {
        text.extend_from_slice(e.as_bytes());
        text.push(b'\n');
    }
    text
}

pub fn apply_firewall(
    engine: Engine,
    name: &str,
    template: &Template,
    extra: &[String],
) -> Result<(), ContainerError> {
    engine
        .exec(
            name,
            "0:0",
            Path::new("/"),
            &[],
            false,
            &[FIREWALL.into(), "-".into()],
        )
        .stdin_bytes(allowlist(template, extra))
        .output()
        .map(|_| ())
        .map_err(ContainerError::Firewall)
}

/// Run setup inside the container: the ecosystems' installs (against the mounted
/// caches) or the user's `setup` commands, then the template's `postCreate`. Fails
/// loudly: the first failing step is an error.
/// Can the box's image run the guard (a glibc ≥ 2.34 program, copied from the host)?
/// Every hook of the box is the guard, and git aborts a commit whose
/// `reference-transaction` hook cannot start, so an image without it is refused at
/// create time, with the reason, instead of failing on the agent's first commit.
///
/// Every container of one image loads the guard alike, so the answer is kept per image
/// and guard build (a marker in the state dir): only the first box of an image pays
/// the extra `exec`.
pub fn check_guard(
    engine: Engine,
    rec: &ContainerRecord,
    box_path: &Path,
    guard: &Path,
) -> Result<(), ContainerError> {
    let marker = std::fs::read(guard).ok().and_then(|bytes| {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(rec.engine.as_bytes());
        h.update([0]);
        h.update(rec.image.as_bytes());
        h.update([0]);
        h.update(&bytes);
        let key: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        crate::state::layout::state_root()
            .ok()
            .map(|root| root.join("guard-runs").join(key))
    });
    if marker.as_ref().is_some_and(|m| m.is_file()) {
        return Ok(());
    }
    let argv = [guard.to_string_lossy().into_owned(), "--version".into()];
    let out = engine
        .exec(&rec.name, &rec.user, box_path, &[], false, &argv)
        .output_any()
        .map_err(ContainerError::Engine)?;
    if out.status.success() {
        if let Some(m) = marker {
            if let Some(dir) = m.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = std::fs::write(&m, b"");
        }
        return Ok(());
    }
    let text = String::from_utf8_lossy(&out.stderr);
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Err(ContainerError::GuardCannotRun {
        detail: crate::sanitize::line(&format!("{last} ({})", out.status)),
    })
}

pub fn setup_inside(
    engine: Engine,
    rec: &ContainerRecord,
    box_path: &Path,
    ecos: &[Ecosystem],
    custom: Option<&[String]>,
    post_create: &[String],
    on_step: &mut dyn FnMut(&str),
) -> Result<(), ContainerError> {
    let mut steps: Vec<(String, Vec<String>, EnvVars)> = Vec::new();
    for (name, cmd) in setup::plan_steps(box_path, ecos, custom, &setup::CacheMode::Shared) {
        steps.push((name, cmd.argv(), cmd.env_strings()));
    }
    for (i, c) in post_create.iter().enumerate() {
        steps.push((
            format!("postCreate[{i}]"),
            vec!["sh".into(), "-c".into(), c.clone()],
            vec![],
        ));
    }
    for (name, argv, env) in steps {
        on_step(&name);
        let out = engine
            .exec(&rec.name, &rec.user, box_path, &env, false, &argv)
            .output_any()
            .map_err(ContainerError::Engine)?;
        if !out.status.success() {
            let text = String::from_utf8_lossy(&out.stderr);
            let detail: Vec<&str> = text.lines().rev().take(5).collect();
            let detail: Vec<&str> = detail.into_iter().rev().collect();
            return Err(ContainerError::Setup {
                step: name,
                detail: crate::sanitize::line(&format!("{} ({})", detail.join(" / "), out.status)),
            });
        }
    }
    Ok(())
}

/// Make sure a recorded container runs: start it when stopped (re-applying the
/// firewall), recreate it when it was removed.
pub fn ensure_running(
    repo: Option<&Repo>,
    layout: &Layout,
    record: &Record,
    cfg_allow: &[String],
) -> Result<ContainerRecord, ContainerError> {
    let Some(rec) = record.container.as_ref() else {
        return Err(ContainerError::NoEngine);
    };
    let engine = Engine::parse(&rec.engine).ok_or(ContainerError::NoEngine)?;
    if crate::runner::oci::running_by_proc(&rec.id, rec.pid) {
        return Ok(rec.clone());
    }
    // The hot path (`run`, `attach`, `enter`): one `inspect`, nothing else, when the
    // container is already running. An engine that does not answer fails here.
    let state = engine.state(&rec.name).map_err(|e| {
        if e.is_not_found() {
            ContainerError::EngineDown {
                engine: rec.engine.clone(),
            }
        } else {
            ContainerError::Engine(e)
        }
    })?;
    if let Some(s) = state.as_ref().filter(|s| s.running) {
        if s.pid == rec.pid && s.id == rec.id {
            return Ok(rec.clone());
        }
        // Running, but restarted behind our back (its first process changed): a
        // restart loses the firewall's rules, so apply them again.
        let mut rec = rec.clone();
        if record.firewall {
            let template = template::find(record.template.as_deref().unwrap_or("default"))?;
            apply_firewall(engine, &rec.name, &template, cfg_allow)?;
        }
        rec.id = s.id.clone();
        rec.pid = s.pid;
        return Ok(rec);
    }
    let template = template::find(record.template.as_deref().unwrap_or("default"))?;
    match state {
        Some(_) => {
            engine
                .start(&rec.name)
                .output()
                .map_err(ContainerError::Run)?;
            if record.firewall {
                apply_firewall(engine, &rec.name, &template, cfg_allow)?;
            }
            let mut rec = rec.clone();
            rec.observe(engine)?;
            Ok(rec)
        }
        None => {
            let leaf = Leaf::parse(&record.name).map_err(|_| ContainerError::NoEngine)?;
            let spec = Spec {
                repo,
                layout,
                leaf: &leaf,
                record,
                engine,
                template,
                harness: record.harness.parse().unwrap_or_default(),
                firewall: record.firewall,
                extra_allow: cfg_allow.to_vec(),
            };
            let ecos: Vec<Ecosystem> = record
                .ecosystems
                .iter()
                .filter_map(|e| e.parse().ok())
                .collect();
            spec.create(&ecos)
        }
    }
}

/// Refresh the harness's credential copies (every `enter`).
pub fn refresh_credentials(
    layout: &Layout,
    record: &Record,
    harness: Harness,
) -> Result<(), ContainerError> {
    let (Some(rec), Ok(leaf)) = (record.container.as_ref(), Leaf::parse(&record.name)) else {
        return Ok(());
    };
    let host_home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    // The mounts of a running container point at these paths: only refresh the files.
    let (dir, files, home_file) = login_files(harness);
    let staged = layout
        .box_state(&leaf)
        .join("credentials")
        .join(dir.trim_start_matches('.'));
    if !staged.is_dir() {
        stage_credentials(layout, &leaf, harness, &host_home, &rec.home)?;
        return Ok(());
    }
    for f in files
        .iter()
        .copied()
        .map(|f| (host_home.join(dir).join(f), staged.join(f)))
        .chain(home_file.map(|hf| {
            (
                host_home.join(hf),
                layout
                    .box_state(&leaf)
                    .join("credentials")
                    .join(hf.trim_start_matches('.')),
            )
        }))
    {
        if let Ok(data) = std::fs::read(&f.0) {
            write_in_place(&f.1, &data)?;
        }
    }
    Ok(())
}

/// Rewrite a staged credential file in place. A file bind-mounted on its own pins its
/// inode, so a rename would leave the container reading the old copy; the staging dir
/// is host-owned, so there is no symlink to fear, but one is refused all the same.
fn write_in_place(path: &Path, data: &[u8]) -> Result<(), ContainerError> {
    use std::os::unix::fs::OpenOptionsExt;
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file()) {
        return Err(ContainerError::Io {
            what: "refusing to write through",
            path: path.to_path_buf(),
            source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
        });
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(io_err("could not write", path))?;
    f.write_all(data).map_err(io_err("could not write", path))
}

/// Remove a box's container and, when no other container uses it, its image.
/// A container already removed by hand is not an error.
pub fn remove(rec: &ContainerRecord) -> Result<(), ContainerError> {
    let engine = Engine::parse(&rec.engine).ok_or(ContainerError::NoEngine)?;
    if engine.version().is_none() {
        return Err(ContainerError::EngineDown {
            engine: rec.engine.clone(),
        });
    }
    let out = engine
        .remove(&rec.name)
        .output_any()
        .map_err(ContainerError::Engine)?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr).to_lowercase();
        if !err.contains("no such") && !err.contains("no container") {
            return Err(ContainerError::Engine(CmdError::Failed {
                line: engine.remove(&rec.name).to_string(),
                status: out.status,
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            }));
        }
    }
    if engine.users_of_image(&rec.image).is_empty() {
        let _ = engine.remove_image(&rec.image).output_any();
    }
    Ok(())
}

/// The agent's reported status (`working`, `idle`, `waiting`), from the status
/// directory: a small file `state` whose first word is the status, parsed as untrusted
/// data. `None` when absent or not one of the three.
pub fn read_status(layout: &Layout, leaf: &Leaf) -> Option<(String, std::time::SystemTime)> {
    let p = layout.box_state(leaf).join("status").join("state");
    let m = std::fs::symlink_metadata(&p).ok()?;
    if !m.is_file() || m.len() > MAX_STATUS_BYTES {
        return None;
    }
    let text = std::fs::read_to_string(&p).ok()?;
    let word = text.split_whitespace().next()?;
    matches!(word, "working" | "idle" | "waiting").then(|| {
        (
            word.to_string(),
            m.modified().unwrap_or(std::time::UNIX_EPOCH),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_major_sources() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(node_major(d.path()), None);
        std::fs::write(
            d.path().join(".tool-versions"),
            "python 3.12\nnodejs 18.19.0\n",
        )
        .unwrap();
        assert_eq!(node_major(d.path()).as_deref(), Some("18"));
        std::fs::write(
            d.path().join("package.json"),
            r#"{"engines":{"node":">=20.1"}}"#,
        )
        .unwrap();
        assert_eq!(node_major(d.path()).as_deref(), Some("20"));
        std::fs::write(d.path().join(".nvmrc"), "v22.3.0\n").unwrap();
        assert_eq!(node_major(d.path()).as_deref(), Some("22"));
        std::fs::write(d.path().join(".nvmrc"), "$(rm -rf /)\n").unwrap();
        assert_eq!(node_major(d.path()).as_deref(), Some("20"));
    }

    #[test]
    fn caches_never_include_host_executables() {
        let home = Path::new("/home/u");
        for eco in Ecosystem::ALL {
            for (src, _, _) in cache_mounts(eco, home) {
                assert!(!src.ends_with("bin"), "{eco:?}: {}", src.display());
            }
        }
    }

    #[test]
    fn env_lines_skip_newlines() {
        let d = tempfile::tempdir().unwrap();
        let r = git2::Repository::init(d.path()).unwrap();
        drop(r);
        let repo = Repo::discover(d.path()).unwrap();
        let leaf = Leaf::parse("b").unwrap();
        let text = env_lines(
            Some(&repo),
            &leaf,
            &[("A".into(), "1".into()), ("B".into(), "x\ny".into())],
            &[],
        );
        assert!(text.contains("TREEBOX_BOX=b\n"));
        assert!(text.contains("A=1\n"));
        assert!(!text.contains("B="));
    }
}
