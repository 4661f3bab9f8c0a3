//! What `list` shows of every box, kept between runs (issue 16): the summary cache.
//!
//! Reading one box costs `list` ~56 system calls (its registration, record, freshness,
//! the hostile-file judgement, its branch tip); checking a kept box costs one `lstat`
//! per file and directory it was read from. So `list` reads only the boxes that
//! changed, and keeps the cache ([`crate::state::list_cache`]) up to date as it goes.
//!
//! Invariants (each has a test in `tests/it/list_cache.rs`):
//! - The cache lives in host-owned bookkeeping, the repository's state dir: never in a
//!   box, its git dir or any mount of it. Anything wrong with the file reads as no cache.
//! - A kept box is reused only when every file and directory its entry and facts were
//!   derived from has the same `lstat` identity ([`Stamp`]: device, inode, type, size,
//!   mtime and ctime to the nanosecond) as when they were read (kept as one digest of
//!   them all, [`Identities`]; taken from the few directories they lie under, held
//!   open, [`bases::Bases::opened`]). A path that was absent
//!   is held by the nearest directory above it that exists, whose entries cannot change
//!   without its own mtime and ctime changing. The ctime cannot be set by an
//!   unprivileged process, so a file rewritten in place with its size and mtime kept is
//!   still seen.
//! - Whether a session is live is never kept, but whether the box's state dir holds
//!   any session file is ([`Facts::sessioned`], with that directory's identity): a
//!   kept box that had none still has none, and its session is not asked about.
//! - A box is kept only when every identity it was read from had settled ([`SETTLE`]
//!   before the `list` began): a change made while `list` read, or within a file
//!   system's timestamp granularity, can never carry the identity that was kept.
//! - Only boxes judged from bytes alone are kept: a worktree or folder box with a
//!   readable record, nothing but regular files and directories among its inputs (no
//!   symlink, FIFO or device), no path resolved to compare it (`canonicalize`), no
//!   include in its `config.worktree`. Clones, sandboxed worktrees and every box that
//!   is half-made, hostile or odd are read as before, on every `list`.
//! - The hostile-file judgement of a kept box was made under the size caps of its
//!   time ([`crate::git::caps`], scaled from the user's own files): a box file that
//!   grows changes its identity and is judged again; caps that shrink with the user's
//!   files leave a kept box as judged (its files no larger than they were read at).
//! - What does not come from files is never kept: whether a session is live, the
//!   agent's status (rewritten at will: read each time), the current time (ages are
//!   computed from kept timestamps when shown).
//! - A kept box is used only when the inventory, built with what the cache answers,
//!   gives the very entry it was kept with; the entry's facts are a function of that
//!   entry and its inputs. A box is kept only when its entry survives the trip through
//!   the file unchanged.
//!
//! Callers: `cli/list.rs` (`list`, `list --json`, `list --dirty`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::boxes::{self, BoxEntry, Known, Seen};
use crate::ecosystem::Ecosystem;
use crate::git::Repo;
use crate::names::Leaf;
use crate::state::list_cache::{self, Digester, Identities, Stamp};
use crate::state::{Layout, Record};
use crate::vocab::GitMode;

mod bases;
use bases::{Bases, Scratch};

/// How long before a `list` began every identity a kept box was read from must have
/// settled (its ctime): longer than any file system's timestamp granularity (ext4's
/// small inodes: 1 s) and the kernel's coarse clock, so a change made while `list`
/// read, or after, always shows as a new identity.
pub const SETTLE: Duration = Duration::from_secs(2);

/// The largest registration `HEAD` or `gitdir` kept (a longer one is read each time).
const MAX_KEPT_TEXT: usize = 4096;

/// Whether the box's dependencies match its record, as `list` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Deps {
    Fresh,
    Stale,
    Unknown,
}

impl Deps {
    pub fn as_str(self) -> &'static str {
        match self {
            Deps::Fresh => "fresh",
            Deps::Stale => "stale",
            Deps::Unknown => "unknown",
        }
    }
}

