//! The `ports` check: this repository's boxes that have no block of ports (SPEC §7b),
//! made before boxes had them. A container's published ports are fixed when it is
//! made, so such a box cannot gain them: the way out is a new box.

use super::{Check, Status};
use crate::config::UserConfig;
use crate::git::repo::Repo;

pub(super) fn check_ports(repo: &Repo, cfg: &UserConfig) -> Check {
    let (count, from) = (cfg.ports.count(), cfg.ports.from());
    if count == 0 {
        return Check::new(
            "ports",
            Status::Ok,
            "off: new boxes get no ports (\"ports\": {\"count\": 0})",
        );
    }
    let Ok(layout) = crate::state::Layout::new(&repo.main_root, &repo.common_dir) else {
        return Check::new("ports", Status::Advisory, "not checked: no state directory");
    };
    let all = crate::boxes::inventory(repo, &layout);
    let (with, without): (Vec<_>, Vec<_>) = all
        .iter()
        .filter_map(|e| e.record.as_ref())
        .filter(|r| r.git_mode != crate::vocab::GitMode::Folder)
        .partition(|r| !r.ports.is_empty());
    let blocks = format!("new boxes get {count} port(s) each, in blocks from {from}");
    match without.first() {
        None => Check::new(
            "ports",
            Status::Ok,
            format!("{} box(es) with a block of ports; {blocks}", with.len()),
        ),
        Some(first) => {
            let names: Vec<&str> = without.iter().map(|r| r.name.as_str()).collect();
            Check::new(
                "ports",
                Status::Advisory,
                format!(
                    "box(es) with no ports, made before boxes had them: {}; {blocks}",
                    names.join(", ")
                ),
            )
            .hint(format!(
                "A container cannot gain published ports: when one of them needs a dev server, bring its work back and make it again (`git sandbox fetch {q}`, `git treebox teardown {q}`, `git treebox create --checkout BRANCH`).",
                q = crate::cmd::quote(&first.name)
            ))
        }
    }
}
