//! Issue 12, point 2: the host treats a sandboxed worktree's bare clone (and its
//! registration `<bare>/worktrees/<leaf>/`) as box-written, as it treats a clone's
//! `.git`: nothing planted there hangs a host command, runs on the host, or makes
//! `fetch` / `bundle` read an object store treebox did not give the box.
//!
//! The plants are made from the host, as the agent could make them from inside: the
//! worktree and the bare clone are mounted read-write (SPEC §7). Docker only: every
//! read these tests prove happens on the host, after the engine made the box, and the
//! engine only decides the mounts — which `sandboxed.rs` checks against both engines.
//! Running podman too would double the wall time (about 20 boxes a test) and cover no
//! other host code.

use std::path::{Path, PathBuf};

use crate::container::{on_docker, Boxed};
use crate::env::{write_exec, TestEnv, SANDBOX, TREEBOX};
use crate::hostile_boxes::{plant, state_of, timed};

fn bare_of(b: &Boxed, leaf: &str) -> PathBuf {
    PathBuf::from(b.record(leaf)["bareClone"].as_str().expect("bareClone"))
}

fn registration_of(b: &Boxed, leaf: &str) -> PathBuf {
    bare_of(b, leaf).join("worktrees").join(leaf)
}

/// A sandboxed worktree `leaf` (the engine is the test's default runner).
fn sandboxed(b: &Boxed, leaf: &str) {
    b.create_here(leaf);
    assert!(bare_of(b, leaf).is_dir(), "{leaf}: no bare clone");
}

/// Files named `pwned*` under the test root: what a planted command leaves.
fn markers(root: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pwned"))
        .collect();
    out.sort();
    out
}

fn append(path: &Path, text: &str) {
    let mut c = std::fs::read_to_string(path).unwrap_or_default();
    c.push_str(text);
    std::fs::write(path, c).unwrap();
}

/// The `boxes` check of `doctor --json`.
fn doctor_boxes(env: &TestEnv) -> serde_json::Value {
    let doctor = timed(env, TREEBOX, &["doctor", "--json"]).json();
    crate::env::named(&doctor, "checks", "boxes")
}

/// Nothing of `leaf`'s bookkeeping, no bundle, no incoming ref: what a refused
/// `fetch` / `bundle` must leave.
#[track_caller]
fn no_bundle(env: &TestEnv, leaf: &str) {
    let scratch = crate::proof::repo_state(env).join("boxes").join(leaf);
    for name in [format!("{leaf}.bundle"), format!("{leaf}.fetch.bundle")] {
        assert!(!scratch.join(&name).exists(), "{name} was written");
    }
    let incoming = format!("refs/hort/{leaf}/incoming");
    let r = env.git_run(&env.repo, &["rev-parse", "--verify", "-q", &incoming]);
    assert_ne!(r.code, 0, "{incoming} exists");
}

/// `down -f` removes a sandboxed worktree: its checkout, bare clone and pin.
#[track_caller]
fn forced_down_removes(b: &Boxed, leaf: &str) {
    let env = &b.env;
    let bare = bare_of(b, leaf);
    timed(env, SANDBOX, &["down", "-f", leaf]).ok();
    assert!(!env.box_path(leaf).exists(), "{leaf}: checkout left");
    assert!(!bare.exists(), "{leaf}: bare clone left");
    // The pin goes; an incoming ref stays (fetched work is the user's now).
    let refs = env.git(&env.repo, &["for-each-ref", "refs/hort"]);
    assert!(!refs.contains(&format!("refs/hort/{leaf}/base")), "{refs}");
}

/// A healthy sandboxed worktree with a commit of its own still lists, enters, bundles
/// and fetches back.
#[track_caller]
fn still_works(b: &Boxed, leaf: &str) {
    let env = &b.env;
    let list = timed(env, TREEBOX, &["list", "--json"]).ok().json();
    assert_ne!(state_of(&list, leaf), "broken", "{leaf}");
    timed(env, TREEBOX, &["enter", leaf, "--print"]).ok();
    let out = env.root().join(format!("{leaf}.bundle"));
    timed(
        env,
        SANDBOX,
        &["bundle", leaf, "-o", &out.to_string_lossy()],
    )
    .ok();
    env.git(
        &env.repo,
        &["bundle", "verify", "-q", &out.to_string_lossy()],
    );
    let r = timed(env, SANDBOX, &["fetch", leaf]);
    assert_eq!(r.ok().stdout.trim(), format!("refs/hort/{leaf}/incoming"));
}

