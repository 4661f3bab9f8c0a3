//! How large a file of a box's git data may be before the host refuses to read it
//! (SPEC §8.8).
//!
//! A box writes its own git data (a clone's `.git`, a sandboxed worktree's bare clone,
//! a worktree's registration under the user's `worktrees/`). libgit2 reads some files
//! whole (`HEAD`, `config*`, `packed-refs`, loose refs, `commondir`, `gitdir`,
//! alternates) and maps others (`index`): a sparse 4 GB `packed-refs`, which costs the
//! box no disk, made `list` take seconds and gigabytes, and `list --dirty`, `ls` and
//! `run` of every box run for minutes. Every file the host reads there is held to a
//! cap first; over it, the box is `broken` (named by `list` and `doctor`, with
//! `teardown --force` as the way out) and nothing of it is read.
//!
//! Caps scale with the user's repository, so that a monorepo's boxes are not broken:
//! the cap of a file that grows with the repository (`index`, `packed-refs`,
//! `config`, reflogs, the commit-graph, …) is the larger of a fixed floor and [`SCALE`] times the size
//! of the same file in the user's own git dir. Files git keeps to one line (`HEAD`,
//! `commondir`, `gitdir`, a loose ref, alternates) have a fixed cap.
//!
//! Where treebox reads such a file itself it goes through
//! [`crate::untrusted::read_regular`] (open once, `fstat` the handle, read at most the
//! cap): no race. Where libgit2 must open the repository, its files are measured
//! first ([`crate::git::repo::plain_git_dir`]) and libgit2 opens them by path after:
//! a file the box swaps in between those two moments is read whole. That race is what
//! remains; it is bounded in that it costs the one command that lost it (the next
//! command measures the swapped file and calls the box broken), and the box must
//! win it again, on a window of microseconds, for each command it slows. The hot
//! path of `list` (the branch and tip of a box with git data of its own) reads
//! `HEAD` and the ref from memory instead (see [`crate::boxes::OwnGit`]).

use std::path::Path;

/// A file that grows with the repository may be this many times larger in a box than
/// in the user's own git dir.
pub const SCALE: u64 = 4;

/// The cap of files git keeps to a line or a few (`HEAD`, `commondir`, `gitdir`,
/// `ORIG_HEAD`, `locked`, a loose ref, `objects/info/alternates`).
pub const SMALL: u64 = 64 << 10;

/// Files that grow with the repository, each with its floor; the cap is the larger
/// of the floor and [`SCALE`] times the user's own file of that name.
const SCALED: [(&str, u64); 12] = [
    ("index", 32 << 20),
    ("packed-refs", 32 << 20),
    ("logs/HEAD", 32 << 20),
    ("FETCH_HEAD", 32 << 20),
    ("shallow", 32 << 20),
    ("objects/info/commit-graph", 32 << 20),
    ("objects/pack/multi-pack-index", 32 << 20),
    ("config", 1 << 20),
    ("config.worktree", 1 << 20),
    ("info/attributes", 1 << 20),
    ("info/exclude", 1 << 20),
    ("info/sparse-checkout", 1 << 20),
];

/// The caps on a box's git files, by file name (relative to a git dir).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    scaled: [u64; SCALED.len()],
}

impl Caps {
    /// The floors alone: for a box whose repository is not known.
    pub const FLOOR: Caps = {
        let mut scaled = [0; SCALED.len()];
        let mut i = 0;
        while i < SCALED.len() {
            scaled[i] = SCALED[i].1;
            i += 1;
        }
        Caps { scaled }
    };

    /// The caps for the boxes of the repository whose own git dir is `main_common`
    /// (the user's, never a box's: a box would raise its own caps). One `stat` per
    /// scaled file.
    pub fn of(main_common: &Path) -> Caps {
        let mut caps = Caps::FLOOR;
        for (cap, (name, floor)) in caps.scaled.iter_mut().zip(SCALED) {
            let own = std::fs::metadata(main_common.join(name)).map_or(0, |m| m.len());
            *cap = floor.max(own.saturating_mul(SCALE));
        }
        caps
    }

    /// The cap of the file `name` (relative to a git dir: `HEAD`, `refs/heads/x`,
    /// `index`, `logs/refs/heads/x`).
    pub fn of_file(&self, name: &str) -> u64 {
        if let Some(i) = SCALED.iter().position(|(n, _)| *n == name) {
            return self.scaled[i];
        }
        // Any reflog: as large as the HEAD one may be.
        if name.starts_with("logs/") {
            return self.of_file("logs/HEAD");
        }
        SMALL
    }

    /// The cap of a config file git includes from a box's config.
    pub fn config(&self) -> u64 {
        self.of_file("config")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_are_floors_or_scaled_from_the_users_own_files() {
        let d = tempfile::tempdir().unwrap();
        let floors = Caps::of(d.path());
        assert_eq!(floors, Caps::FLOOR);
        assert_eq!(floors.of_file("HEAD"), SMALL);
        assert_eq!(floors.of_file("refs/heads/main"), SMALL);
        assert_eq!(floors.of_file("packed-refs"), 32 << 20);
        assert_eq!(floors.of_file("logs/refs/heads/x"), 32 << 20);
        // A monorepo's 20 MB index: its boxes may have an index four times that.
        let index = std::fs::File::create(d.path().join("index")).unwrap();
        index.set_len(20 << 20).unwrap();
        let caps = Caps::of(d.path());
        assert_eq!(caps.of_file("index"), 80 << 20);
        assert_eq!(caps.of_file("packed-refs"), 32 << 20);
        // The one-line files do not grow with anything.
        std::fs::write(d.path().join("HEAD"), vec![b'x'; 1 << 20]).unwrap();
        assert_eq!(Caps::of(d.path()).of_file("HEAD"), SMALL);
    }
}
