//! What a box's record keeps about its container: plain data, written inside the
//! record (`container` field) and read back by the container runner.
//!
//! It lives in `state` so that the record can hold it without `state` importing the
//! runner: `runner::oci` makes and updates a [`ContainerRecord`]; `state::record`
//! stores it; the CLI's `ls`, `run` and teardown read it. The JSON names are part of
//! the on-disk record format (camelCase; `id` and `pid` default when absent).
//! [`Limits`] too: the resource limits a box's container was made with (SPEC §7).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What the record keeps about a box's container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecord {
    pub engine: String,
    pub name: String,
    pub image: String,
    /// `uid:gid` the agent runs as.
    pub user: String,
    /// The agent's home inside.
    pub home: PathBuf,
    /// The container's id and first process, as last seen running: lets the hot path
    /// (`run`, `enter`) know it still runs without asking the engine.
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub pid: u32,
    /// Programs start through treebox's launcher (`runner::oci::launch`): as root for
    /// a moment, reading the mounted 0600 env file, then dropped to `user` with no
    /// capabilities. `false` for a container made by an earlier version, whose agent
    /// may be root and whose keys sit in its engine config: `doctor` names it.
    #[serde(default)]
    pub launcher: bool,
    /// The paths, as the container sees them, handed to the agent's uid at create (its
    /// checkout, git data, credential copies, status directory): given back to the
    /// user before the container goes, where the user could not remove them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_paths: Vec<PathBuf>,
    /// The container's own first process hands `agent_paths` to the agent when it
    /// starts (`runner::oci::launch::ANCHOR`), and the launcher waits for that before
    /// it runs anything; `false` for a container made by an earlier version, handed
    /// over by an `exec` when it was made.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub anchor_hands: bool,
    /// The port inside the container that each port of the box's block publishes, in
    /// the block's order, where the template names them (`ports`: a dev container's
    /// `forwardPorts`); empty when each is published under its own number.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inside_ports: Vec<u16>,
    /// The template's own base image `image` was built on (`baseBuild`: an imported dev
    /// container's Dockerfile), which treebox built too: removed with the last image
    /// of its template. `None` for a base of the user's (`baseImage`) or the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_image: Option<String>,
}

impl ContainerRecord {
    /// The port inside the container of the `i`-th port, `port`, of the box's block.
    pub fn inside(&self, i: usize, port: u16) -> u16 {
        self.inside_ports.get(i).copied().unwrap_or(port)
    }
}

/// The resource limits of a box's container (SPEC §7 "Limits"), resolved from the
/// user's config when the box is made and kept in its record, so that a container
/// made again gets the same ones. 0 is "no limit" for that one. JSON:
/// `{"pids": 4096, "memory": 8589934592, "cpus": 2.0}` (memory in bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// Processes (and threads) at once.
    pub pids: u32,
    /// Memory in bytes.
    pub memory: u64,
    /// CPUs, in thousandths (`1.5` CPUs is 1500).
    #[serde(rename = "cpus", with = "thousandths")]
    pub milli_cpus: u32,
}

impl Limits {
    /// `--memory` as both engines read it (binary units): `8g`, `512m`, else bytes.
    pub fn memory_arg(&self) -> String {
        const MIB: u64 = 1024 * 1024;
        match self.memory {
            m if m % (1024 * MIB) == 0 => format!("{}g", m / (1024 * MIB)),
            m if m % MIB == 0 => format!("{}m", m / MIB),
            m => m.to_string(),
        }
    }

    /// `--cpus` as both engines read it: `2`, `1.5`, `0.25`.
    pub fn cpus_arg(&self) -> String {
        let (whole, frac) = (self.milli_cpus / 1000, self.milli_cpus % 1000);
        if frac == 0 {
            whole.to_string()
        } else {
            format!("{whole}.{frac:03}")
                .trim_end_matches('0')
                .to_string()
        }
    }
}

impl std::fmt::Display for Limits {
    /// `4096 processes, 8g memory, 2 CPUs`, with `no … limit` for each one off.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        parts.push(match self.pids {
            0 => "no process limit".to_string(),
            n => format!("{n} processes"),
        });
        parts.push(match self.memory {
            0 => "no memory limit".to_string(),
            _ => format!("{} memory", self.memory_arg()),
        });
        parts.push(match self.milli_cpus {
            0 => "no CPU limit".to_string(),
            1000 => "1 CPU".to_string(),
            _ => format!("{} CPUs", self.cpus_arg()),
        });
        f.write_str(&parts.join(", "))
    }
}

/// Thousandths of a CPU, written and read as a number of CPUs.
mod thousandths {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(milli: &u32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(f64::from(*milli) / 1000.0)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        let cpus = f64::deserialize(d)?;
        if !(0.0..=1_000_000.0).contains(&cpus) {
            return Err(serde::de::Error::custom("cpus out of range"));
        }
        // In range, so the rounded value fits.
        Ok((cpus * 1000.0).round() as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_as_the_engines_read_them_and_as_json() {
        let l = Limits {
            pids: 4096,
            memory: 8 << 30,
            milli_cpus: 1500,
        };
        assert_eq!(l.memory_arg(), "8g");
        assert_eq!(l.cpus_arg(), "1.5");
        assert_eq!(l.to_string(), "4096 processes, 8g memory, 1.5 CPUs");
        let json = serde_json::to_string(&l).unwrap();
        assert_eq!(json, r#"{"pids":4096,"memory":8589934592,"cpus":1.5}"#);
        assert_eq!(serde_json::from_str::<Limits>(&json).unwrap(), l);
        let small = Limits {
            pids: 0,
            memory: 512 << 20,
            milli_cpus: 250,
        };
        assert_eq!(small.memory_arg(), "512m");
        assert_eq!(small.cpus_arg(), "0.25");
        assert_eq!(
            small.to_string(),
            "no process limit, 512m memory, 0.25 CPUs"
        );
        let odd = Limits {
            pids: 1,
            memory: 1000,
            milli_cpus: 2000,
        };
        assert_eq!(
            (odd.memory_arg(), odd.cpus_arg()),
            ("1000".into(), "2".into())
        );
        assert!(serde_json::from_str::<Limits>(r#"{"pids":1,"memory":1,"cpus":-1}"#).is_err());
    }
}
