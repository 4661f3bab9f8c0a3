//! A box's container: its name, its record, making it (`Spec::create`), removing it,
//! and reading the engine's `inspect`; keeping it running is `running.rs`'s.
//!
//! Invariants:
//! - A create is idempotent: an existing container is started, not made twice. A new
//!   container is made (`create`), recorded, and only then started: no container of
//!   treebox's runs unrecorded. A name taken by a container no record names is refused
//!   with its id, never adopted.
//! - The agent's writable mounts are handed to its identity (never root, never the
//!   host user's uid) once the container runs.
//! - The hot path (`run`, `attach`, `enter`) asks `/proc`, then at most one `inspect`,
//!   when the container already runs; a restart behind treebox's back re-applies the
//!   firewall (a restart loses its rules).
//! - Removing a box's container removes its image only when no other container uses it.
//!
//! Called by `provision` (create, enter), the CLI's `run`, and `teardown`/`folder`
//! (remove).

use std::path::{Path, PathBuf};

use super::credentials::env_lines;
use super::engine::{Engine, RunSpec};
use super::error::{explain, io_err, ContainerError};
use super::image::Spec;
use super::launch::ENV_DIR;
use super::mounts::Mount;
use super::Ecosystem;
use crate::cmd::CmdError;
use crate::names::Leaf;
pub use crate::state::ContainerRecord;
use crate::state::{atomic, Layout, Record};

