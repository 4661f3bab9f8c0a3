//! `container.json`: the [`ContainerSpec`] of a template, parsed and validated.
//!
//! The vocabulary is closed (see the table in [`crate::template`]); every problem names
//! the file and the key, with a did-you-mean for a mistyped key, and is safe to print
//! (values are escaped and cut by `shown`). Also here: the small grammars a template's
//! files must follow — relative paths inside the template, `ARG` lines of the
//! Dockerfile, and the firewall allowlist ([`allowlist_problems`], which `config` uses
//! for the user's `allowlist` too).
//!
//! Called by [`Template`](super::Template) assembly (bundled and user templates alike).

use std::collections::BTreeMap;
use std::path::{Component, Path};

use serde_json::Value;

use super::shown;
use crate::suggest::suggest;

/// The Node major used when a repository declares none (`{nodeVersion}` in `baseImage`).
pub const DEFAULT_NODE_VERSION: &str = "22";

/// Build arguments treebox sets itself; `buildArgs` may not.
pub const RESERVED_BUILD_ARGS: &[&str] = &[
    "BASE_IMAGE",
    "AGENT_UID",
    "AGENT_GID",
    "HOST_UID",
    "HOST_GID",
];

/// The build arguments a template's Dockerfile must declare: the agent's account.
pub const AGENT_ARGS: [&str; 2] = ["AGENT_UID", "AGENT_GID"];

/// A capability a template may add to its container.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Capability {
    NetAdmin,
    NetRaw,
}

impl Capability {
    pub const ALL: [Capability; 2] = [Capability::NetAdmin, Capability::NetRaw];

    pub fn as_str(self) -> &'static str {
        match self {
            Capability::NetAdmin => "NET_ADMIN",
            Capability::NetRaw => "NET_RAW",
        }
    }
}

/// The firewall files of a template, relative paths inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Firewall {
    pub script: String,
    pub allowlist: String,
}

/// `baseBuild`: the base image built first, from files of the template, and used as
/// `BASE_IMAGE` (a dev container's own Dockerfile, imported).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseBuild {
    /// The Dockerfile, a file of the template.
    pub dockerfile: String,
    /// The build context, a directory of the template.
    pub context: String,
    pub args: BTreeMap<String, String>,
}

/// `container.json`, validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerSpec {
    pub base_image: Option<String>,
    pub base_build: Option<BaseBuild>,
    pub user: Option<String>,
    pub build_args: BTreeMap<String, String>,
    pub env: BTreeMap<String, String>,
    pub post_create: Vec<String>,
    pub post_start: Vec<String>,
    pub firewall: Option<Firewall>,
    pub cap_add: Vec<Capability>,
    /// Ports inside the container the box's block publishes, in order (a dev
    /// container's `forwardPorts`); empty: each under its own number.
    pub ports: Vec<u16>,
}

/// The placeholder in `baseImage` for the repository's Node major.
pub const NODE_PLACEHOLDER: &str = "{nodeVersion}";

impl ContainerSpec {
    /// The `BASE_IMAGE` build argument for a repository that declares Node `node`
    /// (a major such as `20`; anything else falls back to [`DEFAULT_NODE_VERSION`]).
    pub fn base_image_for(&self, node: Option<&str>) -> Option<String> {
        let node = node
            .filter(|n| !n.is_empty() && n.len() <= 16 && n.chars().all(|c| c.is_ascii_digit()))
            .unwrap_or(DEFAULT_NODE_VERSION);
        self.base_image
            .as_ref()
            .map(|b| b.replace(NODE_PLACEHOLDER, node))
    }

    /// Parse and validate `container.json`. `file` names the file in problems. The
    /// spec holds whatever was valid; the problems list the rest.
    pub fn parse(text: &[u8], file: &str) -> (ContainerSpec, Vec<String>) {
        let mut c = Checker {
            file,
            problems: Vec::new(),
        };
        let spec = c.spec(text);
        (spec, c.problems)
    }
}

/// Every top-level key of `container.json`.
const SPEC_KEYS: &[&str] = &[
    "baseImage",
    "baseBuild",
    "user",
    "buildArgs",
    "env",
    "postCreate",
    "postStart",
    "firewall",
    "capAdd",
    "ports",
];
const FIREWALL_KEYS: &[&str] = &["script", "allowlist"];
const BASE_BUILD_KEYS: &[&str] = &["dockerfile", "context", "args"];

