//! A machine whose treebox lies in its listing (issue 41: every document from a
//! machine is size-capped, parsed as hostile and shown sanitised): names and fields
//! carrying terminal escapes, a flood of boxes, a document over the cap, and entries
//! that are not boxes at all.

use serde_json::json;

use super::{machines_config, Sshd};
use crate::env::{write_exec, TestEnv};

/// A fake `git-treebox` there answering every request with `doc` (a shell word).
fn liar(sshd: &Sshd, name: &str, doc: &str) -> String {
    let d = sshd.bin_dir(name);
    write_exec(
        &d.join("git-treebox"),
        &format!(
            "#!/bin/sh\ncat >/dev/null\ndoc={doc}\nprintf 'treebox-remote 1 %s\\n%s\\n' \"${{#doc}}\" \"$doc\"\n"
        ),
    );
    d.to_string_lossy().into_owned()
}

#[test]
fn a_machine_that_lies_in_its_listing_reaches_no_terminal() {
    let mut env = TestEnv::new();
    let Some(sshd) = Sshd::start(&env) else {
        return;
    };
    sshd.for_treebox(&mut env);
    let escapes = liar(
        &sshd,
        "escapes",
        r#"'{"schemaVersion":1,"boxes":[{"name":"evil\u001b]0;owned\u0007","branch":"b\u001b[2J","path":"/p\u009b31m","status":"idle\u001b[5m","runner":"host"},{"name":7},"junk",{"name":"plain","session":{"not":"text"}}]}'"#,
    );
    // Past the 4 MiB cap: refused whole, one warning.
    let big = sshd.bin_dir("big");
    write_exec(
        &big.join("git-treebox"),
        "#!/bin/sh\ncat >/dev/null\nn=5000000\nprintf 'treebox-remote 1 %s\\n{\"boxes\":[\"' $((n + 14))\nhead -c $((n - 2)) /dev/zero | tr '\\0' x\nprintf '\"]}\\n'\n",
    );
    let machine =
        |path: &str| json!({"ssh": "big", "sshCommand": sshd.ssh_command(), "path": path});
    machines_config(
        &env,
        json!({"escapes": machine(&escapes), "flood": machine(&big.to_string_lossy())}),
    );
    let r = env.treebox(&["list"]);
    r.ok();
    let shown = format!("{}{}", r.stdout, r.stderr);
    assert!(
        !shown.chars().any(|c| c.is_control() && c != '\n'),
        "a control character reached the terminal: {shown:?}"
    );
    assert!(shown.contains("evil"), "{shown}");
    assert!(shown.contains("plain"), "{shown}");
    assert!(
        r.stderr.contains("`flood`") && r.stderr.contains("more than"),
        "{r:?}"
    );
    // In JSON the names are the machine's, escaped as JSON escapes them; what is not
    // a box is left out.
    let doc = env.treebox(&["list", "--json"]).ok().json();
    let names: Vec<&str> = doc["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["name"].as_str())
        .collect();
    assert_eq!(names, ["evil\u{1b}]0;owned\u{7}", "plain"], "{doc}");
    // ls too.
    let r = env.sandbox(&["ls"]);
    let shown = format!("{}{}", r.stdout, r.stderr);
    assert!(
        !shown.chars().any(|c| c.is_control() && c != '\n'),
        "{shown:?}"
    );
}
