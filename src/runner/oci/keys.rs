//! A box's keys file: the model keys, provider settings and `--token-from` variables
//! its programs get (0600, outside every mount but its own read-only one; the launcher
//! reads it when a program starts, so no key is in the engine's `inspect`).
//!
//! Every `enter` rewrites it from the environment of the command — a key the shell has
//! now replaces the box's — but a key the shell lacks is kept as the box had it: an
//! `enter` from another terminal must not leave the agent at its login screen. A key
//! set empty in the shell is written empty (that is how to clear one). What happened
//! to each key is reported by name ([`KeysOutcome`]), never by value.
//!
//! Called by `container` (create) and `credentials` (refresh on `enter`).

use super::credentials::{render, user_codex_config};
use super::engine::Engine;
use super::error::{io_err, ContainerError};
use super::host_url;
use crate::harness::Harness;
use crate::names::Leaf;
use crate::state::{Layout, Record};
use crate::untrusted::{read_regular, Links};

/// The model keys and provider settings a box's programs get, when the user's
/// environment has them (SPEC §7: the agent's provider settings reach it): the keys,
/// the endpoints (a URL naming this machine is rewritten, [`host_url`]), the model
/// choices, the cloud-provider switches, and the user's wish for no telemetry.
const MODEL_KEYS: [&str; 21] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_BEDROCK_BASE_URL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",
    "ANTHROPIC_VERTEX_BASE_URL",
    "ANTHROPIC_VERTEX_PROJECT_ID",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLOUD_ML_REGION",
    "DISABLE_TELEMETRY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
];

/// Names a Codex provider's `env_key` may not forward: what the launcher sets itself
/// or what changes how every program in the box runs.
const NOT_A_KEY: [&str; 8] = [
    "HOME", "USER", "LOGNAME", "PATH", "TERM", "SHELL", "IFS", "ENV",
];

/// The variables the Codex providers in `config` (a `config.toml`) read their keys
/// from (`model_providers.<id>.env_key`): the user named them, so they reach the box
/// as the model keys do.
fn codex_key_names(config: &str) -> Vec<String> {
    let Ok(doc) = config.parse::<toml::Table>() else {
        return Vec::new();
    };
    let Some(providers) = doc.get("model_providers").and_then(toml::Value::as_table) else {
        return Vec::new();
    };
    providers
        .values()
        .filter_map(|p| p.get("env_key")?.as_str())
        .filter(|k| super::launch::valid_key(k))
        .filter(|k| !NOT_A_KEY.contains(k) && !k.starts_with("LD_"))
        .map(String::from)
        .collect()
}

/// The most read of a keys file (treebox's own, 0600; a bound all the same).
const MAX_KEYS_FILE: u64 = 1 << 20;

/// What became of the keys on a rewrite of the keys file, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeysOutcome {
    /// The box had it, this shell has none: the box's value stays.
    pub kept: Vec<String>,
    /// This shell's value is written, and the box had another one (or none).
    pub replaced: Vec<String>,
}

/// The keys a box gets, as names and values, and what became of the ones it had.
pub struct Keys {
    vars: Vec<(String, String)>,
    pub outcome: KeysOutcome,
}

