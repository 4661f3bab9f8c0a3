//! `hello`: what a laptop asks another machine first — its treebox's version and
//! protocol, and what boxes there would need (tmux, an engine, memory, disk). Made
//! there by [`answer`]; read on the laptop by [`Hello::from_doc`], every field as
//! hostile data (a machine can lie about itself, not reach past its document).

use serde_json::{json, Value};

/// What a machine said of itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    pub version: String,
    pub tmux: Option<String>,
    pub docker: bool,
    pub podman: bool,
    /// `MemAvailable`, in bytes.
    pub memory: Option<u64>,
    /// Free space where its boxes' data lives, in bytes.
    pub disk: Option<u64>,
}

impl Hello {
    /// The fields of a `hello` document, each made harmless; `None` without a version.
    pub fn from_doc(doc: &Value) -> Option<Hello> {
        let text = |k: &str| doc[k].as_str().map(|s| crate::sanitize::line(&cut(s)));
        Some(Hello {
            version: text("version")?,
            tmux: text("tmux"),
            docker: doc["engines"]["docker"].as_bool().unwrap_or(false),
            podman: doc["engines"]["podman"].as_bool().unwrap_or(false),
            memory: doc["memoryAvailable"].as_u64(),
            disk: doc["diskFree"].as_u64(),
        })
    }
}

/// At most 80 characters of a machine's text.
fn cut(s: &str) -> String {
    s.chars().take(80).collect()
}

/// This machine's `hello` document.
pub fn answer() -> Value {
    let found = |p: &str| {
        let cwd = std::path::PathBuf::from("/");
        crate::cmd::find_program(p, std::env::var_os("PATH").as_deref(), &cwd).is_some()
    };
    let data = xdg::BaseDirectories::with_prefix("treebox")
        .get_data_home()
        .unwrap_or_else(|| std::path::PathBuf::from("/"));
    json!({
        "schemaVersion": 1,
        "version": env!("CARGO_PKG_VERSION"),
        "protocol": super::PROTOCOL,
        "tmux": crate::session::version(),
        "engines": {"docker": found("docker"), "podman": found("podman")},
        "memoryAvailable": memory_available(),
        "diskFree": disk_free(&data),
    })
}

/// `MemAvailable` of /proc/meminfo, in bytes.
fn memory_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Free bytes on the file system holding `dir` (or its nearest existing parent).
fn disk_free(dir: &std::path::Path) -> Option<u64> {
    let dir = dir.ancestors().find(|d| d.exists())?;
    fs4::available_space(dir).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machines_hello_reads_back() {
        let h = Hello::from_doc(&answer()).unwrap();
        assert_eq!(h.version, env!("CARGO_PKG_VERSION"));
        assert!(h.memory.is_some_and(|m| m > 0));
    }

    #[test]
    fn a_lying_hello_is_made_harmless() {
        let doc = json!({"version": format!("9\u{1b}]0;pwned\u{7}{}", "x".repeat(500)),
                         "tmux": 5, "engines": "yes", "memoryAvailable": -1});
        let h = Hello::from_doc(&doc).unwrap();
        assert!(!h.version.chars().any(char::is_control), "{:?}", h.version);
        assert!(h.version.chars().count() <= 100, "{}", h.version.len());
        assert_eq!((h.tmux, h.docker, h.memory), (None, false, None));
        assert_eq!(Hello::from_doc(&json!({})), None);
    }
}
