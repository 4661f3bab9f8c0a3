//! `git treebox list` / `ls`: one row per box of this repository.
//!
//! Instant by construction: the inventory reads records and git's registration files,
//! commits come from one libgit2 handle on the user's repository, and no subprocess is
//! started per box (nor at all). A box whose work is already in its base shows as
//! `landed` (`crate::land::landed`, kept by commit ids between runs). What was read of a box is kept between runs while its
//! files are unchanged ([`summary`]); sessions and agent reports are read every time.

use super::json::{Document, ListBox, ListDocument, Progress, V1};
use clap::Args;

use super::error::{self, CliError};
use super::ui::Ui;
use crate::boxes::{self, BoxEntry};
use crate::maintain::summary::{self, Facts};
use crate::names::is_placeholder_branch;
use crate::state::{session, Layout};

#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Print the boxes as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also read each box's working tree: a DIRTY column (`dirty` in JSON) saying
    /// whether it holds uncommitted changes. A git status per box, so slower with many
    /// boxes (the plain list reads no working tree).
    #[arg(long)]
    pub dirty: bool,
    /// Also say which of each box's ports listen now: a PORTS column (`listening`,
    /// `loopbackOnly`, `unknown` in JSON). Reads the kernel's socket tables, this
    /// machine's once and each running container box's own: a few milliseconds a box.
    #[arg(long)]
    pub ports: bool,
}

/// One row, as data.
struct Row {
    name: String,
    path: String,
    branch: Option<String>,
    placeholder: bool,
    git_mode: Option<String>,
    runner: Option<String>,
    harness: Option<String>,
    /// The BOX cell: git mode and container runner.
    kind: String,
    /// When the box was made (its record's `createdAt`).
    created: Option<i64>,
    last_commit: Option<i64>,
    deps: &'static str,
    env: bool,
    live: bool,
    state: &'static str,
    /// What the agent last reported through the status channel, and when (live only).
    status: Option<crate::runner::oci::Reported>,
    /// How the agent ended, once its session has.
    exit: Option<i32>,
    /// The box's block of ports, and what of it listens now.
    ports: Vec<u16>,
    ports_now: Option<crate::runner::PortsNow>,
}

/// A row: the box's entry and the facts of its files (kept or read, see
/// [`summary`]), and what is read fresh every time — whether a session is live, the
/// agent's last report — on the machine's cores.
fn row(
    e: &BoxEntry,
    facts: &Facts,
    layout: &Layout,
    here: Option<&std::sync::OnceLock<Option<crate::ports::listen::Listening>>>,
) -> Row {
    let (live, agent) = session_view(layout, &e.leaf, facts.sessioned);
    let branch = e.shown_branch().map(str::to_string);
    let state = if e.record_error.is_some() {
        "bad-record"
    } else if !e.dir_exists {
        "missing"
    } else if e.record.is_none() {
        "no-record"
    } else if facts.broken {
        "broken"
    } else if e.admin_dir.is_none() && !e.owns_git() {
        "unregistered"
    } else {
        "ok"
    };
    Row {
        name: e.leaf.to_string(),
        path: e.path.to_string_lossy().into_owned(),
        placeholder: branch.as_deref().is_some_and(is_placeholder_branch),
        branch,
        git_mode: e.record.as_ref().map(|r| r.git_mode.to_string()),
        runner: e.record.as_ref().map(|r| r.runner.to_string()),
        harness: e.record.as_ref().map(|r| r.harness.to_string()),
        kind: kind(e.record.as_ref()),
        created: e
            .record
            .as_ref()
            .and_then(|r| i64::try_from(r.created_at).ok()),
        last_commit: facts.last_commit,
        deps: facts.deps.as_str(),
        env: facts.env,
        live,
        state,
        status: agent.status,
        exit: agent.exit,
        ports: e
            .record
            .as_ref()
            .map(|r| r.ports.clone())
            .unwrap_or_default(),
        ports_now: e
            .record
            .as_ref()
            .zip(here)
            .and_then(|(r, here)| crate::runner::ports_now(r, here)),
    }
}

/// What `list` and `ls` show of a box's agent: its last report; once its session has
/// ended, the agent's exit code (SPEC §7a) instead of what it reported before it ended
/// (which no longer holds).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AgentView {
    pub status: Option<crate::runner::oci::Reported>,
    pub exit: Option<i32>,
}

