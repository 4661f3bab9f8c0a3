//! `"machines"` in the user file: the other machines boxes can run on, over SSH (SPEC
//! §11, issue 41). Only the user's file may name them: a repository's `.treebox.json`
//! holds inert keys alone (SPEC §8.3). `"on"` names the machine `create` uses without
//! `--on`.
//!
//! Each machine's fields are checked as hostile input would be, since they end up on
//! an `ssh` command line: a destination is one word that cannot be read as an option,
//! `sshCommand` is split as a shell would split it (never run through one), `path` is
//! absolute, `forwardEnv` holds variable names only.

use std::path::Path;

use serde_json::Value;

use super::ConfigError;

/// One machine of `"machines"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// Its name in the config (`big`), as `--on` names it.
    pub name: String,
    /// What `ssh` is given as the destination: `me@big.example`, a `Host` alias.
    pub ssh: String,
    /// Its default isolation (`host`, `docker`, `podman`, `auto`); else that machine's own.
    pub isolation: Option<String>,
    /// The directory holding `git-treebox` there, when it is not on that machine's PATH.
    pub path: Option<String>,
    /// The program and arguments run instead of `ssh` (as git's `core.sshCommand`).
    pub ssh_command: Option<Vec<String>>,
    /// The variables forwarded to that machine's boxes, by name.
    pub forward_env: Vec<String>,
    /// `"fetch": "origin"`: that machine fetches origin itself instead of being pushed to.
    pub fetch_origin: bool,
}

/// The keys of a machine and what each must be.
pub(super) const MACHINE_KEYS: [(&str, &str); 6] = [
    (
        "ssh",
        "an ssh destination (`user@host` or a Host alias; not starting with `-`)",
    ),
    (
        "isolation",
        "one of \"host\", \"docker\", \"podman\", \"auto\"",
    ),
    ("path", "an absolute directory on that machine"),
    (
        "sshCommand",
        "a program and its arguments, as a shell would split them",
    ),
    (
        "forwardEnv",
        "a list of environment variable names (letters, digits, '_')",
    ),
    ("fetch", "\"origin\""),
];

/// The name `--on` and `"on"` give the machine treebox runs on.
pub const LOCAL: &str = "local";

/// Is `name` a machine name: lower-case letters, digits and `-`, starting with a
/// letter, at most 32 characters, and not [`LOCAL`].
pub fn name_ok(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && name.len() <= 32
        && name != LOCAL
}

/// `"machines"`, each machine checked.
pub(super) fn parse(
    file: &Path,
    map: &serde_json::Map<String, Value>,
) -> Result<Vec<Machine>, ConfigError> {
    let mut out = Vec::new();
    for (name, v) in map {
        let wrong = |key: String, expected: &'static str| ConfigError::WrongType {
            file: file.to_path_buf(),
            key,
            expected,
        };
        if !name_ok(name) {
            return Err(wrong(
                format!("machines.{}", crate::sanitize::line(name)),
                "named by lower-case letters, digits and '-', starting with a letter (not \"local\")",
            ));
        }
        let Value::Object(fields) = v else {
            return Err(wrong(format!("machines.{name}"), "an object"));
        };
        let mut m = Machine {
            name: name.clone(),
            ssh: String::new(),
            isolation: None,
            path: None,
            ssh_command: None,
            forward_env: Vec::new(),
            fetch_origin: false,
        };
        for (key, value) in fields {
            let expected =
                super::keys::nested_key(file, &format!("machines.{name}"), &MACHINE_KEYS, key)?;
            let bad = || wrong(format!("machines.{name}.{key}"), expected);
            let text = value.as_str();
            match key.as_str() {
                "ssh" => m.ssh = text.filter(|s| destination_ok(s)).ok_or_else(bad)?.into(),
                "isolation" => {
                    m.isolation = Some(
                        text.filter(|s| ["host", "docker", "podman", "auto"].contains(s))
                            .ok_or_else(bad)?
                            .into(),
                    )
                }
                "path" => {
                    m.path = Some(
                        text.filter(|s| s.starts_with('/') && !s.chars().any(char::is_control))
                            .ok_or_else(bad)?
                            .into(),
                    )
                }
                "sshCommand" => {
                    let words = text
                        .and_then(|s| shell_words::split(s).ok())
                        .filter(|w| !w.is_empty() && !w[0].starts_with('-'))
                        .ok_or_else(bad)?;
                    m.ssh_command = Some(words);
                }
                "forwardEnv" => {
                    m.forward_env = value
                        .as_array()
                        .and_then(|a| {
                            a.iter()
                                .map(|n| {
                                    n.as_str()
                                        .filter(|n| crate::names::env_name_ok(n))
                                        .map(str::to_string)
                                })
                                .collect::<Option<Vec<_>>>()
                        })
                        .ok_or_else(bad)?;
                }
                _ => {
                    if text != Some("origin") {
                        return Err(bad());
                    }
                    m.fetch_origin = true;
                }
            }
        }
        if m.ssh.is_empty() {
            return Err(wrong(format!("machines.{name}.ssh"), MACHINE_KEYS[0].1));
        }
        out.push(m);
    }
    Ok(out)
}

