//! `git treebox teardown` / `rm`: remove boxes, protecting the careless.
//!
//! Every REF is resolved before anything is removed (one typo: exit 3, nothing
//! removed). A dirty box, a box with a live agent session, or unpushed commits on a
//! branch about to be deleted: exit 5 naming the box, unless `--force`. Then, without
//! `--force`, a terminal is asked `[y/N]` (each box shown with what it holds: `landed
//! (squash-merged into origin/main)`, `2 commits not in origin/main`); without a
//! terminal the answer is exit 5 — unless every box is landed with nothing else to
//! lose (SPEC §10b), which goes without a question.

use super::json::{Document, RemovedDocument};
use clap::Args;

use super::error::{self, CliError, ErrorKind};
use super::ui::Ui;
use crate::boxes;
use crate::git::Repo;
use crate::provision::ProvisionError;
use crate::teardown::{self, Target, TeardownError};

#[derive(Debug, Clone, Args)]
pub struct TeardownArgs {
    /// Boxes to remove: names, current branches, or unique parts of either. Without
    /// one, on a terminal, a picker shows what each box would lose.
    #[arg(value_name = "REF")]
    pub refs: Vec<String>,
    /// Remove without asking, even dirty boxes and boxes with a live session (which is
    /// ended: the agent goes first, whether it runs in tmux or in the foreground).
    #[arg(short, long)]
    pub force: bool,
    /// Also delete each box's branch.
    #[arg(long)]
    pub delete_branch: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn from_teardown(e: TeardownError) -> CliError {
    match e {
        TeardownError::Lock(l) => CliError::from(ProvisionError::Lock(l)),
        TeardownError::Container(c) => CliError::from(ProvisionError::Container(c)),
        e @ TeardownError::NotABoxPath { .. } => CliError::of(ErrorKind::NotABoxPath, e),
        e @ TeardownError::Changed { .. } => CliError::of(ErrorKind::Changed, e)
            .hint("Look at it again (`git sandbox ls` says what it holds now), then run the same command again."),
        e @ (TeardownError::Remove { .. } | TeardownError::Branch { .. }) => {
            CliError::of(ErrorKind::Teardown, e)
        }
        TeardownError::Outlived { ref pids, .. } => {
            let pids = pids.iter().map(i32::to_string).collect::<Vec<_>>().join(" ");
            CliError::of(ErrorKind::Teardown, e).hint(format!(
                "See what holds it with `ps -o pid,stat,cmd -p {pids}` (a process stuck in the kernel, state D, cannot be killed), then run the same command again."
            ))
        }
    }
}

pub fn run(args: TeardownArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let cfg = super::load_config()?;
    let (repo, layout) = super::here()?;
    let all = boxes::inventory(&repo, &layout);

    // Resolve every REF before touching anything.
    let mut chosen: Vec<boxes::BoxEntry> = Vec::new();
    if args.refs.is_empty() {
        if !ui.can_ask() || args.json {
            return Err(CliError::new(ErrorKind::Usage, "name the boxes to remove")
                .hint("`git treebox list` shows them; then `git treebox teardown <name>…`."));
        }
        chosen = pick(&all, &repo, &layout, ui)?;
        if chosen.is_empty() {
            ui.info("nothing removed");
            return Ok(error::OK);
        }
    } else {
        for r in &args.refs {
            let e = match boxes::resolve(&all, r, &repo) {
                Ok(e) => e,
                Err(e) => {
                    let e: CliError = super::box_elsewhere(
                        ProvisionError::from(e).into(),
                        r,
                        Some(&repo.common_dir),
                    );
                    // Not here: on another machine of the config, removed there.
                    if e.kind == ErrorKind::BoxNotFound {
                        if let Some(far) = super::on::find_elsewhere(&cfg, r)? {
                            let doc = super::on::remove_there(&far, args.force)?;
                            super::on::say_removed(&far, &doc, args.json, ui);
                            continue;
                        }
                    }
                    return Err(e);
                }
            };
            if !chosen.iter().any(|c| c.leaf == e.leaf) {
                chosen.push(e.clone());
            }
        }
        if chosen.is_empty() {
            return Ok(error::OK);
        }
    }
    let targets: Vec<Target> = chosen
        .into_iter()
        .map(|e| teardown::target_for(e, &repo, &layout, args.force))
        .collect();

    if !args.force {
        for t in &targets {
            if let Some(e) = refusal(t, ui.can_ask(), args.delete_branch) {
                return Err(e);
            }
        }
        // Landed boxes with nothing else to lose go without a question off a terminal.
        let all_landed = targets.iter().all(Target::landed_clean);
        if !ui.can_ask() && !all_landed {
            return Err(CliError::new(
                ErrorKind::NeedsConfirmation,
                "removing boxes needs confirmation, and there is no terminal to ask",
            )
            .hint(format!(
                "Remove without asking: `git treebox teardown --force {}`.",
                targets
                    .iter()
                    .map(|t| crate::cmd::quote(t.entry.leaf.as_str()))
                    .collect::<Vec<_>>()
                    .join(" ")
            )));
        }
        for t in &targets {
            ui.info(&format!("  {}  ({})", t.entry.leaf, teardown::describe(t)));
        }
        if ui.can_ask() && !ui.confirm(&format!("Remove {} box(es)?", targets.len())) {
            ui.info("nothing removed");
            if args.json {
                ui.out_json(&RemovedDocument::new(&repo.main_root, &ui.warnings, &[]).to_value());
            }
            return Ok(error::OK);
        }
    }

    let mut removed = Vec::new();
    for t in &targets {
        // With --force nothing was assessed: whatever the box holds goes.
        let r = teardown::remove_as_decided(&repo, &layout, t, args.delete_branch, args.force)
            .map_err(from_teardown)?;
        ui.info(&format!(
            "removed box `{}`{}",
            r.leaf,
            if r.branch_deleted {
                format!(" and branch `{}`", r.branch.as_deref().unwrap_or(""))
            } else {
                String::new()
            }
        ));
        removed.push(r);
    }
    if args.json {
        ui.out_json(&RemovedDocument::new(&repo.main_root, &ui.warnings, &removed).to_value());
    }
    Ok(error::OK)
}

/// Why teardown (without `--force`) refuses to remove `t`, if it does: a live session,
/// uncommitted changes, commits only the box holds (without a terminal to ask), or
/// unpushed commits on a branch `--delete-branch` would delete. `git treebox watch`'s
/// `x` asks the same.
pub(crate) fn refusal(t: &Target, can_ask: bool, delete_branch: bool) -> Option<CliError> {
    let name = t.entry.leaf.to_string();
    let again = format!("git treebox teardown --force {}", crate::cmd::quote(&name));
    if t.live {
        return Some(
            CliError::new(
                ErrorKind::SessionLive,
                format!("box `{name}` has a live agent session"),
            )
            .hint(format!(
                "Stop the agent first, or remove it anyway: `{again}`."
            )),
        );
    }
    if t.entry.dir_exists && t.assessment.loses_uncommitted() {
        return Some(
            CliError::new(
                ErrorKind::Dirty,
                format!(
                    "box `{name}` has {}",
                    if t.assessment.dirty.is_none() {
                        "a checkout whose changes cannot be read"
                    } else {
                        "uncommitted changes"
                    }
                ),
            )
            .hint(format!(
                "Commit or stash them in {}, or discard them: `{again}`.",
                t.entry.path.display()
            )),
        );
    }
    if t.assessment.unreturned == Some(true) && !t.landed_clean() && !can_ask {
        return Some(
            CliError::new(
                ErrorKind::Unreturned,
                format!("box `{name}` holds commits the repository does not have"),
            )
            .hint(format!(
                "Bring them back with `git sandbox fetch {}`, or drop them: `{again}`.",
                crate::cmd::quote(&name)
            )),
        );
    }
    if delete_branch && !t.is_landed() && t.assessment.unpushed.unwrap_or(0) > 0 {
        return Some(
            CliError::new(
                ErrorKind::Unpushed,
                format!("box `{name}`'s branch has commits that were never pushed"),
            )
            .hint(format!(
                "Push them, keep the branch (drop --delete-branch), or: `{again} --delete-branch`."
            )),
        );
    }
    None
}

/// `git sandbox down NAME` without `-f`, off a terminal (and the MCP server's
/// `box_remove`, always): refused while anything in `objections` stands (exit 5),
/// with the ways out.
pub(crate) fn down_refusal(
    t: &Target,
    objections: &[teardown::objections::Objection],
    repo: &Repo,
) -> CliError {
    let name = t.entry.leaf.to_string();
    let q = crate::cmd::quote(&name);
    let mut e = CliError::new(
        ErrorKind::NeedsConfirmation,
        teardown::objections::describe(&name, objections),
    )
    .hint(format!("Remove it anyway with `git sandbox down -f {q}`."));
    if objections.contains(&teardown::objections::Objection::Unreturned) {
        e = e.hint(if teardown::objections::current_branch_returned(t, repo) {
            format!(
                "Or bring the work back first: it is not on the box's current branch, which is what `git sandbox fetch` brings; in the box, switch to the branch that holds it (`git stash branch <name>` for a stash), then `git sandbox fetch {q}`."
            )
        } else {
            format!("Or bring the work back first: `git sandbox fetch {q}`.")
        });
    }
    e
}

/// `asked` is only a part of box `leaf`'s name: naming the box is the decision (SPEC
/// §2), so `down` off a terminal (and `box_remove`) refuses it (exit 5).
pub(crate) fn not_named_whole(asked: &str, leaf: &str) -> CliError {
    CliError::new(ErrorKind::NeedsConfirmation, part_of_name(asked, leaf)).hint(format!(
        "Name the box whole: `git sandbox down {}`.",
        crate::cmd::quote(leaf)
    ))
}

/// "`asked` is a part of box `leaf`'s name".
pub(crate) fn part_of_name(asked: &str, leaf: &str) -> String {
    format!(
        "`{}` is a part of box `{leaf}`'s name",
        crate::sanitize::line(asked)
    )
}

/// The picker: every box with what removing it would lose; the user types numbers.
fn pick(
    all: &[boxes::BoxEntry],
    repo: &Repo,
    layout: &crate::state::Layout,
    ui: &mut Ui,
) -> Result<Vec<boxes::BoxEntry>, CliError> {
    if all.is_empty() {
        return Ok(Vec::new());
    }
    for (i, e) in all.iter().enumerate() {
        let t = teardown::target(e.clone(), repo, layout);
        ui.info(&format!(
            "{:>3}) {:<28} {:<28} {}",
            i + 1,
            e.leaf,
            e.shown_branch().unwrap_or("-"),
            teardown::describe(&t)
        ));
    }
    let answer = ui
        .ask("Remove which? (numbers separated by spaces; empty to cancel) ")
        .unwrap_or_default();
    let mut out = Vec::new();
    for word in answer.split([' ', ',']).filter(|w| !w.is_empty()) {
        let n: usize = word
            .parse()
            .ok()
            .filter(|n| (1..=all.len()).contains(n))
            .ok_or_else(|| CliError::new(ErrorKind::Usage, format!("not a box number: {word}")))?;
        out.push(all[n - 1].clone());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_that_outlives_the_kill_is_a_runtime_failure_naming_it() {
        let e = from_teardown(TeardownError::Outlived {
            leaf: "fix".into(),
            pids: vec![4242, 4343],
        });
        assert_eq!(e.kind, ErrorKind::Teardown);
        assert_eq!(e.code(), error::RUNTIME);
        let text = &e.message;
        assert!(
            text.contains("box `fix`") && text.contains("4242, 4343"),
            "{text}"
        );
        assert!(text.contains("nothing of the box was removed"), "{text}");
        assert!(
            e.hints
                .iter()
                .any(|h| h.contains("ps -o pid,stat,cmd -p 4242 4343")),
            "{:?}",
            e.hints
        );
    }
}
