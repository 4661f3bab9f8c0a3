//! Issue 38, points 2–4: what a box plants in its own work tree never hangs, slows or
//! bloats a host command that reads its status. Planted from inside a real container
//! as the agent (docker and podman), then every command that reads a box's work tree
//! is run from the host, measured: it returns within three times the per-box read
//! deadline, in at most twice its baseline's peak memory plus 256 MiB, calls the
//! hostile box's `dirty` unknown (or, for a file it need not read, changed), and
//! answers for the other box as before.
//!
//! The payloads: a FIFO as `.gitignore` (the root's, a tracked directory's), as
//! `.gitattributes`, and named by the box's `core.excludesFile`; an index entry with
//! zeroed stat data over a 4 GiB sparse tracked file, bare and with a `text`
//! attribute; 500 sparse 99 MiB `.gitignore` files in 500 directories.

use std::path::Path;
use std::time::Duration;

use crate::container::{each_engine, Boxed};
use crate::env::{named, TestEnv, SANDBOX, TREEBOX};
use crate::hostile_sizes::{measured, Measured};

/// The per-box read deadline (`treebox::boxes::deadline::READ_DEADLINE`) times three.
const BOUND: Duration = Duration::from_secs(12);

/// Undo the previous plant (its FIFOs first: the box's own git would block on them).
const RESET: &str = "rm -f .gitignore src/.gitignore .gitattributes fifo big; \
    git config --unset core.excludesFile; git reset -q --hard; git clean -qfdx";

/// Each plant: its name, the script the agent runs, and what the host must say of the
/// box's `dirty` (`None`: unknown; `Some(true)`: changed, known without reading what
/// was planted).
fn plants() -> Vec<(&'static str, String, Option<bool>)> {
    vec![
        ("fifo .gitignore", "mkfifo .gitignore".into(), None),
        ("fifo src/.gitignore", "mkfifo src/.gitignore".into(), None),
        ("fifo .gitattributes", "mkfifo .gitattributes".into(), None),
        (
            "core.excludesFile a fifo",
            "mkfifo fifo && git config core.excludesFile \"$PWD/fifo\" && echo u > u.txt".into(),
            // Answered, the FIFO never opened: the box's untracked file is seen.
            Some(true),
        ),
        ("zeroed index entry, 4 GiB file", zeroed(""), Some(true)),
        (
            "zeroed index entry, 4 GiB file, text attribute",
            zeroed("printf '* text\\n' > .gitattributes && "),
            Some(true),
        ),
        (
            "500 sparse 99 MiB .gitignore files",
            "for i in $(seq 500); do mkdir -p amp/d$i && echo x > amp/d$i/f; done && \
             git add amp && git commit -qm amp && \
             for i in $(seq 500); do truncate -s 99M amp/d$i/.gitignore; done"
                .into(),
            None,
        ),
    ]
}

/// A tracked `big` whose index entry has no stat data (`--cacheinfo` writes it so),
/// then made 4 GiB, sparse.
fn zeroed(first: &str) -> String {
    format!(
        "{first}echo x > big && git add big && git commit --allow-empty -qm big && \
         git update-index --cacheinfo 100644,$(git rev-parse HEAD:big),big && \
         truncate -s 4G big"
    )
}

/// The commands that read a box's work tree, as `(bin, args)`; `rm` and `down` are
/// run apart (they refuse).
fn readers() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        (TREEBOX, vec!["list", "--json"]),
        (TREEBOX, vec!["list", "--dirty", "--json"]),
        (SANDBOX, vec!["ls", "--json"]),
        (TREEBOX, vec!["watch", "--once", "--json"]),
    ]
}

#[track_caller]
fn within(what: &str, m: &Measured, baseline_kib: u64) {
    eprintln!("{what}: {:?}, {} KiB", m.took, m.peak_kib);
    assert!(
        m.took < BOUND,
        "too slow: {what}: {:?}\n{:?}",
        m.took,
        m.run
    );
    assert!(
        m.peak_kib <= 2 * baseline_kib + (256 << 10),
        "too hungry: {what}: {} KiB (baseline {baseline_kib} KiB)",
        m.peak_kib
    );
}

