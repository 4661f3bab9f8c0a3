//! Bad input, end to end: malformed configuration, project files, records and names
//! are refused with exit 2 and a message naming the file (or the name), nothing is
//! written, and the rest of the tool keeps working. (The parsers themselves are
//! property-tested in `names`, `config`, `guard` and `template`.)

use crate::env::TestEnv;
use crate::proof::{assert_whole, record_path, row, rows};

/// Contents no config or record file may hold.
fn malformed() -> Vec<(&'static str, Vec<u8>)> {
    let mut huge = b"{\"setup\": [\"".to_vec();
    huge.resize(300 * 1024, b'x');
    huge.extend_from_slice(b"\"]}");
    vec![
        ("not JSON", b"{ this is not json".to_vec()),
        ("empty", Vec::new()),
        ("a list", b"[1, 2, 3]".to_vec()),
        ("a string", b"\"claude\"".to_vec()),
        ("null", b"null".to_vec()),
        ("not UTF-8", vec![b'{', 0xff, 0xfe, b'}']),
        ("trailing garbage", b"{} {}".to_vec()),
        ("over 256 KiB", huge),
    ]
}

/// The message may name the file; it may not carry raw control characters.
#[track_caller]
fn assert_terminal_safe(text: &str) {
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "raw control characters in {text:?}"
    );
}

