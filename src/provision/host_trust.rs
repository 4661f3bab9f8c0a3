//! The trust a user gave the main checkout, carried to a host box (SPEC §7
//! "Unattended"): the agent comes up to its prompt, not to a trust screen.
//!
//! A host worktree box needs nothing: Claude Code and Codex both map a worktree to its
//! repository's main checkout. A host clone box is a repository of its own, so each
//! agent asks again. What is carried, and only when the user's own files have it:
//!
//! - **Claude Code**: the main checkout's project answers (the trust dialog and the
//!   repository's `.mcp.json` decisions, exactly what a container box's staged
//!   `.claude.json` gets: [`crate::runner::oci::claude_json::minimal`]) become the box
//!   path's entry in the user's live `~/.claude.json`. Claude Code rewrites that file
//!   whole (a temp file renamed over it) under a lock directory, `<file>.lock`
//!   (proper-lockfile: `mkdir`, stale after 10 s); treebox takes the same lock, so a
//!   running Claude neither loses this entry nor has its own write lost. The entry goes
//!   at teardown ([`forget_claude`]).
//! - **Codex**: `-c projects={"<box>"={trust_level="trusted"}}` on the agent's command
//!   line when the main checkout is `trusted` in the user's `config.toml`
//!   ([`codex_args`]); the user's file is not written. The same for every container
//!   box: its checkout is a clone, or a worktree of the box's own bare clone, never one
//!   Codex maps to the main checkout. (A dotted `-c
//!   projects."<path>".trust_level=…` is not honoured by Codex 0.163: the inline table
//!   is.)
//!
//! Nothing is approved on the user's behalf: no entry for a main checkout the user did
//! not trust, no MCP server the user did not enable.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use crate::harness::Harness;
use crate::vocab::{GitMode, RunnerKind};

/// Whether a box gets carried trust: a clone box on the host (a worktree maps to its
/// main checkout already; a container box gets its own staged files).
pub fn applies(runner: RunnerKind, git_mode: GitMode) -> bool {
    runner == RunnerKind::Host && git_mode == GitMode::Clone
}

/// The agent's arguments for box `box_path` of main checkout `main`: the carried trust
/// (Codex's `-c`: a host clone box, and every container box, whose checkout Codex
/// never maps to the main one), in a container Codex's providers that name this
/// machine pointed at the engine's name for it, then the user's own `extra`.
pub fn launch_extra(
    harness: Harness,
    runner: RunnerKind,
    git_mode: GitMode,
    main: &Path,
    box_path: &Path,
    extra: &[String],
) -> Vec<String> {
    let mut out = Vec::new();
    if harness == Harness::Codex {
        if let Some(engine) = crate::runner::oci::Engine::of(runner) {
            // The box's copy of the user's config is the user's own file.
            if let Some(config) = crate::runner::oci::credentials::user_codex_config() {
                out = codex_args(&config, main, box_path);
                let host = crate::runner::oci::host_url::host_name(engine);
                out.extend(crate::runner::oci::host_url::codex_args(&config, host));
            }
        } else if applies(runner, git_mode) {
            if let Some(config) = codex_config_path().and_then(|p| std::fs::read_to_string(p).ok())
            {
                out = codex_args(&config, main, box_path);
            }
        }
    }
    out.extend(extra.iter().cloned());
    out
}

/// What [`before_launch`] did and learned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BeforeLaunch {
    /// The trust could not be carried: the warning (the agent then asks, as it would
    /// without treebox).
    pub warning: Option<String>,
    /// Whether the user trusts the main checkout, when the user's file was read for
    /// the carrying already: [`will_ask`] then reads it no second time (Claude Code's
    /// `.claude.json` holds every project's history: it grows to tens of MB).
    pub main_trusted: Option<bool>,
}

/// Before `harness` starts in the box: carry Claude Code's trust into the user's live
/// config, reading it once, under its lock.
pub fn before_launch(
    harness: Harness,
    runner: RunnerKind,
    git_mode: GitMode,
    main: &Path,
    box_path: &Path,
) -> BeforeLaunch {
    if harness != Harness::Claude || !applies(runner, git_mode) {
        return BeforeLaunch::default();
    }
    let Some(file) = claude_config_path() else {
        return BeforeLaunch::default();
    };
    match carry_claude(&file, main, box_path) {
        Ok(carried) => BeforeLaunch {
            warning: None,
            main_trusted: Some(carried.main_trusted),
        },
        Err(e) => BeforeLaunch {
            warning: Some(format!("could not carry the main checkout's trust to the box ({e}); Claude Code will ask whether to trust it")),
            main_trusted: None,
        },
    }
}