/// Whether the box's session is live, and its [`AgentView`]. A box whose state dir
/// held no session file when its facts were read ([`Facts::sessioned`], kept only while
/// that directory is unchanged) has no session to ask about: only its report is read.
pub(crate) fn session_view(
    layout: &crate::state::Layout,
    leaf: &crate::names::Leaf,
    sessioned: bool,
) -> (bool, AgentView) {
    if !sessioned {
        let status = crate::runner::oci::read_status(layout, leaf);
        return (false, AgentView { status, exit: None });
    }
    let live = session::is_live(&layout.session_path(leaf));
    (live, agent_view(layout, leaf, live))
}

pub(crate) fn agent_view(
    layout: &crate::state::Layout,
    leaf: &crate::names::Leaf,
    live: bool,
) -> AgentView {
    let status = crate::runner::oci::read_status(layout, leaf);
    if live {
        return AgentView { status, exit: None };
    }
    match crate::session::ended(&layout.session_path(leaf)) {
        // A report made after the session ended (by a program `run` in the box) holds.
        Some((_, at)) if status.is_some_and(|s| s.at > at) => AgentView { status, exit: None },
        Some((code, _)) => AgentView {
            status: None,
            exit: Some(code),
        },
        None => AgentView { status, exit: None },
    }
}

/// The AGENT cell: `working 3m` (its report and age), `exited N` once its session has
/// ended, `live` for a session with no report yet, `-` otherwise.
pub(crate) fn agent_cell(live: bool, view: &AgentView, now: i64) -> String {
    match (view.status.as_ref(), view.exit) {
        (Some(r), _) => status_cell(Some(r), now),
        (None, Some(code)) => format!("exited {code}"),
        (None, None) if live => "live".into(),
        (None, None) => "-".into(),
    }
}

/// `s` cut to `width` characters, the cut shown by `…`.
fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// What a box is, as the table shows it: `wt`, `clone`, `folder`, with `@docker` or
/// `@podman` in a container.
pub(crate) fn kind(record: Option<&crate::state::Record>) -> String {
    record.map_or_else(|| "-".into(), |r| kind_of(r.git_mode, r.runner))
}

/// [`kind`] of a box of this git mode and runner.
pub(crate) fn kind_of(git_mode: crate::vocab::GitMode, runner: crate::vocab::RunnerKind) -> String {
    use crate::vocab::GitMode;
    let mode = match git_mode {
        GitMode::Worktree => "wt",
        GitMode::Clone => "clone",
        GitMode::Folder => "folder",
    };
    if runner.is_container() {
        format!("{mode}@{runner}")
    } else {
        mode.to_string()
    }
}

pub(crate) use super::json::unix_seconds;

/// A status cell: `working 3m` (the report and its age), `-` when none.
pub(crate) fn status_cell(status: Option<&crate::runner::oci::Reported>, now: i64) -> String {
    match status {
        Some(r) => format!("{} {}", r.status.as_str(), age(now, unix_seconds(r.at))),
        None => "-".into(),
    }
}

/// `3m`, `5h`, `2d`, `7w`.
pub(crate) fn age(now: i64, then: i64) -> String {
    let s = (now - then).max(0);
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        86_400..=1_209_599 => format!("{}d", s / 86_400),
        _ => format!("{}w", s / 604_800),
    }
}

/// Every box of the repository, read once, for the table and the document alike.
struct Listing {
    rows: Vec<Row>,
    /// Per row: uncommitted changes, when asked (`--dirty`) and readable.
    dirt: Vec<Option<bool>>,
    /// Per row: whether its work has landed.
    landed: Vec<Option<bool>>,
}

