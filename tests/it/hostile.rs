//! Hostile boxes, host runner: from inside a box, try every route to run code on the
//! host or to write the user's repository, and show that each one fails.
//!
//! `lifecycle::planted_config_never_runs_on_the_host` and
//! `clone::planted_config_in_a_clone_never_runs_on_the_host` cover the plain keys
//! (filters, fsmonitor, sshCommand, credential helpers, diff.external, pager, hooks).
//! Here: the rest of the exec-shaped vocabulary, the same keys reached through
//! `include.path` / `includeIf`, `.git/info/attributes`, symlinks planted where
//! treebox writes, an oversized record, and branch names made to look like paths or to
//! drive a terminal.

use std::path::{Path, PathBuf};

use crate::env::{write_exec, TestEnv};
use crate::proof::{record_path, repo_state, row};

/// Markers any planted command would create: `<root>/pwned.<what>`.
struct Tripwire {
    root: PathBuf,
}

impl Tripwire {
    fn new(env: &TestEnv) -> Tripwire {
        Tripwire { root: env.root() }
    }

    fn m(&self, what: &str) -> String {
        self.root
            .join(format!("pwned.{what}"))
            .display()
            .to_string()
    }

    fn fired(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.root)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("pwned"))
            .collect();
        v.sort();
        v
    }

    fn clear(&self) {
        for n in self.fired() {
            std::fs::remove_file(self.root.join(n)).unwrap();
        }
    }

    #[track_caller]
    fn check(&self, what: &str) {
        let fired = self.fired();
        assert!(fired.is_empty(), "{what} ran planted config: {fired:?}");
    }
}

/// A repository-level config fragment that runs something on every exec-shaped route.
fn evil_config(t: &Tripwire, tag: &str, hooks: &Path) -> String {
    format!(
        r#"[core]
	fsmonitor = "touch {fsm}; false"
	sshCommand = "touch {ssh}; ssh"
	alternateRefsCommand = "touch {alt}; true"
	hooksPath = {hooks}
	pager = "touch {pager}; cat"
	editor = "touch {editor}; true"
	askPass = "touch {askpass}"
[remote "origin"]
	uploadpack = "touch {up}; git-upload-pack"
[remote "hort-base"]
	uploadpack = "touch {upbase}; git-upload-pack"
[uploadpack]
	packObjectsHook = "touch {poh}; exec"
[gpg]
	program = "touch {gpg}; false"
[commit]
	gpgSign = true
[submodule "sub"]
	update = "!touch {sub}"
[filter "evil"]
	clean = "touch {clean}; cat"
	smudge = "touch {smudge}; cat"
[diff]
	external = "touch {diff}"
[credential]
	helper = "!touch {cred}"
"#,
        fsm = t.m(&format!("{tag}.fsmonitor")),
        ssh = t.m(&format!("{tag}.ssh")),
        alt = t.m(&format!("{tag}.alternateRefsCommand")),
        hooks = hooks.display(),
        pager = t.m(&format!("{tag}.pager")),
        editor = t.m(&format!("{tag}.editor")),
        askpass = t.m(&format!("{tag}.askpass")),
        up = t.m(&format!("{tag}.uploadpack")),
        upbase = t.m(&format!("{tag}.uploadpack-hort-base")),
        poh = t.m(&format!("{tag}.packObjectsHook")),
        gpg = t.m(&format!("{tag}.gpg")),
        sub = t.m(&format!("{tag}.submodule-update")),
        clean = t.m(&format!("{tag}.clean")),
        smudge = t.m(&format!("{tag}.smudge")),
        diff = t.m(&format!("{tag}.diff")),
        cred = t.m(&format!("{tag}.credential")),
    )
}

/// A hooks dir whose every client-side hook trips the wire.
fn evil_hooks(t: &Tripwire, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for h in treebox::guard::HOOK_NAMES {
        write_exec(
            &dir.join(h),
            &format!(
                "#!/bin/sh\ntouch {}\ncat >/dev/null\n",
                t.m(&format!("hook.{h}"))
            ),
        );
    }
}