/// A destination `ssh` takes as one: not empty, not an option (`-oProxyCommand=…`),
/// no white space or control character.
fn destination_ok(s: &str) -> bool {
    !s.is_empty() && !s.starts_with('-') && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// `"on"`: [`LOCAL`] or a machine of `machines`.
pub(super) fn check_on(
    file: &Path,
    on: Option<&str>,
    machines: &[Machine],
) -> Result<(), ConfigError> {
    match on {
        None | Some(LOCAL) => Ok(()),
        Some(name) if machines.iter().any(|m| m.name == name) => Ok(()),
        Some(_) => Err(ConfigError::WrongType {
            file: file.to_path_buf(),
            key: "on".into(),
            expected: "\"local\" or the name of a machine in `machines`",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(json: &str) -> Result<Vec<Machine>, String> {
        let v: Value = serde_json::from_str(json).unwrap();
        parse(Path::new("c.json"), v.as_object().unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn a_machine_is_read_with_its_fields() {
        let m = parsed(
            r#"{"big": {"ssh": "me@big.example", "isolation": "docker", "path": "/opt/tb/bin",
                "sshCommand": "ssh -F '/home/me/work config'", "forwardEnv": ["ANTHROPIC_API_KEY"],
                "fetch": "origin"}}"#,
        )
        .unwrap();
        assert_eq!(
            m,
            [Machine {
                name: "big".into(),
                ssh: "me@big.example".into(),
                isolation: Some("docker".into()),
                path: Some("/opt/tb/bin".into()),
                ssh_command: Some(vec![
                    "ssh".into(),
                    "-F".into(),
                    "/home/me/work config".into()
                ]),
                forward_env: vec!["ANTHROPIC_API_KEY".into()],
                fetch_origin: true,
            }]
        );
        assert_eq!(
            parsed(r#"{"b2": {"ssh": "alias"}}"#).unwrap()[0].ssh,
            "alias"
        );
    }

    #[test]
    fn what_would_reach_ssh_as_an_option_or_a_shell_word_is_refused() {
        for (json, key) in [
            (
                r#"{"big": {"ssh": "-oProxyCommand=touch /tmp/x"}}"#,
                "machines.big.ssh",
            ),
            (
                r#"{"big": {"ssh": "me@big; rm -rf ~"}}"#,
                "machines.big.ssh",
            ),
            (r#"{"big": {"ssh": ""}}"#, "machines.big.ssh"),
            (r#"{"big": {}}"#, "machines.big.ssh"),
            (
                r#"{"big": {"ssh": "b", "path": "bin"}}"#,
                "machines.big.path",
            ),
            (
                r#"{"big": {"ssh": "b", "sshCommand": "-x"}}"#,
                "machines.big.sshCommand",
            ),
            (
                r#"{"big": {"ssh": "b", "sshCommand": "ssh 'unclosed"}}"#,
                "machines.big.sshCommand",
            ),
            (
                r#"{"big": {"ssh": "b", "forwardEnv": ["A=B"]}}"#,
                "machines.big.forwardEnv",
            ),
            (
                r#"{"big": {"ssh": "b", "fetch": "push"}}"#,
                "machines.big.fetch",
            ),
            (
                r#"{"big": {"ssh": "b", "isolation": "vm"}}"#,
                "machines.big.isolation",
            ),
            (r#"{"local": {"ssh": "b"}}"#, "machines.local"),
            (r#"{"Big": {"ssh": "b"}}"#, "machines.Big"),
            (r#"{"big": "me@big"}"#, "machines.big"),
        ] {
            let e = parsed(json).unwrap_err();
            assert!(e.contains(&format!("`{key}`")), "{json}: {e}");
        }
        let e = parsed(r#"{"big": {"ssh": "b", "sssh": "x"}}"#).unwrap_err();
        assert!(e.contains("unknown key `machines.big.sssh`"), "{e}");
        assert!(e.contains("did you mean `machines.big.ssh`"), "{e}");
    }

    /// SPEC §8.3: a repository's file names no machine for the user's boxes.
    #[test]
    fn a_repository_cannot_name_machines() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join(".treebox.json"),
            r#"{"machines": {"evil": {"ssh": "attacker@evil"}}, "on": "evil"}"#,
        )
        .unwrap();
        let (cfg, warnings) = crate::config::ProjectConfig::load(d.path()).unwrap();
        assert_eq!(cfg, crate::config::ProjectConfig::default());
        assert!(
            warnings.iter().any(|w| w.contains("machines")),
            "{warnings:?}"
        );
        assert!(warnings.iter().any(|w| w.contains("on")), "{warnings:?}");
    }

    #[test]
    fn on_names_local_or_a_machine() {
        let m = parsed(r#"{"big": {"ssh": "b"}}"#).unwrap();
        let f = Path::new("c.json");
        assert!(check_on(f, None, &m).is_ok());
        assert!(check_on(f, Some("local"), &m).is_ok());
        assert!(check_on(f, Some("big"), &m).is_ok());
        let e = check_on(f, Some("small"), &m).unwrap_err().to_string();
        assert!(e.contains("`on` must be"), "{e}");
    }
}
