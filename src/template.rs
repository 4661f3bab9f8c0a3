//! Operator-owned container templates (SPEC §7).
//!
//! A template is a directory: a `Dockerfile`, a `container.json` (its [`ContainerSpec`])
//! and the files they name (the firewall script and allowlist), plus anything else the
//! image needs. Templates come from two places only:
//!
//! - the **bundled** template `default`, embedded in the binary from `templates/default/`
//!   (a static list of relative path, bytes and mode);
//! - the **user's** templates, `$XDG_CONFIG_HOME/treebox/templates/<name>/`. A user
//!   template named `default` overrides the bundled one.
//!
//! Nothing here ever reads the target repository: a repo's own `.treebox/templates`,
//! `container.json` or Dockerfile is never looked at (SPEC §8.3). The container runner
//! renders a [`Template`]'s [`files`](Template::files) into host-owned bookkeeping
//! beside the box, outside every mount, and builds the image from there.
//!
//! # `container.json`
//!
//! A closed vocabulary; every key is optional. Unknown keys and wrong types are
//! reported as problems naming the file and the key (with a did-you-mean):
//!
//! | key | type | meaning |
//! |---|---|---|
//! | `baseImage` | string | the build argument `BASE_IMAGE`; `{nodeVersion}` in it is replaced by the Node major the repo declares, else [`DEFAULT_NODE_VERSION`] |
//! | `user` | string | the account (name, `uid` or `uid:gid`) the agent runs as; absent: the host user's `uid:gid` |
//! | `buildArgs` | object of strings | more build arguments; each must be declared by an `ARG` in the Dockerfile; `BASE_IMAGE`, `HOST_UID`, `HOST_GID` are treebox's |
//! | `env` | object of strings | non-secret environment for the agent (credentials go in the env file) |
//! | `postCreate` | list of strings | shell commands run inside the container after it is first started |
//! | `firewall` | object | `script` and `allowlist`: files of the template (both required) |
//! | `capAdd` | list of strings | capabilities for the container, from `NET_ADMIN`, `NET_RAW` |
//!
//! Names like `*_TOKEN` or `*_KEY` in `env` and `buildArgs` are refused: this file is
//! not secret, and build arguments are readable from the image's history.
//!
//! The engine never prints; `cli::template` does.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// The name of the bundled template.
pub const BUNDLED_NAME: &str = "default";
/// The spec file every template has.
pub const SPEC_FILE: &str = "container.json";
/// The Dockerfile every template has.
pub const DOCKERFILE: &str = "Dockerfile";
/// The Node major used when a repository declares none (`{nodeVersion}` in `baseImage`).
pub const DEFAULT_NODE_VERSION: &str = "22";
/// Largest file a template may hold.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Most files a template may hold.
pub const MAX_FILES: usize = 256;
/// Largest template, all files together.
pub const MAX_TOTAL_BYTES: u64 = 16 * 1024 * 1024;
/// Longest template name.
pub const MAX_NAME_LEN: usize = 64;
/// Deepest directory nesting inside a template.
const MAX_DEPTH: usize = 16;

/// Build arguments treebox sets itself; `buildArgs` may not.
pub const RESERVED_BUILD_ARGS: &[&str] = &["BASE_IMAGE", "HOST_UID", "HOST_GID"];

struct Bundled {
    path: &'static str,
    bytes: &'static [u8],
    mode: u32,
}

/// The bundled template, embedded at compile time (a test keeps this list and
/// `templates/default/` in step).
const BUNDLED: &[Bundled] = &[
    Bundled {
        path: "Dockerfile",
        bytes: include_bytes!("../templates/default/Dockerfile"),
        mode: 0o644,
    },
    Bundled {
        path: "allowlist.txt",
        bytes: include_bytes!("../templates/default/allowlist.txt"),
        mode: 0o644,
    },
    Bundled {
        path: "container.json",
        bytes: include_bytes!("../templates/default/container.json"),
        mode: 0o644,
    },
    Bundled {
        path: "init-firewall.sh",
        bytes: include_bytes!("../templates/default/init-firewall.sh"),
        mode: 0o755,
    },
];

