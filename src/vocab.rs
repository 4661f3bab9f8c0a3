//! The closed vocabularies of a box's creation-time choices: how its checkout is made
//! ([`GitMode`]), where its agent runs ([`RunnerKind`]), and what the user asked for
//! ([`Isolation`], which may also be `auto`), and whether it starts with warm build
//! outputs ([`Warm`], [`WarmMethod`]).
//!
//! Invariants: the serde, `Display` and [`FromStr`] names are exactly the strings the
//! records on disk, the config files, the flags and the JSON output have always used
//! ("worktree", "clone", "folder", "host", "docker", "podman", "auto", "copy", "off",
//! "reflink"), so switching
//! from strings to these enums changes no byte anywhere. This is the only module that
//! spells those names; everyone else matches on the variants.
//!
//! Callers: the provisioning request and plan, the state record, `boxes`, `folder`, the
//! runners. (`runner::Runner` is the trait that runs commands; [`RunnerKind`] is the
//! recorded choice of one.)

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A value that is not one of a vocabulary's names; the message lists the names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{value}` (expected one of: {expected})")]
pub struct UnknownName {
    pub what: &'static str,
    pub value: String,
    pub expected: &'static str,
}

/// How a box's checkout is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GitMode {
    /// A `git worktree` of the user's repository (the default).
    #[default]
    Worktree,
    /// A `git clone --shared` with its own `.git`.
    Clone,
    /// No checkout: the box is a folder outside any repository (`git sandbox`).
    Folder,
}

impl GitMode {
    pub const ALL: [GitMode; 3] = [GitMode::Worktree, GitMode::Clone, GitMode::Folder];

    pub fn as_str(self) -> &'static str {
        match self {
            GitMode::Worktree => "worktree",
            GitMode::Clone => "clone",
            GitMode::Folder => "folder",
        }
    }
}

/// The runner a box is recorded with: the host, or one of the container engines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunnerKind {
    #[default]
    Host,
    Docker,
    Podman,
}

impl RunnerKind {
    pub const ALL: [RunnerKind; 3] = [RunnerKind::Host, RunnerKind::Docker, RunnerKind::Podman];

    pub fn as_str(self) -> &'static str {
        match self {
            RunnerKind::Host => "host",
            RunnerKind::Docker => "docker",
            RunnerKind::Podman => "podman",
        }
    }

    /// A container runner (docker or podman), not the host.
    pub fn is_container(self) -> bool {
        !matches!(self, RunnerKind::Host)
    }
}

/// Whether a new box starts with the main checkout's build outputs (`warm`, `--warm`,
/// `--no-warm`): only by reflink (`auto`), by a copy where reflink is missing (`copy`),
/// or not at all (`off`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Warm {
    #[default]
    Auto,
    Copy,
    Off,
}

impl Warm {
    pub const ALL: [Warm; 3] = [Warm::Auto, Warm::Copy, Warm::Off];

    pub fn as_str(self) -> &'static str {
        match self {
            Warm::Auto => "auto",
            Warm::Copy => "copy",
            Warm::Off => "off",
        }
    }
}

/// How build outputs are brought into a box: cloned by reflink (copy-on-write, no data
/// written) or copied byte by byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WarmMethod {
    Reflink,
    Copy,
}

impl WarmMethod {
    pub const ALL: [WarmMethod; 2] = [WarmMethod::Reflink, WarmMethod::Copy];

    pub fn as_str(self) -> &'static str {
        match self {
            WarmMethod::Reflink => "reflink",
            WarmMethod::Copy => "copy",
        }
    }
}

/// What the user asked for (`--isolation`, config `isolation`): a runner, or `auto`
/// (a container engine on a machine marked as a runner, else the host).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Isolation {
    /// The default (SPEC §3): sandboxed on a machine marked as a runner, else the host.
    #[default]
    Auto,
    Runner(RunnerKind),
}

impl Isolation {
    pub const AUTO: &'static str = "auto";

    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::Auto => Self::AUTO,
            Isolation::Runner(r) => r.as_str(),
        }
    }
}

macro_rules! names {
    ($ty:ty, $what:literal, $expected:literal) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $ty {
            type Err = UnknownName;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::ALL
                    .into_iter()
                    .find(|v| v.as_str() == s)
                    .ok_or_else(|| UnknownName {
                        what: $what,
                        value: s.to_string(),
                        expected: $expected,
                    })
            }
        }
    };
}

names!(GitMode, "git mode", "worktree, clone, folder");
names!(RunnerKind, "runner", "host, docker, podman");
names!(Warm, "warm mode", "auto, copy, off");
names!(WarmMethod, "warm method", "reflink, copy");

impl fmt::Display for Isolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Isolation {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == Self::AUTO {
            return Ok(Isolation::Auto);
        }
        s.parse().map(Isolation::Runner).map_err(|_| UnknownName {
            what: "isolation",
            value: s.to_string(),
            expected: "host, docker, podman, auto",
        })
    }
}

impl Serialize for Isolation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Isolation {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_display_fromstr_and_serde() {
        for m in GitMode::ALL {
            assert_eq!(m.to_string().parse::<GitMode>(), Ok(m));
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{}\"", m.as_str()));
            assert_eq!(serde_json::from_str::<GitMode>(&json).unwrap(), m);
        }
        for r in RunnerKind::ALL {
            assert_eq!(r.to_string().parse::<RunnerKind>(), Ok(r));
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{}\"", r.as_str()));
            assert_eq!(serde_json::from_str::<RunnerKind>(&json).unwrap(), r);
            let iso = Isolation::Runner(r);
            assert_eq!(iso.as_str().parse::<Isolation>(), Ok(iso));
        }
        assert_eq!("auto".parse::<Isolation>(), Ok(Isolation::Auto));
        assert_eq!(serde_json::to_string(&Isolation::Auto).unwrap(), "\"auto\"");
    }

    #[test]
    fn todays_strings() {
        let modes: Vec<_> = GitMode::ALL.iter().map(|m| m.as_str()).collect();
        assert_eq!(modes, ["worktree", "clone", "folder"]);
        let runners: Vec<_> = RunnerKind::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(runners, ["host", "docker", "podman"]);
    }

    #[test]
    fn unknown_names_are_refused() {
        assert!("vm".parse::<Isolation>().is_err());
        assert!("auto".parse::<RunnerKind>().is_err());
        assert!("svn".parse::<GitMode>().is_err());
        assert!(serde_json::from_str::<RunnerKind>("\"vm\"").is_err());
    }
}
