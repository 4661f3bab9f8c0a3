//! Hostile boxes, include routes (issue 18, SPEC §8.1/§8.4): a box plants each
//! exec-shaped key of SPEC §8.1 in a file of its own and reaches it from config it can
//! write through every include form git expands — `~/`, `~<user>/`, `%(prefix)/`,
//! relative, `includeIf "gitdir:…"`, `includeIf "onbranch:…"`. First plain git is
//! shown to run what was planted (so the route is real); then every host-side command
//! runs and no marker may appear.
//!
//! One repository per context, the include rewritten between forms.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::env::{write_exec, TestEnv};

/// Enough `..` to climb from any directory of these tests to `/`.
const UP: &str = "../../../../../../../../../../../../../../../..";

/// The include forms: (tag, config key, value reaching the absolute path `evil`).
fn forms(evil: &Path) -> Vec<(&'static str, &'static str, String)> {
    let user = String::from_utf8(
        std::process::Command::new("id")
            .arg("-un")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let e = evil.display();
    vec![
        ("home", "include.path", format!("~/{UP}{e}")),
        ("user", "include.path", format!("~{}/{UP}{e}", user.trim())),
        ("prefix", "include.path", format!("%(prefix)/{UP}{e}")),
        ("relative", "include.path", format!("{UP}{e}")),
        ("gitdir", "includeIf.gitdir:/.path", e.to_string()),
        ("onbranch", "includeIf.onbranch:**.path", e.to_string()),
    ]
}

/// The exec-shaped keys of SPEC §8.1, each tripping `<root>/pwned.<tag>.<key>`.
fn evil_config(root: &Path, tag: &str, hooks: &Path) -> String {
    let m = |k: &str| root.join(format!("pwned.{tag}.{k}")).display().to_string();
    format!(
        "[core]\n\tfsmonitor = \"touch {}; false\"\n\tsshCommand = \"touch {}; false\"\n\
         \tpager = \"touch {}; cat\"\n\teditor = \"touch {}; false\"\n\thooksPath = {}\n\
         [remote \"origin\"]\n\tuploadpack = \"touch {}; git-upload-pack\"\n\
         [remote \"hort-base\"]\n\tuploadpack = \"touch {}; git-upload-pack\"\n\
         [credential]\n\thelper = \"!touch {}; false\"\n\
         [filter \"evil\"]\n\tclean = \"touch {}; cat\"\n\tsmudge = \"touch {}; cat\"\n\
         [diff]\n\texternal = \"touch {}; false\"\n",
        m("fsmonitor"),
        m("sshCommand"),
        m("pager"),
        m("editor"),
        hooks.display(),
        m("uploadpack"),
        m("uploadpack-hort-base"),
        m("credential.helper"),
        m("filter.clean"),
        m("filter.smudge"),
        m("diff.external"),
    )
}

fn fired(root: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pwned"))
        .collect();
    v.sort();
    v
}

fn clear(root: &Path) {
    for n in fired(root) {
        std::fs::remove_file(root.join(n)).unwrap();
    }
}

/// Plain git in `dir` (where the planted config applies) runs each planted key.
fn control(env: &TestEnv, dir: &Path, tag: &str) {
    let root = env.root();
    std::fs::write(dir.join("README.md"), "changed by the box\n").unwrap();
    for args in [
        &["status"][..],
        &["fetch", "-q", "origin"],
        &["diff"],
        &["ls-remote", "ssh://example.invalid/x"],
        &["hook", "run", "pre-commit"],
        &["commit", "-q", "--allow-empty"],
    ] {
        let _ = env.git_run(dir, args);
    }
    let mut c = env.command("git", dir);
    let mut child = c
        .args(["credential", "fill"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"protocol=https\nhost=example.invalid\n\n")
        .unwrap();
    let _ = child.wait();
    let got = fired(&root);
    // core.pager runs only on a terminal; treebox pins it whatever the route.
    for key in [
        "fsmonitor",
        "uploadpack",
        "diff.external",
        "filter.clean",
        "sshCommand",
        "credential.helper",
        "hook.pre-commit",
        "editor",
    ] {
        assert!(
            got.contains(&format!("pwned.{tag}.{key}")),
            "control: {tag} {key} did not fire under plain git: {got:?}"
        );
    }
    env.git(dir, &["checkout", "-q", "--", "README.md"]);
    clear(&root);
}

/// Writes the box's files: `evil.cfg` and a hooks dir, markers tagged `tag`.
fn write_payload(env: &TestEnv, bx: &Path, tag: &str) -> PathBuf {
    let root = env.root();
    let hooks = bx.join(".evil-hooks");
    for h in [
        "pre-commit",
        "post-checkout",
        "reference-transaction",
        "pre-push",
    ] {
        write_exec(
            &hooks.join(h),
            &format!(
                "#!/bin/sh\ntouch {}\ncat >/dev/null\n",
                root.join(format!("pwned.{tag}.hook.{h}")).display()
            ),
        );
    }
    let evil = bx.join(".evil.cfg");
    std::fs::write(&evil, evil_config(&root, tag, &hooks)).unwrap();
    evil
}

/// For each form: `prepare` (with nothing planted), plant it in the config `scope` names (run in `plant_in`), prove it
/// fires under plain git in `control_in`, run `host` (every host-side command), assert
/// nothing fired, remove the include.
fn each_form(
    env: &TestEnv,
    bx: &Path,
    plant_in: &Path,
    scope: &str,
    control_in: &Path,
    prepare: &dyn Fn(&str),
    host: &dyn Fn(&str),
) {
    let root = env.root();
    for (tag, key, value) in forms(&bx.join(".evil.cfg")) {
        prepare(tag);
        write_payload(env, bx, tag);
        env.git(plant_in, &["config", scope, key, &value]);
        control(env, control_in, tag);
        host(tag);
        let got = fired(&root);
        assert!(
            got.is_empty(),
            "{scope} {tag} ({key} = {value}): host-side commands ran planted config: {got:?}"
        );
        env.git(plant_in, &["config", scope, "--unset-all", key]);
    }
}

fn worktree_box(scope: &str) {
    let env = TestEnv::new();
    std::fs::write(
        env.repo.join(".git/info/attributes"),
        "* filter=evil diff=evil\n",
    )
    .unwrap();
    env.treebox(&["create", "hostile", "--no-launch"]).ok();
    let bx = env.box_path("hostile");
    // `--local` from the box writes the user's repository's shared config (a worktree
    // box in a container can); `--worktree` its own config.worktree.
    let control_in = if scope == "--local" { &env.repo } else { &bx };
    let host = |tag: &str| {
        let n = format!("n-{tag}");
        let u = format!("u-{tag}");
        env.treebox(&["list"]).ok();
        env.sandbox(&["ls", "--json"]).ok();
        env.treebox(&["create", &n, "--no-launch"]).ok();
        env.sandbox(&["up", &u, "--json"]).ok();
        env.treebox(&["enter", &u, "--print"]).ok();
        let _ = env.treebox(&["doctor"]);
        let _ = env.treebox(&["doctor", "--json"]);
        env.treebox(&["teardown", "--force", "--delete-branch", &n])
            .ok();
        env.sandbox(&["down", "-f", &u]).ok();
    };
    each_form(&env, &bx, &bx, scope, control_in, &|_| {}, &host);
    env.treebox(&["teardown", "--force", "hostile"]).ok();
    assert!(fired(&env.root()).is_empty(), "{:?}", fired(&env.root()));
}

#[test]
fn every_include_form_in_the_shared_config_never_runs_on_the_host() {
    worktree_box("--local");
}

#[test]
fn every_include_form_in_a_box_worktree_config_never_runs_on_the_host() {
    worktree_box("--worktree");
}

#[test]
fn every_include_form_in_a_clone_box_never_runs_on_the_host() {
    let env = TestEnv::new();
    env.treebox(&["create", "hostile", "--git", "clone", "--no-launch"])
        .ok();
    let bx = env.box_path("hostile");
    std::fs::write(bx.join(".git/info/attributes"), "* filter=evil diff=evil\n").unwrap();
    let bundle = env.root().join("h.bundle");
    let host = |tag: &str| {
        let n = format!("c-{tag}");
        env.treebox(&["list", "--json"]).ok();
        env.sandbox(&["ls"]).ok();
        env.treebox(&["create", &n, "--git", "clone", "--no-launch"])
            .ok();
        let _ = env.treebox(&["doctor", "--json"]);
        env.sandbox(&["bundle", "hostile", "-o", &bundle.to_string_lossy()])
            .ok();
        env.sandbox(&["fetch", "hostile"]).ok();
        env.treebox(&["teardown", "--force", &n]).ok();
    };
    // New work for every form, so bundle and fetch have something to carry.
    let prepare = |tag: &str| env.commit_file(&bx, &format!("{tag}.txt"), "work\n", tag);
    each_form(&env, &bx, &bx, "--local", &bx, &prepare, &host);
    env.git(
        &env.repo,
        &["rev-parse", "--verify", "refs/hort/hostile/incoming"],
    );
    env.treebox(&["teardown", "--force", "hostile"]).ok();
    assert!(fired(&env.root()).is_empty(), "{:?}", fired(&env.root()));
}
