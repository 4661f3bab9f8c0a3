//! Where the summary cache's paths live ([`Bases`]): its inputs are named briefly
//! under them.

use std::path::{Path, PathBuf};

use crate::state::list_cache::{Dir, Stamp};

/// Each base's tag, in [`Bases::bases`]'s order.
const TAGS: [&str; 4] = ["c/", "b/", "k/", "s/"];

/// The directories most inputs are under, so the cache names them briefly: `c/…`
/// under the git dir, `b/…` under the box root, `k/…` under the checkouts root of
/// container boxes, `s/…` under the state dir; any other path in full. Each base is
/// held open ([`Bases::opened`]): an input's identity is taken from its base (a walk
/// of its short name), not from `/`.
pub(super) struct Bases<'a> {
    bases: [&'a Path; 4],
    open: [Option<Dir>; 4],
}

impl<'a> Bases<'a> {
    /// The bases, each opened once for [`Self::stamp`] (one that cannot be opened is
    /// walked to from `/`).
    pub fn opened(
        common: &'a Path,
        box_root: &'a Path,
        checkout_root: &'a Path,
        state: &'a Path,
    ) -> Bases<'a> {
        let bases = [common, box_root, checkout_root, state];
        let open = bases.map(|b| (!b.as_os_str().is_empty()).then(|| Dir::open(b)).flatten());
        Bases { bases, open }
    }

    /// The base `short` is under, its index and the rest of `short`.
    fn split<'s>(&self, short: &'s str) -> Option<(usize, &'s str)> {
        let i = TAGS.iter().position(|t| short.starts_with(t))?;
        Some((i, &short[2..]))
    }
}

impl Bases<'_> {
    /// `path`, shortened (`None` when it is not UTF-8: not kept).
    pub fn short(&self, path: &Path) -> Option<String> {
        for (tag, base) in TAGS.iter().zip(self.bases) {
            if base.as_os_str().is_empty() {
                continue;
            }
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

    /// The identity of the path `short` names, as [`Stamp::lstat`] gives it (`buf`:
    /// room for the path, reused); `None` for a path `short` does not write.
    pub fn stamp(&self, short: &str, buf: &mut Scratch) -> Option<Stamp> {
        if let Some((dir, rest)) = self
            .split(short)
            .and_then(|(i, rest)| Some((self.open[i].as_ref()?, rest)))
        {
            return dir.lstat(rest, &mut buf.c);
        }
        if !self.full_into(short, &mut buf.path) {
            return None;
        }
        Stamp::lstat(&buf.path)
    }

    /// [`Self::full`], into `buf` (false: not a path `short` writes).
    fn full_into(&self, short: &str, buf: &mut PathBuf) -> bool {
        buf.clear();
        let (base, rest) = match self.split(short) {
            Some((i, rest)) => (self.bases[i], rest),
            None if short.starts_with('/') => (Path::new("/"), short),
            None => return false,
        };
        buf.push(base);
        buf.push(rest);
        true
    }
}

/// Room for the paths [`Bases::stamp`] builds, reused from one call to the next.
#[derive(Default)]
pub(super) struct Scratch {
    path: PathBuf,
    c: Vec<u8>,
}