/// Refresh a record's id and pid from the engine (after a start).
pub(super) fn observe(rec: &mut ContainerRecord, engine: Engine) -> Result<(), ContainerError> {
    if let Some(s) = engine.state(&rec.name).map_err(ContainerError::Engine)? {
        rec.id = s.id;
        rec.pid = s.pid;
    }
    Ok(())
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

impl Spec<'_> {
    /// Make the container (image, env file, create, record, start, the agent's
    /// ownership of its mounts), apply the firewall. Idempotent: an existing container
    /// is started if stopped. An engine that does not answer is reported as such,
    /// whatever step noticed it.
    pub fn create(&self, ecos: &[Ecosystem]) -> Result<ContainerRecord, ContainerError> {
        self.create_saying(ecos).map(|(rec, _)| rec)
    }

    /// [`Spec::create`], and what the user should hear of it: a new container the
    /// engine made without the box's limits (a rootless podman with no cgroups of its
    /// own says so on the `create`'s stderr, and goes on).
    pub fn create_saying(
        &self,
        ecos: &[Ecosystem],
    ) -> Result<(ContainerRecord, Vec<String>), ContainerError> {
        let mut said = Vec::new();
        self.create_inner(ecos, &mut said)
            .map(|rec| (rec, said))
            .map_err(|e| explain(self.engine, e))
    }

    fn create_inner(
        &self,
        ecos: &[Ecosystem],
        said: &mut Vec<String>,
    ) -> Result<ContainerRecord, ContainerError> {
        let name = container_name(self.layout, self.leaf);
        // A box made before has a container to start; a new one has none to ask about.
        let existing = match &self.record.container {
            Some(old) => self
                .engine
                .state(&name)
                .map_err(ContainerError::Engine)?
                .map(|s| (s, old.clone())),
            None => None,
        };
        // A container made now is not asked about again below.
        let made = existing.is_none();
        let rec = match existing {
            // Its identity and env delivery are the ones it was made with.
            Some((s, mut rec)) => {
                if !s.running {
                    self.engine
                        .start(&name)
                        .output()
                        .map_err(ContainerError::Run)?;
                }
                rec.name = name.clone();
                rec
            }
            None => self.make(&name, ecos, said)?,
        };
        let mut rec = rec;
        if self.firewall {
            super::firewall::apply_and_keep(
                self.engine,
                &name,
                &self.template,
                &self.extra_allow,
                &self.layout.firewall_rules_path(self.leaf),
            )?;
        }
        // A container just made is not asked about again (an engine call on the way to
        // the agent's prompt): its id is known, and its first process is asked for by
        // the next `enter` (`ensure_running`) or read when its ports are
        // ([`listening`]). A firewalled one is: a first process unknown to
        // `ensure_running` reads as a restart, whose rules it applies again.
        if !made || self.firewall {
            observe(&mut rec, self.engine)?;
        }
        Ok(rec)
    }

    /// A new container: made, recorded, started, its writable mounts given to the
    /// agent. A name already taken by a container no record names is refused, never
    /// adopted: its mounts may point at directories since removed.
    fn make(
        &self,
        name: &str,
        ecos: &[Ecosystem],
        said: &mut Vec<String>,
    ) -> Result<ContainerRecord, ContainerError> {
        let agent = self.agent_identity()?;
        // Named, not looked for: the run says when the image is missing (then it is
        // built, and the run made again), so a built image costs no engine call here.
        let image = self.image_tag(&agent);
        let (mut mounts, cache_env) = self.mounts(&agent.home, ecos)?;
        let env_file = self.layout.container_env_path(self.leaf);
        let spec_env: Vec<(String, String)> = self
            .template
            .spec()
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        // The block of ports: fixed for life, so written once with the rest.
        let mut fixed = cache_env;
        fixed.extend(crate::ports::env(&self.inside_ports(), true));
        let text = env_lines(
            self.repo,
            self.leaf,
            &spec_env,
            &fixed,
            &self.record.forward_tokens,
        );
        let env_dir = env_file
            .parent()
            .expect("the env file lives in a directory of its own")
            .to_path_buf();
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&env_dir)
                .map_err(io_err("could not create", &env_dir))?;
        }
        atomic::write(&env_file, text.as_bytes(), 0o600)
            .map_err(io_err("could not write", &env_file))?;
        super::keys::write_keys(self.layout, self.record, self.harness)?;
        let launcher = self.layout.container_launcher_path(self.leaf);
        super::launch::keep_launcher(&launcher).map_err(io_err("could not write", &launcher))?;
        mounts.push(Mount {
            src: env_dir,
            dst: PathBuf::from(ENV_DIR),
            readonly: true,
        });
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
            name: name.to_string(),
            hostname: self.leaf.to_string(),
            image: image.clone(),
            labels: vec![
                (
                    "org.treebox.repo".into(),
                    self.record.repo.to_string_lossy().into_owned(),
                ),
                ("org.treebox.box".into(), self.leaf.to_string()),
            ],
            mounts,
            cap_add: caps,
            network: std::env::var("TREEBOX_NETWORK")
                .ok()
                .filter(|n| !n.is_empty()),
            workdir: self.record.path.clone(),
            limits: self.record.limits,
            publish: self
                .record
                .ports
                .iter()
                .copied()
                .zip(self.inside_ports())
                .collect(),
            // The idle anchor runs as root: an engine gives a root `exec` only the
            // capabilities the container's own user has (none for a non-root user),
            // and treebox's root steps (the firewall, the launcher's drop) need them.
            // Nothing talks to the anchor; the agent's programs all go through the
            // launcher.
            user: "0:0".into(),
            command: Vec::new(),
        };
        // The box's own writable mounts; never the user's git dir (which a container
        // worktree of an earlier version still mounts).
        let own: Vec<PathBuf> = spec
            .mounts
            .iter()
            .filter(|m| !m.readonly)
            .filter(|m| self.repo.is_none_or(|r| !m.src.starts_with(&r.common_dir)))
            .map(|m| m.dst.clone())
            .collect();
        // The anchor gives the agent its paths as the container first starts.
        let mut spec = spec;
        spec.command = match own.is_empty() {
            true => vec!["sleep".into(), "infinity".into()],
            false => {
                let mut c: Vec<String> = vec![
                    "sh".into(),
                    "-c".into(),
                    super::launch::ANCHOR.into(),
                    "sh".into(),
                    agent.user(),
                    self.record.path.to_string_lossy().into_owned(),
                ];
                c.extend(own.iter().map(|p| p.to_string_lossy().into_owned()));
                c
            }
        };
        let anchor_hands = !own.is_empty();
        // Named in the record before it exists (its id and first process are not known
        // yet: the next `enter` asks the engine for them, `ensure_running`).
        let mut rec = ContainerRecord {
            engine: self.engine.program().into(),
            name: name.to_string(),
            image,
            user: agent.user(),
            home: agent.home.clone(),
            id: String::new(),
            pid: 0,
            launcher: true,
            agent_paths: own,
            anchor_hands,
            inside_ports: match self.template.spec().ports.is_empty() {
                true => Vec::new(),
                false => self.inside_ports(),
            },
            base_image: self
                .template
                .spec()
                .base_build
                .as_ref()
                .map(|_| super::image::base_tag(&self.template)),
        };
        self.record_made(Some(&rec))?;
        // The hand-over's notes of an earlier container of this box are not this one's.
        let status = self.layout.status_dir(self.leaf);
        super::handed::clear(&status).map_err(io_err("could not clear", &status))?;
        let mut run = self.engine.create(&spec).output();
        if run.as_ref().is_err_and(|e| no_such_image(e.stderr())) {
            run = match self.ensure_image(&agent) {
                Ok(_) => self.engine.create(&spec).output(),
                Err(e) => {
                    // No container was made: the record names none, as before.
                    self.record_made(None)?;
                    return Err(e);
                }
            };
        }
        rec.id = match run {
            Ok(out) => {
                if spec.limits.is_some() {
                    said.extend(super::limits::ignored(self.engine, &out.stderr));
                }
                String::from_utf8_lossy(&out.stdout).trim().to_string()
            }
            Err(e) if name_taken(e.stderr()) => {
                // Nothing of ours is under that name: a name the engine refused is
                // another's, never to be removed by this box's teardown.
                self.record_made(None)?;
                let id = self
                    .engine
                    .state(name)
                    .ok()
                    .flatten()
                    .map(|s| s.id)
                    .unwrap_or_default();
                return Err(ContainerError::NameTaken {
                    engine: self.engine.program().to_string(),
                    name: name.to_string(),
                    id,
                });
            }
            Err(e) => {
                // Made but not started (a port taken, a mount refused): it is ours and
                // stays named, for the next `enter` or teardown; none made, none named.
                match self.engine.state(name).ok().flatten() {
                    Some(s) => {
                        rec.id = s.id;
                        self.record_made(Some(&rec))?;
                    }
                    None => self.record_made(None)?,
                }
                return Err(ContainerError::Run(e));
            }
        };
        Ok(rec)
    }
}