/// What `list` shows of a box, beyond its inventory entry, that comes from files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Facts {
    pub deps: Deps,
    /// A `.env` in the checkout ([`super::has_env_file`]).
    pub env: bool,
    /// [`BoxEntry::is_broken`].
    pub broken: bool,
    /// The time of the last commit on the box's branch.
    pub last_commit: Option<i64>,
    /// The box's tip: its branch's commit in the user's repository (a worktree), its
    /// own `HEAD`'s (a clone, a sandboxed worktree). Kept with the branch's ref among a
    /// kept box's inputs, so a tip that moves is read again; `landed` is keyed by it.
    pub tip: Option<Tip>,
    /// A session marker or exit file in the box's state dir when it was read. Kept
    /// with that directory's identity among the inputs: creating or removing a file
    /// there changes it, so `false` still holds for a kept box, and `list` asks no
    /// session of it ([`crate::cli::list::session_view`]).
    pub sessioned: bool,
}

/// A commit id kept in the cache (as hex).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tip(pub git2::Oid);

impl Serialize for Tip {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Tip {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Tip, D::Error> {
        let hex = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        git2::Oid::from_str(&hex)
            .map(Tip)
            .map_err(serde::de::Error::custom)
    }
}

/// One box as the cache keeps it: its inventory entry, its facts, and the identity of
/// every file and directory both were read from.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Kept {
    leaf: String,
    admin: Option<PathBuf>,
    branch: Option<String>,
    dir_exists: bool,
    /// The registration's `HEAD` and `gitdir` as read (with `admin` only).
    head: Option<String>,
    gitdir: Option<String>,
    record: Record,
    facts: Facts,
    /// Each input's path as [`Bases::short`] writes it.
    inputs: Vec<String>,
    /// Their identities when read, in order.
    identities: Identities,
}

impl Kept {
    /// Is every input as it was? (`buf`: room for the paths, reused.)
    fn holds(&self, bases: &Bases, buf: &mut Scratch) -> bool {
        let mut now = Digester::default();
        for p in &self.inputs {
            match bases.stamp(p, buf) {
                Some(s) => now.add(&s),
                None => return false,
            }
        }
        now.done() == self.identities
    }

    /// Is `e` the very entry it was kept with ([`Self::entry`], compared field by
    /// field without building it)?
    fn is(&self, e: &BoxEntry, layout: &Layout) -> bool {
        let BoxEntry {
            leaf,
            path,
            record,
            record_error,
            admin_dir,
            branch,
            dir_exists,
            own_tip_time,
            own_tip,
            seen,
        } = e;
        let seen_same = match (seen.as_deref(), &self.admin) {
            (None, None) => true,
            (Some(s), Some(admin)) => {
                s.admin == *admin
                    && s.head.as_deref() == self.head.as_deref().map(str::as_bytes)
                    && s.gitdir.as_deref() == self.gitdir.as_deref().map(str::as_bytes)
            }
            _ => false,
        };
        leaf.as_str() == self.leaf
            && *path == layout.path_of(leaf, Some(&self.record))
            && record.as_ref() == Some(&self.record)
            && record_error.is_none()
            && *admin_dir == self.admin
            && *branch == self.branch
            && *dir_exists == self.dir_exists
            && own_tip_time.is_none()
            && own_tip.is_none()
            && seen_same
    }

    /// The inventory entry it was kept with; without its record, what
    /// `registered_box` gives of its registration.
    fn entry(&self, leaf: &Leaf, layout: &Layout, with_record: bool) -> BoxEntry {
        BoxEntry {
            leaf: leaf.clone(),
            path: layout.path_of(leaf, Some(&self.record)),
            record: with_record.then(|| self.record.clone()),
            record_error: None,
            admin_dir: self.admin.clone(),
            branch: self.branch.clone(),
            dir_exists: self.dir_exists,
            own_tip_time: None,
            own_tip: None,
            seen: self.admin.as_ref().map(|admin| {
                Box::new(Seen {
                    admin: admin.clone(),
                    head: self.head.clone().map(String::into_bytes),
                    gitdir: self.gitdir.clone().map(String::into_bytes),
                })
            }),
        }
    }
}

/// The kept boxes that still hold, as the inventory asks for them.
struct Held<'a> {
    layout: &'a Layout,
    by_admin: HashMap<&'a Path, (&'a Leaf, &'a Kept)>,
    by_leaf: HashMap<&'a Leaf, &'a Kept>,
}

impl Known for Held<'_> {
    fn registration(&self, admin: &Path) -> Option<BoxEntry> {
        let (leaf, kept) = self.by_admin.get(admin)?;
        Some(kept.entry(leaf, self.layout, false))
    }

    fn recorded(&self, leaf: &Leaf) -> Option<(Record, bool)> {
        let kept = self.by_leaf.get(leaf)?;
        Some((kept.record.clone(), kept.dir_exists))
    }
}

