//! Configuration (SPEC §10): the user's `$XDG_CONFIG_HOME/treebox/config.json` and the
//! project's `.treebox.json`.
//!
//! The user file has a closed vocabulary: an unknown key or a wrong type is an error
//! naming the file and the key (with a did-you-mean). The project file is repo-provided
//! and therefore hostile (SPEC §8.3): it may set only the inert keys `git` and `base`;
//! anything else is reported as a warning and ignored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::harness::Harness;
use crate::suggest::suggest;
use crate::vocab::GitMode;

mod keys;
mod limits;
mod machines;
mod mcp;
mod ports;

pub use keys::accepted_keys;
pub use limits::default_memory;
use limits::{host_cores, host_memory, parse_limits, LIMIT_KEYS};
pub use machines::{Machine, LOCAL};
pub use mcp::McpConfig;
pub use ports::PortsConfig;

/// Largest configuration file read; anything bigger is refused as malformed.
const MAX_CONFIG_BYTES: u64 = 256 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: unknown key `{key}`{}", did_you_mean(.suggestion))]
    UnknownKey {
        file: PathBuf,
        key: String,
        suggestion: Option<String>,
    },
    #[error("{file}: `{key}` must be {expected}")]
    WrongType {
        file: PathBuf,
        key: String,
        expected: &'static str,
    },
    #[error("{file}: not valid JSON: {message}")]
    Malformed { file: PathBuf, message: String },
    #[error("could not read {file}")]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn did_you_mean(s: &Option<String>) -> String {
    match s {
        Some(k) => format!(" (did you mean `{k}`?)"),
        None => String::new(),
    }
}

impl ConfigError {
    pub fn file(&self) -> &Path {
        match self {
            ConfigError::UnknownKey { file, .. }
            | ConfigError::WrongType { file, .. }
            | ConfigError::Malformed { file, .. }
            | ConfigError::Read { file, .. } => file,
        }
    }
}

/// How a harness program is launched; `program` replaces `claude`/`codex`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HarnessOverride {
    pub program: Option<String>,
    /// Claude Code only: on the host runner as root, tell it that it runs in a sandbox
    /// (`IS_SANDBOX=1`), switching off its own refusal of root. The user's choice.
    #[serde(default)]
    pub allow_root: bool,
}

/// The user's configuration, validated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserConfig {
    pub file: Option<PathBuf>,
    pub harness: Option<Harness>,
    pub isolation: Option<String>,
    pub git: Option<String>,
    pub base: Option<String>,
    pub runner: Option<bool>,
    pub setup: Option<Vec<String>>,
    pub harnesses: BTreeMap<String, HarnessOverride>,
    pub template: Option<String>,
    pub firewall: Option<bool>,
    pub env_file: Option<String>,
    /// Extra egress allowlist entries for `--firewall` boxes (hosts or CIDRs).
    pub allowlist: Vec<String>,
    /// Environment variables forwarded into every new box (`--token-from`).
    pub forward_tokens: Vec<String>,
    /// Whether new boxes start with the main checkout's build outputs.
    pub warm: Option<crate::vocab::Warm>,
    /// `git treebox land`'s strategy when no flag names one (`squash` otherwise).
    pub land: Option<crate::land::onto::Strategy>,
    /// The resource limits of new container boxes, as the user set them (the rest are
    /// defaults: [`UserConfig::limits`]).
    pub limits: LimitsConfig,
    /// Whether `watch` rings the bell and posts desktop notifications (default: on).
    pub notify: Option<bool>,
    /// What a lead agent may do through `git treebox mcp`, beyond reading and stopping.
    pub mcp: McpConfig,
    /// The other machines boxes can run on, over SSH.
    pub machines: Vec<Machine>,
    /// Where `create` makes boxes without `--on`: [`LOCAL`] or a machine's name.
    pub on: Option<String>,
    /// Each new box's block of ports.
    pub ports: PortsConfig,
}

