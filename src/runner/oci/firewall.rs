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
        .exec_as_root(name, &[FIREWALL.into(), "-".into()])
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
        .exec_as_root(name, &["/bin/sh".into(), "-c".into(), script.into()])
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
    if !denies_by_default(&rules) {
        let _ = engine.stop(name).output_any();
        return Err(ContainerError::FirewallChanged {
            container: name.to_string(),
        });
    }
    crate::state::atomic::write(expected, rules.as_bytes(), 0o600)
        .map_err(super::error::io_err("could not write", expected))
}

/// Do these rules (`iptables -S`, then `ip6tables -S`) deny egress by default? The
/// IPv4 `OUTPUT` policy is `DROP` (IPv6's too, where it is listed), and no rule accepts
/// everything unconditionally (`-A <chain> -j ACCEPT`). Whatever the template's script,
/// that much must hold (SPEC §7: default-deny egress with an allowlist).
pub fn denies_by_default(rules: &str) -> bool {
    let mut policies = rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("-P OUTPUT "))
        .map(str::trim);
    let v4_drops = policies.next() == Some("DROP");
    let rest_drop = policies.all(|p| p == "DROP");
    let open = rules.lines().any(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        words.len() == 4 && words[0] == "-A" && words[2] == "-j" && words[3] == "ACCEPT"
    });
    v4_drops && rest_drop && !open
}

/// Are the rules in force the ones kept at `expected` when they were applied? When not
/// (or when none were kept), the container is stopped and the answer is an error:
/// egress must never be open behind the user's back.
pub fn verify_firewall(engine: Engine, name: &str, expected: &Path) -> Result<(), ContainerError> {
    let want = std::fs::read_to_string(expected).unwrap_or_default();
    let got = read_rules(engine, name)?;
    if !want.is_empty() && got == want && denies_by_default(&got) {
        return Ok(());
    }
    let _ = engine.stop(name).output_any();
    Err(ContainerError::FirewallChanged {
        container: name.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `iptables -S` as the bundled script leaves it (docker, IPv4 only).
    const APPLIED: &str = "-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT DROP\n-N TREEBOX-A\n-A OUTPUT -j TREEBOX-A\n-A TREEBOX-A -o lo -j ACCEPT\n-A TREEBOX-A -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n-A TREEBOX-A -d 10.0.0.1/32 -j ACCEPT\n-A TREEBOX-A -j REJECT --reject-with icmp-port-unreachable\n-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT DROP\n";

    #[test]
    fn the_bundled_rules_deny_by_default_and_a_lifted_firewall_does_not() {
        assert!(denies_by_default(APPLIED));
        // Policy opened, the chain bypassed, an IPv6 side left open, nothing at all.
        assert!(!denies_by_default(&APPLIED.replacen(
            "-P OUTPUT DROP",
            "-P OUTPUT ACCEPT",
            1
        )));
        assert!(!denies_by_default(&format!(
            "{APPLIED}-A OUTPUT -j ACCEPT\n"
        )));
        assert!(!denies_by_default(&format!(
            "{}-P OUTPUT ACCEPT\n",
            &APPLIED[..APPLIED.rfind("-P INPUT").unwrap()]
        )));
        assert!(!denies_by_default(""));
    }
}
