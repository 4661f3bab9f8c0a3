//! Where templates are found and how a user template directory is read.
//!
//! Templates come from the bundled `default` and from the user's
//! `$XDG_CONFIG_HOME/treebox/templates/<name>/` ([`user_dir`]); a user template named
//! `default` overrides the bundled one. Each `*_in` function takes the user directory
//! explicitly (tests); the plain one uses [`user_dir`]. Reading a directory is bounded
//! ([`MAX_FILES`], [`MAX_FILE_BYTES`], [`MAX_TOTAL_BYTES`], nesting depth) and never
//! follows a symlink out of the template. `init` writes a complete directory or none.
//!
//! Called by `cli::template` (init, list, path) and by provisioning and the container
//! runner (`find`).

use std::borrow::Cow;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{assemble, bundled, io_err, shown, Source, TemplateError, TemplateFile};
use super::{bundled::bundled_checked, Template, BUNDLED_NAME};

/// Largest file a template may hold.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Most files a template may hold.
pub const MAX_FILES: usize = 256;
/// Largest template, all files together.
pub const MAX_TOTAL_BYTES: u64 = 16 * 1024 * 1024;
/// Longest template name.
pub const MAX_NAME_LEN: usize = 64;
/// Deepest directory nesting inside a template.
const MAX_DEPTH: usize = 16;

