//! The one builder of `git` subprocesses.
//!
//! treebox runs the git CLI only where it must honour the user's own setup (fetch,
//! `worktree add`, submodules). Every such command is built here:
//!
//! - `-C <dir>`, `LC_ALL=C` (output is parsed), stdin null;
//! - `GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`, `GIT_OBJECT_DIRECTORY`, … scrubbed:
//!   git exports them to hooks, and treebox may itself run under a hook;
//! - fixed pins for exec-shaped configuration (`core.hooksPath=/dev/null`,
//!   `core.fsmonitor=false`, `protocol.ext.allow=never`, no auto-gc);
//! - and, because a box can write the repository's shared config (SPEC §8.1), every
//!   exec-shaped key found in the *repository-level* config files (and whatever they
//!   include, in every form git expands: see [`super::pins`]) is overridden on the
//!   command line with the user's own (global/system) value, or an inert one. The
//!   user's credential helpers and ssh command keep working; a helper planted by a
//!   box never runs.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use super::pins::Entry;
use crate::cmd::Cmd;

/// Environment variables git exports to hooks; a child git must not inherit them.
pub const SCRUBBED_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
    "GIT_QUARANTINE_PATH",
];

/// Pins applied to every host-side git command.
const FIXED_PINS: &[(&str, &str)] = &[
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("protocol.ext.allow", "never"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("core.pager", "cat"),
];

/// A git command builder carrying the config pins for one repository.
#[derive(Debug, Clone, Default)]
pub struct GitCli {
    pins: Vec<Entry>,
    /// `core.gitProxy` was planted: git keeps the first value it reads (the
    /// repository's, before any `-c`), so the pin is `GIT_PROXY_COMMAND`, which git
    /// reads before all config.
    proxy_command: Option<OsString>,
}

/// What an exec-shaped key is reset to when the user's own config does not set it.
/// `None`: not exec-shaped.
pub fn inert_value(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    let (section, rest) = lower.split_once('.')?;
    let key = rest.rsplit('.').next().unwrap_or(rest);
    let has_sub = rest.contains('.');
    match (section, has_sub, key) {
        ("core", false, "fsmonitor") => Some("false"),
        ("core", false, "hookspath") => Some("/dev/null"),
        ("core", false, "sshcommand") => Some("ssh"),
        ("core", false, "pager") => Some("cat"),
        ("core", false, "editor") => Some("false"),
        ("core", false, "askpass") => Some(""),
        ("core", false, "gitproxy") => Some("none"),
        ("core", false, "alternaterefscommand") => Some(""),
        ("sequence", false, "editor") => Some("false"),
        ("credential", _, "helper") => Some(""),
        ("filter", true, "clean" | "smudge" | "process") => Some(""),
        ("filter", true, "required") => Some("false"),
        ("diff", false, "external") => Some(""),
        ("diff", true, "command" | "textconv") => Some(""),
        ("merge", true, "driver") => Some(""),
        ("remote", true, "uploadpack") => Some("git-upload-pack"),
        ("remote", true, "receivepack") => Some("git-receive-pack"),
        ("gpg", _, "program") => Some("gpg"),
        ("pager", _, _) => Some("false"),
        ("interactive", false, "difffilter") => Some(""),
        ("submodule", true, "update") => Some("checkout"),
        ("uploadpack", false, "packobjectshook") => Some(""),
        // Network settings a box could use to send the user's credentials elsewhere
        // (a proxy it runs, TLS it can intercept, a DNS override) or to write host
        // files (a cookie jar): reset to the user's value, else to git's default or to
        // a value that fails closed and names itself in the error.
        ("http", _, "proxy" | "proxyauthmethod") => Some(""),
        ("http", _, "proxysslcert" | "proxysslkey" | "proxysslcainfo") => {
            Some("/nonexistent/treebox-ignores-this-repository-level-setting")
        }
        ("http", _, "sslverify") => Some("true"),
        ("http", _, "sslcert" | "sslkey" | "sslcainfo" | "sslcapath") => {
            Some("/nonexistent/treebox-ignores-this-repository-level-setting")
        }
        ("http", _, "pinnedpubkey") => Some(""),
        ("http", _, "cookiefile") => Some("/dev/null"),
        ("http", _, "savecookies") => Some("false"),
        ("http", _, "curloptresolve") => Some(""),
        ("http", _, "followredirects") => Some("initial"),
        ("remote", true, "proxy" | "proxyauthmethod") => Some(""),
        _ => None,
    }
}

/// The user's own entries (global, XDG, system), in git's order.
fn user_entries() -> Vec<Entry> {
    let mut out = Vec::new();
    let Ok(cfg) = git2::Config::open_default() else {
        return out;
    };
    if let Ok(mut entries) = cfg.entries(None) {
        while let Some(Ok(e)) = entries.next() {
            let local = matches!(
                e.level(),
                git2::ConfigLevel::Local | git2::ConfigLevel::Worktree | git2::ConfigLevel::App
            );
            if local {
                continue;
            }
            out.push((
                OsStr::from_bytes(e.name_bytes()).to_os_string(),
                OsStr::from_bytes(e.value_bytes()).to_os_string(),
            ));
        }
    }
    out
}

impl GitCli {
    /// Pins only (for a repository no box has ever touched, or none at all).
    pub fn plain() -> GitCli {
        GitCli::default()
    }

    /// Pins for commands run in a repository whose shared config a box may have
    /// written: `common_dir/config`, plus `worktree_config` (the `config.worktree` of
    /// the worktree the command runs in), when given.
    pub fn for_repo(common_dir: &Path, worktree_config: Option<&Path>) -> GitCli {
        let repo_level = super::pins::repo_level_entries(common_dir, worktree_config);
        let lower = |n: &OsStr| n.to_string_lossy().to_ascii_lowercase();
        let planted: Vec<&OsString> = repo_level
            .iter()
            .map(|(n, _)| n)
            .filter(|n| inert_value(&n.to_string_lossy()).is_some())
            .collect();
        if planted.is_empty() {
            return GitCli::plain();
        }
        let user = user_entries();
        let mut pins: Vec<Entry> = Vec::new();
        let mut reset_credentials = false;
        let mut proxy_command = None;
        for name in planted {
            let l = lower(name);
            if l.starts_with("credential.") && l.ends_with(".helper") {
                reset_credentials = true;
                continue;
            }
            if l == "core.gitproxy" {
                // The user's own proxy command when it is the environment's; else none.
                proxy_command = Some(std::env::var_os("GIT_PROXY_COMMAND").unwrap_or_default());
            }
            if pins.iter().any(|(n, _)| lower(n) == l) {
                continue;
            }
            let user_value = user
                .iter()
                .rev()
                .find(|(n, _)| lower(n) == l)
                .map(|(_, v)| v.clone());
            let value = user_value.unwrap_or_else(|| {
                OsString::from(inert_value(&name.to_string_lossy()).unwrap_or(""))
            });
            pins.push((name.clone(), value));
        }
        if reset_credentials {
            // An empty helper resets the list; then the user's own helpers, in order.
            pins.push(("credential.helper".into(), OsString::new()));
            for (n, v) in &user {
                let l = lower(n);
                if l.starts_with("credential.") && l.ends_with(".helper") {
                    pins.push((n.clone(), v.clone()));
                }
            }
        }
        GitCli {
            pins,
            proxy_command,
        }
    }

    /// `git -c … -C dir` with the environment scrubbed and stdin null.
    pub fn cmd(&self, dir: &Path) -> Cmd {
        let mut c = Cmd::new("git");
        for (k, v) in FIXED_PINS {
            c = c.arg("-c").arg(format!("{k}={v}"));
        }
        for (k, v) in &self.pins {
            let mut pin = k.clone().into_vec();
            pin.push(b'=');
            pin.extend_from_slice(v.as_bytes());
            c = c.arg("-c").arg(OsString::from_vec(pin));
        }
        c = c.arg("-C").arg(dir.as_os_str());
        for k in SCRUBBED_ENV {
            c = c.env_remove(*k);
        }
        if let Some(p) = &self.proxy_command {
            c = c.env("GIT_PROXY_COMMAND", p);
        }
        c.env("LC_ALL", "C")
    }

    /// Like [`GitCli::cmd`], for talking to a remote without ever prompting:
    /// `GIT_TERMINAL_PROMPT=0` and, unless the user chose an ssh command, batch-mode ssh.
    pub fn silent_remote_cmd(&self, dir: &Path) -> Cmd {
        let mut c = self.cmd(dir).env("GIT_TERMINAL_PROMPT", "0");
        if std::env::var_os("GIT_SSH_COMMAND").is_none() && std::env::var_os("GIT_SSH").is_none() {
            let configured = self
                .pins
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("core.sshCommand"));
            if !configured {
                c = c.env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes");
            }
        }
        c
    }

    /// `--upload-pack=<program>` when the repository-level config names an upload-pack
    /// program for `remote`. git keeps the *first* `remote.<name>.uploadpack` it reads,
    /// so a `-c` pin cannot replace a planted one; the command-line option does. Every
    /// fetch-like command (`fetch`, `ls-remote`) adds this after its subcommand.
    pub fn upload_pack_arg(&self, remote: &str) -> Option<String> {
        let key = format!("remote.{remote}.uploadpack");
        self.pins
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(&key))
            .map(|(_, v)| format!("--upload-pack={}", v.to_string_lossy()))
    }

    /// The extra pins (beyond the fixed ones) this builder applies.
    pub fn pins(&self) -> &[Entry] {
        &self.pins
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_shaped_keys() {
        for k in [
            "core.fsmonitor",
            "core.sshCommand",
            "credential.helper",
            "credential.https://x.example.helper",
            "filter.evil.clean",
            "filter.evil.smudge",
            "filter.lfs.process",
            "diff.external",
            "diff.foo.textconv",
            "core.pager",
            "core.editor",
            "uploadpack.packObjectsHook",
            "remote.origin.uploadpack",
            "submodule.x.update",
        ] {
            assert!(inert_value(k).is_some(), "{k}");
        }
        for k in [
            "user.name",
            "core.bare",
            "remote.origin.url",
            "filter.x",
            "core.autocrlf",
        ] {
            assert!(inert_value(k).is_none(), "{k}");
        }
    }

    #[test]
    fn planted_keys_are_overridden() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("config"),
            "[core]\n\tfsmonitor = touch /tmp/x\n[filter \"evil\"]\n\tclean = touch /tmp/y\n[credential]\n\thelper = evil\n",
        )
        .unwrap();
        let g = GitCli::for_repo(d.path(), None);
        let pins = g.pins();
        assert!(
            pins.iter()
                .any(|(k, v)| k == "core.fsmonitor" && v == "false"),
            "{pins:?}"
        );
        assert!(
            pins.iter()
                .any(|(k, v)| k == "filter.evil.clean" && v.is_empty()),
            "{pins:?}"
        );
        assert!(
            pins.iter()
                .any(|(k, v)| k == "credential.helper" && v.is_empty()),
            "{pins:?}"
        );
        let line = g.cmd(Path::new("/r")).to_string();
        assert!(line.contains("core.hooksPath=/dev/null"), "{line}");
    }

    #[test]
    fn a_non_utf8_value_does_not_hide_a_planted_key() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("config"),
            b"[filter \"evil\"]\n\tsmudge = \"touch /tmp/x #\xff\"\n[remote \"origin\"]\n\tuploadpack = \"touch /tmp/y #\xfe\"\n",
        )
        .unwrap();
        let g = GitCli::for_repo(d.path(), None);
        let pins = g.pins();
        assert!(
            pins.iter()
                .any(|(k, v)| k == "filter.evil.smudge" && v.is_empty()),
            "{pins:?}"
        );
        assert_eq!(
            g.upload_pack_arg("origin").as_deref(),
            Some("--upload-pack=git-upload-pack")
        );
    }

    #[test]
    fn planted_network_settings_are_reset() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("config"),
            "[http]\n\tproxy = http://127.0.0.1:9\n\tsslVerify = false\n\tcookieFile = /home/u/.bashrc\n\tsaveCookies = true\n\
             [http \"https://example.com/\"]\n\tsslCAInfo = /tmp/ca.pem\n\
             [remote \"origin\"]\n\tproxy = http://127.0.0.1:9\n[core]\n\tgitProxy = /tmp/p.sh\n",
        )
        .unwrap();
        let g = GitCli::for_repo(d.path(), None);
        let pin = |key: &str| {
            g.pins()
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        assert_eq!(pin("http.proxy").as_deref(), Some(""));
        assert_eq!(pin("http.sslverify").as_deref(), Some("true"));
        assert_eq!(pin("http.savecookies").as_deref(), Some("false"));
        assert_eq!(pin("http.cookiefile").as_deref(), Some("/dev/null"));
        assert!(pin("http.https://example.com/.sslcainfo")
            .is_some_and(|v| v.starts_with("/nonexistent/")));
        assert_eq!(pin("remote.origin.proxy").as_deref(), Some(""));
        // git keeps the first core.gitProxy it reads: the environment wins over config.
        let line = format!("{:?}", g.cmd(Path::new("/r")));
        assert!(line.contains("GIT_PROXY_COMMAND"), "{line}");
    }

    #[test]
    fn clean_repo_has_no_extra_pins() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("config"), "[core]\n\tbare = false\n").unwrap();
        assert!(GitCli::for_repo(d.path(), None).pins().is_empty());
    }
}
