//! Which ports of a box's block listen now (SPEC §7b), as `list`, `watch` and `open`
//! show them: a host box's in this machine's socket tables, a container box's in its
//! own network namespace (through its recorded first process: no engine asked).

/// Which ports of a box's block listen now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortsNow {
    /// Listening where the host reaches them.
    pub listening: Vec<u16>,
    /// Listening on a container's own loopback alone: out of the published port's
    /// reach (the server should bind `TREEBOX_HOST`).
    pub loopback_only: Vec<u16>,
}

/// [`PortsNow`] of the box of `record`; `here` is this machine's listeners, read once
/// for all host boxes. `None`: the box has no ports, or its container does not run.
pub fn ports_now(
    record: &crate::state::Record,
    here: &std::sync::OnceLock<Option<crate::ports::listen::Listening>>,
) -> Option<PortsNow> {
    use crate::ports::listen::Bound;
    if record.ports.is_empty() {
        return None;
    }
    let container = record.runner.is_container();
    let seen = match &record.container {
        Some(c) if container => crate::runner::oci::listening(c)?,
        _ if container => return None,
        _ => here.get_or_init(crate::ports::listen::here).clone()?,
    };
    let mut now = PortsNow::default();
    for (i, p) in record.ports.iter().enumerate() {
        // A container's server listens on the port inside its block's port reaches.
        let inside = match &record.container {
            Some(c) if container => c.inside(i, *p),
            _ => *p,
        };
        match seen.listens(inside) {
            // On the host, its loopback is where the user's browser is.
            Some(Bound::Loopback) if container => now.loopback_only.push(*p),
            Some(_) => now.listening.push(*p),
            None => {}
        }
    }
    Some(now)
}