/// Origin gains a submodule `sub` (so creating a box runs `git submodule update`).
fn add_submodule(env: &TestEnv) {
    let root = env.root();
    env.git(&root, &["init", "-q", "--bare", "sub.git"]);
    env.git(&root, &["clone", "-q", "sub.git", "subwork"]);
    env.commit_file(&root.join("subwork"), "lib.txt", "v1\n", "v1");
    env.git(
        &root.join("subwork"),
        &["push", "-q", "origin", "HEAD:main"],
    );
    env.git(
        &env.repo,
        &[
            "submodule",
            "add",
            "-q",
            "--name",
            "sub",
            &root.join("sub.git").to_string_lossy(),
            "sub",
        ],
    );
    env.git(&env.repo, &["commit", "-q", "-m", "add sub"]);
    env.git(&env.repo, &["push", "-q", "origin", "main"]);
}

/// How planted config reaches git.
#[derive(Clone, Copy, Debug)]
enum Route {
    /// `git config <scope> key value`, key by key.
    Direct,
    /// `include.path` naming a file in the box.
    Include,
    /// `includeIf.gitdir:/.path` (matches every repository) naming a file in the box.
    IncludeIf,
}

/// Plant `evil_config` in the config file `scope` names (run in `bx`), by `route`;
/// plus attributes that send every file through the planted filter, and a dirty file.
fn plant(env: &TestEnv, t: &Tripwire, bx: &Path, scope: &str, route: Route) {
    let hooks = bx.join(".evil-hooks");
    evil_hooks(t, &hooks);
    let tag = format!("{route:?}");
    let file = bx.join(".evil-config");
    std::fs::write(&file, evil_config(t, &tag, &hooks)).unwrap();
    match route {
        Route::Direct => {
            let keys = env.git(bx, &["config", "--file", &file.to_string_lossy(), "--list"]);
            for kv in keys.lines() {
                let (k, v) = kv.split_once('=').unwrap();
                env.git(bx, &["config", scope, "--add", k, v]);
            }
        }
        Route::Include => {
            env.git(
                bx,
                &["config", scope, "include.path", &file.to_string_lossy()],
            );
        }
        Route::IncludeIf => {
            env.git(
                bx,
                &[
                    "config",
                    scope,
                    "includeIf.gitdir:/.path",
                    &file.to_string_lossy(),
                ],
            );
        }
    }
    std::fs::write(bx.join(".gitattributes"), "* filter=evil diff=evil\n").unwrap();
    std::fs::write(bx.join("dirty.txt"), "changed\n").unwrap();
    // Control: plain git in the box does run what was planted, by this route.
    let _ = env.git_run(bx, &["status"]);
    let _ = env.git_run(bx, &["fetch", "-q", "origin"]);
    let _ = env.git_run(bx, &["diff"]);
    let fired = t.fired();
    for what in ["fsmonitor", "uploadpack"] {
        assert!(
            fired.contains(&format!("pwned.{tag}.{what}")),
            "control: {scope} {route:?} {what} did not fire under plain git: {fired:?}"
        );
    }
    t.clear();
}

/// Every host-side command against a repository with a hostile worktree box.
fn worktree_box_attack(scope: &str, route: Route) {
    let env = TestEnv::new();
    let t = Tripwire::new(&env);
    add_submodule(&env);
    env.treebox(&["create", "hostile", "--no-launch"]).ok();
    let bx = env.box_path("hostile");
    // The repository's shared attributes too: they apply to every checkout.
    std::fs::write(
        env.repo.join(".git/info/attributes"),
        "* filter=evil diff=evil\n",
    )
    .unwrap();
    plant(&env, &t, &bx, scope, route);
    let what = |cmd: &str| format!("{cmd} ({scope}, {route:?})");

    env.treebox(&["list"]).ok();
    env.treebox(&["list", "--json"]).ok();
    env.sandbox(&["ls"]).ok();
    env.sandbox(&["ls", "--json"]).ok();
    t.check(&what("list / ls"));
    env.treebox(&["enter", "hostile", "--print"]).ok();
    t.check(&what("enter --print"));
    // A new box: fetch, worktree add (checkout through attributes), submodule update.
    let doc = env.treebox(&["create", "neighbour", "--json"]).ok().json();
    assert_eq!(doc["submodules"], 1, "{doc}");
    t.check(&what("create of another box"));
    env.sandbox(&["up", "third", "--json"]).ok();
    t.check(&what("sandbox up"));
    let _ = env.treebox(&["doctor"]);
    let _ = env.treebox(&["doctor", "--json"]);
    t.check(&what("doctor"));
    env.treebox(&["teardown", "hostile"]).code(5);
    t.check(&what("teardown (dirty check)"));
    env.treebox(&[
        "teardown",
        "--force",
        "--delete-branch",
        "hostile",
        "neighbour",
    ])
    .ok();
    env.sandbox(&["down", "-f", "third"]).ok();
    t.check(&what("teardown --force / down"));
}

