//! A box's view of the package caches (SPEC §7, Mounts): two layers per ecosystem, and
//! the box writes only to its own.
//!
//! - **Shared, read-only**: of the host's caches, only what a tool checks against the
//!   lockfile or a content hash, or takes as a download again: cargo's `.crate` files
//!   (`registry/cache`) and git databases (`git/db`: objects named by their hash, the
//!   commit pinned by `Cargo.lock`); go's module downloads (`cache/download`, served as
//!   a `file://` GOPROXY and checked against `go.sum`); npm's content store
//!   (`_cacache/content-v2`, checked against its integrity hash on every read). Mounted
//!   under [`SHARED_ROOT`]. Only the host's own tools fill it; nothing a box writes
//!   ever reaches it.
//! - **The box's own, writable**: `<box state>/caches/<eco>` ([`Layout::cache_dir`]),
//!   where the tool's variable points. Made afresh each time the box's container is
//!   made (the host never writes through anything a box left there: the old tree is
//!   removed without following a link), then seeded from the host: symlinks to the
//!   shared files (cargo's `.crate`s — copies for those `Cargo.lock` pins, so a link
//!   the host's gc left dangling never fails a fetch — and npm's content), copies of
//!   the small indexes
//!   (cargo's index cache, npm's index), git databases that borrow the shared objects
//!   (`objects/info/alternates`), and for uv and pnpm — whose caches hold unpacked
//!   files the tools trust as they are — copies (`copy_file_range`, which clones by
//!   reflink where the filesystem can) of what the box's lockfile pins ([`uv`],
//!   [`pnpm`]), not of the whole cache. Extracted trees (cargo's
//!   `registry/src` and `git/checkouts`, go's module dirs) are made by the box itself.
//!   Installs copy out of a cache, never hard-link into it (`UV_LINK_MODE=copy`,
//!   pnpm's `package-import-method=copy`). Removed with the box's state at teardown.
//!
//! Called by [`super`] (`Spec::mounts`) when a box's container is made.
//!
//! [`Layout::cache_dir`]: crate::state::Layout::cache_dir

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::super::error::{io_err, ContainerError};
use super::super::{Ecosystem, EnvVars};
use super::Mount;

mod pnpm;
mod uv;

/// The largest lockfile read to pick what to copy; a larger one picks nothing (the
/// box's installs start cold).
const LOCK_CAP: u64 = 32 * 1024 * 1024;

/// The text of the box's lockfile `path`, read as hostile data (SPEC §8): never through
/// a symlink, only a regular file (a FIFO would hang the host), at most [`LOCK_CAP`]
/// bytes; `None` otherwise.
fn read_lock(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !f
        .metadata()
        .is_ok_and(|m| m.is_file() && m.len() <= LOCK_CAP)
    {
        return None;
    }
    let mut text = String::new();
    f.take(LOCK_CAP + 1).read_to_string(&mut text).ok()?;
    (text.len() as u64 <= LOCK_CAP).then_some(text)
}

/// Where each ecosystem's writable cache appears inside (the box's own).
pub(super) const CACHE_ROOT: &str = "/var/cache/treebox";
/// Where the read-only parts of the host's caches appear inside.
pub(super) const SHARED_ROOT: &str = "/var/cache/treebox/host";

/// go's default module proxy, after the host's downloads.
const GO_PROXY_DEFAULT: &str = "https://proxy.golang.org,direct";

/// The mounts and variables of one ecosystem's caches.
#[derive(Debug, Default)]
pub(super) struct CacheView {
    pub mounts: Vec<Mount>,
    pub env: EnvVars,
}

/// The host's variables, as this process has them.
type Vars<'a> = &'a dyn Fn(&str) -> Option<std::ffi::OsString>;

/// A host cache directory: the variable's absolute value, else `rel` under `home`;
/// `None` when that is not absolute either (no HOME): a path relative to wherever
/// treebox runs is no cache of the user's.
fn host_dir(vars: Vars, var: Option<&str>, home: &Path, rel: &str) -> Option<PathBuf> {
    var.and_then(vars)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| Some(home.join(rel)))
        .filter(|p| p.is_absolute())
}

