//! What each machine of the config last listed of a repository's boxes (issue 41):
//! kept so that `list`, `ls` and `watch` show a machine that cannot be asked now by its
//! last-known boxes, marked stale, rather than by nothing.
//!
//! One file per machine and repository key ([`path_of`], in the layout's map),
//! written whole on every answer (temp file + rename, 0600) and dropped box by box as
//! treebox removes boxes there ([`forget`]). It holds what another machine said, so it
//! is read back as hostile data: over [`MAX_BYTES`], not a regular file, not this
//! format, or written for another machine name or destination reads as nothing; every
//! box must be an object with a string `name`, at most [`MAX_BOXES`] of them. Its texts
//! are shown sanitised, as a fresh answer's are. A cache, never a source of truth: two
//! writers at once leave one whole file, and the next answer replaces it.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The file's format; a change in what is kept bumps it.
pub const FORMAT: u32 = 1;
/// Largest file read back: a machine's answer is capped at 4 MiB, and this is that
/// answer's boxes again.
pub const MAX_BYTES: u64 = 5 << 20;
/// The most boxes kept of one machine's listing of one repository.
pub const MAX_BOXES: usize = 10_000;

/// What a machine last said of a repository's boxes.
#[derive(Debug, Clone, PartialEq)]
pub struct Known {
    /// When it said so, in seconds since the epoch.
    pub at: u64,
    /// Its `list --json` entries, as it gave them (objects with a string `name`).
    pub boxes: Vec<Value>,
}

#[derive(Serialize, Deserialize)]
struct File {
    format: u32,
    /// The machine's name in the config and its destination then: a name given to
    /// another machine since does not inherit the old one's boxes.
    machine: String,
    ssh: String,
    at: u64,
    boxes: Vec<Value>,
}

/// `$XDG_STATE_HOME/treebox/machines/<machine>/<key>.json`: what machine `machine` of
/// the config last listed of the repository whose key there is `key`. `None` when
/// either is no plain name (lower-case letters, digits and `-`: a machine's name, a
/// key's hex digits), or without a state dir.
pub fn path_of(machine: &str, key: &str) -> Option<std::path::PathBuf> {
    let plain = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    if !plain(machine) || !plain(key) {
        return None;
    }
    let dir = super::layout::state_root().ok()?.join("machines");
    Some(dir.join(machine).join(format!("{key}.json")))
}

/// Keep `boxes` as what `machine` (its name, its `ssh` destination) listed of
/// repository `key` just now.
pub fn keep(machine: &str, ssh: &str, key: &str, boxes: &[Value]) -> std::io::Result<()> {
    match path_of(machine, key) {
        Some(p) => keep_at(&p, machine, ssh, boxes),
        None => Ok(()),
    }
}

/// What `machine` (name and destination) last listed of repository `key`, if it ever
/// answered and its file reads as this module wrote it.
pub fn last_known(machine: &str, ssh: &str, key: &str) -> Option<Known> {
    let file = read_at(&path_of(machine, key)?, machine, ssh)?;
    Some(Known {
        at: file.at,
        boxes: file.boxes,
    })
}

/// Drop box `name` from what `machine` last listed of repository `key`: treebox
/// removed it there. Nothing to do when it was not listed.
pub fn forget(machine: &str, ssh: &str, key: &str, name: &str) -> std::io::Result<()> {
    match path_of(machine, key) {
        Some(p) => forget_at(&p, machine, ssh, name),
        None => Ok(()),
    }
}

fn keep_at(p: &Path, machine: &str, ssh: &str, boxes: &[Value]) -> std::io::Result<()> {
    let file = File {
        format: FORMAT,
        machine: machine.to_string(),
        ssh: ssh.to_string(),
        at: super::record::now(),
        boxes: boxes.iter().take(MAX_BOXES).cloned().collect(),
    };
    write(p, &file)
}

fn write(p: &Path, file: &File) -> std::io::Result<()> {
    if let Some(dir) = p.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let bytes = serde_json::to_vec(file).expect("a JSON value serializes");
    // A cache, written on every listing: no fsync (a file a crash cuts short is not
    // read back, and the next answer writes it again).
    super::atomic::write_unsynced(p, &bytes, 0o600)
}

fn read_at(p: &Path, machine: &str, ssh: &str) -> Option<File> {
    let raw = crate::untrusted::read_regular(p, MAX_BYTES, crate::untrusted::Links::Refuse).ok()?;
    let mut file: File = serde_json::from_slice(&raw).ok()?;
    if file.format != FORMAT || file.machine != machine || file.ssh != ssh {
        return None;
    }
    file.boxes
        .retain(|b| b.is_object() && b["name"].is_string());
    file.boxes.truncate(MAX_BOXES);
    Some(file)
}

fn forget_at(p: &Path, machine: &str, ssh: &str, name: &str) -> std::io::Result<()> {
    let Some(mut file) = read_at(p, machine, ssh) else {
        return Ok(());
    };
    let before = file.boxes.len();
    file.boxes.retain(|b| b["name"] != name);
    if file.boxes.len() == before {
        return Ok(());
    }
    write(p, &file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn known(p: &Path, machine: &str, ssh: &str) -> Option<Vec<Value>> {
        read_at(p, machine, ssh).map(|f| f.boxes)
    }

    #[test]
    fn keeps_reads_back_and_forgets_one_box() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("machines/big/k.json");
        assert_eq!(known(&p, "big", "me@big"), None);
        let boxes = [json!({"name": "a", "state": "ok"}), json!({"name": "b"})];
        keep_at(&p, "big", "me@big", &boxes).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let file = read_at(&p, "big", "me@big").unwrap();
        assert_eq!(file.boxes, boxes);
        assert!(file.at > 0);
        // Another destination, or another name, is another machine.
        assert_eq!(known(&p, "big", "me@other"), None);
        assert_eq!(known(&p, "small", "me@big"), None);
        forget_at(&p, "big", "me@big", "a").unwrap();
        assert_eq!(known(&p, "big", "me@big"), Some(vec![json!({"name": "b"})]));
        // A name or key that is no file name is never a path.
        for (m, k) in [
            ("../x", "00ff"),
            ("big", "../../x"),
            ("Big", "00"),
            ("big", ""),
        ] {
            assert_eq!(path_of(m, k), None, "{m} {k}");
        }
    }

    #[test]
    fn a_tampered_file_reads_as_hostile_data() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k.json");
        let planted = json!({"format": FORMAT, "machine": "big", "ssh": "me@big", "at": 5,
            "boxes": [{"name": "ok"}, {"name": 7}, "text", {"no": "name"}]});
        std::fs::write(&p, planted.to_string()).unwrap();
        assert_eq!(
            known(&p, "big", "me@big"),
            Some(vec![json!({"name": "ok"})])
        );
        for junk in ["{", "[]", &json!({"format": 99}).to_string()] {
            std::fs::write(&p, junk).unwrap();
            assert_eq!(known(&p, "big", "me@big"), None, "{junk}");
        }
        // Over the cap, or not a regular file: nothing.
        std::fs::write(&p, vec![b' '; MAX_BYTES as usize + 1]).unwrap();
        assert_eq!(known(&p, "big", "me@big"), None);
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", &p).unwrap();
        assert_eq!(known(&p, "big", "me@big"), None);
        // Forgetting over a file it cannot read leaves it be.
        forget_at(&p, "big", "me@big", "ok").unwrap();
        assert!(p.symlink_metadata().unwrap().file_type().is_symlink());
    }
}
