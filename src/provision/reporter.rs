//! Progress reporting for the engine: the [`Reporter`] trait the CLI implements, a
//! [`Silent`] one, and `timed`, which wraps a stage in start/done calls.
//!
//! Invariant: the engine never prints; everything a user might see while a box is
//! made goes through a `Reporter`. Callers: every stage of `provision`, `folder`.

use std::time::{Duration, Instant};

/// Receives progress from the engine; the CLI renders it (or not).
pub trait Reporter {
    /// A stage starts.
    fn stage(&mut self, name: &str);
    /// The stage started last finished.
    fn stage_done(&mut self, name: &str, took: Duration);
    /// Something the user should know; the run goes on.
    fn warn(&mut self, message: String);
    /// Something worth a line, not a problem.
    fn note(&mut self, message: String);
}

/// A reporter that drops everything (tests, JSON mode collects warnings itself).
pub struct Silent;

impl Reporter for Silent {
    fn stage(&mut self, _: &str) {}
    fn stage_done(&mut self, _: &str, _: Duration) {}
    fn warn(&mut self, _: String) {}
    fn note(&mut self, _: String) {}
}

pub(crate) fn timed<T>(r: &mut dyn Reporter, name: &str, f: impl FnOnce() -> T) -> T {
    r.stage(name);
    let t = Instant::now();
    let out = f();
    r.stage_done(name, t.elapsed());
    out
}
