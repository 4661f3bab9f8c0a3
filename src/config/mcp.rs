//! `"mcp"` in the user file: what the user allows a lead agent through `git treebox
//! mcp` beyond reading boxes and stopping their agents (SPEC §10d): `land` (may
//! `box_land` land a box) and `isolation` (the runners `box_create` may start agents
//! on).

use std::path::Path;

use serde_json::Value;

use super::ConfigError;
use crate::vocab::RunnerKind;

/// `"mcp"`: what the user allows a lead agent through `git treebox mcp`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpConfig {
    /// `box_land` may land a box onto its base (default: no).
    pub land: bool,
    /// The runners `box_create` may start a box's agent on, in the user's order
    /// (never empty when set). `None`: only the one `create` would pick with no flag.
    pub isolation: Option<Vec<RunnerKind>>,
}

/// The keys of `"mcp"` and what each must be.
pub(super) const MCP_KEYS: [(&str, &str); 2] = [
    ("land", "true or false"),
    (
        "isolation",
        "a non-empty list of runners (\"host\", \"docker\", \"podman\")",
    ),
];

pub(super) fn parse(
    file: &Path,
    map: &serde_json::Map<String, Value>,
) -> Result<McpConfig, ConfigError> {
    let mut out = McpConfig::default();
    for (key, value) in map {
        let expected = super::keys::nested_key(file, "mcp", &MCP_KEYS, key)?;
        let wrong = || ConfigError::WrongType {
            file: file.to_path_buf(),
            key: format!("mcp.{key}"),
            expected,
        };
        match key.as_str() {
            "land" => out.land = value.as_bool().ok_or_else(wrong)?,
            _ => {
                let items = value
                    .as_array()
                    .filter(|a| !a.is_empty())
                    .ok_or_else(wrong)?;
                let mut runners = Vec::new();
                for item in items {
                    let r: RunnerKind = item
                        .as_str()
                        .and_then(|s| s.parse().ok())
                        .ok_or_else(wrong)?;
                    if !runners.contains(&r) {
                        runners.push(r);
                    }
                }
                out.isolation = Some(runners);
            }
        }
    }
    Ok(out)
}