impl Spec<'_> {
    /// The port inside the container each port of the box's block reaches: the
    /// template's `ports` in order (a dev container's `forwardPorts`), then each under
    /// its own number. What the box's programs are told to bind (`TREEBOX_PORT`).
    fn inside_ports(&self) -> Vec<u16> {
        let named = &self.template.spec().ports;
        self.record
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| named.get(i).copied().unwrap_or(*p))
            .collect()
    }

    /// Save the box's record naming the container about to be made (`None`: naming
    /// none again): an interruption from here on leaves a container that teardown
    /// removes and the next `enter` starts, never one nothing names.
    fn record_made(&self, made: Option<&ContainerRecord>) -> Result<(), ContainerError> {
        let path = self.layout.record_path(self.leaf);
        let mut saved = self.record.clone();
        saved.container = made.cloned();
        saved.save(&path).map_err(|e| ContainerError::Io {
            what: "could not save the record",
            path: path.clone(),
            source: std::io::Error::other(e.to_string()),
        })
    }
}

/// `argv` run as root in container `name`, its output dropped.
fn as_root(engine: Engine, name: &str, argv: &[String]) -> Result<(), ContainerError> {
    engine
        .exec_as_root(name, argv)
        .output()
        .map(|_| ())
        .map_err(ContainerError::Run)
}

/// Does the engine's `run` say the container's name is taken (not a port: "address
/// already in use" is the start's)?
fn name_taken(stderr: &str) -> bool {
    (stderr.contains("already in use") || stderr.contains("already exists"))
        && !super::error::port_refused(stderr)
}

/// Does the engine's `run` say it has no such image (`--pull never`)?
fn no_such_image(stderr: &str) -> bool {
    let e = stderr.to_lowercase();
    e.contains("no such image") || e.contains("image not known")
}

/// Give the agent's files back to the user before its container goes, where the user
/// could not remove them: a host user who is not root, whose engine runs as root
/// (docker), or rootless (its containers' root is the user). A root host user removes
/// anything and needs nothing. The container is started for it when stopped; one
/// already gone leaves the files as they are.
fn give_back(engine: Engine, rec: &ContainerRecord) -> Result<(), ContainerError> {
    if !rec.launcher || rec.agent_paths.is_empty() {
        return Ok(());
    }
    // SAFETY: getuid/getgid cannot fail and touch no memory.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    // Root removes anything: no engine question (`docker info`) on its teardowns.
    if uid == 0 {
        return Ok(());
    }
    let rootless = engine.rootless();
    let owner = if rootless {
        "0:0".to_string()
    } else {
        format!("{uid}:{gid}")
    };
    match engine.state(&rec.name).map_err(ContainerError::Engine)? {
        None => return Ok(()),
        Some(s) if !s.running => {
            engine
                .start(&rec.name)
                .output()
                .map_err(ContainerError::Run)?;
        }
        Some(_) => {}
    }
    if rec.agent_paths.is_empty() {
        return Ok(());
    }
    // The agent's processes go first: one left behind (Claude Code's background clone
    // of its plugin marketplace, say) writes and removes files while `chown` walks
    // them, and a file gone mid-walk is no failure (the walk is made again).
    // A container that hands over itself may still be at it (a box removed as soon as
    // it was made): its files are given back once it has finished.
    const SCRIPT: &str = r#"a=$1 u=$2 w=$3 m=$4; shift 4
n=0
while [ "$w" = 1 ] && [ ! -e "$m" ] && [ ! -e "$m-failed" ] && [ "$n" -lt 6000 ]; do
  n=$((n + 1)); sleep 0.01
done
[ -n "$a" ] && [ "$a" != 0 ] && pkill -KILL -U "$a" 2>/dev/null
for _ in 1 2 3; do
  err=$(chown -R -h "$u" -- "$@" 2>&1) && exit 0
  printf '%s\n' "$err" | grep -qv 'No such file or directory' && break
done
printf '%s\n' "$err" >&2
exit 1"#;
    let agent = rec.user.split(':').next().unwrap_or_default();
    let mut argv: Vec<String> = vec![
        "sh".into(),
        "-c".into(),
        SCRIPT.into(),
        "sh".into(),
        agent.into(),
        owner,
        if rec.anchor_hands { "1" } else { "0" }.into(),
        super::launch::HANDED.into(),
    ];
    argv.extend(
        rec.agent_paths
            .iter()
            .map(|p| p.to_string_lossy().into_owned()),
    );
    as_root(engine, &rec.name, &argv)
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
        if let Some(base) = &rec.base_image {
            remove_base(engine, base, &rec.image);
        }
    }
    Ok(())
}

