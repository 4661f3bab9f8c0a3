//! Provider URLs that name the user's own machine (SPEC §7 "Unattended": the agent's
//! provider settings reach it). `http://127.0.0.1:4000` or `http://localhost:4000` in
//! the user's environment or Codex config means *this machine*; inside a container it
//! would mean the container itself. A box gets the URL with the host part replaced by
//! the name the engine gives the host: `host.docker.internal` (docker, mapped to the
//! bridge's gateway with `--add-host host.docker.internal:host-gateway` at create) or
//! `host.containers.internal` (podman's own).
//!
//! A server that listens on loopback only is still out of the box's reach: before
//! launching, treebox tries the gateway's address from the host and warns when nothing
//! answers there ([`reachability`]). A box with `--firewall` gets the host name in its
//! allowlist ([`firewall_hosts`]).
//!
//! Pure but for [`reachability`] (an engine question and a TCP connect). Called by
//! `credentials` (the keys file), `provision` (the agent's Codex arguments, the
//! warnings) and `container` (the firewall).

use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::Duration;

use super::engine::Engine;
use crate::harness::Harness;

/// The variables holding a provider's URL: rewritten for a box when they name this
/// machine.
pub const URL_KEYS: [&str; 4] = [
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_BEDROCK_BASE_URL",
    "ANTHROPIC_VERTEX_BASE_URL",
    "OPENAI_BASE_URL",
];

/// The name a container of `engine` reaches the host by.
pub fn host_name(engine: Engine) -> &'static str {
    match engine {
        Engine::Docker => "host.docker.internal",
        Engine::Podman => "host.containers.internal",
    }
}

/// A URL split where its host is: `(before, host, after)`, the host without brackets
/// for IPv6. `None` when `url` has no `scheme://`.
fn split_host(url: &str) -> Option<(&str, &str, &str)> {
    let start = url.find("://")? + 3;
    let rest = &url[start..];
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..auth_end];
    let host_start = authority.rfind('@').map_or(0, |i| i + 1);
    let hostport = &authority[host_start..];
    let host_len = if hostport.starts_with('[') {
        hostport.find(']')? + 1
    } else {
        hostport.find(':').unwrap_or(hostport.len())
    };
    let (a, b) = (start + host_start, start + host_start + host_len);
    Some((&url[..a], &url[a..b], &url[b..]))
}

/// Does `host` (as a URL has it) name this machine: `localhost` (and `*.localhost`),
/// any 127.0.0.0/8 address, `::1`, or `0.0.0.0`?
pub fn is_loopback(host: &str) -> bool {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    if h == "localhost" || h.ends_with(".localhost") {
        return true;
    }
    let bare = h.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback() || ip.is_unspecified(),
        Err(_) => false,
    }
}

/// `url` with its host replaced by `host` when it names this machine; `None` when it
/// does not (or is not a URL).
pub fn for_box(url: &str, host: &str) -> Option<String> {
    let (before, h, after) = split_host(url)?;
    is_loopback(h).then(|| format!("{before}{host}{after}"))
}

/// The port a URL names (its scheme's default when it names none).
fn port_of(url: &str) -> Option<u16> {
    let (before, _, after) = split_host(url)?;
    let explicit = after
        .strip_prefix(':')
        .map(|p| p.split(['/', '?', '#']).next().unwrap_or(""));
    match explicit {
        Some(p) => p.parse().ok(),
        None if before.starts_with("https://") => Some(443),
        None if before.starts_with("http://") => Some(80),
        None => None,
    }
}

/// The provider URLs of the user's that name this machine, for `harness`: `(where,
/// url)`, from the environment ([`URL_KEYS`]) and, for Codex, the providers of the
/// user's own `config.toml` (the one a box gets a copy of).
pub fn user_loopback_urls(harness: Harness) -> Vec<(String, String)> {
    let codex = match harness {
        Harness::Codex => super::credentials::user_codex_config(),
        Harness::Claude => None,
    };
    let prefix = match harness {
        Harness::Claude => "ANTHROPIC_",
        Harness::Codex => "OPENAI_",
    };
    let mut urls = loopback_urls(codex.as_deref());
    urls.retain(|(k, _)| k.starts_with(prefix) || k.starts_with("model_providers."));
    urls
}