#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error("invalid template name `{name}`: {reason}")]
    InvalidName { name: String, reason: &'static str },
    #[error("no template named `{name}`{}", looked_in(.dir))]
    NotFound { name: String, dir: Option<PathBuf> },
    #[error("template `{name}` ({}) is invalid: {}{}", .path.display(), .problems.first().map(String::as_str).unwrap_or("unknown problem"), more(.problems))]
    Invalid {
        name: String,
        path: PathBuf,
        problems: Vec<String>,
    },
    #[error("template `{name}` already exists at {}", .path.display())]
    Exists { name: String, path: PathBuf },
    #[error("no configuration directory for user templates (set HOME or XDG_CONFIG_HOME)")]
    NoConfigDir,
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn looked_in(dir: &Option<PathBuf>) -> String {
    match dir {
        Some(d) => format!(" (looked in {} and the bundled templates)", d.display()),
        None => String::new(),
    }
}

fn more(problems: &[String]) -> String {
    match problems.len() {
        0 | 1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> TemplateError + '_ {
    move |source| TemplateError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Where a template comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Embedded in the binary; it has no directory.
    Bundled,
    /// The user's template directory.
    User(PathBuf),
}

impl Source {
    /// `bundled` or `user`.
    pub fn kind(&self) -> &'static str {
        match self {
            Source::Bundled => "bundled",
            Source::User(_) => "user",
        }
    }

    pub fn dir(&self) -> Option<&Path> {
        match self {
            Source::Bundled => None,
            Source::User(d) => Some(d),
        }
    }
}

/// One file of a template: a relative `/`-separated path, its bytes and its mode
/// (`0o755` when executable, else `0o644`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateFile {
    pub path: String,
    pub contents: Cow<'static, [u8]>,
    pub mode: u32,
}

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

/// `container.json`, validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerSpec {
    pub base_image: Option<String>,
    pub user: Option<String>,
    pub build_args: BTreeMap<String, String>,
    pub env: BTreeMap<String, String>,
    pub post_create: Vec<String>,
    pub firewall: Option<Firewall>,
    pub cap_add: Vec<Capability>,
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
    "user",
    "buildArgs",
    "env",
    "postCreate",
    "firewall",
    "capAdd",
];
const FIREWALL_KEYS: &[&str] = &["script", "allowlist"];

use crate::config::suggest;

fn did_you_mean(s: Option<String>) -> String {
    s.map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
}