fn gather(repo: &crate::git::Repo, layout: &Layout, dirty: bool, ports: bool) -> Listing {
    let listed = summary::list(repo, layout);
    // Which ports listen, only when asked: each table read costs milliseconds.
    let here = std::sync::OnceLock::new();
    let here = ports.then_some(&here);
    let rows: Vec<Row> = boxes::par::map(&listed, || (), |(), (e, f)| row(e, f, layout, here));
    let tips: Vec<Option<git2::Oid>> = listed.iter().map(|(_, f)| f.tip.map(|t| t.0)).collect();
    let entries: Vec<BoxEntry> = listed.into_iter().map(|(e, _)| e).collect();
    // Whether each box's work has landed: kept by commit ids, asked only when they
    // moved; the tips come with the summary, read again only where their ref changed.
    let landed = crate::land::landed::landed_all_at(&entries, &tips, repo, layout);
    let mut rows = rows;
    for (r, l) in rows.iter_mut().zip(&landed) {
        if r.state == "ok" && *l == Some(true) {
            r.state = "landed";
        }
    }
    // Uncommitted changes, only when asked: a status per box reads its whole tree.
    let dirt: Vec<Option<bool>> = if dirty {
        boxes::dirt_all(&entries, repo)
            .iter()
            .zip(&entries)
            .map(|(d, e)| d.dirty.filter(|_| e.dir_exists))
            .collect()
    } else {
        vec![None; rows.len()]
    };
    Listing { rows, dirt, landed }
}

/// `list --json`'s document of this listing.
fn document(l: &Listing, repo: &crate::git::Repo) -> serde_json::Value {
    let boxes: Vec<ListBox> = l
        .rows
        .iter()
        .zip(&l.dirt)
        .zip(&l.landed)
        .map(|((r, dirty), landed)| ListBox {
            name: &r.name,
            path: &r.path,
            branch: r.branch.as_deref(),
            placeholder: r.placeholder,
            git_mode: r.git_mode.as_deref(),
            runner: r.runner.as_deref(),
            harness: r.harness.as_deref(),
            last_commit: r.last_commit,
            deps: r.deps,
            env: if r.env { "present" } else { "absent" },
            session: if r.live { "live" } else { "none" },
            state: r.state,
            progress: Progress::of(r.status, r.exit, *landed),
            dirty: *dirty,
            ports: super::json::BoxPorts {
                ports: &r.ports,
                listening: r.ports_now.as_ref().map(|n| n.listening.as_slice()),
                loopback_only: r
                    .ports_now
                    .as_ref()
                    .map(|n| n.loopback_only.as_slice())
                    .filter(|l| !l.is_empty()),
                unknown: r
                    .ports_now
                    .as_ref()
                    .map(|n| n.unknown.as_slice())
                    .filter(|l| !l.is_empty()),
            },
        })
        .collect();
    ListDocument {
        schema_version: V1,
        repo: &repo.main_root,
        boxes,
    }
    .to_value()
}

/// `list --json`'s document for the repository of `dir`, as `list --json` (and
/// `--dirty`) prints it: what the MCP server's `box_list` answers.
pub(crate) fn json(dir: &std::path::Path, dirty: bool) -> Result<serde_json::Value, CliError> {
    json_with(dir, dirty, false)
}

/// [`json`], with which ports listen (`list --json --ports`) when `ports`.
pub(crate) fn json_with(
    dir: &std::path::Path,
    dirty: bool,
    ports: bool,
) -> Result<serde_json::Value, CliError> {
    let cfg = super::load_config()?;
    let (repo, layout) = super::here_at(dir)?;
    let (listing, there) = here_and_elsewhere(&cfg, &repo, &layout, dirty, ports);
    Ok(with_elsewhere(document(&listing, &repo), there))
}

/// This repository's boxes here, and on the config's other machines within a
/// listing's deadline (last-known and stale for a machine not asked now, with a
/// warning; nothing asked without machines). The machines are asked while this
/// machine's boxes are read: a listing takes the longer of the two, not their sum.
fn here_and_elsewhere(
    cfg: &crate::config::UserConfig,
    repo: &crate::git::Repo,
    layout: &Layout,
    dirty: bool,
    ports: bool,
) -> (Listing, super::on::FarListing) {
    let repos = [(
        crate::remote::boxes::key_for(repo),
        repo.main_root.to_string_lossy().into_owned(),
    )];
    let machines = &cfg.machines;
    std::thread::scope(|s| {
        let far = s.spawn(|| match machines.is_empty() {
            true => super::on::FarListing::default(),
            false => super::on::far_boxes(machines, &repos, crate::remote::listing::LISTING, ports),
        });
        let listing = gather(repo, layout, dirty, ports);
        (listing, far.join().unwrap_or_default())
    })
}

