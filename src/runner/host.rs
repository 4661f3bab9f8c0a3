//! The host runner: the agent runs as the user, in the box's directory.

use std::path::Path;

use super::Runner;
use crate::cmd::Cmd;

pub struct Host;

impl Runner for Host {
    fn exec(&self, box_path: &Path, leaf: &str, argv: &[String]) -> Cmd {
        let (program, args) = argv
            .split_first()
            .map_or(("true", &[][..]), |(p, a)| (p.as_str(), a));
        Cmd::new(program)
            .args(args)
            .cwd(box_path)
            .env("TREEBOX_BOX", leaf)
            .env("GIT_CEILING_DIRECTORIES", super::ceiling(box_path))
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
        let c = Host.exec(
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
            "cd /r/.treebox/worktrees/fix && env TREEBOX_BOX=fix GIT_CEILING_DIRECTORIES=/r/.treebox/worktrees claude --dangerously-skip-permissions 'a b'"
        );
    }
}