/// Where a plant goes: the bare clone, or the box's registration in it.
#[derive(Clone, Copy)]
enum In {
    Bare,
    Registration,
}

/// Box, place, file, what: a FIFO, a symlink to `/dev/zero`, junk, a symlink out of
/// the box's git data (to the user's file of that name), a `commondir` naming the
/// user's git dir, an `include.path` naming a FIFO.
const PLANTS: [(&str, In, &str, &str); 15] = [
    ("bc", In::Bare, "config", "fifo"),
    ("bh", In::Bare, "HEAD", "fifo"),
    ("bp", In::Bare, "packed-refs", "fifo"),
    ("bz", In::Bare, "config", "zero"),
    ("bj", In::Bare, "HEAD", "junk"),
    ("bl", In::Bare, "config", "link-out"),
    ("bi", In::Bare, "config", "include"),
    ("bw", In::Bare, "config.worktree", "include"),
    ("rh", In::Registration, "HEAD", "fifo"),
    ("ri", In::Registration, "index", "fifo"),
    ("rz", In::Registration, "HEAD", "zero"),
    ("rj", In::Registration, "HEAD", "junk"),
    ("rl", In::Registration, "HEAD", "link-out"),
    ("rc", In::Registration, "commondir", "users-git"),
    ("rw", In::Registration, "config.worktree", "include"),
];