/// `"limits"`: each one the user set (0 switches that limit off).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LimitsConfig {
    pub pids: Option<u32>,
    pub memory: Option<u64>,
    pub milli_cpus: Option<u32>,
}

/// The process limit of a new container box unless the config sets one: room for a
/// parallel build and a language server or two, not for a fork bomb.
pub const DEFAULT_PIDS: u32 = 4096;

/// The inert keys a project may set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectConfig {
    pub git: Option<String>,
    pub base: Option<String>,
}

/// Every key of the user file and the JSON type it must have.
const USER_KEYS: &[(&str, Kind)] = &[
    ("harness", Kind::Enum(&["claude", "codex"])),
    (
        "isolation",
        Kind::Enum(&["host", "docker", "podman", "auto"]),
    ),
    ("git", Kind::Enum(&["worktree", "clone"])),
    ("base", Kind::Str),
    ("runner", Kind::Bool),
    ("setup", Kind::StrList),
    ("harnesses", Kind::Object),
    ("template", Kind::Str),
    ("firewall", Kind::Bool),
    ("envFile", Kind::Str),
    ("allowlist", Kind::StrList),
    ("forwardTokens", Kind::StrList),
    ("warm", Kind::Enum(&["auto", "copy", "off"])),
    ("limits", Kind::Object),
    ("notify", Kind::Bool),
    ("land", Kind::Enum(&crate::land::onto::Strategy::NAMES)),
    ("mcp", Kind::Object),
    ("machines", Kind::Object),
    ("on", Kind::Str),
    ("ports", Kind::Object),
];

#[derive(Debug, Clone, Copy)]
enum Kind {
    Str,
    Bool,
    StrList,
    Object,
    Enum(&'static [&'static str]),
}

impl Kind {
    fn expected(self) -> &'static str {
        match self {
            Kind::Str => "a string",
            Kind::Bool => "true or false",
            Kind::StrList => "a list of strings",
            Kind::Object => "an object",
            Kind::Enum(v) => match v {
                ["claude", "codex"] => "one of \"claude\", \"codex\"",
                ["host", "docker", "podman", "auto"] => {
                    "one of \"host\", \"docker\", \"podman\", \"auto\""
                }
                ["worktree", "clone"] => "one of \"worktree\", \"clone\"",
                ["auto", "copy", "off"] => "one of \"auto\", \"copy\", \"off\"",
                ["squash", "rebase", "merge"] => "one of \"squash\", \"rebase\", \"merge\"",
                _ => "one of the documented values",
            },
        }
    }

    fn accepts(self, v: &Value) -> bool {
        match self {
            Kind::Str => v.is_string(),
            Kind::Bool => v.is_boolean(),
            Kind::StrList => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
            Kind::Object => v.is_object(),
            Kind::Enum(choices) => v.as_str().is_some_and(|s| choices.contains(&s)),
        }
    }
}

/// Read a small JSON object file; `Ok(None)` when it does not exist.
fn read_object(file: &Path) -> Result<Option<serde_json::Map<String, Value>>, ConfigError> {
    let meta = match std::fs::metadata(file) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Read {
                file: file.to_path_buf(),
                source,
            })
        }
    };
    let malformed = |message: String| ConfigError::Malformed {
        file: file.to_path_buf(),
        message,
    };
    if !meta.is_file() {
        return Err(malformed("not a regular file".into()));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(malformed(format!("larger than {MAX_CONFIG_BYTES} bytes")));
    }
    let text = std::fs::read_to_string(file).map_err(|source| ConfigError::Read {
        file: file.to_path_buf(),
        source,
    })?;
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(m)) => Ok(Some(m)),
        Ok(_) => Err(malformed("the top level must be an object".into())),
        Err(e) => Err(malformed(e.to_string())),
    }
}

