//! The box image: the [`Spec`] of a box's container, the agent identity it runs as, the
//! build arguments, the image tag and the build.
//!
//! Invariants:
//! - The template is operator-owned (bundled or the user's), never the repository's;
//!   it is rendered into the box's host-owned bookkeeping, outside every mount. The
//!   repository is read only for its declared Node major, as untrusted data.
//! - Images are tagged by a hash of the rendered template and its build arguments, so
//!   boxes share an image and an unchanged template never rebuilds; one build at a time
//!   per engine on this machine.
//!
//! Called by `provision` (which fills in a `Spec`) and by `container` (`create`).

use std::path::{Path, PathBuf};

use super::engine::Engine;
use super::error::{io_err, ContainerError};
use super::launch::{self, Identity};
use crate::git::Repo;
use crate::harness::Harness;
use crate::names::Leaf;
use crate::state::{Layout, Record};
use crate::template::{self, Template};

/// Everything needed to make (or remake) a box's container.
pub struct Spec<'a> {
    /// The user's repository; `None` for a folder box (a project without git).
    pub repo: Option<&'a Repo>,
    pub layout: &'a Layout,
    pub leaf: &'a Leaf,
    pub record: &'a Record,
    pub engine: Engine,
    pub template: Template,
    pub harness: Harness,
    pub firewall: bool,
    pub extra_allow: Vec<String>,
}

/// The image tag for a template and its build arguments.
fn image_tag(template: &Template, args: &[(String, String)]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(template.digest().as_bytes());
    for (k, v) in args {
        h.update(k.as_bytes());
        h.update([0]);
        h.update(v.as_bytes());
        h.update([0]);
    }
    let hex = hex::encode(&h.finalize()[..8]);
    format!("treebox-{}:{hex}", template.name())
}

/// The tag of a template's own base image (`baseBuild`): its contents decide it.
pub(super) fn base_tag(template: &Template) -> String {
    let hex: String = template.digest().chars().take(16).collect();
    format!("treebox-base-{}:{hex}", template.name())
}

fn host_ids() -> (u32, u32) {
    // SAFETY: getuid/getgid cannot fail and touch no memory.
    unsafe { (libc::getuid(), libc::getgid()) }
}

/// The repository's declared Node major (`.nvmrc`, `.node-version`, `package.json`
/// engines, `.tool-versions`), read as untrusted data: only a leading number is taken.
pub fn node_major(root: &Path) -> Option<String> {
    fn read_small(p: &Path) -> Option<String> {
        let m = std::fs::symlink_metadata(p).ok()?;
        if !m.is_file() || m.len() > 64 * 1024 {
            return None;
        }
        std::fs::read_to_string(p).ok()
    }
    fn major(s: &str) -> Option<String> {
        let s = s.trim().trim_start_matches(['v', '^', '~', '>', '=', ' ']);
        let digits: String = s.chars().take_while(char::is_ascii_digit).take(3).collect();
        (!digits.is_empty()).then_some(digits)
    }
    for f in [".nvmrc", ".node-version"] {
        if let Some(m) = read_small(&root.join(f)).as_deref().and_then(major) {
            return Some(m);
        }
    }
    if let Some(text) = read_small(&root.join("package.json")) {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
            if let Some(m) = v["engines"]["node"].as_str().and_then(major) {
                return Some(m);
            }
        }
    }
    if let Some(text) = read_small(&root.join(".tool-versions")) {
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            if matches!(parts.next(), Some("nodejs" | "node")) {
                if let Some(m) = parts.next().and_then(major) {
                    return Some(m);
                }
            }
        }
    }
    None
}

