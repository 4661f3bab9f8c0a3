//! `git sandbox up NAME`: provision a box exactly like `git treebox create NAME
//! --no-launch`, then open a shell in it (SPEC §2): on a terminal in the box's
//! session, as `attach` does (SPEC §7a). `-d` starts that shell in the box's session
//! without attaching (SPEC §7a: `up -d` starts the session) and prints the box path;
//! the box is then live until the shell ends, so `down` asks (or refuses, 5) unless
//! `-f`. `--json` provisions only (SPEC §4: `--json` never launches) — the route for
//! scripts that want a box and no shell.
//!
//! Outside a git repository the box is the folder itself (see [`crate::folder`]): a
//! git mode or branch asked for by flag is refused there. Called from
//! `sandbox::run`; the shell holds the box's session marker like `attach` does.

use clap::Args;

use crate::cli::error::{self, CliError, ErrorKind};
use crate::cli::json::{CreateDocument, Document, Launch, V1};
use crate::cli::ui::Ui;
use crate::provision::{self, CreateRequest};

#[derive(Debug, Args)]
pub struct UpArgs {
    /// The box's branch (created from the base): letters, digits, '.', '_', '-', with
    /// '/' between segments; two names that differ only by case are one box.
    pub name: String,
    /// Check out this existing branch instead of creating NAME.
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// Base branch [default: the configured `base`, else origin's default branch
    /// (origin/HEAD), else main].
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// Do not fetch origin first.
    #[arg(long)]
    pub no_fetch: bool,
    /// Where the box runs.
    #[arg(long, value_parser = ["host", "docker", "podman", "auto"])]
    pub isolation: Option<String>,
    /// How the box's checkout is made.
    ///
    /// `worktree` (default): on the host runner, a worktree of this repository on branch
    /// NAME. In a container, a sandboxed worktree: a worktree of a bare clone of its own
    /// (in treebox's state directory, borrowing this repository's objects), where branch
    /// NAME lives; this repository gets only refs/hort/NAME/base. `clone`: a clone with
    /// its own .git, the branch in it. The work of both comes back by a push to origin
    /// from inside (guarded) or `git sandbox fetch NAME` (into refs/hort/NAME/incoming).
    #[arg(long = "git", value_name = "MODE", value_parser = ["worktree", "clone"])]
    pub git_mode: Option<String>,
    /// Container template (operator-owned; see `git treebox template list`).
    #[arg(long, value_name = "NAME")]
    pub template: Option<String>,
    /// Forward this environment variable (e.g. GH_TOKEN) into the box's 0600 env file
    /// at container start, never into an image, a record or output. Repeatable. A
    /// forwarded GH_TOKEN or GITHUB_TOKEN is also git's credential for https://github.com.
    #[arg(long, value_name = "ENV")]
    pub token_from: Vec<String>,
    /// With --firewall: also allow the hosts of origin's URL (and api.github.com).
    #[arg(long)]
    pub allow_forge: bool,
    /// Start the box with the main checkout's build outputs (cargo's target/, node build
    /// caches) even where the filesystem cannot clone them by reflink: copy them
    /// [default: the config's `warm`, else `auto`: clone by reflink, or skip]. On the
    /// host a reflinked target/ is cloned after the box is up; cargo in the box waits
    /// for it.
    #[arg(long, conflicts_with = "no_warm")]
    pub warm: bool,
    /// Start the box without the main checkout's build outputs.
    #[arg(long)]
    pub no_warm: bool,
    /// Install dependencies with throwaway caches instead of the shared ones.
    #[arg(long)]
    pub cold: bool,
    /// Which agent `git treebox enter` launches in the box later.
    #[arg(long, value_parser = ["claude", "codex"])]
    pub harness: Option<String>,
    /// Print the plan and change nothing (with --json: as JSON).
    #[arg(long, conflicts_with = "detach")]
    pub dry_run: bool,
    /// Containers: deny egress except the template's allowlist.
    #[arg(long)]
    pub firewall: bool,
    /// Detached: start the box's shell in its session without attaching; print the box
    /// path.
    ///
    /// The shell runs in tmux, on treebox's own socket; `git sandbox attach NAME`
    /// attaches later. While it runs the box is live: `git sandbox down NAME` asks
    /// (without a terminal: refuses, exit 5) unless `-f`, which ends it. To provision
    /// only, with no shell, use `--json`.
    #[arg(short = 'd', long, conflicts_with = "json")]
    pub detach: bool,
    /// Provision only (no shell, no session) and print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Make the box on another machine of your config (`machines`), over SSH, and open
    /// the shell there: this repository's origin/<base> travels as a bundle, that
    /// machine's treebox makes the box. `local`: this machine.
    #[arg(long, value_name = "MACHINE")]
    pub on: Option<String>,
}

