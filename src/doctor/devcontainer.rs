//! The `devcontainer` check: the templates imported from this repository's dev
//! container (SPEC §7b), and whether the file committed at `HEAD` has changed since.

use super::{Check, Status};
use crate::git::repo::Repo;
use crate::template::devcontainer;

pub(super) fn check_devcontainer(repo: &Repo) -> Check {
    let imported = devcontainer::imported_here(repo);
    let committed = devcontainer::committed(&repo.git).ok().flatten();
    if imported.is_empty() {
        return match committed {
            Some(c) => Check::new(
                "devcontainer",
                Status::Ok,
                format!("{} is committed here; treebox uses it only once imported", c.path),
            )
            .hint("To build boxes on it, review and import it: `git treebox template import-devcontainer`."),
            None => Check::new("devcontainer", Status::Ok, "none committed here"),
        };
    }
    let names: Vec<&str> = imported.iter().map(|(n, _)| n.as_str()).collect();
    match imported.iter().find_map(|(_, w)| w.as_ref()) {
        None => Check::new(
            "devcontainer",
            Status::Ok,
            format!(
                "template(s) {} imported from this repository's dev container, which has not changed since",
                names.join(", ")
            ),
        ),
        Some(w) => Check::new("devcontainer", Status::Advisory, w.clone()),
    }
}
