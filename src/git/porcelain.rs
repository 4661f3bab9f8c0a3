//! Pure parsers of git's machine-readable output, tested on captured samples.

use std::path::PathBuf;

/// The key of the line that starts each entry of `git worktree list --porcelain`.
const ENTRY_KEY: &str = "worktree";

/// One entry of `git worktree list --porcelain -z`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WorktreeEntry {
    pub path: PathBuf,
    pub head: Option<String>,
    /// Full ref name, e.g. `refs/heads/feat/x`; `None` when detached.
    pub branch: Option<String>,
    pub bare: bool,
    pub detached: bool,
    pub locked: bool,
    pub prunable: bool,
}

/// Parse `git worktree list --porcelain -z`: NUL-terminated attribute lines, records
/// separated by an empty line (two NULs).
pub fn parse_worktree_list(out: &[u8]) -> Vec<WorktreeEntry> {
    let mut entries = Vec::new();
    let mut cur: Option<WorktreeEntry> = None;
    for field in out.split(|b| *b == 0) {
        if field.is_empty() {
            if let Some(e) = cur.take() {
                entries.push(e);
            }
            continue;
        }
        let s = String::from_utf8_lossy(field);
        let (key, value) = s.split_once(' ').unwrap_or((&s, ""));
        match key {
            // The porcelain keyword that opens an entry (not the git mode).
            k if k == ENTRY_KEY => {
                if let Some(e) = cur.take() {
                    entries.push(e);
                }
                cur = Some(WorktreeEntry {
                    path: PathBuf::from(value),
                    ..Default::default()
                });
            }
            _ => {
                let Some(e) = cur.as_mut() else { continue };
                match key {
                    "HEAD" => e.head = Some(value.to_string()),
                    "branch" => e.branch = Some(value.to_string()),
                    "bare" => e.bare = true,
                    "detached" => e.detached = true,
                    "locked" => e.locked = true,
                    "prunable" => e.prunable = true,
                    _ => {}
                }
            }
        }
    }
    if let Some(e) = cur {
        entries.push(e);
    }
    entries
}

/// Parse `git ls-remote --heads`: `<oid>\trefs/heads/<name>` lines → name → oid.
pub fn parse_ls_remote_heads(out: &str) -> std::collections::HashMap<String, git2::Oid> {
    out.lines()
        .filter_map(|l| {
            let (oid, name) = l.split_once('\t')?;
            let name = name.strip_prefix("refs/heads/")?;
            Some((name.to_string(), git2::Oid::from_str(oid.trim()).ok()?))
        })
        .collect()
}

/// Parse `git ls-remote --symref <remote> HEAD`: the branch of its
/// `ref: refs/heads/<name>\tHEAD` line (none for a detached or empty remote).
pub fn parse_ls_remote_head_symref(out: &str) -> Option<String> {
    out.lines().find_map(|l| {
        let (target, name) = l.strip_prefix("ref: ")?.split_once('\t')?;
        let branch = target.strip_prefix("refs/heads/")?;
        (name == "HEAD" && !branch.is_empty()).then(|| branch.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ls_remote() {
        let out = "9c44411c27dab97d493a1b81f7e6787532dc9e9a\trefs/heads/main\n\
                   1111111111111111111111111111111111111111\trefs/heads/feat/x\n\
                   2222222222222222222222222222222222222222\trefs/tags/v1\n";
        let h = parse_ls_remote_heads(out);
        assert_eq!(h.len(), 2);
        assert_eq!(h["feat/x"].to_string(), "1".repeat(40));
    }

    #[test]
    fn parses_the_head_symref_of_ls_remote() {
        let out = "ref: refs/heads/master\tHEAD\n\
                   9c44411c27dab97d493a1b81f7e6787532dc9e9a\tHEAD\n";
        assert_eq!(parse_ls_remote_head_symref(out).as_deref(), Some("master"));
        // Detached, or an empty remote: nothing named.
        assert_eq!(
            parse_ls_remote_head_symref("9c44411c27dab97d493a1b81f7e6787532dc9e9a\tHEAD\n"),
            None
        );
        assert_eq!(parse_ls_remote_head_symref(""), None);
        assert_eq!(
            parse_ls_remote_head_symref("ref: refs/tags/v1\tHEAD\n"),
            None
        );
    }

    #[test]
    fn parses_captured_sample() {
        let sample = b"worktree /tmp/gt/o\0HEAD 993962d7f3c1b7ba71eba98cfa45a83b6d4b53f2\0branch refs/heads/main\0\0worktree /tmp/gt/w\0HEAD 993962d7f3c1b7ba71eba98cfa45a83b6d4b53f2\0branch refs/heads/x\0\0worktree /tmp/gt/d\0HEAD 993962d7f3c1b7ba71eba98cfa45a83b6d4b53f2\0detached\0prunable gitdir file points to non-existent location\0\0";
        let e = parse_worktree_list(sample);
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].path, PathBuf::from("/tmp/gt/o"));
        assert_eq!(e[1].branch.as_deref(), Some("refs/heads/x"));
        assert!(e[2].detached && e[2].prunable && e[2].branch.is_none());
    }
}
