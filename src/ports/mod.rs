//! A box's block of ports (SPEC §7b): a few consecutive port numbers that are the
//! box's for life, for its dev servers.
//!
//! Blocks are handed out from one ledger per user and machine, across every repository:
//! `$XDG_STATE_HOME/treebox/ports/<first port>` (or `$TREEBOX_PORTS_DIR`), one small file per block naming the
//! record of the box that holds it. The ledger is read and written under its lock
//! (`ports/.lock`), so two creates never get one block. A block is skipped when a port
//! of it is in the ledger, or taken now by another program (it cannot be bound on
//! loopback). A ledger entry whose box record is gone, and whose allocating process is
//! gone too (a create that died before its record was written), is stale and taken
//! back. Teardown gives the block back ([`release`]).
//!
//! A host box's programs bind `TREEBOX_HOST` (`127.0.0.1`: nothing is exposed to the
//! LAN); a container box's bind `0.0.0.0` in the container, whose own loopback a
//! published port cannot reach, and the engine publishes the block on the host's
//! loopback only, each port under its own number.

pub mod listen;
pub mod opener;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Where a box's programs are told to bind.
pub const HOST_BIND: &str = "127.0.0.1";
/// The same, in a container.
pub const CONTAINER_BIND: &str = "0.0.0.0";

/// The largest block a config may ask for.
pub const MAX_COUNT: u16 = 64;
/// Ledger entries read at most (more than any machine has boxes).
const MAX_ENTRIES: usize = 20_000;
/// The largest ledger entry read.
const MAX_ENTRY: u64 = 16 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum PortsError {
    #[error("no free block of {count} ports from {from} to 65535 (each is held by a box or taken by another program)")]
    Exhausted { count: u16, from: u16 },
    #[error("the ports ledger {path}")]
    Ledger {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no state directory (set XDG_STATE_HOME or HOME)")]
    NoStateDir,
}

/// One ledger entry: the block, who holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    ports: Vec<u16>,
    /// The record of the box holding the block.
    record: PathBuf,
    /// The process that allocated it: while it lives, a missing record is a create
    /// still on its way.
    pid: u32,
}

/// The ledger's directory: `$TREEBOX_PORTS_DIR` when it names an absolute path (one
/// ledger for several state dirs of one user: a test suite's, say), else the state
/// dir's.
fn ledger_dir() -> Result<PathBuf, PortsError> {
    if let Some(dir) = std::env::var_os("TREEBOX_PORTS_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
    {
        return Ok(dir);
    }
    crate::state::layout::ports_dir().map_err(|_| PortsError::NoStateDir)
}

fn ledger_err(path: &Path) -> impl FnOnce(std::io::Error) -> PortsError + '_ {
    move |source| PortsError::Ledger {
        path: path.to_path_buf(),
        source,
    }
}

/// A block of `count` ports at or above `from` for the box whose record is `record`:
/// recorded in the ledger before it is returned. `count` 0: none.
pub fn allocate(count: u16, from: u16, record: &Path) -> Result<Vec<u16>, PortsError> {
    allocate_avoiding(count, from, record, &[])
}

/// [`allocate`], no port of `avoid` given (a block an engine just found taken, which
/// may not be bound yet where this machine can see it).
pub fn allocate_avoiding(
    count: u16,
    from: u16,
    record: &Path,
    avoid: &[u16],
) -> Result<Vec<u16>, PortsError> {
    if count == 0 {
        return Ok(Vec::new());
    }
    let dir = ledger_dir()?;
    allocate_in(&dir, count, from, record, &|p| {
        !avoid.contains(&p) && free_now(p)
    })
}

/// [`allocate`] in ledger `dir`, with `free` telling a port no other program holds.
fn allocate_in(
    dir: &Path,
    count: u16,
    from: u16,
    record: &Path,
    free: &dyn Fn(u16) -> bool,
) -> Result<Vec<u16>, PortsError> {
    std::fs::create_dir_all(dir).map_err(ledger_err(dir))?;
    let lock_path = dir.join(".lock");
    let _lock = crate::state::WaitedLock::acquire(&lock_path).map_err(ledger_err(&lock_path))?;
    let held = held_ports(dir);
    let from = from.max(1);
    let mut start = u32::from(from);
    while start + u32::from(count) - 1 <= u32::from(u16::MAX) {
        let block: Vec<u16> = (start..start + u32::from(count))
            .map(|p| p as u16)
            .collect();
        match block.iter().position(|p| held.contains(p) || !free(*p)) {
            None => {
                let entry = Entry {
                    ports: block.clone(),
                    record: record.to_path_buf(),
                    pid: std::process::id(),
                };
                let path = dir.join(block[0].to_string());
                let text = serde_json::to_vec(&entry).expect("an entry serializes");
                crate::state::atomic::write(&path, &text, 0o644).map_err(ledger_err(&path))?;
                return Ok(block);
            }
            // The next block that could hold none of the ports seen taken: blocks stay
            // aligned on `from`.
            Some(_) => start += u32::from(count),
        }
    }
    Err(PortsError::Exhausted { count, from })
}

/// Every port the ledger in `dir` gives a box, stale entries taken back on the way.
fn held_ports(dir: &Path) -> std::collections::HashSet<u16> {
    let mut held = std::collections::HashSet::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return held;
    };
    for e in rd.flatten().take(MAX_ENTRIES) {
        let name = e.file_name();
        if name.to_str().is_none_or(|n| n.parse::<u16>().is_err()) {
            continue;
        }
        let path = e.path();
        let Some(entry) = read_entry(&path) else {
            continue;
        };
        // Taken back only when its box is gone and the entry can go too (another
        // user's, in a ledger several share, stays theirs).
        let gone = !entry.record.exists() && !alive(entry.pid);
        if !gone
            || std::fs::remove_file(&path).is_err_and(|e| e.kind() != std::io::ErrorKind::NotFound)
        {
            held.extend(entry.ports);
        }
    }
    held
}

