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
//! | `baseBuild` | object | `dockerfile` (a file of the template), `context` (a directory of it) and `args`: the base image, built first and used as `BASE_IMAGE` (an imported dev container's Dockerfile); not with `baseImage` |
//! | `user` | string | the account (name, `uid` or `uid:gid`) the agent runs as; absent: the host user's `uid:gid` |
//! | `buildArgs` | object of strings | more build arguments; each must be declared by an `ARG` in the Dockerfile; `BASE_IMAGE`, `AGENT_UID`, `AGENT_GID` are treebox's (and `HOST_UID`, `HOST_GID` stay reserved) |
//! | `env` | object of strings | non-secret environment for the agent (credentials go in the env file) |
//! | `postCreate` | list of strings | shell commands run inside the container after it is first started |
//! | `postStart` | list of strings | shell commands run inside the container, as the agent, after each start (the first included, after `postCreate`) |
//! | `ports` | list of port numbers | the ports inside the container the box's block publishes, in order (a dev container's `forwardPorts`); the rest of the block keeps its own numbers |
//! | `firewall` | object | `script` and `allowlist`: files of the template (both required) |
//! | `capAdd` | list of strings | capabilities for the container, from `NET_ADMIN`, `NET_RAW` |
//!
//! Names like `*_TOKEN` or `*_KEY` in `env` and `buildArgs` are refused: this file is
//! not secret, and build arguments are readable from the image's history.
//!
//! The engine never prints; `cli::template` does.
//!
//! # Rooms
//!
//! - `spec`: `container.json` ([`ContainerSpec`]), its validation and problems, and
//!   the allowlist grammar (also used by `config` for the user's `allowlist`);
//! - `bundled`: the embedded `default` template;
//! - `store`: finding templates (bundled or the user's), reading a template
//!   directory within its limits, and `init` / `list` / `locate` / `find`;
//! - this file: [`Template`] (files + spec, read once), [`Source`] and [`TemplateError`].

mod bundled;
pub mod devcontainer;
mod spec;
mod store;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub use bundled::{bundled, BUNDLED_NAME};
pub use spec::{
    allowlist_problems, BaseBuild, Capability, ContainerSpec, Firewall, DEFAULT_NODE_VERSION,
    NODE_PLACEHOLDER, RESERVED_BUILD_ARGS,
};
pub use store::{
    check_name, find, find_in, init, init_in, init_with, list, list_in, locate, locate_in,
    user_dir, TemplateInfo, MAX_FILES, MAX_FILE_BYTES, MAX_NAME_LEN, MAX_TOTAL_BYTES,
};

use spec::{dockerfile_args, normalise_rel, AGENT_ARGS};

/// The spec file every template has.
pub const SPEC_FILE: &str = "container.json";
/// The Dockerfile every template has.
pub const DOCKERFILE: &str = "Dockerfile";

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
    #[error("could not read or write {}", .path.display())]
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

/// A key or value as it may appear in a message: escaped, and cut when long.
fn shown(s: &str) -> String {
    let cut: String = s.chars().take(80).collect();
    let mut out = cut.escape_debug().to_string();
    if s.chars().count() > 80 {
        out.push('…');
    }
    out
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
        if let Some(b) = &self.spec.base_build {
            if self.file(&b.dockerfile).is_none() {
                out.push(format!(
                    "{}: `baseBuild.dockerfile` names `{}`, which is not a file of the template",
                    label(SPEC_FILE),
                    shown(&b.dockerfile)
                ));
            }
        }
        let declared = dockerfile_args(self.file(DOCKERFILE).map(|f| &f.contents[..]));
        // The agent's account is made from these (never root, never the host user's
        // uid); a template copied before they existed makes the agent the host user.
        for name in AGENT_ARGS {
            if self.file(DOCKERFILE).is_some() && !declared.iter().any(|d| d == name) {
                out.push(format!(
                    "{}: declares no `ARG {name}`: the agent's account is made from `AGENT_UID` and `AGENT_GID` (a template copied from an earlier version makes the agent your own user or root)",
                    label(DOCKERFILE)
                ));
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn write_to_renders_a_build_context() {
        let d = tempfile::tempdir().unwrap();
        bundled().write_to(d.path()).unwrap();
        let meta = std::fs::metadata(d.path().join("init-firewall.sh")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o755);
        // Never over an existing file.
        assert!(bundled().write_to(d.path()).is_err());
    }
}
