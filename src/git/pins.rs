//! What the repository-level config sets — the files a box may write (SPEC §8.1, §8.4).
//!
//! Two readers, and a key either one finds counts:
//!
//! - a conservative walk through libgit2 (which runs nothing) of `<common>/config`, the
//!   worktree's `config.worktree`, and every file they include, *whatever the
//!   condition* of an `includeIf`, with include paths expanded in every form git
//!   expands: `~/`, `~user/`, `%(prefix)/`, absolute, and relative to the including
//!   file;
//! - git itself, when any of those files mentions an include (or libgit2 cannot read
//!   one): `git config --list --includes --show-origin --show-scope -z`, which executes
//!   nothing and reports every entry git would see, with its scope. Its local and
//!   worktree entries count. At most one such process per repository and content per
//!   treebox process; a repository without includes costs none.

use std::collections::HashSet;
use std::ffi::{CStr, CString, OsStr, OsString};
use std::hash::{Hash, Hasher};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::cmd::Cmd;

/// A config entry as git stores it: bytes, not necessarily UTF-8 (git runs a
/// non-UTF-8 value as readily as any other).
pub(crate) type Entry = (OsString, OsString);

/// Every entry the repository-level config files set, by either reader.
pub(crate) fn repo_level_entries(common_dir: &Path, worktree_config: Option<&Path>) -> Vec<Entry> {
    let mut walk = Walk::default();
    walk.file(&common_dir.join("config"), 0);
    // git's listing runs in the main worktree's context: what it sees depends on the
    // shared config (and what that includes), not on another worktree's file.
    let fingerprint = walk.fingerprint.finish();
    if let Some(w) = worktree_config {
        walk.file(w, 0);
    }
    let mut out = walk.entries;
    if walk.mentions_include || walk.unreadable {
        out.extend(git_listing(common_dir, fingerprint));
    }
    out
}

#[derive(Default)]
struct Walk {
    entries: Vec<Entry>,
    seen: HashSet<PathBuf>,
    /// Some file's bytes name `include` (any case): git may read beyond these files.
    mentions_include: bool,
    /// Some file exists that libgit2 could not read through: ask git.
    unreadable: bool,
    fingerprint: std::collections::hash_map::DefaultHasher,
}

impl Walk {
    fn file(&mut self, path: &Path, depth: usize) {
        // git itself stops at 10 levels of includes. Only regular files are read: a
        // FIFO would hang the read.
        if depth > 10 || !path.is_file() || !self.seen.insert(path.to_path_buf()) {
            return;
        }
        let Some(bytes) = read_config(path) else {
            self.unreadable = true;
            return;
        };
        path.hash(&mut self.fingerprint);
        bytes.hash(&mut self.fingerprint);
        if bytes
            .to_ascii_lowercase()
            .windows(7)
            .any(|w| w == b"include")
        {
            self.mentions_include = true;
        }
        // libgit2 follows includes itself: one naming a FIFO would block it.
        if blocking_include(path).is_some() {
            self.unreadable = true;
            return;
        }
        let Ok(cfg) = git2::Config::open(path) else {
            self.unreadable = true;
            return;
        };
        let mut includes = Vec::new();
        match cfg.entries(None) {
            Ok(mut entries) => loop {
                match entries.next() {
                    None => break,
                    Some(Err(_)) => {
                        self.unreadable = true;
                        break;
                    }
                    Some(Ok(e)) => {
                        let n = OsStr::from_bytes(e.name_bytes()).to_os_string();
                        let v = OsStr::from_bytes(e.value_bytes()).to_os_string();
                        let lower = n.to_string_lossy().to_ascii_lowercase();
                        if lower == "include.path"
                            || (lower.starts_with("includeif.") && lower.ends_with(".path"))
                        {
                            includes.push(v.clone());
                        }
                        self.entries.push((n, v));
                    }
                }
            },
            Err(_) => self.unreadable = true,
        }
        let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        for inc in includes {
            for target in expand_include(&inc, &dir) {
                self.file(&target, depth + 1);
            }
        }
    }
}

