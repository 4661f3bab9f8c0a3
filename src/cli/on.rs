//! Boxes on other machines from the laptop (issue 41): `create --on MACHINE` and the
//! rows `list` adds for each machine of the config. A front end over
//! [`crate::remote::boxes`]; every text a machine sends is shown sanitised, and a
//! machine that cannot be reached is one warning, never a failed listing.

use serde_json::Value;

use super::error::{self, CliError, ErrorKind};
use super::ui::Ui;
use crate::config::{Machine, UserConfig};
use crate::remote::RemoteError;

/// The machine `on` names in the config.
pub(crate) fn machine<'a>(cfg: &'a UserConfig, on: &str) -> Result<&'a Machine, CliError> {
    cfg.machines.iter().find(|m| m.name == on).ok_or_else(|| {
        let known: Vec<&str> = cfg.machines.iter().map(|m| m.name.as_str()).collect();
        CliError::new(
            ErrorKind::MachineUnknown,
            format!("no machine `{}` in your config", crate::sanitize::line(on)),
        )
        .hint(if known.is_empty() {
            "Name one under `machines` in your config (docs/machines.md), or leave out `--on`."
                .to_string()
        } else {
            format!("Machines: local, {}.", known.join(", "))
        })
    })
}

/// A machine's failure as the user sees it.
pub(crate) fn from_remote(e: RemoteError) -> CliError {
    let text = crate::sanitize::line(&e.to_string());
    match e {
        RemoteError::Spawn { .. }
        | RemoteError::Unreachable { .. }
        | RemoteError::Timeout { .. } => CliError::new(ErrorKind::MachineUnreachable, text)
            .hint("`git treebox doctor` checks each machine: ssh without a prompt, its treebox."),
        RemoteError::Protocol { ref machine, .. } => {
            CliError::new(ErrorKind::MachineAnswer, text).hint(crate::remote::upgrade_hint(machine))
        }
        RemoteError::Frame { .. } | RemoteError::TooMuch { .. } => {
            CliError::new(ErrorKind::MachineAnswer, text)
                .hint("`git treebox doctor` checks that machine's treebox.")
        }
        RemoteError::Local { .. } => CliError::new(ErrorKind::BaseNotFound, text)
            .hint("Name a branch origin has with `--base`."),
        RemoteError::Refused {
            kind, code, hint, ..
        } => {
            let kind = ErrorKind::known(&kind, code).unwrap_or(ErrorKind::MachineAnswer);
            let e = CliError::new(kind, text);
            match hint {
                Some(h) => e.hint(h),
                None => e,
            }
        }
    }
}

/// What `create NAME --on MACHINE` asks for.
pub(crate) struct CreateOn<'a> {
    pub on: &'a str,
    pub name: Option<&'a str>,
    pub base: Option<&'a str>,
    pub isolation: Option<&'a str>,
    pub harness: Option<&'a str>,
    pub git_mode: Option<&'a str>,
    /// A container template of that machine's own, by name.
    pub template: Option<&'a str>,
    /// An existing branch of this repository to check out there.
    pub checkout: Option<&'a str>,
    pub json: bool,
    /// A flag given that does not work with `--on` yet.
    pub unsupported: Option<&'static str>,
}

/// `create NAME --on MACHINE`: fetch origin here, then make the box there.
/// What making a box there needs, found and checked here: the machine, this
/// repository (origin fetched), the box's name (none of this machine's), its base and
/// the `.env` that travels with it.
struct Prepared<'a> {
    machine: &'a Machine,
    repo: crate::git::Repo,
    layout: crate::state::Layout,
    name: crate::names::BoxName,
    base: String,
    env_file: Option<Vec<u8>>,
    /// The user's Claude Code answers for the main checkout here (its trust).
    claude_answers: Option<Value>,
    /// The files `.worktreeinclude` names here.
    includes: Vec<crate::remote::boxes::Included>,
    /// The branches of that machine's mirror, as it listed them just now.
    heads: Option<Value>,
}

impl Prepared<'_> {
    /// The request to make the box there.
    fn create<'b>(&'b self, args: &'b CreateOn) -> crate::remote::boxes::Create<'b> {
        crate::remote::boxes::Create {
            machine: self.machine,
            repo: &self.repo,
            scratch: &self.layout.repo_state,
            name: self.name.as_str(),
            base: &self.base,
            isolation: args.isolation.or(self.machine.isolation.as_deref()),
            harness: args.harness,
            git_mode: args.git_mode,
            template: args.template,
            checkout: args.checkout,
            heads: self.heads.as_ref(),
            env_file: self.env_file.as_deref(),
            claude_answers: self.claude_answers.as_ref(),
            includes: &self.includes,
        }
    }
}

