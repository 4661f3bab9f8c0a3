//! `"limits"` in the user file: the resource limits of new container boxes, and the
//! defaults they fall back to (this machine's memory and CPUs).

use std::path::Path;

use serde_json::Value;

use super::{ConfigError, LimitsConfig};

/// Half of `total` bytes of memory, in whole GiB from 2 GiB up (whole MiB below).
pub fn default_memory(total: u64) -> u64 {
    const MIB: u64 = 1 << 20;
    let half = total / 2;
    let unit = if half >= 2 << 30 { 1 << 30 } else { MIB };
    (half / unit * unit).max(64 * MIB)
}

/// This machine's memory in bytes (0 when unknown).
pub(super) fn host_memory() -> u64 {
    // SAFETY: sysconf reads a system value and touches no memory of ours.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    u64::try_from(pages)
        .unwrap_or(0)
        .saturating_mul(u64::try_from(size).unwrap_or(0))
}

/// This machine's CPUs (those this process may run on), in thousandths.
pub(super) fn host_cores() -> u32 {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    u32::try_from(n).unwrap_or(1).saturating_mul(1000)
}

/// The keys of `"limits"` and what each must be.
pub(super) const LIMIT_KEYS: [(&str, &str); 3] = [
    ("pids", "a whole number of processes (0: no limit)"),
    (
        "memory",
        "a size such as \"8g\" or \"512m\" (at least 64m; 0: no limit)",
    ),
    ("cpus", "a number of CPUs such as 2 or 1.5 (0: no limit)"),
];

pub(super) fn parse_limits(
    file: &Path,
    map: &serde_json::Map<String, Value>,
) -> Result<LimitsConfig, ConfigError> {
    let mut out = LimitsConfig::default();
    for (key, value) in map {
        let expected = super::keys::nested_key(file, "limits", &LIMIT_KEYS, key)?;
        let wrong = || ConfigError::WrongType {
            file: file.to_path_buf(),
            key: format!("limits.{key}"),
            expected,
        };
        match key.as_str() {
            "pids" => {
                let n = value.as_u64().and_then(|n| u32::try_from(n).ok());
                out.pids = Some(n.ok_or_else(wrong)?);
            }
            "memory" => out.memory = Some(parse_size(value).ok_or_else(wrong)?),
            _ => {
                let cpus = value.as_f64().filter(|c| (0.0..=100_000.0).contains(c));
                // In range, so the rounded value fits; a fraction under 0.01 is refused.
                let milli = cpus.map(|c| (c * 1000.0).round() as u32);
                out.milli_cpus = Some(milli.filter(|m| *m == 0 || *m >= 10).ok_or_else(wrong)?);
            }
        }
    }
    Ok(out)
}

/// A memory size: a number of bytes, or a string `<n>[b|k|m|g|t]` in binary units;
/// 0 (no limit), or at least 64 MiB (less would not start the container's tools).
fn parse_size(value: &Value) -> Option<u64> {
    let bytes = match value {
        Value::Number(n) => n.as_u64()?,
        Value::String(t) => {
            let t = t.trim().to_ascii_lowercase();
            let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
            let shift = match &t[digits.len()..] {
                "" | "b" => 0,
                "k" | "kb" | "kib" => 10,
                "m" | "mb" | "mib" => 20,
                "g" | "gb" | "gib" => 30,
                "t" | "tb" | "tib" => 40,
                _ => return None,
            };
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            digits.parse::<u64>().ok()?.checked_mul(1 << shift)?
        }
        _ => return None,
    };
    (bytes == 0 || bytes >= 64 << 20).then_some(bytes)
}