fn did_you_mean(s: Option<String>) -> String {
    s.map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
}

struct Checker<'a> {
    file: &'a str,
    problems: Vec<String>,
}

impl Checker<'_> {
    fn problem(&mut self, msg: String) {
        self.problems.push(format!("{}: {msg}", self.file));
    }

    fn wrong(&mut self, key: &str, expected: &str) {
        self.problem(format!("`{key}` must be {expected}"));
    }

    fn spec(&mut self, text: &[u8]) -> ContainerSpec {
        let mut spec = ContainerSpec::default();
        let map = match serde_json::from_slice::<Value>(text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => {
                self.problem("the top level must be an object".into());
                return spec;
            }
            Err(e) => {
                self.problem(format!("not valid JSON: {e}"));
                return spec;
            }
        };
        for (key, value) in &map {
            match key.as_str() {
                "baseImage" => spec.base_image = self.base_image(value),
                "baseBuild" => spec.base_build = self.base_build(value),
                "user" => spec.user = self.user(value),
                "buildArgs" => spec.build_args = self.string_map("buildArgs", value, true),
                "env" => spec.env = self.string_map("env", value, false),
                "postCreate" => spec.post_create = self.commands("postCreate", value),
                "postStart" => spec.post_start = self.commands("postStart", value),
                "firewall" => spec.firewall = self.firewall(value),
                "capAdd" => spec.cap_add = self.cap_add(value),
                "ports" => spec.ports = self.ports(value),
                _ => {
                    let hint = did_you_mean(suggest(key, SPEC_KEYS.iter().copied()));
                    self.problem(format!("unknown key `{}`{hint}", shown(key)));
                }
            }
        }
        if spec.base_build.is_some() && spec.base_image.is_some() {
            self.problem("`baseImage` and `baseBuild` both name the base: keep one".into());
        }
        spec
    }

    fn base_build(&mut self, v: &Value) -> Option<BaseBuild> {
        let Some(m) = v.as_object() else {
            self.wrong(
                "baseBuild",
                "an object with `dockerfile` and `context` (of the template) and `args`",
            );
            return None;
        };
        let mut ok = true;
        for key in m.keys() {
            if !BASE_BUILD_KEYS.contains(&key.as_str()) {
                let hint = did_you_mean(
                    suggest(key, BASE_BUILD_KEYS.iter().copied()).map(|k| format!("baseBuild.{k}")),
                );
                self.problem(format!("unknown key `baseBuild.{}`{hint}", shown(key)));
                ok = false;
            }
        }
        let path = |me: &mut Self, key: &str| -> Option<String> {
            let at = format!("baseBuild.{key}");
            match m.get(key).map(|p| (p, p.as_str())) {
                Some((_, Some(p))) => match check_rel_path(p) {
                    Ok(()) => Some(p.to_string()),
                    Err(why) => {
                        me.problem(format!("`{at}`: `{}` {why}", shown(p)));
                        None
                    }
                },
                Some((_, None)) => {
                    me.wrong(&at, "a string (a path in the template)");
                    None
                }
                None => {
                    me.problem(format!("`{at}` is missing"));
                    None
                }
            }
        };
        let dockerfile = path(self, "dockerfile");
        let context = path(self, "context");
        let args = match m.get("args") {
            Some(a) => self.string_map("baseBuild.args", a, true),
            None => BTreeMap::new(),
        };
        match (dockerfile, context) {
            (Some(dockerfile), Some(context)) if ok => Some(BaseBuild {
                dockerfile,
                context,
                args,
            }),
            _ => None,
        }
    }

    fn base_image(&mut self, v: &Value) -> Option<String> {
        let Some(s) = v.as_str() else {
            self.wrong("baseImage", "a string");
            return None;
        };
        let rest = s.replace(NODE_PLACEHOLDER, "22");
        if s.is_empty()
            || s.len() > 255
            || s.starts_with('-')
            || rest.contains(['{', '}'])
            || rest.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            self.wrong(
                "baseImage",
                "an image reference such as `node:{nodeVersion}-bookworm-slim` (no spaces, no leading `-`, no placeholder but `{nodeVersion}`)",
            );
            return None;
        }
        Some(s.to_string())
    }

    fn user(&mut self, v: &Value) -> Option<String> {
        let Some(s) = v.as_str() else {
            self.wrong("user", "a string");
            return None;
        };
        if !valid_user(s) {
            self.wrong(
                "user",
                "an account name (e.g. `agent`), a uid, or `uid:gid`",
            );
            return None;
        }
        Some(s.to_string())
    }

    fn string_map(&mut self, key: &str, v: &Value, build: bool) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let Some(m) = v.as_object() else {
            self.wrong(key, "an object of strings");
            return out;
        };
        for (name, value) in m {
            let at = format!("{key}.{}", shown(name));
            if !valid_var_name(name) {
                self.problem(format!(
                    "`{at}`: not a variable name (letters, digits and `_`, not starting with a digit)"
                ));
                continue;
            }
            if build && RESERVED_BUILD_ARGS.contains(&name.as_str()) {
                let why = if name == "BASE_IMAGE" {
                    "set `baseImage` instead"
                } else {
                    "treebox sets it (the agent's account)"
                };
                self.problem(format!("`{at}` is reserved: {why}"));
                continue;
            }
            if !build && name.starts_with("TREEBOX_") {
                self.problem(format!(
                    "`{at}` is reserved: treebox sets `TREEBOX_*` itself"
                ));
                continue;
            }
            if looks_secret(name) {
                self.problem(format!(
                    "`{at}` looks like a credential: {} is not secret{}; credentials reach the box only through the env file at start",
                    self.file,
                    if build { " and build arguments stay readable in the image" } else { "" }
                ));
                continue;
            }
            match value.as_str() {
                Some(s) if !s.contains('\0') => {
                    out.insert(name.clone(), s.to_string());
                }
                _ => self.wrong(&at, "a string"),
            }
        }
        out
    }

    /// `postCreate` or `postStart`: shell commands.
    fn commands(&mut self, key: &str, v: &Value) -> Vec<String> {
        let Some(a) = v.as_array() else {
            self.wrong(key, "a list of strings");
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, item) in a.iter().enumerate() {
            match item.as_str() {
                Some(s) if !s.trim().is_empty() && !s.contains('\0') => out.push(s.to_string()),
                Some(_) => self.wrong(&format!("{key}[{i}]"), "a non-empty command"),
                None => self.wrong(&format!("{key}[{i}]"), "a string"),
            }
        }
        out
    }

    fn firewall(&mut self, v: &Value) -> Option<Firewall> {
        let Some(m) = v.as_object() else {
            self.wrong(
                "firewall",
                "an object with `script` and `allowlist` (files of the template)",
            );
            return None;
        };
        let mut ok = true;
        for key in m.keys() {
            if !FIREWALL_KEYS.contains(&key.as_str()) {
                let hint = did_you_mean(
                    suggest(key, FIREWALL_KEYS.iter().copied()).map(|k| format!("firewall.{k}")),
                );
                self.problem(format!("unknown key `firewall.{}`{hint}", shown(key)));
                ok = false;
            }
        }
        let file = |me: &mut Self, key: &str| -> Option<String> {
            let at = format!("firewall.{key}");
            match m.get(key) {
                None => {
                    me.problem(format!("`{at}` is missing: name a file of the template"));
                    None
                }
                Some(Value::String(p)) => match check_rel_path(p) {
                    Ok(()) => Some(p.clone()),
                    Err(why) => {
                        me.problem(format!("`{at}`: `{}` {why}", shown(p)));
                        None
                    }
                },
                Some(_) => {
                    me.wrong(&at, "a string (a file of the template)");
                    None
                }
            }
        };
        let script = file(self, "script");
        let allowlist = file(self, "allowlist");
        match (script, allowlist) {
            (Some(script), Some(allowlist)) if ok => Some(Firewall { script, allowlist }),
            _ => None,
        }
    }

    fn ports(&mut self, v: &Value) -> Vec<u16> {
        let Some(a) = v.as_array() else {
            self.wrong("ports", "a list of port numbers");
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, item) in a.iter().enumerate() {
            match item
                .as_u64()
                .and_then(|p| u16::try_from(p).ok())
                .filter(|p| *p > 0)
            {
                Some(p) if !out.contains(&p) && out.len() < 64 => out.push(p),
                Some(p) if out.contains(&p) => {
                    self.problem(format!("`ports[{i}]`: {p} is named twice"))
                }
                Some(_) => self.problem("`ports` names more than 64 ports".into()),
                None => self.wrong(&format!("ports[{i}]"), "a port number (1 to 65535)"),
            }
        }
        out
    }

    fn cap_add(&mut self, v: &Value) -> Vec<Capability> {
        let Some(a) = v.as_array() else {
            self.wrong("capAdd", "a list of strings");
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, item) in a.iter().enumerate() {
            let Some(s) = item.as_str() else {
                self.wrong(&format!("capAdd[{i}]"), "a string");
                continue;
            };
            match Capability::ALL.iter().find(|c| c.as_str() == s) {
                Some(c) => {
                    if !out.contains(c) {
                        out.push(*c);
                    }
                }
                None => {
                    let hint = did_you_mean(suggest(s, Capability::ALL.iter().map(|c| c.as_str())));
                    self.problem(format!(
                        "`capAdd[{i}]`: `{}` is not allowed{hint}; a template may add only NET_ADMIN and NET_RAW",
                        shown(s)
                    ));
                }
            }
        }
        out
    }
}

