//! Issue 18, point 3, for clone boxes: a clone whose own `.git` holds a FIFO, a symlink
//! to a device or junk where git keeps a file is broken — listed so, refused by the
//! commands on it — and every other box, `list` and `prune` keep working.

use crate::env::{TestEnv, SANDBOX, TREEBOX};
use crate::hostile_boxes::{plant, state_of, timed};

/// Boxes named after the file of their `.git` that gets the payload.
const PLANTED: [(&str, &str); 4] = [
    ("h", "HEAD"),
    ("c", "config"),
    ("i", "index"),
    ("p", "packed-refs"),
];

/// `kind` planted in four clone boxes, one file each: each is broken and refused by
/// name; other boxes (worktree and clone) are created, `list`, `ls`, `doctor` and
/// `prune` work, without hanging; `down -f` removes the hostile boxes.
fn one_clone_blocks_none(kind: &str) {
    let env = TestEnv::new();
    for (name, file) in PLANTED {
        env.treebox(&["create", name, "--git", "clone", "--no-launch"])
            .ok();
        plant(&env, &env.box_path(name).join(".git").join(file), kind);
    }
    timed(&env, TREEBOX, &["create", "fresh", "--no-launch"]).ok();
    assert!(env.box_path("fresh").join("README.md").is_file());
    let args = ["create", "cloned", "--git", "clone", "--no-launch"];
    timed(&env, TREEBOX, &args).ok();
    assert!(env.box_path("cloned").join("README.md").is_file());
    timed(&env, SANDBOX, &["up", "--json", "--git", "clone", "upped"]).ok();
    assert!(env.box_path("upped").join("README.md").is_file());
    let list = timed(&env, TREEBOX, &["list", "--json"]);
    let ls = timed(&env, SANDBOX, &["ls", "--json"]);
    timed(&env, TREEBOX, &["list"]).ok();
    for (name, _) in PLANTED {
        let what = format!("{kind} in {name}");
        assert_eq!(state_of(&list.ok().json(), name), "broken", "list, {what}");
        assert_eq!(state_of(&ls.ok().json(), name), "broken", "ls, {what}");
    }
    for name in ["fresh", "cloned", "upped"] {
        assert_eq!(state_of(&list.json(), name), "ok", "{name}");
    }
    let doctor = timed(&env, TREEBOX, &["doctor", "--json"]).json();
    let check = crate::env::named(&doctor, "checks", "boxes");
    assert_eq!(check["status"], "advisory", "{check}");
    assert!(
        check["summary"].as_str().unwrap().contains("c, h, i, p"),
        "{check}"
    );
    // Commands naming a broken box refuse it (5), writing nothing.
    for (name, _) in PLANTED {
        let before = env.snapshot();
        for (bin, args) in [
            (TREEBOX, vec!["enter", name]),
            (SANDBOX, vec!["run", name, "--", "true"]),
            (SANDBOX, vec!["attach", name]),
        ] {
            let r = timed(&env, bin, &args);
            r.code(5);
            assert!(r.stderr.contains("git would hang"), "{args:?}: {r:?}");
            let hint = format!("teardown --force {name}");
            assert!(r.stderr.contains(&hint), "{args:?}: {r:?}");
        }
        assert_eq!(
            env.snapshot(),
            before,
            "{kind} in {name}: something was written"
        );
    }
    assert!(
        !env.harness_log().contains("box=h"),
        "{}",
        env.harness_log()
    );
    timed(&env, SANDBOX, &["prune", "-f"]).ok();
    timed(&env, TREEBOX, &["list"]).ok();
    for (name, _) in PLANTED {
        timed(&env, SANDBOX, &["down", "-f", name]).ok();
        assert!(!env.box_path(name).exists(), "{name}");
    }
    timed(
        &env,
        TREEBOX,
        &["create", "after", "--git", "clone", "--no-launch"],
    )
    .ok();
    let list = timed(&env, TREEBOX, &["list", "--json"]).json();
    assert_eq!(state_of(&list, "after"), "ok");
}

#[test]
fn a_fifo_in_one_clone_blocks_no_other_box() {
    one_clone_blocks_none("fifo");
}

#[test]
fn a_symlink_to_dev_zero_in_one_clone_blocks_no_other_box() {
    one_clone_blocks_none("zero");
}

#[test]
fn junk_in_one_clone_blocks_no_other_box() {
    one_clone_blocks_none("junk");
}

/// An include in a clone's own config that names a FIFO (directly, and through an
/// included regular file) would block libgit2's open: the box is broken, the rest go on.
#[test]
fn an_include_naming_a_fifo_in_one_clone_blocks_no_other_box() {
    let env = TestEnv::new();
    for name in ["direct", "nested"] {
        env.treebox(&["create", name, "--git", "clone", "--no-launch"])
            .ok();
    }
    let fifo = env.box_path("direct").join("hang");
    plant(&env, &fifo, "fifo");
    let config = |name: &str| env.box_path(name).join(".git").join("config");
    let append = |name: &str, text: String| {
        let mut c = std::fs::read_to_string(config(name)).unwrap();
        c.push_str(&text);
        std::fs::write(config(name), c).unwrap();
    };
    append(
        "direct",
        format!("[include]\n\tpath = {}\n", fifo.display()),
    );
    let middle = env.box_path("nested").join("middle.cfg");
    std::fs::write(
        &middle,
        format!(
            "[includeIf \"onbranch:*\"]\n\tpath = \"{}\"\n",
            fifo.display()
        ),
    )
    .unwrap();
    append("nested", "[include]\n\tpath = ../middle.cfg\n".to_string());
    timed(&env, TREEBOX, &["create", "fresh", "--no-launch"]).ok();
    let list = timed(&env, TREEBOX, &["list", "--json"]).ok().json();
    let ls = timed(&env, SANDBOX, &["ls", "--json"]).ok().json();
    for name in ["direct", "nested"] {
        assert_eq!(state_of(&list, name), "broken", "list {name}");
        assert_eq!(state_of(&ls, name), "broken", "ls {name}");
        let before = env.snapshot();
        timed(&env, TREEBOX, &["enter", name]).code(5);
        assert_eq!(env.snapshot(), before, "{name}: something was written");
    }
    assert_eq!(state_of(&list, "fresh"), "ok");
    for name in ["direct", "nested"] {
        timed(&env, SANDBOX, &["down", "-f", name]).ok();
        assert!(!env.box_path(name).exists(), "{name}");
    }
}
