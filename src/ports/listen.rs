//! Which ports listen now, read from a network namespace's `net/tcp` and `net/tcp6`
//! (`/proc/net` for this machine's, `/proc/<pid>/net` for a container's).
//!
//! The kernel writes these files, but a box decides what is in its own: any number of
//! sockets. Each file is read up to [`MAX_READ`] and only whole lines are parsed; what
//! is past the cap is not seen (the answer says so), and a line that does not parse
//! is skipped.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// The most read of one file (about 7,000 sockets).
pub const MAX_READ: u64 = 1 << 20;

/// TCP's `LISTEN` state in the files' `st` column.
const LISTEN: &str = "0A";

/// Where a port listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bound {
    /// On loopback alone (`127.0.0.0/8`, `::1`): out of a published port's reach in a
    /// container.
    Loopback,
    /// On every address, or on one that is not loopback.
    Reachable,
}

/// The listening ports of one network namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listening {
    /// Each port that listens, and the widest of its bindings.
    pub ports: BTreeMap<u16, Bound>,
    /// A file was longer than [`MAX_READ`]: ports past it were not seen.
    pub cut: bool,
}

impl Listening {
    pub fn listens(&self, port: u16) -> Option<Bound> {
        self.ports.get(&port).copied()
    }
}

/// The listening ports of the namespace whose `net` directory is `net_dir`; `None`
/// when neither file can be opened (the process is gone, or not this user's to read).
pub fn listening(net_dir: &Path) -> Option<Listening> {
    let mut out = Listening::default();
    let mut any = false;
    for name in ["tcp", "tcp6"] {
        if let Some((text, cut)) = read_capped(&net_dir.join(name)) {
            any = true;
            out.cut |= cut;
            parse(&text, &mut out);
        }
    }
    any.then_some(out)
}

/// The listening ports of this machine's network namespace (treebox's own).
pub fn here() -> Option<Listening> {
    listening(Path::new("/proc/self/net"))
}

/// At most [`MAX_READ`] bytes of `path`, and whether there was more.
fn read_capped(path: &Path) -> Option<(Vec<u8>, bool)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_READ + 1).read_to_end(&mut bytes).ok()?;
    let cut = bytes.len() as u64 > MAX_READ;
    if cut {
        // Only whole lines.
        let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(end);
    }
    Some((bytes, cut))
}

/// Add the listening sockets of one file's text (`tcp` or `tcp6` layout) to `out`.
pub fn parse(text: &[u8], out: &mut Listening) {
    for line in text.split(|b| *b == b'\n').skip(1) {
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        let mut cols = line.split_ascii_whitespace();
        let (Some(_slot), Some(local), Some(_remote), Some(state)) =
            (cols.next(), cols.next(), cols.next(), cols.next())
        else {
            continue;
        };
        if state != LISTEN {
            continue;
        }
        let Some((addr, port)) = local.split_once(':') else {
            continue;
        };
        let Ok(port) = u16::from_str_radix(port, 16) else {
            continue;
        };
        let Some(bound) = bound_of(addr) else {
            continue;
        };
        let e = out.ports.entry(port).or_insert(bound);
        *e = (*e).max(bound);
    }
}

/// Where an address of the files (hex, in the kernel's byte order) is: `None` for one
/// that is not an address.
fn bound_of(addr: &str) -> Option<Bound> {
    if !addr.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    // 32-bit words, each printed as this machine holds it in memory.
    let words: Vec<[u8; 4]> = match addr.len() {
        8 | 32 => (0..addr.len())
            .step_by(8)
            .map(|i| u32::from_str_radix(&addr[i..i + 8], 16).map(u32::to_ne_bytes))
            .collect::<Result<_, _>>()
            .ok()?,
        _ => return None,
    };
    let loopback = match words.as_slice() {
        [v4] => v4[0] == 127,
        _ => {
            let ip: [u8; 16] = words.concat().try_into().ok()?;
            let ip = std::net::Ipv6Addr::from(ip);
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    };
    Some(if loopback {
        Bound::Loopback
    } else {
        Bound::Reachable
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 101 1 0000000000000000 100 0 0 10 0
   1: 00000000:4E20 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 102 1 0000000000000000 100 0 0 10 0
   2: 0100007F:4E21 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 103 1 0000000000000000 100 0 0 10 0
   3: 0100007F:4E22 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 104 1 0000000000000000 100 0 0 10 0
   4: 0100007F:4E22 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 104 1 0000000000000000 100 0 0 10 0
";
    const TCP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:4E23 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 105 1 0000000000000000 100 0 0 10 0
   1: 00000000000000000000000000000000:4E24 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 106 1 0000000000000000 100 0 0 10 0
   2: 0000000000000000FFFF00000100007F:4E25 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 107 1 0000000000000000 100 0 0 10 0
";

    #[test]
    fn listening_ports_and_where_they_listen() {
        let mut l = Listening::default();
        parse(TCP.as_bytes(), &mut l);
        parse(TCP6.as_bytes(), &mut l);
        assert_eq!(l.listens(8080), Some(Bound::Loopback));
        assert_eq!(l.listens(20000), Some(Bound::Reachable));
        // An established connection is no listener.
        assert_eq!(l.listens(20001), None);
        assert_eq!(l.listens(20002), Some(Bound::Loopback));
        assert_eq!(l.listens(20003), Some(Bound::Loopback), "::1");
        assert_eq!(l.listens(20004), Some(Bound::Reachable), "::");
        assert_eq!(l.listens(20005), Some(Bound::Loopback), "::ffff:127.0.0.1");
        assert_eq!(l.ports.len(), 6);
    }

    #[test]
    fn junk_is_skipped() {
        let mut l = Listening::default();
        let bytes = b"header\n\x1b[2J 0: ZZ:1F90 x 0A\n 0: 0100007F:GGGG x 0A\n 0: 0100007F\n 0: 01:1F90 x 0A\n\xff\xfe 0: 0100007F:1F92 00000000:0000 0A\n 0: 0100007F:1F91 00000000:0000 0A";
        parse(bytes, &mut l);
        assert_eq!(l.ports.keys().copied().collect::<Vec<_>>(), [8081]);
    }

    #[test]
    fn this_machines_listener_is_seen() {
        let sock = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = sock.local_addr().unwrap().port();
        let l = listening(Path::new("/proc/self/net")).unwrap();
        assert_eq!(l.listens(port), Some(Bound::Loopback));
        drop(sock);
        let l = listening(Path::new("/proc/self/net")).unwrap();
        assert_eq!(l.listens(port), None);
        assert!(listening(Path::new("/nonexistent")).is_none());
    }
}
