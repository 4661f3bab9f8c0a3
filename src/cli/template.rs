//! `git treebox template init|list|path`: the operator-owned container templates
//! (SPEC §7), bundled in the binary or under `$XDG_CONFIG_HOME/treebox/templates/`.
//!
//! The engine is [`crate::template`]; this file prints and picks exit codes. `list`
//! reports broken templates (their problems also go to stderr as warnings) and still
//! exits 0: listing is not failing.

use super::json::{Document, TemplateEntry, TemplateListDocument, TemplatePathDocument, V1};
use clap::{Args, Subcommand};

use super::error::{self, CliError, ErrorKind};
use super::ui::Ui;
use crate::cmd::quote;
use crate::sanitize;
use crate::template::{self, Source, TemplateError, TemplateInfo, BUNDLED_NAME};

#[derive(Debug, Clone, Subcommand)]
pub enum TemplateCommand {
    /// Copy the bundled template into your config dir, to edit it there.
    Init(InitArgs),
    /// List the templates: the bundled one and yours, with their problems.
    #[command(visible_alias = "ls")]
    List(ListArgs),
    /// Print the directory of a template.
    Path(PathArgs),
    /// Import the repository's committed dev container into a template of yours.
    ///
    /// Reads `.devcontainer/devcontainer.json` (or `.devcontainer.json`) as committed
    /// at HEAD — never the work tree, never a box — shows what it would take and what
    /// it refuses, and asks once (off a terminal: --yes). The template keeps treebox's
    /// agent account, firewall and agent CLIs on top of the file's image; its
    /// lifecycle commands run in the container as the agent, never on the host.
    ///
    /// Exit codes: 3 without a committed file; 2 when the file asks for something
    /// refused (each key named with its reason); 5 off a terminal without --yes, or
    /// over a template of yours that was not imported (without --force).
    #[command(name = "import-devcontainer")]
    ImportDevcontainer(super::devcontainer::ImportArgs),
}