/// Hostile files in one sandboxed worktree's bare clone or registration make that box
/// `broken` in `list`, `ls` and `doctor`; `enter --print`, `fetch`, `bundle` and `down`
/// naming it are refused (exit 5) writing nothing, without hanging; `down -f` removes
/// it; every other box — a healthy sandboxed worktree, a host worktree, a new one —
/// keeps working.
#[test]
fn hostile_files_in_a_sandboxed_worktrees_git_data_break_that_box_alone() {
    on_docker(|b| {
        let env = &b.env;
        let user_git = env.repo.join(".git");
        env.treebox(&["create", "plain", "--isolation", "host", "--no-launch"])
            .ok();
        sandboxed(&b, "fine");
        // The agent's commit, made as the agent (the checkout is its own).
        b.commit_inside(
            "fine",
            "echo work > w.txt && git add w.txt && git commit -qm 'the work of fine'",
        );
        for (name, at, file, kind) in PLANTS {
            sandboxed(&b, name);
            let dir = match at {
                In::Bare => bare_of(&b, name),
                In::Registration => registration_of(&b, name),
            };
            let path = dir.join(file);
            match kind {
                "link-out" => {
                    std::fs::remove_file(&path).unwrap();
                    std::os::unix::fs::symlink(user_git.join(file), &path).unwrap();
                }
                "users-git" => std::fs::write(&path, format!("{}\n", user_git.display())).unwrap(),
                "include" => {
                    let fifo = env.root().join(format!("hang-{name}"));
                    plant(env, &fifo, "fifo");
                    append(&path, &format!("[include]\n\tpath = {}\n", fifo.display()));
                }
                _ => plant(env, &path, kind),
            }
        }
        let names: Vec<&str> = PLANTS.iter().map(|p| p.0).collect();

        let list = timed(env, TREEBOX, &["list", "--json"]).ok().json();
        let ls = timed(env, SANDBOX, &["ls", "--json"]).ok().json();
        timed(env, TREEBOX, &["list"]).ok();
        timed(env, SANDBOX, &["ls"]).ok();
        for name in &names {
            assert_eq!(state_of(&list, name), "broken", "list {name}");
            assert_eq!(state_of(&ls, name), "broken", "ls {name}");
        }
        for name in ["plain", "fine"] {
            assert_ne!(state_of(&list, name), "broken", "{name}");
        }
        let check = doctor_boxes(env);
        assert_eq!(check["status"], "advisory", "{check}");
        let mut sorted = names.clone();
        sorted.sort();
        let summary = check["summary"].as_str().unwrap();
        assert!(summary.contains(&sorted.join(", ")), "{check}");

        // Every command naming a broken box refuses it and writes nothing: `enter`
        // and `down` (which cannot read what it would lose) with 5; `fetch` and
        // `bundle` with 1 (`bundle`: the box cannot be read), or 5 (`foreign-objects`)
        // where a `commondir` leads elsewhere.
        for (name, _, _, kind) in PLANTS {
            let before = env.snapshot();
            let bare = bare_of(&b, name);
            let r = timed(env, TREEBOX, &["enter", name, "--print"]);
            r.code(5);
            assert!(r.stderr.contains("git would hang"), "{r:?}");
            // The hint names the box, not the directory its git data is in.
            assert!(
                r.stderr.contains(&format!("teardown --force {name}`")),
                "{r:?}"
            );
            assert!(r.stdout.is_empty(), "{r:?}");
            let r = timed(env, SANDBOX, &["down", name]);
            r.code(5);
            assert!(r.stderr.contains(&format!("down -f {name}")), "{r:?}");
            for args in [
                vec!["fetch", name, "--json"],
                vec!["bundle", name, "--json"],
            ] {
                let r = timed(env, SANDBOX, &args);
                let doc: serde_json::Value = serde_json::from_str(&r.stderr)
                    .unwrap_or_else(|e| panic!("{args:?}: {e}: {r:?}"));
                let (code, kind) = if kind == "users-git" {
                    (5, "foreign-objects")
                } else {
                    // Refused as `enter` and `run` refuse a broken box.
                    (5, "blocking-registration")
                };
                assert_eq!(
                    (r.code, doc["error"]["kind"].as_str()),
                    (code, Some(kind)),
                    "{args:?}: {r:?}"
                );
                assert!(r.stdout.is_empty(), "{r:?}");
            }
            assert_eq!(env.snapshot(), before, "{name}: something was written");
            no_bundle(env, name);
            assert!(env.box_path(name).is_dir(), "{name}: removed unasked");
            assert!(bare.is_dir(), "{name}: bare clone removed unasked");
        }
        // No agent was launched in any box (doctor asking the host's CLI its
        // `--version` runs it outside every box: `box=` empty).
        let log = env.harness_log();
        assert!(
            !log.lines().any(|l| l.starts_with("box=") && l != "box="),
            "{log}"
        );

        // Other boxes keep working, and a new one is made whole.
        still_works(&b, "fine");
        sandboxed(&b, "after");
        timed(env, TREEBOX, &["enter", "after", "--print"]).ok();
        env.git(&env.box_path("plain"), &["status"]);
        timed(env, SANDBOX, &["prune", "-f"]).ok();
        for name in &names {
            forced_down_removes(&b, name);
        }
        let list = timed(env, TREEBOX, &["list", "--json"]).ok().json();
        for name in ["plain", "fine", "after"] {
            assert_ne!(state_of(&list, name), "broken", "{name}");
        }
        crate::proof::fsck(env);
    });
}

/// Hooks a host git run in the bare clone (or its worktree) could fire.
const HOOKS: [&str; 14] = [
    "pre-commit",
    "post-commit",
    "post-checkout",
    "post-merge",
    "post-rewrite",
    "pre-push",
    "pre-receive",
    "update",
    "post-receive",
    "post-update",
    "reference-transaction",
    "pre-auto-gc",
    "post-index-change",
    "fsmonitor-watchman",
];

