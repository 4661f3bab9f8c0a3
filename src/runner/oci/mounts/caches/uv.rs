//! Which part of the host's uv cache a box gets a copy of: the entries of the packages
//! its `uv.lock` names, not the whole cache (which grows with every project the user
//! ever synced; a copy on a filesystem without reflinks costs ~20 ms per MB).
//!
//! uv keeps unpacked wheels in `archive-v*/<id>`, reached through relative symlinks
//! from per-package dirs (`wheels-v*/<index>/<name>/…`, `sdists-v*/<index>/<name>/…`);
//! `simple-v*/<index>/<name>.*` are index pages. A box gets, for each locked name,
//! those per-package entries, the archives their symlinks lead to, the interpreter
//! probes and the top-level files. Anything else is a miss: uv fetches it again, into
//! the box's own cache. An unexpected layout (another uv version) only makes misses.
//!
//! The lockfile is the box's, read as hostile data ([`read_lock`]); a name is used
//! only when it is a normalised package name (`[a-z0-9-]`), so it can only pick
//! entries of the host's cache, never a path elsewhere.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

use super::{copy_tree, read_lock, ContainerError};

/// The package names `uv.lock` at `lock` names (each `name = "…"` at a line's start),
/// normalised as uv names its cache dirs; none when it cannot be read safely.
pub(super) fn locked_names(lock: &Path) -> BTreeSet<String> {
    let Some(text) = read_lock(lock) else {
        return BTreeSet::new();
    };
    text.lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .filter_map(|rest| rest.split('"').next())
        .filter_map(normalise)
        .collect()
}

/// PEP 503: lower case, each run of `-`, `_`, `.` one `-`; `None` unless the result is
/// a plain name.
fn normalise(name: &str) -> Option<String> {
    let mut out = String::new();
    for c in name.chars() {
        match c {
            '-' | '_' | '.' => {
                if !out.ends_with('-') {
                    out.push('-');
                }
            }
            c if c.is_ascii_alphanumeric() => out.push(c.to_ascii_lowercase()),
            _ => return None,
        }
    }
    let ok = !out.is_empty() && out.len() <= 200 && !out.starts_with('-');
    ok.then_some(out)
}

/// Copy into `own` what of the host's uv cache `host` the packages `names` use.
pub(super) fn copy_locked(
    host: &Path,
    own: &Path,
    names: &BTreeSet<String>,
) -> Result<(), ContainerError> {
    let Ok(rd) = fs::read_dir(host) else {
        return Ok(());
    };
    let mut copied: Vec<PathBuf> = Vec::new();
    for top in rd.flatten() {
        let name = top.file_name().to_string_lossy().into_owned();
        let Ok(t) = top.file_type() else { continue };
        if t.is_file() || (t.is_dir() && name.starts_with("interpreter-v")) {
            copy_tree(&top.path(), &own.join(&name))?;
        } else if t.is_dir()
            && ["wheels-v", "sdists-v", "simple-v"]
                .iter()
                .any(|p| name.starts_with(p))
        {
            for index in fs::read_dir(top.path()).into_iter().flatten().flatten() {
                for entry in fs::read_dir(index.path()).into_iter().flatten().flatten() {
                    let file = entry.file_name().to_string_lossy().into_owned();
                    let key = file.split('.').next().unwrap_or_default();
                    if names.contains(key) {
                        let rel = Path::new(&name).join(index.file_name()).join(&file);
                        copy_tree(&entry.path(), &own.join(&rel))?;
                        copied.push(rel);
                    }
                }
            }
        }
    }
    // The archives the copied entries' symlinks lead to.
    for rel in copied {
        for link in symlinks(&own.join(&rel)) {
            let Ok(target) = fs::read_link(&link) else {
                continue;
            };
            let Ok(link_rel) = link.strip_prefix(own) else {
                continue;
            };
            let from = link_rel.parent().unwrap_or(Path::new(""));
            let Some(archive) = archive_entry(&from.join(target)) else {
                continue;
            };
            if fs::symlink_metadata(own.join(&archive)).is_err() {
                copy_tree(&host.join(&archive), &own.join(&archive))?;
            }
        }
    }
    Ok(())
}

