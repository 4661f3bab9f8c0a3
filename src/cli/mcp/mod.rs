//! `git treebox mcp`: an MCP server over stdio for a lead agent (SPEC §10d, issue 40).
//!
//! One server per client, serving the repository of the directory it starts in; no
//! port and no socket, nothing a box can reach. It is a front end like `list` and
//! `diff`: each tool calls the function that builds that command's `--json` document,
//! never the `git-treebox` binary.
//!
//! - [`server`]: the wiring — the streams taken from the process
//!   ([`crate::stdio::take`]), a current-thread tokio runtime made only here, rmcp's
//!   handler; engine calls run on tokio's blocking pool.
//! - [`tools`]: the tools, their input schemas, and the blocking calls behind them.
//! - [`drive`]: the tools that start agents and talk to them (`box_create`,
//!   `box_send`, `box_wait`).
//! - [`act`]: the tools that change boxes (`box_stop`, `box_remove`, `box_land`).
//! - [`scope`]: which repositories it serves (`--all`: every one `git sandbox ls`
//!   knows), and in which one a call acts.
//! - [`result`]: a document or a refusal as a tool result, every string made harmless.
//!
//! Served: `box_create`, `box_list`, `box_send`, `box_wait`, `box_diff`, `box_screen`,
//! `box_stop`, `box_remove`, `box_land`.

mod act;
mod drive;
mod result;
mod scope;
mod server;
mod tools;

use clap::Args;

use super::error::{CliError, ErrorKind};
use super::ui::Ui;

#[derive(Debug, Clone, Args)]
pub struct McpArgs {
    /// Serve every repository `git sandbox ls` knows, not only this one: each tool then
    /// takes the repository as `repo`, and `box_list` without it lists every box.
    #[arg(long)]
    pub all: bool,
}

pub fn run(args: McpArgs, ui: &mut Ui) -> Result<i32, CliError> {
    // What every call would fail on is said now, on stderr, with its exit code: not a
    // repository (2), a broken config (2), a server started inside a box (2).
    let here = super::here();
    refuse_inside_a_box(here.as_ref().ok())?;
    let _cfg = super::load_config()?;
    let scope = match (args.all, here) {
        (true, _) => scope::Scope::All,
        (false, here) => scope::Scope::One(here?.0.main_root),
    };
    let protocol = crate::stdio::take().map_err(|e| {
        CliError::new(
            ErrorKind::Io,
            "could not take stdin and stdout for the protocol",
        )
        .caused_by(e)
    })?;
    ui.verbose(&match &scope {
        scope::Scope::One(root) => format!(
            "serving the boxes of {} over stdio",
            crate::sanitize::line(&root.to_string_lossy())
        ),
        scope::Scope::All => "serving the boxes of every repository over stdio".into(),
    });
    server::serve(protocol, scope)
}

/// A lead agent inside a box must not drive boxes: refused when the process runs in
/// one (`TREEBOX_BOX`, which every program started in a box gets, container or not)
/// or its directory is inside one of this repository's boxes (`here`, when the
/// directory is in a repository at all).
fn refuse_inside_a_box(
    here: Option<&(crate::git::Repo, crate::state::Layout)>,
) -> Result<(), CliError> {
    let in_env = std::env::var("TREEBOX_BOX").ok().filter(|b| !b.is_empty());
    let in_dir = match (here, super::cwd()) {
        (Some((_, layout)), Ok(dir)) => crate::boxes::holds(layout, &dir),
        _ => false,
    };
    if in_env.is_none() && !in_dir {
        return Ok(());
    }
    let which = in_env
        .map(|b| format!(" (box `{}`)", crate::sanitize::line(&b)))
        .unwrap_or_default();
    let main = here.map_or_else(
        || "<your repository>".to_string(),
        |(repo, _)| crate::cmd::quote(&repo.main_root.to_string_lossy()),
    );
    Err(CliError::new(
        ErrorKind::InsideABox,
        format!("`git treebox mcp` does not run inside a box{which}"),
    )
    .hint(format!(
        "Start it in the repository's main checkout, outside every box: `cd {main} && git treebox mcp`."
    )))
}
