//! Issue 38, "also found" (b): `enter` from a shell without the model key keeps the key
//! the box was made with (the agent would otherwise land on its login screen), and says
//! so by name; a key the shell has replaces the box's. The value is never printed.

use crate::container::on_docker;

/// A key longer than the 20 characters Claude Code names an approved key by.
fn key(b: &crate::container::Boxed, which: &str) -> String {
    format!("sk-ant-{which}-0123456789abcdefghij-{}", b.id)
}

#[test]
fn enter_without_the_key_keeps_the_box_s_and_a_new_one_replaces_it() {
    on_docker(|mut b| {
        let first = key(&b, "first");
        let tail: String = first.chars().skip(first.chars().count() - 20).collect();
        // The user approved that key in Claude Code: the box's ~/.claude.json says so.
        std::fs::write(
            b.env.home.join(".claude.json"),
            format!(r#"{{"hasCompletedOnboarding":true,"customApiKeyResponses":{{"approved":["{tail}"],"rejected":[]}}}}"#),
        )
        .unwrap();
        b.env
            .extra_env
            .push(("ANTHROPIC_API_KEY".into(), first.clone()));
        b.env.treebox(&["create", "k", "--no-launch"]).ok();
        let home = b.record("k")["container"]["home"]
            .as_str()
            .unwrap()
            .to_string();
        let inside = |b: &crate::container::Boxed| {
            b.exec(&["k", "--", "sh", "-c", "printf %s \"$ANTHROPIC_API_KEY\""])
                .ok()
                .stdout
                .clone()
        };
        assert_eq!(inside(&b), first);

        // Another terminal, without the key.
        b.env.extra_env.retain(|(k, _)| k != "ANTHROPIC_API_KEY");
        let entered = b.env.treebox(&["enter", "k", "--json"]);
        let doc = entered.ok().json();
        crate::schema::assert_valid("enter", &doc, "enter --json (a key kept)");
        assert_eq!(
            doc["keys"],
            serde_json::json!({"ANTHROPIC_API_KEY": "kept"})
        );
        assert!(!entered.stdout.contains(&first) && !entered.stderr.contains(&first));
        assert_eq!(inside(&b), first, "the box lost its key");
        let claude_json = b.exec(&["k", "--", "cat", &format!("{home}/.claude.json")]);
        assert!(
            claude_json.ok().stdout.contains(&tail),
            "the kept key's approval: {claude_json:?}"
        );
        // Said in words, without the value.
        let print = b.env.treebox(&["enter", "k", "--print"]);
        assert!(
            print
                .ok()
                .stderr
                .contains("kept the box's ANTHROPIC_API_KEY"),
            "{print:?}"
        );
        assert!(!print.stderr.contains(&first));

        // A shell with another key replaces it.
        let second = key(&b, "second");
        b.env
            .extra_env
            .push(("ANTHROPIC_API_KEY".into(), second.clone()));
        let doc = b.env.treebox(&["enter", "k", "--json"]).ok().json();
        assert_eq!(
            doc["keys"],
            serde_json::json!({"ANTHROPIC_API_KEY": "replaced"})
        );
        assert_eq!(inside(&b), second);
        // The same again: nothing to say.
        let doc = b.env.treebox(&["enter", "k", "--json"]).ok().json();
        assert_eq!(doc["keys"], serde_json::json!({}));

        // Set empty: cleared.
        b.env.extra_env.retain(|(k, _)| k != "ANTHROPIC_API_KEY");
        b.env
            .extra_env
            .push(("ANTHROPIC_API_KEY".into(), String::new()));
        let doc = b.env.treebox(&["enter", "k", "--json"]).ok().json();
        assert_eq!(
            doc["keys"],
            serde_json::json!({"ANTHROPIC_API_KEY": "replaced"})
        );
        assert_eq!(inside(&b), "");
    });
}