/// `archive-v*/<id>`, when the cache-relative path `p` (`..` resolved) is one or lies
/// inside one; `None` for anything that leaves the cache.
fn archive_entry(p: &Path) -> Option<PathBuf> {
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => parts.push(s),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    match parts.as_slice() {
        [top, id, ..] if top.to_string_lossy().starts_with("archive-v") => {
            Some(Path::new(top).join(id))
        }
        _ => None,
    }
}

/// Every symlink in the tree `dir` (itself included), not followed.
fn symlinks(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(m) = fs::symlink_metadata(dir) else {
        return out;
    };
    if m.file_type().is_symlink() {
        out.push(dir.to_path_buf());
    } else if m.is_dir() {
        for e in fs::read_dir(dir).into_iter().flatten().flatten() {
            out.extend(symlinks(&e.path()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    #[test]
    fn names_are_read_from_the_lock_and_normalised() {
        let d = tempfile::tempdir().unwrap();
        let lock = d.path().join("uv.lock");
        write(
            &lock,
            "version = 1\n[[package]]\nname = \"Charset_Normalizer\"\n\
             dependencies = [{ name = \"idna\" }]\n[[package]]\nname = \"../../etc\"\n\
             [[package]]\nname = \"numpy\"\n",
        );
        let names: Vec<String> = locked_names(&lock).into_iter().collect();
        assert_eq!(names, ["charset-normalizer", "numpy"]);
        // Never through a symlink, nor a FIFO (it would hang the host).
        let link = d.path().join("link.lock");
        std::os::unix::fs::symlink(&lock, &link).unwrap();
        assert!(locked_names(&link).is_empty());
        let fifo = d.path().join("fifo.lock");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(locked_names(&fifo).is_empty());
    }

    #[test]
    fn only_the_locked_packages_and_their_archives_are_copied() {
        let d = tempfile::tempdir().unwrap();
        let (host, own) = (d.path().join("uv"), d.path().join("own"));
        write(&host.join("CACHEDIR.TAG"), "tag");
        write(&host.join("interpreter-v5/a/b.msgpack"), "py");
        write(&host.join("archive-v0/A/numpy/__init__.py"), "np");
        write(&host.join("archive-v0/B/other/__init__.py"), "other");
        write(&host.join("wheels-v8/pypi/numpy/2.0-cp311.http"), "ptr");
        std::os::unix::fs::symlink(
            "../../../archive-v0/A",
            host.join("wheels-v8/pypi/numpy/2.0-cp311"),
        )
        .unwrap();
        write(&host.join("wheels-v8/pypi/other/1.0-py3.http"), "ptr");
        std::os::unix::fs::symlink(
            "../../../archive-v0/B",
            host.join("wheels-v8/pypi/other/1.0-py3"),
        )
        .unwrap();
        // A link that leaves the cache is copied as a link, never followed.
        std::os::unix::fs::symlink("../../../../..", host.join("wheels-v8/pypi/numpy/x")).unwrap();
        write(&host.join("simple-v16/pypi/numpy.rkyv"), "page");
        write(&host.join("environments-v2/e/bin/python"), "exe");
        let names = BTreeSet::from(["numpy".to_string()]);
        copy_locked(&host, &own, &names).unwrap();
        assert!(own.join("CACHEDIR.TAG").is_file());
        assert!(own.join("interpreter-v5/a/b.msgpack").is_file());
        assert!(own.join("simple-v16/pypi/numpy.rkyv").is_file());
        assert_eq!(
            fs::read_to_string(own.join("wheels-v8/pypi/numpy/2.0-cp311/numpy/__init__.py"))
                .unwrap(),
            "np"
        );
        assert!(!own.join("archive-v0/B").exists());
        assert!(!own.join("wheels-v8/pypi/other").exists());
        assert!(!own.join("environments-v2").exists());
        assert_eq!(fs::read_dir(own.join("archive-v0")).unwrap().count(), 1);
    }

    #[test]
    fn archive_entries_stay_inside_the_cache() {
        let p = |s: &str| archive_entry(Path::new(s));
        assert_eq!(
            p("wheels-v8/pypi/numpy/../../../archive-v0/A"),
            Some("archive-v0/A".into())
        );
        assert_eq!(p("wheels-v8/../../archive-v0/A"), None);
        assert_eq!(p("/archive-v0/A"), None);
        assert_eq!(p("wheels-v8/pypi/x"), None);
        assert_eq!(p("archive-v0"), None);
    }
}
