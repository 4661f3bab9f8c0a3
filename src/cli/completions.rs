//! `git treebox completions SHELL` and `git sandbox completions SHELL`: the shell
//! completion scripts (also checked in under `completions/` and installed by
//! `install.sh`).
//!
//! clap renders the script for the executable (`git-treebox …`). Users type
//! `git treebox …`, which git's own completion hands to a function named
//! `_git_treebox` (bash) or `_git-treebox` (zsh): the bash script gains that bridge,
//! and box names for the commands that take one (read from the repository's box root,
//! the same directories `list` reads, so completing runs no treebox command).

use clap::Args;
use clap_complete::Shell;

use super::error::{self, CliError};
use super::ui::Ui;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to print the script for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The bridge from git's bash completion to clap's, for `bin` (`git-treebox`): git
/// calls `_git_<name>` with its own `words`/`cword`; clap's function wants the
/// executable's words. Subcommands in `takes_box` complete box names.
fn bash_bridge(bin: &str, takes_box: &[&str]) -> String {
    let name = bin.trim_start_matches("git-");
    let clap_fn = format!("_{}", bin.replace('-', "__"));
    format!(
        r#"
# `git {name} …` through git's own completion, which calls _git_{name}.
_git_{name}() {{
    local COMP_WORDS=("{bin}" "${{words[@]:2}}") COMP_CWORD=$((cword - 1))
    {clap_fn} "{bin}" "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
    local cur="${{COMP_WORDS[COMP_CWORD]}}"
    if [[ $COMP_CWORD -eq 2 && $cur != -* ]]; then
        case "${{COMP_WORDS[1]}}" in
            {cases}) COMPREPLY=($(compgen -W "$(__treebox_box_names)" -- "$cur")) ;;
        esac
    fi
}}

# The boxes of the repository here: the directories under its box root.
__treebox_box_names() {{
    local common
    common=$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null) || return 0
    command ls -1 "${{common%/.git}}/.treebox/worktrees" 2>/dev/null
}}
"#,
        cases = takes_box.join("|"),
    )
}

/// clap_complete's separator in the bash script's command names.
const SUBCMD: &str = "__subcmd__";

/// The completion script of `bin` (`git-treebox` or `git-sandbox`) for `shell`.
pub fn script(bin: &str, cmd: clap::Command, shell: Shell) -> Vec<u8> {
    // The executable's name, not the `git treebox` help shows.
    let mut cmd = cmd.bin_name(bin);
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, bin, &mut out);
    if shell == Shell::Bash {
        // clap_complete 4.6 spells the nested commands' case labels of a binary whose
        // name has a '-' as `git__subcmd__treebox__…` while its loop sets
        // `git__treebox__…`: no option after a subcommand would ever complete.
        let text = String::from_utf8_lossy(&out).replace(
            &format!("{}{SUBCMD}", bin.replace('-', SUBCMD)),
            &format!("{}{SUBCMD}", bin.replace('-', "__")),
        );
        out = text.into_bytes();
        let takes_box: &[&str] = if bin == "git-sandbox" {
            &["attach", "run", "down", "bundle", "fetch"]
        } else {
            &["enter", "teardown", "rm"]
        };
        out.extend_from_slice(bash_bridge(bin, takes_box).as_bytes());
    }
    if shell == Shell::Zsh {
        out = zsh_box_names(&String::from_utf8_lossy(&out)).into_bytes();
    }
    out
}

/// zsh: the arguments that name a box complete box names (zsh's own git completion
/// already calls `_git-treebox` for `git treebox …`).
fn zsh_box_names(script: &str) -> String {
    let mut out = String::with_capacity(script.len() + 512);
    for line in script.split_inclusive('\n') {
        let names_a_box = line.starts_with("':reference -- The box")
            || line.starts_with("'*::refs -- Boxes to remove")
            || line.starts_with("':name -- The box:")
            || line.starts_with("':name -- The clone box");
        match line.rfind(":_default'") {
            Some(at) if names_a_box => {
                out.push_str(&line[..at]);
                out.push_str(":__treebox_boxes'");
                out.push_str(&line[at + ":_default'".len()..]);
            }
            _ => out.push_str(line),
        }
    }
    // Defined before the script's closing block, which calls the completion function
    // right away when zsh autoloads the file.
    let helper = r#"(( $+functions[__treebox_boxes] )) ||
__treebox_boxes() {
    local common
    common=$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null) || return 1
    local -a boxes
    boxes=(${(f)"$(command ls -1 "${common%/.git}/.treebox/worktrees" 2>/dev/null)"})
    compadd -a boxes
}

"#;
    match out.rfind("if [ \"$funcstack[1]\" = ") {
        Some(at) => out.insert_str(at, helper),
        None => out.push_str(helper),
    }
    out
}

/// Print the script of `bin` for the shell asked.
pub fn run(
    a: CompletionsArgs,
    ui: &mut Ui,
    bin: &str,
    cmd: clap::Command,
) -> Result<i32, CliError> {
    let text = script(bin, cmd, a.shell);
    ui.out(String::from_utf8_lossy(&text).trim_end());
    Ok(error::OK)
}
