//! A laptop's boxes on another machine, from the laptop: making one there
//! ([`create_there`]) and listing them ([`list_there`]).
//!
//! Making one: that machine's treebox is asked what its mirror of this repository
//! holds (`heads`; a treebox of another protocol is refused there, as on every call); what the box needs and the mirror lacks
//! — `origin/<base>` as the laptop just fetched it — goes over as a pack of
//! exactly that ref, less what the mirror has (`seed`); then that machine's own
//! treebox makes the box in its clone of the mirror and starts the agent there
//! detached (`create`), answering `box_create`'s document. The laptop's config, hooks
//! and other refs never travel. The caller has fetched origin (the freshness rule).

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use super::{mirror, ssh, RemoteError};
use crate::config::Machine;
use crate::git::Repo;

/// How long a quick request may take (`hello`, `heads`, `list`).
pub const QUICK: Duration = Duration::from_secs(15);
/// How long a pack or bundle may take to travel and be taken in (either way).
pub const SEED: Duration = Duration::from_secs(600);
/// How long making the box there may take (its setup, an image build, the agent's start).
pub const CREATE: Duration = Duration::from_secs(1800);

/// What `create --on` asks of a machine.
#[derive(Debug, Clone)]
pub struct Create<'a> {
    pub machine: &'a Machine,
    pub repo: &'a Repo,
    /// Where the pack is written before it travels (the repository's state dir).
    pub scratch: &'a Path,
    pub name: &'a str,
    pub base: &'a str,
    pub isolation: Option<&'a str>,
    pub harness: Option<&'a str>,
    pub git_mode: Option<&'a str>,
    /// A container template of that machine's operator, by name.
    pub template: Option<&'a str>,
    /// An existing branch to check out (`--checkout`), sent as this repository has it.
    pub checkout: Option<&'a str>,
    /// The mirror's branches there, as the machine listed them just now (else they
    /// are asked for).
    pub heads: Option<&'a Value>,
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

/// Make the box there; its answer (`box_create`'s document, its paths that machine's)
/// and the commit its base was sent at (the box's start, which the laptop pins).
pub fn create_there(c: &Create) -> Result<(Value, String), RemoteError> {
    // The base's seed rides on the create request (one round trip less), unless the
    // machine fetches origin itself or a `--checkout` branch is sent too.
    let key = key_for(c.repo);
    let (tip, last) = if c.machine.fetch_origin || checkout_ref(c).is_some() {
        let (_, tip) = seed_there(c)?;
        (tip, None)
    } else {
        let origin_ref = format!("refs/remotes/origin/{}", c.base);
        let s = seed_for(c, &key, c.base, &origin_ref, true)?;
        (s.tip.clone(), Some(s))
    };
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
        ("template", c.template),
        ("checkout", c.checkout),
    ] {
        if let Some(v) = v {
            request[k] = Value::String(v.to_string());
        }
    }
    if let Some(a) = c.claude_answers {
        request["claudeProject"] = a.clone();
    }
    let answer = match &last {
        Some(s) => send(c, s, Some(request), CREATE)?,
        None => ssh::call(c.machine, &request, CREATE)?,
    };
    Ok((answer, tip))
}

/// Bring what a box of `c` needs to that machine: its mirror given what it lacks of
/// `origin/<base>` (a pack), and this repository's `.env` and `.worktreeinclude`
/// files. The repository's key there and the commit `origin/<base>` was sent at. (Its
/// first request, `heads`, is refused for a treebox of another protocol, as every
/// call is: no `hello` round trip first.)
pub fn seed_there(c: &Create) -> Result<(String, String), RemoteError> {
    let key = key_for(c.repo);
    let base_tip = if c.machine.fetch_origin {
        fetched_there(c, &key)?
    } else {
        let origin_ref = format!("refs/remotes/origin/{}", c.base);
        let s = seed_for(c, &key, c.base, &origin_ref, true)?;
        send(c, &s, None, QUICK)?;
        s.tip
    };
    // `--checkout`: that branch too, as this repository has it (its own, else origin's).
    let start = match checkout_ref(c) {
        Some((b, from)) => {
            let s = seed_for(c, &key, b, &from, false)?;
            send(c, &s, None, QUICK)?;
            s.tip
        }
        None => base_tip,
    };
    Ok((key, start))
}