#[test]
fn worktree_box_shared_config_direct() {
    worktree_box_attack("--local", Route::Direct);
}

#[test]
fn worktree_box_shared_config_include() {
    worktree_box_attack("--local", Route::Include);
}

#[test]
fn worktree_box_shared_config_include_if() {
    worktree_box_attack("--local", Route::IncludeIf);
}

#[test]
fn worktree_box_worktree_config_direct() {
    worktree_box_attack("--worktree", Route::Direct);
}

#[test]
fn worktree_box_worktree_config_include() {
    worktree_box_attack("--worktree", Route::Include);
}

#[test]
fn worktree_box_worktree_config_include_if() {
    worktree_box_attack("--worktree", Route::IncludeIf);
}

/// Every host-side command against a hostile clone box.
fn clone_box_attack(route: Route) {
    let env = TestEnv::new();
    let t = Tripwire::new(&env);
    add_submodule(&env);
    env.treebox(&["create", "hostile", "--git", "clone", "--no-launch"])
        .ok();
    let bx = env.box_path("hostile");
    env.commit_file(&bx, "work.txt", "agent work\n", "agent work");
    std::fs::create_dir_all(bx.join(".git/info")).unwrap();
    std::fs::write(bx.join(".git/info/attributes"), "* filter=evil\n").unwrap();
    plant(&env, &t, &bx, "--local", route);
    let what = |cmd: &str| format!("{cmd} ({route:?})");

    env.treebox(&["list", "--json"]).ok();
    env.treebox(&["list"]).ok();
    env.sandbox(&["ls"]).ok();
    t.check(&what("list / ls"));
    env.treebox(&["enter", "hostile", "--print"]).ok();
    t.check(&what("enter --print"));
    env.treebox(&["create", "other", "--git", "clone", "--no-launch"])
        .ok();
    t.check(&what("create of another clone"));
    let _ = env.treebox(&["doctor", "--json"]);
    t.check(&what("doctor"));
    env.treebox(&["teardown", "hostile"]).code(5);
    t.check(&what("teardown (dirty check)"));
    env.sandbox(&["down", "hostile"]).code(5);
    t.check(&what("down (unreturned work)"));
    let bundle = env.root().join("h.bundle");
    env.sandbox(&["bundle", "hostile", "-o", &bundle.to_string_lossy()])
        .ok();
    t.check(&what("sandbox bundle"));
    env.sandbox(&["fetch", "hostile"]).ok();
    t.check(&what("sandbox fetch"));
    env.git(
        &env.repo,
        &["rev-parse", "--verify", "refs/hort/hostile/incoming"],
    );
    env.treebox(&["teardown", "--force", "hostile", "other"])
        .ok();
    t.check(&what("teardown --force"));
    env.git(&env.repo, &["fsck", "--no-progress"]);
}

#[test]
fn clone_box_config_direct() {
    clone_box_attack(Route::Direct);
}

#[test]
fn clone_box_config_include() {
    clone_box_attack(Route::Include);
}

#[test]
fn clone_box_config_include_if() {
    clone_box_attack(Route::IncludeIf);
}

/// The box's `.env` replaced by a symlink to a host file: `enter` never writes through
/// it, whether or not the canonical `.env` changed.
#[test]
fn a_planted_env_symlink_is_never_written_through() {
    let env = TestEnv::new();
    std::fs::write(env.repo.join(".env"), "TOKEN=one\n").unwrap();
    env.treebox(&["create", "envy", "--no-launch"]).ok();
    let host_file = env.root().join("host-precious.txt");
    std::fs::write(&host_file, "precious\n").unwrap();
    let boxed = env.box_path("envy").join(".env");
    std::fs::remove_file(&boxed).unwrap();
    std::os::unix::fs::symlink(&host_file, &boxed).unwrap();
    for canonical in ["TOKEN=one\n", "TOKEN=two\n"] {
        std::fs::write(env.repo.join(".env"), canonical).unwrap();
        let r = env.treebox(&["enter", "envy", "--print"]);
        r.ok();
        assert_eq!(
            std::fs::read_to_string(&host_file).unwrap(),
            "precious\n",
            "enter wrote through the planted symlink"
        );
        assert!(r.stderr.contains("symlink"), "{r:#?}");
    }
    // A symlink to a directory, and a dangling one, fare no better.
    let host_dir = env.root().join("host-dir");
    std::fs::create_dir(&host_dir).unwrap();
    for target in [host_dir.clone(), env.root().join("does-not-exist")] {
        std::fs::remove_file(&boxed).unwrap();
        std::os::unix::fs::symlink(&target, &boxed).unwrap();
        env.treebox(&["enter", "envy", "--print"]).ok();
        assert!(!target.exists() || std::fs::read_dir(&host_dir).unwrap().count() == 0);
    }
    assert!(!env.root().join("does-not-exist").exists());
}

