//! Claude Code's worktree hooks (SPEC §10a): treebox as the backend of
//! `claude --worktree` and of subagents with worktree isolation.
//!
//! Claude Code runs the `WorktreeCreate` hook with a JSON object on stdin and takes the
//! one line it prints as the worktree's path; `WorktreeRemove` gets the path back. The
//! payloads are read leniently — the field names its versions use (`worktree_name` or
//! `name`; `base_ref`), unknown fields ignored — and never trusted as paths: a name
//! becomes a box name by the usual rules (sanitized into a valid one when it is not),
//! and only a treebox box under a box root is ever removed.

use std::path::{Path, PathBuf};

use crate::names::{BoxName, Leaf, NameError};

/// The largest payload read.
pub const MAX_PAYLOAD: u64 = 1 << 20;

/// Why a payload was refused.
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    #[error("the hook's input is not a JSON object: {0}")]
    NotJson(String),
    #[error("the hook's input names no worktree (`worktree_name` or `name`)")]
    NoName,
    #[error("the hook's input names no worktree path (`worktree_path`)")]
    NoPath,
    #[error("`{0}` is not an absolute path")]
    Relative(String),
    #[error(transparent)]
    Name(#[from] NameError),
}

/// What `WorktreeCreate` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatePayload {
    /// The box name: the requested one, sanitized into a valid name when it is not.
    pub name: String,
    /// The repository the hook fired in (`cwd`), when given.
    pub cwd: Option<PathBuf>,
    /// A base branch (`base_ref`), when given.
    pub base: Option<String>,
}

fn object(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, PayloadError> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        Ok(_) => Err(PayloadError::NotJson("not an object".into())),
        Err(e) => Err(PayloadError::NotJson(e.to_string())),
    }
}

fn absolute(s: &str) -> Result<PathBuf, PayloadError> {
    let p = PathBuf::from(s);
    if p.is_absolute() {
        Ok(p)
    } else {
        Err(PayloadError::Relative(s.to_string()))
    }
}

/// Read a `WorktreeCreate` payload.
pub fn parse_create(text: &str) -> Result<CreatePayload, PayloadError> {
    let m = object(text)?;
    let str_of = |k: &str| m.get(k).and_then(|v| v.as_str()).filter(|s| !s.is_empty());
    let raw = str_of("worktree_name")
        .or_else(|| str_of("name"))
        .ok_or(PayloadError::NoName)?;
    let cwd = str_of("cwd").map(absolute).transpose()?;
    let base = str_of("base_ref").map(|b| {
        b.trim_start_matches("refs/heads/")
            .trim_start_matches("refs/remotes/")
            .trim_start_matches("origin/")
            .to_string()
    });
    Ok(CreatePayload {
        name: box_name(raw)?,
        cwd,
        base,
    })
}

/// A valid box name for what Claude Code asked: the name itself when valid, else its
/// segments with anything outside `[A-Za-z0-9._-]` replaced and `.`, `..` and empty
/// ones dropped — never a path.
pub fn box_name(raw: &str) -> Result<String, NameError> {
    if let Ok(n) = BoxName::parse(raw) {
        return Ok(n.as_str().to_string());
    }
    let clean = crate::names::clean_segments(raw);
    Ok(BoxName::parse(&clean.join("/"))?.as_str().to_string())
}

/// Read a `WorktreeRemove` payload: the worktree's absolute path.
pub fn parse_remove(text: &str) -> Result<PathBuf, PayloadError> {
    let m = object(text)?;
    let path = m
        .get("worktree_path")
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty())
        .ok_or(PayloadError::NoPath)?;
    absolute(path)
}

/// If `path` is a box directory (`<repo>/.treebox/worktrees/<leaf>`), the repository's
/// main checkout and the leaf. Lexical only: the caller checks the box exists.
pub fn box_of_path(path: &Path) -> Option<(PathBuf, Leaf)> {
    let leaf = Leaf::parse(&path.file_name()?.to_string_lossy()).ok()?;
    let root = path.parent()?;
    let dot = root.parent()?;
    if root.file_name()? != "worktrees" || dot.file_name()? != ".treebox" {
        return None;
    }
    Some((dot.parent()?.to_path_buf(), leaf))
}

/// The Claude Code settings that make treebox its worktree backend.
pub fn settings() -> serde_json::Value {
    let hook =
        |cmd: &str| serde_json::json!([{ "hooks": [{ "type": "command", "command": cmd }] }]);
    serde_json::json!({
        "hooks": {
            "WorktreeCreate": hook("git treebox claude-worktree create"),
            "WorktreeRemove": hook("git treebox claude-worktree remove"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_payloads_of_every_spelling() {
        let p = parse_create(r#"{"worktree_name":"feat-x","cwd":"/r","session_id":"s","x":1}"#)
            .unwrap();
        assert_eq!(p.name, "feat-x");
        assert_eq!(p.cwd.as_deref(), Some(Path::new("/r")));
        let p = parse_create(r#"{"name":"JIRA-1","base_ref":"origin/dev"}"#).unwrap();
        assert_eq!(
            (p.name.as_str(), p.base.as_deref()),
            ("JIRA-1", Some("dev"))
        );
        assert!(matches!(
            parse_create("garbage"),
            Err(PayloadError::NotJson(_))
        ));
        assert!(matches!(parse_create("[1]"), Err(PayloadError::NotJson(_))));
        assert!(matches!(parse_create("{}"), Err(PayloadError::NoName)));
        assert!(matches!(
            parse_create(r#"{"name":"x","cwd":"rel"}"#),
            Err(PayloadError::Relative(_))
        ));
    }

    #[test]
    fn names_never_become_paths() {
        assert_eq!(box_name("../../etc").unwrap(), "etc");
        assert_eq!(box_name("a b/c").unwrap(), "a-b/c");
        assert!(box_name("..").is_err());
        assert_eq!(box_name("/abs/x").unwrap(), "abs/x");
        assert!(box_name("treebox/x").is_err());
    }

    #[test]
    fn only_box_dirs_are_boxes() {
        let (repo, leaf) = box_of_path(Path::new("/r/.treebox/worktrees/fix")).unwrap();
        assert_eq!((repo.as_path(), leaf.as_str()), (Path::new("/r"), "fix"));
        assert!(box_of_path(Path::new("/r/src")).is_none());
        assert!(box_of_path(Path::new("/r/.claude/worktrees/fix")).is_none());
        assert!(box_of_path(Path::new("/r/.treebox/worktrees/..")).is_none());
    }
}
