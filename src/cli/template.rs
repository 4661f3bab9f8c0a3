//! `git treebox template …` (being written).

use clap::Subcommand;

use super::error::{self, CliError};
use super::ui::Ui;

#[derive(Debug, Clone, Subcommand)]
pub enum TemplateCommand {
    /// List templates.
    List {
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
}

impl TemplateCommand {
    pub fn json(&self) -> bool {
        match self {
            TemplateCommand::List { json } => *json,
        }
    }
}

pub fn run(_cmd: TemplateCommand, _ui: &mut Ui) -> Result<i32, CliError> {
    Err(CliError::new(
        error::USAGE,
        "unsupported",
        "`template` is not available yet",
    ))
}
