//! Claude Code's OAuth login file (`~/.claude/.credentials.json`), read as untrusted
//! input: the host's copy and a box's (which the box can write) alike are size-capped,
//! never followed through a symlink, and reduced to two facts — when the access token
//! expires and a digest of the refresh token. The token itself is never kept, printed
//! or compared in the clear.
//!
//! Why it matters: the refresh token is single-use. Every box holding a copy of one
//! login logs the others (and the host) out when it refreshes, so a box's newer login
//! must never be overwritten on `enter` ([`keep_box_copy`]), and `doctor` names boxes
//! that share one login ([`Login::refresh_digest`]). Called by `credentials` and
//! `doctor`.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::untrusted::{read_regular, Links};

/// The login file's name under `~/.claude`.
pub const FILE: &str = ".credentials.json";

/// The environment variable of the long-lived route (`claude setup-token`).
pub const TOKEN_VAR: &str = "CLAUDE_CODE_OAUTH_TOKEN";

/// Largest login file read (a real one is well under 1 KiB).
pub const MAX_BYTES: u64 = 64 * 1024;

/// What treebox reads of a login file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Login {
    /// `claudeAiOauth.expiresAt` (milliseconds since the epoch): the later, the newer.
    pub expires_at: Option<i64>,
    /// SHA-256 of `claudeAiOauth.refreshToken`, hex: two files with the same digest are
    /// copies of one login.
    pub refresh_digest: Option<String>,
}

/// Parse a login file's bytes; `None` when it is not a JSON object with
/// `claudeAiOauth`.
pub fn parse(bytes: &[u8]) -> Option<Login> {
    if bytes.len() as u64 > MAX_BYTES {
        return None;
    }
    let doc: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let oauth = doc.get("claudeAiOauth")?.as_object()?;
    let expires_at = oauth.get("expiresAt").and_then(|v| {
        v.as_i64()
            .or_else(|| v.as_f64().filter(|f| f.is_finite()).map(|f| f as i64))
    });
    let refresh_digest = oauth
        .get("refreshToken")
        .and_then(|v| v.as_str())
        .filter(|t| !t.is_empty())
        .map(|t| hex::encode(Sha256::digest(t.as_bytes())));
    Some(Login {
        expires_at,
        refresh_digest,
    })
}

/// Read and parse the login file at `path` (capped, a symlink refused).
pub fn read(path: &Path) -> Option<Login> {
    read_regular(path, MAX_BYTES, Links::Refuse)
        .ok()
        .and_then(|b| parse(&b))
}

/// Should the box's copy at `boxed` stay, rather than be replaced by the host's
/// `host` bytes? Only when the box holds a login that expires later than the host's:
/// the box refreshed it, and the host's copy holds a refresh token already spent.
/// Anything unreadable on the box's side is replaced, as before.
pub fn keep_box_copy(host: &[u8], boxed: &Path) -> bool {
    let Some(theirs) = read(boxed).and_then(|l| l.expires_at) else {
        return false;
    };
    match parse(host).and_then(|l| l.expires_at) {
        Some(ours) => theirs > ours,
        None => true,
    }
}

/// Is the login file at `path` a copy of the host's login in `host` (the same refresh
/// token)?
pub fn same_login(host: &[u8], path: &Path) -> bool {
    let digest = |l: Option<Login>| l.and_then(|l| l.refresh_digest);
    matches!(
        (digest(parse(host)), digest(read(path))),
        (Some(a), Some(b)) if a == b
    )
}

/// Does the environment of this process carry the long-lived token?
pub fn env_token() -> bool {
    std::env::var_os(TOKEN_VAR).is_some_and(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn login(expires: i64, refresh: &str) -> String {
        format!(
            r#"{{"claudeAiOauth":{{"accessToken":"a","refreshToken":"{refresh}","expiresAt":{expires},"scopes":["user:inference"]}}}}"#
        )
    }

    #[test]
    fn parses_only_what_it_needs() {
        let l = parse(login(1000, "r1").as_bytes()).unwrap();
        assert_eq!(l.expires_at, Some(1000));
        let d = l.refresh_digest.unwrap();
        assert_eq!(d.len(), 64);
        assert!(!d.contains("r1"));
        assert_eq!(parse(b"{}"), None);
        assert_eq!(parse(b"junk"), None);
        assert_eq!(parse(br#"{"claudeAiOauth":7}"#), None);
        let bare = parse(br#"{"claudeAiOauth":{"expiresAt":"soon"}}"#).unwrap();
        assert_eq!(
            bare,
            Login {
                expires_at: None,
                refresh_digest: None
            }
        );
        let huge = format!(
            r#"{{"claudeAiOauth":{{"x":"{}"}}}}"#,
            "a".repeat(MAX_BYTES as usize)
        );
        assert_eq!(parse(huge.as_bytes()), None);
    }

    #[test]
    fn a_newer_login_in_the_box_is_kept() {
        let d = tempfile::tempdir().unwrap();
        let boxed = d.path().join(FILE);
        let host = login(1000, "r1");
        // Nothing in the box, or junk: replaced.
        assert!(!keep_box_copy(host.as_bytes(), &boxed));
        std::fs::write(&boxed, "junk").unwrap();
        assert!(!keep_box_copy(host.as_bytes(), &boxed));
        // Older or the same: replaced. Newer: kept.
        std::fs::write(&boxed, login(999, "r0")).unwrap();
        assert!(!keep_box_copy(host.as_bytes(), &boxed));
        std::fs::write(&boxed, login(1000, "r1")).unwrap();
        assert!(!keep_box_copy(host.as_bytes(), &boxed));
        std::fs::write(&boxed, login(2000, "r2")).unwrap();
        assert!(keep_box_copy(host.as_bytes(), &boxed));
        // A host file without a login never replaces one.
        assert!(keep_box_copy(b"{}", &boxed));
        // A symlink in the box is not read.
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&boxed, &link).unwrap();
        assert!(!keep_box_copy(host.as_bytes(), &link));
    }

    #[test]
    fn copies_of_one_login() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(FILE);
        std::fs::write(&p, login(5, "same")).unwrap();
        assert!(same_login(login(9, "same").as_bytes(), &p));
        assert!(!same_login(login(9, "other").as_bytes(), &p));
        assert!(!same_login(b"{}", &p));
    }
}