/// The most of the user's agent config read to tell whether it trusts the main
/// checkout (Claude Code's `.claude.json` holds every project's history: it grows).
const MAX_USER_CONFIG: u64 = 64 << 20;

/// Before `harness` starts in any box of main checkout `main`: the warning that it will
/// stop at its trust question, with the step that fixes it, when the user has not
/// trusted the main checkout (no trust to carry: SPEC §7 "Unattended"). `known`: what
/// [`before_launch`] learned of it, if anything; else the user's file is read here,
/// keeping only that one answer ([`claude_trusts`]).
pub fn will_ask(harness: Harness, main: &Path, known: Option<bool>) -> Option<String> {
    use crate::untrusted::{read_regular, Links};
    let main_s = main.to_string_lossy();
    let (trusted, program) = match harness {
        Harness::Claude => {
            let trusted = known.unwrap_or_else(|| {
                claude_config_path()
                    .and_then(|f| read_regular(&f, MAX_USER_CONFIG, Links::Follow).ok())
                    .is_some_and(|raw| claude_trusts(&raw, &main_s))
            });
            (trusted, "claude")
        }
        Harness::Codex => {
            let raw = codex_config_path()
                .and_then(|f| read_regular(&f, MAX_USER_CONFIG, Links::Follow).ok());
            let trusted = raw.is_some_and(|r| codex_trusts(&String::from_utf8_lossy(&r), &main_s));
            (trusted, "codex")
        }
    };
    (!trusted).then(|| {
        format!(
            "{program} will ask whether to trust the box and wait for an answer: you have not trusted the main checkout, so there is no trust to carry (run `{program}` once in {} and trust it)",
            crate::cmd::quote(&main_s)
        )
    })
}

/// Whether Claude Code's config `raw` says `projects[main].hasTrustDialogAccepted` is
/// `true`. Only that one value is kept: every other project, and its history, is
/// skipped as it is scanned, never built into a document.
pub fn claude_trusts(raw: &[u8], main: &str) -> bool {
    crate::untrusted::json_at(raw, &["projects", main, "hasTrustDialogAccepted"])
        == Some(Value::Bool(true))
}

/// At teardown of a clone box at `box_path`: its entry in Claude Code's live config
/// goes with it. Best effort (a stale entry names a directory that is gone).
pub fn after_teardown(box_path: &Path) {
    if let Some(file) = claude_config_path() {
        let _ = forget_claude(&file, box_path);
    }
}

/// Claude Code's global config: `$CLAUDE_CONFIG_DIR/.claude.json`, else
/// `~/.claude.json`.
pub fn claude_config_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join(".claude.json"));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".claude.json"))
}

/// Codex's config: `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`.
pub fn codex_config_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("config.toml"));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".codex/config.toml"))
}

/// Why the live file could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("{path} stayed locked by another program for {secs} s", path = .0.display(), secs = LOCK_WAIT.as_secs())]
    Locked(PathBuf),
    #[error("could not update {path}: {source}", path = .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// How long treebox waits for a Claude process to let go of the lock.
const LOCK_WAIT: Duration = Duration::from_secs(15);
/// proper-lockfile's default `stale`: a lock directory untouched this long belongs to
/// a process that died holding it.
const STALE: Duration = Duration::from_secs(10);

/// Claude Code's lock on its config (`<file>.lock`, a directory), held while treebox
/// reads, merges and replaces the file.
struct ConfigLock {
    dir: PathBuf,
}