/// Every box of the repository, as [`boxes::inventory`] finds it, with its [`Facts`]:
/// kept ones where they still hold, the others read (and kept for next time).
pub fn list(repo: &Repo, layout: &Layout) -> Vec<(BoxEntry, Facts)> {
    let began = SystemTime::now();
    let path = layout.list_cache_path();
    // Each kept box is parsed where it is checked, on the machine's cores (a cache of
    // 1,000 boxes is ~2 MB of JSON, a line per box).
    let lines = list_cache::load_lines_rooted(
        &path,
        &layout.box_root,
        Some(&layout.checkout_root),
        &repo.common_dir,
    );
    let raw = lines
        .as_ref()
        .map(list_cache::Lines::boxes)
        .unwrap_or_default();
    let bases = Bases::opened(
        &repo.common_dir,
        &layout.box_root,
        &layout.checkout_root,
        &layout.repo_state,
    );
    let checked = boxes::par::map(&raw, Scratch::default, |buf, r| {
        let k: Kept = serde_json::from_slice(r).ok()?;
        let leaf = Leaf::parse(&k.leaf).ok()?;
        let holds = k.holds(&bases, buf);
        Some(((leaf, k), holds))
    });
    let kept_before = raw.len();
    drop(raw);
    drop(lines);
    let (loaded, holds): (Vec<(Leaf, Kept)>, Vec<bool>) = checked.into_iter().flatten().unzip();
    let mut held = Held {
        layout,
        by_admin: HashMap::new(),
        by_leaf: HashMap::new(),
    };
    for ((leaf, kept), _) in loaded.iter().zip(&holds).filter(|(_, h)| **h) {
        held.by_leaf.insert(leaf, kept);
        if let Some(admin) = &kept.admin {
            held.by_admin.insert(admin, (leaf, kept));
        }
    }
    let entries = boxes::inventory_with(repo, layout, &held);
    // A kept box's facts hold when the inventory gives the very entry they were read with.
    let hits: Vec<Option<&Kept>> = entries
        .iter()
        .map(|e| {
            held.by_leaf
                .get(&e.leaf)
                .copied()
                .filter(|k| k.is(e, layout))
        })
        .collect();
    let misses: Vec<usize> = (0..entries.len()).filter(|&i| hits[i].is_none()).collect();
    let common_dir = repo.common_dir.as_path();
    let read = boxes::par::map(
        &misses,
        || (),
        |(), &i| {
            (
                facts_of(&entries[i], layout),
                inputs_of(&entries[i], layout, common_dir),
            )
        },
    );
    let mut facts: Vec<Option<Facts>> = hits.iter().map(|h| h.map(|k| k.facts)).collect();
    let mut new = Vec::new();
    for (&i, (mut f, inputs)) in misses.iter().zip(read) {
        let e = &entries[i];
        // The branch tip through the one libgit2 handle, on this thread.
        (f.tip, f.last_commit) = tip_and_time(e, repo);
        if let Some(inputs) = inputs.filter(|ins| settled(ins, began)) {
            new.extend(keep(e, f, &inputs, layout, &bases));
        }
        facts[i] = Some(f);
    }
    let reused = hits.iter().flatten().count();
    if (!new.is_empty() || reused != kept_before) && layout.repo_state.is_dir() {
        let all: Vec<&Kept> = hits.iter().flatten().copied().chain(&new).collect();
        // A cache: when it cannot be written, the next `list` reads the boxes again.
        let _ = list_cache::save_rooted(
            &path,
            &layout.box_root,
            Some(&layout.checkout_root),
            &repo.common_dir,
            &all,
        );
    }
    entries
        .into_iter()
        .zip(facts)
        .map(|(e, f)| (e, f.expect("every box has its facts, kept or read")))
        .collect()
}

/// The facts of `e`, read now (but its tip and last commit: [`tip_and_time`]).
fn facts_of(e: &BoxEntry, layout: &Layout) -> Facts {
    use crate::provision::setup;
    let deps = match &e.record {
        Some(r) if r.setup_completed && e.dir_exists => {
            let ecos = setup::detect(&e.path);
            if setup::lockfile_hash(&e.path, &ecos) == r.lockfile_hash {
                Deps::Fresh
            } else {
                Deps::Stale
            }
        }
        _ => Deps::Unknown,
    };
    Facts {
        deps,
        env: super::has_env_file(&e.path),
        broken: e.is_broken(),
        last_commit: None,
        tip: None,
        sessioned: sessioned(layout, &e.leaf),
    }
}

