//! A box on another machine, its work brought back (issue 41): the bundle that
//! machine's treebox streamed over SSH ([`crate::remote::pack`] there) is checked here
//! as any box-written data before a byte of it reaches the user's repository, then
//! imported into `refs/hort/<name>/incoming`, as a clone's is ([`super::back`]).
//!
//! The machine is trusted for nothing. [`haves`] are the commits the laptop tells it
//! it has; [`import`] then refuses a bundle unless:
//! - its header is a v2 bundle of exactly one `refs/heads/<branch>` (a valid branch
//!   name), read at most [`MAX_HEADER`] bytes, and each prerequisite is one of the
//!   haves: it cannot lean on any other commit of the user's repository;
//! - its pack stands alone: indexed in a quarantine repository of its own with no
//!   other objects (a thin pack, whose deltas would borrow the user's objects, does
//!   not index), no object over the repository's cap ([`crate::git::blobs::cap_for`]),
//!   at most [`crate::git::history::MAX_READ`] commits;
//! - every commit from its tip down to the haves, and every object those reach that
//!   the haves do not, is in that pack (`git rev-list --objects` in the quarantine,
//!   now borrowing the user's objects read-only): a tree naming a blob of another
//!   branch of the user's is refused, not resolved.
//!
//! Only then is the bundle fetched into `incoming`, moved off no work that nothing
//! else keeps ([`clone::check_incoming_kept`]). git runs in the quarantine (treebox's
//! own config) and in the user's repository with the usual pins; nothing of the
//! machine's is executed.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use git2::Oid;

use super::back::{BackError, FetchedBack};
use crate::git::cli::GitCli;
use crate::git::Repo;
use crate::provision::clone::{self, Bundle, BundleError};
use crate::state::Layout;

/// The most bytes of a bundle's header read.
pub const MAX_HEADER: u64 = 64 << 10;

/// How long checking a bundle's objects may take.
const CHECK_DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

