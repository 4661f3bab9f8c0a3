//! The host runner: the agent runs as the user, in the box's directory.
//!
//! It inherits the user's environment, except the forge tokens (SPEC §7): those reach
//! the agent only when the box was made with `--token-from` naming them.

use std::path::Path;

use super::Runner;
use crate::cmd::Cmd;

/// Tokens that let an agent act on the user's forge account: never passed on unless
/// forwarded by name.
pub const FORGE_TOKENS: &[&str] = &["GH_TOKEN", "GITHUB_TOKEN", "GITLAB_TOKEN"];

#[derive(Debug, Default)]
pub struct Host {
    /// The variables forwarded into the box (`--token-from`).
    pub forward: Vec<String>,
    /// The box's block of ports ([`crate::ports::env`]).
    pub ports: Vec<u16>,
}

impl Runner for Host {
    fn exec(&self, box_path: &Path, leaf: &str, argv: &[String]) -> Cmd {
        let (program, args) = argv
            .split_first()
            .map_or(("true", &[][..]), |(p, a)| (p.as_str(), a));
        let mut c = Cmd::new(program)
            .args(args)
            .cwd(box_path)
            .env("TREEBOX_BOX", leaf)
            .env("GIT_CEILING_DIRECTORIES", super::ceiling(box_path));
        for (k, v) in crate::ports::env(&self.ports, false) {
            c = c.env(k, v);
        }
        for t in FORGE_TOKENS {
            if !self.forward.iter().any(|f| f == t) {
                c = c.env_remove(*t);
            }
        }
        c
    }

    fn shell(&self, box_path: &Path, leaf: &str) -> Cmd {
        let shell = std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into());
        self.exec(box_path, leaf, &[shell, "-l".into()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_runs_in_box() {
        let c = Host::default().exec(
            Path::new("/r/.treebox/worktrees/fix"),
            "fix",
            &[
                "claude".into(),
                "--dangerously-skip-permissions".into(),
                "a b".into(),
            ],
        );
        assert_eq!(
            c.to_string(),
            "cd /r/.treebox/worktrees/fix && env -u GH_TOKEN -u GITHUB_TOKEN -u GITLAB_TOKEN TREEBOX_BOX=fix GIT_CEILING_DIRECTORIES=/r/.treebox/worktrees claude --dangerously-skip-permissions 'a b'"
        );
    }
}
