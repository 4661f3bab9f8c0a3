//! The closed vocabulary of package ecosystems (SPEC §3: uv, pnpm, npm, go, cargo) and
//! their detection from the lockfiles at a box's root.
//!
//! Invariants: the serde and display names are the strings records, config and JSON
//! already use ("uv", "pnpm", ...); detection never follows a symlink and looks at the
//! root only (box content is hostile input). Callers: provisioning (planning, setup,
//! the lockfile hash), the container runner (which tools an image needs), `folder`.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// A package ecosystem that setup knows how to install.
///
/// The derived order is the fixed detection and hashing order.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Ecosystem {
    Uv,
    Pnpm,
    Npm,
    Go,
    Cargo,
}

impl Ecosystem {
    /// Every ecosystem, in detection order.
    pub const ALL: [Ecosystem; 5] = [
        Ecosystem::Uv,
        Ecosystem::Pnpm,
        Ecosystem::Npm,
        Ecosystem::Go,
        Ecosystem::Cargo,
    ];

    /// The name used in config, state and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Uv => "uv",
            Ecosystem::Pnpm => "pnpm",
            Ecosystem::Npm => "npm",
            Ecosystem::Go => "go",
            Ecosystem::Cargo => "cargo",
        }
    }

    /// The lockfile whose presence at the box root selects this ecosystem.
    pub fn lockfile(self) -> &'static str {
        match self {
            Ecosystem::Uv => "uv.lock",
            Ecosystem::Pnpm => "pnpm-lock.yaml",
            Ecosystem::Npm => "package-lock.json",
            Ecosystem::Go => "go.sum",
            Ecosystem::Cargo => "Cargo.lock",
        }
    }

    /// The manifest that, with the lockfile, determines what gets installed.
    pub fn manifest(self) -> &'static str {
        match self {
            Ecosystem::Uv => "pyproject.toml",
            Ecosystem::Pnpm | Ecosystem::Npm => "package.json",
            Ecosystem::Go => "go.mod",
            Ecosystem::Cargo => "Cargo.toml",
        }
    }

    /// The program that installs it.
    pub fn program(self) -> &'static str {
        match self {
            Ecosystem::Uv => "uv",
            Ecosystem::Pnpm => "pnpm",
            Ecosystem::Npm => "npm",
            Ecosystem::Go => "go",
            Ecosystem::Cargo => "cargo",
        }
    }
}

impl fmt::Display for Ecosystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of the ecosystems.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown ecosystem `{0}` (expected one of: uv, pnpm, npm, go, cargo)")]
pub struct UnknownEcosystem(pub String);

impl FromStr for Ecosystem {
    type Err = UnknownEcosystem;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ecosystem::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| UnknownEcosystem(s.to_string()))
    }
}

/// True when `path` is a regular file, without following a symlink.
fn is_regular_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

/// Detect at the box root only (not recursively): uv (`uv.lock`), pnpm
/// (`pnpm-lock.yaml` — wins over npm: when both lockfiles exist only pnpm), npm
/// (`package-lock.json`), go (`go.sum`), cargo (`Cargo.lock`). Order: uv, pnpm, npm,
/// go, cargo. A lockfile that is a symlink or not a regular file does not count (box
/// content is hostile input).
pub fn detect(root: &Path) -> Vec<Ecosystem> {
    let mut found: Vec<Ecosystem> = Ecosystem::ALL
        .into_iter()
        .filter(|e| is_regular_file(&root.join(e.lockfile())))
        .collect();
    if found.contains(&Ecosystem::Pnpm) {
        found.retain(|e| *e != Ecosystem::Npm);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn write(root: &Path, name: &str, data: &[u8]) {
        fs::write(root.join(name), data).unwrap();
    }

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn names_round_trip() {
        for e in Ecosystem::ALL {
            assert_eq!(e.as_str().parse::<Ecosystem>().unwrap(), e);
            assert_eq!(e.to_string(), e.as_str());
            assert_eq!(e.program(), e.as_str());
        }
        let err = "yarn".parse::<Ecosystem>().unwrap_err();
        assert!(err.to_string().contains("`yarn`"), "{err}");
    }

    #[test]
    fn detects_each_ecosystem() {
        for e in Ecosystem::ALL {
            let d = tmp();
            write(d.path(), e.lockfile(), b"x");
            assert_eq!(detect(d.path()), vec![e], "{e}");
        }
    }

    #[test]
    fn detects_several_in_fixed_order() {
        let d = tmp();
        for name in ["Cargo.lock", "go.sum", "package-lock.json", "uv.lock"] {
            write(d.path(), name, b"x");
        }
        assert_eq!(
            detect(d.path()),
            vec![
                Ecosystem::Uv,
                Ecosystem::Npm,
                Ecosystem::Go,
                Ecosystem::Cargo
            ]
        );
    }

    #[test]
    fn pnpm_wins_over_npm() {
        let d = tmp();
        write(d.path(), "package-lock.json", b"{}");
        write(d.path(), "pnpm-lock.yaml", b"x");
        assert_eq!(detect(d.path()), vec![Ecosystem::Pnpm]);
    }

    #[test]
    fn symlinked_or_non_regular_lockfile_ignored() {
        let outside = tmp();
        write(outside.path(), "real.lock", b"x");
        let d = tmp();
        symlink(
            outside.path().join("real.lock"),
            d.path().join("Cargo.lock"),
        )
        .unwrap();
        fs::create_dir(d.path().join("uv.lock")).unwrap();
        assert_eq!(detect(d.path()), Vec::<Ecosystem>::new());
    }

    #[test]
    fn nested_lockfile_not_detected() {
        let d = tmp();
        fs::create_dir(d.path().join("sub")).unwrap();
        write(&d.path().join("sub"), "Cargo.lock", b"x");
        assert!(detect(d.path()).is_empty());
    }

    #[test]
    fn nothing_detected_in_empty_dir() {
        assert!(detect(tmp().path()).is_empty());
    }
}
