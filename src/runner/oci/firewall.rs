//! The egress firewall: the template's allowlist plus the user's entries, applied as
//! root inside the container by the image's firewall script. It fails closed: a script
//! that fails is an error and egress stays denied.
//!
//! Called by `container` (after a create or a restart) and through `Spec::apply_firewall`.

use std::path::Path;

use super::engine::Engine;
use super::error::ContainerError;
use super::image::Spec;
use crate::template::Template;

/// The firewall script's path inside the image (see the default Dockerfile).
pub const FIREWALL: &str = "/usr/local/sbin/treebox-init-firewall";

impl Spec<'_> {
    /// Apply the egress firewall as root, with the template's allowlist plus the
    /// user's; failing closed.
    pub fn apply_firewall(&self, name: &str) -> Result<(), ContainerError> {
        apply_firewall(self.engine, name, &self.template, &self.extra_allow)
    }
}

/// The allowlist the firewall gets: the template's plus the user's extra entries.
fn allowlist(template: &Template, extra: &[String]) -> Vec<u8> {
    let mut text = template
        .spec()
        .firewall
        .as_ref()
        .and_then(|f| template.file(&f.allowlist))
        .map(|f| f.contents.to_vec())
        .unwrap_or_default();
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    for e in extra {
        text.extend_from_slice(e.as_bytes());
        text.push(b'\n');
    }
    text
}

pub fn apply_firewall(
    engine: Engine,
    name: &str,
    template: &Template,
    extra: &[String],
) -> Result<(), ContainerError> {
    engine
        .exec(
            name,
            "0:0",
            Path::new("/"),
            &[],
            false,
            &[FIREWALL.into(), "-".into()],
        )
        .stdin_bytes(allowlist(template, extra))
        .output()
        .map(|_| ())
        .map_err(ContainerError::Firewall)
}
