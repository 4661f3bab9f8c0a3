//! Boxes whose git data is their own, apart from the user's repository: a clone
//! (its `.git`) and a sandboxed worktree (a worktree of its own bare clone, SPEC §6).
//!
//! The box writes that git data, so the host reads it as hostile: through libgit2
//! only, after [`crate::git::repo::plain_git_dir`] has said no read can block and no
//! file is past its size cap ([`crate::git::caps`], scaled from the user's repository
//! the record names), and — for a sandboxed worktree — only at the paths the record
//! names (the bare clone, and its registration `<bare>/worktrees/<leaf>`), never where
//! a `.git` pointer file or a `commondir` the box rewrote would lead. What `list`
//! reads of every box, its `HEAD` and the ref it names, treebox reads itself, each
//! file measured on the open handle ([`OwnGit::head_and_time`]): no race with a file
//! swapped in after the measure.

use std::path::{Path, PathBuf};

use crate::git::caps::Caps;
use crate::git::repo::{canonical, read_plain};
use crate::state::Record;
use crate::vocab::GitMode;

/// Where a box keeps its own git data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnGit {
    /// The repository's git dir: the clone's `.git`, or the bare clone.
    pub common: PathBuf,
    /// Where the checkout's HEAD and index are: the clone's `.git` again, or the
    /// worktree's registration in the bare clone.
    pub head_dir: PathBuf,
    /// The checkout.
    pub workdir: PathBuf,
    /// How large its files may be, scaled from the user's repository (SPEC §8.8).
    pub caps: Caps,
}

impl OwnGit {
    /// The clone at `path`, its files held to the floors of the caps (its repository
    /// unknown; see [`Self::with_caps`]).
    pub fn clone_at(path: &Path) -> OwnGit {
        OwnGit {
            common: path.join(".git"),
            head_dir: path.join(".git"),
            workdir: path.to_path_buf(),
            caps: Caps::FLOOR,
        }
    }

    /// The same git data, its files held to `caps`.
    pub fn with_caps(self, caps: Caps) -> OwnGit {
        OwnGit { caps, ..self }
    }

    /// A box's own git data, as its record names it; `None` for a worktree of the
    /// user's repository and a folder.
    pub fn of(record: &Record) -> Option<OwnGit> {
        match record.git_mode {
            GitMode::Clone => {
                Some(OwnGit::clone_at(&record.path).with_caps(Caps::of(&record.common_dir)))
            }
            GitMode::Worktree => record.bare_clone.as_ref().map(|bare| OwnGit {
                common: bare.clone(),
                head_dir: bare.join("worktrees").join(&record.name),
                workdir: record.path.clone(),
                caps: Caps::of(&record.common_dir),
            }),
            GitMode::Folder => None,
        }
    }

    /// A sandboxed worktree (rather than a clone).
    pub fn is_worktree(&self) -> bool {
        self.head_dir != self.common
    }

    /// Can every git dir a read opens be read without blocking, and does the
    /// registration point back at the bare clone (its `commondir` is `../..`)?
    /// And is none of it hostile as `list` judges it (a box `broken`)? Without that, a
    /// symlink out (the bare's `config`, the registration's `HEAD`, linked to the
    /// user's) would be read through by libgit2, and junk misread: `down` saw a box
    /// on the user's branch with nothing to lose, `bundle` nothing to bundle.
    ///
    /// One judgement, [`super::registration::hostile_own_git`] (which walks the git
    /// dirs with [`crate::git::repo::plain_git_dir`] and checks `commondir`): `list`
    /// asks it per box.
    pub fn readable(&self) -> bool {
        let is_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
        is_dir(&self.common)
            && (!self.is_worktree() || is_dir(&self.head_dir))
            && super::registration::hostile_own_git(self).is_none()
    }