/// The hooks dir in the box's private git dir replaced by a symlink to a host directory
/// of executables, where `enter` re-installs the guard when setup never completed:
/// refused, nothing written there.
#[test]
fn a_planted_hooks_dir_symlink_is_not_written_through() {
    let env = TestEnv::new();
    env.write_config(r#"{"setup": ["false"]}"#);
    env.treebox(&["create", "sly", "--no-launch"]).ok();
    let admin = crate::proof::admin_dirs_for(&env, &env.box_path("sly"))
        .pop()
        .unwrap();
    // The hooks dir pointed at a host directory of executables.
    let host_bin = env.root().join("host-bin");
    std::fs::create_dir(&host_bin).unwrap();
    std::fs::remove_dir_all(admin.join("treebox-hooks")).unwrap();
    std::os::unix::fs::symlink(&host_bin, admin.join("treebox-hooks")).unwrap();
    let r = env.treebox(&["enter", "sly", "--print"]);
    assert_ne!(
        r.code, 0,
        "the guard cannot be installed through a symlink\n{r:#?}"
    );
    assert_eq!(
        std::fs::read_dir(&host_bin).unwrap().count(),
        0,
        "enter wrote into the host directory"
    );
}

/// The worktree config pointed at a host file (say, the user's global config): `enter`
/// re-installing the guard must not write `core.hooksPath` into it.
#[test]

fn a_planted_config_worktree_symlink_is_not_written_through() {
    let env = TestEnv::new();
    env.write_config(r#"{"setup": ["false"]}"#);
    env.treebox(&["create", "sly", "--no-launch"]).ok();
    let admin = crate::proof::admin_dirs_for(&env, &env.box_path("sly"))
        .pop()
        .unwrap();
    let host_cfg = env.root().join("host.gitconfig");
    std::fs::write(&host_cfg, "[user]\n\tname = Host\n").unwrap();
    std::fs::remove_file(admin.join("config.worktree")).unwrap();
    std::os::unix::fs::symlink(&host_cfg, admin.join("config.worktree")).unwrap();
    let _ = env.treebox(&["enter", "sly", "--print"]);
    assert_eq!(
        std::fs::read_to_string(&host_cfg).unwrap(),
        "[user]\n\tname = Host\n",
        "enter wrote the box's config through a planted symlink"
    );
}

/// The bookkeeping that decides how a box is handled is out of the box's reach.
#[test]
fn bookkeeping_lives_outside_the_box_and_the_repository() {
    let env = TestEnv::new();
    env.treebox(&["create", "kept", "--no-launch"]).ok();
    env.treebox(&["create", "cl", "--git", "clone", "--no-launch"])
        .ok();
    let state = repo_state(&env).canonicalize().unwrap();
    let repo = env.repo.canonicalize().unwrap();
    for leaf in ["kept", "cl"] {
        let rec = record_path(&env, leaf).canonicalize().unwrap();
        let bx = env.box_path(leaf).canonicalize().unwrap();
        assert!(rec.starts_with(&state), "{}", rec.display());
        assert!(!rec.starts_with(&bx), "{} is inside the box", rec.display());
        assert!(
            !rec.starts_with(&repo),
            "{} is inside the repo",
            rec.display()
        );
        assert!(!state.starts_with(&repo));
    }
    // The clone's guard lives in host bookkeeping too, not in the clone's own .git.
    // (Mounted read-only into a container; the record is beside it, not in it.)
    let hooks = env.git(&env.box_path("cl"), &["config", "core.hooksPath"]);
    let hooks = Path::new(hooks.trim());
    assert!(hooks.starts_with(&state), "{}", hooks.display());
    assert!(!record_path(&env, "cl")
        .canonicalize()
        .unwrap()
        .starts_with(hooks));
}

/// A record blown up to 5 MiB: a clear error naming it, quickly; not a hang or a crash.
#[test]
fn a_huge_record_is_a_clear_error_not_a_hang() {
    let env = TestEnv::new();
    env.treebox(&["create", "big", "--no-launch"]).ok();
    env.treebox(&["create", "small", "--no-launch"]).ok();
    let rec = record_path(&env, "big");
    let mut text = std::fs::read(&rec).unwrap();
    text.truncate(text.len() - 2); // drop "}\n": grow it as a valid-looking object
    text.extend_from_slice(b", \"padding\": \"");
    text.resize(5 * 1024 * 1024, b'x');
    text.extend_from_slice(b"\"}\n");
    std::fs::write(&rec, &text).unwrap();
    let t = std::time::Instant::now();
    let r = env.treebox(&["enter", "big", "--print"]);
    r.code(2);
    assert!(r.stderr.contains(&rec.display().to_string()), "{r:#?}");
    assert!(
        r.stderr.len() < 4096,
        "the error echoes the record: {} bytes",
        r.stderr.len()
    );
    assert_eq!(row(&env, "big").unwrap()["state"], "bad-record");
    let table = env.treebox(&["ls"]).ok().stdout.clone();
    assert!(table.len() < 4096, "{} bytes", table.len());
    env.treebox(&["enter", "small", "--print"]).ok();
    env.treebox(&["teardown", "--force", "big"]).ok();
    assert!(!rec.exists());
    assert!(
        t.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        t.elapsed()
    );
}

/// Branches renamed inside the box: names that look like paths are refused by git
/// itself; what git does allow is followed, and shown sanitised on a terminal.
#[test]
fn branch_renames_inside_a_box_cannot_escape_or_drive_the_terminal() {
    let env = TestEnv::new();
    env.treebox(&["create", "ren", "--no-launch"]).ok();
    let bx = env.box_path("ren");
    for bad in [
        "../../etc",
        "feat/..x",
        "feat/.x",
        "-x",
        "a..b",
        "x.lock",
        "a\u{1b}[2J",
    ] {
        let r = env.git_run(&bx, &["branch", "-m", "--", bad]);
        assert_ne!(r.code, 0, "git accepted branch {bad:?}");
    }
    assert_eq!(row(&env, "ren").unwrap()["branch"], "ren");
    // What git allows: C1 controls (ESC's 8-bit twin), bidi overrides, shell syntax.
    let t = Tripwire::new(&env);
    let sneaky = format!("x\u{9b}2J\u{202e}$(touch${{IFS}}{})`id`", t.m("branch"));
    env.git(&bx, &["branch", "-m", &sneaky]);
    let r = row(&env, "ren").unwrap();
    assert_eq!(
        r["branch"],
        sneaky.as_str(),
        "JSON carries the data as it is"
    );
    let table = env.treebox(&["list"]).ok().stdout.clone();
    assert!(table.contains("ren"), "{table}");
    assert!(
        !table.contains('\u{9b}') && !table.contains('\u{202e}'),
        "a C1 or bidi control reached the terminal: {table:?}"
    );
    // The box is still found by its leaf, and its launch line runs nothing else.
    let line = env
        .treebox(&["enter", "ren", "--print"])
        .ok()
        .stdout
        .clone();
    assert!(!line.contains('\u{9b}'), "{line:?}");
    let out = env
        .command("sh", &env.root())
        .args(["-c", line.trim()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let r = env.treebox(&["teardown", "ren"]);
    assert!(!r.stderr.contains('\u{9b}'), "{r:#?}");
    t.check("list / enter / teardown of a branch named like a command");
    env.treebox(&["teardown", "--force", "ren"]).ok();
}

#[test]
fn bidi_controls_in_branch_names_are_escaped_on_a_terminal() {
    let env = TestEnv::new();
    env.treebox(&["create", "bidi", "--no-launch"]).ok();
    env.git(&env.box_path("bidi"), &["branch", "-m", "x\u{202e}txt.exe"]);
    let table = env.treebox(&["list"]).ok().stdout.clone();
    assert!(!table.contains('\u{202e}'), "{table:?}");
}

/// A box whose setup failed is finished by the next `enter`, but its checkout is
/// whole and the box may have run since: nothing runs git in it to "repair" it, so a
/// filter it planted never runs and the agent's branch and files stay as they are.
#[test]
fn finishing_a_failed_setup_never_runs_git_in_the_box() {
    let env = TestEnv::new();
    let t = Tripwire::new(&env);
    // Setup fails every time: the box stays "not set up", and each enter retries.
    env.write_config(r#"{"setup": ["false"]}"#);
    env.treebox(&["create", "c", "--git", "clone", "--no-launch"])
        .ok();
    env.treebox(&["create", "w", "--no-launch"]).ok();
    assert_eq!(row(&env, "c").unwrap()["deps"], "unknown");

    // The clone's agent moved to its own branch and planted a filter in the
    // per-worktree config, which treebox itself enabled.
    let c = env.box_path("c");
    env.git(&c, &["switch", "-q", "-c", "feature"]);
    env.commit_file(&c, "f.txt", "feature work\n", "feature work");
    let tip = env.git(&c, &["rev-parse", "HEAD"]);
    std::fs::write(
        c.join(".git/config.worktree"),
        format!(
            "[filter \"evil\"]\n\tsmudge = \"touch {}; cat\"\n",
            t.m("repair.smudge")
        ),
    )
    .unwrap();
    std::fs::create_dir_all(c.join(".git/info")).unwrap();
    std::fs::write(c.join(".git/info/attributes"), "* filter=evil\n").unwrap();
    // The worktree's agent left work and removed its index (its admin dir is its own).
    let w = env.box_path("w");
    std::fs::write(w.join("draft.txt"), "unsaved\n").unwrap();
    let admin = env.repo.join(".git/worktrees/w");
    std::fs::remove_file(admin.join("index")).unwrap();

    for name in ["c", "w"] {
        let r = env.treebox(&["enter", name, "--print"]);
        r.ok();
        t.check(&format!("enter {name} after a failed setup"));
    }
    assert_eq!(
        env.git(&c, &["symbolic-ref", "--short", "HEAD"]).trim(),
        "feature"
    );
    assert_eq!(env.git(&c, &["rev-parse", "HEAD"]), tip);
    assert_eq!(
        std::fs::read_to_string(w.join("draft.txt")).unwrap(),
        "unsaved\n",
        "the worktree was made again over the agent's work"
    );
}

/// git runs a config value whatever its bytes; treebox once skipped values that were
/// not UTF-8 when it looked for planted keys. A filter with such a value, planted in
/// the shared config a worktree box can write, must not run when the host makes the
/// next box (whose checkout reads every file through the filters).
#[test]
fn a_planted_key_with_a_non_utf8_value_is_still_neutralised() {
    let env = TestEnv::new();
    let t = Tripwire::new(&env);
    env.treebox(&["create", "first", "--no-launch"]).ok();
    // Raw bytes, as git stores config: 0xff and 0xfe are not UTF-8.
    let mut config = std::fs::read(env.repo.join(".git/config")).unwrap();
    config.extend_from_slice(
        format!(
            "[filter \"evil\"]\n\tsmudge = \"touch {}; cat #",
            t.m("smudge")
        )
        .as_bytes(),
    );
    config.push(0xff);
    config.extend_from_slice(
        format!(
            "\"\n[remote \"origin\"]\n\tuploadpack = \"touch {}; git-upload-pack #",
            t.m("uploadpack")
        )
        .as_bytes(),
    );
    config.push(0xfe);
    config.extend_from_slice(b"\"\n");
    std::fs::write(env.repo.join(".git/config"), &config).unwrap();
    std::fs::write(env.repo.join(".git/info/attributes"), "* filter=evil\n").unwrap();
    env.treebox(&["create", "second", "--no-launch"]).ok();
    t.check("create after a non-UTF-8 planted filter and upload-pack");
    env.treebox(&["doctor"]);
    t.check("doctor after a non-UTF-8 planted upload-pack");
}

/// `core.gitProxy` runs a command for `git://` remotes. git keeps the first value it
/// reads — the repository's, before any `-c` — so only the environment can pin it.
#[test]
fn a_planted_git_proxy_never_runs() {
    let env = TestEnv::new();
    let t = Tripwire::new(&env);
    let proxy = env.root().join("proxy.sh");
    write_exec(
        &proxy,
        &format!("#!/bin/sh\ntouch {}\nexit 1\n", t.m("gitProxy")),
    );
    env.git(
        &env.repo,
        &["config", "remote.origin.url", "git://127.0.0.1:9/repo.git"],
    );
    env.git(
        &env.repo,
        &["config", "core.gitProxy", &proxy.to_string_lossy()],
    );
    // The fetch fails (nothing listens), but the planted proxy never runs.
    env.treebox(&["create", "x", "--no-launch"]).code(4);
    t.check("create (fetch over git://)");
    let _ = env.treebox(&["doctor"]);
    t.check("doctor (ls-remote over git://)");
}
