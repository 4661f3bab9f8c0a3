//! Harnesses: which agent CLI a box launches (SPEC §3).
//!
//! A closed vocabulary: `claude` and `codex`, each with the flags that let it work
//! without prompting inside its box. The program can be replaced in the user config
//! (tests and wrappers); the flags and the user's extra arguments are kept. The serde,
//! `Display` and `FromStr` names are the same strings (records, config, JSON).

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Harness {
    #[default]
    Claude,
    Codex,
}

impl Harness {
    pub const ALL: [Harness; 2] = [Harness::Claude, Harness::Codex];

    pub fn as_str(self) -> &'static str {
        match self {
            Harness::Claude => "claude",
            Harness::Codex => "codex",
        }
    }

    /// The flags a harness gets in every box.
    pub fn flags(self) -> &'static [&'static str] {
        match self {
            Harness::Claude => &["--dangerously-skip-permissions"],
            Harness::Codex => &["--dangerously-bypass-approvals-and-sandbox"],
        }
    }

    /// The full argv: program, the harness flags, then the user's arguments verbatim.
    pub fn argv(self, program: &str, extra: &[String]) -> Vec<String> {
        std::iter::once(program.to_string())
            .chain(self.flags().iter().map(|s| s.to_string()))
            .chain(extra.iter().cloned())
            .collect()
    }
}

impl fmt::Display for Harness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Harness {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Harness::ALL
            .into_iter()
            .find(|h| h.as_str() == s)
            .ok_or_else(|| format!("unknown harness {s:?} (expected \"claude\" or \"codex\")"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_appends_extra_verbatim() {
        let a = Harness::Claude.argv("claude", &["-p".into(), "fix it; rm -rf /".into()]);
        assert_eq!(
            a,
            [
                "claude",
                "--dangerously-skip-permissions",
                "-p",
                "fix it; rm -rf /"
            ]
        );
        let a = Harness::Codex.argv("/opt/codex", &[]);
        assert_eq!(
            a,
            ["/opt/codex", "--dangerously-bypass-approvals-and-sandbox"]
        );
    }

    #[test]
    fn parse() {
        assert_eq!("codex".parse::<Harness>(), Ok(Harness::Codex));
        assert!("gpt".parse::<Harness>().is_err());
    }
}