/// Exec-shaped keys, each naming the marker script with its own tag.
fn exec_keys(m: &Path, hooks: &Path) -> Vec<(&'static str, String)> {
    let m = m.display();
    vec![
        ("core.fsmonitor", format!("{m} fsmonitor")),
        ("core.hooksPath", hooks.display().to_string()),
        ("core.pager", format!("{m} pager")),
        ("core.editor", format!("{m} editor")),
        ("core.sshCommand", format!("{m} ssh")),
        ("core.askPass", format!("{m} askpass")),
        ("diff.external", format!("{m} diff-external")),
        ("diff.evil.command", format!("{m} diff-driver")),
        ("diff.evil.textconv", format!("{m} textconv")),
        ("filter.evil.clean", format!("{m} filter-clean")),
        ("filter.evil.smudge", format!("{m} filter-smudge")),
        ("filter.evil.process", format!("{m} filter-process")),
        ("filter.evil.required", "true".to_string()),
        ("credential.helper", format!("!{m} credential")),
        (
            "uploadpack.packObjectsHook",
            format!("{m} pack-objects-hook"),
        ),
        ("gc.auto", "1".to_string()),
    ]
}

/// Exec-shaped config a box writes in its bare clone's `config`, its `config.worktree`,
/// its registration's `config.worktree` or a file its config includes — with hooks in
/// the bare clone's own `hooks/` and a `.gitattributes` sending every file through a
/// filter — runs nothing on the host: `list`, `ls`, `enter --print`, `doctor`,
/// `bundle`, `fetch` and `down` (dirty: refused; `-f`: removed) read the box and bring
/// its commit back, and no marker fires.
#[test]
fn exec_shaped_config_in_a_sandboxed_worktree_never_runs_on_the_host() {
    on_docker(|b| {
        let env = &b.env;
        let root = env.root();
        let m = root.join("m.sh");
        write_exec(
            &m,
            &format!(
                "#!/bin/sh\ntouch '{}/pwned-'\"$1\"\nexit 0\n",
                root.display()
            ),
        );
        let evil_hooks = root.join("evil-hooks");
        for h in HOOKS {
            let text = format!("#!/bin/sh\ntouch '{}/pwned-hook-{h}'\n", root.display());
            write_exec(&evil_hooks.join(h), &text);
        }
        let keys = exec_keys(&m, &evil_hooks);
        let set = |file: &Path, keys: &[(&str, String)]| {
            for (k, v) in keys {
                let file = file.to_string_lossy();
                env.git(&root, &["config", "--file", &file, k, v]);
            }
        };
        // Box: where its exec-shaped config goes.
        let names = ["cfg", "wt", "inc"];
        let mut tips = Vec::new();
        for name in names {
            sandboxed(&b, name);
            let bx = env.box_path(name);
            // The box's commit, made before it turns rogue.
            tips.push(b.commit_inside(
                name,
                &format!("echo {name} > {name}.txt && git add {name}.txt && git commit -qm '{name} work'"),
            ));
            let bare = bare_of(&b, name);
            let reg = registration_of(&b, name);
            match name {
                "cfg" => set(&bare.join("config"), &keys),
                "wt" => {
                    set(&bare.join("config.worktree"), &keys);
                    set(&reg.join("config.worktree"), &keys);
                }
                _ => {
                    let evil = root.join("evil.cfg");
                    set(&evil, &keys);
                    let line = format!("[include]\n\tpath = {}\n", evil.display());
                    append(&bare.join("config"), &line);
                    append(&reg.join("config.worktree"), &line);
                }
            }
            for h in HOOKS {
                let text = format!("#!/bin/sh\ntouch '{}/pwned-bare-{h}'\n", root.display());
                write_exec(&bare.join("hooks").join(h), &text);
            }
            // Dirty, through the filter: a changed file and an untracked one.
            std::fs::write(bx.join(".gitattributes"), "* filter=evil diff=evil\n").unwrap();
            append(&bx.join("README.md"), "changed in the box\n");
            std::fs::write(bx.join("untracked.txt"), "new\n").unwrap();
        }
        let none = Vec::<String>::new();

        let list = timed(env, TREEBOX, &["list", "--json"]).ok().json();
        let ls = timed(env, SANDBOX, &["ls", "--json"]).ok().json();
        timed(env, TREEBOX, &["list"]).ok();
        timed(env, SANDBOX, &["ls"]).ok();
        for name in names {
            assert_eq!(state_of(&list, name), "ok", "list {name}");
            assert_eq!(state_of(&ls, name), "ready", "ls {name}");
            timed(env, TREEBOX, &["enter", name, "--print"]).ok();
        }
        // None is broken. The box whose config.worktree includes a file setting
        // core.hooksPath has switched its guard off for good (an included value cannot
        // be overridden), and doctor says so; the others' planted hooksPath was put
        // back by `enter`.
        let check = doctor_boxes(env);
        assert_eq!(check["status"], "advisory", "{check}");
        let summary = check["summary"].as_str().unwrap();
        assert!(
            summary.ends_with(": inc") && !summary.contains("broken"),
            "{check}"
        );
        assert_eq!(markers(&root), none, "planted code ran on the host");

        for (name, tip) in names.iter().zip(&tips) {
            let out = root.join(format!("{name}.bundle"));
            let r = timed(
                env,
                SANDBOX,
                &["bundle", name, "-o", &out.to_string_lossy()],
            );
            r.ok();
            env.git(
                &env.repo,
                &["bundle", "verify", "-q", &out.to_string_lossy()],
            );
            let r = timed(env, SANDBOX, &["fetch", name]);
            assert_eq!(r.ok().stdout.trim(), format!("refs/hort/{name}/incoming"));
            let incoming = format!("refs/hort/{name}/incoming");
            assert_eq!(env.git(&env.repo, &["rev-parse", &incoming]).trim(), tip);
            assert_eq!(markers(&root), none, "planted code ran on the host");
            // Fetched, but dirty: `down` asks, and without a terminal refuses.
            let before = env.snapshot();
            let r = timed(env, SANDBOX, &["down", name]);
            r.code(5);
            assert!(r.stderr.contains("uncommitted or untracked"), "{r:?}");
            assert_eq!(env.snapshot(), before, "{name}: down wrote something");
            // The user's plain git in the box runs none of it: the checkout is the
            // agent's, and git's ownership check refuses it (SPEC §8.7).
            let bx = env.box_path(name);
            let plain_git = |pre: &[String], args: &[&str]| {
                let out = env
                    .command("timeout", &bx)
                    .arg("30")
                    .arg("git")
                    .args(pre)
                    .args(args)
                    .stdin(std::process::Stdio::null())
                    .output()
                    .unwrap();
                assert_ne!(out.status.code(), Some(124), "git {args:?} hung");
                out
            };
            for args in [["status"], ["diff"]] {
                let out = plain_git(&[], &args);
                assert!(!out.status.success(), "{name}: git {args:?}: {out:?}");
            }
            assert_eq!(markers(&root), none, "{name}: plain git ran the plants");
            // The control: the plants are live — trusting the directory runs them.
            let trust = vec!["-c".to_string(), format!("safe.directory={}", bx.display())];
            for args in [["status"], ["diff"]] {
                plain_git(&trust, &args);
            }
            let fired = markers(&root);
            assert!(
                fired.iter().any(|f| f == "pwned-fsmonitor"),
                "{name}: {fired:?}"
            );
            assert!(
                fired.iter().any(|f| f.starts_with("pwned-filter")),
                "{name}: {fired:?}"
            );
            for f in fired {
                std::fs::remove_file(root.join(f)).unwrap();
            }
            forced_down_removes(&b, name);
            assert_eq!(markers(&root), none, "planted code ran on the host");
        }
        crate::proof::fsck(env);
    });
}