pub fn run(a: UpArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let cfg = crate::cli::load_config()?;
    let on = a.on.as_deref().or(cfg.on.as_deref());
    if let Some(on) = on.filter(|on| *on != crate::config::LOCAL) {
        let unsupported = [
            (a.branch.is_some(), "--branch"),
            (a.template.is_some(), "--template"),
            (a.firewall, "--firewall"),
            (!a.token_from.is_empty(), "--token-from"),
            (a.allow_forge, "--allow-forge"),
            (a.no_fetch, "--no-fetch"),
            (a.dry_run, "--dry-run"),
            (a.detach, "--detach"),
            (a.json, "--json"),
        ];
        let on = crate::cli::on::CreateOn {
            on,
            name: Some(&a.name),
            base: a.base.as_deref(),
            isolation: a.isolation.as_deref(),
            harness: a.harness.as_deref(),
            git_mode: a.git_mode.as_deref(),
            template: None,
            checkout: None,
            json: false,
            unsupported: unsupported.iter().find(|(on, _)| *on).map(|(_, f)| *f),
        };
        return crate::cli::on::up_on(&on, &cfg, ui);
    }
    let cwd = crate::cli::cwd()?;
    let folder = matches!(
        crate::git::Repo::discover(&cwd),
        Err(crate::git::repo::RepoError::NotARepo { .. })
    );
    if a.dry_run && folder {
        return Err(CliError::new(
            ErrorKind::Usage,
            "--dry-run plans a box of a git repository; here the box would be this folder itself",
        )
        .hint("Run it without --dry-run: `git sandbox up NAME` here makes the folder the box, writing nothing in it."));
    }
    if a.detach {
        // Refused before anything is made: a detached shell needs a session host.
        need_sessions(&a.name)?;
    }
    if folder {
        return up_folder(a, &cfg, cwd, ui);
    }
    let (name, checkout) = match a.branch {
        Some(b) => (Some(a.name), Some(b)),
        None => (Some(a.name), None),
    };
    let req = CreateRequest {
        cwd,
        name,
        checkout,
        base: a.base,
        no_fetch: a.no_fetch,
        isolation: a.isolation,
        git_mode: a.git_mode,
        launch: false,
        interactive: ui.stderr_is_tty(),
        firewall: a.firewall,
        template: a.template,
        token_from: a.token_from.clone(),
        allow_forge: a.allow_forge,
        warm: crate::cli::warm_flag(a.warm, a.no_warm),
        cold: a.cold,
        harness: a
            .harness
            .as_deref()
            .and_then(|h| h.parse::<crate::harness::Harness>().ok()),
        ..Default::default()
    };
    if a.dry_run {
        return crate::cli::create::print_plan(&req, &cfg, a.json, ui);
    }
    // A shell follows (unless `--json`), whose launcher waits for a new container's
    // hand-over itself: `create` need not wait for it first.
    let req = CreateRequest {
        launch: !a.json,
        ..req
    };
    let created = provision::create(&req, &cfg, ui)?;
    let path = created.plan.path.clone();
    if a.json {
        let runner = crate::cli::runner_for(&created.record, false)?;
        let launch = runner.shell(&path, &created.plan.name);
        ui.out_json(&CreateDocument::created(&created, &launch, &ui.warnings).to_value());
        return Ok(error::OK);
    }
    shell_in_session(&created.record, &created.session_path, a.detach, ui)
}

