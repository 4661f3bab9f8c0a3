//! `"ports"` in the user file: the block of ports each new box holds (SPEC §7b).

use std::path::Path;

use serde_json::Value;

use super::ConfigError;

/// The ports of a new box unless the config says: a dev server and one more (its API).
/// Small on purpose: docker runs one `docker-proxy` per published port, about 3 MiB
/// each (`benches/ports.sh`).
pub const DEFAULT_COUNT: u16 = 2;
/// Where blocks start unless the config says: above the well-known and the common
/// dev-server ports, below Linux's ephemeral range (32768–60999).
pub const DEFAULT_FROM: u16 = 20000;

/// `"ports"`: what the user set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortsConfig {
    pub count: Option<u16>,
    pub from: Option<u16>,
}

impl PortsConfig {
    /// The ports in a new box's block (0: none).
    pub fn count(&self) -> u16 {
        self.count.unwrap_or(DEFAULT_COUNT)
    }

    /// The first port a block may start at.
    pub fn from(&self) -> u16 {
        self.from.unwrap_or(DEFAULT_FROM)
    }
}

/// The keys of `"ports"` and what each must be.
pub(super) const PORT_KEYS: [(&str, &str); 2] = [
    (
        "count",
        "a whole number of ports per box, at most 64 (0: no ports)",
    ),
    ("from", "a port number from 1024 to 65535"),
];

pub(super) fn parse(
    file: &Path,
    map: &serde_json::Map<String, Value>,
) -> Result<PortsConfig, ConfigError> {
    let mut out = PortsConfig::default();
    for (key, value) in map {
        let expected = super::keys::nested_key(file, "ports", &PORT_KEYS, key)?;
        let wrong = || ConfigError::WrongType {
            file: file.to_path_buf(),
            key: format!("ports.{key}"),
            expected,
        };
        let n = value.as_u64().and_then(|n| u16::try_from(n).ok());
        match key.as_str() {
            "count" => {
                out.count = Some(
                    n.filter(|n| *n <= crate::ports::MAX_COUNT)
                        .ok_or_else(wrong)?,
                )
            }
            _ => out.from = Some(n.filter(|n| *n >= 1024).ok_or_else(wrong)?),
        }
    }
    Ok(out)
}