/// A key or value as it may appear in a message: escaped, and cut when long.
fn shown(s: &str) -> String {
    let cut: String = s.chars().take(80).collect();
    let mut out = cut.escape_debug().to_string();
    if s.chars().count() > 80 {
        out.push('…');
    }
    out
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
                "user" => spec.user = self.user(value),
                "buildArgs" => spec.build_args = self.string_map("buildArgs", value, true),
                "env" => spec.env = self.string_map("env", value, false),
                "postCreate" => spec.post_create = self.post_create(value),
                "firewall" => spec.firewall = self.firewall(value),
                "capAdd" => spec.cap_add = self.cap_add(value),
                _ => {
                    let hint = did_you_mean(suggest(key, SPEC_KEYS.iter().copied()));
                    self.problem(format!("unknown key `{}`{hint}", shown(key)));
                }
            }
        }
        spec
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
                    "treebox sets it to the host user's id"
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

    fn post_create(&mut self, v: &Value) -> Vec<String> {
        let Some(a) = v.as_array() else {
            self.wrong("postCreate", "a list of strings");
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, item) in a.iter().enumerate() {
            match item.as_str() {
                Some(s) if !s.trim().is_empty() && !s.contains('\0') => out.push(s.to_string()),
                Some(_) => self.wrong(&format!("postCreate[{i}]"), "a non-empty command"),
                None => self.wrong(&format!("postCreate[{i}]"), "a string"),
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
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.len() <= 128
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
fn normalise_rel(p: &str) -> String {
    Path::new(p)
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Check a template name: `[a-z0-9][a-z0-9._-]*`, at most [`MAX_NAME_LEN`] characters.
pub fn check_name(name: &str) -> Result<(), TemplateError> {
    let bad = |reason| {
        Err(TemplateError::InvalidName {
            name: shown(name),
            reason,
        })
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > MAX_NAME_LEN {
        return bad("it is longer than 64 characters");
    }
    let first = name.as_bytes()[0];
    if !(first.is_ascii_lowercase() || first.is_ascii_digit()) {
        return bad("it must start with a lower-case letter or a digit");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-'))
    {
        return bad("use only lower-case letters, digits, '.', '_' and '-'");
    }
    Ok(())
}

/// A loaded template: its files, read once, and the spec parsed from those same bytes.
#[derive(Debug, Clone)]
pub struct Template {
    name: String,
    source: Source,
    spec: ContainerSpec,
    files: Vec<TemplateFile>,
}

impl Template {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The parsed `container.json`.
    pub fn spec(&self) -> &ContainerSpec {
        &self.spec
    }

    /// Every file of the template, sorted by path: what a build context is made of.
    pub fn files(&self) -> &[TemplateFile] {
        &self.files
    }

    /// The file at relative path `path` (`./` segments ignored).
    pub fn file(&self, path: &str) -> Option<&TemplateFile> {
        let want = normalise_rel(path);
        self.files.iter().find(|f| f.path == want)
    }

    /// SHA-256 (hex) over every file's path, mode and bytes: equal digests mean the
    /// same build context, so a runner can tell when an image must be rebuilt.
    pub fn digest(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for f in &self.files {
            h.update(f.path.as_bytes());
            h.update([0]);
            h.update(format!("{:o}", f.mode).as_bytes());
            h.update([0]);
            h.update((f.contents.len() as u64).to_le_bytes());
            h.update(&f.contents);
        }
        format!("{:x}", h.finalize())
    }

    /// Write every file under `dir` (which must exist) with its mode. Used by `init`
    /// and by runners rendering a build context.
    pub fn write_to(&self, dir: &Path) -> Result<(), TemplateError> {
        use std::io::Write;
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        for f in &self.files {
            let path = dir.join(&f.path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io_err(parent))?;
            }
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(f.mode)
                .open(&path)
                .map_err(io_err(&path))?;
            out.write_all(&f.contents).map_err(io_err(&path))?;
            // The umask may have cleared bits of the mode asked for.
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(f.mode))
                .map_err(io_err(&path))?;
        }
        Ok(())
    }

    /// Problems of the template as a whole: the spec's, and the files it needs.
    fn problems(&self, spec_problems: Vec<String>) -> Vec<String> {
        let label = |rel: &str| match &self.source {
            Source::Bundled => rel.to_string(),
            Source::User(d) => d.join(rel).display().to_string(),
        };
        let mut out = spec_problems;
        if self.file(DOCKERFILE).is_none() {
            out.push(format!("{}: missing", label(DOCKERFILE)));
        }
        if let Some(fw) = &self.spec.firewall {
            if self.file(&fw.script).is_none() {
                out.push(format!(
                    "{}: `firewall.script` names `{}`, which is not a file of the template",
                    label(SPEC_FILE),
                    shown(&fw.script)
                ));
            }
            match self.file(&fw.allowlist) {
                None => out.push(format!(
                    "{}: `firewall.allowlist` names `{}`, which is not a file of the template",
                    label(SPEC_FILE),
                    shown(&fw.allowlist)
                )),
                Some(f) => out.extend(
                    allowlist_problems(&f.contents)
                        .into_iter()
                        .map(|p| format!("{}:{p}", label(&f.path))),
                ),
            }
        }
        let declared = dockerfile_args(self.file(DOCKERFILE).map(|f| &f.contents[..]));
        for name in self.spec.build_args.keys() {
            if self.file(DOCKERFILE).is_some() && !declared.contains(name) {
                out.push(format!(
                    "{}: `buildArgs.{name}`: the Dockerfile declares no `ARG {name}`",
                    label(SPEC_FILE)
                ));
            }
        }
        out
    }
}

/// The names declared by `ARG` lines of a Dockerfile.
fn dockerfile_args(dockerfile: Option<&[u8]>) -> Vec<String> {
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

/// The bundled template `default`, from the binary.
pub fn bundled() -> Template {
    bundled_checked().0
}

/// The bundled template and its problems (none: a unit test sees to that).
fn bundled_checked() -> (Template, Vec<String>) {
    let files = BUNDLED
        .iter()
        .map(|b| TemplateFile {
            path: b.path.to_string(),
            contents: Cow::Borrowed(b.bytes),
            mode: b.mode,
        })
        .collect();
    assemble(BUNDLED_NAME, Source::Bundled, files)
}

/// A template from its files (sorted by path): the spec parsed from its
/// `container.json`, and every problem of the whole.
fn assemble(name: &str, source: Source, files: Vec<TemplateFile>) -> (Template, Vec<String>) {
    let spec_label = match &source {
        Source::Bundled => SPEC_FILE.to_string(),
        Source::User(d) => d.join(SPEC_FILE).display().to_string(),
    };
    let (spec, spec_problems) = match files.iter().find(|f| f.path == SPEC_FILE) {
        Some(f) => ContainerSpec::parse(&f.contents, &spec_label),
        None => (
            ContainerSpec::default(),
            vec![format!("{spec_label}: missing")],
        ),
    };
    let t = Template {
        name: name.to_string(),
        source,
        spec,
        files,
    };
    let problems = t.problems(spec_problems);
    (t, problems)
}

/// Where user templates live: `$XDG_CONFIG_HOME/treebox/templates` (it may not exist).
pub fn user_dir() -> Option<PathBuf> {
    xdg::BaseDirectories::with_prefix("treebox")
        .get_config_home()
        .map(|d| d.join("templates"))
}

/// One entry of [`list`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateInfo {
    pub name: String,
    pub source: Source,
    /// A user template named like the bundled one, which it replaces.
    pub overrides_bundled: bool,
    /// Everything wrong with it; empty when it is usable.
    pub problems: Vec<String>,
}

impl TemplateInfo {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Every template, sorted by name: the bundled `default` (unless a user template of
/// that name overrides it) and each directory under [`user_dir`], with its problems.
/// A template with problems is listed, not skipped: listing is not failing.
pub fn list() -> Result<Vec<TemplateInfo>, TemplateError> {
    list_in(user_dir().as_deref())
}

/// [`list`] with an explicit user templates directory.
pub fn list_in(dir: Option<&Path>) -> Result<Vec<TemplateInfo>, TemplateError> {
    let mut out = Vec::new();
    let mut names = Vec::new();
    if let Some(dir) = dir {
        match std::fs::read_dir(dir) {
            Ok(rd) => {
                for entry in rd {
                    let entry = entry.map_err(io_err(dir))?;
                    let name = entry.file_name().to_string_lossy().into_owned();
                    // Hidden entries are init's scratch space (and editors').
                    if name.starts_with('.') {
                        continue;
                    }
                    // Only directories (or links to them) are templates.
                    if entry.path().is_dir() {
                        names.push(name);
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(dir)(e)),
        }
    }
    names.sort();
    let user_default = names.iter().any(|n| n == BUNDLED_NAME);
    if !user_default {
        out.push(TemplateInfo {
            name: BUNDLED_NAME.to_string(),
            source: Source::Bundled,
            overrides_bundled: false,
            problems: bundled_checked().1,
        });
    }
    for name in names {
        let path = dir.map(|d| d.join(&name)).unwrap_or_default();
        let problems = match check_name(&name) {
            Err(e) => vec![format!("{}: {e}", path.display())],
            Ok(()) => load_dir(&name, &path).1,
        };
        out.push(TemplateInfo {
            overrides_bundled: name == BUNDLED_NAME,
            name,
            source: Source::User(path),
            problems,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Where the template `name` comes from, without loading it: its user directory if
/// there is one, else the bundled one for `default`.
pub fn locate(name: &str) -> Result<Source, TemplateError> {
    locate_in(user_dir().as_deref(), name)
}

/// [`locate`] with an explicit user templates directory.
pub fn locate_in(dir: Option<&Path>, name: &str) -> Result<Source, TemplateError> {
    check_name(name)?;
    if let Some(d) = dir {
        let p = d.join(name);
        if std::fs::symlink_metadata(&p).is_ok() {
            return Ok(Source::User(p));
        }
    }
    if name == BUNDLED_NAME {
        return Ok(Source::Bundled);
    }
    Err(TemplateError::NotFound {
        name: name.to_string(),
        dir: dir.map(Path::to_path_buf),
    })
}

/// Load the template `name`, which must have no problems.
pub fn find(name: &str) -> Result<Template, TemplateError> {
    find_in(user_dir().as_deref(), name)
}

/// [`find`] with an explicit user templates directory.
pub fn find_in(dir: Option<&Path>, name: &str) -> Result<Template, TemplateError> {
    match locate_in(dir, name)? {
        Source::Bundled => Ok(bundled()),
        Source::User(path) => match load_dir(name, &path) {
            (Some(t), problems) if problems.is_empty() => Ok(t),
            (_, problems) => Err(TemplateError::Invalid {
                name: name.to_string(),
                path,
                problems,
            }),
        },
    }
}

/// Copy the bundled template into the user templates directory as `name`. An existing
/// template of that name is an error unless `force`, which replaces it whole. Nothing
/// is written on refusal; the new directory appears complete or not at all.
pub fn init(name: &str, force: bool) -> Result<PathBuf, TemplateError> {
    let dir = user_dir().ok_or(TemplateError::NoConfigDir)?;
    init_in(&dir, name, force)
}

/// [`init`] with an explicit user templates directory.
pub fn init_in(dir: &Path, name: &str, force: bool) -> Result<PathBuf, TemplateError> {
    check_name(name)?;
    let target = dir.join(name);
    let exists = std::fs::symlink_metadata(&target).is_ok();
    if exists && !force {
        return Err(TemplateError::Exists {
            name: name.to_string(),
            path: target,
        });
    }
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let pid = std::process::id();
    let scratch = dir.join(format!(".{name}.new-{pid}"));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir(&scratch).map_err(io_err(&scratch))?;
    let written = bundled()
        .write_to(&scratch)
        .and_then(|()| swap_in(dir, &scratch, &target, name, exists));
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    written.map(|()| target)
}

/// Put the finished `scratch` directory at `target`. Without `replace`, the name is
/// claimed first with an empty directory (which fails if someone else has it), so a
/// template created meanwhile is never overwritten.
fn swap_in(
    dir: &Path,
    scratch: &Path,
    target: &Path,
    name: &str,
    replace: bool,
) -> Result<(), TemplateError> {
    if !replace {
        match std::fs::create_dir(target) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(TemplateError::Exists {
                    name: name.to_string(),
                    path: target.to_path_buf(),
                })
            }
            Err(e) => return Err(io_err(target)(e)),
        }
        // Renaming a directory over an empty one replaces it.
        return std::fs::rename(scratch, target).map_err(|e| {
            let _ = std::fs::remove_dir(target);
            io_err(target)(e)
        });
    }
    let old = dir.join(format!(".{name}.old-{}", std::process::id()));
    std::fs::rename(target, &old).map_err(io_err(target))?;
    std::fs::rename(scratch, target).map_err(io_err(target))?;
    let gone = match std::fs::symlink_metadata(&old) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&old),
        _ => std::fs::remove_file(&old),
    };
    gone.map_err(io_err(&old))
}

/// Read a user template directory: its files (regular files, and symlinks to files
/// inside it; `.git` skipped) and its spec, and every problem found on the way.
fn load_dir(name: &str, dir: &Path) -> (Option<Template>, Vec<String>) {
    let mut problems = Vec::new();
    let root = match std::fs::canonicalize(dir) {
        Ok(r) if r.is_dir() => r,
        Ok(_) => return (None, vec![format!("{}: not a directory", dir.display())]),
        Err(e) => return (None, vec![format!("{}: {e}", dir.display())]),
    };
    let mut walk = Walk {
        root: &root,
        shown_root: dir,
        files: Vec::new(),
        total: 0,
        too_many: false,
        problems: &mut problems,
    };
    walk.dir(&root, "", 0);
    let mut files = walk.files;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let (t, more) = assemble(name, Source::User(dir.to_path_buf()), files);
    problems.extend(more);
    (Some(t), problems)
}

struct Walk<'a> {
    root: &'a Path,
    shown_root: &'a Path,
    files: Vec<TemplateFile>,
    total: u64,
    too_many: bool,
    problems: &'a mut Vec<String>,
}

impl Walk<'_> {
    fn problem(&mut self, rel: &str, msg: impl std::fmt::Display) {
        self.problems
            .push(format!("{}: {msg}", self.shown_root.join(rel).display()));
    }

    fn dir(&mut self, dir: &Path, rel: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.problem(rel, format!("nested deeper than {MAX_DEPTH} directories"));
            return;
        }
        let mut entries: Vec<_> = match std::fs::read_dir(dir) {
            Ok(rd) => rd.flatten().collect(),
            Err(e) => {
                self.problem(rel, e);
                return;
            }
        };
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let Some(fname) = e.file_name().to_str().map(str::to_string) else {
                self.problem(rel, "a file name is not UTF-8");
                continue;
            };
            if fname == ".git" {
                continue;
            }
            let rel = if rel.is_empty() {
                fname
            } else {
                format!("{rel}/{fname}")
            };
            let path = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                self.dir(&path, &rel, depth + 1);
            } else if meta.is_file() {
                self.file(&path, &rel);
            } else if meta.file_type().is_symlink() {
                match std::fs::canonicalize(&path) {
                    Ok(t) if !t.starts_with(self.root) => {
                        self.problem(&rel, "a symlink to outside the template")
                    }
                    Ok(t) if t.is_file() => self.file(&t, &rel),
                    Ok(_) => self.problem(&rel, "a symlink to a directory (not followed)"),
                    Err(_) => self.problem(&rel, "a dangling symlink"),
                }
            } else {
                self.problem(&rel, "not a regular file");
            }
        }
    }

    fn file(&mut self, path: &Path, rel: &str) {
        use std::os::unix::fs::PermissionsExt;
        if self.files.len() >= MAX_FILES {
            if !self.too_many {
                self.too_many = true;
                self.problem(rel, format!("more than {MAX_FILES} files in the template"));
            }
            return;
        }
        let opened = std::fs::File::open(path).and_then(|f| {
            let meta = f.metadata()?;
            let mut buf = Vec::new();
            f.take(MAX_FILE_BYTES + 1).read_to_end(&mut buf)?;
            Ok((meta, buf))
        });
        match opened {
            Err(e) => self.problem(rel, e),
            Ok((_, buf)) if buf.len() as u64 > MAX_FILE_BYTES => {
                self.problem(rel, format!("larger than {MAX_FILE_BYTES} bytes"))
            }
            Ok((_, buf)) if self.total + buf.len() as u64 > MAX_TOTAL_BYTES => {
                self.problem(rel, format!("the template exceeds {MAX_TOTAL_BYTES} bytes"))
            }
            Ok((meta, buf)) => {
                self.total += buf.len() as u64;
                let mode = if meta.permissions().mode() & 0o111 != 0 {
                    0o755
                } else {
                    0o644
                };
                self.files.push(TemplateFile {
                    path: rel.to_string(),
                    contents: Cow::Owned(buf),
                    mode,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn parse(json: &str) -> (ContainerSpec, Vec<String>) {
        ContainerSpec::parse(json.as_bytes(), "container.json")
    }

    fn one_problem(json: &str) -> String {
        let (_, p) = parse(json);
        assert_eq!(p.len(), 1, "{json}: {p:#?}");
        p[0].clone()
    }

    #[test]
    fn bundled_template_is_valid_and_complete() {
        let (b, problems) = bundled_checked();
        assert!(problems.is_empty(), "{problems:#?}");
        let spec = b.spec();
        assert_eq!(
            spec.firewall,
            Some(Firewall {
                script: "init-firewall.sh".into(),
                allowlist: "allowlist.txt".into()
            })
        );
        assert_eq!(spec.cap_add, vec![Capability::NetAdmin, Capability::NetRaw]);
        assert_eq!(
            spec.base_image_for(None).as_deref(),
            Some("node:22-bookworm-slim")
        );
        assert_eq!(
            spec.base_image_for(Some("20")).as_deref(),
            Some("node:20-bookworm-slim")
        );
        assert_eq!(
            spec.base_image_for(Some("20; rm -rf /")).as_deref(),
            Some("node:22-bookworm-slim")
        );
        assert_eq!(b.file("./init-firewall.sh").map(|f| f.mode), Some(0o755));
        assert_eq!(b.digest().len(), 64);
    }

    #[test]
    fn bundled_list_matches_the_templates_dir() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/default");
        let mut on_disk: Vec<(String, u32)> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| {
                let mode = e.metadata().unwrap().permissions().mode();
                let mode = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
                (e.file_name().to_string_lossy().into_owned(), mode)
            })
            .collect();
        on_disk.sort();
        let listed: Vec<(String, u32)> = BUNDLED
            .iter()
            .map(|b| (b.path.to_string(), b.mode))
            .collect();
        assert_eq!(listed, on_disk, "update BUNDLED in src/template.rs");
    }

    #[test]
    fn bundled_build_args_match_dockerfile_defaults() {
        // The pins live in two places (container.json for operators, the Dockerfile for
        // a plain `docker build`); they must agree.
        let b = bundled();
        let dockerfile =
            String::from_utf8_lossy(&b.file(DOCKERFILE).unwrap().contents).into_owned();
        for (k, v) in &b.spec().build_args {
            let line = format!("ARG {k}={v}");
            assert!(
                dockerfile.lines().any(|l| l == line),
                "Dockerfile lacks `{line}`"
            );
        }
        let base = b.spec().base_image_for(None).unwrap();
        assert!(dockerfile.contains(&format!("ARG BASE_IMAGE={base}")));
        for needed in ["HOST_UID", "HOST_GID", "NODE_VERSION", "INSTALL_AGENTS"] {
            assert!(dockerfile_args(Some(dockerfile.as_bytes())).contains(&needed.to_string()));
        }
    }

    #[test]
    fn bundled_allowlist_has_the_defaults() {
        let b = bundled();
        let text = String::from_utf8_lossy(&b.file("allowlist.txt").unwrap().contents).into_owned();
        for host in [
            "api.anthropic.com",
            "api.openai.com",
            "registry.npmjs.org",
            "github.com",
            "api.github.com",
            "pypi.org",
            "files.pythonhosted.org",
            "proxy.golang.org",
            "index.crates.io",
            "static.crates.io",
        ] {
            assert!(text.lines().any(|l| l.trim() == host), "{host}");
        }
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
    fn names() {
        for good in ["default", "a", "0", "my-tpl.v2_x", &"a".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "Default",
            "-x",
            ".x",
            "_x",
            "a/b",
            "..",
            "a b",
            "é",
            &"a".repeat(65),
        ] {
            assert!(
                matches!(check_name(bad), Err(TemplateError::InvalidName { .. })),
                "{bad}"
            );
        }
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

    fn user_template(dir: &Path, name: &str) -> PathBuf {
        init_in(dir, name, false).unwrap()
    }

    #[test]
    fn init_copies_bundled_with_modes() {
        let d = tempfile::tempdir().unwrap();
        let t = user_template(d.path(), "mine");
        assert_eq!(t, d.path().join("mine"));
        for b in BUNDLED {
            let p = t.join(b.path);
            assert_eq!(std::fs::read(&p).unwrap(), b.bytes);
            assert_eq!(
                std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
                b.mode
            );
        }
        let found = find_in(Some(d.path()), "mine").unwrap();
        assert_eq!(found.source(), &Source::User(t.clone()));
        assert_eq!(found.digest(), bundled().digest());
        assert_eq!(found.spec(), bundled().spec());
        // No scratch left behind.
        let names: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn init_refuses_existing_unless_forced() {
        let d = tempfile::tempdir().unwrap();
        let t = user_template(d.path(), "mine");
        std::fs::write(t.join("extra"), "x").unwrap();
        assert!(matches!(
            init_in(d.path(), "mine", false),
            Err(TemplateError::Exists { .. })
        ));
        assert!(t.join("extra").exists());
        init_in(d.path(), "mine", true).unwrap();
        assert!(!t.join("extra").exists());
        assert!(t.join(DOCKERFILE).exists());
        assert!(matches!(
            init_in(d.path(), "Bad", false),
            Err(TemplateError::InvalidName { .. })
        ));
        assert!(!d.path().join("Bad").exists());
    }

    #[test]
    fn user_default_overrides_bundled() {
        let d = tempfile::tempdir().unwrap();
        let l = list_in(Some(d.path())).unwrap();
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].source, Source::Bundled);
        assert!(l[0].ok());
        assert!(matches!(
            locate_in(Some(d.path()), "default"),
            Ok(Source::Bundled)
        ));
        user_template(d.path(), "default");
        let l = list_in(Some(d.path())).unwrap();
        assert_eq!(l.len(), 1, "{l:#?}");
        assert!(l[0].overrides_bundled && matches!(l[0].source, Source::User(_)));
        assert!(matches!(
            find_in(Some(d.path()), "default").unwrap().source(),
            Source::User(_)
        ));
        assert!(matches!(
            find_in(Some(d.path()), "nope"),
            Err(TemplateError::NotFound { .. })
        ));
    }

    #[test]
    fn broken_user_templates_are_listed_with_problems() {
        let d = tempfile::tempdir().unwrap();
        let t = user_template(d.path(), "broken");
        std::fs::write(
            t.join(SPEC_FILE),
            r#"{"baseImag":"x","firewall":{"script":"../../etc/passwd","allowlist":"allowlist.txt"}}"#,
        )
        .unwrap();
        let m = user_template(d.path(), "missing");
        std::fs::write(
            m.join(SPEC_FILE),
            r#"{"firewall":{"script":"init-firewall.sh","allowlist":"nope.txt"}}"#,
        )
        .unwrap();
        std::os::unix::fs::symlink("/etc/passwd", t.join("escape")).unwrap();
        std::fs::remove_file(t.join(DOCKERFILE)).unwrap();
        std::fs::create_dir(d.path().join("Upper")).unwrap();
        std::fs::write(d.path().join("stray-file"), "").unwrap();
        let l = list_in(Some(d.path())).unwrap();
        let names: Vec<&str> = l.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["Upper", "broken", "default", "missing"]);
        let p = l[1].problems.join("\n");
        for needle in [
            "container.json: unknown key `baseImag` (did you mean `baseImage`?)",
            "`firewall.script`: `../../etc/passwd` must be a path inside the template",
            "escape: a symlink to outside the template",
            "Dockerfile: missing",
        ] {
            assert!(p.contains(needle), "{needle}\n{p}");
        }
        assert!(!l[0].ok());
        assert!(l[2].ok());
        assert_eq!(l[3].problems.len(), 1, "{:#?}", l[3]);
        assert!(
            l[3].problems[0].contains("`firewall.allowlist` names `nope.txt`, which is not a file")
        );
        let e = find_in(Some(d.path()), "broken").unwrap_err();
        assert!(matches!(e, TemplateError::Invalid { .. }));
        assert!(e.to_string().contains("more)"), "{e}");
    }

    #[test]
    fn file_limits_and_inside_symlinks() {
        let d = tempfile::tempdir().unwrap();
        let t = user_template(d.path(), "big");
        std::os::unix::fs::symlink("allowlist.txt", t.join("alias.txt")).unwrap();
        std::fs::create_dir(t.join(".git")).unwrap();
        std::fs::write(t.join(".git/HEAD"), "x").unwrap();
        let found = find_in(Some(d.path()), "big").unwrap();
        assert!(found.file("alias.txt").is_some());
        assert!(found.file(".git/HEAD").is_none());
        std::fs::write(t.join("huge"), vec![0u8; MAX_FILE_BYTES as usize + 1]).unwrap();
        let e = find_in(Some(d.path()), "big").unwrap_err().to_string();
        assert!(e.contains("huge: larger than"), "{e}");
        std::fs::remove_file(t.join("huge")).unwrap();
        std::fs::create_dir(t.join("many")).unwrap();
        for i in 0..MAX_FILES {
            std::fs::write(t.join(format!("many/{i}")), "").unwrap();
        }
        let e = find_in(Some(d.path()), "big").unwrap_err().to_string();
        assert!(e.contains("more than 256 files"), "{e}");
    }

    #[test]
    fn build_args_must_be_declared() {
        let d = tempfile::tempdir().unwrap();
        let t = user_template(d.path(), "args");
        std::fs::write(t.join(SPEC_FILE), r#"{"buildArgs":{"NOT_DECLARED":"1"}}"#).unwrap();
        let e = find_in(Some(d.path()), "args").unwrap_err().to_string();
        assert!(e.contains("declares no `ARG NOT_DECLARED`"), "{e}");
    }

    #[test]
    fn write_to_renders_a_build_context() {
        let d = tempfile::tempdir().unwrap();
        bundled().write_to(d.path()).unwrap();
        let meta = std::fs::metadata(d.path().join("init-firewall.sh")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o755);
        // Never over an existing file.
        assert!(bundled().write_to(d.path()).is_err());
    }

    mod props {
        //! Bad input, generated: `container.json`, allowlists and template names never
        //! panic the checks; whatever is accepted is inside the vocabulary, every
        //! problem names the file, and no problem text can drive a terminal.
        use super::super::*;
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