/// Empty `own` (every ecosystem's writable cache of the box), removing whatever a box
/// left there without following a link, and make it again.
pub(super) fn reset(own: &Path) -> Result<(), ContainerError> {
    match fs::remove_dir_all(own) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        // A directory the box made unwritable (go's module dirs are read-only).
        Err(_) => {
            make_dirs_writable(own);
            fs::remove_dir_all(own).map_err(io_err("could not remove", own))?;
        }
    }
    fs::create_dir_all(own).map_err(io_err("could not create", own))
}

fn make_dirs_writable(p: &Path) {
    if let Ok(m) = fs::symlink_metadata(p) {
        if m.is_dir() {
            let mode = m.permissions().mode() | 0o700;
            let _ = fs::set_permissions(p, fs::Permissions::from_mode(mode));
            for e in fs::read_dir(p).into_iter().flatten().flatten() {
                make_dirs_writable(&e.path());
            }
        }
    }
}

/// The caches of `eco` for the box whose checkout is `project` and whose writable
/// caches live under `own_root` (just [`reset`]): the mounts, the seeded writable
/// layer, the variables that point the tool at it. `home` is the host user's home.
pub(super) fn view(
    eco: Ecosystem,
    home: &Path,
    own_root: &Path,
    project: &Path,
) -> Result<CacheView, ContainerError> {
    view_with(eco, home, own_root, project, &|k| std::env::var_os(k))
}

fn view_with(
    eco: Ecosystem,
    home: &Path,
    own_root: &Path,
    project: &Path,
    vars: Vars,
) -> Result<CacheView, ContainerError> {
    let mut v = CacheView::default();
    let name = match eco {
        Ecosystem::Uv => "uv",
        Ecosystem::Pnpm => "pnpm",
        Ecosystem::Npm => "npm",
        Ecosystem::Go => "gomod",
        Ecosystem::Cargo => "cargo",
    };
    let own = own_root.join(name);
    fs::create_dir_all(&own).map_err(io_err("could not create", &own))?;
    let inside = format!("{CACHE_ROOT}/{name}");
    let shared = PathBuf::from(format!("{SHARED_ROOT}/{name}"));
    v.mounts.push(Mount {
        src: own.clone(),
        dst: PathBuf::from(&inside),
        readonly: false,
    });
    let mut set = |k: &str, val: String| v.env.push((k.to_string(), val));
    match eco {
        Ecosystem::Uv => {
            if let Some(host) = host_dir(vars, Some("UV_CACHE_DIR"), home, ".cache/uv") {
                let names = uv::locked_names(&project.join("uv.lock"));
                uv::copy_locked(&host, &own, &names)?;
            }
            set("UV_CACHE_DIR", inside);
            set("UV_LINK_MODE", "copy".into());
        }
        Ecosystem::Pnpm => {
            if let Some(host) = host_dir(vars, None, home, ".local/share/pnpm/store") {
                pnpm::copy_locked(&host, &own, &project.join("pnpm-lock.yaml"))?;
            }
            set("npm_config_store_dir", inside);
            set("npm_config_package_import_method", "copy".into());
        }
        Ecosystem::Npm => {
            v.env.push(("npm_config_cache".into(), inside));
            if let Some(npm) = host_dir(vars, Some("npm_config_cache"), home, ".npm") {
                let host = npm.join("_cacache");
                let content = host.join("content-v2");
                let shared_content = shared.join("_cacache/content-v2");
                if content.is_dir() {
                    // cacache renames a new file over a path, never writes through it.
                    let to = own.join("_cacache/content-v2");
                    link_files(&content, &to, &shared_content, &|_| false)?;
                    v.mounts.push(Mount {
                        src: content,
                        dst: shared_content,
                        readonly: true,
                    });
                }
                copy_tree(&host.join("index-v5"), &own.join("_cacache/index-v5"))?;
            }
        }
        Ecosystem::Go => {
            let host = host_dir(vars, Some("GOMODCACHE"), home, "go/pkg/mod")
                .map(|m| m.join("cache/download"))
                .filter(|d| d.is_dir());
            set("GOMODCACHE", inside);
            set("GOFLAGS", "-modcacherw".into());
            let proxy = if let Some(host) = host {
                v.mounts.push(Mount {
                    src: host,
                    dst: shared.clone(),
                    readonly: true,
                });
                format!("file://{},{GO_PROXY_DEFAULT}", shared.display())
            } else {
                GO_PROXY_DEFAULT.to_string()
            };
            v.env.push(("GOPROXY".into(), proxy));
        }
        // Never CARGO_HOME/bin (host executables), nor its config or credentials.
        Ecosystem::Cargo => {
            set("CARGO_HOME", inside);
            let Some(host) = host_dir(vars, Some("CARGO_HOME"), home, ".cargo") else {
                return Ok(v);
            };
            let crates = host.join("registry/cache");
            if crates.is_dir() {
                let dst = shared.join("registry/cache");
                // The crates the lockfile pins are copied: cargo opens a `.crate` it
                // has to download with O_CREAT, through a link, so a link the host's
                // `cargo clean gc` left dangling would fail with EROFS. The rest are links.
                let pinned = pinned_crates(&project.join("Cargo.lock"));
                let copy = |f: &std::ffi::OsStr| pinned.contains(&*f.to_string_lossy());
                link_files(&crates, &own.join("registry/cache"), &dst, &copy)?;
                v.mounts.push(Mount {
                    src: crates,
                    dst,
                    readonly: true,
                });
            }
            // Each registry's index cache (and its config.json), copied: small, and
            // rewritten by cargo as the index moves on.
            let index = host.join("registry/index");
            for reg in subdirs(&index)? {
                let to = own
                    .join("registry/index")
                    .join(reg.file_name().unwrap_or_default());
                copy_tree(&reg.join(".cache"), &to.join(".cache"))?;
                copy_tree_file(&reg.join("config.json"), &to.join("config.json"))?;
            }
            let dbs = host.join("git/db");
            if dbs.is_dir() {
                let dst = shared.join("git/db");
                for db in subdirs(&dbs)? {
                    let leaf = db.file_name().unwrap_or_default();
                    borrow_git_db(&own.join("git/db").join(leaf), &dst.join(leaf))?;
                }
                v.mounts.push(Mount {
                    src: dbs,
                    dst,
                    readonly: true,
                });
            }
        }
    }
    Ok(v)
}