/// `-d` needs tmux: refuse (exit 1) before anything is written when it is missing,
/// naming the provision-only route.
fn need_sessions(name: &str) -> Result<(), CliError> {
    crate::cli::create::need_sessions().map_err(|e| {
        e.hint(format!(
            "To provision only, with no shell: `git sandbox up {} --json`.",
            crate::cmd::quote(name)
        ))
    })
}

/// `up`'s shell, in the box's session like `attach`'s (SPEC §7a); `detach`: started
/// there without attaching.
fn shell_in_session(
    r: &crate::state::Record,
    marker: &std::path::Path,
    detach: bool,
    ui: &mut Ui,
) -> Result<i32, CliError> {
    let plain = crate::cli::runner_for(r, ui.stdin_is_tty())?;
    let in_session = crate::cli::runner_for(r, true)?;
    let how = crate::cli::create::Launching {
        marker,
        detach,
        again: format!("git sandbox attach {}", crate::cmd::quote(&r.name)),
        path: &r.path,
        overrides: false,
        // A shell is ready once it runs.
        ready: crate::session::Ready::started(),
    };
    crate::cli::create::launch(
        &how,
        |tty| match tty {
            true => in_session.shell(&r.path, &r.name),
            false => plain.shell(&r.path, &r.name),
        },
        ui,
    )
}

/// `up` in a project that is not a git repository: the box is the folder itself.
/// A git mode asked for by flag cannot be honoured and is refused (exit 2); one that
/// comes from the config only covers every folder on the machine, so it warns.
fn up_folder(
    a: UpArgs,
    cfg: &crate::config::UserConfig,
    cwd: std::path::PathBuf,
    ui: &mut Ui,
) -> Result<i32, CliError> {
    if let Some(mode) = &a.git_mode {
        return Err(CliError::new(
            ErrorKind::NotARepo,
            format!("--git {mode} requires a git repository, but this folder is not one"),
        )
        .hint("Run it in a git repository, or drop --git to sandbox this folder itself."));
    }
    if a.branch.is_some() {
        return Err(CliError::new(
            ErrorKind::NotARepo,
            "--branch requires a git repository, but this folder is not one",
        )
        .hint("Drop --branch to sandbox this folder itself."));
    }
    if cfg.git.as_deref() == Some("clone") {
        ui.warning(
            "the configured 'clone' git mode needs a git repository and this folder is not one, so the sandbox mounts the folder itself",
        );
    }
    let runner =
        crate::provision::resolve_runner(a.isolation.as_deref().or(cfg.isolation.as_deref()), cfg)?;
    let req = crate::folder::FolderRequest {
        folder: cwd,
        name: a.name.clone(),
        runner,
        template: a
            .template
            .clone()
            .or(cfg.template.clone())
            .unwrap_or_else(|| "default".into()),
        firewall: a.firewall || cfg.firewall.unwrap_or(false),
        // `--harness` first, as for any box; then the config's.
        harness: a
            .harness
            .as_deref()
            .and_then(|h| h.parse::<crate::harness::Harness>().ok())
            .or(cfg.harness)
            .unwrap_or_default(),
    };
    let done = crate::folder::up(&req, cfg, ui)?;
    let r = &done.record;
    if a.json {
        let runner = crate::cli::runner_for(r, false)?;
        let launch = runner.shell(&r.path, &r.name);
        ui.out_json(
            &CreateDocument {
                schema_version: V1,
                name: &r.name,
                branch: None,
                placeholder: false,
                path: &r.path,
                repo: &r.repo,
                base: None,
                base_ref: r.base_ref.as_deref(),
                base_commit: r.base_commit.as_deref(),
                git_mode: r.git_mode,
                runner: r.runner,
                harness: r.harness,
                fetched: false,
                resumed: done.resumed,
                ecosystems: &r.ecosystems,
                lockfile_hash: r.lockfile_hash.as_deref(),
                setup_completed: r.setup_completed,
                setup: Vec::new(),
                submodules: 0,
                env: "absent",
                launch: Launch::from(&launch),
                warm: None,
                warnings: &ui.warnings,
            }
            .to_value(),
        );
        return Ok(error::OK);
    }
    shell_in_session(r, &done.session_path, a.detach, ui)
}
