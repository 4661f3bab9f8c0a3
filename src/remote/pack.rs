//! On the other machine: a laptop's box there, its branch as a git bundle for the
//! laptop (the `back` request under `diff`, `land` and `git sandbox fetch`/`bundle` of
//! a box there).
//!
//! The laptop names the commits it has (`haves`: the box's start commit it pinned,
//! origin's tip of the base, what it fetched back before); the bundle holds the box's
//! commits since those and every object they need that those do not reach, and names
//! the haves this machine has as its prerequisites — so the laptop can check that
//! nothing in it leans on an object it was not sent. Written with libgit2 from the
//! box's objects as `diff` reads them ([`crate::land::BoxGit`]: the box's own store
//! and its repository's, never an alternates line the box wrote), no git run under
//! the box's config. With the bundle go what `land` asks of a box first: whether its
//! agent's session is live, whether it holds uncommitted work or work outside its
//! branch, and its base.

use git2::Oid;
use serde_json::{json, Value};

use crate::boxes::BoxEntry;
use crate::git::Repo;
use crate::land::{BoxGit, OpenError};
use crate::state::Layout;

/// The most commits the laptop may name as ones it has.
pub use crate::land::far::MAX_HAVES;

/// Why the box's work could not be bundled.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error("box `{0}` has no commits on a branch to bring back")]
    NoBranch(String),
    #[error("box `{leaf}` has more than {limit} commits the laptop lacks: too many to bring back")]
    TooMany { leaf: String, limit: usize },
    #[error("`{0}` is not a commit id")]
    BadHave(String),
    /// An object the box would send is over the cap (SPEC §8.8, §8.10): refused before
    /// it is packed, never read whole.
    #[error(transparent)]
    TooLarge(crate::git::blobs::Oversized),
    #[error("could not pack box `{leaf}`'s commits")]
    Git {
        leaf: String,
        #[source]
        source: git2::Error,
    },
}

/// The bundle of `entry`'s branch against `haves`, and the document that goes before
/// it on the channel (`payload`: the bundle's length).
pub fn bundle(
    repo: &Repo,
    layout: &Layout,
    entry: &BoxEntry,
    haves: &[String],
    sent: &std::path::Path,
) -> Result<(Value, Vec<u8>), PackError> {
    let leaf = entry.leaf.to_string();
    let git = BoxGit::open(entry, repo)?;
    let (Some(branch), Some(tip)) = (git.branch.clone(), git.tip) else {
        return Err(PackError::NoBranch(leaf));
    };
    let fail = |source| PackError::Git {
        leaf: leaf.clone(),
        source,
    };
    let o = &git.objects;
    let odb = o.odb().map_err(fail)?;
    let mut prerequisites = Vec::new();
    for h in haves.iter().take(MAX_HAVES) {
        let oid = Oid::from_str(h)
            .ok()
            .filter(|_| h.len() == 40)
            .ok_or_else(|| PackError::BadHave(crate::sanitize::line(h)))?;
        let is_commit = odb
            .read_header(oid)
            .is_ok_and(|(_, kind)| kind == git2::ObjectType::Commit);
        if is_commit && !prerequisites.contains(&oid) {
            prerequisites.push(oid);
        }
    }
    let walk = || -> Result<git2::Revwalk<'_>, git2::Error> {
        let mut w = o.revwalk()?;
        w.push(tip)?;
        for p in &prerequisites {
            w.hide(*p)?;
        }
        Ok(w)
    };
    // Every new commit's header, then every object its trees add to what the laptop
    // sent (`sent`, the mirror), sized from its header before anything is packed: a
    // box's sparse gigabytes cost it a refusal, never this machine's memory.
    let cap = crate::git::blobs::cap_for(&repo.common_dir);
    let too_large = |e: crate::git::blobs::Oversized| match e {
        crate::git::blobs::Oversized::Git(e) => PackError::Git {
            leaf: leaf.clone(),
            source: e,
        },
        e => PackError::TooLarge(e),
    };
    let mut new_commits = Vec::new();
    for c in walk().map_err(fail)? {
        let c = c.map_err(fail)?;
        if new_commits.len() >= crate::git::history::MAX_READ {
            return Err(PackError::TooMany {
                leaf,
                limit: crate::git::history::MAX_READ,
            });
        }
        crate::git::blobs::header_within(o, c, cap).map_err(too_large)?;
        new_commits.push(c);
    }
    let sent_repo = git2::Repository::open_bare(sent).ok();
    let sent_odb = sent_repo.as_ref().and_then(|r| r.odb().ok());
    let was_sent = |oid: Oid| sent_odb.as_ref().is_some_and(|s| s.exists(oid));
    crate::git::blobs::check_new(o, &new_commits, &was_sent, cap).map_err(too_large)?;
    let commits = new_commits.len();
    let mut pb = o.packbuilder().map_err(fail)?;
    pb.insert_walk(&mut walk().map_err(fail)?).map_err(fail)?;
    let mut pack = git2::Buf::new();
    pb.write_buf(&mut pack).map_err(fail)?;
    let mut data = b"# v2 git bundle\n".to_vec();
    for p in &prerequisites {
        data.extend_from_slice(format!("-{p}\n").as_bytes());
    }
    data.extend_from_slice(format!("{tip} refs/heads/{branch}\n\n").as_bytes());
    data.extend_from_slice(&pack);
    let a = crate::boxes::assess(entry, repo);
    let doc = json!({
        "schemaVersion": 1,
        "name": leaf,
        "branch": branch,
        "tip": tip.to_string(),
        "commits": commits,
        "base": entry.record.as_ref().map(|r| r.base.clone()),
        "path": entry.path,
        "live": crate::state::session::is_live(&layout.session_path(&entry.leaf)),
        "dirty": a.dirty,
        "unreturnedOther": a.unreturned_other,
        "payload": data.len(),
    });
    Ok((doc, data))
}
