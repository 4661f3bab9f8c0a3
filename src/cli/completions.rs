//! `git treebox completions SHELL` and `git sandbox completions SHELL`: the shell
//! completion scripts (also checked in under `completions/` and installed by
//! `install.sh`).
//!
//! clap renders the script for the executable (`git-treebox …`). Users type
//! `git treebox …`, which git's own completion hands to a function named
//! `_git_treebox` (bash) or `_git-treebox` (zsh): the bash script gains that bridge,
//! and box names for the commands that take one (read from the repository's two box
//! roots, the same directories `list` reads, so completing runs no treebox command:
//! `<repo>/.treebox/worktrees` for host boxes, and for container boxes
//! `$XDG_DATA_HOME/treebox/checkouts/<repo-key>`, found by the key's hash of the
//! resolved git dir, as `state::layout::repo_key` spells it).

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

# The boxes of the repository here: the directories under its box root, and under
# its checkouts root (container boxes), named by the hash of its resolved git dir.
__treebox_box_names() {{
    local common real hex dir
    common=$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null) || return 0
    command ls -1 "${{common%/.git}}/.treebox/worktrees" 2>/dev/null
    real=$(cd "$common" 2>/dev/null && pwd -P) || return 0
    hex=$({{ printf '%s' "$real" | sha256sum 2>/dev/null || printf '%s' "$real" | shasum -a 256; }} | cut -c1-12)
    for dir in "${{XDG_DATA_HOME:-$HOME/.local/share}}"/treebox/checkouts/*-"$hex"; do
        [[ -d $dir ]] && command ls -1 "$dir" 2>/dev/null
    done
    return 0
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
    local common real hex dir
    common=$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null) || return 1
    local -a boxes
    boxes=(${(f)"$(command ls -1 "${common%/.git}/.treebox/worktrees" 2>/dev/null)"})
    if real=$(cd "$common" 2>/dev/null && pwd -P); then
        hex=$({ printf '%s' "$real" | sha256sum 2>/dev/null || printf '%s' "$real" | shasum -a 256; } | cut -c1-12)
        for dir in "${XDG_DATA_HOME:-$HOME/.local/share}"/treebox/checkouts/*-"$hex"(N/); do
            boxes+=(${(f)"$(command ls -1 "$dir" 2>/dev/null)"})
        done
    fi
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::layout::repo_key;
    use std::path::Path;

    /// The bash helper names the boxes under both roots: the repository's box root and
    /// its checkouts root (found by the key `repo_key` gives), and no other
    /// repository's.
    #[test]
    fn bash_names_boxes_under_both_roots() {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().join("my repo");
        std::fs::create_dir_all(&repo).unwrap();
        crate::testing::git(&repo, &["init", "-q"]);
        let common = std::fs::canonicalize(repo.join(".git")).unwrap();
        let data = d.path().join("data");
        let checkouts = data.join("treebox/checkouts");
        std::fs::create_dir_all(repo.join(".treebox/worktrees/host-box")).unwrap();
        std::fs::create_dir_all(checkouts.join(repo_key(&common)).join("docker-box")).unwrap();
        let other = repo_key(Path::new("/elsewhere/.git"));
        std::fs::create_dir_all(checkouts.join(other).join("not-ours")).unwrap();
        let script = bash_bridge("git-treebox", &["enter"]);
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("{script}\n__treebox_box_names"))
            .current_dir(&repo)
            .env("XDG_DATA_HOME", &data)
            .output()
            .unwrap();
        let names = String::from_utf8_lossy(&out.stdout);
        let mut names: Vec<&str> = names.lines().collect();
        names.sort();
        assert_eq!(names, ["docker-box", "host-box"], "{out:?}");
    }
}
