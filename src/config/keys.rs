//! The keys the user file accepts, listed from the parser's own tables: what
//! docs/configuration.md must document (a test reads both).

use std::path::Path;

use serde::Deserialize;

use super::machines::MACHINE_KEYS;
use super::mcp::MCP_KEYS;
use super::{ConfigError, HarnessOverride, Kind, LIMIT_KEYS, USER_KEYS};
use crate::suggest::suggest;

/// Every key the user file accepts, nested ones joined with `.` and a harness's name
/// written `<name>`: `limits.memory`, `harnesses.<name>.program`. Built from the
/// parser's own tables ([`USER_KEYS`], [`LIMIT_KEYS`], [`HarnessOverride`]'s serde
/// fields), so a key the parser learns is on this list (docs/configuration.md must
/// document each: a test reads it).
pub fn accepted_keys() -> Vec<String> {
    USER_KEYS
        .iter()
        .flat_map(|(key, kind)| match kind {
            Kind::Object => nested_keys(key),
            _ => vec![key.to_string()],
        })
        .collect()
}

/// The keys of the object-valued key `key`, as [`accepted_keys`] writes them; the key
/// itself when the object's keys are not known here.
fn nested_keys(key: &str) -> Vec<String> {
    match key {
        "limits" => LIMIT_KEYS
            .iter()
            .map(|(k, _)| format!("limits.{k}"))
            .collect(),
        "ports" => super::ports::PORT_KEYS
            .iter()
            .map(|(k, _)| format!("ports.{k}"))
            .collect(),
        "mcp" => MCP_KEYS.iter().map(|(k, _)| format!("mcp.{k}")).collect(),
        "machines" => MACHINE_KEYS
            .iter()
            .map(|(k, _)| format!("machines.<name>.{k}"))
            .collect(),
        "harnesses" => harness_fields()
            .iter()
            .map(|f| format!("harnesses.<name>.{f}"))
            .collect(),
        _ => vec![key.to_string()],
    }
}

/// The keys of a `harnesses.<name>` object: [`HarnessOverride`]'s fields as serde
/// names them, asked of serde itself (a deserializer that only records the field list
/// `Deserialize` hands it).
pub(super) fn harness_fields() -> &'static [&'static str] {
    /// What the recording deserializer ends with: the fields it was asked for.
    #[derive(Debug)]
    struct Fields(&'static [&'static str]);
    impl std::fmt::Display for Fields {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "fields {:?}", self.0)
        }
    }
    impl std::error::Error for Fields {}
    impl serde::de::Error for Fields {
        fn custom<T: std::fmt::Display>(_: T) -> Self {
            Fields(&[])
        }
    }
    struct Recorder;
    impl<'de> serde::Deserializer<'de> for Recorder {
        type Error = Fields;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Fields> {
            Err(Fields(&[]))
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Fields> {
            Err(Fields(fields))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    match HarnessOverride::deserialize(Recorder) {
        Err(Fields(fields)) => fields,
        Ok(_) => &[],
    }
}

/// What the key `parent.key` must be, from its object's table of `(key, expected)`;
/// an unknown key is an error naming `parent.key`, with a did-you-mean.
pub(super) fn nested_key(
    file: &Path,
    parent: &str,
    table: &[(&'static str, &'static str)],
    key: &str,
) -> Result<&'static str, ConfigError> {
    match table.iter().find(|(k, _)| *k == key) {
        Some((_, expected)) => Ok(expected),
        None => Err(ConfigError::UnknownKey {
            file: file.to_path_buf(),
            key: format!("{parent}.{key}"),
            suggestion: suggest(key, table.iter().map(|(k, _)| *k))
                .map(|k| format!("{parent}.{k}")),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ConfigError, UserConfig};
    use serde_json::Value;

    #[test]
    fn accepted_keys_come_from_the_parsers_tables() {
        let keys = accepted_keys();
        for k in [
            "harness",
            "envFile",
            "limits.memory",
            "limits.cpus",
            "harnesses.<name>.program",
            "harnesses.<name>.allowRoot",
        ] {
            assert!(keys.iter().any(|x| x == k), "{k} missing from {keys:?}");
        }
        // An object's keys stand for it; every object key's keys are known here.
        for (key, kind) in USER_KEYS {
            if matches!(kind, Kind::Object) {
                assert_ne!(nested_keys(key), [key.to_string()], "{key}: keys unknown");
                assert!(!keys.contains(&key.to_string()), "{keys:?}");
            }
        }
        // Each one is accepted by the parser (a harness's as `claude`'s).
        let d = tempfile::tempdir().unwrap();
        for key in &keys {
            let parts: Vec<&str> = key.split('.').collect();
            let value = match *parts.last().unwrap() {
                "pids" | "memory" | "cpus" => serde_json::json!(0),
                _ => Value::Null,
            };
            let mut doc = value;
            for part in parts.iter().rev() {
                let part = match (*part, parts[0]) {
                    ("<name>", "machines") => "big",
                    ("<name>", _) => "claude",
                    _ => part,
                };
                doc = serde_json::json!({ part: doc });
            }
            let p = d.path().join("c.json");
            std::fs::write(&p, doc.to_string()).unwrap();
            // Null is the wrong type for most: refused by type, never as unknown.
            if let Err(ConfigError::UnknownKey { key: k, .. }) = UserConfig::load_from(&p) {
                panic!("{key}: refused as unknown ({k})");
            }
        }
    }
}