fn read_entry(path: &Path) -> Option<Entry> {
    let raw =
        crate::untrusted::read_regular(path, MAX_ENTRY, crate::untrusted::Links::Refuse).ok()?;
    serde_json::from_slice(&raw).ok()
}

/// Does process `pid` exist (as far as this user can tell)?
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists; no memory is touched.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Can port `p` be bound on loopback now (nothing listens on it there or on every
/// address)?
fn free_now(p: u16) -> bool {
    std::net::TcpListener::bind((HOST_BIND, p)).is_ok()
}

/// Give back every block the ledger gives the box whose record is `record` (its
/// teardown, or a create that failed before its record stayed).
pub fn release(record: &Path) {
    if let Ok(dir) = ledger_dir() {
        release_in(&dir, record);
    }
}

fn release_in(dir: &Path, record: &Path) {
    let lock_path = dir.join(".lock");
    if !dir.is_dir() {
        return;
    }
    let Ok(_lock) = crate::state::WaitedLock::acquire(&lock_path) else {
        return;
    };
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten().take(MAX_ENTRIES) {
        let path = e.path();
        if read_entry(&path).is_some_and(|e| e.record == record) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// The variables a box's programs get for its block: `TREEBOX_PORT` (the first),
/// `TREEBOX_PORTS` (all, space-separated) and `TREEBOX_HOST` (the address to bind:
/// `container` says which). None for a box without a block.
pub fn env(ports: &[u16], container: bool) -> Vec<(String, String)> {
    let Some(first) = ports.first() else {
        return Vec::new();
    };
    let all: Vec<String> = ports.iter().map(u16::to_string).collect();
    let host = if container { CONTAINER_BIND } else { HOST_BIND };
    vec![
        ("TREEBOX_PORT".into(), first.to_string()),
        ("TREEBOX_PORTS".into(), all.join(" ")),
        ("TREEBOX_HOST".into(), host.into()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_handed_out_once_and_taken_ports_skipped() {
        let d = tempfile::tempdir().unwrap();
        let ledger = d.path().join("ports");
        let rec = |n: &str| {
            let p = d.path().join(n);
            std::fs::write(&p, "{}").unwrap();
            p
        };
        let (a, b, c) = (rec("a.json"), rec("b.json"), rec("c.json"));
        let all_free = |_| true;
        assert_eq!(
            allocate_in(&ledger, 3, 20000, &a, &all_free).unwrap(),
            [20000, 20001, 20002]
        );
        // 20004 is another program's: the block holding it is skipped.
        let b_ports = allocate_in(&ledger, 3, 20000, &b, &|p| p != 20004).unwrap();
        assert_eq!(b_ports, [20006, 20007, 20008]);
        // Given back, a block is handed out again; another box's is left alone.
        release_in(&ledger, &a.with_extension("other"));
        assert!(ledger.join("20006").exists());
        release_in(&ledger, &b);
        assert!(!ledger.join("20006").exists());
        assert_eq!(
            allocate_in(&ledger, 3, 20000, &c, &all_free).unwrap(),
            [20003, 20004, 20005]
        );
        // A box whose record went (and whose create is over) holds nothing.
        std::fs::remove_file(&a).unwrap();
        let mut e = read_entry(&ledger.join("20000")).unwrap();
        e.pid = u32::MAX;
        std::fs::write(ledger.join("20000"), serde_json::to_vec(&e).unwrap()).unwrap();
        assert_eq!(
            allocate_in(&ledger, 3, 20000, &b, &all_free).unwrap(),
            [20000, 20001, 20002]
        );
        // A create still on its way (its process alive, no record yet) keeps its block.
        let pending = d.path().join("pending.json");
        assert_eq!(
            allocate_in(&ledger, 3, 20000, &pending, &all_free).unwrap(),
            [20006, 20007, 20008]
        );
        assert_eq!(
            allocate_in(&ledger, 3, 20000, &c, &all_free).unwrap(),
            [20009, 20010, 20011]
        );
    }

    #[test]
    fn the_top_of_the_range_is_refused_not_wrapped() {
        let d = tempfile::tempdir().unwrap();
        let ledger = d.path().join("ports");
        let r = d.path().join("r.json");
        std::fs::write(&r, "{}").unwrap();
        assert_eq!(
            allocate_in(&ledger, 2, 65534, &r, &|_| true).unwrap(),
            [65534, 65535]
        );
        let e = allocate_in(&ledger, 2, 65534, &r, &|_| true).unwrap_err();
        assert!(
            matches!(
                e,
                PortsError::Exhausted {
                    count: 2,
                    from: 65534
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn the_variables_name_the_block_and_where_to_bind() {
        let v = env(&[20000, 20001], true);
        assert_eq!(v[0], ("TREEBOX_PORT".into(), "20000".into()));
        assert_eq!(v[1], ("TREEBOX_PORTS".into(), "20000 20001".into()));
        assert_eq!(v[2], ("TREEBOX_HOST".into(), "0.0.0.0".into()));
        assert_eq!(env(&[20000], false)[2].1, "127.0.0.1");
        assert!(env(&[], false).is_empty());
    }
}