fn valid_var_name(s: &str) -> bool {
    crate::names::env_name_ok(s) && s.len() <= 128
}

/// A variable name that probably carries a credential.
fn looks_secret(name: &str) -> bool {
    const WORDS: &[&str] = &[
        "KEY",
        "KEYS",
        "APIKEY",
        "TOKEN",
        "TOKENS",
        "SECRET",
        "SECRETS",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "CREDENTIAL",
        "CREDENTIALS",
    ];
    name.to_ascii_uppercase()
        .split('_')
        .any(|w| WORDS.contains(&w))
}

fn valid_user(s: &str) -> bool {
    let numeric = |p: &str| !p.is_empty() && p.len() <= 10 && p.chars().all(|c| c.is_ascii_digit());
    if let Some((u, g)) = s.split_once(':') {
        return numeric(u) && numeric(g);
    }
    if numeric(s) {
        return true;
    }
    let mut chars = s.chars();
    s.len() <= 32
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// A path a template may name: relative, `/`-separated, inside the template.
fn check_rel_path(p: &str) -> Result<(), &'static str> {
    if p.is_empty() {
        return Err("is empty");
    }
    if p.chars().any(|c| c.is_control() || c == '\\') {
        return Err("has control characters or backslashes");
    }
    let path = Path::new(p);
    if path.is_absolute() {
        return Err("must be a relative path inside the template, not an absolute one");
    }
    for c in path.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => {
                return Err("must be a path inside the template (no `..`)");
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err("must be a relative path inside the template, not an absolute one");
            }
        }
    }
    Ok(())
}

