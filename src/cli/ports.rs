//! `git treebox open`: a box's dev server in the browser (SPEC §7b).

use clap::Args;

use super::error::{self, CliError, ErrorKind};
use super::ui::Ui;

#[derive(Debug, Clone, Args)]
pub struct OpenArgs {
    /// The box: its name, its current branch, or a unique part of either.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// One of the box's ports (default: the first that listens now).
    #[arg(value_name = "PORT")]
    pub port: Option<u16>,
    /// Print the URL, and open nothing. (Without a desktop — over SSH, in a script —
    /// the URL is only printed.)
    #[arg(long)]
    pub print: bool,
}

/// `git treebox open NAME [PORT]`: the URL of a box's dev server, opened in the
/// desktop's browser where there is one, and printed.
pub fn run(args: OpenArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let (_, _, entry) = super::sandbox::find_at(&super::cwd()?, &args.name)?;
    let leaf = entry.leaf.to_string();
    let record = entry.record.as_ref().ok_or_else(|| {
        CliError::new(
            ErrorKind::NotABox,
            format!("`{leaf}` has no record, so no ports"),
        )
    })?;
    let block = record
        .ports
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(" ");
    if record.ports.is_empty() {
        return Err(CliError::new(
            ErrorKind::NoPorts,
            format!("box `{leaf}` has no ports"),
        )
        .hint("It was made before boxes had ports, or with `\"ports\": {\"count\": 0}`: a box made now has a block of its own (`git treebox create NAME`)."));
    }
    let now = crate::runner::ports_now(record, &std::sync::OnceLock::new());
    let port = match args.port {
        Some(p) if !record.ports.contains(&p) => {
            return Err(CliError::new(
                ErrorKind::Usage,
                format!("port {p} is not one of box `{leaf}`'s ports ({block})"),
            )
            .hint(format!(
                "Name one of them, or none for the first that listens: `git treebox open {}`.",
                crate::cmd::quote(&leaf)
            )))
        }
        Some(p) => {
            if !now.as_ref().is_some_and(|n| n.listening.contains(&p)) {
                ui.warning(&format!("nothing in box `{leaf}` listens on port {p} now"));
            }
            p
        }
        None => match now.as_ref().and_then(|n| n.listening.first()) {
            Some(p) => *p,
            None => {
                let mut e = CliError::new(
                    ErrorKind::NothingListens,
                    format!("nothing in box `{leaf}` listens on its ports ({block})"),
                );
                if let Some(q) = now.as_ref().and_then(|n| n.loopback_only.first()) {
                    e = e.hint(format!(
                        "Port {q} listens on its container's own loopback, which the published port does not reach: bind the server to `$TREEBOX_HOST` (0.0.0.0 there)."
                    ));
                }
                return Err(e.hint(format!(
                    "Start its server on `$TREEBOX_PORT`, bound to `$TREEBOX_HOST`: e.g. `git sandbox run {} -- sh -c 'python3 -m http.server \"$TREEBOX_PORT\" --bind \"$TREEBOX_HOST\"'`.",
                    crate::cmd::quote(&leaf)
                )));
            }
        },
    };
    let url = format!("http://{}:{port}/", crate::ports::HOST_BIND);
    let opener = (!args.print).then(crate::ports::opener::detect).flatten();
    ui.out(&url);
    if let Some(program) = opener {
        if crate::ports::opener::open(program, &url) {
            ui.info(&format!("opened in your browser ({program})"));
        } else {
            ui.warning(&format!(
                "{program} could not be started: open the URL yourself"
            ));
        }
    }
    Ok(error::OK)
}