/// The real directories directly in `dir` (none when it is missing).
fn subdirs(dir: &Path) -> Result<Vec<PathBuf>, ContainerError> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("could not read", dir)(e)),
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.push(e.path());
        }
    }
    out.sort();
    Ok(out)
}

/// Mirror the directories of `src` under `dst`, each regular file as a symlink to the
/// same relative path under `target` (where `src` appears read-only inside), or, when
/// `copy` says so, as a copy.
fn link_files(
    src: &Path,
    dst: &Path,
    target: &Path,
    copy: &dyn Fn(&std::ffi::OsStr) -> bool,
) -> Result<(), ContainerError> {
    fs::create_dir_all(dst).map_err(io_err("could not create", dst))?;
    let rd = fs::read_dir(src).map_err(io_err("could not read", src))?;
    for e in rd.flatten() {
        let Ok(t) = e.file_type() else { continue };
        let (from, to, at) = (
            e.path(),
            dst.join(e.file_name()),
            target.join(e.file_name()),
        );
        if t.is_dir() {
            link_files(&from, &to, &at, copy)?;
        } else if t.is_file() && copy(&e.file_name()) {
            copy_tree_file(&from, &to)?;
        } else if t.is_file() {
            std::os::unix::fs::symlink(&at, &to).map_err(io_err("could not link", &to))?;
        }
    }
    Ok(())
}