#[test]
fn a_malformed_user_config_is_exit_2_naming_the_file() {
    let env = TestEnv::new();
    env.treebox(&["create", "kept", "--no-launch"]).ok();
    for (what, bytes) in malformed() {
        let file = env.write_config("{}");
        std::fs::write(&file, &bytes).unwrap();
        let before = env.snapshot();
        for args in [
            &["create", "x", "--no-launch"][..],
            &["enter", "kept", "--print"],
            &["list"],
            &["teardown", "--force", "kept"],
        ] {
            let r = env.treebox(args);
            assert_eq!(r.code, 2, "{what}: {args:?}\n{r:#?}");
            assert!(
                r.stderr.contains(&file.display().to_string()),
                "{what}: {args:?} does not name the file\n{r:#?}"
            );
            assert_terminal_safe(&r.stderr);
        }
        // In JSON mode the error is one JSON object on stderr.
        let r = env.treebox(&["create", "x", "--json"]);
        r.code(2);
        let doc: serde_json::Value = serde_json::from_str(r.stderr.trim())
            .unwrap_or_else(|e| panic!("{what}: stderr is not one JSON object ({e}): {r:#?}"));
        assert_eq!(doc["schemaVersion"], 1);
        assert!(
            doc["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&file.display().to_string()),
            "{doc}"
        );
        assert_eq!(env.snapshot(), before, "{what}: something was written");
    }
    // A directory where the file should be is refused the same way.
    let file = env.write_config("{}");
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let r = env.treebox(&["create", "x", "--no-launch"]);
    r.code(2);
    assert!(r.stderr.contains(&file.display().to_string()), "{r:#?}");
    std::fs::remove_dir(&file).unwrap();
    // With the file fixed, everything works again.
    env.treebox(&["create", "x", "--no-launch"]).ok();
    assert!(env.box_path("kept").exists());
}

#[test]
fn a_malformed_project_file_is_exit_2_naming_the_file() {
    let env = TestEnv::new();
    let file = env.repo.join(".treebox.json");
    let mut cases = malformed();
    cases.push(("git of the wrong type", br#"{"git": 1}"#.to_vec()));
    cases.push(("an unknown git mode", br#"{"git": "svn"}"#.to_vec()));
    cases.push(("a base that is no branch", br#"{"base": "-x"}"#.to_vec()));
    cases.push((
        "a base with a control char",
        b"{\"base\": \"a\\u001bb\"}".to_vec(),
    ));
    for (what, bytes) in cases {
        std::fs::write(&file, &bytes).unwrap();
        let before = env.snapshot();
        let r = env.treebox(&["create", "x", "--no-launch"]);
        assert_eq!(r.code, 2, "{what}\n{r:#?}");
        assert!(
            r.stderr.contains(&file.display().to_string()),
            "{what}: the file is not named\n{r:#?}"
        );
        assert_terminal_safe(&r.stderr);
        assert_eq!(env.snapshot(), before, "{what}: something was written");
    }
    // Keys a project may not set: a warning, never an effect; hostile key names are
    // shown escaped.
    std::fs::write(
        &file,
        "{\"setup\": [\"touch pwned\"], \"isolation\": \"host\", \"a\\u001b[2Jb\": 1}",
    )
    .unwrap();
    let r = env.treebox(&["create", "y", "--no-launch"]);
    r.ok();
    assert!(
        r.stderr.contains("setup") && r.stderr.contains("ignored"),
        "{r:#?}"
    );
    assert_terminal_safe(&r.stderr);
    assert!(!env.box_path("y").join("pwned").exists());
    // A project file that is a symlink to some host file is not followed.
    let secret = env.root().join("host-config.json");
    std::fs::write(&secret, r#"{"base": "nope"}"#).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&secret, &file).unwrap();
    let r = env.treebox(&["create", "z", "--no-launch"]);
    r.ok();
    assert!(r.stderr.contains("symlink"), "{r:#?}");
}

#[test]
fn a_malformed_record_fails_enter_but_not_list_or_teardown() {
    let env = TestEnv::new();
    env.treebox(&["create", "good", "--no-launch"]).ok();
    for (what, bytes) in malformed() {
        env.treebox(&["create", "bad", "--no-launch"]).ok();
        let rec = record_path(&env, "bad");
        assert!(rec.is_file(), "{}", rec.display());
        std::fs::write(&rec, &bytes).unwrap();
        // enter: exit 2 naming the record.
        let r = env.treebox(&["enter", "bad", "--print"]);
        assert_eq!(r.code, 2, "{what}\n{r:#?}");
        assert!(
            r.stderr.contains(&rec.display().to_string()),
            "{what}: the record is not named\n{r:#?}"
        );
        assert_terminal_safe(&r.stderr);
        // create over it: refused, the record is left as it was.
        let r = env.treebox(&["create", "bad", "--no-launch"]);
        assert!(r.code == 2 || r.code == 5, "{what}\n{r:#?}");
        assert_eq!(std::fs::read(&rec).unwrap(), bytes);
        // list: still works, and says what is wrong.
        let b = row(&env, "bad").unwrap();
        assert_eq!(b["state"], "bad-record", "{what}: {b}");
        assert_eq!(row(&env, "good").unwrap()["state"], "ok");
        let table = env.treebox(&["ls"]).ok().stdout.clone();
        assert!(table.contains("bad-record"), "{table}");
        env.sandbox(&["ls"]).ok();
        // The other box is unaffected.
        env.treebox(&["enter", "good", "--print"]).ok();
        // teardown --force still removes it, through git's registration.
        env.treebox(&["teardown", "--force", "--delete-branch", "bad"])
            .ok();
        assert!(!env.box_path("bad").exists(), "{what}");
        assert!(!rec.exists(), "{what}");
        let _ = env.git_run(&env.repo, &["branch", "-D", "bad"]);
    }
    assert_eq!(rows(&env).len(), 1);
    assert_whole(&env, "good", "good", "worktree");
}

#[test]
fn hostile_names_are_refused_with_a_safe_message_and_nothing_written() {
    let env = TestEnv::new();
    for bad in [
        // Accepted once, then refused late with a leaf the user never typed.
        "a-/b",
        "fix-/login",
        "a\u{1b}[2Jb",
        "x\u{9b}31m",
        "a\rb",
        "a/../../etc",
        "feat/..x",
        "feat/.x",
        "/etc/passwd",
        "a b",
        "a~1",
        "a^b",
        "a:b",
        "a?b",
        "a*b",
        "a[b",
        "a\\b",
        "x.lock",
        "x/",
        "é",
        "\u{202e}gnp.exe",
    ] {
        let before = env.snapshot();
        let r = env.treebox(&["create", bad, "--no-launch"]);
        assert_eq!(r.code, 2, "{bad:?}\n{r:#?}");
        assert!(r.stderr.contains("invalid box name"), "{bad:?}\n{r:#?}");
        assert_terminal_safe(&r.stderr);
        assert_eq!(env.snapshot(), before, "{bad:?} wrote something");
        // The same through --checkout (git's rules, no more) and --name.
        for args in [
            &["create", "--checkout", bad, "--no-launch"][..],
            &["create", "--checkout", "main", "--name", bad, "--no-launch"],
            &["enter", bad, "--print"],
            &["teardown", "--force", bad],
        ] {
            let r = env.treebox(args);
            assert!([2, 3].contains(&r.code), "{bad:?}: {args:?}\n{r:#?}");
            assert_terminal_safe(&r.stderr);
            assert_eq!(env.snapshot(), before, "{bad:?}: {args:?} wrote something");
        }
    }
}

/// A template name that could escape the template dir is refused whatever the runner
/// (on the host it is not used, but bad input is bad anywhere): exit 2, nothing written.
#[test]
fn a_bad_template_name_is_refused_on_the_host_too() {
    let env = TestEnv::new();
    for bad in ["../x", "/abs", "Upper", ""] {
        let before = env.snapshot();
        let r = env.treebox(&["create", "t", "--template", bad, "--no-launch"]);
        r.code(2);
        assert!(r.stderr.contains("template"), "{bad:?}: {r:?}");
        assert_eq!(env.snapshot(), before, "{bad:?} wrote something");
    }
}
