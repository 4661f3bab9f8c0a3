//! The files of bringing a clone box's work back (`git sandbox bundle` and `fetch`):
//! making the bundle's directory, streaming a bundle written aside, and removing
//! bundles once used. The bundle itself is written and imported by
//! [`crate::provision::clone`]; the CLI only names the paths (from [`crate::state`]).

use std::io::Read;
use std::path::Path;

/// Make `dir` (and its parents) so a bundle can be written into it.
pub fn make_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Open a bundle written aside, to stream it elsewhere (stdout).
pub fn open(path: &Path) -> std::io::Result<impl Read> {
    std::fs::File::open(path)
}

/// Remove a bundle that has served its purpose; one already gone is fine.
pub fn discard(path: &Path) {
    let _ = std::fs::remove_file(path);
}
