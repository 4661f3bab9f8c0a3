//! What an engine says of a box's limits (SPEC §7 "Limits") when it makes the box's
//! container: a rootless podman with no cgroups of its own makes it without them and
//! says so only on the `create`'s stderr. Called by `container` (create).

use super::Engine;

/// The warning for a container made without its limits, when the engine's `create`
/// said so on `stderr` (podman: "Resource limits are not supported and ignored on
/// cgroups V1 rootless systems"); its words are the engine's, made one safe line.
pub(super) fn ignored(engine: Engine, stderr: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(stderr);
    let line = text.lines().find(|l| {
        let l = l.to_lowercase();
        l.contains("limit") && (l.contains("ignored") || l.contains("not supported"))
    })?;
    // A logger's line (`time=… level=warning msg="…"`): its message.
    let line = match line.split_once("msg=\"") {
        Some((_, m)) => m.rsplit_once('"').map_or(m, |(m, _)| m),
        None => line,
    };
    let line = crate::sanitize::line(line.trim());
    let line: String = line.chars().take(200).collect();
    Some(format!(
        "{} made this box's container without its process, memory and CPU limits (\"{line}\"): a runaway build or a fork bomb in the box can take this machine down; `git treebox doctor` says why",
        engine.program()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_that_ignores_the_limits_is_heard() {
        let podman = b"time=\"2026-12-05T01:00:00Z\" level=warning msg=\"Resource limits are not supported and ignored on cgroups V1 rootless systems\"\n";
        let w = ignored(Engine::Podman, podman).unwrap();
        assert!(
            w.starts_with("podman made this box's container without its process, memory and CPU limits (\"Resource limits are not supported and ignored on cgroups V1 rootless systems\")"),
            "{w}"
        );
        assert!(w.contains("`git treebox doctor`"), "{w}");
        // Limits that hold, however the engine words its other warnings.
        for quiet in [
            &b""[..],
            b"WARNING: Your kernel does not support swap limit capabilities or the cgroup is not mounted. Memory limited without swap.\n",
        ] {
            assert_eq!(ignored(Engine::Docker, quiet), None);
        }
        // The engine's words reach the terminal as one plain line.
        let hostile = b"limits ignored \x1b]0;owned\x07\rnext\n";
        let w = ignored(Engine::Podman, hostile).unwrap();
        assert!(
            !w.contains('\x1b') && !w.contains('\r') && !w.contains('\x07'),
            "{w:?}"
        );
    }
}