/// Is there a session marker or an exit file in the box's state dir ([`Facts::sessioned`])?
fn sessioned(layout: &Layout, leaf: &Leaf) -> bool {
    let marker = layout.session_path(leaf);
    std::fs::symlink_metadata(&marker).is_ok()
        || std::fs::symlink_metadata(crate::state::session::exit_path(&marker)).is_ok()
}

/// The tip of a box's branch and the time of its commit: a clone's (a sandboxed
/// worktree's) commits may exist only in the box's own git data, read there with its
/// branch by the inventory; a worktree's branch is the user's repository's.
fn tip_and_time(e: &BoxEntry, repo: &Repo) -> (Option<Tip>, Option<i64>) {
    if e.owns_git() {
        return (e.own_tip.map(Tip), e.own_tip_time);
    }
    let tip = e.shown_branch().and_then(|b| repo.local_branch(b));
    let time = tip
        .and_then(|oid| repo.git.find_commit(oid).ok())
        .map(|c| c.time().seconds());
    (tip.map(Tip), time)
}

/// The identities of what a box was read from, by path.
#[derive(Default)]
struct Inputs(BTreeMap<PathBuf, Stamp>);

impl Inputs {
    /// Note the identity of `path`: a regular file or a directory as it is (`Some`
    /// of it); a path that is absent by the nearest directory above it that exists
    /// (`Some(None)`). `None` for anything else (a symlink, a FIFO, a device, an error
    /// but absence, a path with `.` or `..`): the cache does not judge those.
    fn add(&mut self, path: &Path) -> Option<Option<Stamp>> {
        let plain = path.is_absolute()
            && path
                .components()
                .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
        if !plain {
            return None;
        }
        let mut at = path;
        loop {
            match std::fs::symlink_metadata(at) {
                Ok(m) => {
                    let s = Stamp::of(&m);
                    if !(s.is_dir() || (at == path && s.is_file())) {
                        return None;
                    }
                    self.0.insert(at.to_path_buf(), s);
                    return Some((at == path).then_some(s));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => at = at.parent()?,
                Err(_) => return None,
            }
        }
    }
}

/// Every file and directory the entry `e` and its [`facts_of`] and [`tip_and_time`] are
/// read from, with its identity now; `None` for a box the cache does not keep (see the
/// module's invariants). Mirrors `registered_box`, `load_recorded`, [`facts_of`],
/// [`BoxEntry::is_broken`] and [`tip_and_time`]: a read added there is an input here.
fn inputs_of(e: &BoxEntry, layout: &Layout, common_dir: &Path) -> Option<Vec<(PathBuf, Stamp)>> {
    let r = e.record.as_ref().filter(|_| e.record_error.is_none())?;
    if boxes::OwnGit::of(r).is_some() || e.own_tip_time.is_some() || e.own_tip.is_some() {
        return None;
    }
    if !matches!(r.git_mode, GitMode::Worktree | GitMode::Folder) || e.path != r.path {
        return None;
    }
    let mut ins = Inputs::default();
    // The inventory: the checkout, the record, the registration naming the box; the
    // record's directory, which holds the session files [`Facts::sessioned`] looked for.
    ins.add(&e.path)?;
    ins.add(&layout.record_path(&e.leaf))?;
    match ins.add(&layout.box_state(&e.leaf))? {
        Some(s) if s.is_dir() => {}
        _ => return None,
    }
    if let Some(admin) = &e.admin_dir {
        let seen = e.seen.as_deref().filter(|s| &s.admin == admin)?;
        let gitdir = std::str::from_utf8(seen.gitdir.as_deref()?).ok()?;
        let dotgit = Path::new(gitdir.trim_end_matches(['\n', '\r']));
        // Compared with the box root literally (else it was resolved).
        if dotgit.parent()?.parent()? != layout.box_root {
            return None;
        }
        ins.add(&admin.join("gitdir"))?;
        ins.add(&admin.join("HEAD"))?;
    }
    // Freshness: the lockfiles detected, the manifests and lockfiles hashed.
    if r.setup_completed && e.dir_exists {
        for eco in Ecosystem::ALL {
            ins.add(&e.path.join(eco.lockfile()))?;
            ins.add(&e.path.join(eco.manifest()))?;
        }
    }
    ins.add(&e.path.join(".env"))?;
    // Broken: the `.git` pointer, and the registration it names judged hostile or not.
    if r.checkout_completed && r.git_mode == GitMode::Worktree {
        ins.add(&r.path.join(".git"))?;
        let (admin, literal) = boxes::judged_admin(r);
        if !literal {
            return None;
        }
        ins.add(&admin)?;
        for f in boxes::REGISTRATION_SMALL
            .iter()
            .chain(boxes::REGISTRATION_LARGE)
        {
            ins.add(&admin.join(f))?;
        }
        // An include would be followed (to files anywhere): not judged from bytes alone.
        if read_regular(&admin.join("config.worktree"))?
            .is_some_and(|b| crate::git::names_include(&b))
        {
            return None;
        }
    }
    // The branch tip: its loose ref, else packed-refs (libgit2 reads them in that order).
    if let Some(b) = e.shown_branch() {
        let name = format!("refs/heads/{b}");
        if !git2::Reference::is_valid_name(&name) {
            return None;
        }
        match ins.add(&common_dir.join(&name))? {
            Some(s) if s.is_file() => {}
            Some(_) => return None,
            None => {
                ins.add(&common_dir.join("packed-refs"))?;
            }
        }
    }
    Some(ins.0.into_iter().collect())
}

/// The largest `config.worktree` read to look for includes (a larger one: not kept).
const MAX_CONFIG: u64 = 1 << 20;

/// The bytes of the regular file at `path`, `Some(None)` when there is none; `None`
/// when it is anything else or too large. Never a link followed, never a FIFO waited
/// on (a box can swap one in after its `lstat`).
fn read_regular(path: &Path) -> Option<Option<Vec<u8>>> {
    use crate::untrusted::{read_regular, Links, Unread};
    match read_regular(path, MAX_CONFIG, Links::Refuse) {
        Ok(b) => Some(Some(b)),
        Err(Unread::Absent) => Some(None),
        Err(_) => None,
    }
}

/// Had every input settled before `began` (see [`SETTLE`])?
fn settled(inputs: &[(PathBuf, Stamp)], began: SystemTime) -> bool {
    let Some(limit) = began
        .checked_sub(SETTLE)
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
    else {
        return false;
    };
    let limit = i128::try_from(limit.as_nanos()).unwrap_or(i128::MAX);
    inputs.iter().all(|(_, s)| s.ctime_ns() < limit)
}

/// `e` with its facts and inputs, as the cache keeps it, when it comes back from the
/// file as the very same entry.
fn keep(
    e: &BoxEntry,
    facts: Facts,
    inputs: &[(PathBuf, Stamp)],
    layout: &Layout,
    bases: &Bases,
) -> Option<Kept> {
    let text = |b: &Option<Vec<u8>>| -> Option<Option<String>> {
        match b {
            None => Some(None),
            Some(b) if b.len() <= MAX_KEPT_TEXT => String::from_utf8(b.clone()).ok().map(Some),
            Some(_) => None,
        }
    };
    let seen = e.seen.as_deref();
    if seen.map(|s| &s.admin) != e.admin_dir.as_ref() {
        return None;
    }
    let kept = Kept {
        leaf: e.leaf.to_string(),
        admin: e.admin_dir.clone(),
        branch: e.branch.clone(),
        dir_exists: e.dir_exists,
        head: match seen {
            Some(s) => text(&s.head)?,
            None => None,
        },
        gitdir: match seen {
            Some(s) => text(&s.gitdir)?,
            None => None,
        },
        record: e.record.clone()?,
        facts,
        inputs: inputs
            .iter()
            .map(|(p, _)| bases.short(p))
            .collect::<Option<_>>()?,
        identities: Identities::of(inputs.iter().map(|(_, s)| s)),
    };
    let back: Kept = serde_json::from_slice(&serde_json::to_vec(&kept).ok()?).ok()?;
    let same_inputs = back.inputs.len() == inputs.len()
        && back.identities == kept.identities
        && back
            .inputs
            .iter()
            .zip(inputs)
            .all(|(short, (p, _))| bases.full(short).as_deref() == Some(p.as_path()));
    // `is` is the allocation-free form of this comparison, for the hot path.
    let same = back.entry(&e.leaf, layout, true) == *e;
    (same && back.facts == facts && same_inputs).then_some(back)
}