impl ConfigLock {
    fn acquire(file: &Path) -> Result<ConfigLock, TrustError> {
        let mut dir = file.as_os_str().to_owned();
        dir.push(".lock");
        let dir = PathBuf::from(dir);
        let since = Instant::now();
        loop {
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(ConfigLock { dir }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let stale = std::fs::symlink_metadata(&dir)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| SystemTime::now().duration_since(t).ok())
                        .is_some_and(|age| age > STALE);
                    if stale {
                        // As proper-lockfile does: the holder died; take it over.
                        let _ = std::fs::remove_dir(&dir);
                        continue;
                    }
                    if since.elapsed() > LOCK_WAIT {
                        return Err(TrustError::Locked(file.to_path_buf()));
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(source) => {
                    return Err(TrustError::Io {
                        path: dir.clone(),
                        source,
                    })
                }
            }
        }
    }
}

impl Drop for ConfigLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Read `file` (a JSON object), let `change` edit it, and replace the file when it
/// says it changed something — all under Claude Code's lock. `Ok(false)`: nothing
/// written (no file, not an object, or nothing to change).
fn edit_claude_config(
    file: &Path,
    change: impl FnOnce(&mut serde_json::Map<String, Value>) -> bool,
) -> Result<bool, TrustError> {
    if std::fs::symlink_metadata(file).is_err() {
        return Ok(false);
    }
    let _lock = ConfigLock::acquire(file)?;
    // A dotfile manager's symlink stays one: the file it points at is replaced.
    let target = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    let io = |source| TrustError::Io {
        path: target.clone(),
        source,
    };
    let raw = match std::fs::read(&target) {
        Ok(raw) => raw,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io(e)),
    };
    let Ok(Value::Object(mut doc)) = serde_json::from_slice::<Value>(&raw) else {
        return Ok(false);
    };
    if !change(&mut doc) {
        return Ok(false);
    }
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(&target)
            .map(|m| m.permissions().mode() & 0o7777)
            .unwrap_or(0o600)
    };
    let data = serde_json::to_vec_pretty(&Value::Object(doc)).expect("JSON serializes");
    crate::state::atomic::write(&target, &data, mode).map_err(io)?;
    Ok(true)
}

/// The main checkout's answers as the box's project entry (what a container box's
/// staged file carries: [`crate::runner::oci::claude_json::PROJECT_KEYS`]): `None` when
/// the user gave the main checkout none (never trusted it, decided nothing about its
/// `.mcp.json`).
fn carried_entry(user: &serde_json::Map<String, Value>, main: &Path) -> Option<Value> {
    let project = user
        .get("projects")?
        .get(main.to_string_lossy().as_ref())?
        .as_object()?;
    let carried: serde_json::Map<String, Value> = crate::runner::oci::claude_json::PROJECT_KEYS
        .iter()
        .filter_map(|k| Some((k.to_string(), project.get(*k)?.clone())))
        .collect();
    (!carried.is_empty()).then_some(Value::Object(carried))
}

/// What [`carry_claude`] saw and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Carried {
    /// The file was changed.
    pub changed: bool,
    /// The user trusts the main checkout (its `hasTrustDialogAccepted` is `true`).
    pub main_trusted: bool,
}

/// Carry the trust the user gave `main` to `box_path` in Claude Code's live config
/// `file`.
pub fn carry_claude(file: &Path, main: &Path, box_path: &Path) -> Result<Carried, TrustError> {
    let mut main_trusted = false;
    let changed = edit_claude_config(file, |doc| {
        main_trusted = doc
            .get("projects")
            .and_then(|p| p.get(main.to_string_lossy().as_ref()))
            .and_then(|e| e.get("hasTrustDialogAccepted"))
            == Some(&Value::Bool(true));
        let Some(Value::Object(carried)) = carried_entry(doc, main) else {
            return false;
        };
        let projects = doc
            .entry("projects")
            .or_insert_with(|| Value::Object(Default::default()));
        if !projects.is_object() {
            return false;
        }
        let entry = projects
            .as_object_mut()
            .expect("checked")
            .entry(box_path.to_string_lossy().into_owned())
            .or_insert_with(|| Value::Object(Default::default()));
        if !entry.is_object() {
            *entry = Value::Object(Default::default());
        }
        let entry = entry.as_object_mut().expect("made an object");
        let mut changed = false;
        for (k, v) in carried {
            if entry.get(&k) != Some(&v) {
                entry.insert(k, v);
                changed = true;
            }
        }
        changed
    })?;
    Ok(Carried {
        changed,
        main_trusted,
    })
}