/// [`Prepared`] for `args` (`verb`: the command, for the hint when a name is missing).
fn prepare<'a>(
    args: &CreateOn,
    cfg: &'a UserConfig,
    verb: &str,
    ui: &mut Ui,
) -> Result<Prepared<'a>, CliError> {
    let m = machine(cfg, args.on)?;
    if let Some(flag) = args.unsupported {
        return Err(CliError::new(
            ErrorKind::Unsupported,
            format!("`{flag}` does not work with `--on` yet"),
        )
        .hint("Leave it out, or make the box on this machine (`--on local`)."));
    }
    // `--checkout BRANCH` alone names the box after the branch, as here.
    let Some(name) = args.name.or(args.checkout) else {
        return Err(
            CliError::new(ErrorKind::Usage, "`--on` needs the box's name")
                .hint(format!("`{verb} NAME --on {}`", m.name)),
        );
    };
    let boxname = crate::names::BoxName::parse(name)
        .map_err(|e| CliError::from(crate::provision::ProvisionError::from(e)))?;
    let (repo, layout) = super::here()?;
    let leaf = boxname.leaf().to_string();
    if crate::boxes::exact(&repo, &layout, &leaf).is_some() {
        return Err(CliError::new(
            ErrorKind::BoxExists,
            format!("a box named `{leaf}` is on this machine already"),
        )
        .hint("Box names are unique across this machine and the others: pick another name."));
    }
    // Nor any other machine's: a name is the box's wherever it is (as far as the
    // machines that answer within a listing's deadline tell; the machine the box goes
    // to refuses a name it has). Asked while origin is fetched here.
    let repos = [(
        crate::remote::boxes::key_for(&repo),
        repo.main_root.to_string_lossy().into_owned(),
    )];
    let git = crate::git::GitCli::for_repo(&repo.common_dir, None);
    let can_ask = ui.stderr_is_tty();
    let (far, fetched) = std::thread::scope(|s| {
        let far = s.spawn(|| {
            far_boxes(
                &cfg.machines,
                &repos,
                crate::remote::listing::LISTING,
                false,
            )
        });
        let fetched = crate::provision::fetch::fetch_origin(
            &git,
            &repo.main_root,
            &layout.repo_state,
            can_ask,
        );
        (far.join().unwrap_or_default(), fetched)
    });
    if let Some((_, _, taken)) = far
        .boxes
        .iter()
        .find(|(_, _, b)| b["name"] == leaf.as_str() && b["stale"] != true)
    {
        return Err(CliError::new(
            ErrorKind::BoxExists,
            format!(
                "a box named `{leaf}` is on machine `{}` already",
                crate::sanitize::line(taken["machine"].as_str().unwrap_or("?"))
            ),
        )
        .hint("Box names are unique across this machine and the others: pick another name."));
    }
    fetched.map_err(|e| CliError::from(crate::provision::ProvisionError::from(e)))?;
    // What the machine's mirror holds, as it said with its boxes just now.
    let heads = far
        .heads
        .into_iter()
        .find(|(name, _)| *name == m.name)
        .map(|(_, h)| h);
    let base = args
        .base
        .map(str::to_string)
        .or_else(|| cfg.base.clone())
        .or_else(|| repo.origin_head_branch())
        .unwrap_or_else(|| "main".into());
    // The `.env` the box would get here travels with it (a regular file only).
    let env_file = crate::provision::copy::env_source(&repo.main_root, cfg.env_file.as_deref())
        .and_then(|p| {
            let read = crate::untrusted::read_regular(
                &p,
                crate::remote::boxes::MAX_ENV,
                crate::untrusted::Links::Refuse,
            );
            if read.is_err() {
                ui.warning(&format!(
                    "{} is not sent to machine `{}`: it is no regular file of at most {} KiB",
                    crate::sanitize::line(&p.to_string_lossy()),
                    m.name,
                    crate::remote::boxes::MAX_ENV >> 10
                ));
            }
            read.ok()
        });
    // The trust the user gave the main checkout here, carried to the clone there, as
    // it is to a clone box here (only where the user gave it).
    let claude_answers = crate::provision::host_trust::claude_config_path()
        .and_then(|f| crate::provision::host_trust::claude_answers(&f, &repo.main_root));
    let includes = includes_of(&repo, m, ui);
    Ok(Prepared {
        machine: m,
        repo,
        layout,
        name: boxname,
        base,
        env_file,
        claude_answers,
        includes,
        heads,
    })
}