/// The provider URLs that name this machine: `(where, url)`, from the environment
/// ([`URL_KEYS`]) and `model_providers.*.base_url` in Codex's `config.toml` text
/// `codex_config`.
pub fn loopback_urls(codex_config: Option<&str>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = URL_KEYS
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
        .collect();
    if let Some(text) = codex_config {
        for (id, url) in codex_provider_urls(text) {
            out.push((format!("model_providers.{id}.base_url"), url));
        }
    }
    out.retain(|(_, url)| split_host(url).is_some_and(|(_, h, _)| is_loopback(h)));
    out
}

/// `model_providers.<id>.base_url` of a Codex `config.toml`, every provider that has one.
pub fn codex_provider_urls(config: &str) -> Vec<(String, String)> {
    let Ok(doc) = config.parse::<toml::Table>() else {
        return Vec::new();
    };
    let Some(providers) = doc.get("model_providers").and_then(toml::Value::as_table) else {
        return Vec::new();
    };
    providers
        .iter()
        .filter_map(|(id, p)| {
            let url = p.get("base_url")?.as_str()?;
            Some((id.clone(), url.to_string()))
        })
        .collect()
}

/// Codex's `-c` arguments that point each provider whose `base_url` names this machine
/// at `host` (an inline table: Codex merges it into the user's provider).
pub fn codex_args(config: &str, host: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (id, url) in codex_provider_urls(config) {
        if let Some(new) = for_box(&url, host) {
            let q = |s: &str| serde_json::to_string(s).expect("a string serializes");
            out.push("-c".into());
            out.push(format!(
                "model_providers={{{}={{base_url={}}}}}",
                q(&id),
                q(&new)
            ));
        }
    }
    out
}

/// The host's address on `engine`'s bridge, as its containers reach it: docker's
/// default bridge interface, podman's `podman` network gateway (rootful only: a
/// rootless engine's containers reach the host some other way). `None` when unknown.
fn gateway_address(engine: Engine) -> Option<IpAddr> {
    match engine {
        Engine::Docker => {
            let name = engine
                .cmd()
                .args([
                    "network",
                    "inspect",
                    "bridge",
                    "--format",
                    r#"{{index .Options "com.docker.network.bridge.name"}}"#,
                ])
                .stdout_string()
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "docker0".into());
            interface_v4(&name)
        }
        Engine::Podman => {
            if engine.rootless() {
                return None;
            }
            engine
                .cmd()
                .args([
                    "network",
                    "inspect",
                    "podman",
                    "--format",
                    "{{range .Subnets}}{{.Gateway}} {{end}}",
                ])
                .stdout_string()
                .ok()?
                .split_whitespace()
                .find_map(|w| w.parse::<IpAddr>().ok().filter(IpAddr::is_ipv4))
        }
    }
}

/// The IPv4 address of this machine's interface `name`.
fn interface_v4(name: &str) -> Option<IpAddr> {
    let mut found = None;
    let mut addrs: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `addrs` with a list freed by freeifaddrs below; every
    // entry is read only while the list lives, and its pointers are checked for null.
    unsafe {
        if libc::getifaddrs(&mut addrs) != 0 {
            return None;
        }
        let mut cur = addrs;
        while !cur.is_null() {
            let ifa = &*cur;
            if !ifa.ifa_addr.is_null()
                && i32::from((*ifa.ifa_addr).sa_family) == libc::AF_INET
                && std::ffi::CStr::from_ptr(ifa.ifa_name).to_bytes() == name.as_bytes()
            {
                let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                found = Some(IpAddr::from(
                    u32::from_be(sin.sin_addr.s_addr).to_be_bytes(),
                ));
                break;
            }
            cur = ifa.ifa_next;
        }
        libc::freeifaddrs(addrs);
    }
    found
}

