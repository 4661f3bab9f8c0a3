//! Borrowed-object exfiltration (issue 18, point 2; SPEC §8.4): a clone box points its
//! object store at another repository on the host and its branch at a commit there,
//! hoping `git sandbox bundle` / `fetch` (run on the host) carry that commit into the
//! user's repository, where the box could then read it. Each route is refused (exit 5,
//! `foreign-objects`), no bundle is written, nothing reaches the user's repository.

use std::path::{Path, PathBuf};

use crate::env::{Run, TestEnv, SANDBOX};
use crate::proof::repo_state;

/// Another repository on the host with a commit the box must never see; returns its
/// git dir and the commit and blob ids.
fn secret_repo(env: &TestEnv) -> (PathBuf, String, String) {
    let dir = env.root().join("secret");
    env.git(&env.root(), &["init", "-q", "secret"]);
    env.commit_file(&dir, "secret.txt", "the launch codes\n", "secret");
    let commit = env.git(&dir, &["rev-parse", "HEAD"]).trim().to_string();
    let blob = env
        .git(&dir, &["rev-parse", "HEAD:secret.txt"])
        .trim()
        .to_string();
    (dir.join(".git"), commit, blob)
}

/// A clone box `leaf` with one commit of its own.
fn clone_box(env: &TestEnv, leaf: &str) -> PathBuf {
    env.treebox(&["create", leaf, "--git", "clone", "--no-launch"])
        .ok();
    let bx = env.box_path(leaf);
    env.commit_file(&bx, "work.txt", "agent work\n", "agent work");
    bx
}

/// Point the box's branch at `commit` by writing the ref file, as the agent would.
fn point_branch(bx: &Path, leaf: &str, commit: &str) {
    std::fs::write(bx.join(".git/refs/heads").join(leaf), format!("{commit}\n")).unwrap();
}

fn mkfifo(p: &Path) {
    crate::env::mkfifo(p);
}

/// `git-sandbox ARGS` under `timeout`: a hang fails the test instead of stalling it.
fn sandbox_timed(env: &TestEnv, args: &[&str]) -> Run {
    let out = env
        .command("timeout", &env.repo)
        .arg("30")
        .arg(SANDBOX)
        .args(args)
        .output()
        .unwrap();
    let r = Run::from_output(out);
    assert_ne!(r.code, 124, "git sandbox {args:?} hung");
    r
}

/// `bundle` and `fetch` are refused with exit 5 naming `culprit` and the way out; no
/// bundle is written; the user's repository has neither the secret objects nor an
/// incoming ref, and its refs are what they were.
fn assert_refused(env: &TestEnv, leaf: &str, culprit: &Path, secret: &[&str]) {
    let refs_before = env.git(&env.repo, &["for-each-ref"]);
    let out = env.root().join(format!("{leaf}.bundle"));
    let r = sandbox_timed(env, &["bundle", leaf, "-o", &out.to_string_lossy()]);
    r.code(5);
    let r2 = sandbox_timed(env, &["bundle", leaf, "--json"]);
    r2.code(5);
    assert!(r2.stderr.contains("foreign-objects"), "{r2:#?}");
    let f = sandbox_timed(env, &["fetch", leaf]);
    f.code(5);
    for r in [&r, &f] {
        assert!(
            r.stderr.contains(&*culprit.to_string_lossy()),
            "names {}\n{r:#?}",
            culprit.display()
        );
        assert!(
            r.stderr.contains(&format!("git sandbox down -f {leaf}")),
            "{r:#?}"
        );
    }
    assert!(!out.exists(), "a bundle was written: {}", out.display());
    let scratch = repo_state(env).join("boxes").join(leaf);
    for name in [format!("{leaf}.bundle"), format!("{leaf}.fetch.bundle")] {
        assert!(!scratch.join(&name).exists(), "{name} was written");
    }
    for oid in secret {
        let r = env.git_run(&env.repo, &["cat-file", "-e", oid]);
        assert_ne!(r.code, 0, "the user's repository holds secret object {oid}");
    }
    let incoming = format!("refs/hort/{leaf}/incoming");
    let r = env.git_run(&env.repo, &["rev-parse", "--verify", "-q", &incoming]);
    assert_ne!(r.code, 0, "{incoming} exists");
    assert_eq!(env.git(&env.repo, &["for-each-ref"]), refs_before);
    crate::proof::fsck(env);
}

#[test]
fn a_planted_alternates_line_is_refused() {
    let env = TestEnv::new();
    let (secret, commit, blob) = secret_repo(&env);
    let bx = clone_box(&env, "spy");
    let alt = bx.join(".git/objects/info/alternates");
    let mut text = std::fs::read_to_string(&alt).unwrap();
    text.push_str(&format!("{}\n", secret.join("objects").display()));
    std::fs::write(&alt, text).unwrap();
    point_branch(&bx, "spy", &commit);
    // The box now sees the secret commit as its branch.
    env.git(&bx, &["cat-file", "-e", &commit]);
    assert_refused(&env, "spy", &alt, &[&commit, &blob]);
    // Its checkout made to match the secret tree exactly, as if clean: what the host
    // reads of it (`ls`, `list --dirty`) is never read through the planted store, so
    // its state is unknown, never "clean".
    env.git(&bx, &["reset", "-q", "--hard", &commit]);
    assert_eq!(env.git(&bx, &["status", "--porcelain"]), "");
    let ls = env.sandbox(&["ls", "--json"]).ok().json();
    let listed = crate::env::named(&ls, "boxes", "spy");
    assert_ne!(listed["dirty"], false, "{listed}");
    let list = env.treebox(&["list", "--dirty", "--json"]).ok().json();
    let listed = crate::env::named(&list, "boxes", "spy");
    assert_ne!(listed["dirty"], false, "{listed}");
}

