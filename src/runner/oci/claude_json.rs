//! The `~/.claude.json` a container box gets: not the user's (which holds every other
//! project's history and MCP servers with their tokens), but the few answers that let
//! Claude Code start unattended for a user who has used it before (SPEC §7).
//!
//! Carried, and only when the user's own file has them: onboarding done (and the
//! version it was done for), the account Claude Code is logged into (`oauthAccount`:
//! who, not a token), the user's answer for the model key now in use (only that key's
//! entry of `customApiKeyResponses`), and the trust the user gave the *main checkout*
//! — the trust dialog and the `.mcp.json` decisions — applied to the box's own paths.
//! Nothing is approved on the user's behalf.
//!
//! Pure: bytes in, bytes out. Called by `credentials` when it stages or refreshes the
//! harness's files.

use std::path::Path;

use serde_json::{Map, Value};

/// The top-level keys carried as they are.
const CARRIED: [&str; 3] = [
    "hasCompletedOnboarding",
    "lastOnboardingVersion",
    "oauthAccount",
];

/// The per-project keys carried from the main checkout to the box: the trust dialog's
/// answer and the repository's `.mcp.json` decisions.
pub const PROJECT_KEYS: [&str; 4] = [
    "hasTrustDialogAccepted",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
    "enableAllProjectMcpServers",
];

/// How Claude Code names an API key in `customApiKeyResponses`: its last 20 characters.
fn key_tail(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    chars[chars.len().saturating_sub(20)..].iter().collect()
}

/// The `projects` keys Claude Code may look a box's answers up by: its checkout, and
/// for a worktree of the box's own bare clone that clone twice — as a path (how
/// earlier versions map a worktree to its repository) and as `worktrees:<path>` (how
/// Claude Code 2.1.337 and later key the trust of every worktree of a bare repository
/// whose directory is not named `*.git` or `.bare`, as the box's `git` is).
pub fn project_keys(checkout: &Path, bare_clone: Option<&Path>) -> Vec<String> {
    let mut keys = vec![checkout.to_string_lossy().into_owned()];
    if let Some(bare) = bare_clone {
        let bare = bare.to_string_lossy();
        keys.push(bare.clone().into_owned());
        keys.push(format!("worktrees:{bare}"));
    }
    keys
}

/// The minimal `.claude.json` for a box, from the user's `user_json`: `main` is the
/// main checkout whose trust is carried, `keys` the `projects` keys Claude Code may
/// know the box by ([`project_keys`]), `api_key` the model key the box gets. `None`
/// when the user's file is not a JSON object (nothing is staged then).
pub fn minimal(
    user_json: &[u8],
    main: &Path,
    keys: &[String],
    api_key: Option<&str>,
) -> Option<Vec<u8>> {
    // One pass over the user's file keeps only what may be carried (it holds every
    // project's history: tens of MB are skipped, never built).
    let main_key = main.to_string_lossy();
    let mut paths: Vec<Vec<&str>> = CARRIED.iter().map(|k| vec![*k]).collect();
    paths.push(vec!["customApiKeyResponses"]);
    paths.extend(
        PROJECT_KEYS
            .iter()
            .map(|k| vec!["projects", main_key.as_ref(), *k]),
    );
    let paths: Vec<&[&str]> = paths.iter().map(Vec::as_slice).collect();
    let mut picked = crate::untrusted::json_pick(user_json, &paths)?.into_iter();
    let mut out = Map::new();
    for (k, v) in CARRIED.iter().zip(picked.by_ref()) {
        if let Some(v) = v {
            out.insert(k.to_string(), v);
        }
    }
    let responses = picked.next().flatten().unwrap_or(Value::Null);
    if let Some(key) = api_key.filter(|k| !k.is_empty()) {
        let tail = key_tail(key);
        let mut answer = Map::new();
        for side in ["approved", "rejected"] {
            let said = responses[side]
                .as_array()
                .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(tail.as_str())));
            answer.insert(
                side.to_string(),
                Value::Array(if said {
                    vec![Value::String(tail.clone())]
                } else {
                    vec![]
                }),
            );
        }
        out.insert("customApiKeyResponses".into(), Value::Object(answer));
    }
    let carried: Map<String, Value> = PROJECT_KEYS
        .iter()
        .zip(picked)
        .filter_map(|(k, v)| Some((k.to_string(), v?)))
        .collect();
    if !carried.is_empty() {
        let projects: Map<String, Value> = keys
            .iter()
            .map(|k| (k.clone(), Value::Object(carried.clone())))
            .collect();
        out.insert("projects".into(), Value::Object(projects));
    }
    serde_json::to_vec_pretty(&Value::Object(out)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user() -> Vec<u8> {
        serde_json::json!({
            "hasCompletedOnboarding": true,
            "lastOnboardingVersion": "2.1.0",
            "oauthAccount": {"emailAddress": "u@example.com"},
            "userID": "abc",
            "customApiKeyResponses": {
                "approved": ["0123456789abcdefghij", "other-key-tail-xxxxx"],
                "rejected": []
            },
            "mcpServers": {"secret": {"command": "x", "env": {"TOKEN": "tok-123"}}},
            "projects": {
                "/src/repo": {
                    "hasTrustDialogAccepted": true,
                    "enabledMcpjsonServers": ["db"],
                    "history": [{"display": "private prompt"}],
                    "mcpServers": {"p": {"env": {"K": "v"}}}
                },
                "/src/other": {"hasTrustDialogAccepted": true, "history": ["x"]}
            }
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn only_the_answers_for_this_box_are_carried() {
        let boxes = project_keys(
            Path::new("/src/repo/.treebox/worktrees/b"),
            Some(Path::new("/s/git")),
        );
        assert_eq!(boxes[1..], ["/s/git", "worktrees:/s/git"]);
        let out = minimal(
            &user(),
            Path::new("/src/repo"),
            &boxes,
            Some("sk-ant-xxxxxxxxxxxx0123456789abcdefghij"),
        )
        .unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["hasCompletedOnboarding"], true);
        assert_eq!(v["oauthAccount"]["emailAddress"], "u@example.com");
        assert_eq!(
            v["customApiKeyResponses"]["approved"],
            serde_json::json!(["0123456789abcdefghij"])
        );
        for b in &boxes {
            let p = &v["projects"][b.as_str()];
            assert_eq!(p["hasTrustDialogAccepted"], true);
            assert_eq!(p["enabledMcpjsonServers"], serde_json::json!(["db"]));
            assert!(p.get("history").is_none());
        }
        let text = String::from_utf8(out).unwrap();
        for gone in [
            "tok-123",
            "private prompt",
            "/src/other",
            "userID",
            "mcpServers",
            "other-key",
        ] {
            assert!(!text.contains(gone), "{gone} carried: {text}");
        }
    }

    #[test]
    fn nothing_is_approved_on_the_users_behalf() {
        // A key the user never answered for, and a main checkout never trusted.
        let json = br#"{"hasCompletedOnboarding":true,"projects":{"/src/repo":{"history":[]}}}"#;
        let out = minimal(
            json,
            Path::new("/src/repo"),
            &project_keys(Path::new("/b"), None),
            Some("sk-new"),
        )
        .unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            v["customApiKeyResponses"]["approved"],
            serde_json::json!([])
        );
        assert!(v.get("projects").is_none(), "{v}");
        assert_eq!(minimal(b"[1]", Path::new("/"), &[], None), None);
        assert_eq!(minimal(b"not json", Path::new("/"), &[], None), None);
    }
}