/// Why a machine's bundle was refused.
#[derive(Debug, thiserror::Error)]
pub enum FarError {
    #[error("its bundle is not one git bundle of one branch: {0}")]
    Header(&'static str),
    #[error("its bundle leans on commit {0}, which this repository never sent it")]
    Borrows(Oid),
    #[error("its bundle's pack does not stand alone (it borrows objects it does not hold)")]
    Thin,
    #[error("its bundle reaches {0}, which it does not hold and this repository never sent it")]
    Reaches(String),
    #[error("its bundle holds more than {0} commits: too many to bring back")]
    TooManyCommits(usize),
    #[error(transparent)]
    TooLarge(crate::git::blobs::Oversized),
    #[error("checking its bundle took over {} s", CHECK_DEADLINE.as_secs())]
    Slow,
    #[error("could not check its bundle in {}", .0.display())]
    Quarantine(PathBuf, #[source] std::io::Error),
    #[error("could not check its bundle: {0}")]
    Git(String),
}

/// The most commits the laptop names as ones it has.
pub const MAX_HAVES: usize = 64;

/// The commits the laptop says it has, for the box `leaf` there: the commit it was
/// sent to start from ([`sent_ref`]), what was fetched back from it before, and
/// origin's branches (origin's default first), at most [`MAX_HAVES`] — the commits a
/// box there may have built on.
pub fn haves(repo: &Repo, leaf: &str) -> Vec<Oid> {
    let mut refs = vec![sent_ref(leaf), clone::incoming_ref(leaf)];
    if let Some(head) = repo.origin_head_branch() {
        refs.push(format!("refs/remotes/origin/{head}"));
    }
    if let Ok(all) = repo.git.references_glob("refs/remotes/origin/*") {
        refs.extend(
            all.flatten()
                .filter_map(|r| r.name().ok().map(str::to_string)),
        );
    }
    let mut out = Vec::new();
    for r in refs {
        if out.len() >= MAX_HAVES {
            break;
        }
        let commit = repo
            .git
            .find_reference(&r)
            .and_then(|r| r.peel_to_commit())
            .map(|c| c.id());
        if let Ok(oid) = commit {
            if !out.contains(&oid) {
                out.push(oid);
            }
        }
    }
    out
}

/// What a bundle's header says.
struct Header {
    prerequisites: Vec<Oid>,
    tip: Oid,
    branch: String,
    /// Where its pack starts.
    pack_at: u64,
}

fn header(file: &Path) -> Result<Header, FarError> {
    let bad = FarError::Header;
    let f = std::fs::File::open(file).map_err(|e| FarError::Quarantine(file.to_path_buf(), e))?;
    let mut r = std::io::BufReader::new(f.take(MAX_HEADER));
    let mut line = Vec::new();
    let mut at = 0u64;
    let mut next = |line: &mut Vec<u8>| -> Result<(), FarError> {
        line.clear();
        let n = r
            .read_until(b'\n', line)
            .map_err(|_| bad("it cannot be read"))?;
        if n == 0 || line.last() != Some(&b'\n') {
            return Err(bad("its header has no end"));
        }
        line.pop();
        at += n as u64;
        Ok(())
    };
    next(&mut line)?;
    if line != b"# v2 git bundle" {
        return Err(bad("it is not a v2 git bundle"));
    }
    let oid = |hex: &[u8]| {
        std::str::from_utf8(hex)
            .ok()
            .filter(|h| h.len() == 40)
            .and_then(|h| Oid::from_str(h).ok())
    };
    let mut prerequisites = Vec::new();
    let mut tips = Vec::new();
    loop {
        next(&mut line)?;
        if line.is_empty() {
            break;
        }
        if let Some(rest) = line.strip_prefix(b"-") {
            let hex = rest.split(|&b| b == b' ').next().unwrap_or_default();
            prerequisites.push(oid(hex).ok_or(bad("a prerequisite is not a commit id"))?);
        } else {
            let (hex, name) = line
                .split_at_checked(40)
                .ok_or(bad("a reference line is malformed"))?;
            let name = name
                .strip_prefix(b" refs/heads/")
                .and_then(|n| std::str::from_utf8(n).ok())
                .filter(|n| crate::names::check_existing_branch(n).is_ok())
                .ok_or(bad("it holds something other than a branch"))?;
            tips.push((
                oid(hex).ok_or(bad("a tip is not a commit id"))?,
                name.to_string(),
            ));
        }
    }
    let [(tip, branch)] =
        <[_; 1]>::try_from(tips).map_err(|_| bad("it holds more than one branch"))?;
    Ok(Header {
        prerequisites,
        tip,
        branch,
        pack_at: at,
    })
}

/// A machine's bundle, checked (see the module doc).
pub struct Verified {
    pub bundle: Bundle,
    /// The quarantine it was checked in: its objects and, borrowed, the user's.
    quarantine: tempfile::TempDir,
}

/// Check the machine's bundle at `file` (see the module doc); nothing is written to
/// the user's repository. `haves`: what the laptop told the machine it has.
pub fn verify(
    repo: &Repo,
    layout: &Layout,
    file: &Path,
    haves: &[Oid],
) -> Result<Verified, FarError> {
    let h = header(file)?;
    if let Some(p) = h.prerequisites.iter().find(|p| !haves.contains(p)) {
        return Err(FarError::Borrows(*p));
    }
    let dir = layout.repo_state.join("far");
    std::fs::create_dir_all(&dir).map_err(|e| FarError::Quarantine(dir.clone(), e))?;
    let quarantine = tempfile::Builder::new()
        .prefix("quarantine-")
        .tempdir_in(&dir)
        .map_err(|e| FarError::Quarantine(dir.clone(), e))?;
    let commits = check(repo, quarantine.path(), file, &h)?;
    Ok(Verified {
        bundle: Bundle {
            path: file.to_path_buf(),
            branch: h.branch,
            tip: h.tip,
            prerequisites: h.prerequisites,
            commits,
        },
        quarantine,
    })
}

/// Check the machine's bundle at `file` ([`verify`]) and import its branch into
/// `refs/hort/<leaf>/incoming`.
pub fn import(
    repo: &Repo,
    layout: &Layout,
    leaf: &str,
    file: &Path,
    haves: &[Oid],
) -> Result<FetchedBack, BackError> {
    let incoming = clone::incoming_ref(leaf);
    let v = verify(repo, layout, file, haves).map_err(BackError::Far)?;
    let b = &v.bundle;
    if repo.git.refname_to_id(&incoming).ok() == Some(b.tip) {
        return Ok(FetchedBack {
            branch: b.branch.clone(),
            tip: b.tip,
            commits: 0,
        });
    }
    let both = git2::Repository::open_bare(v.quarantine.path()).ok();
    clone::check_incoming_kept(repo, leaf, both.as_ref(), b)?;
    GitCli::for_repo(&repo.common_dir, None)
        .cmd(&repo.main_root)
        .args(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head"])
        .arg(file.as_os_str())
        .arg(format!("+refs/heads/{}:{incoming}", b.branch))
        .output()
        .map_err(BundleError::Import)?;
    Ok(FetchedBack {
        branch: b.branch.clone(),
        tip: b.tip,
        commits: b.commits,
    })
}

/// The ref that pins, in the user's repository, the commit a box on another machine
/// was sent to start from: the commit its bundles may lean on, kept from `git gc`.
/// Not `refs/hort/<leaf>/base`: `git sandbox prune` takes that for a box this machine
/// no longer has.
pub fn sent_ref(leaf: &str) -> String {
    format!("refs/hort/{leaf}/sent")
}

/// Pin `tip` for box `leaf` made on another machine ([`sent_ref`]); best effort (a
/// box whose pin is missing brings back more of its history).
pub fn pin(repo: &Repo, leaf: &str, tip: &str) {
    if let Ok(oid) = Oid::from_str(tip) {
        let _ = repo.git.reference(
            &sent_ref(leaf),
            oid,
            true,
            "treebox: a box sent to another machine",
        );
    }
}

/// Remove box `leaf`'s [`sent_ref`] (it was removed there). Its incoming ref stays.
pub fn unpin(repo: &Repo, leaf: &str) {
    if let Ok(mut r) = repo.git.find_reference(&sent_ref(leaf)) {
        let _ = r.delete();
    }
}

/// The checks on the pack (see the module doc), in the quarantine repository `q`;
/// the number of commits it brings.
fn check(repo: &Repo, q: &Path, file: &Path, h: &Header) -> Result<usize, FarError> {
    let git_err = |e: crate::cmd::CmdError| FarError::Git(crate::sanitize::line(e.stderr()));
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |e| FarError::Quarantine(p, e)
    };
    GitCli::plain()
        .cmd(q)
        .args(["init", "--quiet", "--bare", "."])
        .output()
        .map_err(git_err)?;
    // The pack alone, indexed with no other object at hand: a thin one fails here.
    let pack = q.join("objects/pack/pack-incoming.pack");
    {
        let mut from = std::fs::File::open(file).map_err(io(file))?;
        std::io::Seek::seek(&mut from, std::io::SeekFrom::Start(h.pack_at)).map_err(io(file))?;
        let mut to = std::fs::File::create(&pack).map_err(io(&pack))?;
        std::io::copy(&mut from, &mut to).map_err(io(&pack))?;
    }
    let indexed = GitCli::plain()
        .cmd(q)
        .arg("index-pack")
        .arg(&pack)
        .output_within(CHECK_DEADLINE)
        .map_err(|_| FarError::Thin)?;
    match indexed {
        None => return Err(FarError::Slow),
        Some(out) if !out.status.success() => return Err(FarError::Thin),
        Some(_) => {}
    }
    let own = {
        let odb = git2::Odb::new().map_err(|e| FarError::Git(e.to_string()))?;
        let objects = q.join("objects");
        odb.add_disk_alternate(&objects.to_string_lossy())
            .map_err(|e| FarError::Git(e.to_string()))?;
        odb
    };
    // Sizes and counts, from the headers of what it holds.
    let cap = crate::git::blobs::cap_for(&repo.common_dir);
    let mut held = Vec::new();
    own.foreach(|oid| {
        held.push(*oid);
        true
    })
    .map_err(|e| FarError::Git(e.to_string()))?;
    let mut commits = 0;
    for oid in &held {
        let (size, kind) = own
            .read_header(*oid)
            .map_err(|e| FarError::Git(e.to_string()))?;
        if size as u64 > cap {
            return Err(FarError::TooLarge(crate::git::blobs::Oversized::Object {
                kind: kind.str(),
                oid: *oid,
                size: size as u64,
                cap,
            }));
        }
        if kind == git2::ObjectType::Commit {
            commits += 1;
            if commits > crate::git::history::MAX_READ {
                return Err(FarError::TooManyCommits(crate::git::history::MAX_READ));
            }
        }
    }
    // Its tip is its own, or (nothing new) one of the commits this repository has.
    if !own.exists(h.tip) && !h.prerequisites.contains(&h.tip) {
        return Err(FarError::Reaches(h.tip.to_string()));
    }
    // Now borrowing the user's objects (read-only: nothing is written there): every
    // object from the tip down to the prerequisites must be the pack's own.
    let alternates = q.join("objects/info/alternates");
    std::fs::write(
        &alternates,
        format!("{}\n", repo.common_dir.join("objects").display()),
    )
    .map_err(io(&alternates))?;
    let mut list = GitCli::plain()
        .cmd(q)
        .args(["rev-list", "--objects", "--no-object-names"])
        .arg(h.tip.to_string());
    if !h.prerequisites.is_empty() {
        list = list.arg("--not");
        for p in &h.prerequisites {
            list = list.arg(p.to_string());
        }
    }
    let listed = match list.output_within(CHECK_DEADLINE) {
        Ok(Some(out)) if out.status.success() => out,
        Ok(None) => return Err(FarError::Slow),
        // An object it names that neither it nor the user's repository has.
        Ok(Some(out)) => {
            let said = String::from_utf8_lossy(&out.stderr);
            let first = said.lines().next().unwrap_or("a missing object");
            return Err(FarError::Reaches(crate::sanitize::line(first)));
        }
        Err(e) => return Err(FarError::Git(crate::sanitize::line(e.stderr()))),
    };
    let mut brought = 0;
    for line in listed
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
    {
        let oid = std::str::from_utf8(line)
            .ok()
            .and_then(|l| Oid::from_str(l.trim()).ok())
            .ok_or_else(|| FarError::Git("rev-list printed something else".into()))?;
        if !own.exists(oid) {
            return Err(FarError::Reaches(oid.to_string()));
        }
        if own
            .read_header(oid)
            .is_ok_and(|(_, k)| k == git2::ObjectType::Commit)
        {
            brought += 1;
        }
    }
    Ok(brought)
}