/// An include target, reached from the config file `path` through `include.path` or
/// `includeIf.<cond>.path` (whatever the condition, up to git's 10 levels), that exists
/// but is not a regular file: git and libgit2 would block reading a FIFO or a device.
/// Read as text, with nothing opened but regular files, so asking never hangs.
pub(crate) fn blocking_include(path: &Path) -> Option<PathBuf> {
    fn walk(path: &Path, depth: usize, seen: &mut HashSet<PathBuf>) -> Option<PathBuf> {
        if depth > 10 || !seen.insert(path.to_path_buf()) {
            return None;
        }
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() {
            return (depth > 0).then(|| path.to_path_buf());
        }
        // Swapped for a FIFO since, or too large to be a config: git would hang or
        // choke on it as well.
        let Some(bytes) = read_config(path) else {
            return (depth > 0).then(|| path.to_path_buf());
        };
        let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        for inc in include_values(&bytes) {
            for target in expand_include(&inc, &dir) {
                if let Some(b) = walk(&target, depth + 1, seen) {
                    return Some(b);
                }
            }
        }
        None
    }
    walk(path, 0, &mut HashSet::new())
}

/// The largest config file read (a larger one is not read: it is nobody's config).
const CONFIG_CAP: u64 = 16 << 20;

/// A config file's bytes, links followed as git follows them, but only when what was
/// opened is a regular file of at most [`CONFIG_CAP`]: opened without blocking and
/// judged by the open file, so a FIFO swapped in after a `stat` is never waited on.
fn read_config(path: &Path) -> Option<Vec<u8>> {
    use crate::untrusted::{read_regular, Links};
    read_regular(path, CONFIG_CAP, Links::Follow).ok()
}

/// Does this config text name any include (a `path` of `[include]` or `[includeIf]`)?
/// Without one, [`blocking_include`] of the file reads nothing but the file itself.
pub(crate) fn names_include(bytes: &[u8]) -> bool {
    !include_values(bytes).is_empty()
}

/// The `path` values of `[include]` and `[includeIf "…"]` sections, read as text
/// (quotes removed; a value git would read differently only adds a place to look).
fn include_values(bytes: &[u8]) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut in_include = false;
    for line in bytes.split(|&c| c == b'\n') {
        let mut l = line.trim_ascii();
        if let Some(rest) = l.strip_prefix(b"[") {
            let name: Vec<u8> = rest
                .iter()
                .take_while(|&&c| c != b']' && c != b' ' && c != b'\t' && c != b'"' && c != b'.')
                .map(u8::to_ascii_lowercase)
                .collect();
            in_include = name == b"include" || name == b"includeif";
            // `[include] path = x` on one line.
            l = match rest.iter().position(|&c| c == b']') {
                Some(end) => rest[end + 1..].trim_ascii(),
                None => continue,
            };
        }
        if !in_include {
            continue;
        }
        let Some(eq) = l.iter().position(|&c| c == b'=') else {
            continue;
        };
        if !l[..eq].trim_ascii().eq_ignore_ascii_case(b"path") {
            continue;
        }
        let v = l[eq + 1..].trim_ascii();
        let v = v
            .strip_prefix(b"\"")
            .and_then(|v| v.strip_suffix(b"\""))
            .unwrap_or(v);
        if !v.is_empty() {
            out.push(OsStr::from_bytes(v).to_os_string());
        }
    }
    out
}

/// Where git may find an included file: `inc` as written in a file in `dir`. More than
/// one place for `%(prefix)/`, whose value depends on how git was built.
fn expand_include(inc: &OsStr, dir: &Path) -> Vec<PathBuf> {
    let b = inc.as_bytes();
    if let Some(rest) = b.strip_prefix(b"%(prefix)/") {
        let rest = Path::new(OsStr::from_bytes(rest));
        return prefixes().iter().map(|p| p.join(rest)).collect();
    }
    if let Some(tilde) = b.strip_prefix(b"~") {
        let slash = tilde.iter().position(|&c| c == b'/').unwrap_or(tilde.len());
        let (user, rest) = tilde.split_at(slash);
        let home = if user.is_empty() {
            std::env::var_os("HOME").map(PathBuf::from)
        } else {
            home_of(OsStr::from_bytes(user))
        };
        let Some(home) = home else {
            return Vec::new();
        };
        // git appends the rest ("/…") to the home directory as text.
        let mut p = home.into_os_string();
        p.push(OsStr::from_bytes(rest));
        return vec![PathBuf::from(p)];
    }
    let p = Path::new(inc);
    if p.is_absolute() {
        vec![p.to_path_buf()]
    } else {
        vec![dir.join(p)]
    }
}

