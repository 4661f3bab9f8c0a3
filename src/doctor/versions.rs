//! The `versions` check: the agent CLI the user runs on the host against the one in
//! each container box's image (issue 29: skew). The image's is what treebox learned
//! when it built the image (`runner::oci::agents`), or learns here once for an image
//! built before; the host's is `<program> --version`, asked only for a harness some
//! container box uses.

use std::collections::BTreeMap;
use std::time::Duration;

use super::probe::output_within;
use super::{Check, Status};
use crate::config::UserConfig;
use crate::git::repo::Repo;
use crate::harness::Harness;
use crate::runner::oci::agents::{self, AgentVersions};
use crate::runner::oci::Engine;
use crate::state::Layout;

/// One container box: its name, harness and what its image holds (`None`: unknown:
/// the image is gone, or its shell did not answer).
struct Boxed {
    leaf: String,
    harness: Harness,
    image: Option<AgentVersions>,
}

pub(super) fn check_versions(repo: &Repo, cfg: &UserConfig, limit: Duration) -> Check {
    let (Ok(layout), Ok(root)) = (
        Layout::new(&repo.main_root, &repo.common_dir),
        crate::state::layout::state_root(),
    ) else {
        return Check::new("versions", Status::Ok, "no container boxes");
    };
    let boxes: Vec<Boxed> = crate::boxes::inventory(repo, &layout)
        .iter()
        .filter_map(|e| {
            let r = e.record.as_ref()?;
            let c = r.container.as_ref()?;
            let engine = Engine::parse(&c.engine)?;
            let facts = agents::facts_path(&root, engine, &c.image);
            if agents::read(&facts).is_none() && engine.image_exists(&c.image) {
                // Built before treebox kept it (or by another user's treebox): learn it
                // once now.
                if let Some(out) = agents::ask(engine, &c.image, limit) {
                    agents::keep(&out, &facts);
                }
            }
            Some(Boxed {
                leaf: e.leaf.to_string(),
                harness: r.harness,
                image: agents::read(&facts),
            })
        })
        .collect();
    let mut host: BTreeMap<Harness, Option<String>> = BTreeMap::new();
    for b in &boxes {
        host.entry(b.harness).or_insert_with(|| {
            let program = cfg.harness_program(b.harness);
            let cmd = crate::cmd::Cmd::new(&program).arg("--version");
            let out = output_within(&cmd, limit).ok().flatten()?;
            agents::version_in(&String::from_utf8_lossy(&out.stdout))
        });
    }
    finding(&boxes, &host)
}

fn finding(boxes: &[Boxed], host: &BTreeMap<Harness, Option<String>>) -> Check {
    if boxes.is_empty() {
        return Check::new("versions", Status::Ok, "no container boxes");
    }
    let mut skew = Vec::new();
    let mut missing = Vec::new();
    let mut unknown = Vec::new();
    let mut same = Vec::new();
    for b in boxes {
        let here = host.get(&b.harness).cloned().flatten();
        match b.image.as_ref().map(|v| v.of(b.harness)) {
            None => unknown.push(b.leaf.clone()),
            Some(None) => missing.push(format!("{} ({})", b.leaf, b.harness)),
            Some(Some(v)) => match here {
                Some(h) if h != v => skew.push(format!("{}: {} {v} (here {h})", b.leaf, b.harness)),
                _ => same.push(format!("{}: {} {v}", b.leaf, b.harness)),
            },
        }
    }
    let mut parts = Vec::new();
    if !skew.is_empty() {
        parts.push(format!("not the CLI you run here: {}", skew.join(", ")));
    }
    if !missing.is_empty() {
        parts.push(format!("no agent CLI in the image: {}", missing.join(", ")));
    }
    if !same.is_empty() {
        parts.push(format!("as here: {}", same.join(", ")));
    }
    if !unknown.is_empty() {
        parts.push(format!(
            "unknown (the image is gone or did not answer): {}",
            unknown.join(", ")
        ));
    }
    let summary = parts.join("; ");
    if skew.is_empty() && missing.is_empty() {
        return Check::new("versions", Status::Ok, summary);
    }
    Check::new("versions", Status::Advisory, summary).hint(
        "Build the image with the CLI you use (the template's buildArgs CLAUDE_CODE_VERSION / CODEX_VERSION, or your own baseImage), then make the box again: `git treebox teardown NAME` and `git treebox create NAME`.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(leaf: &str, h: Harness, image: Option<(Option<&str>, Option<&str>)>) -> Boxed {
        Boxed {
            leaf: leaf.into(),
            harness: h,
            image: image.map(|(c, x)| AgentVersions {
                claude: c.map(str::to_string),
                codex: x.map(str::to_string),
            }),
        }
    }

    #[test]
    fn skew_missing_and_unknown_are_named() {
        let mut host = BTreeMap::new();
        host.insert(Harness::Claude, Some("2.1.332".to_string()));
        assert_eq!(finding(&[], &host).status, Status::Ok);
        let same = finding(
            &[b("a", Harness::Claude, Some((Some("2.1.332"), None)))],
            &host,
        );
        assert_eq!(same.status, Status::Ok);
        assert_eq!(same.summary, "as here: a: claude 2.1.332");
        let c = finding(
            &[
                b("a", Harness::Claude, Some((Some("2.1.280"), None))),
                b("b", Harness::Claude, Some((None, None))),
                b("c", Harness::Claude, None),
            ],
            &host,
        );
        assert_eq!(c.status, Status::Advisory);
        assert_eq!(
            c.summary,
            "not the CLI you run here: a: claude 2.1.280 (here 2.1.332); no agent CLI in the image: b (claude); unknown (the image is gone or did not answer): c"
        );
        assert!(c.hint.unwrap().contains("teardown"));
        // No CLI on the host: nothing to compare, the image's is shown as it is.
        let none = BTreeMap::from([(Harness::Claude, None)]);
        let n = finding(
            &[b("a", Harness::Claude, Some((Some("2.1.280"), None)))],
            &none,
        );
        assert_eq!(n.status, Status::Ok);
    }
}
