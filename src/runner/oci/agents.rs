//! The agent CLIs an image holds, learned once, when treebox builds the image: one
//! throwaway container runs `claude --version` and `codex --version`, and the answer is
//! kept beside the state root (`images/<engine>-<tag>.json`), so `doctor` can tell the
//! user when the CLI in a box's image is not the one they run on the host (issue 29:
//! skew) without starting anything. An image built before this was kept reads as
//! unknown.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::Engine;

/// What an image's agent CLIs said of their version (`None`: not in the image).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AgentVersions {
    pub claude: Option<String>,
    pub codex: Option<String>,
}

impl AgentVersions {
    /// The version of `harness`'s CLI.
    pub fn of(&self, harness: crate::harness::Harness) -> Option<&str> {
        match harness {
            crate::harness::Harness::Claude => self.claude.as_deref(),
            crate::harness::Harness::Codex => self.codex.as_deref(),
        }
    }
}

/// The most read of a facts file (it is treebox's own, but in a writable state dir).
const MAX_FACTS: u64 = 4096;

/// Where the facts of `engine`'s image `tag` are kept, under the state root `root`.
pub fn facts_path(root: &Path, engine: Engine, tag: &str) -> PathBuf {
    let name: String = tag
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    root.join("images")
        .join(format!("{}-{name}.json", engine.program()))
}

/// What a throwaway container of the image runs to tell its CLIs' versions.
const SCRIPT: &str =
    "claude --version 2>/dev/null | head -n1; echo ---; codex --version 2>/dev/null | head -n1";

/// How long the look inside an image may take, in all: a CLI that hangs (or an image
/// whose `claude` is something else) is given up on, its container removed.
pub const ASK_LIMIT: Duration = Duration::from_secs(20);

/// What the image's CLIs print of their versions ([`SCRIPT`] in a throwaway container
/// with no network), given up after `limit`: `None` then, or when the engine failed.
/// The container is removed whatever happened.
pub fn ask(engine: Engine, tag: &str, limit: Duration) -> Option<Vec<u8>> {
    let name = probe_name();
    let start = Instant::now();
    let made = engine
        .script_container(&name, tag, SCRIPT)
        .output_within(limit)
        .ok()
        .flatten()
        .is_some_and(|o| o.status.success());
    let out = if made {
        let left = limit.saturating_sub(start.elapsed());
        engine
            .start_attached(&name)
            .output_within(left)
            .ok()
            .flatten()
    } else {
        None
    };
    // Also after a `create` given up on: the engine may have made it meanwhile.
    let _ = engine.remove(&name).output_within(ASK_LIMIT);
    Some(out?.stdout)
}

/// A container name no other probe on this machine uses at the same time.
fn probe_name() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "treebox-probe-{}-{}-{nanos}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Keep at `path` what [`ask`] printed (`stdout`). Best effort.
pub fn keep(stdout: &[u8], path: &Path) {
    let text = String::from_utf8_lossy(stdout);
    let Some((claude, codex)) = text.split_once("---") else {
        return;
    };
    let facts = AgentVersions {
        claude: version_in(claude),
        codex: version_in(codex),
    };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let data = serde_json::to_vec(&facts).expect("facts serialize");
    let _ = crate::state::atomic::write(path, &data, 0o644);
}

/// Learn the versions of the agent CLIs in `engine`'s image `tag` (just built) and
/// keep them at `path`. Best effort: an image whose shell cannot run keeps nothing.
pub fn learn(engine: Engine, tag: &str, path: &Path) {
    if let Some(out) = ask(engine, tag, ASK_LIMIT) {
        keep(&out, path);
    }
}

/// The facts kept at `path`, if any.
pub fn read(path: &Path) -> Option<AgentVersions> {
    let raw =
        crate::untrusted::read_regular(path, MAX_FACTS, crate::untrusted::Links::Refuse).ok()?;
    serde_json::from_slice(&raw).ok()
}

/// The first word of `out` that reads as a version (`2.1.332`, `0.163.0`): digits and
/// dots, at least one dot.
pub fn version_in(out: &str) -> Option<String> {
    out.split_whitespace()
        .map(|w| w.trim_start_matches('v'))
        .find(|w| {
            w.contains('.')
                && w.chars().all(|c| c.is_ascii_digit() || c == '.')
                && w.chars().next().is_some_and(|c| c.is_ascii_digit())
        })
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_as_the_clis_print_them() {
        assert_eq!(
            version_in("2.1.332 (Claude Code)\n").as_deref(),
            Some("2.1.332")
        );
        assert_eq!(
            version_in("codex-cli 0.163.0\n").as_deref(),
            Some("0.163.0")
        );
        assert_eq!(version_in("v1.2.3").as_deref(), Some("1.2.3"));
        assert_eq!(version_in("\n"), None);
        assert_eq!(version_in("sh: claude: not found"), None);
    }

    #[test]
    fn what_the_image_said_is_kept() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("images/x.json");
        keep(b"2.1.332 (Claude Code)\n---\n", &p);
        assert_eq!(
            read(&p),
            Some(AgentVersions {
                claude: Some("2.1.332".into()),
                codex: None
            })
        );
        // A run that printed nothing of the script's (no shell) keeps nothing.
        let q = d.path().join("images/y.json");
        keep(b"", &q);
        assert_eq!(read(&q), None);
    }

    #[test]
    fn facts_are_kept_per_engine_and_tag() {
        let d = tempfile::tempdir().unwrap();
        let p = facts_path(d.path(), Engine::Docker, "treebox-default:0a1b");
        assert_eq!(p, d.path().join("images/docker-treebox-default_0a1b.json"));
        assert_eq!(read(&p), None);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, r#"{"claude":"2.1.1","codex":null}"#).unwrap();
        let v = read(&p).unwrap();
        assert_eq!(v.of(crate::harness::Harness::Claude), Some("2.1.1"));
        assert_eq!(v.of(crate::harness::Harness::Codex), None);
    }
}