/// The `--checkout` branch when it is not the base, and the ref it travels from: this
/// repository's own branch, else origin's.
fn checkout_ref<'a>(c: &Create<'a>) -> Option<(&'a str, String)> {
    let b = c.checkout.filter(|b| *b != c.base)?;
    let own = format!("refs/heads/{b}");
    Some(match c.repo.git.refname_to_id(&own) {
        Ok(_) => (b, own),
        Err(_) => (b, format!("refs/remotes/origin/{b}")),
    })
}

/// What giving the mirror one branch takes.
struct Seed {
    /// The `seed` request; `None` when the mirror has the commit and nothing else
    /// travels with it.
    request: Option<Value>,
    /// The pack of what the mirror lacks, to follow the request.
    bundle: Option<std::path::PathBuf>,
    /// The commit sent.
    tip: String,
}

/// Send `s` (on its own, or with `request` as `request`'s `seed`); the answer.
fn send(
    c: &Create,
    s: &Seed,
    request: Option<Value>,
    limit: std::time::Duration,
) -> Result<Value, RemoteError> {
    let request = match (request, &s.request) {
        (Some(mut r), Some(seed)) => {
            r["seed"] = seed.clone();
            r
        }
        (Some(r), None) => r,
        (None, Some(seed)) => seed.clone(),
        (None, None) => return Ok(Value::Null),
    };
    let limit = if s.bundle.is_some() {
        limit.max(SEED)
    } else {
        limit
    };
    let sent = ssh::call_with(c.machine, &request, s.bundle.as_deref(), limit);
    if let Some(b) = &s.bundle {
        let _ = std::fs::remove_file(b);
    }
    sent
}

/// What giving the mirror `branch` at this repository's `from` takes (a pack of
/// what it lacks, or the ref alone when it has the commit), with the laptop's files
/// when `files`.
fn seed_for(
    c: &Create,
    key: &str,
    branch: &str,
    from: &str,
    files: bool,
) -> Result<Seed, RemoteError> {
    let m = c.machine;
    let tip = c
        .repo
        .git
        .find_reference(from)
        .and_then(|r| r.peel_to_commit())
        .map(|c| c.id().to_string())
        .map_err(|_| RemoteError::Local {
            machine: m.name.clone(),
            what: format!("there is no `{branch}` here to send"),
        })?;
    let heads = match c.heads {
        Some(h) => json!({ "heads": h }),
        None => ssh::call(m, &json!({"op": "heads", "key": key}), QUICK)?,
    };
    let has = heads["heads"][branch].as_str() == Some(tip.as_str());
    let mut seed = json!({"op": "seed", "key": key, "branch": branch, "tip": tip, "ref": from});
    let with = files && (c.env_file.is_some() || !c.includes.is_empty());
    if files {
        with_files(&mut seed, c);
    }
    if has {
        return Ok(Seed {
            request: with.then_some(seed),
            bundle: None,
            tip,
        });
    }
    // The mirror's tips this repository has too: the pack leaves out what they reach.
    let known: Vec<git2::Oid> = heads["heads"]
        .as_object()
        .into_iter()
        .flat_map(|o| o.values())
        .filter_map(Value::as_str)
        .filter_map(|o| git2::Oid::from_str(o).ok().filter(|_| o.len() == 40))
        .filter(|o| c.repo.git.find_commit(*o).is_ok())
        .collect();
    let pack = c
        .scratch
        .join(format!("to-{}-{}.pack", m.name, std::process::id()));
    let local = |e: git2::Error| RemoteError::Local {
        machine: m.name.clone(),
        what: format!("could not pack `{branch}`: {}", e.message()),
    };
    let made = pack_of(&c.repo.git, &tip, &known).map_err(local)?;
    // Nothing the mirror lacks (its tip is an older one of ours, say): the ref alone
    // moves.
    let sent = match made {
        Some(bytes) => {
            std::fs::write(&pack, bytes).map_err(|e| RemoteError::Local {
                machine: m.name.clone(),
                what: format!("could not write {}: {e}", pack.display()),
            })?;
            Some(pack)
        }
        None => None,
    };
    Ok(Seed {
        request: Some(seed),
        bundle: sent,
        tip,
    })
}

/// A pack (libgit2's: whole, never thin) of `tip`'s history less what `known`
/// reaches; `None` when that is nothing.
fn pack_of(
    repo: &git2::Repository,
    tip: &str,
    known: &[git2::Oid],
) -> Result<Option<Vec<u8>>, git2::Error> {
    let mut walk = repo.revwalk()?;
    walk.push(git2::Oid::from_str(tip)?)?;
    for k in known {
        walk.hide(*k)?;
    }
    let mut pb = repo.packbuilder()?;
    pb.insert_walk(&mut walk)?;
    if pb.object_count() == 0 {
        return Ok(None);
    }
    let mut buf = git2::Buf::new();
    pb.write_buf(&mut buf)?;
    Ok(Some(buf.to_vec()))
}