/// The files `.worktreeinclude` names in the main checkout
/// ([`crate::remote::boxes::includes_of`]); a warning for each left behind.
fn includes_of(
    repo: &crate::git::Repo,
    m: &Machine,
    ui: &mut Ui,
) -> Vec<crate::remote::boxes::Included> {
    let (files, left) = crate::remote::boxes::includes_of(repo);
    for rel in left {
        ui.warning(&format!(
            "{} is not sent to machine `{}`: it is no regular file, or past the {} KiB the files of `.worktreeinclude` may take",
            crate::sanitize::line(&rel.to_string_lossy()),
            m.name,
            crate::remote::boxes::MAX_INCLUDES >> 10
        ));
    }
    files
}

/// What this machine keeps of a box made there: the commit it was sent to start from,
/// pinned, and the repository remembered (`git sandbox ls` lists its boxes there too).
fn made_there(p: &Prepared, tip: &str) {
    crate::land::far::pin(&p.repo, p.name.leaf().as_str(), tip);
    p.layout.remember_repo(&p.repo.main_root);
}

/// `git sandbox up NAME --on MACHINE`: fetch origin here, seed that machine's mirror,
/// then make the box there and open a shell in it, with this terminal.
pub(crate) fn up_on(args: &CreateOn, cfg: &UserConfig, ui: &mut Ui) -> Result<i32, CliError> {
    let p = prepare(args, cfg, "git sandbox up", ui)?;
    let c = p.create(args);
    let (key, tip) = crate::remote::boxes::seed_there(&c).map_err(from_remote)?;
    made_there(&p, &tip);
    let far = Far {
        machine: p.machine.clone(),
        key,
        leaf: p.name.as_str().to_string(),
        entry: Value::Null,
    };
    let verb = crate::remote::terminal::Verb::Up {
        base: p.base.clone(),
        isolation: c.isolation.map(str::to_string),
        git_mode: args.git_mode.map(str::to_string),
    };
    on_terminal(&far, verb, ui)
}

pub(crate) fn create_on(args: &CreateOn, cfg: &UserConfig, ui: &mut Ui) -> Result<i32, CliError> {
    let p = prepare(args, cfg, "git treebox create", ui)?;
    let m = p.machine;
    let c = p.create(args);
    let (mut doc, tip) = crate::remote::boxes::create_there(&c).map_err(from_remote)?;
    made_there(&p, &tip);
    doc["machine"] = Value::String(m.name.clone());
    if args.json {
        ui.out_json(&doc);
        return Ok(error::OK);
    }
    let said = |k: &str| crate::sanitize::line(doc["box"][k].as_str().unwrap_or("?"));
    let lines = |k: &str| -> Vec<String> {
        doc["agent"][k]
            .as_array()
            .into_iter()
            .flatten()
            .take(MAX_LINES)
            .filter_map(Value::as_str)
            .map(crate::sanitize::line)
            .collect()
    };
    // What stands in the agent's way there (a trust it will ask for), said as
    // `create` says it here.
    for w in lines("warnings") {
        ui.warning(&format!("machine `{}`: {w}", m.name));
    }
    let name = said("name");
    let again = format!("git treebox enter {}", crate::cmd::quote(&name));
    match doc["agent"]["state"].as_str() {
        Some("ready") | Some("alreadyRunning") => ui.info(&format!(
            "box `{name}` made on machine `{}` ({}), branch `{}`; its agent runs there detached; attach with `{again}`",
            m.name,
            crate::sanitize::line(&m.ssh),
            said("branch"),
        )),
        state => {
            for l in lines("lastLines") {
                ui.info(&format!("  | {l}"));
            }
            ui.warning(&format!(
                "box `{name}` made on machine `{}`, but its agent is not at its prompt ({}): look with `{again}`",
                m.name,
                crate::sanitize::line(state.unwrap_or("?"))
            ));
        }
    }
    ui.out(&said("path"));
    Ok(error::OK)
}

/// The most lines of a machine's answer shown.
const MAX_LINES: usize = 40;

/// Boxes on the config's machines, as asked for by [`far_boxes`].
#[derive(Default)]
pub(crate) struct FarListing {
    /// Each box: its machine, the repository's main checkout here, and its `list
    /// --json` entry there (with `machine`; `"stale": true` when it is what that
    /// machine last answered, as it cannot be asked now).
    pub boxes: Vec<FarBox>,
    /// The machines that could not be asked, in the config's order.
    pub unreached: Vec<crate::remote::listing::Unreached>,
    /// Why each of those could not be asked.
    errors: Vec<RemoteError>,
    /// Asked of one repository: each machine's mirror branches of it.
    heads: Vec<(String, Value)>,
}

