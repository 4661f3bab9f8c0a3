//! A box on another machine, its work brought back (issue 41's second slice): `git
//! sandbox fetch`/`bundle`, `diff` and `land` of a box there, over real OpenSSH, and a
//! machine whose treebox sends bundles no treebox makes.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{git_in, machines_config, remote_agent, run_ok, Sshd};
use crate::env::{write_exec, TestEnv};

/// A test environment whose config names machine `big` (this test's sshd, this
/// build's treebox there, with `extra` keys), its account a returning user of a
/// stand-in Claude Code; `None` where sshd cannot run.
fn big(extra: serde_json::Value) -> Option<(TestEnv, Sshd)> {
    let mut env = TestEnv::new();
    let sshd = Sshd::start(&env)?;
    sshd.for_treebox(&mut env);
    remote_agent(&sshd);
    let mut m = json!({"ssh": "big", "sshCommand": sshd.ssh_command(), "path": sshd.treebox_dir()});
    for (k, v) in extra.as_object().into_iter().flatten() {
        m[k] = v.clone();
    }
    machines_config(&env, json!({ "big": m }));
    Some((env, sshd))
}

/// Wait until `f` holds, at most `secs`.
#[track_caller]
fn until(secs: u64, what: &str, mut f: impl FnMut() -> bool) {
    let since = Instant::now();
    while !f() {
        assert!(since.elapsed() < Duration::from_secs(secs), "{what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A box made there with its agent's commit on its branch: fetch, bundle, diff and
/// land (squash) bring it here; `rm` refuses while its work is only there and lets it
/// go once fetched; land refuses a box whose checkout there is dirty; `land --remove`
/// takes it down there.
#[test]
fn fetch_bundle_diff_and_land_bring_a_box_back_from_its_machine() {
    let Some((env, _sshd)) = big(json!({})) else {
        return;
    };
    let r = env.treebox(&["create", "feat/far", "--on", "big", "--isolation", "host"]);
    r.ok();
    let path = PathBuf::from(r.stdout.trim());
    let commit = "echo far > far.txt && git add far.txt && git -c user.name=Far -c user.email=far@example.com commit -qm 'far work'";
    env.sandbox(&["run", "feat/far", "--", "sh", "-c", commit])
        .ok();
    let far_tip = git_in(&path, &["rev-parse", "HEAD"]);
    // Its agent ends (as when it finishes): the box is no longer live.
    env.sandbox(&["run", "feat/far", "--", "pkill", "-x", "sleep"]);
    until(20, "the agent there did not end", || {
        let doc = env.treebox(&["list", "--json"]).ok().json();
        crate::env::named(&doc, "boxes", "feat--far")["session"] != "live"
    });

    // Its work is only there: rm refuses off a terminal.
    let e = env.treebox(&["rm", "feat--far"]);
    e.code(5);
    assert!(path.is_dir(), "a refused rm removed the box there");

    // fetch: the branch checked and imported into incoming, exactly the box's tip.
    let doc = env.sandbox(&["fetch", "feat/far", "--json"]).ok().json();
    crate::schema::assert_valid("sandbox-fetch", &doc, "fetch of a far box");
    assert_eq!(doc["ref"], "refs/hort/feat--far/incoming", "{doc}");
    assert_eq!(doc["commits"], 1, "{doc}");
    assert_eq!(doc["tip"], far_tip.as_str(), "{doc}");
    let incoming = env.git(&env.repo, &["rev-parse", "refs/hort/feat--far/incoming"]);
    assert_eq!(incoming.trim(), far_tip);
    let again = env.sandbox(&["fetch", "feat/far", "--json"]).ok().json();
    assert_eq!(again["commits"], 0, "{again}");
    // Nothing of the check is left in this repository's state.
    let far_dir = env.repo_state().join("far");
    let left: Vec<_> = std::fs::read_dir(&far_dir)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left in {far_dir:?}: {left:?}");

    // bundle -o: a bundle this repository verifies.
    let out = env.root().join("far.bundle");
    let doc = env
        .sandbox(&["bundle", "feat/far", "-o", &out.to_string_lossy(), "--json"])
        .ok()
        .json();
    assert_eq!(doc["tip"], far_tip.as_str(), "{doc}");
    env.git(
        &env.repo,
        &["bundle", "verify", "-q", &out.to_string_lossy()],
    );

    // diff: its commits since its base, read here.
    let doc = env.treebox(&["diff", "feat/far", "--json"]).ok().json();
    crate::schema::assert_valid("diff", &doc, "diff of a far box");
    assert_eq!(doc["commits"].as_array().unwrap().len(), 1, "{doc}");
    assert_eq!(doc["files"][0]["path"], "far.txt", "{doc}");
    let r = env.treebox(&["diff", "feat/far", "--stat"]);
    r.ok();
    assert!(r.stdout.contains("far.txt"), "{r:?}");

    // land refuses a box whose checkout there holds uncommitted work; nothing moves.
    env.sandbox(&["run", "feat--far", "--", "sh", "-c", "echo x > stray.txt"])
        .ok();
    let main_before = env.git(&env.repo, &["rev-parse", "main"]);
    let e = env.treebox(&["land", "feat--far", "--squash"]);
    e.code(5);
    assert!(e.stderr.contains("machine `big`"), "{e:?}");
    assert_eq!(env.git(&env.repo, &["rev-parse", "main"]), main_before);
    env.sandbox(&["run", "feat--far", "--", "rm", "stray.txt"])
        .ok();

    // land --squash --remove: on main here, the box gone there.
    let doc = env
        .treebox(&["land", "feat--far", "--squash", "--remove", "--json"])
        .ok()
        .json();
    assert_eq!(doc["strategy"], "squash", "{doc}");
    assert_eq!(doc["removed"], true, "{doc}");
    assert_eq!(env.git(&env.repo, &["show", "main:far.txt"]).trim(), "far");
    assert!(!path.exists(), "the box is still there");
    let sent = env.git_run(
        &env.repo,
        &["rev-parse", "-q", "--verify", "refs/hort/feat--far/sent"],
    );
    assert_ne!(sent.code, 0, "the pin outlived the box");
    let listed = env.treebox(&["list", "--json"]).ok().json();
    assert_eq!(listed["boxes"].as_array().unwrap().len(), 0, "{listed}");
}

/// A machine whose treebox sends bundles no treebox makes: one leaning on a commit
/// this repository never sent it, one whose tree names a blob of a branch never sent
/// (without holding it), and a thin one whose deltas borrow this repository's
/// objects. Each is refused, named, with nothing imported.
#[test]
fn a_bundle_that_borrows_what_it_was_not_sent_is_refused() {
    let mut env = TestEnv::new();
    let Some(sshd) = Sshd::start(&env) else {
        return;
    };
    sshd.for_treebox(&mut env);
    // Origin has a large text file, for a delta to lean on.
    let big: String = (0..2000)
        .map(|i| format!("line {i} of a large file\n"))
        .collect();
    env.push_to_origin("big.txt", &big);
    env.git(&env.repo, &["pull", "-q"]);
    // A branch of this repository never pushed anywhere.
    env.git(&env.repo, &["switch", "-q", "-c", "secret"]);
    env.commit_file(&env.repo, "secret.txt", "the secret\n", "secret");
    env.git(&env.repo, &["switch", "-q", "main"]);
    let secret_blob = env.git(&env.repo, &["rev-parse", "secret:secret.txt"]);
    let secret_blob = secret_blob.trim();

    // The forger: origin, plus the secret branch (as a machine that learned of it).
    let forge = env.root().join("forge");
    env.git(&env.root(), &["clone", "-q", "origin.git", "forge"]);
    env.git(
        &forge,
        &["fetch", "-q", &env.repo.to_string_lossy(), "secret:secret"],
    );
    let base = env.git(&forge, &["rev-parse", "origin/main"]);
    let base = base.trim().to_string();
    let bundles = env.root().join("bundles");
    std::fs::create_dir_all(&bundles).unwrap();
    // 1: on top of the secret commit, which it names as a prerequisite.
    env.git(&forge, &["switch", "-q", "-c", "feat/evil", "secret"]);
    env.commit_file(&forge, "x.txt", "x\n", "on the secret");
    let leaning = bundles.join("leaning.bundle");
    env.git(
        &forge,
        &[
            "bundle",
            "create",
            "-q",
            &leaning.to_string_lossy(),
            "feat/evil",
            "^secret",
        ],
    );
    // 2: on origin's main, a tree naming the secret blob, which the pack lacks.
    env.git(&forge, &["switch", "-q", "-C", "feat/evil", &base]);
    env.git(
        &forge,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{secret_blob},stolen.txt"),
        ],
    );
    let tree = env.git(&forge, &["write-tree"]);
    let commit = env.git(
        &forge,
        &["commit-tree", tree.trim(), "-p", &base, "-m", "stolen"],
    );
    let pack = {
        let mut c = std::process::Command::new("git");
        c.current_dir(&forge)
            .args(["pack-objects", "--stdout", "-q"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = c.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(format!("{}\n{}\n", commit.trim(), tree.trim()).as_bytes())
            .unwrap();
        child.wait_with_output().unwrap().stdout
    };
    let mut reaching = format!(
        "# v2 git bundle\n-{base}\n{} refs/heads/feat/evil\n\n",
        commit.trim()
    )
    .into_bytes();
    reaching.extend_from_slice(&pack);
    std::fs::write(bundles.join("reaching.bundle"), reaching).unwrap();
    // 3: origin's big file changed by a line, bundled by git (a thin pack).
    env.git(&forge, &["reset", "-q", "--hard", &base]);
    env.commit_file(&forge, "big.txt", &format!("{big}one more\n"), "grow");
    let thin = bundles.join("thin.bundle");
    env.git(
        &forge,
        &[
            "bundle",
            "create",
            "-q",
            &thin.to_string_lossy(),
            "feat/evil",
            &format!("^{base}"),
        ],
    );

    // The machine's fake treebox: lists one box, and answers `back` with the bundle
    // in its home.
    let d = sshd.bin_dir("evil");
    let doc = r#"{"schemaVersion":1,"repo":"/x","boxes":[{"name":"feat--evil","path":"/x","branch":"feat/evil","gitMode":"worktree","runner":"host","session":"none","status":"idle"}]}"#;
    write_exec(
        &d.join("git-treebox"),
        &format!(
            "#!/bin/sh\nread -r req\ncase \"$req\" in\n\
             *'\"op\":\"list\"'*) doc='{doc}'; printf 'treebox-remote 1 %s\\n%s\\n' \"${{#doc}}\" \"$doc\";;\n\
             *'\"op\":\"back\"'*) n=$(wc -c < \"$HOME/evil.bundle\"); \
             doc=\"{{\\\"schemaVersion\\\":1,\\\"branch\\\":\\\"feat/evil\\\",\\\"base\\\":\\\"main\\\",\\\"live\\\":false,\\\"dirty\\\":false,\\\"payload\\\":$n}}\"; \
             printf 'treebox-remote 1 %s\\n%s\\n' \"${{#doc}}\" \"$doc\"; cat \"$HOME/evil.bundle\";;\n\
             esac\n"
        ),
    );
    machines_config(
        &env,
        json!({"big": {"ssh": "big", "sshCommand": sshd.ssh_command(), "path": d}}),
    );
    let give = |bundle: &Path| {
        let to = sshd.home.join("evil.bundle");
        std::fs::copy(bundle, &to).unwrap();
        run_ok(std::process::Command::new("chown").arg(&sshd.user).arg(&to));
    };
    for (file, says) in [
        ("leaning.bundle", "leans on commit"),
        ("reaching.bundle", "which it does not hold"),
        ("thin.bundle", "does not stand alone"),
    ] {
        give(&bundles.join(file));
        let before = env.snapshot();
        let objects_before = env.git(&env.repo, &["count-objects", "-v"]);
        for verb in [
            &["fetch", "feat--evil"][..],
            &["bundle", "feat--evil", "-o", "-"],
        ] {
            let e = env.sandbox(verb);
            e.code(5);
            assert!(
                e.stderr.contains("machine `big`") && e.stderr.contains(says),
                "{file} {verb:?}: {e:?}"
            );
        }
        let e = env.treebox(&["land", "feat--evil"]);
        e.code(5);
        assert!(e.stderr.contains(says), "{file}: {e:?}");
        let e = env.treebox(&["diff", "feat--evil"]);
        e.code(5);
        assert_eq!(env.snapshot().refs, before.refs, "{file}: refs moved");
        assert_eq!(
            env.git(&env.repo, &["count-objects", "-v"]),
            objects_before,
            "{file}: objects were written"
        );
    }
}

/// A machine that fetches origin itself (`"fetch": "origin"`): no bundle is sent, the
/// box there starts at origin's tip as that machine fetched it, and its work still
/// comes back here.
#[test]
fn a_machine_that_fetches_origin_itself() {
    use std::os::unix::fs::PermissionsExt;
    let Some((env, sshd)) = big(json!({"fetch": "origin"})) else {
        return;
    };
    // Origin is a path here that the machine's account reads, as a shared server's
    // would be; its user says it trusts it.
    std::fs::set_permissions(env.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
    run_ok(
        std::process::Command::new("chmod")
            .args(["-R", "a+rX"])
            .arg(&env.origin),
    );
    std::fs::write(sshd.home.join(".gitconfig"), "[safe]\n\tdirectory = *\n").unwrap();
    let tip = env.push_to_origin("fresh.txt", "fresh\n");
    let r = env.treebox(&["create", "feat/own", "--on", "big", "--isolation", "host"]);
    r.ok();
    let path = PathBuf::from(r.stdout.trim());
    assert_eq!(git_in(&path, &["rev-parse", "HEAD"]), tip);
    // Its mirror fetched origin: no bundle of ours ever arrived there.
    let mirror_log = sshd.home.join(".local/share/treebox/machines");
    let bundles: Vec<_> = walk(&mirror_log)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "bundle"))
        .collect();
    assert!(bundles.is_empty(), "{bundles:?}");
    let sent = env.git(&env.repo, &["rev-parse", "refs/hort/feat--own/sent"]);
    assert_eq!(sent.trim(), tip);
    let commit = "echo own > own.txt && git add own.txt && git -c user.name=a -c user.email=a@b commit -qm own";
    env.sandbox(&["run", "feat/own", "--", "sh", "-c", commit])
        .ok();
    let doc = env.sandbox(&["fetch", "feat/own", "--json"]).ok().json();
    assert_eq!(doc["commits"], 1, "{doc}");
    env.sandbox(&["down", "-f", "feat/own"]).ok();
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `create --checkout BRANCH --on`: a branch of this repository that origin never had
/// travels as a bundle, and the box there starts on it; its work comes back.
#[test]
fn a_branch_of_this_repository_is_checked_out_there() {
    let Some((env, sshd)) = big(json!({})) else {
        return;
    };
    env.git(&env.repo, &["switch", "-q", "-c", "mine"]);
    env.commit_file(&env.repo, "mine.txt", "mine\n", "mine");
    env.git(&env.repo, &["switch", "-q", "main"]);
    let mine = env.git(&env.repo, &["rev-parse", "mine"]);
    let doc = env
        .treebox(&[
            "create",
            "--checkout",
            "mine",
            "--on",
            "big",
            "--isolation",
            "host",
            "--json",
        ])
        .ok()
        .json();
    let path = PathBuf::from(doc["box"]["path"].as_str().unwrap());
    assert!(path.starts_with(&sshd.home), "{doc}");
    assert_eq!(git_in(&path, &["rev-parse", "HEAD"]), mine.trim());
    assert_eq!(git_in(&path, &["branch", "--show-current"]), "mine");
    let commit = "echo more >> mine.txt && git -c user.name=a -c user.email=a@b commit -qam more";
    env.sandbox(&["run", "mine", "--", "sh", "-c", commit]).ok();
    let doc = env.sandbox(&["fetch", "mine", "--json"]).ok().json();
    assert_eq!(doc["commits"], 1, "{doc}");
    assert_eq!(doc["branch"], "mine", "{doc}");
    env.sandbox(&["down", "-f", "mine"]).ok();
}

/// A box there that commits a sparse file past the cap: its machine refuses to pack
/// it, from the object's header, before reading it; nothing is written here.
#[test]
fn a_box_there_with_an_oversized_object_is_refused_there_unread() {
    let Some((env, _sshd)) = big(json!({})) else {
        return;
    };
    env.treebox(&["create", "feat/huge", "--on", "big", "--isolation", "host"])
        .ok();
    let commit = "truncate -s 200M huge.bin && git add huge.bin && git -c user.name=a -c user.email=a@b commit -qm huge";
    env.sandbox(&["run", "feat/huge", "--", "sh", "-c", commit])
        .ok();
    let before = env.snapshot();
    let since = Instant::now();
    let e = env.sandbox(&["fetch", "feat/huge"]);
    e.code(5);
    assert!(
        // By path: the machine's check of the box's trees (the laptop's own check of
        // a bundle names objects by id alone).
        e.stderr.contains("machine `big`") && e.stderr.contains("`huge.bin`"),
        "{e:?}"
    );
    assert!(
        since.elapsed() < Duration::from_secs(20),
        "{:?}",
        since.elapsed()
    );
    assert_eq!(env.snapshot(), before, "a refused fetch wrote here");
    env.sandbox(&["down", "-f", "feat/huge"]).ok();
}
