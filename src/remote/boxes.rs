//! A laptop's boxes on another machine, from the laptop: making one there
//! ([`create_there`]) and listing them ([`list_there`]).
//!
//! Making one: that machine's treebox is asked what its mirror of this repository
//! holds (`heads`; a treebox of another protocol is refused there, as on every call); what the box needs and the mirror lacks
//! — `origin/<base>` as the laptop just fetched it — goes over as a git bundle of
//! exactly that ref, less what the mirror has (`seed`); then that machine's own
//! treebox makes the box in its clone of the mirror and starts the agent there
//! detached (`create`), answering `box_create`'s document. The laptop's config, hooks
//! and other refs never travel. The caller has fetched origin (the freshness rule).

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use super::{mirror, ssh, RemoteError};
use crate::config::Machine;
use crate::git::{GitCli, Repo};

/// How long a quick request may take (`hello`, `heads`, `list`).
pub const QUICK: Duration = Duration::from_secs(15);
/// How long a bundle may take to travel and be taken in.
pub const SEED: Duration = Duration::from_secs(600);
/// How long making the box there may take (its setup, an image build, the agent's start).
pub const CREATE: Duration = Duration::from_secs(1800);

/// What `create --on` asks of a machine.
#[derive(Debug, Clone)]
pub struct Create<'a> {
    pub machine: &'a Machine,
    pub repo: &'a Repo,
    /// Where the bundle is written before it travels (the repository's state dir).
    pub scratch: &'a Path,
    pub name: &'a str,
    pub base: &'a str,
    pub isolation: Option<&'a str>,
    pub harness: Option<&'a str>,
    pub git_mode: Option<&'a str>,
    /// The laptop's `.env`, for the box there (at most [`MAX_ENV`] bytes).
    pub env_file: Option<&'a [u8]>,
    /// The answers the user gave the main checkout here in Claude Code's config (its
    /// trust), for the clone the box is made from there.
    pub claude_answers: Option<&'a Value>,
    /// The files `.worktreeinclude` names here: relative path, mode, content (at most
    /// [`MAX_INCLUDES`] bytes in all).
    pub includes: &'a [Included],
}

/// A file sent with a box: its path relative to the main checkout, its mode, its bytes.
pub type Included = (std::path::PathBuf, u32, Vec<u8>);

/// The most bytes of `.worktreeinclude` files sent with a box (they travel in the
/// request's line, as hex).
pub const MAX_INCLUDES: u64 = 384 << 10;

/// The largest `.env` sent with a box.
pub const MAX_ENV: u64 = 256 << 10;

/// The files `.worktreeinclude` names in `repo`'s main checkout, read as a box would
/// get them (regular files only, with their modes), within [`MAX_INCLUDES`] in all;
/// and the relative paths of those left behind.
pub fn includes_of(repo: &Repo) -> (Vec<Included>, Vec<std::path::PathBuf>) {
    use std::os::unix::fs::PermissionsExt;
    let mut room = MAX_INCLUDES;
    let (mut files, mut left) = (Vec::new(), Vec::new());
    for rel in crate::provision::include::plan(repo) {
        let file = repo.main_root.join(&rel);
        let read = crate::untrusted::read_regular(&file, room, crate::untrusted::Links::Refuse);
        let mode = std::fs::symlink_metadata(&file).map_or(0o600, |md| md.permissions().mode());
        match read {
            Ok(content) => {
                room -= content.len() as u64;
                files.push((rel, mode, content));
            }
            Err(_) => left.push(rel),
        }
    }
    (files, left)
}

/// The key of `repo` on other machines.
pub fn key_for(repo: &Repo) -> String {
    mirror::key_of(&mirror::this_host(), &repo.common_dir)
}

/// Make the box there; its answer (`box_create`'s document, its paths that machine's).
pub fn create_there(c: &Create) -> Result<Value, RemoteError> {
    let key = seed_there(c)?;
    let mut request = json!({"op": "create", "key": key, "name": c.name, "base": c.base});
    // The variables the machine's `forwardEnv` names, from this environment: on the
    // channel's stdin, never in an argv or ssh's `SendEnv`.
    let forwarded: serde_json::Map<String, Value> = c
        .machine
        .forward_env
        .iter()
        .filter_map(|n| std::env::var(n).ok().map(|v| (n.clone(), Value::String(v))))
        .collect();
    if !forwarded.is_empty() {
        request["env"] = Value::Object(forwarded);
    }
    for (k, v) in [
        ("isolation", c.isolation),
        ("harness", c.harness),
        ("mode", c.git_mode),
    ] {
        if let Some(v) = v {
            request[k] = Value::String(v.to_string());
        }
    }
    if let Some(a) = c.claude_answers {
        request["claudeProject"] = a.clone();
    }
    ssh::call(c.machine, &request, CREATE)
}