/// The boxes of `repos` (each: its key there, its main checkout here) on every one of
/// `machines`, asked at once within `limit` ([`crate::remote::boxes::QUICK`], or a
/// listing's [`crate::remote::listing::LISTING`]); a machine that cannot be asked
/// gives its last-known boxes, stale, and one warning.
pub(crate) fn far_boxes(
    machines: &[Machine],
    repos: &[(String, String)],
    limit: std::time::Duration,
    ports: bool,
) -> FarListing {
    let keys: Vec<String> = repos.iter().map(|(k, _)| k.clone()).collect();
    let mut out = FarListing::default();
    for asked in crate::remote::listing::ask_each(machines, &keys, limit, ports) {
        out.unreached.extend(asked.unreached());
        let crate::remote::listing::Asked {
            machine,
            boxes,
            failed,
            heads,
        } = asked;
        if let Some(h) = heads {
            out.heads.push((machine.clone(), h));
        }
        for ((_, root), boxes) in repos.iter().zip(boxes) {
            out.boxes.extend(
                boxes
                    .into_iter()
                    .map(|b| (machine.clone(), root.clone(), b)),
            );
        }
        out.errors.extend(failed.map(|(e, _)| e));
    }
    out
}

/// This repository's boxes on every machine of the config, asked at once within
/// `limit`: each box's `list --json` entry with `machine` set (`"stale": true` on
/// those of a machine not asked now), and a warning per machine not asked.
pub(crate) fn boxes_on_machines(
    machines: &[Machine],
    repo: &crate::git::Repo,
    limit: std::time::Duration,
    ports: bool,
) -> FarListing {
    let key = crate::remote::boxes::key_for(repo);
    let root = repo.main_root.to_string_lossy().into_owned();
    far_boxes(machines, &[(key, root)], limit, ports)
}

/// A box of this repository on another machine.
#[derive(Clone)]
pub(crate) struct Far {
    pub machine: Machine,
    pub key: String,
    /// Its name there (the leaf of its directory).
    pub leaf: String,
    /// Its `list --json` entry there, as that machine sent it (unchecked; `Null` for a
    /// box not asked for).
    pub entry: Value,
}

/// The box `name` names (its name or branch, whole) on one of the config's machines;
/// `None` without machines or when none has it. Asked where this machine has no such
/// box: every verb works on a box there by its name.
pub(crate) fn find_elsewhere(cfg: &UserConfig, name: &str) -> Result<Option<Far>, CliError> {
    find_elsewhere_with(cfg, name, false)
}

/// [`find_elsewhere`], its entry saying which of its ports listen there when `ports`.
pub(crate) fn find_elsewhere_with(
    cfg: &UserConfig,
    name: &str,
    ports: bool,
) -> Result<Option<Far>, CliError> {
    if cfg.machines.is_empty() {
        return Ok(None);
    }
    let (repo, _) = super::here()?;
    let limit = crate::remote::listing::LISTING;
    let mut listing = boxes_on_machines(&cfg.machines, &repo, limit, ports);
    let named = |b: &Value| b["name"] == name || b["branch"] == name;
    let fresh = |l: &FarListing| {
        l.boxes
            .iter()
            .any(|(_, _, b)| named(b) && b["stale"] != true)
    };
    if !fresh(&listing) && !listing.unreached.is_empty() {
        // Not found among the machines that answered at once: those that did not (a
        // first connection over a long link, say) get the longer deadline before the
        // name is judged.
        let slow: Vec<Machine> = cfg
            .machines
            .iter()
            .filter(|m| listing.unreached.iter().any(|u| u.machine == m.name))
            .cloned()
            .collect();
        let again = boxes_on_machines(&slow, &repo, crate::remote::boxes::QUICK, ports);
        listing
            .boxes
            .retain(|(m, _, _)| !slow.iter().any(|s| &s.name == m));
        listing.boxes.extend(again.boxes);
        listing.unreached = again.unreached;
        listing.errors = again.errors;
    }
    let found: Vec<&Value> = listing
        .boxes
        .iter()
        .map(|(_, _, b)| b)
        .filter(|b| named(b) && b["stale"] != true)
        .collect();
    let far = match found.as_slice() {
        [] => {
            // Only a machine that cannot be asked now had it when it last answered:
            // that machine is the trouble, not the name.
            let last = listing.boxes.iter().find(|(_, _, b)| named(b));
            let down =
                last.and_then(|(m, _, _)| listing.unreached.iter().position(|u| &u.machine == m));
            return match down {
                Some(i) => Err(from_remote(listing.errors.swap_remove(i)).hint(format!(
                    "`{}` was on it when it last answered.",
                    crate::sanitize::line(name)
                ))),
                None => Ok(None),
            };
        }
        [b] => *b,
        _ => {
            return Err(CliError::new(
                ErrorKind::Ambiguous,
                format!(
                    "`{}` names boxes on more than one machine",
                    crate::sanitize::line(name)
                ),
            )
            .hint("`git treebox list` shows each box with its machine."))
        }
    };
    let machine = far["machine"].as_str().unwrap_or_default();
    let Some(m) = cfg.machines.iter().find(|m| m.name == machine) else {
        return Ok(None);
    };
    Ok(Some(Far {
        machine: m.clone(),
        key: crate::remote::boxes::key_for(&repo),
        leaf: far["name"].as_str().unwrap_or_default().to_string(),
        entry: far.clone(),
    }))
}