/// The answers the user gave `main` in Claude Code's config `file` that a box carries
/// (the keys [`carried_entry`] takes), when the user trusts it: what `create --on`
/// sends so that the other machine's Claude Code trusts the clone its boxes are made
/// from (issue 41). Only the picked keys of that one entry are read.
pub fn claude_answers(file: &Path, main: &Path) -> Option<Value> {
    use crate::runner::oci::claude_json::PROJECT_KEYS;
    use crate::untrusted::{read_regular, Links};
    let raw = read_regular(file, MAX_USER_CONFIG, Links::Follow).ok()?;
    let main = main.to_string_lossy();
    let paths: Vec<[&str; 3]> = PROJECT_KEYS
        .iter()
        .map(|k| ["projects", main.as_ref(), *k])
        .collect();
    let paths: Vec<&[&str]> = paths.iter().map(|p| p.as_slice()).collect();
    let picked = crate::untrusted::json_pick(&raw, &paths)?;
    let answers: serde_json::Map<String, Value> = PROJECT_KEYS
        .iter()
        .zip(picked)
        .filter_map(|(k, v)| Some((k.to_string(), v?)))
        .collect();
    (answers.get("hasTrustDialogAccepted") == Some(&Value::Bool(true)))
        .then_some(Value::Object(answers))
}

/// Give `path` the answers another machine's user gave their main checkout
/// ([`claude_answers`]; only the keys a box carries are taken) in Claude Code's live
/// config `file`, under its lock. `Ok(true)` when the file changed.
pub fn set_claude_answers(file: &Path, path: &Path, answers: &Value) -> Result<bool, TrustError> {
    let taken: serde_json::Map<String, Value> = crate::runner::oci::claude_json::PROJECT_KEYS
        .iter()
        .filter_map(|k| Some((k.to_string(), answers.get(*k)?.clone())))
        .collect();
    if taken.is_empty() {
        return Ok(false);
    }
    edit_claude_config(file, |doc| {
        let projects = doc
            .entry("projects")
            .or_insert_with(|| Value::Object(Default::default()));
        let Some(projects) = projects.as_object_mut() else {
            return false;
        };
        let entry = projects
            .entry(path.to_string_lossy().into_owned())
            .or_insert_with(|| Value::Object(Default::default()));
        if !entry.is_object() {
            *entry = Value::Object(Default::default());
        }
        let entry = entry.as_object_mut().expect("made an object");
        let mut changed = false;
        for (k, v) in &taken {
            if entry.get(k) != Some(v) {
                entry.insert(k.clone(), v.clone());
                changed = true;
            }
        }
        changed
    })
}

/// Remove `box_path`'s project entry from Claude Code's live config `file` (the box
/// is gone: what Claude Code kept for it, and the trust treebox carried, go with it).
/// `Ok(true)` when there was one.
pub fn forget_claude(file: &Path, box_path: &Path) -> Result<bool, TrustError> {
    edit_claude_config(file, |doc| {
        doc.get_mut("projects")
            .and_then(Value::as_object_mut)
            .is_some_and(|p| p.remove(box_path.to_string_lossy().as_ref()).is_some())
    })
}

/// Codex's `-c` arguments that trust `box_path`, when `config` (the user's
/// `config.toml`) trusts `main`; none otherwise.
pub fn codex_args(config: &str, main: &Path, box_path: &Path) -> Vec<String> {
    if !codex_trusts(config, &main.to_string_lossy()) {
        return Vec::new();
    }
    let key = serde_json::to_string(&box_path.to_string_lossy()).expect("a string serializes");
    vec![
        "-c".into(),
        format!("projects={{{key}={{trust_level=\"trusted\"}}}}"),
    ]
}