/// The user config file path: `$XDG_CONFIG_HOME/treebox/config.json`.
pub fn user_config_path() -> Option<PathBuf> {
    xdg::BaseDirectories::with_prefix("treebox")
        .get_config_home()
        .map(|d| d.join("config.json"))
}

/// The environment variable that marks a machine as a runner (`TREEBOX_RUNNER=1`).
pub const RUNNER_ENV: &str = "TREEBOX_RUNNER";

/// Is this machine marked as a runner (config `"runner": true` or `TREEBOX_RUNNER=1`)?
pub fn is_marked_runner(config: Option<bool>, env: Option<&str>) -> bool {
    config.unwrap_or(false) || env == Some("1")
}

/// What marks a machine as a runner (the variable wins when both do).
pub fn runner_mark(config: Option<bool>, env: Option<&str>) -> Option<&'static str> {
    if env == Some("1") {
        Some("TREEBOX_RUNNER=1")
    } else if config.unwrap_or(false) {
        Some("config `\"runner\": true`")
    } else {
        None
    }
}

impl UserConfig {
    /// Is this machine marked as a runner: [`is_marked_runner`] of the config's `runner`
    /// and [`RUNNER_ENV`]. The one place the variable is read (`auto` isolation picks an
    /// engine only on a marked machine).
    pub fn marked_runner(&self) -> bool {
        is_marked_runner(self.runner, std::env::var(RUNNER_ENV).ok().as_deref())
    }

