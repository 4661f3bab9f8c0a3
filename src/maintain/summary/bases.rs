//! Where the summary cache's paths live ([`Bases`]) and those directories held open
//! while the kept boxes are checked ([`Dirs`]).

use std::path::{Path, PathBuf};

use crate::state::list_cache::{self, Stamp};

/// The directories most inputs are under, so the cache names them briefly: `c/…`
/// under the git dir, `b/…` under the box root, `s/…` under the state dir; any other
/// path in full.
pub(super) struct Bases<'a> {
    pub common: &'a Path,
    pub box_root: &'a Path,
    pub state: &'a Path,
}

impl Bases<'_> {
    /// `path`, shortened (`None` when it is not UTF-8: not kept).
    pub fn short(&self, path: &Path) -> Option<String> {
        for (tag, base) in [
            ("c/", self.common),
            ("b/", self.box_root),
            ("s/", self.state),
        ] {
            if let Ok(rest) = path.strip_prefix(base) {
                return Some(format!("{tag}{}", rest.to_str()?));
            }
        }
        path.to_str().map(str::to_string)
    }

    /// The path [`Self::short`] shortened.
    pub fn full(&self, short: &str) -> Option<PathBuf> {
        let mut p = PathBuf::new();
        self.full_into(short, &mut p).then_some(p)
    }

    /// The identity of the path `short` names, as [`Stamp::lstat`] gives it: taken
    /// under the open base directory where there is one (`dirs`), else by the whole
    /// path (`buf`: room for it, reused).
    pub fn stamp(&self, short: &str, dirs: &Dirs, buf: &mut PathBuf) -> Option<Stamp> {
        let dir = match short.get(..2) {
            Some("c/") => dirs.common.as_ref(),
            Some("b/") => dirs.box_root.as_ref(),
            Some("s/") => dirs.state.as_ref(),
            _ => None,
        };
        if let (Some(dir), Some(rest)) = (dir, short.get(2..)) {
            match Stamp::lstat_at(dir, Path::new(rest)) {
                Ok(s) => return Some(s),
                // A kernel or a seccomp filter without statx: the whole path, below.
                Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {}
                Err(_) => return None,
            }
        }
        if !self.full_into(short, buf) {
            return None;
        }
        Stamp::lstat(buf)
    }

    /// [`Self::full`], into `buf` (false: not a path `short` writes).
    fn full_into(&self, short: &str, buf: &mut PathBuf) -> bool {
        buf.clear();
        let (base, rest) = match (short.get(..2), short.get(2..)) {
            (Some("c/"), Some(rest)) => (self.common, rest),
            (Some("b/"), Some(rest)) => (self.box_root, rest),
            (Some("s/"), Some(rest)) => (self.state, rest),
            _ if short.starts_with('/') => (Path::new("/"), short),
            _ => return false,
        };
        buf.push(base);
        buf.push(rest);
        true
    }
}

/// The [`Bases`] held open while the kept boxes are checked (`None`: not a
/// directory now; its paths are taken whole, and do not hold).
pub(super) struct Dirs {
    common: Option<list_cache::Dir>,
    box_root: Option<list_cache::Dir>,
    state: Option<list_cache::Dir>,
}

impl Dirs {
    pub fn open(bases: &Bases) -> Dirs {
        Dirs {
            common: list_cache::Dir::open(bases.common),
            box_root: list_cache::Dir::open(bases.box_root),
            state: list_cache::Dir::open(bases.state),
        }
    }
}