#[test]
fn an_alternates_line_replacing_treeboxs_is_refused() {
    let env = TestEnv::new();
    let (secret, commit, blob) = secret_repo(&env);
    let bx = clone_box(&env, "spy");
    let alt = bx.join(".git/objects/info/alternates");
    // Relative, through the box's own directory: still another store.
    let rel = pathdiff(&secret.join("objects"), &bx.join(".git/objects"));
    std::fs::write(&alt, format!("{}\n", rel.display())).unwrap();
    point_branch(&bx, "spy", &commit);
    assert_refused(&env, "spy", &alt, &[&commit, &blob]);
}

#[test]
fn an_alternates_fifo_is_refused_without_hanging() {
    let env = TestEnv::new();
    let (_, commit, blob) = secret_repo(&env);
    let bx = clone_box(&env, "spy");
    let alt = bx.join(".git/objects/info/alternates");
    mkfifo(&alt);
    point_branch(&bx, "spy", &commit);
    assert_refused(&env, "spy", &alt, &[&commit, &blob]);
    // Removing the box still works, without reading the FIFO.
    sandbox_timed(&env, &["down", "-f", "spy"]).ok();
    assert!(!bx.exists());
}

#[test]
fn a_symlinked_objects_dir_is_refused() {
    let env = TestEnv::new();
    let (secret, commit, blob) = secret_repo(&env);
    let bx = clone_box(&env, "spy");
    let objects = bx.join(".git/objects");
    std::fs::rename(&objects, bx.join(".git/objects.own")).unwrap();
    std::os::unix::fs::symlink(secret.join("objects"), &objects).unwrap();
    point_branch(&bx, "spy", &commit);
    env.git(&bx, &["cat-file", "-e", &commit]);
    assert_refused(&env, "spy", &objects, &[&commit, &blob]);
}

#[test]
fn a_symlinked_pack_is_refused() {
    let env = TestEnv::new();
    let (secret, commit, blob) = secret_repo(&env);
    env.git(&secret, &["repack", "-q", "-a", "-d"]);
    let bx = clone_box(&env, "spy");
    let pack_dir = secret.join("objects/pack");
    let mut linked = None;
    for e in std::fs::read_dir(&pack_dir).unwrap().flatten() {
        let to = bx.join(".git/objects/pack").join(e.file_name());
        std::os::unix::fs::symlink(e.path(), &to).unwrap();
        linked = Some(to);
    }
    let linked = linked.expect("the secret repository has a pack");
    point_branch(&bx, "spy", &commit);
    env.git(&bx, &["cat-file", "-e", &commit]);
    // Whichever link is met first is named; all sit in the box's pack dir.
    assert_refused(&env, "spy", linked.parent().unwrap(), &[&commit, &blob]);
}

/// The positive control: a box with treebox's own alternates line still bundles and
/// fetches back its work.
#[test]
fn a_box_with_only_its_own_stores_still_fetches_back() {
    let env = TestEnv::new();
    let bx = clone_box(&env, "fine");
    let alt = std::fs::read_to_string(bx.join(".git/objects/info/alternates")).unwrap();
    let user_objects = env.repo.join(".git/objects").canonicalize().unwrap();
    assert_eq!(
        Path::new(alt.trim()).canonicalize().unwrap(),
        user_objects,
        "git clone --shared writes the user's object dir"
    );
    let tip = env.git(&bx, &["rev-parse", "HEAD"]).trim().to_string();
    let out = env.root().join("fine.bundle");
    env.sandbox(&["bundle", "fine", "-o", &out.to_string_lossy()])
        .ok();
    env.git(
        &env.repo,
        &["bundle", "verify", "-q", &out.to_string_lossy()],
    );
    env.sandbox(&["fetch", "fine"]).ok();
    let incoming = env.git(&env.repo, &["rev-parse", "refs/hort/fine/incoming"]);
    assert_eq!(incoming.trim(), tip);
    env.git(&env.repo, &["cat-file", "-e", &format!("{tip}:work.txt")]);
    crate::proof::fsck(&env);
}

/// `to` relative to `from` (both absolute), through `..` components.
fn pathdiff(to: &Path, from: &Path) -> PathBuf {
    let to: Vec<_> = to.components().collect();
    let from: Vec<_> = from.components().collect();
    let common = to.iter().zip(&from).take_while(|(a, b)| a == b).count();
    let mut p = PathBuf::new();
    for _ in common..from.len() {
        p.push("..");
    }
    for c in &to[common..] {
        p.push(c);
    }
    p
}