    /// What marks this machine as a runner, in words (`TREEBOX_RUNNER=1`, or the
    /// config's `"runner": true`); `None` when it is not marked.
    pub fn runner_mark(&self) -> Option<&'static str> {
        runner_mark(self.runner, std::env::var(RUNNER_ENV).ok().as_deref())
    }

    /// Load and validate the user config; a missing file is the empty config.
    pub fn load() -> Result<UserConfig, ConfigError> {
        match user_config_path() {
            Some(p) => UserConfig::load_from(&p),
            None => Ok(UserConfig::default()),
        }
    }

    pub fn load_from(file: &Path) -> Result<UserConfig, ConfigError> {
        let Some(map) = read_object(file)? else {
            return Ok(UserConfig::default());
        };
        let wrong = |key: &str, expected: &'static str| ConfigError::WrongType {
            file: file.to_path_buf(),
            key: key.to_string(),
            expected,
        };
        for (key, value) in &map {
            let Some((_, kind)) = USER_KEYS.iter().find(|(k, _)| k == key) else {
                return Err(ConfigError::UnknownKey {
                    file: file.to_path_buf(),
                    key: key.clone(),
                    suggestion: suggest(key, USER_KEYS.iter().map(|(k, _)| *k)),
                });
            };
            if !kind.accepts(value) {
                return Err(wrong(key, kind.expected()));
            }
        }
        let s = |k: &str| map.get(k).and_then(Value::as_str).map(str::to_string);
        let b = |k: &str| map.get(k).and_then(Value::as_bool);
        let mut cfg = UserConfig {
            file: Some(file.to_path_buf()),
            harness: s("harness").and_then(|h| h.parse().ok()),
            isolation: s("isolation"),
            git: s("git"),
            base: s("base"),
            runner: b("runner"),
            setup: map.get("setup").and_then(Value::as_array).map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            }),
            harnesses: BTreeMap::new(),
            template: s("template"),
            firewall: b("firewall"),
            notify: b("notify"),
            env_file: s("envFile"),
            forward_tokens: Vec::new(),
            warm: s("warm").and_then(|w| w.parse().ok()),
            land: s("land").and_then(|l| l.parse().ok()),
            limits: match map.get("limits") {
                Some(Value::Object(l)) => parse_limits(file, l)?,
                _ => LimitsConfig::default(),
            },
            mcp: match map.get("mcp") {
                Some(Value::Object(m)) => mcp::parse(file, m)?,
                _ => McpConfig::default(),
            },
            machines: match map.get("machines") {
                Some(Value::Object(m)) => machines::parse(file, m)?,
                _ => Vec::new(),
            },
            on: s("on"),
            ports: match map.get("ports") {
                Some(Value::Object(p)) => ports::parse(file, p)?,
                _ => PortsConfig::default(),
            },
            allowlist: map
                .get("allowlist")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        };
        cfg.forward_tokens = map
            .get("forwardTokens")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        if !cfg
            .forward_tokens
            .iter()
            .all(|n| crate::names::env_name_ok(n))
        {
            return Err(wrong(
                "forwardTokens",
                "a list of environment variable names (letters, digits, '_')",
            ));
        }
        let bad: Vec<String> =
            crate::template::allowlist_problems(cfg.allowlist.join("\n").as_bytes());
        if !bad.is_empty() {
            return Err(wrong("allowlist", "a list of host names or CIDRs"));
        }
        if let Some(Value::Object(h)) = map.get("harnesses") {
            for (name, v) in h {
                if name.parse::<Harness>().is_err() {
                    return Err(ConfigError::UnknownKey {
                        file: file.to_path_buf(),
                        key: format!("harnesses.{name}"),
                        suggestion: suggest(name, ["claude", "codex"].into_iter())
                            .map(|k| format!("harnesses.{k}")),
                    });
                }
                let Value::Object(fields) = v else {
                    return Err(wrong(&format!("harnesses.{name}"), "an object"));
                };
                // The fields of [`HarnessOverride`]; `allowRoot` is Claude Code's alone:
                // Codex has no root refusal.
                let known: Vec<&str> = keys::harness_fields()
                    .iter()
                    .copied()
                    .filter(|f| name == "claude" || *f != "allowRoot")
                    .collect();
                for (fk, fv) in fields {
                    if !known.contains(&fk.as_str()) {
                        return Err(ConfigError::UnknownKey {
                            file: file.to_path_buf(),
                            key: format!("harnesses.{name}.{fk}"),
                            suggestion: suggest(fk, known.iter().copied())
                                .map(|k| format!("harnesses.{name}.{k}")),
                        });
                    }
                    let (ok, what) = match fk.as_str() {
                        "allowRoot" => (fv.is_boolean(), "true or false"),
                        _ => (fv.is_string(), "a string"),
                    };
                    if !ok {
                        return Err(wrong(&format!("harnesses.{name}.{fk}"), what));
                    }
                }
                let o: HarnessOverride = serde_json::from_value(v.clone())
                    .map_err(|_| wrong(&format!("harnesses.{name}"), "an object"))?;
                cfg.harnesses.insert(name.clone(), o);
            }
        }
        if let Some(base) = &cfg.base {
            if crate::names::check_existing_branch(base).is_err() {
                return Err(wrong("base", "a valid branch name"));
            }
        }
        machines::check_on(file, cfg.on.as_deref(), &cfg.machines)?;
        Ok(cfg)
    }

    /// The limits a new container box gets: the config's, else the defaults —
    /// [`DEFAULT_PIDS`] processes, half this machine's memory, all its CPUs. CPUs are
    /// capped at the machine's (the engines refuse more).
    pub fn limits(&self) -> crate::state::Limits {
        let cores = host_cores();
        crate::state::Limits {
            pids: self.limits.pids.unwrap_or(DEFAULT_PIDS),
            memory: self
                .limits
                .memory
                .unwrap_or_else(|| default_memory(host_memory())),
            milli_cpus: self.limits.milli_cpus.unwrap_or(cores).min(cores),
        }
    }

    /// The program that launches `h`: the configured override, else its own name.
    /// Has the user let `h` run as root on the host runner (`harnesses.claude.allowRoot`)?
    pub fn harness_allows_root(&self, h: Harness) -> bool {
        self.harnesses.get(h.as_str()).is_some_and(|o| o.allow_root)
    }

    pub fn harness_program(&self, h: Harness) -> String {
        self.harnesses
            .get(h.as_str())
            .and_then(|o| o.program.clone())
            .unwrap_or_else(|| h.as_str().to_string())
    }
}

