//! The host's side of a new container's hand-over ([`super::launch::ANCHOR`]): the box's
//! first process gives the agent its paths and refreshes the checkout's index, then
//! says so in the box's status dir ([`HANDED_NOTE`]). The agent's launcher waits for it
//! inside; a `create` that starts no agent waits for it here ([`await_handed`]), so
//! the box it hands back has its files given over and its index no longer being
//! written (a host `git` run at once would meet the anchor's `index.lock`).
//!
//! The status dir is the agent's: its notes are read as hostile input (no link
//! followed, no FIFO waited on, the reason capped), and cleared before the container
//! that writes them is made ([`clear`]).

use std::path::Path;
use std::time::{Duration, Instant};

use super::engine::Engine;
use super::error::ContainerError;
use super::launch::HANDED_NOTE;
use crate::names::Leaf;
use crate::untrusted::{read_regular, Links, Unread};

/// How long a hand-over may take: the launcher's own limit (a chown of a huge
/// checkout is slow, never this slow).
const LIMIT: Duration = Duration::from_secs(600);
/// How often the container is asked whether it still runs, while the note is awaited.
const ASK_EVERY: Duration = Duration::from_secs(2);
/// The most of the reason read back.
const MAX_REASON: u64 = 4000;

/// What the status dir `dir` says of the hand-over now.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Handed {
    Done,
    Failed(String),
    NotYet,
}

/// Read the notes in `dir`: `handed` a regular file (of any content) is done;
/// `handed-failed` holds why it could not (capped, made one printable line).
pub(super) fn read(dir: &Path) -> Handed {
    let done = std::fs::symlink_metadata(dir.join(HANDED_NOTE)).is_ok_and(|m| m.is_file());
    if done {
        return Handed::Done;
    }
    match read_regular(
        &dir.join(format!("{HANDED_NOTE}-failed")),
        MAX_REASON,
        Links::Refuse,
    ) {
        Ok(bytes) => Handed::Failed(crate::sanitize::line(
            String::from_utf8_lossy(&bytes).trim(),
        )),
        Err(Unread::Absent) => Handed::NotYet,
        Err(_) => Handed::Failed("(its reason is not a readable file)".into()),
    }
}

/// Remove the notes a container made earlier for this box may have left, before a
/// new one is made: the wait must see the new container's.
pub(super) fn clear(dir: &Path) -> std::io::Result<()> {
    for name in [HANDED_NOTE.to_string(), format!("{HANDED_NOTE}-failed")] {
        let p = dir.join(name);
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&p)?,
            Ok(_) => std::fs::remove_file(&p)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Wait until the container `name` of box `leaf`, just made, has handed its paths to
/// the agent (its notes in the status dir `dir`). An error when it could not (with its
/// reason), when the container stopped first, or after [`LIMIT`].
pub fn await_handed(
    engine: Engine,
    name: &str,
    leaf: &Leaf,
    dir: &Path,
) -> Result<(), ContainerError> {
    let failed = |reason: String| ContainerError::HandOver {
        leaf: leaf.to_string(),
        reason,
    };
    let since = Instant::now();
    let mut asked = Instant::now();
    loop {
        match read(dir) {
            Handed::Done => return Ok(()),
            Handed::Failed(reason) => return Err(failed(reason)),
            Handed::NotYet => {}
        }
        if since.elapsed() > LIMIT {
            return Err(failed(format!(
                "not done within {} minutes",
                LIMIT.as_secs() / 60
            )));
        }
        if asked.elapsed() > ASK_EVERY {
            asked = Instant::now();
            let running = engine
                .state(name)
                .map_err(ContainerError::Engine)?
                .is_some_and(|s| s.running);
            // Its last words may have come as it stopped.
            if !running && read(dir) == Handed::NotYet {
                return Err(failed("the container stopped first".into()));
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_read_as_the_agents_files() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        assert_eq!(read(dir), Handed::NotYet);
        // A reason, capped and made one line.
        let failed = dir.join("handed-failed");
        std::fs::write(&failed, "chown: /x: Operation not permitted\n\x1b[2Jmore\n").unwrap();
        let Handed::Failed(why) = read(dir) else {
            panic!("not failed")
        };
        assert!(
            why.starts_with("chown: /x: Operation not permitted"),
            "{why}"
        );
        assert!(!why.contains('\n') && !why.contains('\x1b'), "{why:?}");
        std::fs::write(&failed, vec![b'x'; 100_000]).unwrap();
        assert!(matches!(read(dir), Handed::Failed(w) if w.contains("not a readable file")));
        // Done wins; a link or a directory named `handed` is no note.
        std::fs::remove_file(&failed).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", dir.join("handed")).unwrap();
        assert_eq!(read(dir), Handed::NotYet);
        clear(dir).unwrap();
        std::fs::create_dir(dir.join("handed")).unwrap();
        assert_eq!(read(dir), Handed::NotYet);
        clear(dir).unwrap();
        std::fs::write(dir.join("handed"), "").unwrap();
        assert_eq!(read(dir), Handed::Done);
        // A FIFO planted for the reason is never waited on.
        clear(dir).unwrap();
        crate::testing::mkfifo(&failed);
        assert!(matches!(read(dir), Handed::Failed(_)));
        // Cleared, nothing of either is left, and clearing nothing is no error.
        clear(dir).unwrap();
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0);
        clear(dir).unwrap();
    }

    /// The wait ends on the note, whenever it comes, and a failure is the box's error
    /// with the reason (the engine is asked only after [`ASK_EVERY`]).
    #[test]
    fn the_wait_ends_on_either_note() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        let leaf = Leaf::parse("b").unwrap();
        std::fs::write(
            dir.join("handed-failed"),
            "chown: /x: Operation not permitted\n",
        )
        .unwrap();
        let e = await_handed(Engine::Docker, "treebox-none", &leaf, dir).unwrap_err();
        assert!(
            matches!(&e, ContainerError::HandOver { leaf, reason }
                if leaf == "b" && reason == "chown: /x: Operation not permitted"),
            "{e:?}"
        );
        assert!(e.to_string().contains("box b"), "{e}");
        clear(dir).unwrap();
        let note = dir.join(HANDED_NOTE);
        let later = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            std::fs::write(note, "").unwrap();
        });
        let since = Instant::now();
        await_handed(Engine::Docker, "treebox-none", &leaf, dir).unwrap();
        assert!(since.elapsed() >= Duration::from_millis(100));
        later.join().unwrap();
    }
}