/// The warning lines of `far`, one per machine not asked: why, and whether its boxes
/// are shown as it last listed them (and how long ago that was).
pub(crate) fn far_warnings(far: &super::on::FarListing) -> Vec<String> {
    let now = crate::state::record::now() as i64;
    far.unreached
        .iter()
        .map(|u| match u.last_answer {
            Some(at) => format!(
                "{}: its boxes as it listed them {} ago, marked stale",
                u.message,
                age(now, at as i64)
            ),
            None => format!("{}: its boxes are not listed", u.message),
        })
        .collect()
}

/// `doc` with the boxes of other machines after this one's, and the machines not
/// asked (`unreachable`, only when there are some).
fn with_elsewhere(mut doc: serde_json::Value, there: super::on::FarListing) -> serde_json::Value {
    if let Some(boxes) = doc["boxes"].as_array_mut() {
        boxes.extend(there.boxes.into_iter().map(|(_, _, b)| b));
    }
    if !there.unreached.is_empty() {
        doc["unreachable"] = serde_json::to_value(&there.unreached).expect("a document serializes");
    }
    doc
}

pub fn run(args: ListArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let cfg = super::load_config()?;
    let (repo, layout) = super::here()?;
    let (listing, far) = here_and_elsewhere(&cfg, &repo, &layout, args.dirty, args.ports);
    for w in far_warnings(&far) {
        ui.warning(&w);
    }
    if args.json {
        ui.out_json(&with_elsewhere(document(&listing, &repo), far));
        return Ok(error::OK);
    }
    let there: Vec<serde_json::Value> = far.boxes.into_iter().map(|(_, _, b)| b).collect();
    let machines = !cfg.machines.is_empty();
    let Listing { rows, dirt, .. } = listing;
    if rows.is_empty() && there.is_empty() {
        ui.info("no boxes in this repository (make one with `git treebox create`)");
        return Ok(error::OK);
    }
    let now = crate::state::record::now() as i64;
    let mut out = String::new();
    // Fits 80 columns (the usual states, without --dirty): long names are cut with a
    // visible `…`; JSON has everything. AGE is the box's, LAST its last commit's.
    // With machines in the config, a MACHINE column first (`-`: this one).
    // `--ports`: a PORTS column, the ports that listen (`!`: on a container's own
    // loopback, out of the host's reach; `?`: cannot be told).
    let show_ports = args.ports;
    let mut loopback_only = false;
    let mut unknown = false;
    let line = |machine: &str, c: [&str; 8], ports: &str, dirty: Option<&str>| {
        let dirty = dirty.map(|d| format!("{d:<5} ")).unwrap_or_default();
        let ports = if show_ports {
            format!("{:<12} ", fit(ports, 12))
        } else {
            String::new()
        };
        let machine = if machines {
            format!("{:<8} ", fit(machine, 8))
        } else {
            String::new()
        };
        format!(
            "{machine}{:<14} {:<17} {:<12} {:>4} {:>4} {:<5} {:<10} {ports}{dirty}{}\n",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
        )
    };
    out.push_str(&line(
        "MACHINE",
        [
            "NAME", "BRANCH", "BOX", "AGE", "LAST", "DEPS", "AGENT", "STATE",
        ],
        "PORTS",
        args.dirty.then_some("DIRTY"),
    ));
    let mut placeholders = false;
    for (r, dirty) in rows.iter().zip(&dirt) {
        let dirty_cell = args.dirty.then_some(match dirty {
            Some(true) => "yes",
            Some(false) => "-",
            None => "?",
        });
        let branch = match (&r.branch, r.placeholder) {
            // The mark is part of the cell, so it never shifts the columns after it.
            (Some(b), true) => {
                placeholders = true;
                format!("{}*", fit(&crate::sanitize::line(b), 16))
            }
            (Some(b), false) => fit(&crate::sanitize::line(b), 17),
            (None, _) => "-".into(),
        };
        let agent = agent_cell(
            r.live,
            &AgentView {
                status: r.status,
                exit: r.exit,
            },
            now,
        );
        let deps = match r.deps {
            "unknown" => "?",
            d => d,
        };
        let ages = |t: Option<i64>| t.map(|t| age(now, t)).unwrap_or_else(|| "-".into());
        let ports = match &r.ports_now {
            Some(n) => {
                loopback_only |= !n.loopback_only.is_empty();
                unknown |= !n.unknown.is_empty();
                n.marked()
            }
            None => "-".into(),
        };
        out.push_str(&line(
            "-",
            [
                &fit(&crate::sanitize::line(&r.name), 14),
                &branch,
                &r.kind,
                &ages(r.created),
                &ages(r.last_commit),
                deps,
                &agent,
                r.state,
            ],
            &ports,
            dirty_cell,
        ));
    }
    for b in &there {
        out.push_str(&line(
            &cell(b, "machine"),
            [
                &fit(&cell(b, "name"), 14),
                &fit(&cell(b, "branch"), 17),
                &fit(&format!("{}·{}", cell(b, "gitMode"), cell(b, "runner")), 12),
                "-",
                &b["lastCommit"]
                    .as_i64()
                    .map_or_else(|| "-".into(), |t| age(now, t)),
                &fit(&cell(b, "deps"), 5),
                &fit(&remote_agent(b, now), 10),
                // What a machine that cannot be asked now last said: shown as such.
                &if b["stale"] == true {
                    "stale".to_string()
                } else {
                    fit(&cell(b, "state"), 12)
                },
            ],
            &{
                // What the machine says listens there, read leniently.
                let now = crate::remote::listing::far_ports(b).1.unwrap_or_default();
                loopback_only |= !now.loopback_only.is_empty();
                unknown |= !now.unknown.is_empty();
                now.marked()
            },
            args.dirty.then_some("?"),
        ));
    }
    if placeholders {
        out.push_str(
            "* placeholder branch: `git branch -m <type>/<name>` in the box before pushing\n",
        );
    }
    if loopback_only {
        out.push_str(
            "! listens on its container's own loopback, out of reach: bind \"$TREEBOX_HOST\" (0.0.0.0 there)\n",
        );
    }
    if unknown {
        out.push_str(
            "? cannot be told: the box's socket table is longer than treebox reads (1 MiB)\n",
        );
    }
    ui.out(out.trim_end());
    Ok(error::OK)
}

