//! The two verbs that give another machine the user's terminal (issue 41): entering
//! a box there (`enter [-d]`: attaching to its agent's session, or starting it) and
//! running one command in it (`git sandbox run`). `ssh` runs in the foreground with
//! this terminal (`-t` when there is one), and its exit code is the command's.
//!
//! The command line the other machine's shell runs is fixed and quoted word by word:
//! its entry point, the verb, the repository's key and the box's leaf (both checked
//! here and again there), then, for `run`, the user's own command after `--`.

use super::{mirror, ssh, RemoteError};
use crate::cmd::{quote, Cmd};
use crate::config::Machine;

/// A verb that takes the terminal there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verb {
    /// `git treebox enter LEAF`, with `-d`: start the agent detached.
    Enter { detach: bool },
    /// `git sandbox run LEAF -- COMMAND…`.
    Run(Vec<String>),
    /// `git sandbox up NAME --base BASE [--isolation I] [--git MODE]`: the box made
    /// there (its mirror seeded first) and a shell opened in it. NAME is the box's
    /// name (a branch), not its leaf.
    Up {
        base: String,
        isolation: Option<String>,
        git_mode: Option<String>,
    },
}

impl Verb {
    /// The words after the leaf, as the other side reads them.
    fn words(&self) -> (&'static str, Vec<String>) {
        match self {
            Verb::Enter { detach: true } => ("enter", vec!["-d".into()]),
            Verb::Enter { detach: false } => ("enter", Vec::new()),
            Verb::Run(cmd) => {
                let mut w = vec!["--".to_string()];
                w.extend(cmd.iter().cloned());
                ("run", w)
            }
            Verb::Up {
                base,
                isolation,
                git_mode,
            } => {
                let mut w = vec!["--base".to_string(), base.clone()];
                for (flag, v) in [("--isolation", isolation), ("--git", git_mode)] {
                    if let Some(v) = v {
                        w.extend([flag.to_string(), v.clone()]);
                    }
                }
                ("up", w)
            }
        }
    }
}

/// The word that tells the other side this terminal takes UTF-8: a non-interactive
/// SSH command there gets no locale of the laptop's (unless ssh sends `LANG`), and its
/// tmux would then draw every non-ASCII character as `_`.
pub const UTF8: &str = "--utf8";

/// Whether this terminal takes UTF-8, as its locale says (`LC_ALL`, else
/// `LC_CTYPE`, else `LANG`).
pub fn utf8_here() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
}

/// The command line `m`'s shell runs for `verb` on box `leaf` of repository `key`
/// (`utf8`: this terminal takes UTF-8, said with [`UTF8`] after the leaf).
pub fn command_line(m: &Machine, key: &str, leaf: &str, verb: &Verb, utf8: bool) -> String {
    let (name, rest) = verb.words();
    // `exec <program> __treebox-remote`, then the verb's words.
    let mut line = format!("{} {name} {key} {}", ssh::entry_command(m), quote(leaf));
    if utf8 {
        line.push(' ');
        line.push_str(UTF8);
    }
    for w in rest {
        line.push(' ');
        line.push_str(&quote(&w));
    }
    line
}

/// Run `verb` on box `leaf` of repository `key` on `m`, with this terminal (`tty`:
/// there is one, and ssh gives the other side one too); the exit code there.
pub fn run(m: &Machine, key: &str, leaf: &str, verb: &Verb, tty: bool) -> Result<i32, RemoteError> {
    mirror::dir_of(key).map_err(|e| RemoteError::Local {
        machine: m.name.clone(),
        what: e.to_string(),
    })?;
    let remote = command_line(m, key, leaf, verb, tty && utf8_here());
    let argv = ssh::argv_tty(m, &remote, tty);
    let c = Cmd::new(&argv[0]).args(&argv[1..]);
    let status = c.run_in_foreground().map_err(|source| RemoteError::Spawn {
        program: argv[0].clone(),
        source,
    })?;
    Ok(crate::cmd::exit_code(status))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_fixed_words_quoted() {
        let m = Machine {
            name: "big".into(),
            ssh: "big".into(),
            isolation: None,
            path: Some("/opt/tb".into()),
            ssh_command: None,
            forward_env: Vec::new(),
            fetch_origin: false,
        };
        let key = "0123456789abcdef0123456789abcdef";
        assert_eq!(
            command_line(&m, key, "fix--x", &Verb::Enter { detach: true }, false),
            format!("exec /opt/tb/git-treebox __treebox-remote enter {key} fix--x -d")
        );
        assert_eq!(
            command_line(&m, key, "fix--x", &Verb::Enter { detach: false }, true),
            format!("exec /opt/tb/git-treebox __treebox-remote enter {key} fix--x --utf8")
        );
        assert_eq!(
            command_line(&m, key, "b", &Verb::Run(vec!["sh".into(), "-c".into(), "echo $HOME; exit 3".into()]), false),
            format!("exec /opt/tb/git-treebox __treebox-remote run {key} b -- sh -c 'echo $HOME; exit 3'")
        );
    }
}