impl Spec<'_> {
    /// The identity the agent and every program treebox starts in the box run as:
    /// never root, never the host user's uid ([`launch::agent_ids`]). A template's
    /// `user` may choose another, numeric and under the same rule.
    pub(super) fn agent_identity(&self) -> Result<Identity, ContainerError> {
        let (host_uid, host_gid) = host_ids();
        let (uid, gid) = launch::agent_ids(host_uid, host_gid);
        let home = PathBuf::from("/home/agent");
        let id = match self.template.spec().user.as_deref() {
            None => Identity { uid, gid, home },
            Some(u) => {
                let (user, group) = u.split_once(':').unwrap_or((u, ""));
                let parsed = user.parse::<u32>().ok().map(|uid| Identity {
                    uid,
                    gid: group.parse().unwrap_or(uid),
                    home,
                });
                match parsed {
                    Some(id) if id.allowed(host_uid) => id,
                    _ => {
                        return Err(ContainerError::BadTemplate {
                            name: self.template.name().to_string(),
                            problems: format!(
                                "`user` is `{}`: the agent runs as a numeric uid (`uid:gid`) other than 0 and yours ({host_uid})",
                                crate::sanitize::line(u)
                            ),
                        })
                    }
                }
            }
        };
        Ok(id)
    }

    fn build_args(&self, agent: &Identity) -> Vec<(String, String)> {
        let node = node_major(&self.record.path);
        let mut args: Vec<(String, String)> = Vec::new();
        if self.template.spec().base_build.is_some() {
            args.push(("BASE_IMAGE".into(), base_tag(&self.template)));
        } else if let Some(base) = self.template.spec().base_image_for(node.as_deref()) {
            args.push(("BASE_IMAGE".into(), base));
        }
        args.push(("AGENT_UID".into(), agent.uid.to_string()));
        args.push(("AGENT_GID".into(), agent.gid.to_string()));
        args.push((
            "NODE_VERSION".into(),
            node.unwrap_or_else(|| template::DEFAULT_NODE_VERSION.to_string()),
        ));
        for (k, v) in &self.template.spec().build_args {
            args.push((k.clone(), v.clone()));
        }
        args
    }

    /// The tag of the box's image: its template's files and build arguments.
    pub fn image_tag(&self, agent: &Identity) -> String {
        image_tag(&self.template, &self.build_args(agent))
    }

    /// Build the image unless one with the same template and arguments exists.
    pub fn ensure_image(&self, agent: &Identity) -> Result<String, ContainerError> {
        let args = self.build_args(agent);
        let tag = image_tag(&self.template, &args);
        if self.engine.image_exists(&tag) {
            return Ok(tag);
        }
        // One build at a time per engine on this machine: concurrent creates would
        // build the same image twice, and podman's builds race with each other. The
        // first waits-and-builds; the rest find the image made when they get the lock.
        let lock_path = self.layout.build_lock_path(self.engine.program());
        let _build_lock = crate::state::WaitedLock::acquire(&lock_path)
            .map_err(io_err("could not lock", &lock_path))?;
        if self.engine.image_exists(&tag) {
            return Ok(tag);
        }
        let ctx = self.layout.build_dir(self.leaf);
        if ctx.exists() {
            std::fs::remove_dir_all(&ctx).map_err(io_err("could not clear", &ctx))?;
        }
        std::fs::create_dir_all(&ctx).map_err(io_err("could not create", &ctx))?;
        self.template.write_to(&ctx)?;
        // A base of the template's own (an imported dev container's Dockerfile): built
        // first, from the template's files, under a tag of the template's contents.
        if let Some(b) = &self.template.spec().base_build {
            let base = base_tag(&self.template);
            if !self.engine.image_exists(&base) {
                let context = ctx.join(&b.context);
                std::fs::create_dir_all(&context).map_err(io_err("could not create", &context))?;
                let args: Vec<(String, String)> =
                    b.args.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                self.engine
                    .build_file(&base, &context, Some(&ctx.join(&b.dockerfile)), &args)
                    .output()
                    .map_err(ContainerError::Build)?;
            }
        }
        self.engine
            .build(&tag, &ctx, &args)
            .output()
            .map_err(ContainerError::Build)?;
        // Which agent CLIs it holds, for doctor's `versions` (once per image).
        if let Ok(root) = crate::state::layout::state_root() {
            let facts = super::agents::facts_path(&root, self.engine, &tag);
            super::agents::learn(self.engine, &tag, &facts);
        }
        Ok(tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_major_sources() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(node_major(d.path()), None);
        std::fs::write(
            d.path().join(".tool-versions"),
            "python 3.12\nnodejs 18.19.0\n",
        )
        .unwrap();
        assert_eq!(node_major(d.path()).as_deref(), Some("18"));
        std::fs::write(
            d.path().join("package.json"),
            r#"{"engines":{"node":">=20.1"}}"#,
        )
        .unwrap();
        assert_eq!(node_major(d.path()).as_deref(), Some("20"));
        std::fs::write(d.path().join(".nvmrc"), "v22.3.0\n").unwrap();
        assert_eq!(node_major(d.path()).as_deref(), Some("22"));
        std::fs::write(d.path().join(".nvmrc"), "$(rm -rf /)\n").unwrap();
        assert_eq!(node_major(d.path()).as_deref(), Some("20"));
    }
}