/// Check a template name: `[a-z0-9][a-z0-9._-]*`, at most [`MAX_NAME_LEN`] characters.
pub fn check_name(name: &str) -> Result<(), TemplateError> {
    let bad = |reason| {
        Err(TemplateError::InvalidName {
            name: shown(name),
            reason,
        })
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > MAX_NAME_LEN {
        return bad("it is longer than 64 characters");
    }
    let first = name.as_bytes()[0];
    if !(first.is_ascii_lowercase() || first.is_ascii_digit()) {
        return bad("it must start with a lower-case letter or a digit");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-'))
    {
        return bad("use only lower-case letters, digits, '.', '_' and '-'");
    }
    Ok(())
}

/// Where user templates live: `$XDG_CONFIG_HOME/treebox/templates` (it may not exist).
pub fn user_dir() -> Option<PathBuf> {
    xdg::BaseDirectories::with_prefix("treebox")
        .get_config_home()
        .map(|d| d.join("templates"))
}

/// One entry of [`list`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateInfo {
    pub name: String,
    pub source: Source,
    /// A user template named like the bundled one, which it replaces.
    pub overrides_bundled: bool,
    /// Everything wrong with it; empty when it is usable.
    pub problems: Vec<String>,
}

impl TemplateInfo {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Every template, sorted by name: the bundled `default` (unless a user template of
/// that name overrides it) and each directory under [`user_dir`], with its problems.
/// A template with problems is listed, not skipped: listing is not failing.
pub fn list() -> Result<Vec<TemplateInfo>, TemplateError> {
    list_in(user_dir().as_deref())
}

/// [`list`] with an explicit user templates directory.
pub fn list_in(dir: Option<&Path>) -> Result<Vec<TemplateInfo>, TemplateError> {
    let mut out = Vec::new();
    let mut names = Vec::new();
    if let Some(dir) = dir {
        match std::fs::read_dir(dir) {
            Ok(rd) => {
                for entry in rd {
                    let entry = entry.map_err(io_err(dir))?;
                    let name = entry.file_name().to_string_lossy().into_owned();
                    // Hidden entries are init's scratch space (and editors').
                    if name.starts_with('.') {
                        continue;
                    }
                    // Only directories (or links to them) are templates.
                    if entry.path().is_dir() {
                        names.push(name);
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(dir)(e)),
        }
    }
    names.sort();
    let user_default = names.iter().any(|n| n == BUNDLED_NAME);
    if !user_default {
        out.push(TemplateInfo {
            name: BUNDLED_NAME.to_string(),
            source: Source::Bundled,
            overrides_bundled: false,
            problems: bundled_checked().1,
        });
    }
    for name in names {
        let path = dir.map(|d| d.join(&name)).unwrap_or_default();
        let problems = match check_name(&name) {
            Err(e) => vec![format!("{}: {e}", path.display())],
            Ok(()) => load_dir(&name, &path).1,
        };
        out.push(TemplateInfo {
            overrides_bundled: name == BUNDLED_NAME,
            name,
            source: Source::User(path),
            problems,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Where the template `name` comes from, without loading it: its user directory if
/// there is one, else the bundled one for `default`.
pub fn locate(name: &str) -> Result<Source, TemplateError> {
    locate_in(user_dir().as_deref(), name)
}

/// [`locate`] with an explicit user templates directory.
pub fn locate_in(dir: Option<&Path>, name: &str) -> Result<Source, TemplateError> {
    check_name(name)?;
    if let Some(d) = dir {
        let p = d.join(name);
        if std::fs::symlink_metadata(&p).is_ok() {
            return Ok(Source::User(p));
        }
    }
    if name == BUNDLED_NAME {
        return Ok(Source::Bundled);
    }
    Err(TemplateError::NotFound {
        name: name.to_string(),
        dir: dir.map(Path::to_path_buf),
    })
}

/// Load the template `name`, which must have no problems.
pub fn find(name: &str) -> Result<Template, TemplateError> {
    find_in(user_dir().as_deref(), name)
}

/// [`find`] with an explicit user templates directory.
pub fn find_in(dir: Option<&Path>, name: &str) -> Result<Template, TemplateError> {
    match locate_in(dir, name)? {
        Source::Bundled => Ok(bundled()),
        Source::User(path) => match load_dir(name, &path) {
            (Some(t), problems) if problems.is_empty() => Ok(t),
            (_, problems) => Err(TemplateError::Invalid {
                name: name.to_string(),
                path,
                problems,
            }),
        },
    }
}

/// Copy the bundled template into the user templates directory as `name`. An existing
/// template of that name is an error unless `force`, which replaces it whole. Nothing
/// is written on refusal; the new directory appears complete or not at all.
pub fn init(name: &str, force: bool) -> Result<PathBuf, TemplateError> {
    let dir = user_dir().ok_or(TemplateError::NoConfigDir)?;
    init_in(&dir, name, force)
}

/// [`init`] with an explicit user templates directory.
pub fn init_in(dir: &Path, name: &str, force: bool) -> Result<PathBuf, TemplateError> {
    init_with(dir, name, force, &[])
}

/// [`init_in`], with `files` (relative path, bytes, mode) written over the bundled
/// template's or beside them before the template takes its name: whole or not at all.
pub fn init_with(
    dir: &Path,
    name: &str,
    force: bool,
    files: &[(String, Vec<u8>, u32)],
) -> Result<PathBuf, TemplateError> {
    check_name(name)?;
    let target = dir.join(name);
    let exists = std::fs::symlink_metadata(&target).is_ok();
    if exists && !force {
        return Err(TemplateError::Exists {
            name: name.to_string(),
            path: target,
        });
    }
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let pid = std::process::id();
    let scratch = dir.join(format!(".{name}.new-{pid}"));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir(&scratch).map_err(io_err(&scratch))?;
    let written = bundled()
        .write_to(&scratch)
        .and_then(|()| {
            files.iter().try_for_each(|(rel, bytes, mode)| {
                use std::os::unix::fs::PermissionsExt;
                let path = scratch.join(super::spec::normalise_rel(rel));
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(io_err(parent))?;
                }
                std::fs::write(&path, bytes).map_err(io_err(&path))?;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(*mode))
                    .map_err(io_err(&path))
            })
        })
        .and_then(|()| swap_in(dir, &scratch, &target, name, exists));
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    written.map(|()| target)
}

/// Put the finished `scratch` directory at `target`. Without `replace`, the name is
/// claimed first with an empty directory (which fails if someone else has it), so a
/// template created meanwhile is never overwritten.
fn swap_in(
    dir: &Path,
    scratch: &Path,
    target: &Path,
    name: &str,
    replace: bool,
) -> Result<(), TemplateError> {
    if !replace {
        match std::fs::create_dir(target) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(TemplateError::Exists {
                    name: name.to_string(),
                    path: target.to_path_buf(),
                })
            }
            Err(e) => return Err(io_err(target)(e)),
        }
        // Renaming a directory over an empty one replaces it.
        return std::fs::rename(scratch, target).map_err(|e| {
            let _ = std::fs::remove_dir(target);
            io_err(target)(e)
        });
    }
    let old = dir.join(format!(".{name}.old-{}", std::process::id()));
    std::fs::rename(target, &old).map_err(io_err(target))?;
    std::fs::rename(scratch, target).map_err(io_err(target))?;
    let gone = match std::fs::symlink_metadata(&old) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&old),
        _ => std::fs::remove_file(&old),
    };
    gone.map_err(io_err(&old))
}

/// Read a user template directory: its files (regular files, and symlinks to files
/// inside it; `.git` skipped) and its spec, and every problem found on the way.
fn load_dir(name: &str, dir: &Path) -> (Option<Template>, Vec<String>) {
    let mut problems = Vec::new();
    let root = match std::fs::canonicalize(dir) {
        Ok(r) if r.is_dir() => r,
        Ok(_) => return (None, vec![format!("{}: not a directory", dir.display())]),
        Err(e) => return (None, vec![format!("{}: {e}", dir.display())]),
    };
    let mut walk = Walk {
        root: &root,
        shown_root: dir,
        files: Vec::new(),
        total: 0,
        too_many: false,
        problems: &mut problems,
    };
    walk.dir(&root, "", 0);
    let mut files = walk.files;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let (t, more) = assemble(name, Source::User(dir.to_path_buf()), files);
    problems.extend(more);
    (Some(t), problems)
}

struct Walk<'a> {
    root: &'a Path,
    shown_root: &'a Path,
    files: Vec<TemplateFile>,
    total: u64,
    too_many: bool,
    problems: &'a mut Vec<String>,
}

impl Walk<'_> {
    fn problem(&mut self, rel: &str, msg: impl std::fmt::Display) {
        self.problems
            .push(format!("{}: {msg}", self.shown_root.join(rel).display()));
    }

    fn dir(&mut self, dir: &Path, rel: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.problem(rel, format!("nested deeper than {MAX_DEPTH} directories"));
            return;
        }
        let mut entries: Vec<_> = match std::fs::read_dir(dir) {
            Ok(rd) => rd.flatten().collect(),
            Err(e) => {
                self.problem(rel, e);
                return;
            }
        };
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let Some(fname) = e.file_name().to_str().map(str::to_string) else {
                self.problem(rel, "a file name is not UTF-8");
                continue;
            };
            if fname == ".git" {
                continue;
            }
            let rel = if rel.is_empty() {
                fname
            } else {
                format!("{rel}/{fname}")
            };
            let path = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                self.dir(&path, &rel, depth + 1);
            } else if meta.is_file() {
                self.file(&path, &rel);
            } else if meta.file_type().is_symlink() {
                match std::fs::canonicalize(&path) {
                    Ok(t) if !t.starts_with(self.root) => {
                        self.problem(&rel, "a symlink to outside the template")
                    }
                    Ok(t) if t.is_file() => self.file(&t, &rel),
                    Ok(_) => self.problem(&rel, "a symlink to a directory (not followed)"),
                    Err(_) => self.problem(&rel, "a dangling symlink"),
                }
            } else {
                self.problem(&rel, "not a regular file");
            }
        }
    }

    fn file(&mut self, path: &Path, rel: &str) {
        use std::os::unix::fs::PermissionsExt;
        if self.files.len() >= MAX_FILES {
            if !self.too_many {
                self.too_many = true;
                self.problem(rel, format!("more than {MAX_FILES} files in the template"));
            }
            return;
        }
        let opened = std::fs::File::open(path).and_then(|f| {
            let meta = f.metadata()?;
            let mut buf = Vec::new();
            f.take(MAX_FILE_BYTES + 1).read_to_end(&mut buf)?;
            Ok((meta, buf))
        });
        match opened {
            Err(e) => self.problem(rel, e),
            Ok((_, buf)) if buf.len() as u64 > MAX_FILE_BYTES => {
                self.problem(rel, format!("larger than {MAX_FILE_BYTES} bytes"))
            }
            Ok((_, buf)) if self.total + buf.len() as u64 > MAX_TOTAL_BYTES => {
                self.problem(rel, format!("the template exceeds {MAX_TOTAL_BYTES} bytes"))
            }
            Ok((meta, buf)) => {
                self.total += buf.len() as u64;
                let mode = if meta.permissions().mode() & 0o111 != 0 {
                    0o755
                } else {
                    0o644
                };
                self.files.push(TemplateFile {
                    path: rel.to_string(),
                    contents: Cow::Owned(buf),
                    mode,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::bundled::BUNDLED;
    use crate::template::{DOCKERFILE, SPEC_FILE};
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn names() {
        for good in ["default", "a", "0", "my-tpl.v2_x", &"a".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "Default",
            "-x",
            ".x",
            "_x",
            "a/b",
            "..",
            "a b",
            "é",
            &"a".repeat(65),
        ] {
            assert!(
                matches!(check_name(bad), Err(TemplateError::InvalidName { .. })),
                "{bad}"
            );
        }
    }

    fn user_template(dir: &Path, name: &str) -> PathBuf {
        init_in(dir, name, false).unwrap()
    }

    #[test]
    fn init_copies_bundled_with_modes() {
        let d = tempfile::tempdir().unwrap();
        let t = user_template(d.path(), "mine");
        assert_eq!(t, d.path().join("mine"));
        for b in BUNDLED {
            let p = t.join(b.path);
            assert_eq!(std::fs::read(&p).unwrap(), b.bytes);
            assert_eq!(
                std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
                b.mode
            );
        }
        let found = find_in(Some(d.path()), "mine").unwrap();
        assert_eq!(found.source(), &Source::User(t.clone()));
        assert_eq!(found.digest(), bundled().digest());
        assert_eq!(found.spec(), bundled().spec());
        // No scratch left behind.
        let names: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn init_refuses_existing_unless_forced() {
        let d = tempfile::tempdir().unwrap();
        let t = user_template(d.path(), "mine");
        std::fs::write(t.join("extra"), "x").unwrap();
        assert!(matches!(
            init_in(d.path(), "mine", false),
            Err(TemplateError::Exists { .. })
        ));
        assert!(t.join("extra").exists());
        init_in(d.path(), "mine", true).unwrap();
        assert!(!t.join("extra").exists());
        assert!(t.join(DOCKERFILE).exists());
        assert!(matches!(
            init_in(d.path(), "Bad", false),
            Err(TemplateError::InvalidName { .. })
        ));
        assert!(!d.path().join("Bad").exists());
    }

    #[test]
    fn user_default_overrides_bundled() {
        let d = tempfile::tempdir().unwrap();
        let l = list_in(Some(d.path())).unwrap();
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].source, Source::Bundled);
        assert!(l[0].ok());
        assert!(matches!(
            locate_in(Some(d.path()), "default"),
            Ok(Source::Bundled)
        ));
        user_template(d.path(), "default");
        let l = list_in(Some(d.path())).unwrap();
        assert_eq!(l.len(), 1, "{l:#?}");
        assert!(l[0].overrides_bundled && matches!(l[0].source, Source::User(_)));
        assert!(matches!(
            find_in(Some(d.path()), "default").unwrap().source(),
            Source::User(_)
        ));
        assert!(matches!(
            find_in(Some(d.path()), "nope"),
            Err(TemplateError::NotFound { .. })
        ));
    }

    #[test]
    fn broken_user_templates_are_listed_with_problems() {
        let d = tempfile::tempdir().unwrap();
        let t = user_template(d.path(), "broken");
        std::fs::write(
            t.join(SPEC_FILE),
            r#"{"baseImag":"x","firewall":{"script":"../../etc/passwd","allowlist":"allowlist.txt"}}"#,
        )
        .unwrap();
        let m = user_template(d.path(), "missing");
        std::fs::write(
            m.join(SPEC_FILE),
            r#"{"firewall":{"script":"init-firewall.sh","allowlist":"nope.txt"}}"#,
        )
        .unwrap();
        std::os::unix::fs::symlink("/etc/passwd", t.join("escape")).unwrap();
        std::fs::remove_file(t.join(DOCKERFILE)).unwrap();
        std::fs::create_dir(d.path().join("Upper")).unwrap();
        std::fs::write(d.path().join("stray-file"), "").unwrap();
        let l = list_in(Some(d.path())).unwrap();
        let names: Vec<&str> = l.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["Upper", "broken", "default", "missing"]);
        let p = l[1].problems.join("\n");
        for needle in [
            "container.json: unknown key `baseImag` (did you mean `baseImage`?)",
            "`firewall.script`: `../../etc/passwd` must be a path inside the template",
            "escape: a symlink to outside the template",
            "Dockerfile: missing",
        ] {
            assert!(p.contains(needle), "{needle}\n{p}");
        }
        assert!(!l[0].ok());
        assert!(l[2].ok());
        assert_eq!(l[3].problems.len(), 1, "{:#?}", l[3]);
        assert!(
            l[3].problems[0].contains("`firewall.allowlist` names `nope.txt`, which is not a file")
        );
        let e = find_in(Some(d.path()), "broken").unwrap_err();
        assert!(matches!(e, TemplateError::Invalid { .. }));
        assert!(e.to_string().contains("more)"), "{e}");
    }

    #[test]
    fn file_limits_and_inside_symlinks() {
        let d = tempfile::tempdir().unwrap();
        let t = user_template(d.path(), "big");
        std::os::unix::fs::symlink("allowlist.txt", t.join("alias.txt")).unwrap();
        std::fs::create_dir(t.join(".git")).unwrap();
        std::fs::write(t.join(".git/HEAD"), "x").unwrap();
        let found = find_in(Some(d.path()), "big").unwrap();
        assert!(found.file("alias.txt").is_some());
        assert!(found.file(".git/HEAD").is_none());
        std::fs::write(t.join("huge"), vec![0u8; MAX_FILE_BYTES as usize + 1]).unwrap();
        let e = find_in(Some(d.path()), "big").unwrap_err().to_string();
        assert!(e.contains("huge: larger than"), "{e}");
        std::fs::remove_file(t.join("huge")).unwrap();
        std::fs::create_dir(t.join("many")).unwrap();
        for i in 0..MAX_FILES {
            std::fs::write(t.join(format!("many/{i}")), "").unwrap();
        }
        let e = find_in(Some(d.path()), "big").unwrap_err().to_string();
        assert!(e.contains("more than 256 files"), "{e}");
    }

    #[test]
    fn build_args_must_be_declared() {
        let d = tempfile::tempdir().unwrap();
        let t = user_template(d.path(), "args");
        std::fs::write(t.join(SPEC_FILE), r#"{"buildArgs":{"NOT_DECLARED":"1"}}"#).unwrap();
        let e = find_in(Some(d.path()), "args").unwrap_err().to_string();
        assert!(e.contains("declares no `ARG NOT_DECLARED`"), "{e}");
    }
}