/// `<name>-<version>.crate` of each registry package the lockfile `lock` pins (the
/// names cargo gives its downloads); only compared with the host's file names.
fn pinned_crates(lock: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let Some(text) = read_lock(lock) else {
        return out;
    };
    let (mut name, mut version) = (None, None);
    for line in text.lines() {
        let value = |key: &str| {
            line.strip_prefix(key)
                .and_then(|r| r.strip_prefix(" = \""))
                .and_then(|r| r.strip_suffix('"'))
        };
        if line.starts_with("[[package]]") {
            (name, version) = (None, None);
        } else if let Some(n) = value("name") {
            name = Some(n);
        } else if let Some(v) = value("version") {
            version = Some(v);
        } else if let Some(src) = value("source") {
            if let (Some(n), Some(v)) = (name, version) {
                if src.starts_with("registry+") || src.starts_with("sparse+") {
                    out.insert(format!("{n}-{v}.crate"));
                }
            }
        }
    }
    out
}

/// Copy the tree `src` to `dst`: directories (writable by their owner), regular files
/// with their mode (`copy_file_range`: a reflink clone where the filesystem can),
/// symlinks as symlinks, never followed. A missing `src` copies nothing; a file that
/// vanishes meanwhile (the host's tool at work) is skipped.
fn copy_tree(src: &Path, dst: &Path) -> Result<(), ContainerError> {
    let meta = match fs::symlink_metadata(src) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err("could not read", src)(e)),
    };
    let t = meta.file_type();
    if t.is_dir() {
        fs::create_dir_all(dst).map_err(io_err("could not create", dst))?;
        let mode = meta.permissions().mode() | 0o700;
        fs::set_permissions(dst, fs::Permissions::from_mode(mode))
            .map_err(io_err("could not create", dst))?;
        let rd = fs::read_dir(src).map_err(io_err("could not read", src))?;
        for e in rd.flatten() {
            copy_tree(&e.path(), &dst.join(e.file_name()))?;
        }
        Ok(())
    } else if t.is_symlink() {
        match fs::read_link(src) {
            Ok(to) => std::os::unix::fs::symlink(to, dst).map_err(io_err("could not link", dst)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err("could not read", src)(e)),
        }
    } else if t.is_file() {
        copy_tree_file(src, dst)
    } else {
        Ok(())
    }
}

/// Copy one regular file (a missing one is skipped).
fn copy_tree_file(src: &Path, dst: &Path) -> Result<(), ContainerError> {
    if let Some(dir) = dst.parent() {
        fs::create_dir_all(dir).map_err(io_err("could not create", dir))?;
    }
    match fs::copy(src, dst) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err("could not copy", src)(e)),
    }
}

