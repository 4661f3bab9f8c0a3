//! Whole screens pinned by snapshot (insta): `--help` of every command of both
//! binaries, and the human screens where the whole screen is the contract (the `list`
//! table, a refusal with its hint, a failure with its `caused by:` line). Each snapshot
//! holds the exit code, stdout and stderr together, with the temp dir redacted to
//! `[ROOT]`.
//!
//! The `.snap` files live in `tests/it/snapshots/`. After an intended change, run
//! `INSTA_UPDATE=always cargo test --test it screens` (or `cargo insta review`) and
//! review the diff before committing it.

use clap::CommandFactory;

use crate::env::{Run, TestEnv, SANDBOX, TREEBOX};

/// Exit code, stdout and stderr as one text.
pub(crate) fn screen(r: &Run) -> String {
    format!(
        "exit: {}\n--- stdout\n{}\n--- stderr\n{}",
        r.code,
        r.stdout.trim_end(),
        r.stderr.trim_end()
    )
}

/// Snapshot settings for `env`: its temp dir shows as `[ROOT]`.
pub(crate) fn settings(env: &TestEnv) -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(true);
    let root = env.root().to_string_lossy().into_owned();
    s.add_filter(&regex_escape(&root), "[ROOT]");
    s
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$#&-~".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

/// Every command path of a binary (`["template", "list"]`), the binary itself first.
fn command_paths(cmd: &clap::Command) -> Vec<Vec<String>> {
    fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(path.clone());
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            walk(sub, p, out);
        }
    }
    let mut out = Vec::new();
    let mut cmd = cmd.clone().disable_help_subcommand(true);
    cmd.build();
    walk(&cmd, Vec::new(), &mut out);
    out
}

#[test]
fn help_of_every_command_is_pinned() {
    let env = TestEnv::new();
    let binaries = [
        ("git-treebox", TREEBOX, treebox::cli::TreeboxCli::command()),
        (
            "git-sandbox",
            SANDBOX,
            treebox::cli::sandbox::SandboxCli::command(),
        ),
    ];
    let settings = settings(&env);
    for (name, exe, cmd) in binaries {
        for path in command_paths(&cmd) {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push("--help");
            let r = Run::from_output(
                env.command(exe, &env.repo)
                    .args(&args)
                    .output()
                    .expect("run --help"),
            );
            let mut snap = vec![name.to_string()];
            snap.extend(path.iter().cloned());
            let snap = format!("help-{}", snap.join("-"));
            settings.bind(|| insta::assert_snapshot!(snap, screen(&r)));
        }
    }
}

#[test]
fn list_table_screen() {
    let env = TestEnv::new();
    let empty = env.treebox(&["list"]);
    env.treebox(&["create", "feat/login", "--no-launch"]).ok();
    env.treebox(&["create", "--no-launch"]).ok();
    env.treebox(&["create", "cloned", "--git", "clone", "--no-launch"])
        .ok();
    let table = env.treebox(&["list"]);
    let mut s = settings(&env);
    // The age of the last commit grows with the clock: the fixture's commits are
    // dated 2026-01-01.
    s.add_filter(r" +\d+[smhdw] ", " [AGE] ");
    s.bind(|| {
        insta::assert_snapshot!("list-empty", screen(&empty));
        insta::assert_snapshot!("list-table", screen(&table));
    });
}

#[test]
fn refusal_screens() {
    let env = TestEnv::new();
    env.treebox(&["create", "taken", "--no-launch"]).ok();
    let before = env.snapshot();
    let taken = env.treebox(&["create", "taken", "--no-launch"]);
    let missing = env.treebox(&["teardown", "nothing-like-it"]);
    assert_eq!(env.snapshot(), before, "refusals write nothing");
    env.commit_file(&env.box_path("taken"), "work.txt", "work\n", "work");
    let unasked = env.treebox(&["teardown", "taken"]);
    settings(&env).bind(|| {
        insta::assert_snapshot!("refusal-create-taken", screen(&taken));
        insta::assert_snapshot!("refusal-teardown-missing", screen(&missing));
        insta::assert_snapshot!("refusal-teardown-needs-confirmation", screen(&unasked));
    });
}

/// A failure with a cause: what failed on the `error:` line, the cause on its own
/// `caused by:` line, then the hint. JSON keeps the whole chain in `message`.
#[test]
fn cause_screen() {
    let env = TestEnv::new();
    // `$XDG_CONFIG_HOME/treebox` is a file, so the config file under it cannot be read
    // (ENOTDIR, even as root).
    std::fs::create_dir_all(env.config_dir()).unwrap();
    std::fs::write(env.config_dir().join("treebox"), "not a directory\n").unwrap();
    let before = env.snapshot();
    let r = env.treebox(&["create", "x", "--no-launch"]);
    let json = env.treebox(&["create", "x", "--json"]);
    assert_eq!(
        env.snapshot(),
        before,
        "a config it cannot read stops it before any write"
    );
    settings(&env).bind(|| insta::assert_snapshot!("cause-config-unreadable", screen(&r)));
    assert_eq!(json.code, 2, "{json:?}");
    let doc: serde_json::Value = serde_json::from_str(json.stderr.trim()).unwrap();
    let config = env.config_dir().join("treebox/config.json");
    assert_eq!(
        doc["error"]["message"],
        format!(
            "could not read {}: Not a directory (os error 20)",
            config.display()
        )
    );
    assert_eq!(doc["error"]["kind"], "invalid-config");
    assert_eq!(
        doc["error"]["hint"],
        format!("Fix it in {}.", config.display())
    );
}