/// The home directory of `user` from the password database, as git looks it up.
fn home_of(user: &OsStr) -> Option<PathBuf> {
    let name = CString::new(user.as_bytes()).ok()?;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: getpwnam_r writes only into `pwd` and `buf` (whose length is passed);
    // `pw_dir` points into `buf`, read before `buf` is dropped.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwnam_r(
            name.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        );
        if rc != 0 || result.is_null() || pwd.pw_dir.is_null() {
            return None;
        }
        let dir = CStr::from_ptr(pwd.pw_dir).to_bytes();
        Some(PathBuf::from(OsStr::from_bytes(dir)))
    }
}

/// Every value git's `%(prefix)` may have: the directory above each `bin/` holding a
/// `git` on `PATH` (and above the one it resolves to: a runtime-prefix build), the
/// usual build prefixes, and `/`.
fn prefixes() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ["/", "/usr", "/usr/local"].map(PathBuf::from).to_vec();
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let git = dir.join("git");
        if !git.is_file() {
            continue;
        }
        let resolved = std::fs::canonicalize(&git).ok();
        for g in std::iter::once(git).chain(resolved) {
            for up in [2, 3] {
                // …/bin/git → …; …/libexec/git-core/git → …
                if let Some(p) = g.ancestors().nth(up) {
                    if !out.iter().any(|o| o == p) {
                        out.push(p.to_path_buf());
                    }
                }
            }
        }
    }
    out
}

/// Listings already made in this process: (repository, content) → entries.
static LISTINGS: Mutex<Vec<(PathBuf, u64, Vec<Entry>)>> = Mutex::new(Vec::new());

/// The local and worktree entries git itself resolves in the repository at
/// `common_dir` (its main worktree's context), includes followed as git follows them.
/// Nothing on failure: the walk stands alone.
fn git_listing(common_dir: &Path, fingerprint: u64) -> Vec<Entry> {
    if let Ok(memo) = LISTINGS.lock() {
        if let Some((_, _, e)) = memo
            .iter()
            .find(|(d, f, _)| d == common_dir && *f == fingerprint)
        {
            return e.clone();
        }
    }
    let mut git_dir = OsString::from("--git-dir=");
    git_dir.push(common_dir.as_os_str());
    let mut c = Cmd::new("git").arg(git_dir).args([
        "config",
        "--list",
        "--includes",
        "--show-origin",
        "--show-scope",
        "-z",
    ]);
    for k in super::cli::SCRUBBED_ENV {
        c = c.env_remove(*k);
    }
    let entries = match stdout_within(&c.env("LC_ALL", "C"), LISTING_LIMIT) {
        Some(out) => parse_listing(&out),
        None => Vec::new(),
    };
    if let Ok(mut memo) = LISTINGS.lock() {
        memo.push((common_dir.to_path_buf(), fingerprint, entries.clone()));
    }
    entries
}

/// How long git may take to list the config: an include naming a FIFO would block it.
const LISTING_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// `cmd`'s stdout when it exits successfully within `limit`; else it is killed.
fn stdout_within(cmd: &Cmd, limit: std::time::Duration) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd
        .to_command()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut pipe = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    // git config spawns nothing: its stdout closes when it exits.
    let out = rx.recv_timeout(limit).ok();
    if out.is_none() {
        let _ = child.kill();
    }
    let status = child.wait().ok()?;
    out.filter(|_| status.success())
}