/// Remove the template's own base image `base` that `image` was built on, once nothing
/// is made of it: no container uses it and no image of `image`'s template is left (the
/// engines would only untag a base with images on it). Never while an image is being
/// built on this engine (one may be about to build on `base`): then it stays for the
/// next teardown. Best effort.
fn remove_base(engine: Engine, base: &str, image: &str) {
    let Ok(lock) = crate::state::layout::build_lock_path(engine.program()) else {
        return;
    };
    let Ok(Some(_building)) = crate::state::WaitedLock::try_acquire(&lock) else {
        return;
    };
    let template = image.split_once(':').map_or(image, |(repo, _)| repo);
    if engine.users_of_image(base).is_empty() && engine.images_of(template) == Some(0) {
        let _ = engine.remove_image(base).output_any();
    }
}

/// Remove every container of a box: the recorded one (and its image when no other
/// container uses it), then any other the engine holds labelled for the box — one an
/// interrupted create made before it could record it. With nothing recorded, an engine
/// that does not answer is passed over: nothing of treebox's can be running there.
pub fn remove_box_containers(record: &Record) -> Result<(), ContainerError> {
    if let Some(c) = &record.container {
        if let Some(engine) = Engine::parse(&c.engine) {
            give_back(engine, c)?;
        }
        remove(c)?;
    }
    let engine = record
        .container
        .as_ref()
        .and_then(|c| Engine::parse(&c.engine))
        .or_else(|| Engine::of(record.runner));
    let Some(engine) = engine else {
        return Ok(());
    };
    if record.container.is_none() && !engine.installed() {
        return Ok(());
    }
    let Some(ids) = engine.labelled(&record.repo, &record.name) else {
        return Ok(());
    };
    for id in ids {
        engine
            .remove(&id)
            .output()
            .map_err(ContainerError::Engine)?;
    }
    Ok(())
}

/// The ports listening in a running container's network namespace, read from its
/// recorded first process (`/proc/<pid>/net`: no engine asked); `None` when that
/// process is not the container's now (stopped, restarted since the record).
pub fn listening(rec: &ContainerRecord) -> Option<crate::ports::listen::Listening> {
    let pid = match rec.pid {
        // Not known yet (a container just made): the engine tells.
        0 => first_process(rec)?,
        pid => pid,
    };
    if !running_by_proc(&rec.id, pid) {
        return None;
    }
    crate::ports::listen::listening(Path::new(&format!("/proc/{pid}/net")))
}

/// The first process of a container whose record has none yet, asked of the engine
/// once in this process's life (a `watch` reads a box's ports at every refresh), and
/// again only when `/proc` says it is no longer that container's.
fn first_process(rec: &ContainerRecord) -> Option<u32> {
    use std::collections::BTreeMap;
    static LEARNED: std::sync::Mutex<BTreeMap<String, u32>> =
        std::sync::Mutex::new(BTreeMap::new());
    let mut learned = LEARNED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&pid) = learned.get(&rec.id) {
        if running_by_proc(&rec.id, pid) {
            return Some(pid);
        }
    }
    let pid = Engine::parse(&rec.engine)?.state(&rec.name).ok()??.pid;
    learned.insert(rec.id.clone(), pid);
    Some(pid)
}

/// Is the container with id `id` running, as far as this host's `/proc` can tell?
/// Its first process `pid` must still exist *and* belong to that container's cgroup
/// (so a reused pid never passes). `false` means "ask the engine", not "stopped".
pub fn running_by_proc(id: &str, pid: u32) -> bool {
    if pid == 0 || id.len() < 12 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/cgroup")) {
        Ok(text) => text.contains(id),
        Err(_) => false,
    }
}
