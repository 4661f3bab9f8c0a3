//! An imported dev container's own image build (`build`): its Dockerfile and the context
//! files it reads, resolved inside the repository and taken from the import's commit.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{shown, Plan};

/// A dev container's `build`, its paths resolved in the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseRequest {
    /// The Dockerfile's path in the repository.
    pub dockerfile: String,
    /// The context's path in the repository (`""`: its root).
    pub context: String,
    pub args: BTreeMap<String, String>,
}

/// Where an imported build's Dockerfile and context live in the template.
pub const BASE_DOCKERFILE: &str = "base.Dockerfile";
pub const BASE_CONTEXT: &str = "base";

/// `build`: its Dockerfile, context (both relative to the file's directory, inside the
/// repository) and literal args.
pub(super) fn build(p: &mut Plan, path: &str, value: &Value) {
    let Some(b) = value.as_object() else {
        p.refused.push(("build".into(), "must be an object".into()));
        return;
    };
    let dir = std::path::Path::new(path)
        .parent()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut ok = true;
    let mut resolve = |p: &mut Plan, key: &str, rel: Option<&Value>, default: &str| {
        let rel = match rel {
            None => default.to_string(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => {
                p.refused
                    .push((format!("build.{key}"), "must be a string".into()));
                ok = false;
                return String::new();
            }
        };
        match inside(&dir, &rel) {
            Some(r) => r,
            None => {
                p.refused.push((
                    format!("build.{key}"),
                    format!(
                        "`{}` is outside the repository: only its own files are read",
                        shown(&rel)
                    ),
                ));
                ok = false;
                String::new()
            }
        }
    };
    let dockerfile = resolve(p, "dockerfile", b.get("dockerfile"), "");
    let context = resolve(p, "context", b.get("context"), ".");
    if b.get("dockerfile").is_none() {
        p.refused
            .push(("build.dockerfile".into(), "is missing".into()));
        ok = false;
    }
    let mut args = BTreeMap::new();
    for (k, v) in b {
        match k.as_str() {
            "dockerfile" | "context" => {}
            "args" => match v.as_object() {
                Some(m) => {
                    for (name, v) in m {
                        let at = format!("build.args.{}", shown(name));
                        match v.as_str() {
                            Some(s) if s.contains("${localEnv:") => {
                                p.refused.push((at, "names a variable of the host (`${localEnv:…}`): build arguments stay readable in the image, and secrets never go in one".into()));
                                ok = false;
                            }
                            Some(s) if s.contains("${") => {
                                p.refused.push((
                                    at,
                                    "treebox does not expand `${…}` in a value: write it out"
                                        .into(),
                                ));
                                ok = false;
                            }
                            Some(s) => {
                                args.insert(name.clone(), s.to_string());
                            }
                            None => {
                                p.refused.push((at, "must be a string".into()));
                                ok = false;
                            }
                        }
                    }
                }
                None => {
                    p.refused
                        .push(("build.args".into(), "must be an object of strings".into()));
                    ok = false;
                }
            },
            "target" | "cacheFrom" | "options" => {
                p.refused.push((
                    format!("build.{k}"),
                    "the build's engine options are treebox's".into(),
                ));
                ok = false;
            }
            other => p.unused.push((
                format!("build.{}", shown(other)),
                "not a key treebox knows".into(),
            )),
        }
    }
    if ok {
        p.mapped.push((
            "build".into(),
            format!(
                "the base image, built first from `{dockerfile}` (context `{}`{}); treebox's template on top",
                if context.is_empty() { "." } else { &context },
                match args.len() {
                    0 => String::new(),
                    _ => format!(", args {}", args.keys().map(|k| shown(k)).collect::<Vec<_>>().join(", ")),
                }
            ),
        ));
        p.base = Some(BaseRequest {
            dockerfile,
            context,
            args,
        });
    }
}

/// `rel` resolved against the repository directory `dir`, without leaving the
/// repository: its path from the root (`""` for the root), or `None`.
fn inside(dir: &str, rel: &str) -> Option<String> {
    if rel.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// The files an imported build needs, from commit `commit` of `repo`: its Dockerfile
/// (as [`BASE_DOCKERFILE`]) and the files of its context that its `COPY` and `ADD`
/// lines name (under [`BASE_CONTEXT`]; all of the context when one names `.` or a
/// pattern), each (template path, bytes, mode). Refused (why) past the template's caps
/// or with a link among them.
pub fn base_files(
    repo: &git2::Repository,
    commit: git2::Oid,
    b: &BaseRequest,
) -> Result<Vec<(String, Vec<u8>, u32)>, String> {
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(|e| e.to_string())?;
    let dockerfile = tree
        .get_path(std::path::Path::new(&b.dockerfile))
        .map_err(|_| format!("`{}` is not committed", b.dockerfile))?;
    let blob = repo
        .find_blob(dockerfile.id())
        .map_err(|_| format!("`{}` is not a file", b.dockerfile))?;
    if blob.size() as u64 > crate::template::MAX_FILE_BYTES {
        return Err(format!(
            "`{}` is over {} bytes",
            b.dockerfile,
            crate::template::MAX_FILE_BYTES
        ));
    }
    let mut out = vec![(BASE_DOCKERFILE.to_string(), blob.content().to_vec(), 0o644)];
    let context = match b.context.as_str() {
        "" => tree.clone(),
        c => tree
            .get_path(std::path::Path::new(c))
            .ok()
            .and_then(|e| e.to_object(repo).ok()?.into_tree().ok())
            .ok_or_else(|| format!("the context `{c}` is not a committed directory"))?,
    };
    let wanted = copied_sources(blob.content());
    let mut total = out[0].1.len() as u64;
    let mut problem = None;
    context
        .walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            let rel = format!("{dir}{}", entry.name().unwrap_or(""));
            if entry.kind() == Some(git2::ObjectType::Tree) {
                // Only into directories that hold, or are within, a path it copies: a
                // large repository is not read whole for one `COPY` of a file.
                let inside = |s: &String| {
                    *s == rel || s.starts_with(&format!("{rel}/")) || rel.starts_with(&format!("{s}/"))
                };
                return match &wanted {
                    Some(w) if !w.iter().any(inside) => git2::TreeWalkResult::Skip,
                    _ => git2::TreeWalkResult::Ok,
                };
            }
            if entry.kind() != Some(git2::ObjectType::Blob) {
                return git2::TreeWalkResult::Ok;
            }
            let needed = match &wanted {
                None => true,
                Some(w) => w.iter().any(|s| rel == *s || rel.starts_with(&format!("{s}/"))),
            };
            if !needed {
                return git2::TreeWalkResult::Ok;
            }
            let mode = match entry.filemode() {
                0o100755 => 0o755,
                0o100644 => 0o644,
                _ => {
                    problem = Some(format!("`{rel}` in the context is a link: only files are copied"));
                    return git2::TreeWalkResult::Abort;
                }
            };
            let Ok(bytes) = repo.find_blob(entry.id()).map(|b| b.content().to_vec()) else {
                return git2::TreeWalkResult::Ok;
            };
            total += bytes.len() as u64;
            if bytes.len() as u64 > crate::template::MAX_FILE_BYTES
                || total > crate::template::MAX_TOTAL_BYTES / 2
                || out.len() >= crate::template::MAX_FILES / 2
            {
                problem = Some(format!(
                    "the context the Dockerfile needs is over the template's cap ({} files, {} MiB; a file at most {} MiB): narrow `build.context`, or build the image yourself and name it in `image`",
                    crate::template::MAX_FILES / 2,
                    crate::template::MAX_TOTAL_BYTES / 2 / (1 << 20),
                    crate::template::MAX_FILE_BYTES / (1 << 20)
                ));
                return git2::TreeWalkResult::Abort;
            }
            out.push((format!("{BASE_CONTEXT}/{rel}"), bytes, mode));
            git2::TreeWalkResult::Ok
        })
        .ok();
    match problem {
        Some(p) => Err(p),
        None => Ok(out),
    }
}