/// Bring what a box of `c` needs to that machine: its mirror given what it lacks of
/// `origin/<base>` (a bundle), and this repository's `.env` and `.worktreeinclude`
/// files. The repository's key there. (Its first request, `heads`, is refused for a
/// treebox of another protocol, as every call is: no `hello` round trip first.)
pub fn seed_there(c: &Create) -> Result<String, RemoteError> {
    let m = c.machine;
    let key = key_for(c.repo);
    let git = GitCli::for_repo(&c.repo.common_dir, None);
    let local = |what: &str| RemoteError::Local {
        machine: m.name.clone(),
        what: what.to_string(),
    };
    let origin_ref = format!("refs/remotes/origin/{}", c.base);
    let tip = git
        .cmd(&c.repo.main_root)
        .args([
            "rev-parse",
            "--verify",
            "-q",
            &format!("{origin_ref}^{{commit}}"),
        ])
        .stdout_string()
        .map(|s| s.trim().to_string())
        .map_err(|_| local(&format!("there is no `origin/{}` here to send", c.base)))?;
    let heads = ssh::call(m, &json!({"op": "heads", "key": key}), QUICK)?;
    let has = heads["heads"][c.base].as_str() == Some(tip.as_str());
    let mut seed = json!({"op": "seed", "key": key, "branch": c.base, "tip": tip});
    // The `.env` as hex (it need not be UTF-8), on stdin as the rest.
    if let Some(bytes) = c.env_file {
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        seed["dotenv"] = Value::String(hex);
    }
    if !c.includes.is_empty() {
        let files: Vec<Value> = c
            .includes
            .iter()
            .map(|(path, mode, content)| {
                json!({
                    "path": path.to_string_lossy(),
                    "mode": mode,
                    "hex": content.iter().map(|b| format!("{b:02x}")).collect::<String>(),
                })
            })
            .collect();
        seed["includes"] = Value::Array(files);
    }
    if has && (c.env_file.is_some() || !c.includes.is_empty()) {
        ssh::call(m, &seed, QUICK)?;
    }
    if !has {
        // The mirror's tips this repository has too: the bundle leaves them out.
        let known: Vec<String> = heads["heads"]
            .as_object()
            .into_iter()
            .flat_map(|o| o.values())
            .filter_map(Value::as_str)
            .filter(|o| o.len() == 40 && o.bytes().all(|b| b.is_ascii_hexdigit()))
            .filter(|o| {
                git.cmd(&c.repo.main_root)
                    .args(["cat-file", "-e", &format!("{o}^{{commit}}")])
                    .output()
                    .is_ok()
            })
            .map(|o| format!("^{o}"))
            .collect();
        let bundle = c
            .scratch
            .join(format!("to-{}-{}.bundle", m.name, std::process::id()));
        let made = git
            .cmd(&c.repo.main_root)
            .args(["bundle", "create", "-q"])
            .arg(&bundle)
            .arg(&origin_ref)
            .args(&known)
            .output();
        let sent = match made {
            Ok(_) => ssh::call_with(m, &seed, Some(&bundle), SEED),
            // Nothing the mirror lacks (its tip is an older one of ours, say): the
            // ref alone moves.
            Err(_) => ssh::call(m, &seed, QUICK),
        };
        let _ = std::fs::remove_file(&bundle);
        sent?;
    }
    Ok(key)
}

/// `list --json`'s document of the boxes on `m` of the repository whose key is `key`
/// ([`key_for`]), within `limit` ([`QUICK`], or a listing's shorter deadline).
pub fn list_there(m: &Machine, key: &str, limit: Duration) -> Result<Value, RemoteError> {
    ssh::call(m, &json!({"op": "list", "key": key}), limit)
}

/// Remove box `leaf` there, as `git sandbox down` does off a terminal (refused while
/// anything stands against it, unless `force`); `down --json`'s document.
pub fn remove_there(m: &Machine, key: &str, leaf: &str, force: bool) -> Result<Value, RemoteError> {
    ssh::call(
        m,
        &json!({"op": "remove", "key": key, "name": leaf, "force": force}),
        CREATE,
    )
}

/// `list --json`'s document of each repository (by key) that has boxes on `m`, within
/// `limit`.
pub fn lists_there(m: &Machine, keys: &[String], limit: Duration) -> Result<Value, RemoteError> {
    ssh::call(m, &json!({"op": "lists", "keys": keys}), limit)
}
