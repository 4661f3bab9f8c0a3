//! From the laptop: a box on another machine, its branch brought back (issue 41's
//! second slice, under `git sandbox fetch`/`bundle`, `diff` and `land` of a box
//! there).
//!
//! [`bring`] tells the machine the commits this repository has
//! ([`crate::land::far::haves`]) and takes the bundle its treebox makes
//! ([`super::pack`] there) into a capped file of this repository's state, as it
//! arrives; [`Brought`] then holds it with what the machine said of the box (its
//! branch, base, whether its agent is live, whether it holds other work), every word
//! of which is a claim. Nothing of the bundle is read until [`Brought::import`] or
//! [`Brought::keep`] has it checked as box-written data ([`crate::land::far`]).

use std::path::{Path, PathBuf};

use git2::Oid;
use serde_json::Value;

use super::RemoteError;
use crate::config::Machine;
use crate::git::Repo;
use crate::land::back::{BackError, FetchedBack};
use crate::land::far;
use crate::provision::clone::Bundle;
use crate::state::Layout;

/// Why a box's work did not come back from its machine.
#[derive(Debug, thiserror::Error)]
pub enum BringError {
    #[error(transparent)]
    Remote(#[from] RemoteError),
    #[error("could not make room for its bundle in {}", .0.display())]
    Room(PathBuf, #[source] std::io::Error),
}

/// A box's bundle from its machine, not yet checked, with what the machine said.
pub struct Brought {
    /// The machine's document (unchecked claims; texts unsanitised).
    pub doc: Value,
    file: tempfile::TempPath,
    haves: Vec<Oid>,
    leaf: String,
}

/// Ask `m` (the repository's key there: `key`) for box `leaf`'s branch.
pub fn bring(
    m: &Machine,
    key: &str,
    leaf: &str,
    repo: &Repo,
    layout: &Layout,
) -> Result<Brought, BringError> {
    let haves = far::haves(repo, leaf);
    let dir = layout.repo_state.join("far");
    let room = |e| BringError::Room(dir.clone(), e);
    std::fs::create_dir_all(&dir).map_err(room)?;
    let file = tempfile::Builder::new()
        .prefix("from-")
        .suffix(".bundle")
        .tempfile_in(&dir)
        .map_err(room)?
        .into_temp_path();
    let doc = super::boxes::back_from(m, key, leaf, &haves, &file)?;
    Ok(Brought {
        doc,
        file,
        haves,
        leaf: leaf.to_string(),
    })
}

impl Brought {
    /// Whether the machine says the box's agent session is live.
    pub fn live(&self) -> bool {
        self.doc["live"].as_bool().unwrap_or(true)
    }

    /// Whether it says the box holds uncommitted work (`None`: it could not tell).
    pub fn dirty(&self) -> Option<bool> {
        self.doc["dirty"].as_bool()
    }

    /// Whether it says the box holds work outside its branch.
    pub fn unreturned_other(&self) -> Option<bool> {
        self.doc["unreturnedOther"].as_bool()
    }

    /// The base branch it says the box was made from, when that is a branch name.
    pub fn base(&self) -> Option<String> {
        self.doc["base"]
            .as_str()
            .filter(|b| crate::names::check_existing_branch(b).is_ok())
            .map(str::to_string)
    }

    /// Check the bundle and import its branch into `refs/hort/<name>/incoming`.
    pub fn import(&self, repo: &Repo, layout: &Layout) -> Result<FetchedBack, BackError> {
        far::import(repo, layout, &self.leaf, &self.file, &self.haves)
    }

    /// Check the bundle and keep it at `out` (a directory gets `<name>.bundle`).
    pub fn keep(self, repo: &Repo, layout: &Layout, out: &Path) -> Result<Bundle, BackError> {
        let v = far::verify(repo, layout, &self.file, &self.haves).map_err(BackError::Far)?;
        let out = if out.is_dir() {
            out.join(format!("{}.bundle", self.leaf))
        } else {
            out.to_path_buf()
        };
        let write = |source| {
            BackError::Bundle(crate::provision::clone::BundleError::Write {
                path: out.clone(),
                source,
            })
        };
        std::fs::copy(&self.file, &out).map_err(write)?;
        Ok(Bundle {
            path: out.clone(),
            ..v.bundle
        })
    }
}
