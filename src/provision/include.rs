//! `.worktreeinclude` (SPEC §10a): ignored files of the main checkout that the file's
//! patterns (gitignore syntax, at the repository's top) match are copied into each new
//! box, as `.env` is — the convention Claude Code uses for its own worktrees.
//!
//! Inert data: [`plan`] walks the main checkout without following a symlink (a linked
//! file or directory is never listed), never leaves it, skips what git tracks (the
//! checkout has it) and what git does not ignore, and leaves the top-level `.env` to
//! its own 0600 rule. [`copy`] writes each file at the same relative path in the box,
//! with its mode, never through a symlink in the box. Nothing is executed.

use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use crate::git::Repo;

/// The file of patterns, at the repository's top.
pub const FILE: &str = ".worktreeinclude";

/// At most this many directory entries are looked at.
const BUDGET: usize = 200_000;

/// The relative paths (sorted) of the main checkout's files `.worktreeinclude` brings
/// into a new box. Empty without the file.
pub fn plan(repo: &Repo) -> Vec<PathBuf> {
    let root = &repo.main_root;
    let list = root.join(FILE);
    if !std::fs::symlink_metadata(&list).is_ok_and(|m| m.is_file() && m.len() < 1 << 20) {
        return Vec::new();
    }
    let mut builder = ignore::gitignore::GitignoreBuilder::new(root);
    if builder.add(&list).is_some() {
        return Vec::new();
    }
    let Ok(include) = builder.build() else {
        return Vec::new();
    };
    if include.is_empty() {
        return Vec::new();
    }
    let tracked = |rel: &Path| {
        repo.git
            .status_file(rel)
            .is_ok_and(|s| !s.contains(git2::Status::WT_NEW) && !s.contains(git2::Status::IGNORED))
    };
    let ignored = |rel: &Path| repo.git.is_path_ignored(rel).unwrap_or(false);
    let mut out = Vec::new();
    let mut budget = BUDGET;
    let mut stack = vec![PathBuf::new()];
    while let Some(rel_dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(root.join(&rel_dir)) else {
            continue;
        };
        for e in rd.flatten() {
            budget = match budget.checked_sub(1) {
                Some(b) => b,
                None => return out,
            };
            let rel = rel_dir.join(e.file_name());
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_symlink() {
                continue;
            }
            if kind.is_dir() {
                let top = rel.components().count() == 1;
                if top && (rel == Path::new(".git") || rel == Path::new(".treebox")) {
                    continue;
                }
                // An ignored directory nothing includes (node_modules, target): never
                // walked. One that is included is walked whole.
                let included = include.matched_path_or_any_parents(&rel, true).is_ignore();
                if ignored(&rel) && !included {
                    continue;
                }
                stack.push(rel);
                continue;
            }
            if !kind.is_file() || rel == Path::new(".env") {
                continue;
            }
            if include.matched_path_or_any_parents(&rel, false).is_ignore()
                && ignored(&rel)
                && !tracked(&rel)
            {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// Copy the planned files from the main checkout into the box at `box_root`; returns
/// how many were copied. A file gone since planning is skipped quietly; one that
/// cannot be written is a warning.
pub fn copy(
    main_root: &Path,
    box_root: &Path,
    files: &[PathBuf],
    warnings: &mut Vec<String>,
) -> usize {
    let mut copied = 0;
    for rel in files {
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            continue;
        }
        let src = main_root.join(rel);
        let Ok(meta) = std::fs::symlink_metadata(&src) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let dst = box_root.join(rel);
        if let Err(e) = write_into_box(box_root, rel, &src, &dst, meta.permissions().mode()) {
            warnings.push(format!("{FILE}: {} not copied: {e}", rel.display()));
            continue;
        }
        copied += 1;
    }
    copied
}

/// Make the parents (refusing a symlink on the way: the box's checkout may track
/// one), then copy with the source's mode.
fn write_into_box(
    box_root: &Path,
    rel: &Path,
    src: &Path,
    dst: &Path,
    mode: u32,
) -> std::io::Result<()> {
    let mut dir = box_root.to_path_buf();
    if let Some(parent) = rel.parent() {
        for c in parent.components() {
            dir.push(c);
            match std::fs::symlink_metadata(&dir) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(std::io::Error::other(format!(
                        "{} is not a plain directory",
                        dir.display()
                    )))
                }
                Err(_) => std::fs::create_dir(&dir)?,
            }
        }
    }
    if std::fs::symlink_metadata(dst).is_ok_and(|m| !m.is_file()) {
        return Err(std::io::Error::other(format!(
            "{} exists and is not a file",
            dst.display()
        )));
    }
    std::fs::copy(src, dst)?;
    std::fs::set_permissions(dst, std::fs::Permissions::from_mode(mode & 0o7777))
}