    /// The registration's `commondir` names the bare clone (as `git worktree add`
    /// writes it, or as an absolute path to it).
    pub fn commondir_ok(&self) -> bool {
        read_plain(&self.head_dir.join("commondir")).is_some_and(|t| {
            let t = t.trim_end_matches(['\n', '\r']);
            t == "../.." || canonical(Path::new(t)) == canonical(&self.common)
        })
    }

    /// The checkout as libgit2 sees it (HEAD, index and work tree), when
    /// [`Self::readable`].
    ///
    /// A sandboxed worktree whose checkout is gone (the user's `git clean -ffdx`, or a
    /// hand) opens all the same, as its git data alone — HEAD, the bare clone's refs
    /// and objects — which still hold the agent's commits: who reads its work tree
    /// must ask whether the checkout exists first.
    pub fn open(&self) -> Option<git2::Repository> {
        if !self.readable() {
            return None;
        }
        self.open_judged()
    }

    /// [`Self::open`], for a caller that has just asked [`Self::readable`].
    fn open_judged(&self) -> Option<git2::Repository> {
        if !self.is_worktree() {
            return git2::Repository::open(&self.workdir).ok();
        }
        if !std::fs::symlink_metadata(&self.workdir).is_ok_and(|m| m.is_dir()) {
            return git2::Repository::open_ext(
                &self.head_dir,
                git2::RepositoryOpenFlags::NO_SEARCH,
                std::iter::empty::<&std::ffi::OsStr>(),
            )
            .ok();
        }
        let repo = git2::Repository::open(&self.head_dir).ok()?;
        repo.set_workdir(&self.workdir, false).ok()?;
        Some(repo)
    }

    /// The branch and tip checked out now (runs nothing). An unborn branch (no commits
    /// yet) is named with no tip.
    pub fn head(&self) -> Option<(Option<String>, Option<git2::Oid>)> {
        self.head_and_time().map(|(b, tip, _)| (b, tip))
    }

    /// [`Self::head`], and the tip's commit time (seconds since the epoch): what `list`
    /// shows of every box. `HEAD` and the ref it names are read from memory
    /// ([`Self::read_head`]); libgit2 opens the box only to find the tip commit.
    pub fn head_and_time(&self) -> Option<(Option<String>, Option<git2::Oid>, Option<i64>)> {
        if !self.readable() {
            return None;
        }
        let (branch, tip) = self.read_head()?;
        let time = tip.and_then(|t| {
            self.open_judged()?
                .find_commit(t)
                .ok()
                .map(|c| c.time().seconds())
        });
        Some((branch, tip, time))
    }

    /// `HEAD` and the ref it names (a loose ref, else its line in `packed-refs`), each
    /// file opened once, measured on the open handle and read up to its cap (SPEC
    /// §8.8): libgit2 would read `packed-refs` whole, with no cap, on every `list`.
    /// The branch is the ref the chain ends at, when it is under `refs/heads/`; `None`
    /// when a file is unreadable, too large or junk.
    fn read_head(&self) -> Option<(Option<String>, Option<git2::Oid>)> {
        use crate::untrusted::{read_regular, Links, Unread};
        let read = |dir: &Path, name: &str| {
            read_regular(&dir.join(name), self.caps.of_file(name), Links::Refuse)
        };
        let head = read(&self.head_dir, "HEAD").ok()?;
        let head = std::str::from_utf8(&head).ok()?.trim_end();
        let Some(first) = head.strip_prefix("ref: ") else {
            return Some((None, Some(full_oid(head)?)));
        };
        let mut target = first.to_string();
        let branch = |r: &str| r.strip_prefix("refs/heads/").map(str::to_string);
        // git follows at most five symbolic refs.
        for _ in 0..5 {
            if !git2::Reference::is_valid_name(&target) || !target.starts_with("refs/") {
                return None;
            }
            let text = match read(&self.common, &target) {
                Ok(bytes) => String::from_utf8(bytes).ok()?,
                // Not a loose ref (a directory of refs is not one either): packed, or
                // unborn.
                Err(Unread::Absent | Unread::NotRegular) => {
                    let tip = match read(&self.common, "packed-refs") {
                        Ok(packed) => packed_ref(&packed, &target)?,
                        Err(Unread::Absent) => None,
                        Err(_) => return None,
                    };
                    return Some((branch(&target), tip));
                }
                Err(_) => return None,
            };
            let text = text.trim_end();
            match text.strip_prefix("ref: ") {
                Some(next) => target = next.to_string(),
                None => return Some((branch(&target), Some(full_oid(text)?))),
            }
        }
        None
    }
}