/// The context paths a Dockerfile's `COPY` and `ADD` lines read (not those from another
/// stage or image, `--from`); `None` when one names the whole context (`.`) or a
/// pattern, and then all of it is needed.
pub(super) fn copied_sources(dockerfile: &[u8]) -> Option<Vec<String>> {
    let text = String::from_utf8_lossy(dockerfile);
    let joined = text.replace("\\\n", " ");
    let mut out = Vec::new();
    for line in joined.lines() {
        let mut words = line.split_whitespace();
        let Some(op) = words.next() else { continue };
        if !op.eq_ignore_ascii_case("COPY") && !op.eq_ignore_ascii_case("ADD") {
            continue;
        }
        let rest: Vec<&str> = words.collect();
        if rest.iter().any(|w| w.starts_with("--from")) {
            continue;
        }
        let args: Vec<String> = match rest.iter().find(|w| !w.starts_with("--")) {
            Some(first) if first.starts_with('[') => {
                let json = rest
                    .iter()
                    .skip_while(|w| w.starts_with("--"))
                    .copied()
                    .collect::<Vec<_>>()
                    .join(" ");
                serde_json::from_str::<Vec<String>>(&json).ok()?
            }
            _ => rest
                .iter()
                .filter(|w| !w.starts_with("--"))
                .map(|w| w.to_string())
                .collect(),
        };
        if args.iter().any(|a| a.starts_with("<<")) {
            continue;
        }
        let Some((_, sources)) = args.split_last() else {
            continue;
        };
        for s in sources {
            if s.contains("://") {
                continue;
            }
            let s = s.trim_start_matches("./").trim_end_matches('/');
            if s.is_empty() || s == "." || s.contains(['*', '?', '[']) || s.contains("..") {
                return None;
            }
            out.push(s.to_string());
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A commit of `files` (path, text) in a new repository.
    fn committed(files: &[(&str, &str)]) -> (tempfile::TempDir, git2::Repository, git2::Oid) {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let mut index = repo.index().unwrap();
        for (path, text) in files {
            let id = repo.blob(text.as_bytes()).unwrap();
            let mut e = git2::IndexEntry {
                ctime: git2::IndexTime::new(0, 0),
                mtime: git2::IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode: 0o100644,
                uid: 0,
                gid: 0,
                file_size: text.len() as u32,
                id,
                flags: 0,
                flags_extended: 0,
                path: path.as_bytes().to_vec(),
            };
            e.flags = (path.len() as u16) & 0xfff;
            index.add(&e).unwrap();
        }
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
        let oid = repo.commit(None, &sig, &sig, "c", &tree, &[]).unwrap();
        drop(tree);
        (dir, repo, oid)
    }

    #[test]
    fn the_files_its_copy_lines_name_and_nothing_else() {
        let (_d, repo, oid) = committed(&[
            (
                "Dockerfile",
                "FROM x\nCOPY requirements.txt /r\nCOPY tools/bin /t\nCOPY deep/a/b/c.txt /c\n",
            ),
            ("requirements.txt", "pytest\n"),
            ("tools/bin/run", "#!/bin/sh\n"),
            ("tools/bin/more/x", "x\n"),
            ("tools/other", "not needed\n"),
            ("deep/a/b/c.txt", "c\n"),
            ("deep/a/b/d.txt", "not needed\n"),
            ("deep/z/e.txt", "not needed\n"),
            ("src/lib/m.rs", "not needed\n"),
        ]);
        let b = BaseRequest {
            dockerfile: "Dockerfile".into(),
            context: String::new(),
            args: BTreeMap::new(),
        };
        let mut got: Vec<String> = base_files(&repo, oid, &b)
            .unwrap()
            .into_iter()
            .map(|(p, _, _)| p)
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                "base.Dockerfile",
                "base/deep/a/b/c.txt",
                "base/requirements.txt",
                "base/tools/bin/more/x",
                "base/tools/bin/run",
            ]
        );
        // `COPY .`: all of it.
        let (_d, repo, oid) = committed(&[("Dockerfile", "FROM x\nCOPY . /w\n"), ("a/b", "b\n")]);
        let all = base_files(&repo, oid, &b).unwrap();
        assert_eq!(
            all.len(),
            3,
            "{:?}",
            all.iter().map(|f| &f.0).collect::<Vec<_>>()
        );
    }
}