/// `seed` with the laptop's `.env` (as hex: it need not be UTF-8) and the files
/// `.worktreeinclude` names, when there are any.
fn with_files(seed: &mut Value, c: &Create) {
    if let Some(bytes) = c.env_file {
        seed["dotenv"] = Value::String(hex::encode(bytes));
    }
    if !c.includes.is_empty() {
        let files: Vec<Value> = c
            .includes
            .iter()
            .map(|(path, mode, content)| {
                json!({
                    "path": path.to_string_lossy(),
                    "mode": mode,
                    "hex": hex::encode(content),
                })
            })
            .collect();
        seed["includes"] = Value::Array(files);
    }
}

/// [`seed_there`] for a machine that fetches origin itself (`"fetch": "origin"`): it
/// is given origin's URL as this repository has it, fetches `<base>` into its mirror,
/// and names the commit it got (which it may have got ahead of this repository).
fn fetched_there(c: &Create, key: &str) -> Result<String, RemoteError> {
    let m = c.machine;
    let url = c
        .repo
        .git
        .find_remote("origin")
        .ok()
        .and_then(|r| r.url().ok().map(str::to_string))
        .ok_or_else(|| RemoteError::Local {
            machine: m.name.clone(),
            what: "this repository has no origin for it to fetch".into(),
        })?;
    let mut seed = json!({"op": "seed", "key": key, "branch": c.base, "fetchFrom": url});
    with_files(&mut seed, c);
    let answer = ssh::call(m, &seed, SEED)?;
    answer["tip"]
        .as_str()
        .filter(|t| t.len() == 40 && t.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_string)
        .ok_or_else(|| RemoteError::Local {
            machine: m.name.clone(),
            what: format!("it fetched no `{}` from origin", c.base),
        })
}

/// `list --json`'s document of the boxes on `m` of the repository whose key is `key`
/// ([`key_for`]), within `limit` ([`QUICK`], or a listing's shorter deadline); with
/// which ports listen there when `ports`.
pub fn list_there(
    m: &Machine,
    key: &str,
    limit: Duration,
    ports: bool,
) -> Result<Value, RemoteError> {
    ssh::call(m, &json!({"op": "list", "key": key, "ports": ports}), limit)
}

/// Remove box `leaf` there, as `git sandbox down` does off a terminal (refused while
/// anything stands against it, unless `force`; its work counts as returned once it is
/// among `returned`, the commits this repository fetched back from it); `down
/// --json`'s document.
pub fn remove_there(
    m: &Machine,
    key: &str,
    leaf: &str,
    force: bool,
    returned: &[git2::Oid],
) -> Result<Value, RemoteError> {
    let returned: Vec<String> = returned.iter().map(git2::Oid::to_string).collect();
    ssh::call(
        m,
        &json!({"op": "remove", "key": key, "name": leaf, "force": force, "returned": returned}),
        CREATE,
    )
}

/// `list --json`'s document of each repository (by key) that has boxes on `m`, within
/// `limit`; with which ports listen there when `ports`.
pub fn lists_there(
    m: &Machine,
    keys: &[String],
    limit: Duration,
    ports: bool,
) -> Result<Value, RemoteError> {
    ssh::call(
        m,
        &json!({"op": "lists", "keys": keys, "ports": ports}),
        limit,
    )
}

/// Bring box `leaf`'s branch from `m` (the repository's key there: `key`) as a bundle
/// into the file `into` (at most [`MAX_BACK`] bytes), telling it the commits `haves`
/// this repository has: the document that came before it (its branch, tip, base and
/// state there, all unchecked). The bundle is checked by the caller
/// ([`crate::land::far::import`]) before anything reads it.
pub fn back_from(
    m: &Machine,
    key: &str,
    leaf: &str,
    haves: &[git2::Oid],
    into: &Path,
) -> Result<Value, RemoteError> {
    let haves: Vec<String> = haves.iter().map(git2::Oid::to_string).collect();
    let request = json!({"op": "back", "key": key, "name": leaf, "haves": haves});
    ssh::call_receiving(m, &request, SEED, into, MAX_BACK)
}

/// The largest bundle taken from a machine.
pub const MAX_BACK: u64 = mirror::MAX_BUNDLE;