/// A bare repository at `dst` whose objects are those of the read-only database that
/// appears at `shared` inside (`objects/info/alternates`): cargo finds the locked
/// commit there, and what it fetches lands in the box's own.
fn borrow_git_db(dst: &Path, shared: &Path) -> Result<(), ContainerError> {
    git2::Repository::init_bare(dst).map_err(|e| ContainerError::Io {
        what: "could not create",
        path: dst.to_path_buf(),
        source: io::Error::other(e),
    })?;
    let alt = dst.join("objects/info/alternates");
    if let Some(dir) = alt.parent() {
        fs::create_dir_all(dir).map_err(io_err("could not create", dir))?;
    }
    let line = format!("{}\n", shared.join("objects").display());
    fs::write(&alt, line).map_err(io_err("could not write", &alt))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    fn plant(home: &Path) {
        write(
            &home.join(".cargo/registry/cache/idx/a-1.0.0.crate"),
            "crate",
        );
        write(
            &home.join(".cargo/registry/cache/idx/p-2.0.0.crate"),
            "pinned",
        );
        write(
            &home.join("project/Cargo.lock"),
            "[[package]]\nname = \"p\"\nversion = \"2.0.0\"\n\
             source = \"registry+https://github.com/rust-lang/crates.io-index\"\n\
             [[package]]\nname = \"a\"\nversion = \"1.0.0\"\n\
             [[package]]\nname = \"g\"\nversion = \"3.0.0\"\nsource = \"git+https://x/g#abc\"\n",
        );
        write(&home.join(".cargo/registry/index/idx/config.json"), "{}");
        write(&home.join(".cargo/registry/index/idx/.cache/a/a"), "entry");
        write(
            &home.join(".cargo/registry/src/idx/a-1.0.0/build.rs"),
            "fn main(){}",
        );
        write(&home.join(".cargo/git/checkouts/d-1/abc/build.rs"), "");
        git2::Repository::init_bare(home.join(".cargo/git/db/d-1")).unwrap();
        write(&home.join(".cargo/bin/cargo"), "#!/bin/sh\n");
        write(&home.join(".cache/uv/archive-v0/x/m.py"), "pass");
        let wheel = home.join(".cache/uv/wheels-v8/pypi/pkg");
        fs::create_dir_all(&wheel).unwrap();
        std::os::unix::fs::symlink("../../../archive-v0/x", wheel.join("1.0-py3")).unwrap();
        write(
            &home.join("project/uv.lock"),
            "[[package]]\nname = \"pkg\"\n",
        );
        write(&home.join(".local/share/pnpm/store/v3/files/00/ab"), "js");
        let (b64, hex) = (pnpm::tests::B64, pnpm::tests::HEX);
        write(
            &home.join(format!(
                ".local/share/pnpm/store/v3/files/{}/{}-index.json",
                &hex[..2],
                &hex[2..]
            )),
            &format!(r#"{{"files":{{"a.js":{{"integrity":"sha512-{b64}"}}}}}}"#),
        );
        write(
            &home.join(format!(
                ".local/share/pnpm/store/v3/files/{}/{}",
                &hex[..2],
                &hex[2..]
            )),
            "js",
        );
        write(
            &home.join("project/pnpm-lock.yaml"),
            &format!("integrity: sha512-{b64}\n"),
        );
        write(
            &home.join(".npm/_cacache/content-v2/sha512/00/11/22"),
            "tgz",
        );
        write(&home.join(".npm/_cacache/index-v5/00/11/k"), "idx");
        write(&home.join("go/pkg/mod/cache/download/m/@v/v1.zip"), "zip");
        write(&home.join("go/pkg/mod/m@v1/main.go"), "package m");
    }

    /// Every mount: the box's own (writable, under the box's caches) or a read-only one
    /// of a checked artefact; never an extracted tree nor host executables.
    #[test]
    fn the_box_writes_only_its_own_layer() {
        let d = tempfile::tempdir().unwrap();
        let (home, own) = (d.path().join("home"), d.path().join("box/caches"));
        let project = home.join("project");
        plant(&home);
        reset(&own).unwrap();
        for eco in Ecosystem::ALL {
            let v = view_with(eco, &home, &own, &project, &|_| None).unwrap();
            for m in &v.mounts {
                if m.readonly {
                    assert!(m.src.starts_with(&home), "{eco:?}: {m:?}");
                    assert!(m.dst.starts_with(SHARED_ROOT), "{eco:?}: {m:?}");
                    let rel = m.src.strip_prefix(&home).unwrap();
                    let s = rel.to_string_lossy();
                    for trusted in ["registry/src", "checkouts", "bin", ".cache/uv", "pnpm"] {
                        assert!(!s.contains(trusted), "{eco:?} shares {s}");
                    }
                } else {
                    assert!(m.src.starts_with(&own), "{eco:?}: {m:?}");
                }
            }
        }
        let crate_link = own.join("cargo/registry/cache/idx/a-1.0.0.crate");
        assert_eq!(
            fs::read_link(&crate_link).unwrap(),
            Path::new(SHARED_ROOT).join("cargo/registry/cache/idx/a-1.0.0.crate")
        );
        // A crate the lockfile pins is a copy (never a link the host could leave dangling).
        let names: Vec<String> = pinned_crates(&home.join("project/Cargo.lock"))
            .into_iter()
            .collect();
        assert_eq!(names, ["p-2.0.0.crate"], "registry packages only");
        let pinned = own.join("cargo/registry/cache/idx/p-2.0.0.crate");
        assert!(fs::symlink_metadata(&pinned).unwrap().is_file());
        assert_eq!(fs::read_to_string(&pinned).unwrap(), "pinned");
        assert_eq!(
            fs::read_to_string(own.join("cargo/registry/index/idx/.cache/a/a")).unwrap(),
            "entry"
        );
        assert!(!own.join("cargo/registry/src").exists());
        assert!(!own.join("cargo/bin").exists());
        let alt = fs::read_to_string(own.join("cargo/git/db/d-1/objects/info/alternates"));
        assert_eq!(
            alt.unwrap().trim(),
            format!("{SHARED_ROOT}/cargo/git/db/d-1/objects")
        );
        // Copies, not links: a write to the box's copy is the box's alone.
        let uv = own.join("uv/archive-v0/x/m.py");
        assert!(!fs::symlink_metadata(&uv).unwrap().file_type().is_symlink());
        fs::write(&uv, "evil").unwrap();
        assert_eq!(
            fs::read_to_string(home.join(".cache/uv/archive-v0/x/m.py")).unwrap(),
            "pass"
        );
        let (h0, h1) = pnpm::tests::HEX.split_at(2);
        assert!(own.join(format!("pnpm/v3/files/{h0}/{h1}")).is_file());
        assert!(!own.join("pnpm/v3/files/00/ab").exists(), "not pinned");
        assert!(own.join("npm/_cacache/index-v5/00/11/k").is_file());
        assert!(
            fs::symlink_metadata(own.join("npm/_cacache/content-v2/sha512/00/11/22"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(!own.join("gomod/m@v1").exists());
    }

    /// No HOME (or a relative one, or relative variables): nothing of wherever treebox
    /// runs is taken for the user's caches.
    #[test]
    fn without_a_home_nothing_of_the_host_is_read() {
        let d = tempfile::tempdir().unwrap();
        let cwd_relative = |_: &str| Some(std::ffi::OsString::from("relative/dir"));
        for eco in Ecosystem::ALL {
            let own = d.path().join("caches");
            let v = view_with(eco, Path::new(""), &own, d.path(), &cwd_relative).unwrap();
            assert!(v.mounts.iter().all(|m| !m.readonly), "{eco:?}: {v:?}");
            assert_eq!(v.mounts.len(), 1, "{eco:?}");
        }
    }

    #[test]
    fn go_reads_the_hosts_downloads_as_a_proxy() {
        let d = tempfile::tempdir().unwrap();
        let (home, own) = (d.path().join("home"), d.path().join("caches"));
        let project = home.join("project");
        let v = view_with(Ecosystem::Go, &home, &own, &project, &|_| None).unwrap();
        assert!(v.env.contains(&("GOPROXY".into(), GO_PROXY_DEFAULT.into())));
        plant(&home);
        let v = view_with(Ecosystem::Go, &home, &own, &project, &|_| None).unwrap();
        let proxy = format!("file://{SHARED_ROOT}/gomod,{GO_PROXY_DEFAULT}");
        assert!(v.env.contains(&("GOPROXY".into(), proxy)), "{:?}", v.env);
        assert!(v.env.contains(&("GOFLAGS".into(), "-modcacherw".into())));
    }

    /// What a box left in its layer is removed, never followed: a planted symlink to a
    /// host directory leaves that directory whole.
    #[test]
    fn reset_never_follows_what_a_box_left() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        write(&victim.join("keep"), "k");
        let own = d.path().join("caches");
        fs::create_dir_all(own.join("cargo/registry")).unwrap();
        std::os::unix::fs::symlink(&victim, own.join("cargo/registry/cache")).unwrap();
        let ro = own.join("gomod/m@v1");
        write(&ro.join("f.go"), "x");
        fs::set_permissions(&ro, fs::Permissions::from_mode(0o500)).unwrap();
        reset(&own).unwrap();
        assert!(own.is_dir() && fs::read_dir(&own).unwrap().next().is_none());
        assert_eq!(fs::read_to_string(victim.join("keep")).unwrap(), "k");
    }
}