/// The box `leaf` on machine `machine` of the config, of the repository whose main
/// checkout here is `main_root` (a row `watch` shows).
pub(crate) fn far_box(
    cfg: &UserConfig,
    machine: &str,
    main_root: &str,
    leaf: &str,
) -> Result<Far, CliError> {
    let m = self::machine(cfg, machine)?;
    let repo = crate::git::Repo::discover(std::path::Path::new(main_root))
        .map_err(crate::provision::ProvisionError::from)?;
    Ok(Far {
        machine: m.clone(),
        key: crate::remote::boxes::key_for(&repo),
        leaf: leaf.to_string(),
        entry: Value::Null,
    })
}

/// Run `verb` on the box there with this terminal; the exit code there.
pub(crate) fn on_terminal(
    far: &Far,
    verb: crate::remote::terminal::Verb,
    ui: &mut Ui,
) -> Result<i32, CliError> {
    ui.verbose(&format!(
        "box `{}` is on machine `{}`",
        crate::sanitize::line(&far.leaf),
        far.machine.name
    ));
    ui.finish();
    crate::remote::terminal::run(&far.machine, &far.key, &far.leaf, &verb, ui.stdin_is_tty())
        .map_err(from_remote)
}

/// Remove the box there (`git sandbox down` off a terminal, with `force` as given):
/// `down --json`'s document with `machine`, or its refusal.
pub(crate) fn remove_there(far: &Far, force: bool) -> Result<Value, CliError> {
    let (repo, _) = super::here()?;
    // What was fetched back from it is returned (SPEC §11: judged against this repository).
    let incoming = crate::provision::clone::incoming_ref(&far.leaf);
    let returned: Vec<git2::Oid> = repo.git.refname_to_id(&incoming).into_iter().collect();
    let mut doc =
        crate::remote::boxes::remove_there(&far.machine, &far.key, &far.leaf, force, &returned)
            .map_err(from_remote)?;
    crate::land::far::unpin(&repo, &far.leaf);
    crate::remote::listing::forget(&far.machine, &far.key, &far.leaf);
    doc["machine"] = Value::String(far.machine.name.clone());
    Ok(doc)
}

/// What `down`/`teardown` say of a box removed there.
pub(crate) fn say_removed(far: &Far, doc: &Value, json: bool, ui: &mut Ui) {
    if json {
        ui.out_json(doc);
    } else {
        ui.info(&format!(
            "removed box `{}` on machine `{}`",
            crate::sanitize::line(&far.leaf),
            far.machine.name
        ));
    }
}

/// A box on another machine: its machine, the repository's main checkout here, and
/// its `list --json` entry there.
pub(crate) type FarBox = (String, String, Value);

/// The boxes on the config's machines of every repository `git sandbox ls` knows here,
/// each machine asked once for all of them, at once, within a listing's deadline (with
/// which ports listen there when `ports`).
pub(crate) fn boxes_of_known_repos(
    machines: &[Machine],
    ports: bool,
) -> Result<FarListing, CliError> {
    let mut repos: Vec<(String, String)> = Vec::new();
    for root in crate::boxes::known_repos().map_err(|e| CliError::of(ErrorKind::State, e))? {
        if let Ok(repo) = crate::git::Repo::discover(&root) {
            let key = crate::remote::boxes::key_for(&repo);
            repos.push((key, root.to_string_lossy().into_owned()));
        }
    }
    // No repository here has boxes anywhere: no machine is asked.
    let machines = if repos.is_empty() { &[][..] } else { machines };
    Ok(far_boxes(
        machines,
        &repos,
        crate::remote::listing::LISTING,
        ports,
    ))
}
