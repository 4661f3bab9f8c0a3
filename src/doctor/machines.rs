//! `doctor`'s look at each machine of the user's config (issue 41): reachable without
//! a prompt (`BatchMode`), its treebox speaking this one's protocol, and what boxes
//! there would need — tmux, an engine, free memory and disk. Every machine is asked at
//! once, each on a thread of its own, each given [`HELLO_LIMIT`]; what a machine says
//! of itself is shown sanitised ([`crate::remote::hello::Hello::from_doc`]).

use std::time::Duration;

use serde_json::json;

use super::{Check, Status};
use crate::config::Machine;
use crate::remote::{hello::Hello, RemoteError};

/// How long a machine may take to answer `hello`, connection included.
pub const HELLO_LIMIT: Duration = Duration::from_secs(10);

/// One check per machine, in the config's order; none without machines.
pub fn check_machines(machines: &[Machine]) -> Vec<Check> {
    std::thread::scope(|s| {
        let asked: Vec<_> = machines
            .iter()
            .map(|m| {
                s.spawn(move || crate::remote::ssh::call(m, &json!({"op": "hello"}), HELLO_LIMIT))
            })
            .collect();
        machines
            .iter()
            .zip(asked)
            .map(|(m, a)| match a.join() {
                Ok(answer) => check_of(m, answer),
                Err(_) => Check::new(
                    "machines",
                    Status::Advisory,
                    format!("machine `{}`: the check crashed", m.name),
                ),
            })
            .collect()
    })
}

/// What `hello` (or its failure) says of machine `m`.
fn check_of(m: &Machine, answer: Result<serde_json::Value, RemoteError>) -> Check {
    let name = &m.name;
    let dest = crate::sanitize::line(&m.ssh);
    let doc = match answer {
        Ok(doc) => doc,
        Err(e) => {
            let hint = match &e {
                RemoteError::Protocol { .. } => crate::remote::upgrade_hint(&m.ssh),
                RemoteError::Unreachable { .. } | RemoteError::Timeout { .. } => format!(
                    "Check that `ssh -o BatchMode=yes {dest} true` works without a prompt (an SSH key, the host key known)."
                ),
                _ => format!(
                    "Check treebox on `{dest}`: `ssh {dest} git-treebox --version` (or set `machines.{name}.path`)."
                ),
            };
            return Check::new(
                "machines",
                Status::Advisory,
                crate::sanitize::line(&e.to_string()),
            )
            .hint(hint);
        }
    };
    let Some(h) = Hello::from_doc(&doc) else {
        return Check::new(
            "machines",
            Status::Advisory,
            format!("machine `{name}` ({dest}) answered no version"),
        );
    };
    let engines: Vec<&str> = [("docker", h.docker), ("podman", h.podman)]
        .into_iter()
        .filter_map(|(e, on)| on.then_some(e))
        .collect();
    let gib = |b: Option<u64>| {
        b.map_or("?".to_string(), |b| {
            format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
        })
    };
    let summary = format!(
        "machine `{name}` ({dest}): treebox {}, {}, engines: {}, {} memory and {} disk free",
        h.version,
        h.tmux.as_deref().unwrap_or("no tmux"),
        if engines.is_empty() {
            "none".to_string()
        } else {
            engines.join(", ")
        },
        gib(h.memory),
        gib(h.disk),
    );
    if h.tmux.is_none() {
        return Check::new("machines", Status::Advisory, summary).hint(format!(
            "Install tmux on `{dest}`: agents there need it to outlive the connection."
        ));
    }
    Check::new("machines", Status::Ok, summary)
}
