//! The bundled template `default`, embedded in the binary from `templates/default/`.
//!
//! A static list of relative path, bytes and mode; a unit test keeps the list and the
//! directory in step, and another sees that the bundled template has no problems.
//! Used by [`store`](super::store) (listing, `find("default")`, `init`) and runners.

use std::borrow::Cow;

use super::{assemble, Source, Template, TemplateFile};

/// The name of the bundled template.
pub const BUNDLED_NAME: &str = "default";

pub(super) struct Bundled {
    pub(super) path: &'static str,
    pub(super) bytes: &'static [u8],
    pub(super) mode: u32,
}

/// The bundled template, embedded at compile time (a test keeps this list and
/// `templates/default/` in step).
pub(super) const BUNDLED: &[Bundled] = &[
    Bundled {
        path: "Dockerfile",
        bytes: include_bytes!("../../templates/default/Dockerfile"),
        mode: 0o644,
    },
    Bundled {
        path: "allowlist.txt",
        bytes: include_bytes!("../../templates/default/allowlist.txt"),
        mode: 0o644,
    },
    Bundled {
        path: "container.json",
        bytes: include_bytes!("../../templates/default/container.json"),
        mode: 0o644,
    },
    Bundled {
        path: "init-firewall.sh",
        bytes: include_bytes!("../../templates/default/init-firewall.sh"),
        mode: 0o755,
    },
];

/// The bundled template `default`, from the binary.
pub fn bundled() -> Template {
    bundled_checked().0
}

/// The bundled template and its problems (none: a unit test sees to that).
pub(super) fn bundled_checked() -> (Template, Vec<String>) {
    let files = BUNDLED
        .iter()
        .map(|b| TemplateFile {
            path: b.path.to_string(),
            contents: Cow::Borrowed(b.bytes),
            mode: b.mode,
        })
        .collect();
    assemble(BUNDLED_NAME, Source::Bundled, files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::spec::dockerfile_args;
    use crate::template::{Capability, Firewall, DOCKERFILE};
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    #[test]
    fn bundled_template_is_valid_and_complete() {
        let (b, problems) = bundled_checked();
        assert!(problems.is_empty(), "{problems:#?}");
        let spec = b.spec();
        assert_eq!(
            spec.firewall,
            Some(Firewall {
                script: "init-firewall.sh".into(),
                allowlist: "allowlist.txt".into()
            })
        );
        assert_eq!(spec.cap_add, vec![Capability::NetAdmin, Capability::NetRaw]);
        assert_eq!(
            spec.base_image_for(None).as_deref(),
            Some("node:22-bookworm-slim")
        );
        assert_eq!(
            spec.base_image_for(Some("20")).as_deref(),
            Some("node:20-bookworm-slim")
        );
        assert_eq!(
            spec.base_image_for(Some("20; rm -rf /")).as_deref(),
            Some("node:22-bookworm-slim")
        );
        assert_eq!(b.file("./init-firewall.sh").map(|f| f.mode), Some(0o755));
        assert_eq!(b.digest().len(), 64);
    }

    #[test]
    fn bundled_list_matches_the_templates_dir() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/default");
        let mut on_disk: Vec<(String, u32)> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| {
                let mode = e.metadata().unwrap().permissions().mode();
                let mode = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
                (e.file_name().to_string_lossy().into_owned(), mode)
            })
            .collect();
        on_disk.sort();
        let listed: Vec<(String, u32)> = BUNDLED
            .iter()
            .map(|b| (b.path.to_string(), b.mode))
            .collect();
        assert_eq!(listed, on_disk, "update BUNDLED in src/template/bundled.rs");
    }

    #[test]
    fn bundled_build_args_match_dockerfile_defaults() {
        // The pins live in two places (container.json for operators, the Dockerfile for
        // a plain `docker build`); they must agree.
        let b = bundled();
        let dockerfile =
            String::from_utf8_lossy(&b.file(DOCKERFILE).unwrap().contents).into_owned();
        for (k, v) in &b.spec().build_args {
            let line = format!("ARG {k}={v}");
            assert!(
                dockerfile.lines().any(|l| l == line),
                "Dockerfile lacks `{line}`"
            );
        }
        let base = b.spec().base_image_for(None).unwrap();
        assert!(dockerfile.contains(&format!("ARG BASE_IMAGE={base}")));
        for needed in [
            "AGENT_UID",
            "AGENT_GID",
            "NODE_VERSION",
            "INSTALL_AGENTS",
            "INSTALL_GH",
        ] {
            assert!(dockerfile_args(Some(dockerfile.as_bytes())).contains(&needed.to_string()));
        }
    }

    #[test]
    fn bundled_allowlist_has_the_defaults() {
        let b = bundled();
        let text = String::from_utf8_lossy(&b.file("allowlist.txt").unwrap().contents).into_owned();
        for host in [
            "api.anthropic.com",
            "api.openai.com",
            "registry.npmjs.org",
            "pypi.org",
            "files.pythonhosted.org",
            "proxy.golang.org",
            "index.crates.io",
            "static.crates.io",
        ] {
            assert!(text.lines().any(|l| l.trim() == host), "{host}");
        }
        // A forge is reached only with `--allow-forge`, box by box (issue 17).
        for forge in ["github.com", "api.github.com", "gitlab.com"] {
            assert!(!text.lines().any(|l| l.trim() == forge), "{forge} listed");
        }
    }
}