/// `scope NUL origin NUL key [LF value] NUL`, repeated; local and worktree entries.
fn parse_listing(out: &[u8]) -> Vec<Entry> {
    let mut fields = out.split(|&b| b == 0);
    let mut entries = Vec::new();
    while let (Some(scope), Some(_origin), Some(kv)) = (fields.next(), fields.next(), fields.next())
    {
        if scope != b"local" && scope != b"worktree" {
            continue;
        }
        let (k, v) = match kv.iter().position(|&b| b == b'\n') {
            Some(i) => (&kv[..i], &kv[i + 1..]),
            None => (kv, &b""[..]),
        };
        entries.push((
            OsStr::from_bytes(k).to_os_string(),
            OsStr::from_bytes(v).to_os_string(),
        ));
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_values_are_read_as_text() {
        let cfg = b"[core]\n\tpath = not-me\n[include]\n\tpath = a.cfg\n\
                    [includeIf \"gitdir:/x/\"]\n\tPath = \"b c.cfg\"\n[include] path = d\n";
        let got: Vec<_> = include_values(cfg).into_iter().collect();
        assert_eq!(got, ["a.cfg", "b c.cfg", "d"].map(OsString::from));
    }

    use crate::testing::mkfifo;

    #[test]
    fn an_include_naming_a_fifo_blocks_and_a_file_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        std::fs::write(dir.path().join("ok.cfg"), "[user]\n\tname = x\n").unwrap();
        std::fs::write(dir.path().join("mid.cfg"), "[include]\n\tpath = fifo\n").unwrap();
        let top = dir.path().join("config");
        std::fs::write(&top, "[include]\n\tpath = ok.cfg\n").unwrap();
        assert_eq!(blocking_include(&top), None);
        std::fs::write(
            &top,
            "[include]\n\tpath = ok.cfg\n[include]\n\tpath = mid.cfg\n",
        )
        .unwrap();
        assert_eq!(blocking_include(&top), Some(fifo.clone()));
        // The file itself being a FIFO is the caller's to judge: nothing is opened.
        assert_eq!(blocking_include(&fifo), None);
    }

    #[test]
    fn a_config_is_read_only_when_what_is_opened_is_a_small_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("ok.cfg");
        std::fs::write(&cfg, "[user]\n\tname = x\n").unwrap();
        assert_eq!(
            read_config(&cfg).as_deref(),
            Some(&b"[user]\n\tname = x\n"[..])
        );
        // Links are followed, as git follows them.
        let link = dir.path().join("link.cfg");
        std::os::unix::fs::symlink(&cfg, &link).unwrap();
        assert!(read_config(&link).is_some());
        // A FIFO is opened without waiting for a writer, and not read.
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        assert_eq!(read_config(&fifo), None);
        let big = dir.path().join("big.cfg");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(CONFIG_CAP + 1).unwrap();
        assert_eq!(read_config(&big), None);
        assert_eq!(read_config(dir.path()), None);
    }

    #[test]
    fn every_include_form_is_expanded() {
        let dir = Path::new("/r/.git");
        let home = std::env::var_os("HOME").map(PathBuf::from);
        assert_eq!(
            expand_include(OsStr::new("~/x.cfg"), dir),
            home.iter().map(|h| h.join("x.cfg")).collect::<Vec<_>>()
        );
        assert_eq!(
            expand_include(OsStr::new("~root/../b/x.cfg"), dir),
            vec![PathBuf::from("/root/../b/x.cfg")]
        );
        assert!(expand_include(OsStr::new("~no-such-user-here/x"), dir).is_empty());
        let pre = expand_include(OsStr::new("%(prefix)/../../b/x.cfg"), dir);
        assert!(
            pre.contains(&PathBuf::from("/usr/../../b/x.cfg")),
            "{pre:?}"
        );
        assert!(pre.contains(&PathBuf::from("/../../b/x.cfg")), "{pre:?}");
        assert_eq!(
            expand_include(OsStr::new("../b/x.cfg"), dir),
            vec![PathBuf::from("/r/.git/../b/x.cfg")]
        );
        assert_eq!(
            expand_include(OsStr::new("/abs/x.cfg"), dir),
            vec![PathBuf::from("/abs/x.cfg")]
        );
    }

    #[test]
    fn a_listing_that_blocks_is_given_up() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        mkfifo(&fifo);
        let start = std::time::Instant::now();
        let c = Cmd::new("sh").args(["-c", "exec cat \"$0\"", &fifo.to_string_lossy()]);
        assert_eq!(
            stdout_within(&c, std::time::Duration::from_millis(200)),
            None
        );
        assert!(start.elapsed() < std::time::Duration::from_secs(3));
    }

    #[test]
    fn listing_keeps_repository_scopes_only() {
        let out = b"global\0file:/h/.gitconfig\0core.pager\nless\0local\0file:.git/config\0core.fsmonitor\ntouch x\0worktree\0file:.git/config.worktree\0core.flag\0command\0command line:\0core.editor\nvi\0";
        let e = parse_listing(out);
        assert_eq!(
            e,
            vec![
                ("core.fsmonitor".into(), "touch x".into()),
                ("core.flag".into(), "".into())
            ]
        );
    }
}