impl Keys {
    /// The value the box gets for `name`.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The names a box's keys file may hold: the model keys, the `--token-from` variables
/// and `more` (a Codex provider's key), each once.
fn names(forwarded: &[String], more: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in MODEL_KEYS
        .iter()
        .map(|k| k.to_string())
        .chain(forwarded.iter().cloned())
        .chain(more.iter().cloned())
    {
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

/// The values `names` have in this process's environment. A provider URL naming this
/// machine names `host` instead: the engine's name for the host ([`host_url`]).
fn from_env(names: &[String], host: &str) -> Vec<(String, Option<String>)> {
    names
        .iter()
        .map(|k| {
            let v = std::env::var(k).ok().map(|v| {
                if host_url::URL_KEYS.contains(&k.as_str()) {
                    host_url::for_box(&v, host).unwrap_or(v)
                } else {
                    v
                }
            });
            (k.clone(), v)
        })
        .collect()
}

/// `KEY=value` lines of a keys file (as [`render`] writes them); anything else is
/// passed over.
fn parse(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The keys the box gets: the shell's value of each name where it has one, else the
/// value the box had (`had`); and what became of each.
fn merge(now: Vec<(String, Option<String>)>, had: &[(String, String)]) -> Keys {
    let mut vars = Vec::new();
    let mut outcome = KeysOutcome::default();
    for (k, v) in now {
        let old = had.iter().find(|(h, _)| *h == k).map(|(_, v)| v);
        match (v, old) {
            (Some(v), old) => {
                if old != Some(&v) {
                    outcome.replaced.push(k.clone());
                }
                vars.push((k, v));
            }
            (None, Some(old)) => {
                outcome.kept.push(k.clone());
                vars.push((k, old.clone()));
            }
            (None, None) => {}
        }
    }
    Keys { vars, outcome }
}

/// The keys box `record` gets now, for `harness` (Codex: with the keys the providers
/// of the user's own `config.toml` name — never the box's copy, which the box may
/// write); `None` for a box with no container.
pub fn keys_for(layout: &Layout, record: &Record, harness: Harness) -> Option<Keys> {
    let (Ok(leaf), Some(engine)) = (Leaf::parse(&record.name), Engine::of(record.runner)) else {
        return None;
    };
    let more = match harness {
        Harness::Codex => user_codex_config()
            .map(|text| codex_key_names(&text))
            .unwrap_or_default(),
        Harness::Claude => Vec::new(),
    };
    let now = from_env(
        &names(&record.forward_tokens, &more),
        host_url::host_name(engine),
    );
    let had = read_regular(
        &layout.container_keys_path(&leaf),
        MAX_KEYS_FILE,
        Links::Refuse,
    )
    .map(|raw| parse(&String::from_utf8_lossy(&raw)))
    .unwrap_or_default();
    Some(merge(now, &had))
}

/// Write a box's keys file (0600, replaced whole: its directory is what is mounted)
/// with [`keys_for`]; what became of each key.
pub fn write_keys(
    layout: &Layout,
    record: &Record,
    harness: Harness,
) -> Result<KeysOutcome, ContainerError> {
    let Some(keys) = keys_for(layout, record, harness) else {
        return Ok(KeysOutcome::default());
    };
    let Ok(leaf) = Leaf::parse(&record.name) else {
        return Ok(KeysOutcome::default());
    };
    let path = layout.container_keys_path(&leaf);
    let text = render(keys.vars);
    crate::state::atomic::write(&path, text.as_bytes(), 0o600)
        .map_err(io_err("could not write", &path))?;
    Ok(keys.outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now(pairs: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
            .collect()
    }

    #[test]
    fn a_key_the_shell_lacks_is_kept_and_one_it_has_replaces_the_box_s() {
        let had =
            parse("ANTHROPIC_API_KEY=sk-old\nOPENAI_API_KEY=same\nANTHROPIC_BASE_URL=http://a\n");
        let keys = merge(
            now(&[
                ("ANTHROPIC_API_KEY", None),
                ("OPENAI_API_KEY", Some("same")),
                ("ANTHROPIC_BASE_URL", Some("http://b")),
                ("ANTHROPIC_MODEL", Some("m")),
                ("CLOUD_ML_REGION", None),
            ]),
            &had,
        );
        assert_eq!(keys.value("ANTHROPIC_API_KEY"), Some("sk-old"));
        assert_eq!(keys.value("OPENAI_API_KEY"), Some("same"));
        assert_eq!(keys.value("ANTHROPIC_BASE_URL"), Some("http://b"));
        assert_eq!(keys.value("CLOUD_ML_REGION"), None);
        assert_eq!(keys.outcome.kept, vec!["ANTHROPIC_API_KEY"]);
        assert_eq!(
            keys.outcome.replaced,
            vec!["ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL"]
        );
    }

    #[test]
    fn a_key_set_empty_in_the_shell_clears_the_box_s() {
        let had = parse("ANTHROPIC_API_KEY=sk-old\n");
        let keys = merge(now(&[("ANTHROPIC_API_KEY", Some(""))]), &had);
        assert_eq!(keys.value("ANTHROPIC_API_KEY"), Some(""));
        assert_eq!(keys.outcome.replaced, vec!["ANTHROPIC_API_KEY"]);
        assert!(keys.outcome.kept.is_empty());
    }

    #[test]
    fn only_the_names_asked_for_are_kept() {
        // A name the file holds that is no longer a key the box gets goes.
        let had = parse("GH_TOKEN=old\nANTHROPIC_API_KEY=k\n");
        let keys = merge(now(&[("ANTHROPIC_API_KEY", None)]), &had);
        assert_eq!(keys.value("GH_TOKEN"), None);
        assert_eq!(keys.value("ANTHROPIC_API_KEY"), Some("k"));
    }
}