/// Whether Codex's `config.toml` says `trust_level = "trusted"` for project `path`
/// (a `[projects."<path>"]` table or an inline one under `[projects]`: TOML says they are
/// the same). A file that is not TOML trusts nothing.
fn codex_trusts(config: &str, path: &str) -> bool {
    let Ok(doc) = config.parse::<toml::Table>() else {
        return false;
    };
    doc.get("projects")
        .and_then(|p| p.get(path))
        .and_then(|e| e.get("trust_level"))
        .and_then(toml::Value::as_str)
        == Some("trusted")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user_file(dir: &Path, json: Value) -> PathBuf {
        let p = dir.join(".claude.json");
        std::fs::write(&p, json.to_string()).unwrap();
        p
    }

    fn read(p: &Path) -> Value {
        serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
    }

    #[test]
    fn claude_trust_is_carried_then_forgotten_and_the_rest_is_kept() {
        let d = tempfile::tempdir().unwrap();
        let f = user_file(
            d.path(),
            serde_json::json!({
                "numStartups": 7,
                "projects": {
                    "/src/repo": {
                        "hasTrustDialogAccepted": true,
                        "enabledMcpjsonServers": ["db"],
                        "history": [{"display": "private"}]
                    },
                    "/src/other": {"hasTrustDialogAccepted": true}
                }
            }),
        );
        let bx = Path::new("/src/repo/.treebox/worktrees/b");
        assert!(
            carry_claude(&f, Path::new("/src/repo"), bx)
                .unwrap()
                .changed
        );
        let v = read(&f);
        let e = &v["projects"]["/src/repo/.treebox/worktrees/b"];
        assert_eq!(e["hasTrustDialogAccepted"], true);
        assert_eq!(e["enabledMcpjsonServers"], serde_json::json!(["db"]));
        assert!(e.get("history").is_none(), "{v:#}");
        assert_eq!(v["numStartups"], 7);
        assert_eq!(v["projects"]["/src/other"]["hasTrustDialogAccepted"], true);
        // Again: nothing new to write.
        assert!(
            !carry_claude(&f, Path::new("/src/repo"), bx)
                .unwrap()
                .changed
        );
        assert!(!Path::new(&format!("{}.lock", f.display())).exists());
        assert!(forget_claude(&f, bx).unwrap());
        let v = read(&f);
        assert!(v["projects"].get(bx.to_string_lossy().as_ref()).is_none());
        assert_eq!(v["projects"]["/src/repo"]["hasTrustDialogAccepted"], true);
        assert!(!forget_claude(&f, bx).unwrap());
    }

    #[test]
    fn claude_trust_never_given_is_never_carried() {
        let d = tempfile::tempdir().unwrap();
        let f = user_file(
            d.path(),
            serde_json::json!({"projects": {"/src/repo": {"history": []}}}),
        );
        let before = std::fs::read(&f).unwrap();
        assert!(
            !carry_claude(&f, Path::new("/src/repo"), Path::new("/b"))
                .unwrap()
                .changed
        );
        assert_eq!(std::fs::read(&f).unwrap(), before);
        // No file, or not an object: nothing written.
        let none = d.path().join("absent.json");
        assert!(
            !carry_claude(&none, Path::new("/src/repo"), Path::new("/b"))
                .unwrap()
                .changed
        );
        assert!(!none.exists());
        std::fs::write(&f, "[1]").unwrap();
        assert!(
            !carry_claude(&f, Path::new("/src/repo"), Path::new("/b"))
                .unwrap()
                .changed
        );
    }

    #[test]
    fn the_lock_of_a_running_claude_is_waited_for_and_a_stale_one_taken_over() {
        let d = tempfile::tempdir().unwrap();
        let f = user_file(
            d.path(),
            serde_json::json!({"projects": {"/r": {"hasTrustDialogAccepted": true}}}),
        );
        let lock = d.path().join(".claude.json.lock");
        std::fs::create_dir(&lock).unwrap();
        let released = {
            let lock = lock.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                std::fs::remove_dir(&lock).unwrap();
            })
        };
        let since = Instant::now();
        assert!(
            carry_claude(&f, Path::new("/r"), Path::new("/b"))
                .unwrap()
                .changed
        );
        assert!(since.elapsed() >= Duration::from_millis(250));
        released.join().unwrap();
        // A lock left by a process that died: older than proper-lockfile's `stale`.
        std::fs::create_dir(&lock).unwrap();
        let old = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::open(&lock)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert!(forget_claude(&f, Path::new("/b")).unwrap());
        assert!(!lock.exists());
    }

    #[test]
    fn claude_trust_is_read_without_building_the_document() {
        let yes = br#"{"numStartups": 3, "projects": {"/o": {"history": [{"display": "x\u00e9"}], "hasTrustDialogAccepted": false}, "/src/repo": {"history": [1, [2, {"a": null}]], "hasTrustDialogAccepted": true}}, "tail": [true]}"#;
        assert!(claude_trusts(yes, "/src/repo"));
        assert!(!claude_trusts(yes, "/o"));
        assert!(!claude_trusts(yes, "/absent"));
        for no in [
            &br#"{"projects": {"/src/repo": {"hasTrustDialogAccepted": "true"}}}"#[..],
            br#"{"projects": {"/src/repo": true}}"#,
            br#"{"projects": []}"#,
            br#"[{"projects": {"/src/repo": {"hasTrustDialogAccepted": true}}}]"#,
            br#"{"projects": {"/src/repo": {"hasTrustDialogAccepted": true}}} trailing"#,
            br#"{"projects": {"/src/repo": {"hasTrustDialogAccepted": true}"#,
            b"",
        ] {
            assert!(
                !claude_trusts(no, "/src/repo"),
                "{}",
                String::from_utf8_lossy(no)
            );
        }
        // As the document's own reading says, for a key written with escapes too.
        let escaped = br#"{"projects": {"\/src\/repo": {"hasTrustDialogAccepted": true}}}"#;
        assert!(claude_trusts(escaped, "/src/repo"));
    }

    #[test]
    fn codex_trust_is_carried_only_from_a_trusted_main_checkout() {
        let main = Path::new("/src/my repo");
        let bx = Path::new("/src/my repo/.treebox/worktrees/b");
        let want = vec![
            "-c".to_string(),
            r#"projects={"/src/my repo/.treebox/worktrees/b"={trust_level="trusted"}}"#.to_string(),
        ];
        let table = "model = \"x\"\n\n[projects.\"/src/my repo\"]\ntrust_level = \"trusted\"\n\n[tui]\nx = 1\n";
        assert_eq!(codex_args(table, main, bx), want);
        let inline = "[projects]\n\"/src/my repo\" = { trust_level = \"trusted\" }\n";
        assert_eq!(codex_args(inline, main, bx), want);
        let literal = "[projects.'/src/my repo']\ntrust_level = 'trusted' # yes\n";
        assert_eq!(codex_args(literal, main, bx), want);
        for untrusted in [
            "",
            "[projects.\"/src/my repo\"]\ntrust_level = \"untrusted\"\n",
            "[projects.\"/src/other\"]\ntrust_level = \"trusted\"\n",
            "[projects.\"/src/my repo\"]\n[tui]\ntrust_level = \"trusted\"\n",
            "[projects.\"/src/my repo/sub\"]\ntrust_level = \"trusted\"\n",
        ] {
            assert!(codex_args(untrusted, main, bx).is_empty(), "{untrusted}");
        }
        let quoted = "[projects.\"/a\\\"b\"]\ntrust_level = \"trusted\"\n";
        assert_eq!(
            codex_args(quoted, Path::new("/a\"b"), Path::new("/a\"b/c"))[1],
            r#"projects={"/a\"b/c"={trust_level="trusted"}}"#
        );
    }

    /// What `create --on` carries: the trusted main checkout's answers, read back and
    /// given to another path under the lock; nothing for a main checkout not trusted.
    #[test]
    fn answers_travel_to_another_path_only_when_trusted() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join(".claude.json");
        std::fs::write(
            &file,
            r#"{"projects": {"/src/p": {"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["x"], "history": [1]},
                             "/src/q": {"hasTrustDialogAccepted": false}}}"#,
        )
        .unwrap();
        let a = claude_answers(&file, Path::new("/src/p")).unwrap();
        assert_eq!(
            a,
            serde_json::json!({"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["x"]})
        );
        assert_eq!(claude_answers(&file, Path::new("/src/q")), None);
        assert_eq!(claude_answers(&file, Path::new("/src/r")), None);
        let there = d.path().join("there.json");
        std::fs::write(&there, "{}").unwrap();
        assert!(set_claude_answers(&there, Path::new("/m/repo"), &a).unwrap());
        let v: Value = serde_json::from_slice(&std::fs::read(&there).unwrap()).unwrap();
        assert_eq!(v["projects"]["/m/repo"], a);
        assert!(!set_claude_answers(&there, Path::new("/m/repo"), &a).unwrap());
    }
}
