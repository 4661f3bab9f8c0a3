//! The egress firewall: the template's allowlist plus the user's entries, applied as
//! root inside the container by the image's firewall script. It fails closed: a script
//! that fails is an error and egress stays denied.
//!
//! - What was applied is read back as root (`iptables -S`, `ip6tables -S`) and kept in
//!   host bookkeeping; [`verify_firewall`] reads the rules again after every setup and
//!   compares: a difference stops the container and is an error. The agent holds no
//!   capability that could change them; this catches whatever else might.
//!
//! Called by `container` (after a create or a restart);
//! `provision` verifies after setup.

use std::path::Path;

use super::engine::Engine;
use super::error::ContainerError;
use crate::template::Template;

/// The firewall script's path inside the image (see the default Dockerfile).
pub const FIREWALL: &str = "/usr/local/sbin/treebox-init-firewall";

/// The allowlist the firewall gets: the template's plus the user's extra entries.
fn allowlist(template: &Template, extra: &[String]) -> Vec<u8> {
    let mut text = template
        .spec()
        .firewall
        .as_ref()
        .and_then(|f| template.file(&f.allowlist))
        .map(|f| f.contents.to_vec())
        .unwrap_or_default();
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    for e in extra {
        text.extend_from_slice(e.as_bytes());
        text.push(b'\n');
    }
    text
}

pub fn apply_firewall(
    engine: Engine,
    name: &str,
    template: &Template,
    extra: &[String],
) -> Result<(), ContainerError> {
    engine
        .exec(
            name,
            "0:0",
            Path::new("/"),
            &[],
            false,
            &[FIREWALL.into(), "-".into()],
        )
        .stdin_bytes(allowlist(template, extra))
        .output()
        .map(|_| ())
        .map_err(ContainerError::Firewall)
}

/// The rules in force in the container, as root: `iptables -S`, then `ip6tables -S`
/// where the container has it.
pub fn read_rules(engine: Engine, name: &str) -> Result<String, ContainerError> {
    let script = "iptables -w -S; if command -v ip6tables >/dev/null 2>&1; then ip6tables -w -S 2>/dev/null || true; fi";
    let out = engine
        .exec(
            name,
            "0:0",
            Path::new("/"),
            &[],
            false,
            &["/bin/sh".into(), "-c".into(), script.into()],
        )
        .output()
        .map_err(ContainerError::Firewall)?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Apply the firewall and keep what is in force afterwards at `expected` (host
/// bookkeeping), for [`verify_firewall`].
pub fn apply_and_keep(
    engine: Engine,
    name: &str,
    template: &Template,
    extra: &[String],
    expected: &Path,
) -> Result<(), ContainerError> {
    apply_firewall(engine, name, template, extra)?;
    let rules = read_rules(engine, name)?;
    crate::state::atomic::write(expected, rules.as_bytes(), 0o600)
        .map_err(super::error::io_err("could not write", expected))
}

/// Are the rules in force the ones kept at `expected` when they were applied? When not
/// (or when none were kept), the container is stopped and the answer is an error:
/// egress must never be open behind the user's back.
pub fn verify_firewall(engine: Engine, name: &str, expected: &Path) -> Result<(), ContainerError> {
    let want = std::fs::read_to_string(expected).unwrap_or_default();
    let got = read_rules(engine, name)?;
    if !want.is_empty() && got == want {
        return Ok(());
    }
    let _ = engine.stop(name).output_any();
    Err(ContainerError::FirewallChanged {
        container: name.to_string(),
    })
}