/// What to tell the user before the agent starts in a box of `engine`, for each of
/// their provider URLs that names this machine: where the box reaches it, and a
/// warning when nothing answers at the gateway (a server that listens on loopback
/// only). `(notes, warnings)`.
pub fn reachability(engine: Engine, urls: &[(String, String)]) -> (Vec<String>, Vec<String>) {
    let (mut notes, mut warnings) = (Vec::new(), Vec::new());
    if urls.is_empty() {
        return (notes, warnings);
    }
    let host = host_name(engine);
    let gateway = gateway_address(engine);
    for (what, url) in urls {
        let Some(boxed) = for_box(url, host) else {
            continue;
        };
        let answers = match (gateway, port_of(url)) {
            (Some(ip), Some(port)) => Some(
                TcpStream::connect_timeout(&SocketAddr::new(ip, port), Duration::from_millis(500))
                    .is_ok(),
            ),
            _ => None,
        };
        match (answers, gateway, port_of(url)) {
            (Some(false), Some(ip), Some(port)) => warnings.push(format!(
                "{what} ({url}) names this machine; in the box it is {boxed}, but nothing answers at {ip}:{port}, the address the box reaches this machine by: a server listening on 127.0.0.1 only is out of a container's reach (make it listen on {ip} too)"
            )),
            _ => notes.push(format!(
                "{what} ({url}) names this machine: the box reaches it as {boxed}"
            )),
        }
    }
    (notes, warnings)
}

/// The allowlist entries a firewalled box of `engine` needs for these URLs: the engine's
/// name for the host, once, when any of them names this machine.
pub fn firewall_hosts(engine: Engine, urls: &[(String, String)]) -> Vec<String> {
    if urls.is_empty() {
        Vec::new()
    } else {
        vec![host_name(engine).to_string()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_naming_this_machine_names_the_engines_host_in_a_box() {
        let h = "host.docker.internal";
        for (url, want) in [
            ("http://127.0.0.1:4000", "http://host.docker.internal:4000"),
            (
                "http://localhost:4000/v1",
                "http://host.docker.internal:4000/v1",
            ),
            ("https://LOCALHOST/", "https://host.docker.internal/"),
            (
                "http://127.8.9.1:1/x?y=1",
                "http://host.docker.internal:1/x?y=1",
            ),
            (
                "http://[::1]:8080/v1",
                "http://host.docker.internal:8080/v1",
            ),
            ("http://0.0.0.0:11434", "http://host.docker.internal:11434"),
            (
                "http://user:pw@localhost:9/p",
                "http://user:pw@host.docker.internal:9/p",
            ),
            (
                "http://api.localhost:3000",
                "http://host.docker.internal:3000",
            ),
        ] {
            assert_eq!(for_box(url, h).as_deref(), Some(want), "{url}");
        }
        for other in [
            "https://api.anthropic.com",
            "http://10.0.0.5:4000",
            "http://localhost.example.com:1",
            "http://128.0.0.1",
            "localhost:4000",
            "",
            "http://[::2]:1",
        ] {
            assert_eq!(for_box(other, h), None, "{other}");
        }
        assert_eq!(port_of("http://localhost:4000/v1"), Some(4000));
        assert_eq!(port_of("https://localhost/v1"), Some(443));
        assert_eq!(port_of("http://localhost"), Some(80));
        assert_eq!(port_of("http://[::1]:81"), Some(81));
    }

    #[test]
    fn codex_providers_naming_this_machine_are_pointed_at_the_host() {
        let config = r#"model_provider = "local"
[model_providers.local]
name = "local"
base_url = "http://127.0.0.1:8080/v1"
[model_providers."az.ure"]
base_url = "https://example.openai.azure.com/v1"
[model_providers.plain]
name = "no url"
"#;
        assert_eq!(
            codex_args(config, "host.containers.internal"),
            [
                "-c",
                r#"model_providers={"local"={base_url="http://host.containers.internal:8080/v1"}}"#
            ]
        );
        assert!(codex_args("not toml [", "h").is_empty());
        assert!(codex_args("", "h").is_empty());
        let urls = loopback_urls(Some(config));
        assert!(urls.contains(&(
            "model_providers.local.base_url".into(),
            "http://127.0.0.1:8080/v1".into()
        )));
        assert!(!urls.iter().any(|(_, u)| u.contains("azure")));
    }

    #[test]
    fn a_firewalled_box_allows_the_host_only_when_a_url_names_it() {
        assert!(firewall_hosts(Engine::Docker, &[]).is_empty());
        let one = [("X".to_string(), "http://localhost:1".to_string())];
        assert_eq!(
            firewall_hosts(Engine::Podman, &one),
            ["host.containers.internal"]
        );
    }
}
