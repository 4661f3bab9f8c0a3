//! A box's record: the creation-time choices and the provisioning state.
//!
//! Later commands reuse the recorded choices instead of drifting to today's config
//! (SPEC §5). The record is host-owned (outside every mount) and written atomically.
//! It is still parsed as untrusted data: a malformed record is an error naming the file.
//! The harness and the ecosystems are the closed vocabularies, read leniently: an
//! unknown harness reads as the default one and an unknown ecosystem is dropped, so a
//! record written by another version stays usable (it always has been).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::atomic;
use crate::ecosystem::Ecosystem;
use crate::harness::Harness;
use crate::vocab::{GitMode, RunnerKind};

/// Largest record accepted.
const MAX_RECORD_BYTES: u64 = 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub schema_version: u32,
    /// The leaf: the box's permanent identity.
    pub name: String,
    /// The user's main worktree.
    pub repo: PathBuf,
    pub common_dir: PathBuf,
    /// The box's checkout.
    pub path: PathBuf,
    /// The branch the box was created on (the live branch may differ after a rename).
    pub branch: String,
    /// Whether treebox created `branch` (rather than checking out an existing one).
    pub created_branch: bool,
    pub base: String,
    /// The ref the new branch was cut from; `None` for an existing branch.
    pub base_ref: Option<String>,
    pub base_commit: Option<String>,
    pub git_mode: GitMode,
    pub runner: RunnerKind,
    pub template: Option<String>,
    pub firewall: bool,
    /// An unknown name reads as the default harness.
    #[serde(deserialize_with = "lenient_harness")]
    pub harness: Harness,
    /// The ecosystems setup found, in detection order; unknown names are dropped.
    #[serde(deserialize_with = "known_ecosystems")]
    pub ecosystems: Vec<Ecosystem>,
    pub lockfile_hash: Option<String>,
    pub setup_completed: bool,
    /// The checkout (and, for a clone, its pin) was made whole. From then on the box
    /// may have run code, so nothing on the host runs git in it to "repair" it again
    /// (SPEC §8.1). Records written before this field existed count as complete.
    #[serde(default = "complete")]
    pub checkout_completed: bool,
    /// SHA-256 of the `.env` as it was copied in, to tell later edits in the box.
    pub env_hash: Option<String>,
    pub created_at: u64,
    pub updated_at: u64,
    /// The resource limits of the box's container (docker and podman runners), from
    /// the user's config when the box was made. `None` for a host box, and for a
    /// container box made before limits existed (its container has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<super::Limits>,
    /// The box's container, for the docker and podman runners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<super::ContainerRecord>,
    /// A sandboxed worktree's own bare clone (SPEC §6): the git dir its worktree hangs
    /// off, in host-owned bookkeeping. `None` for every other box — and for a container
    /// worktree made by an earlier version, which mounts the user's git dir instead
    /// (see [`Record::mounts_user_git`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bare_clone: Option<PathBuf>,
    /// The environment variables forwarded into the box (`--token-from`): their names,
    /// never their values (those are read at container start, into the 0600 env file).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forward_tokens: Vec<String>,
    /// `--allow-forge`: the hosts of origin's forge added to the firewall's allowlist.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forge_hosts: Vec<String>,
    /// The build outputs the box started with (`warm`), and how they came in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm: Option<crate::plan::Warming>,
    /// The box's block of ports, for life ([`crate::ports`]); none for a box made
    /// before blocks existed, or with `"ports": {"count": 0}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<u16>,
}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("could not read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: malformed record: {message}")]
    Malformed { path: PathBuf, message: String },
    #[error("could not write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn complete() -> bool {
    true
}

/// A harness name; one this version does not know reads as the default harness
/// (as records were always read). Anything but a string is still malformed.
fn lenient_harness<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Harness, D::Error> {
    let name = String::deserialize(d)?;
    Ok(name.parse().unwrap_or_default())
}

/// The ecosystem names this version knows, in their recorded order; others dropped.
/// Anything but a list of strings is still malformed.
fn known_ecosystems<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Ecosystem>, D::Error> {
    let names = Vec::<String>::deserialize(d)?;
    Ok(names.iter().filter_map(|n| n.parse().ok()).collect())
}

pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Record {
    /// The record of a box about to be made: its identity and creation-time choices,
    /// with nothing provisioned yet (`setupCompleted: false`). The container choices
    /// (template, firewall) are kept only for a container runner.
    #[allow(clippy::too_many_arguments)]
    pub fn begin(
        name: &str,
        repo: &Path,
        common_dir: &Path,
        path: &Path,
        git_mode: GitMode,
        runner: RunnerKind,
        harness: Harness,
        container_choices: (&str, bool),
    ) -> Record {
        let container = runner.is_container();
        Record {
            schema_version: 1,
            name: name.to_string(),
            repo: repo.to_path_buf(),
            common_dir: common_dir.to_path_buf(),
            path: path.to_path_buf(),
            branch: String::new(),
            created_branch: false,
            base: String::new(),
            base_ref: None,
            base_commit: None,
            git_mode,
            runner,
            template: container.then(|| container_choices.0.to_string()),
            firewall: container && container_choices.1,
            harness,
            ecosystems: Vec::new(),
            lockfile_hash: None,
            setup_completed: false,
            checkout_completed: false,
            env_hash: None,
            created_at: now(),
            updated_at: now(),
            limits: None,
            container: None,
            bare_clone: None,
            forward_tokens: Vec::new(),
            forge_hosts: Vec::new(),
            warm: None,
            ports: Vec::new(),
        }
    }

    /// A worktree box in a container: its worktree hangs off its own bare clone.
    pub fn is_sandboxed_worktree(&self) -> bool {
        self.git_mode == GitMode::Worktree && self.runner.is_container()
    }

    /// A container worktree made before sandboxed worktrees existed: its container
    /// mounts the user's own git dir read-write (unsafe, SPEC §6).
    pub fn mounts_user_git(&self) -> bool {
        self.is_sandboxed_worktree() && self.bare_clone.is_none()
    }

    /// Read a record; `Ok(None)` when there is none.
    pub fn load(path: &Path) -> Result<Option<Record>, RecordError> {
        let read = |source| RecordError::Read {
            path: path.to_path_buf(),
            source,
        };
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(read(e)),
        };
        if !meta.is_file() || meta.len() > MAX_RECORD_BYTES {
            return Err(RecordError::Malformed {
                path: path.to_path_buf(),
                message: "not a regular file of sane size".into(),
            });
        }
        // Read to the end through `take`: no second stat of the open file (`list`
        // reads one record per box).
        let mut text = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0) + 1);
        // Removed since the stat (a teardown racing this command): no record, as above.
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(read(e)),
        };
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, MAX_RECORD_BYTES + 1),
            &mut text,
        )
        .map_err(read)?;
        serde_json::from_slice(&text)
            .map(Some)
            .map_err(|e| RecordError::Malformed {
                path: path.to_path_buf(),
                message: e.to_string(),
            })
    }

    /// Write atomically (0600), creating the parent directory.
    pub fn save(&mut self, path: &Path) -> Result<(), RecordError> {
        let write = |source| RecordError::Write {
            path: path.to_path_buf(),
            source,
        };
        self.updated_at = now();
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(write)?;
        }
        let mut data = serde_json::to_vec_pretty(self).map_err(|e| write(e.into()))?;
        data.push(b'\n');
        atomic::write(path, &data, 0o600).map_err(write)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn sample() -> Record {
        Record {
            schema_version: 1,
            name: "fix".into(),
            repo: "/r".into(),
            common_dir: "/r/.git".into(),
            path: "/r/.treebox/worktrees/fix".into(),
            branch: "fix".into(),
            created_branch: true,
            base: "main".into(),
            base_ref: Some("refs/remotes/origin/main".into()),
            base_commit: Some("0".repeat(40)),
            git_mode: GitMode::Worktree,
            runner: RunnerKind::Host,
            template: None,
            firewall: false,
            harness: Harness::Claude,
            ecosystems: vec![],
            lockfile_hash: None,
            setup_completed: false,
            checkout_completed: true,
            env_hash: None,
            created_at: 1,
            updated_at: 1,
            limits: None,
            container: None,
            bare_clone: None,
            forward_tokens: Vec::new(),
            forge_hosts: Vec::new(),
            warm: None,
            ports: Vec::new(),
        }
    }

    #[test]
    fn round_trip_and_malformed() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("b/record.json");
        assert!(Record::load(&p).unwrap().is_none());
        let mut r = sample();
        r.save(&p).unwrap();
        assert_eq!(Record::load(&p).unwrap().unwrap().name, "fix");
        std::fs::write(&p, "{").unwrap();
        assert!(matches!(
            Record::load(&p),
            Err(RecordError::Malformed { .. })
        ));
    }

    #[test]
    fn vocabularies_keep_their_names_on_disk() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("record.json");
        let mut r = sample();
        r.harness = Harness::Codex;
        r.ecosystems = vec![Ecosystem::Pnpm, Ecosystem::Cargo];
        r.save(&p).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(v["harness"], "codex");
        assert_eq!(v["ecosystems"], serde_json::json!(["pnpm", "cargo"]));
        assert_eq!(Record::load(&p).unwrap().unwrap(), r);
    }

    #[test]
    fn limits_are_kept_and_a_record_without_them_loads() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("record.json");
        let mut r = sample();
        r.save(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(!text.contains("limits"), "{text}");
        assert_eq!(Record::load(&p).unwrap().unwrap().limits, None);
        r.limits = Some(super::super::Limits {
            pids: 64,
            memory: 1 << 30,
            milli_cpus: 1000,
        });
        r.save(&p).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(
            v["limits"],
            serde_json::json!({"pids": 64, "memory": 1u64 << 30, "cpus": 1.0})
        );
        assert_eq!(Record::load(&p).unwrap().unwrap(), r);
    }

    #[test]
    fn unknown_harness_and_ecosystems_still_load() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("record.json");
        let mut v = serde_json::to_value(sample()).unwrap();
        v["harness"] = "gpt-agent".into();
        v["ecosystems"] = serde_json::json!(["bun", "uv", "maven", "go"]);
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
        let r = Record::load(&p).unwrap().unwrap();
        assert_eq!(r.harness, Harness::default());
        assert_eq!(r.ecosystems, [Ecosystem::Uv, Ecosystem::Go]);
        // Not a string (or a list of them) is still a malformed record.
        v["harness"] = 7.into();
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
        assert!(matches!(
            Record::load(&p),
            Err(RecordError::Malformed { .. })
        ));
        v["harness"] = "claude".into();
        v["ecosystems"] = "uv".into();
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
        assert!(matches!(
            Record::load(&p),
            Err(RecordError::Malformed { .. })
        ));
    }
}