/// Another repository on the host, packed, with a commit the box must never see; its
/// git dir and the commit and blob ids.
fn secret_repo(env: &TestEnv) -> (PathBuf, String, String) {
    let dir = env.root().join("secret");
    env.git(&env.root(), &["init", "-q", "secret"]);
    env.commit_file(&dir, "secret.txt", "the launch codes\n", "secret");
    env.git(&dir, &["repack", "-q", "-a", "-d"]);
    let id = |rev: &str| env.git(&dir, &["rev-parse", rev]).trim().to_string();
    (dir.join(".git"), id("HEAD"), id("HEAD:secret.txt"))
}

/// A box's bare clone (or its registration) reaching another repository's objects —
/// an alternates line (absolute, relative), a `commondir` in the bare clone or in the
/// registration, a pack or the whole `objects` linked in — with the box's branch at a
/// commit there: `bundle` and `fetch` are refused (exit 5, `foreign-objects`, naming
/// the culprit), write no bundle and carry nothing into the user's repository; `down
/// -f` still removes the box.
#[test]
fn fetch_and_bundle_of_a_sandboxed_worktree_read_no_foreign_object_store() {
    on_docker(|b| {
        let env = &b.env;
        let (secret, commit, blob) = secret_repo(env);
        let secret_objects = secret.join("objects");
        let names = ["alt", "rel", "cdir", "rcdir", "pack", "objs"];
        let mut culprits = Vec::new();
        for name in names {
            sandboxed(&b, name);
            let bare = bare_of(&b, name);
            let objects = bare.join("objects");
            let alternates = objects.join("info/alternates");
            let culprit = match name {
                "alt" => {
                    append(&alternates, &format!("{}\n", secret_objects.display()));
                    alternates
                }
                "rel" => {
                    // From the bare clone's objects up to the test root, then down.
                    let up = objects
                        .strip_prefix(env.root())
                        .unwrap()
                        .components()
                        .count();
                    let rel = format!("{}secret/.git/objects\n", "../".repeat(up));
                    std::fs::write(&alternates, rel).unwrap();
                    alternates
                }
                "cdir" => {
                    let f = bare.join("commondir");
                    std::fs::write(&f, format!("{}\n", secret.display())).unwrap();
                    f
                }
                "rcdir" => {
                    let f = registration_of(&b, name).join("commondir");
                    std::fs::write(&f, format!("{}\n", secret.display())).unwrap();
                    f
                }
                "pack" => {
                    for e in std::fs::read_dir(secret_objects.join("pack"))
                        .unwrap()
                        .flatten()
                    {
                        let to = objects.join("pack").join(e.file_name());
                        std::os::unix::fs::symlink(e.path(), to).unwrap();
                    }
                    objects.join("pack")
                }
                _ => {
                    std::fs::rename(&objects, bare.join("objects.own")).unwrap();
                    std::os::unix::fs::symlink(&secret_objects, &objects).unwrap();
                    objects
                }
            };
            // The box's branch, in its bare clone, at the secret commit.
            std::fs::write(bare.join("refs/heads").join(name), format!("{commit}\n")).unwrap();
            culprits.push(culprit);
        }
        timed(env, TREEBOX, &["list"]).ok();
        timed(env, SANDBOX, &["ls"]).ok();
        for (name, culprit) in names.iter().zip(&culprits) {
            let refs_before = env.git(&env.repo, &["for-each-ref"]);
            let out = env.root().join(format!("{name}.bundle"));
            let runs = [
                timed(
                    env,
                    SANDBOX,
                    &["bundle", name, "-o", &out.to_string_lossy()],
                ),
                timed(env, SANDBOX, &["fetch", name]),
            ];
            for r in &runs {
                r.code(5);
                let culprit = culprit.to_string_lossy();
                assert!(
                    r.stderr.contains(&*culprit),
                    "{name}: names {culprit}\n{r:?}"
                );
                assert!(
                    r.stderr.contains(&format!("git sandbox down -f {name}")),
                    "{r:?}"
                );
            }
            for args in [["bundle", name, "--json"], ["fetch", name, "--json"]] {
                let r = timed(env, SANDBOX, &args);
                r.code(5);
                assert!(r.stderr.contains("\"foreign-objects\""), "{args:?}: {r:?}");
            }
            assert!(!out.exists(), "a bundle was written: {}", out.display());
            no_bundle(env, name);
            for oid in [&commit, &blob] {
                let r = env.git_run(&env.repo, &["cat-file", "-e", oid]);
                assert_ne!(r.code, 0, "the user's repository holds secret object {oid}");
            }
            assert_eq!(env.git(&env.repo, &["for-each-ref"]), refs_before);
        }
        for name in names {
            forced_down_removes(&b, name);
        }
        crate::proof::fsck(env);
    });
}
