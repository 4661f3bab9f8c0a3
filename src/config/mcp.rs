//! `"mcp"` in the user file: what the user allows a lead agent through `git treebox
//! mcp` beyond reading boxes and stopping their agents (SPEC §10d). Only `land` so far;
//! `isolation` comes with `box_create`, and until then is an unknown key like any other.

use std::path::Path;

use serde_json::Value;

use super::ConfigError;

/// `"mcp"`: what the user allows a lead agent through `git treebox mcp`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct McpConfig {
    /// `box_land` may land a box onto its base (default: no).
    pub land: bool,
}

/// The keys of `"mcp"` and what each must be. (`mcp.isolation` comes with `box_create`.)
pub(super) const MCP_KEYS: [(&str, &str); 1] = [("land", "true or false")];

pub(super) fn parse(
    file: &Path,
    map: &serde_json::Map<String, Value>,
) -> Result<McpConfig, ConfigError> {
    let mut out = McpConfig::default();
    for (key, value) in map {
        let expected = super::keys::nested_key(file, "mcp", &MCP_KEYS, key)?;
        // The only key so far: `land`.
        out.land = value.as_bool().ok_or_else(|| ConfigError::WrongType {
            file: file.to_path_buf(),
            key: format!("mcp.{key}"),
            expected,
        })?;
    }
    Ok(out)
}