/// A whole object id, as git writes one in a ref (libgit2's parser would also take
/// a prefix, padded).
fn full_oid(hex: &str) -> Option<git2::Oid> {
    let whole = hex.len() == 40 && hex.bytes().all(|b| b.is_ascii_hexdigit());
    whole.then(|| git2::Oid::from_str(hex).ok()).flatten()
}

/// The object `refname` names in the text of a `packed-refs` file: `Some(None)` when
/// it names none, `None` when the line that names it is junk.
fn packed_ref(packed: &[u8], refname: &str) -> Option<Option<git2::Oid>> {
    for line in packed.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(space) = line.iter().position(|&b| b == b' ') else {
            continue;
        };
        if line.starts_with(b"#")
            || line.starts_with(b"^")
            || &line[space + 1..] != refname.as_bytes()
        {
            continue;
        }
        return full_oid(std::str::from_utf8(&line[..space]).ok()?).map(Some);
    }
    Some(None)
}

#[cfg(test)]
mod tests {
    use super::packed_ref;
    use super::OwnGit;
    use crate::git::caps::Caps;

    /// A sandboxed worktree whose checkout was removed: its git data still answers.
    #[test]
    fn a_sandboxed_worktree_s_git_is_read_without_its_checkout() {
        let d = tempfile::tempdir().unwrap();
        let git = |dir: &std::path::Path, args: &[&str]| {
            let out = std::process::Command::new("git")
                .current_dir(dir)
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        let bare = d.path().join("git");
        let work = d.path().join("box");
        git(d.path(), &["init", "-q", "--bare", "git"]);
        git(
            &bare,
            &["worktree", "add", "-q", "-b", "b", work.to_str().unwrap()],
        );
        git(&work, &["commit", "-q", "--allow-empty", "-m", "agent"]);
        let tip = git(&work, &["rev-parse", "HEAD"]);
        let own = OwnGit {
            common: bare.clone(),
            head_dir: bare.join("worktrees/box"),
            workdir: work.clone(),
            caps: Caps::FLOOR,
        };
        assert!(own.open().unwrap().workdir().is_some());
        std::fs::remove_dir_all(&work).unwrap();
        let r = own.open().expect("the bare clone is still there");
        assert_eq!(r.head().unwrap().target().unwrap().to_string(), tip.trim());
        let (branch, head, _) = own.head_and_time().unwrap();
        assert_eq!(branch.as_deref(), Some("b"));
        assert_eq!(head.unwrap().to_string(), tip.trim());
        // A clone's git was in its checkout.
        assert!(OwnGit::clone_at(&work).open().is_none());
    }

    #[test]
    fn a_ref_is_found_in_packed_refs_text() {
        let a = "1111111111111111111111111111111111111111";
        let b = "2222222222222222222222222222222222222222";
        let text = format!(
            "# pack-refs with: peeled fully-peeled sorted \n{a} refs/heads/main\n{b} refs/tags/v1\n^{a}\n{b} refs/heads/main2\r\n"
        );
        let oid = |s: &str| Some(Some(git2::Oid::from_str(s).unwrap()));
        assert_eq!(packed_ref(text.as_bytes(), "refs/heads/main"), oid(a));
        assert_eq!(packed_ref(text.as_bytes(), "refs/heads/main2"), oid(b));
        assert_eq!(packed_ref(text.as_bytes(), "refs/heads/none"), Some(None));
        assert_eq!(
            packed_ref(b"junk refs/heads/main\n", "refs/heads/main"),
            None
        );
    }
}
