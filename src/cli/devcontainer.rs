//! `git treebox template import-devcontainer [NAME]`: the repository's committed dev
//! container as an operator-owned template, after its plan is shown and agreed to
//! (SPEC §7b). The engine is [`crate::template::devcontainer`]; this file shows the
//! plan, asks, and picks exit codes.

use clap::Args;

use super::error::{self, CliError, ErrorKind};
use super::ui::Ui;
use crate::cmd::quote;
use crate::sanitize;
use crate::template::{self, devcontainer as dc, Source};

#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// The template to write (default: the repository's directory name). Imported
    /// again, it shows what changed and replaces it.
    pub name: Option<String>,
    /// Import without asking (needed off a terminal, after reading the plan).
    #[arg(long)]
    pub yes: bool,
    /// Replace a template of that name that was not imported from a dev container.
    #[arg(long)]
    pub force: bool,
}

/// The default template name: the main checkout's directory, in a template name's
/// letters; `devcontainer` when nothing of it is left.
fn default_name(root: &std::path::Path) -> String {
    let raw = root
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let name: String = raw
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '-',
        })
        .collect();
    let name = name.trim_start_matches(['.', '_', '-']).to_string();
    match name.is_empty() || template::check_name(&name).is_err() {
        true => "devcontainer".into(),
        false => name,
    }
}

pub fn import(args: ImportArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let (repo, _) = super::here()?;
    let refused = |msg: String| CliError::new(ErrorKind::DevcontainerRefused, msg);
    let committed = dc::committed(&repo.git)
        .map_err(|e| refused(sanitize::line(&e.to_string())))?
        .ok_or_else(|| {
            CliError::new(
                ErrorKind::NoDevcontainer,
                "the repository's HEAD has no `.devcontainer/devcontainer.json` (nor `.devcontainer.json`)",
            )
            .hint("Only the committed file is read: commit it (`git add .devcontainer && git commit`), then run this again.")
        })?;
    let parsed = dc::parse(&committed).map_err(|e| {
        refused(sanitize::line(&e.to_string())).hint("Fix the file, commit it, and run this again.")
    })?;
    let base = template::bundled()
        .file(template::SPEC_FILE)
        .and_then(|f| serde_json::from_slice::<serde_json::Value>(&f.contents).ok())
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default();
    let mut plan = dc::plan(&parsed, committed.path, &base);
    // The build's files, from the same commit.
    let mut base_files = Vec::new();
    if let Some(b) = &plan.base {
        match dc::base_files(&repo.git, committed.commit, b) {
            Ok(files) => base_files = files,
            Err(why) => plan.refused.push(("build".into(), why)),
        }
    }
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| default_name(&repo.main_root));
    template::check_name(&name).map_err(CliError::from)?;
    // A template of that name already: imported before (its plan's diff is shown and it
    // is replaced), or one of the user's own (kept unless --force).
    let before = match template::locate(&name) {
        Ok(Source::User(_)) => Some(template::find(&name).ok().and_then(|t| dc::imported(&t))),
        Ok(Source::Bundled) | Err(template::TemplateError::NotFound { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    if let Some(None) = &before {
        if !args.force {
            return Err(CliError::new(
                ErrorKind::TemplateExists,
                format!("template `{name}` exists and was not imported from a dev container"),
            )
            .hint(format!(
                "Name another (`git treebox template import-devcontainer NAME`), or replace it: `git treebox template import-devcontainer {} --force`.",
                quote(&name)
            )));
        }
    }
    show(ui, &committed, &plan, &name);
    if let Some(Some(was)) = &before {
        let lines = dc::diff(&was.container_json, &plan.spec);
        match lines.is_empty() {
            true => ui.out("  container.json: unchanged since the last import"),
            false => {
                ui.out("  container.json, since the last import:");
                for l in lines {
                    ui.out(&format!("    {}", sanitize::line(&l)));
                }
            }
        }
    }
    if !plan.refused.is_empty() {
        return Err(refused(format!(
            "{} of `{}` refused: nothing was imported",
            match plan.refused.len() {
                1 => "1 key".to_string(),
                n => format!("{n} keys"),
            },
            committed.path
        ))
        .hint("Each refused key is listed above with its reason: change the file (on a branch of its own, if it serves other tools), commit it, and import again."));
    }
    if !args.yes {
        if !ui.can_ask() {
            return Err(CliError::new(
                ErrorKind::NeedsConfirmation,
                "importing a repository's dev container needs your agreement",
            )
            .hint(format!(
                "Read the plan above, then run `git treebox template import-devcontainer {} --yes`.",
                quote(&name)
            )));
        }
        if !ui.confirm(&format!("Write template `{name}`?")) {
            ui.info("nothing imported");
            return Ok(error::OK);
        }
    }
    let dir = template::user_dir().ok_or(template::TemplateError::NoConfigDir)?;
    let spec = serde_json::to_vec_pretty(&plan.spec).expect("a map serializes");
    let record = dc::provenance(&repo.main_root, &committed, &plan.spec);
    let record = serde_json::to_vec_pretty(&record).expect("a document serializes");
    let written = template::init_with(
        &dir,
        &name,
        before.is_some(),
        &[
            vec![
                (template::SPEC_FILE.to_string(), spec, 0o644),
                (dc::PROVENANCE.to_string(), record, 0o644),
            ],
            base_files,
        ]
        .concat(),
    )
    .map_err(CliError::from)?;
    ui.info(&format!(
        "wrote template `{name}` from {} at {}; use it with `\"template\": \"{name}\"` in your treebox config.json",
        committed.path,
        &committed.commit.to_string()[..12]
    ));
    ui.out(&sanitize::line(&written.to_string_lossy()));
    Ok(error::OK)
}

/// The plan, on stdout: where the file came from, and each key taken, refused and not
/// used.
fn show(ui: &mut Ui, c: &dc::Committed, plan: &dc::Plan, name: &str) {
    ui.out(&format!(
        "template `{name}` from {} (blob {}, commit {}):",
        c.path,
        &c.blob.to_string()[..12],
        &c.commit.to_string()[..12]
    ));
    for (k, what) in &plan.mapped {
        ui.out(&format!("  + {k}: {}", sanitize::line(what)));
    }
    for (k, why) in &plan.refused {
        ui.out(&format!("  ! {k}: refused: {}", sanitize::line(why)));
    }
    for (k, note) in &plan.unused {
        match note.is_empty() {
            true => ui.out(&format!("  - {k}: not used")),
            false => ui.out(&format!("  - {k}: not used: {}", sanitize::line(note))),
        }
    }
    ui.out("  kept from treebox's template: the agent account (never root), setpriv, the firewall, the agent CLIs");
    ui.out("  the image needs npm for the agent CLIs (or \"INSTALL_AGENTS\": \"0\" in the template's buildArgs, with the CLIs in the image), and apt-get for any of git, iptables, iproute2, sudo it lacks");
}