/// The name of the project file at the top of a checkout.
pub const PROJECT_FILE: &str = ".treebox.json";

impl ProjectConfig {
    /// Load the project's `.treebox.json` from `checkout`; keys other than `git` and
    /// `base` are returned as warnings and ignored. The file is not followed through a
    /// symlink: a repo cannot point treebox at some other file on the host.
    pub fn load(checkout: &Path) -> Result<(ProjectConfig, Vec<String>), ConfigError> {
        let file = checkout.join(PROJECT_FILE);
        if let Ok(m) = std::fs::symlink_metadata(&file) {
            if m.file_type().is_symlink() {
                return Ok((
                    ProjectConfig::default(),
                    vec![format!("{}: is a symlink; ignored", file.display())],
                ));
            }
        }
        let Some(map) = read_object(&file)? else {
            return Ok((ProjectConfig::default(), Vec::new()));
        };
        let mut warnings = Vec::new();
        let mut cfg = ProjectConfig::default();
        for (key, value) in &map {
            match (key.as_str(), value) {
                ("git", Value::String(g))
                    if matches!(g.parse(), Ok(GitMode::Worktree | GitMode::Clone)) =>
                {
                    cfg.git = Some(g.clone())
                }
                ("base", Value::String(b)) if crate::names::check_existing_branch(b).is_ok() => {
                    cfg.base = Some(b.clone())
                }
                ("git", _) | ("base", _) => {
                    return Err(ConfigError::WrongType {
                        file,
                        key: key.clone(),
                        expected: if key == "git" {
                            "one of \"worktree\", \"clone\""
                        } else {
                            "a valid branch name"
                        },
                    })
                }
                _ => warnings.push(format!(
                    "{}: key `{}` is ignored: a project file may set only `git` and `base`",
                    file.display(),
                    key.escape_debug()
                )),
            }
        }
        Ok((cfg, warnings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runner_marking() {
        assert!(!is_marked_runner(None, None));
        assert!(is_marked_runner(Some(true), None));
        assert!(is_marked_runner(None, Some("1")));
        assert!(!is_marked_runner(Some(false), Some("0")));
        assert!(!is_marked_runner(None, Some("yes")));
        assert_eq!(runner_mark(None, None), None);
        assert_eq!(runner_mark(Some(true), Some("1")), Some("TREEBOX_RUNNER=1"));
        assert_eq!(
            runner_mark(Some(true), None),
            Some("config `\"runner\": true`")
        );
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn unknown_key_suggests() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "c.json", r#"{"harnes": "claude"}"#);
        let e = UserConfig::load_from(&p).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("harnes") && msg.contains("did you mean `harness`"),
            "{msg}"
        );
        assert!(msg.contains("c.json"), "{msg}");
    }

    #[test]
    fn wrong_type_names_key() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "c.json", r#"{"runner": "yes"}"#);
        let msg = UserConfig::load_from(&p).unwrap_err().to_string();
        assert!(msg.contains("`runner` must be true or false"), "{msg}");
        let p = write(d.path(), "c.json", r#"{"warm": "maybe"}"#);
        let msg = UserConfig::load_from(&p).unwrap_err().to_string();
        assert!(
            msg.contains(r#"`warm` must be one of "auto", "copy", "off""#),
            "{msg}"
        );
        let p = write(d.path(), "c.json", r#"{"isolation": "vm"}"#);
        assert!(UserConfig::load_from(&p).is_err());
        let p = write(
            d.path(),
            "c.json",
            r#"{"harnesses": {"claude": {"progam": "x"}}}"#,
        );
        let msg = UserConfig::load_from(&p).unwrap_err().to_string();
        assert!(msg.contains("harnesses.claude.progam"), "{msg}");
    }

    #[test]
    fn good_config_loads() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "c.json",
            r#"{"harness":"codex","base":"develop","setup":["make deps"],"harnesses":{"codex":{"program":"/bin/echo"}}}"#,
        );
        let c = UserConfig::load_from(&p).unwrap();
        assert_eq!(c.harness, Some(Harness::Codex));
        assert_eq!(c.base.as_deref(), Some("develop"));
        assert_eq!(c.setup.as_deref(), Some(&["make deps".to_string()][..]));
        assert_eq!(c.harness_program(Harness::Codex), "/bin/echo");
        assert_eq!(c.harness_program(Harness::Claude), "claude");
    }

    #[test]
    fn allowlist_entries_are_validated() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "c.json",
            r#"{"allowlist": ["github.com", "10.0.0.0/8"]}"#,
        );
        assert_eq!(UserConfig::load_from(&p).unwrap().allowlist.len(), 2);
        let p = write(
            d.path(),
            "c.json",
            r#"{"allowlist": ["not a host; rm -rf /"]}"#,
        );
        assert!(UserConfig::load_from(&p)
            .unwrap_err()
            .to_string()
            .contains("allowlist"));
        let p = write(d.path(), "c.json", r#"{"allowlist": "github.com"}"#);
        assert!(UserConfig::load_from(&p).is_err());
    }

    #[test]
    fn mcp_land_and_isolation_are_read_and_checked() {
        let d = tempfile::tempdir().unwrap();
        assert!(!UserConfig::default().mcp.land);
        let p = write(d.path(), "c.json", r#"{"mcp": {"land": true}}"#);
        assert!(UserConfig::load_from(&p).unwrap().mcp.land);
        let p = write(d.path(), "c.json", r#"{"mcp": {}}"#);
        assert!(!UserConfig::load_from(&p).unwrap().mcp.land);
        let p = write(d.path(), "c.json", r#"{"mcp": {"land": "yes"}}"#);
        let msg = UserConfig::load_from(&p).unwrap_err().to_string();
        assert!(msg.contains("`mcp.land` must be true or false"), "{msg}");
        let p = write(d.path(), "c.json", r#"{"mcp": {"lands": true}}"#);
        let msg = UserConfig::load_from(&p).unwrap_err().to_string();
        assert!(msg.contains("unknown key `mcp.lands`"), "{msg}");
        assert!(msg.contains("did you mean `mcp.land`"), "{msg}");
        // The runners `box_create` may use, in order, each once.
        let p = write(
            d.path(),
            "c.json",
            r#"{"mcp": {"isolation": ["docker", "host", "docker"]}}"#,
        );
        let isolation = UserConfig::load_from(&p).unwrap().mcp.isolation;
        assert_eq!(
            isolation,
            Some(vec![
                crate::vocab::RunnerKind::Docker,
                crate::vocab::RunnerKind::Host
            ])
        );
        for bad in [r#"[]"#, r#""docker""#, r#"["vm"]"#, r#"["auto"]"#, r#"[1]"#] {
            let p = write(
                d.path(),
                "c.json",
                &format!(r#"{{"mcp": {{"isolation": {bad}}}}}"#),
            );
            let msg = UserConfig::load_from(&p).unwrap_err().to_string();
            assert!(
                msg.contains("`mcp.isolation` must be a non-empty list of runners"),
                "{bad}: {msg}"
            );
        }
    }

    #[test]
    fn limits_are_read_and_checked() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "c.json",
            r#"{"limits": {"pids": 256, "memory": "2g", "cpus": 0.5}}"#,
        );
        let c = UserConfig::load_from(&p).unwrap();
        let l = c.limits();
        assert_eq!((l.pids, l.memory, l.milli_cpus), (256, 2 << 30, 500));
        // Unset ones are the defaults; 0 switches one off; CPUs capped at the machine's.
        let p = write(
            d.path(),
            "c.json",
            r#"{"limits": {"memory": 0, "cpus": 100000}}"#,
        );
        let l = UserConfig::load_from(&p).unwrap().limits();
        assert_eq!(l.pids, DEFAULT_PIDS);
        assert_eq!(l.memory, 0);
        assert_eq!(l.milli_cpus, UserConfig::default().limits().milli_cpus);
        assert!(l.milli_cpus >= 1000);
        assert!(UserConfig::default().limits().memory >= 64 << 20);
        for (bad, key) in [
            (r#"{"limits": {"pids": -1}}"#, "limits.pids"),
            (r#"{"limits": {"pids": "many"}}"#, "limits.pids"),
            (r#"{"limits": {"memory": "8x"}}"#, "limits.memory"),
            (r#"{"limits": {"memory": "1m"}}"#, "limits.memory"),
            (r#"{"limits": {"memory": "g"}}"#, "limits.memory"),
            (r#"{"limits": {"cpus": 0.001}}"#, "limits.cpus"),
            (r#"{"limits": {"cpus": "2"}}"#, "limits.cpus"),
            (r#"{"limits": 4096}"#, "limits"),
        ] {
            let p = write(d.path(), "c.json", bad);
            let msg = UserConfig::load_from(&p).unwrap_err().to_string();
            assert!(msg.contains(&format!("`{key}` must be")), "{bad}: {msg}");
        }
        let p = write(d.path(), "c.json", r#"{"limits": {"pid": 1}}"#);
        let msg = UserConfig::load_from(&p).unwrap_err().to_string();
        assert!(msg.contains("did you mean `limits.pids`"), "{msg}");
    }

    #[test]
    fn default_memory_is_half_the_machine() {
        assert_eq!(default_memory(24 << 30), 12 << 30);
        assert_eq!(default_memory((23 << 30) + (900 << 20)), 11 << 30);
        assert_eq!(default_memory(3 << 30), 1536 << 20);
        assert_eq!(default_memory(0), 64 << 20);
    }

    #[test]
    fn missing_file_is_empty() {
        let c = UserConfig::load_from(Path::new("/nonexistent/x.json")).unwrap();
        assert_eq!(c.harness, None);
    }

    #[test]
    fn project_file_only_inert_keys() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            PROJECT_FILE,
            r#"{"git":"clone","base":"dev","setup":["rm -rf /"]}"#,
        );
        let (c, w) = ProjectConfig::load(d.path()).unwrap();
        assert_eq!(c.git.as_deref(), Some("clone"));
        assert_eq!(c.base.as_deref(), Some("dev"));
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("setup"));
    }

    #[test]
    fn malformed_is_error() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "c.json", "{");
        assert!(matches!(
            UserConfig::load_from(&p),
            Err(ConfigError::Malformed { .. })
        ));
    }

    mod props {
        //! Bad input, generated: no file content may panic the loaders, and every
        //! refusal names the file it refuses.
        use super::super::*;
        use proptest::prelude::*;

        fn json_value() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(Value::from),
                any::<f64>()
                    .prop_filter("finite", |f| f.is_finite())
                    .prop_map(Value::from),
                prop_oneof![
                    Just("claude".to_string()),
                    Just("codex".to_string()),
                    Just("worktree".to_string()),
                    Just("clone".to_string()),
                    Just("host".to_string()),
                    Just("auto".to_string()),
                    Just("main".to_string()),
                    Just("-x".to_string()),
                    Just("a..b".to_string()),
                    Just("\u{1b}[2J".to_string()),
                    any::<String>(),
                ]
                .prop_map(Value::String),
            ];
            leaf.prop_recursive(3, 24, 6, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                    prop::collection::btree_map(key(), inner, 0..6)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        /// Keys: mostly the real vocabulary (so values get type-checked), some noise.
        fn key() -> impl Strategy<Value = String> {
            let known: Vec<String> = USER_KEYS
                .iter()
                .map(|(k, _)| k.to_string())
                .chain(["claude", "codex", "program", "harnes", "Setup"].map(String::from))
                .collect();
            prop_oneof![
                4 => prop::sample::select(known),
                1 => any::<String>(),
            ]
        }

        fn top_level() -> impl Strategy<Value = Value> {
            prop_oneof![
                3 => prop::collection::btree_map(key(), json_value(), 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
                1 => json_value(),
            ]
        }

        fn contents() -> impl Strategy<Value = Vec<u8>> {
            prop_oneof![
                top_level().prop_map(|v| v.to_string().into_bytes()),
                prop::collection::vec(any::<u8>(), 0..512),
                // Valid JSON with a damaged byte.
                (top_level(), any::<prop::sample::Index>(), any::<u8>()).prop_map(|(v, at, b)| {
                    let mut t = v.to_string().into_bytes();
                    if !t.is_empty() {
                        let i = at.index(t.len());
                        t[i] = b;
                    }
                    t
                }),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn user_config_loads_or_names_the_file(bytes in contents()) {
                let d = tempfile::tempdir().unwrap();
                let p = d.path().join("config.json");
                std::fs::write(&p, &bytes).unwrap();
                match UserConfig::load_from(&p) {
                    Ok(c) => {
                        prop_assert_eq!(c.file.as_deref(), Some(p.as_path()));
                        if let Some(b) = &c.base {
                            prop_assert!(crate::names::check_existing_branch(b).is_ok());
                        }
                        if let Some(g) = &c.git {
                            prop_assert!(g == "worktree" || g == "clone");
                        }
                        if let Some(i) = &c.isolation {
                            prop_assert!(["host", "docker", "podman", "auto"].contains(&i.as_str()));
                        }
                        for name in c.harnesses.keys() {
                            prop_assert!(name == "claude" || name == "codex");
                        }
                    }
                    Err(e) => {
                        prop_assert_eq!(e.file(), p.as_path());
                        let msg = e.to_string();
                        prop_assert!(msg.contains(&p.display().to_string()), "{}", msg);
                    }
                }
            }

            #[test]
            fn project_config_loads_or_names_the_file(bytes in contents()) {
                let d = tempfile::tempdir().unwrap();
                let p = d.path().join(PROJECT_FILE);
                std::fs::write(&p, &bytes).unwrap();
                match ProjectConfig::load(d.path()) {
                    Ok((c, warnings)) => {
                        if let Some(g) = &c.git {
                            prop_assert!(g == "worktree" || g == "clone");
                        }
                        if let Some(b) = &c.base {
                            prop_assert!(crate::names::check_existing_branch(b).is_ok());
                        }
                        for w in &warnings {
                            prop_assert!(w.contains(&p.display().to_string()), "{}", w);
                            prop_assert!(!w.chars().any(|c| c.is_control()), "{:?}", w);
                        }
                    }
                    Err(e) => {
                        prop_assert_eq!(e.file(), p.as_path());
                        prop_assert!(e.to_string().contains(&p.display().to_string()));
                    }
                }
            }
        }

        #[test]
        fn oversized_files_are_refused_unread() {
            let d = tempfile::tempdir().unwrap();
            let p = d.path().join("config.json");
            let mut big = b"{\"setup\": [\"".to_vec();
            big.resize(MAX_CONFIG_BYTES as usize + 10, b'x');
            big.extend_from_slice(b"\"]}");
            std::fs::write(&p, &big).unwrap();
            let e = UserConfig::load_from(&p).unwrap_err();
            assert!(matches!(e, ConfigError::Malformed { .. }), "{e}");
            assert!(e.to_string().contains("larger than"), "{e}");
            std::fs::write(d.path().join(PROJECT_FILE), &big).unwrap();
            assert!(ProjectConfig::load(d.path()).is_err());
            // A directory where the file should be is refused, not read.
            let dir = d.path().join("dir.json");
            std::fs::create_dir(&dir).unwrap();
            assert!(UserConfig::load_from(&dir).is_err());
        }
    }
}