/// A text field of a box another machine listed, sanitised; `-` when absent.
fn cell(b: &serde_json::Value, key: &str) -> String {
    b[key]
        .as_str()
        .map_or_else(|| "-".into(), crate::sanitize::line)
}

/// The AGENT cell of a box another machine listed, as [`agent_cell`] writes it.
fn remote_agent(b: &serde_json::Value, now: i64) -> String {
    let (live, view) = view_of(b);
    agent_cell(live, &view, now)
}

/// The git mode and runner of a box another machine listed, where they are words of
/// this treebox's vocabularies.
pub(crate) fn modes_of(
    b: &serde_json::Value,
) -> (
    Option<crate::vocab::GitMode>,
    Option<crate::vocab::RunnerKind>,
) {
    let word = |k: &str| b[k].as_str().unwrap_or_default();
    (word("gitMode").parse().ok(), word("runner").parse().ok())
}

/// Whether a box another machine listed has a live session, and its [`AgentView`].
pub(crate) fn view_of(b: &serde_json::Value) -> (bool, AgentView) {
    let status = match b["status"].as_str() {
        Some("working") => Some(crate::runner::oci::AgentStatus::Working),
        Some("waiting") => Some(crate::runner::oci::AgentStatus::Waiting),
        Some("idle") => Some(crate::runner::oci::AgentStatus::Idle),
        Some(_) => Some(crate::runner::oci::AgentStatus::Unknown),
        None => None,
    };
    let at = b["statusTime"].as_u64().unwrap_or(0);
    let view = AgentView {
        status: status.map(|status| crate::runner::oci::Reported {
            status,
            at: std::time::UNIX_EPOCH + std::time::Duration::from_secs(at),
        }),
        exit: b["exitCode"].as_i64().map(|c| c as i32),
    };
    (b["session"] == "live", view)
}

#[cfg(test)]
mod tests {
    #[test]
    fn ages() {
        assert_eq!(super::age(100, 100), "0s");
        assert_eq!(super::age(4000, 0), "1h");
        assert_eq!(super::age(90_000, 0), "1d");
        assert_eq!(super::age(2_000_000, 0), "3w");
    }
}
