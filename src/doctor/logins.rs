//! The `logins` check: which login route each container box of this repository uses,
//! and whether several of them hold copies of one Claude Code OAuth login (issue 29,
//! point 5). Its refresh token is single-use: the first copy to refresh logs the others
//! — and this machine, when the copy is of its login — out. The long-lived token of
//! `claude setup-token` (`CLAUDE_CODE_OAUTH_TOKEN`) avoids it.
//!
//! Read from the box's bookkeeping only: the keys file's variable names (never their
//! values) and the staged login copy, which the box can write, through
//! [`crate::runner::oci::login`] (capped, no symlink, reduced to a digest). No token
//! is ever printed.

use std::collections::BTreeMap;
use std::path::Path;

use super::{Check, Status};
use crate::git::repo::Repo;
use crate::harness::Harness;
use crate::runner::oci::login;
use crate::state::{Layout, Record};
use crate::untrusted::{read_regular, Links};

/// How a container box's agent logs in.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Route {
    /// `CLAUDE_CODE_OAUTH_TOKEN` from the environment, through the keys file.
    Token,
    /// A copy of a Claude OAuth login; the digest of its refresh token.
    OAuthCopy(Option<String>),
    /// A model key (or gateway token) through the keys file.
    ApiKey,
    /// A copy of Codex's `auth.json`.
    CodexLogin,
    /// None that treebox can see.
    Nothing,
}

impl Route {
    fn describe(&self) -> &'static str {
        match self {
            Route::Token => "CLAUDE_CODE_OAUTH_TOKEN",
            Route::OAuthCopy(_) => "a copy of your Claude login",
            Route::ApiKey => "an API key",
            Route::CodexLogin => "a copy of your Codex login",
            Route::Nothing => "no login",
        }
    }
}

/// The names the keys file sets (values never read past the `=`).
fn key_names(path: &Path) -> Vec<String> {
    let Ok(bytes) = read_regular(path, 1 << 20, Links::Refuse) else {
        return Vec::new();
    };
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_string()))
        .collect()
}

fn route_of(layout: &Layout, record: &Record) -> Option<Route> {
    record.container.as_ref()?;
    let leaf = crate::names::Leaf::parse(&record.name).ok()?;
    let keys = key_names(&layout.container_keys_path(&leaf));
    let has = |k: &str| keys.iter().any(|n| n == k);
    let creds = layout.credentials_dir(&leaf);
    Some(match record.harness {
        Harness::Claude => {
            let copy = login::read(&creds.join("claude").join(login::FILE));
            if has(login::TOKEN_VAR) {
                Route::Token
            } else if let Some(l) = copy {
                Route::OAuthCopy(l.refresh_digest)
            } else if has("ANTHROPIC_API_KEY") || has("ANTHROPIC_AUTH_TOKEN") {
                Route::ApiKey
            } else {
                Route::Nothing
            }
        }
        Harness::Codex => {
            let auth = creds.join("codex").join("auth.json");
            if std::fs::symlink_metadata(&auth).is_ok_and(|m| m.is_file()) {
                Route::CodexLogin
            } else if has("OPENAI_API_KEY") {
                Route::ApiKey
            } else {
                Route::Nothing
            }
        }
    })
}

pub(super) fn check_logins(repo: &Repo, host_home: Option<&Path>) -> Check {
    let Ok(layout) = Layout::new(&repo.main_root, &repo.common_dir) else {
        return Check::new("logins", Status::Ok, "no container boxes");
    };
    let routes: Vec<(String, Route)> = crate::boxes::inventory(repo, &layout)
        .iter()
        .filter_map(|e| Some((e.leaf.to_string(), route_of(&layout, e.record.as_ref()?)?)))
        .collect();
    let host = host_home
        .and_then(|h| login::read(&h.join(".claude").join(login::FILE)))
        .and_then(|l| l.refresh_digest);
    finding(&routes, host.as_deref())
}

/// The verdict from each box's route and the digest of this machine's own login.
fn finding(routes: &[(String, Route)], host: Option<&str>) -> Check {
    if routes.is_empty() {
        return Check::new("logins", Status::Ok, "no container boxes");
    }
    let each = routes
        .iter()
        .map(|(leaf, r)| format!("{leaf}: {}", r.describe()))
        .collect::<Vec<_>>()
        .join("; ");
    let mut copies: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (leaf, r) in routes {
        if let Route::OAuthCopy(Some(d)) = r {
            copies.entry(d.as_str()).or_default().push(leaf);
        }
    }
    let shared: Vec<String> = copies
        .iter()
        .filter(|(_, boxes)| boxes.len() > 1)
        .map(|(d, boxes)| {
            let mine = if host == Some(*d) {
                " (and this machine)"
            } else {
                ""
            };
            format!("{}{mine}", boxes.join(", "))
        })
        .collect();
    if shared.is_empty() {
        return Check::new("logins", Status::Ok, each);
    }
    Check::new(
        "logins",
        Status::Advisory,
        format!(
            "boxes {} hold copies of one Claude login: the first to refresh it logs the others out; {each}",
            shared.join("; boxes ")
        ),
    )
    .hint("Run `claude setup-token`, export the token as CLAUDE_CODE_OAUTH_TOKEN, then `git treebox enter` each box: it gets the token and no copy of your login.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(d: &str) -> Route {
        Route::OAuthCopy(Some(d.into()))
    }

    #[test]
    fn findings() {
        assert_eq!(finding(&[], None).status, Status::Ok);
        let one = finding(
            &[("a".into(), copy("d1")), ("b".into(), Route::Token)],
            Some("d1"),
        );
        assert_eq!(one.status, Status::Ok);
        assert_eq!(
            one.summary,
            "a: a copy of your Claude login; b: CLAUDE_CODE_OAUTH_TOKEN"
        );
        let shared = finding(
            &[
                ("a".into(), copy("d1")),
                ("b".into(), copy("d1")),
                ("c".into(), copy("d2")),
                ("k".into(), Route::ApiKey),
            ],
            Some("d1"),
        );
        assert_eq!(shared.status, Status::Advisory);
        assert!(
            shared
                .summary
                .starts_with("boxes a, b (and this machine) hold copies of one Claude login"),
            "{shared:?}"
        );
        assert!(!shared.summary.contains("d1"), "{shared:?}");
        assert!(shared.hint.unwrap().contains("claude setup-token"));
    }
}