/// `p` without `./` segments, `/`-joined, as file paths are listed.
pub(super) fn normalise_rel(p: &str) -> String {
    Path::new(p)
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The names declared by `ARG` lines of a Dockerfile.
pub(super) fn dockerfile_args(dockerfile: Option<&[u8]>) -> Vec<String> {
    let text = String::from_utf8_lossy(dockerfile.unwrap_or_default());
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        if !line
            .get(..4)
            .is_some_and(|k| k.eq_ignore_ascii_case("ARG "))
        {
            continue;
        }
        for decl in line[4..].split_whitespace() {
            let name = decl.split('=').next().unwrap_or_default();
            if valid_var_name(name) {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// Problems of an allowlist, as `LINE: message`: each non-comment line must be one host
/// name or one IPv4/IPv6 address or CIDR.
pub fn allowlist_problems(text: &[u8]) -> Vec<String> {
    let Ok(text) = std::str::from_utf8(text) else {
        return vec![" not UTF-8 text".into()];
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let entry = line.split('#').next().unwrap_or_default().trim();
        if entry.is_empty() {
            continue;
        }
        if !(valid_cidr(entry) || valid_host(entry)) {
            out.push(format!(
                "{}: `{}` is not a host name or CIDR (one a line, `#` comments)",
                i + 1,
                shown(entry)
            ));
        }
    }
    out
}

fn valid_cidr(s: &str) -> bool {
    let (addr, prefix) = match s.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (s, None),
    };
    let Ok(ip) = addr.parse::<std::net::IpAddr>() else {
        return false;
    };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    prefix.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 3
            && p.chars().all(|c| c.is_ascii_digit())
            && p.parse::<u32>().is_ok_and(|n| n <= max)
    })
}

fn valid_host(s: &str) -> bool {
    let s = s.strip_suffix('.').unwrap_or(s);
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> (ContainerSpec, Vec<String>) {
        ContainerSpec::parse(json.as_bytes(), "container.json")
    }

    fn one_problem(json: &str) -> String {
        let (_, p) = parse(json);
        assert_eq!(p.len(), 1, "{json}: {p:#?}");
        p[0].clone()
    }

    #[test]
    fn full_spec_parses() {
        let (spec, problems) = parse(
            r#"{"baseImage":"debian:bookworm","user":"1000:1000","buildArgs":{"X":"1"},
                "env":{"LANG":"C.UTF-8"},"postCreate":["make deps"],
                "firewall":{"script":"./fw.sh","allowlist":"lists/allow.txt"},
                "capAdd":["NET_RAW","NET_RAW"]}"#,
        );
        assert!(problems.is_empty(), "{problems:#?}");
        assert_eq!(spec.base_image.as_deref(), Some("debian:bookworm"));
        assert_eq!(spec.user.as_deref(), Some("1000:1000"));
        assert_eq!(spec.build_args.get("X").map(String::as_str), Some("1"));
        assert_eq!(spec.env.get("LANG").map(String::as_str), Some("C.UTF-8"));
        assert_eq!(spec.post_create, vec!["make deps".to_string()]);
        assert_eq!(spec.cap_add, vec![Capability::NetRaw]);
        assert_eq!(spec.firewall.unwrap().allowlist, "lists/allow.txt");
        assert_eq!(parse("{}"), (ContainerSpec::default(), vec![]));
    }

    #[test]
    fn unknown_keys_suggest() {
        let p = one_problem(r#"{"baseImag":"x"}"#);
        assert!(
            p.starts_with("container.json: ")
                && p.contains("unknown key `baseImag`")
                && p.contains("did you mean `baseImage`"),
            "{p}"
        );
        let p = one_problem(r#"{"firewall":{"scirpt":"a","script":"a","allowlist":"b"}}"#);
        assert!(
            p.contains("`firewall.scirpt` (did you mean `firewall.script`?)"),
            "{p}"
        );
        let p = one_problem(r#"{"workdir":"/w"}"#);
        assert!(
            p.contains("unknown key `workdir`") && !p.contains("did you mean"),
            "{p}"
        );
    }

    #[test]
    fn wrong_types_name_the_key() {
        for (json, needle) in [
            (r#"{"baseImage":3}"#, "`baseImage` must be a string"),
            (r#"{"user":["x"]}"#, "`user` must be a string"),
            (
                r#"{"buildArgs":[]}"#,
                "`buildArgs` must be an object of strings",
            ),
            (r#"{"buildArgs":{"A":1}}"#, "`buildArgs.A` must be a string"),
            (r#"{"env":{"A":true}}"#, "`env.A` must be a string"),
            (
                r#"{"postCreate":"make"}"#,
                "`postCreate` must be a list of strings",
            ),
            (
                r#"{"postCreate":["ok",2]}"#,
                "`postCreate[1]` must be a string",
            ),
            (
                r#"{"postCreate":[" "]}"#,
                "`postCreate[0]` must be a non-empty command",
            ),
            (r#"{"firewall":"fw.sh"}"#, "`firewall` must be an object"),
            (
                r#"{"firewall":{"script":1,"allowlist":"a"}}"#,
                "`firewall.script` must be a string",
            ),
            (
                r#"{"capAdd":"NET_ADMIN"}"#,
                "`capAdd` must be a list of strings",
            ),
            (r#"{"capAdd":[1]}"#, "`capAdd[0]` must be a string"),
            (
                r#"{"baseBuild":{"context":"base"}}"#,
                "`baseBuild.dockerfile` is missing",
            ),
            (
                r#"{"baseBuild":{"dockerfile":"../Dockerfile","context":"base"}}"#,
                "`baseBuild.dockerfile`: `../Dockerfile`",
            ),
            (
                r#"{"baseBuild":{"dockerfile":"d","context":"c","args":{"NPM_TOKEN":"x"}}}"#,
                "`baseBuild.args.NPM_TOKEN` looks like a credential",
            ),
            (
                r#"{"baseImage":"x","baseBuild":{"dockerfile":"d","context":"c"}}"#,
                "both name the base",
            ),
            (
                r#"{"postStart":"echo"}"#,
                "`postStart` must be a list of strings",
            ),
            (r#"{"ports":[8000,0]}"#, "`ports[1]` must be a port number"),
            (r#"{"ports":[8000,8000]}"#, "8000 is named twice"),
        ] {
            let p = one_problem(json);
            assert!(p.contains(needle), "{json}: {p}");
        }
        assert!(one_problem("[1]").contains("top level must be an object"));
        assert!(one_problem("{").contains("not valid JSON"));
    }

    #[test]
    fn values_are_checked() {
        for (json, needle) in [
            (
                r#"{"baseImage":"-x"}"#,
                "`baseImage` must be an image reference",
            ),
            (
                r#"{"baseImage":"a b"}"#,
                "`baseImage` must be an image reference",
            ),
            (
                r#"{"baseImage":"node:{node}"}"#,
                "`baseImage` must be an image reference",
            ),
            (r#"{"user":"-root"}"#, "`user` must be an account name"),
            (r#"{"user":"1000:"}"#, "`user` must be an account name"),
            (
                r#"{"buildArgs":{"HOST_UID":"0"}}"#,
                "`buildArgs.HOST_UID` is reserved",
            ),
            (
                r#"{"buildArgs":{"BASE_IMAGE":"x"}}"#,
                "set `baseImage` instead",
            ),
            (
                r#"{"buildArgs":{"NPM_TOKEN":"x"}}"#,
                "looks like a credential",
            ),
            (
                r#"{"env":{"ANTHROPIC_API_KEY":"sk"}}"#,
                "`env.ANTHROPIC_API_KEY` looks like a credential",
            ),
            (r#"{"env":{"TREEBOX_BOX":"x"}}"#, "is reserved"),
            (r#"{"env":{"1X":"x"}}"#, "not a variable name"),
            (r#"{"capAdd":["SYS_ADMIN"]}"#, "`SYS_ADMIN` is not allowed"),
            (r#"{"capAdd":["NET_ADMN"]}"#, "did you mean `NET_ADMIN`"),
            (
                r#"{"firewall":{"script":"a"}}"#,
                "`firewall.allowlist` is missing",
            ),
        ] {
            let p = one_problem(json);
            assert!(p.contains(needle), "{json}: {p}");
        }
    }

    #[test]
    fn firewall_paths_stay_inside() {
        for bad in ["../../etc/passwd", "/etc/passwd", "a/../../b", "", "a\\b"] {
            let json = format!(
                r#"{{"firewall":{{"script":{},"allowlist":"a"}}}}"#,
                serde_json::json!(bad)
            );
            let p = one_problem(&json);
            assert!(p.contains("`firewall.script`"), "{bad}: {p}");
        }
        assert!(check_rel_path("sub/fw.sh").is_ok());
        assert!(check_rel_path("./fw.sh").is_ok());
    }

    #[test]
    fn allowlist_entries() {
        let p = allowlist_problems(
            b"# c\n\nexample.com\n 10.0.0.0/8 # x\n2001:db8::/32\n1.2.3.4\nhost.\nbad_host\n10.0.0.0/33\n*.x.com\na b\n",
        );
        assert_eq!(p.len(), 4, "{p:#?}");
        assert!(p[0].starts_with("8: `bad_host`"), "{p:#?}");
        assert!(p[1].starts_with("9: "));
        assert!(p[2].starts_with("10: "));
        assert!(p[3].starts_with("11: "));
    }

    mod props {
        //! Bad input, generated: `container.json`, allowlists and template names never
        //! panic the checks; whatever is accepted is inside the vocabulary, every
        //! problem names the file, and no problem text can drive a terminal.
        use super::super::*;
        use crate::template::{check_name, MAX_NAME_LEN};
        use proptest::prelude::*;

        fn text() -> impl Strategy<Value = String> {
            prop_oneof![
                any::<String>(),
                Just("../etc/passwd".to_string()),
                Just("/etc/passwd".to_string()),
                Just("a/../../b".to_string()),
                Just("./fw.sh".to_string()),
                Just("fw.sh".to_string()),
                Just("NET_ADMIN".to_string()),
                Just("SYS_ADMIN".to_string()),
                Just("node:{nodeVersion}-slim".to_string()),
                Just("-v".to_string()),
                Just("1000:1000".to_string()),
                Just("root".to_string()),
                Just("\u{1b}[2J".to_string()),
                Just("API_TOKEN".to_string()),
                Just("TREEBOX_X".to_string()),
                Just("BASE_IMAGE".to_string()),
                "[A-Za-z_][A-Za-z0-9_]{0,10}",
            ]
        }

        fn value() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i32>().prop_map(Value::from),
                text().prop_map(Value::String),
            ];
            leaf.prop_recursive(3, 24, 5, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                    prop::collection::btree_map(key(), inner, 0..5)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        fn key() -> impl Strategy<Value = String> {
            let known: Vec<String> = SPEC_KEYS
                .iter()
                .chain(FIREWALL_KEYS)
                .map(|k| k.to_string())
                .collect();
            prop_oneof![3 => prop::sample::select(known), 2 => text()]
        }

        fn spec_bytes() -> impl Strategy<Value = Vec<u8>> {
            prop_oneof![
                3 => prop::collection::btree_map(key(), value(), 0..7)
                    .prop_map(|m| Value::Object(m.into_iter().collect()).to_string().into_bytes()),
                1 => value().prop_map(|v| v.to_string().into_bytes()),
                1 => prop::collection::vec(any::<u8>(), 0..256),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn container_spec_accepts_only_the_vocabulary(bytes in spec_bytes()) {
                let (spec, problems) = ContainerSpec::parse(&bytes, "tpl/container.json");
                for p in &problems {
                    prop_assert!(p.starts_with("tpl/container.json: "), "{}", p);
                    prop_assert!(!p.chars().any(char::is_control), "{:?}", p);
                }
                if let Some(b) = &spec.base_image {
                    prop_assert!(!b.is_empty() && !b.starts_with('-'));
                    prop_assert!(!b.chars().any(|c| c.is_whitespace() || c.is_control()));
                }
                if let Some(u) = &spec.user {
                    prop_assert!(valid_user(u));
                }
                for (k, v) in spec.env.iter().chain(&spec.build_args) {
                    prop_assert!(valid_var_name(k) && !looks_secret(k), "{}", k);
                    prop_assert!(!v.contains('\0'));
                }
                prop_assert!(spec.env.keys().all(|k| !k.starts_with("TREEBOX_")));
                prop_assert!(spec
                    .build_args
                    .keys()
                    .all(|k| !RESERVED_BUILD_ARGS.contains(&k.as_str())));
                if let Some(fw) = &spec.firewall {
                    for p in [&fw.script, &fw.allowlist] {
                        prop_assert!(check_rel_path(p).is_ok());
                        let path = Path::new(p);
                        prop_assert!(!path.is_absolute());
                        prop_assert!(path.components().all(|c| !matches!(c, Component::ParentDir)));
                    }
                }
                prop_assert!(spec.cap_add.iter().all(|c| Capability::ALL.contains(c)));
                prop_assert!(spec.post_create.iter().all(|c| !c.trim().is_empty()));
            }

            #[test]
            fn template_names_are_plain(name in prop_oneof![any::<String>(), "[a-z0-9._/-]{0,70}", text()]) {
                if check_name(&name).is_ok() {
                    prop_assert!(!name.is_empty() && name.len() <= MAX_NAME_LEN);
                    prop_assert!(name.as_bytes()[0].is_ascii_lowercase() || name.as_bytes()[0].is_ascii_digit());
                    prop_assert!(name.bytes().all(|b| b.is_ascii_lowercase()
                        || b.is_ascii_digit()
                        || matches!(b, b'.' | b'_' | b'-')));
                    prop_assert!(name != "." && name != "..");
                }
            }

            #[test]
            fn allowlist_problems_never_panic_and_are_terminal_safe(
                bytes in prop_oneof![
                    prop::collection::vec(any::<u8>(), 0..256),
                    "([0-9a-z.:/#\\- \u{1b}]{0,30}\n){0,6}".prop_map(String::into_bytes),
                ]
            ) {
                for p in allowlist_problems(&bytes) {
                    prop_assert!(!p.chars().any(char::is_control), "{:?}", p);
                }
            }
        }
    }
}
