//! How the keys of a dev container that take more than a word become the template's:
//! environment, lifecycle commands, mounts and forwarded ports.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{shown, Plan, MAX_COMMANDS};

/// `forwardPorts`: the ports inside the container the box's block publishes, in order
/// (each on this machine's loopback under the block's own number, which `open` and
/// `list --ports` show). A `host:port` entry (another service) is not used.
pub(super) fn forward_ports(p: &mut Plan, value: &Value) {
    let Some(list) = value.as_array() else {
        p.refused
            .push(("forwardPorts".into(), "must be a list".into()));
        return;
    };
    let mut ports: Vec<u16> = Vec::new();
    for (i, v) in list.iter().enumerate() {
        match v
            .as_u64()
            .and_then(|n| u16::try_from(n).ok())
            .filter(|n| *n > 0)
        {
            Some(n) if !ports.contains(&n) && ports.len() < 64 => ports.push(n),
            Some(_) => {}
            None => p.unused.push((
                format!("forwardPorts[{i}]"),
                "not a port of this container: a box forwards only its own".into(),
            )),
        }
    }
    if !ports.is_empty() {
        let shown: Vec<String> = ports.iter().map(u16::to_string).collect();
        p.mapped.push((
            "forwardPorts".into(),
            format!(
                "published by the box's block of ports, in order: {} inside, each on 127.0.0.1 under a port of the block (`git treebox open` names it; the first `ports.count` of them)",
                shown.join(", ")
            ),
        ));
        p.spec.insert("ports".into(), json!(ports));
    }
}

/// `containerEnv`/`remoteEnv`: each variable a literal string. A value that names a host
/// variable is refused (secrets reach a box only through its env file), as is any other
/// `${…}`, which treebox does not expand.
pub(super) fn environment(
    p: &mut Plan,
    key: &str,
    value: &Value,
    env: &mut BTreeMap<String, String>,
) {
    let Some(vars) = value.as_object() else {
        p.refused
            .push((key.into(), "must be an object of strings".into()));
        return;
    };
    let mut taken = Vec::new();
    for (name, v) in vars {
        let at = format!("{key}.{}", shown(name));
        match v.as_str() {
            Some(s) if s.contains("${localEnv:") => p.refused.push((
                at,
                "names a variable of the host (`${localEnv:…}`): secrets reach a box only through its env file (a machine's `forwardEnv`, `--token-from`)".into(),
            )),
            Some(s) if s.contains("${") => p.refused.push((
                at,
                "treebox does not expand `${…}` in a value: write it out".into(),
            )),
            Some(s) => {
                env.insert(name.clone(), s.to_string());
                taken.push(shown(name));
            }
            None => p.refused.push((at, "must be a string".into())),
        }
    }
    if !taken.is_empty() {
        p.mapped.push((
            key.into(),
            format!("the box's environment: {}", taken.join(", ")),
        ));
    }
}

/// A lifecycle command in its string, array or object form, as shell commands: an
/// array (no shell in the dev container spec) is quoted into one; an object's
/// commands run one after another, in its order.
pub(super) fn commands(p: &mut Plan, key: &str, value: &Value, into: &mut Vec<String>, when: &str) {
    let one = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) if !s.trim().is_empty() && !s.contains('\0') => Some(s.clone()),
            Value::Array(words) if !words.is_empty() => {
                let words: Option<Vec<&str>> = words.iter().map(Value::as_str).collect();
                let words = words?;
                (!words.iter().any(|w| w.contains('\0'))).then(|| shell_words::join(words))
            }
            _ => None,
        }
    };
    let before = into.len();
    match value {
        Value::Object(named) => {
            for (name, v) in named {
                match one(v) {
                    Some(c) => into.push(c),
                    None => p.refused.push((
                        format!("{key}.{}", shown(name)),
                        "must be a command: a string or a list of strings".into(),
                    )),
                }
            }
        }
        v => match one(v) {
            Some(c) => into.push(c),
            None => p.refused.push((
                key.into(),
                "must be a command: a string, a list of strings, or an object of them".into(),
            )),
        },
    }
    if into.len() > MAX_COMMANDS {
        into.truncate(MAX_COMMANDS);
        p.refused
            .push((key.into(), format!("more than {MAX_COMMANDS} commands")));
    }
    let n = into.len() - before;
    if n > 0 {
        p.mapped.push((
            key.into(),
            format!(
                "{n} command{} run in the container as the agent, {when}",
                if n == 1 { "" } else { "s" }
            ),
        ));
    }
}

/// `mounts`: a read-only mount of part of the repository says nothing a box needs (the
/// box is the checkout); anything else is refused.
pub(super) fn mounts(p: &mut Plan, value: &Value) {
    let Some(list) = value.as_array() else {
        p.refused.push(("mounts".into(), "must be a list".into()));
        return;
    };
    for (i, m) in list.iter().enumerate() {
        let text = match m {
            Value::String(s) => s.clone(),
            Value::Object(o) => o
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{k}={}",
                        v.as_str().map_or_else(|| v.to_string(), str::to_string)
                    )
                })
                .collect::<Vec<_>>()
                .join(","),
            _ => String::new(),
        };
        let inside = text.contains("source=${localWorkspaceFolder}")
            && !text.contains("..")
            && (text.contains("readonly") || text.contains("ro=true"));
        if inside {
            p.unused.push((
                format!("mounts[{i}]"),
                "a read-only part of the repository: the box is the checkout".into(),
            ));
        } else {
            p.refused.push((
                format!("mounts[{i}]"),
                "a mount other than a read-only part of the repository reaches into the host"
                    .into(),
            ));
        }
    }
}