fn dirty_of(doc: &serde_json::Value, name: &str) -> Option<bool> {
    named(doc, "boxes", name)["dirty"].as_bool()
}

#[test]
fn planted_ignore_attribute_and_sparse_files_never_hang_a_status_read() {
    each_engine(|b: Boxed| {
        let env = &b.env;
        for leaf in ["good", "evil"] {
            env.treebox(&["create", leaf, "--no-launch"]).ok();
        }
        // A tracked directory, and the other box's uncommitted work.
        b.commit_inside(
            "evil",
            "mkdir -p src && echo s > src/s && git add src && git commit -qm src",
        );
        b.exec(&["good", "--", "sh", "-c", "echo w > work.txt"])
            .ok();
        let baseline: Vec<Measured> = readers()
            .iter()
            .map(|(bin, args)| measured(env, bin, args))
            .collect();
        for ((_, args), m) in readers().iter().zip(&baseline) {
            eprintln!(
                "{}: baseline: {}: {:?}, {} KiB",
                b.engine,
                args.join(" "),
                m.took,
                m.peak_kib
            );
            m.run.ok();
        }
        let listed = baseline[1].run.json();
        assert_eq!(dirty_of(&listed, "good"), Some(true), "{listed}");
        assert_eq!(dirty_of(&listed, "evil"), Some(false), "{listed}");
        for (name, script, expect) in plants() {
            let what = |cmd: &str| format!("{}: {name}: {cmd}", b.engine);
            b.exec(&["evil", "--", "sh", "-c", &format!("{RESET}; {script}")])
                .ok();
            for ((bin, args), base) in readers().iter().zip(&baseline) {
                let m = measured(env, bin, args);
                within(&what(&args.join(" ")), &m, base.peak_kib);
                m.run.ok();
                let doc = m.run.json();
                if args.contains(&"--dirty") || args[0] == "ls" {
                    assert_eq!(dirty_of(&doc, "good"), Some(true), "{}", what("good"));
                    assert_eq!(dirty_of(&doc, "evil"), expect, "{}", what("evil"));
                }
                assert!(
                    doc.to_string().contains("\"good\""),
                    "{}: good not listed",
                    what(args[0])
                );
            }
            // `diff` compares the work tree only when its status reads within the
            // bounds and names no file libgit2 would open or hash whole (a FIFO
            // excludes file is never opened: the handle has no config of the box's).
            let m = measured(env, TREEBOX, &["diff", "evil", "--json"]);
            within(&what("diff --json"), &m, baseline[0].peak_kib);
            // Answered from the status's bounds, not from the comparison's deadline.
            assert!(
                m.took < Duration::from_secs(5),
                "{}: {:?}",
                what("diff"),
                m.took
            );
            let doc = m.run.ok().json();
            let read = name.starts_with("core.excludesFile");
            assert_eq!(doc["worktreeRead"], read, "{}: {doc}", what("diff"));
            assert_eq!(doc["uncommitted"], read, "{}: {doc}", what("diff"));
            refusals(&b, &what, &baseline[0]);
        }
        for leaf in ["good", "evil"] {
            env.sandbox(&["down", "-f", leaf]).ok();
        }
    });
}

/// `rm` and `down` (no `-f`, off a terminal) refuse the hostile box, `prune -f --idle`
/// leaves it: each in time, and nothing of it removed.
fn refusals(b: &Boxed, what: &dyn Fn(&str) -> String, base: &Measured) {
    let env: &TestEnv = &b.env;
    let path = b.record("evil")["path"].as_str().unwrap().to_string();
    for (bin, args) in [
        (TREEBOX, vec!["rm", "evil"]),
        (SANDBOX, vec!["down", "evil"]),
        (SANDBOX, vec!["prune", "-f", "--idle", "0s"]),
    ] {
        let m = measured(env, bin, &args);
        within(&what(&args.join(" ")), &m, base.peak_kib);
        if args[0] != "prune" {
            m.run.code(5);
        }
        assert!(Path::new(&path).is_dir(), "{}: evil removed", what(args[0]));
        assert!(
            env.box_path("good").exists() || b.record("good")["path"].is_string(),
            "{}: good removed",
            what(args[0])
        );
    }
}