#[derive(Debug, Clone, Args)]
pub struct InitArgs {
    /// Name of the new template (lower-case letters, digits, '.', '_', '-'). A template
    /// named `default` replaces the bundled one.
    #[arg(default_value = BUNDLED_NAME)]
    pub name: String,
    /// Replace an existing template of that name.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct PathArgs {
    /// The template.
    #[arg(default_value = BUNDLED_NAME)]
    pub name: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

impl TemplateCommand {
    pub fn json(&self) -> bool {
        match self {
            TemplateCommand::Init(_) => false,
            TemplateCommand::List(a) => a.json,
            TemplateCommand::Path(a) => a.json,
            TemplateCommand::ImportDevcontainer(_) => false,
        }
    }
}

pub fn run(cmd: TemplateCommand, ui: &mut Ui) -> Result<i32, CliError> {
    match cmd {
        TemplateCommand::Init(a) => init(a, ui),
        TemplateCommand::List(a) => list(a, ui),
        TemplateCommand::Path(a) => path(a, ui),
        TemplateCommand::ImportDevcontainer(a) => super::devcontainer::import(a, ui),
    }
}

fn init(args: InitArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let dir = template::init(&args.name, args.force).map_err(CliError::from)?;
    ui.info(&format!(
        "created template `{}` from the bundled `{BUNDLED_NAME}`; edit it in {}",
        args.name,
        dir.display()
    ));
    if args.name != BUNDLED_NAME {
        ui.info(&format!(
            "to use it, set \"template\": \"{}\" in your treebox config.json",
            args.name
        ));
    }
    ui.info(
        "no npm here? bring the agent CLIs in an image of your own: one with `claude` and `codex` on its PATH (e.g. `FROM debian:bookworm-slim` + `COPY claude codex /usr/local/bin/`), named as \"baseImage\" in container.json, with \"INSTALL_AGENTS\": \"0\" in its \"buildArgs\"",
    );
    ui.out(&sanitize::line(&dir.to_string_lossy()));
    Ok(error::OK)
}

fn list(args: ListArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let dir = template::user_dir();
    let infos = template::list().map_err(CliError::from)?;
    for t in &infos {
        for p in &t.problems {
            ui.warning(&format!("template `{}`: {p}", t.name));
        }
    }
    if args.json {
        let doc = TemplateListDocument {
            schema_version: V1,
            user_dir: dir.map(|d| d.to_string_lossy().into_owned()),
            templates: infos.iter().map(entry).collect(),
        };
        ui.out_json(&doc.to_value());
        return Ok(error::OK);
    }
    let rows: Vec<[String; 4]> = infos
        .iter()
        .map(|t| {
            let source = if t.overrides_bundled {
                "user (overrides bundled)".to_string()
            } else {
                t.source.kind().to_string()
            };
            let status = match t.problems.len() {
                0 => "ok".to_string(),
                1 => "1 problem".to_string(),
                n => format!("{n} problems"),
            };
            let path = t
                .source
                .dir()
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_else(|| "-".into());
            [
                sanitize::line(&t.name),
                source,
                status,
                sanitize::line(&path),
            ]
        })
        .collect();
    let header = ["NAME", "SOURCE", "STATUS", "PATH"].map(String::from);
    let mut widths = [0usize; 3];
    for row in std::iter::once(&header).chain(&rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in std::iter::once(&header).chain(&rows) {
        ui.out(&format!(
            "{:<w0$}  {:<w1$}  {:<w2$}  {}",
            row[0],
            row[1],
            row[2],
            row[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        ));
    }
    Ok(error::OK)
}

fn entry(t: &TemplateInfo) -> TemplateEntry<'_> {
    TemplateEntry {
        name: &t.name,
        source: t.source.kind(),
        path: t.source.dir().map(|d| d.to_string_lossy().into_owned()),
        overrides_bundled: t.overrides_bundled,
        ok: t.ok(),
        problems: &t.problems,
    }
}

fn path(args: PathArgs, ui: &mut Ui) -> Result<i32, CliError> {
    match template::locate(&args.name).map_err(CliError::from)? {
        Source::User(dir) => {
            if args.json {
                let doc = TemplatePathDocument {
                    schema_version: V1,
                    name: &args.name,
                    source: "user",
                    path: dir.to_string_lossy().into_owned(),
                };
                ui.out_json(&doc.to_value());
            } else {
                ui.out(&sanitize::line(&dir.to_string_lossy()));
            }
            Ok(error::OK)
        }
        Source::Bundled => Err(CliError::new(
            ErrorKind::TemplateBundled,
            format!(
                "template `{}` is bundled in the binary and has no directory",
                args.name
            ),
        )
        .hint("To get an editable copy, run `git treebox template init`.")),
    }
}

impl From<TemplateError> for CliError {
    fn from(e: TemplateError) -> CliError {
        let msg = sanitize::line(&e.to_string());
        let out = match &e {
            TemplateError::InvalidName { .. } => CliError::new(ErrorKind::InvalidName, msg)
                .hint("Template names are lower-case letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64 characters: e.g. `git treebox template init my-template`."),
            TemplateError::NotFound { .. } => CliError::new(ErrorKind::TemplateNotFound, msg)
                .hint("`git treebox template list` shows the templates; to make one, run `git treebox template init <name>`."),
            TemplateError::Invalid { name, .. } => CliError::new(ErrorKind::InvalidTemplate, msg)
                .hint(format!("`git treebox template list` shows every problem; to start over from the bundled template, run `git treebox template init {} --force`.", quote(name))),
            TemplateError::Exists { name, .. } => CliError::new(ErrorKind::TemplateExists, msg)
                .hint(format!("To replace it with the bundled template, run `git treebox template init {} --force`.", quote(name))),
            TemplateError::NoConfigDir => CliError::new(ErrorKind::NoConfigDir, msg)
                .hint("Set XDG_CONFIG_HOME (or HOME), e.g. `export XDG_CONFIG_HOME=$HOME/.config`."),
            TemplateError::Io { .. } => CliError::new(ErrorKind::Runtime, msg),
        };
        out.caused_by(e)
    }
}
