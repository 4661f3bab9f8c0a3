//! Which ports of a box's block listen now (SPEC §7b), as `list`, `watch` and `open`
//! show them: a host box's in this machine's socket tables, a container box's in its
//! own network namespace (through its recorded first process: no engine asked).

use crate::ports::listen::{Bound, Listening};

/// Which ports of a box's block listen now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortsNow {
    /// Listening where the host reaches them.
    pub listening: Vec<u16>,
    /// Listening on a container's own loopback alone: out of the published port's
    /// reach (the server should bind `TREEBOX_HOST`).
    pub loopback_only: Vec<u16>,
    /// Not seen listening in a socket table longer than treebox reads
    /// ([`Listening::cut`]): each may listen past the part read, so whether it does
    /// cannot be told.
    pub unknown: Vec<u16>,
}

impl PortsNow {
    /// The short form `list`'s PORTS column shows: the ports that listen, `!` after
    /// one on a container's own loopback, `?` after one that cannot be told; `-` for
    /// none. In port order, consecutive ports alike as one run (`20000-20002?`), so a
    /// block fits the column.
    pub fn marked(&self) -> String {
        let mut all: Vec<(u16, &str)> = self
            .listening
            .iter()
            .map(|p| (*p, ""))
            .chain(self.loopback_only.iter().map(|p| (*p, "!")))
            .chain(self.unknown.iter().map(|p| (*p, "?")))
            .collect();
        if all.is_empty() {
            return "-".into();
        }
        all.sort_unstable();
        let mut runs: Vec<(u16, u16, &str)> = Vec::new();
        for (p, mark) in all {
            match runs.last_mut() {
                Some((_, last, m)) if *m == mark && last.checked_add(1) == Some(p) => *last = p,
                _ => runs.push((p, p, mark)),
            }
        }
        runs.iter()
            .map(|(a, b, m)| {
                if a == b {
                    format!("{a}{m}")
                } else {
                    format!("{a}-{b}{m}")
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// [`PortsNow`] of the box of `record`; `here` is this machine's listeners, read once
/// for all host boxes. `None`: the box has no ports, or its container does not run.
pub fn ports_now(
    record: &crate::state::Record,
    here: &std::sync::OnceLock<Option<Listening>>,
) -> Option<PortsNow> {
    if record.ports.is_empty() {
        return None;
    }
    let container = record.runner.is_container();
    match &record.container {
        Some(c) if container => {
            let seen = crate::runner::oci::listening(c)?;
            Some(classify(&record.ports, |i, p| c.inside(i, p), &seen, true))
        }
        _ if container => None,
        _ => {
            let seen = here.get_or_init(crate::ports::listen::here).as_ref()?;
            Some(classify(&record.ports, |_, p| p, seen, false))
        }
    }
}

/// Sort the block `ports` by what `seen` (the namespace's listeners) says of each:
/// `inside` maps the block's `i`th port to the one its server listens on there (a
/// container's published port can lead to another inside); in a `container`, a
/// listener on loopback alone is out of the host's reach.
fn classify(
    ports: &[u16],
    inside: impl Fn(usize, u16) -> u16,
    seen: &Listening,
    container: bool,
) -> PortsNow {
    let mut now = PortsNow::default();
    for (i, p) in ports.iter().enumerate() {
        match seen.listens(inside(i, *p)) {
            // On the host, its loopback is where the user's browser is.
            Some(Bound::Loopback) if container => now.loopback_only.push(*p),
            Some(_) => now.listening.push(*p),
            None if seen.cut => now.unknown.push(*p),
            None => {}
        }
    }
    now
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(ports: &[(u16, Bound)], cut: bool) -> Listening {
        Listening {
            ports: ports.iter().copied().collect(),
            cut,
        }
    }

    #[test]
    fn ports_are_sorted_by_where_they_listen() {
        let s = seen(&[(20000, Bound::Reachable), (3001, Bound::Loopback)], false);
        // The second port of the block is served on 3001 inside.
        let inside = |i: usize, p: u16| if i == 1 { 3001 } else { p };
        let now = classify(&[20000, 20001, 20002], inside, &s, true);
        assert_eq!(now.listening, [20000]);
        assert_eq!(now.loopback_only, [20001]);
        assert!(now.unknown.is_empty(), "{now:?}");
        // On the host, loopback is reachable.
        let now = classify(&[20000, 3001], |_, p| p, &s, false);
        assert_eq!(now.listening, [20000, 3001]);
    }

    #[test]
    fn a_table_read_in_part_leaves_the_ports_not_seen_unknown() {
        let s = seen(&[(20000, Bound::Reachable)], true);
        let now = classify(&[20000, 20001, 20002], |_, p| p, &s, true);
        assert_eq!(now.listening, [20000]);
        assert_eq!(
            now.unknown,
            [20001, 20002],
            "not seen is not 'not listening'"
        );
    }

    #[test]
    fn a_table_too_long_to_read_whole_is_read_in_part() {
        use std::fmt::Write as _;
        // A namespace with more sockets than the cap: the listener past it is unseen.
        let dir = tempfile::tempdir().unwrap();
        let row = |i: usize, port: u16, state: &str| {
            format!("{i:>4}: 0100007F:{port:04X} 00000000:0000 {state} 00000000:00000000 00:00000000 00000000  1000        0 {i} 1 0000000000000000 100 0 0 10 0\n")
        };
        let mut tcp = String::from("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n");
        tcp.push_str(&row(0, 20000, "0A"));
        let mut i = 1;
        while tcp.len() as u64 <= crate::ports::listen::MAX_READ {
            let _ = write!(tcp, "{}", row(i, 40000, "06"));
            i += 1;
        }
        tcp.push_str(&row(i, 20001, "0A"));
        std::fs::write(dir.path().join("tcp"), &tcp).unwrap();
        let s = crate::ports::listen::listening(dir.path()).unwrap();
        assert!(s.cut);
        let now = classify(&[20000, 20001], |_, p| p, &s, false);
        assert_eq!((now.listening, now.unknown), (vec![20000], vec![20001]));
    }

    #[test]
    fn the_short_form_marks_what_is_out_of_reach_and_what_cannot_be_told() {
        let mut now = PortsNow::default();
        assert_eq!(now.marked(), "-");
        now.unknown = vec![20002];
        assert_eq!(now.marked(), "20002?");
        now.listening = vec![20000];
        now.loopback_only = vec![20001];
        assert_eq!(now.marked(), "20000,20001!,20002?");
        // Runs of consecutive ports alike are one, so a cut table's block fits 12
        // columns; gaps and other marks break a run.
        now = PortsNow {
            unknown: vec![20002, 20000, 20001],
            ..PortsNow::default()
        };
        assert_eq!(now.marked(), "20000-20002?");
        now.listening = vec![30000, 30001, 30003, 65535];
        now.unknown = vec![30002];
        assert_eq!(now.marked(), "30000-30001,30002?,30003,65535");
    }
}
