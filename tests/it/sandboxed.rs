//! Sandboxed worktrees (SPEC §6, issue 12): a worktree box in a container hangs off a
//! bare clone of its own, so a rogue agent inside cannot touch the user's repository,
//! another box or the guard — and its work still comes back, by `fetch`.
//!
//! Real docker and podman (see `container.rs`); real git on the host.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::container::{each_engine, tree_digest, Boxed};
use crate::proof::record_path;

/// The user's refs, as `git for-each-ref` prints them.
fn refs(b: &Boxed) -> String {
    b.env.git(
        &b.env.repo,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    )
}

fn bare_of(b: &Boxed, leaf: &str) -> PathBuf {
    PathBuf::from(b.record(leaf)["bareClone"].as_str().expect("bareClone"))
}

fn markers(root: &Path) -> Vec<String> {
    std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pwned"))
        .collect()
}

#[test]
fn a_rogue_agent_in_a_sandboxed_worktree_cannot_touch_the_users_repo() {
    each_engine(|b| {
        let env = &b.env;
        env.treebox(&["create", "host-side", "--isolation", "host", "--no-launch"])
            .ok();
        env.treebox(&["create", "other", "--no-launch"]).ok();
        let doc = env
            .treebox(&["create", "boxed", "--no-launch", "--json"])
            .ok()
            .json();
        assert_eq!(doc["runner"], b.engine);
        let bare = bare_of(&b, "boxed");
        let other_bare = bare_of(&b, "other");
        let hooks = bare.parent().unwrap().join("hooks");
        let user_git = env.repo.join(".git");

        // The branch lives in the bare clone; the user's repo has only the pin.
        let user_refs = refs(&b);
        assert!(!user_refs.contains("refs/heads/boxed"), "{user_refs}");
        assert!(user_refs.contains("refs/hort/boxed/base"), "{user_refs}");
        let listed = env.git(&env.repo, &["worktree", "list"]);
        assert!(!listed.contains("boxed"), "{listed}");

        // The agent works and commits (before it turns rogue).
        let tip = b.commit_inside(
            "boxed",
            "echo work > work.txt && git add work.txt && git commit -qm 'in the box' && git status --porcelain",
        );
        let doc = env.treebox(&["list", "--json"]).ok().json();
        let row = crate::env::named(&doc, "boxes", "boxed");
        assert_eq!(row["branch"], "boxed", "{row}");

        // Then it turns rogue.
        let config_before = std::fs::read(user_git.join("config")).unwrap();
        let host_side_admin = user_git.join("worktrees/host-side");
        let admin_before = tree_digest(&host_side_admin);
        let guard_before = tree_digest(&hooks);
        let other_before = tree_digest(&other_bare);
        let refs_before = refs(&b);
        let root = env.root();
        let m = bare.join("m.sh");
        let rogue = format!(
            r#"M={m}
printf '#!/bin/sh\ntouch {root}/pwned-$1\n' > $M && chmod +x $M
U={u}
git config --file $U/config core.fsmonitor "$M user-config" && echo WROTE user-config
git config --file $U/config core.hooksPath {root} && echo WROTE user-hookspath
mkfifo {bare}/fifo; git config --file $U/config include.path {bare}/fifo && echo WROTE user-include
printf '[core]\n\tfsmonitor = %s\n' "$M user-cw" > $U/config.worktree && echo WROTE user-config.worktree
git config --file $U/worktrees/host-side/config.worktree core.fsmonitor "$M host-side" && echo WROTE host-side
git --git-dir=$U update-ref -d refs/heads/main && echo WROTE user-ref
rm -f $U/packed-refs $U/refs/heads/main && echo WROTE user-ref-file
find $U/objects -type f -exec rm -f {{}} + 2>/dev/null; ls $U/objects >/dev/null 2>&1 && echo SAW user-objects
cp $M $U/hooks/post-checkout && echo WROTE user-hook
touch {repo}/README.md && echo WROTE user-checkout
git --git-dir={ob} config core.fsmonitor "$M other" && echo WROTE other-bare
touch {ob}/planted && echo WROTE other-bare-file
cp $M {hooks}/pre-push && echo WROTE guard
rm -f {hooks}/git-treebox-guard && echo WROTE guard-exe
git config core.fsmonitor "$M own" && git config core.hooksPath {bare}
git config --worktree core.fsmonitor "$M own-wt"
git config core.pager "$M own-pager"
true
"#,
            m = m.display(),
            root = root.display(),
            u = user_git.display(),
            repo = env.repo.display(),
            ob = other_bare.display(),
            hooks = hooks.display(),
            bare = bare.display(),
        );
        let r = b
            .exec(&["boxed", "--", "sh", "-c", &rogue])
            .ok()
            .stdout
            .clone();
        // What the agent "wrote" of the user's repository landed in the container's
        // own filesystem (the engine made the directories above the mounts there):
        // the host checks below are the proof. The guard, the other box and the
        // borrowed objects are beyond it.
        for never in ["guard", "guard-exe", "other-bare", "other-bare-file"] {
            assert!(!r.contains(&format!("WROTE {never}\n")), "{never}: {r}");
        }
        assert!(
            r.contains("SAW user-objects"),
            "the borrowed store is readable: {r}"
        );
        let objects = std::fs::read_dir(user_git.join("objects")).unwrap().count();
        assert!(objects > 2, "the user's objects are gone");

        // The user's own git on the host runs nothing planted.
        env.git(&env.repo, &["status"]);
        env.git(&env.repo, &["log", "--oneline", "-3"]);
        env.git(&env.box_path("host-side"), &["status"]);
        // Nor does treebox reading the box.
        env.treebox(&["list"]).ok();
        env.sandbox(&["ls"]).ok();
        env.treebox(&["enter", "boxed", "--print"]).ok();
        assert_eq!(
            markers(&root),
            Vec::<String>::new(),
            "planted code ran on the host"
        );
        assert_eq!(
            std::fs::read(user_git.join("config")).unwrap(),
            config_before
        );
        assert!(!user_git.join("config.worktree").exists());
        assert_eq!(tree_digest(&host_side_admin), admin_before);
        assert_eq!(tree_digest(&hooks), guard_before, "the guard changed");
        assert_eq!(
            tree_digest(&other_bare),
            other_before,
            "the other box changed"
        );
        assert_eq!(refs(&b), refs_before, "the user's refs changed");
        env.git(&env.repo, &["fsck", "--no-progress"]);

        // Work the user's repository lacks: `down` refuses without a terminal, removes
        // nothing; `fetch` brings it back; then `down` needs no force.
        let r = env.sandbox(&["down", "boxed"]);
        r.code(5);
        assert!(r.stderr.contains("fetch"), "{r:?}");
        assert!(env.box_path("boxed").join("work.txt").is_file());
        assert!(bare.is_dir());
        // On a terminal it asks; "no" keeps everything.
        let (_, text) = env.on_tty_answering(crate::env::SANDBOX, "down boxed", "n\n", || {});
        assert!(text.contains("does not have"), "{text}");
        assert!(env.box_path("boxed").join("work.txt").is_file());
        assert!(bare.is_dir());
        env.treebox(&["teardown", "boxed"]).code(5);
        assert!(bare.is_dir());
        let fetched = env.sandbox(&["fetch", "boxed"]).ok().stdout.clone();
        assert_eq!(fetched.trim(), "refs/hort/boxed/incoming");
        assert_eq!(
            env.git(&env.repo, &["rev-parse", "refs/hort/boxed/incoming"])
                .trim(),
            tip
        );
        env.sandbox(&["down", "boxed"]).ok();
        assert!(!env.box_path("boxed").exists());
        assert!(!bare.exists());
        assert!(!refs(&b).contains("refs/hort/boxed/base"));
        assert_eq!(
            markers(&root),
            Vec::<String>::new(),
            "planted code ran on the host"
        );
        env.git(&env.repo, &["fsck", "--no-progress"]);
        env.treebox(&["teardown", "--force", "other"]).ok();
    });
}

/// A git server on a network of the test's own (`--internal`): the box pushes to it.
pub(crate) fn git_server(b: &Boxed, net: &str) -> Option<String> {
    let name = format!("tbsrv-git-{}", b.id);
    let out = b.engine(&[
        "run",
        "-d",
        "--name",
        &name,
        "--network",
        net,
        crate::container::BASE,
        "sh",
        "-c",
        "git init -q --bare /srv/o.git && exec git daemon --export-all --enable=receive-pack \
         --base-path=/srv --reuseaddr --listen=0.0.0.0 /srv",
    ]);
    assert!(out.status.success(), "{out:?}");
    let ip = b.engine(&[
        "container",
        "inspect",
        "--format",
        "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
        &name,
    ]);
    let ip = String::from_utf8_lossy(&ip.stdout).trim().to_string();
    // Can a container on this network reach it at all?
    let probe = b.engine(&[
        "run", "--rm", "--network", net, crate::container::BASE, "sh", "-c",
        &format!("for i in 1 2 3 4 5 6 7 8 9 10; do git ls-remote git://{ip}/o.git >/dev/null 2>&1 && exit 0; sleep 0.5; done; exit 1"),
    ]);
    if !probe.status.success() {
        eprintln!(
            "note: {}: containers on an internal network cannot reach each other here; push test skipped",
            b.engine
        );
        return None;
    }
    Some(ip)
}

/// The user's origin moved to a git server on the test's own `--internal` network,
/// and new boxes put on that network; the origin URL. `None` where containers on an
/// internal network cannot reach each other (the test has nothing to show there).
pub(crate) fn origin_on_a_server(b: &mut Boxed) -> Option<String> {
    if b.engine == "podman" {
        b.use_cni();
    }
    let net = format!("tbnet-{}", b.id);
    assert!(
        b.internal_network(&net),
        "could not make the test's network"
    );
    let ip = git_server(b, &net)?;
    let url = format!("git://{ip}/o.git");
    b.env
        .git(&b.env.repo, &["remote", "set-url", "origin", &url]);
    b.env.extra_env.push(("TREEBOX_NETWORK".into(), net));
    Some(url)
}

/// Commit in box `name` and push its branch to origin from inside; the commit.
pub(crate) fn commit_and_push(b: &Boxed, name: &str) -> String {
    b.commit_inside(
        name,
        "echo w > pushed.txt && git add pushed.txt && git commit -qm pushed && git push -q origin HEAD",
    )
}

/// The commit the test's git server has for `branch`.
pub(crate) fn on_server(b: &Boxed, branch: &str) -> String {
    let out = b.engine(&[
        "exec",
        &format!("tbsrv-git-{}", b.id),
        "git",
        "--git-dir=/srv/o.git",
        "rev-parse",
        &format!("refs/heads/{branch}"),
    ]);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_sandboxed_worktree_pushes_to_origin_and_the_guard_still_binds() {
    each_engine(|mut b| {
        let Some(url) = origin_on_a_server(&mut b) else {
            return;
        };
        let env = &b.env;
        env.treebox(&["create", "pushy", "--no-fetch", "--no-launch"])
            .ok();
        // origin inside is the user's origin.
        let inside = b
            .exec(&["pushy", "--", "git", "remote", "get-url", "origin"])
            .ok()
            .stdout
            .trim()
            .to_string();
        assert_eq!(inside, url);
        let tip = commit_and_push(&b, "pushy");
        assert_eq!(on_server(&b, "pushy"), tip);
        // The guard refuses a placeholder branch on the way to origin.
        let r = b.exec(&[
            "pushy",
            "--",
            "sh",
            "-c",
            "git switch -q -c treebox/tmp && git push origin HEAD",
        ]);
        assert_ne!(r.code, 0, "{r:?}");
        assert!(r.stderr.contains("git branch -m"), "{r:?}");
        b.exec(&["pushy", "--", "git", "switch", "-q", "pushy"])
            .ok();
        // `down` asks origin (once) before calling the work unreturned: when the host
        // reaches the server, the pushed work is origin's and `down` needs no force;
        // when it cannot, the work is only in the box as far as the host knows.
        let host_reaches = env
            .command("timeout", &env.repo)
            .args(["5", "git", "ls-remote", &url])
            .env("GIT_TERMINAL_PROMPT", "0")
            .output()
            .unwrap()
            .status
            .success();
        let r = env.sandbox(&["down", "pushy"]);
        if host_reaches {
            r.ok();
            assert_eq!(
                env.git(&env.repo, &["rev-parse", "refs/remotes/origin/pushy"])
                    .trim(),
                tip
            );
        } else {
            r.code(5);
            env.sandbox(&["down", "-f", "pushy"]).ok();
        }
        assert!(!env.box_path("pushy").exists());
    });
}

/// A container worktree made by an earlier version: a worktree of the user's repo
/// whose record names a container runner and no bare clone.
#[test]
fn a_container_worktree_of_an_earlier_version_is_named_unsafe() {
    each_engine(|b| {
        let env = &b.env;
        env.treebox(&["create", "old", "--isolation", "host", "--no-launch"])
            .ok();
        let path = env.box_state("old").join("record.json");
        let mut rec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(rec.get("bareClone").is_none());
        rec["runner"] = b.engine.into();
        rec["template"] = "test".into();
        std::fs::write(&path, serde_json::to_string_pretty(&rec).unwrap()).unwrap();

        let doc = env.treebox(&["doctor", "--json"]).json();
        let check = crate::env::named(&doc, "checks", "boxes");
        assert_eq!(check["status"], "fail", "{check}");
        let summary = check["summary"].as_str().unwrap();
        assert!(
            summary.contains("unsafe") && summary.contains("old"),
            "{check}"
        );
        let hint = check["hint"].as_str().unwrap();
        assert!(hint.contains("git treebox teardown old"), "{check}");
        assert!(hint.contains("--checkout old"), "{check}");
        env.treebox(&["doctor"]).code(1);

        // `enter` warns once.
        let first = env.treebox(&["enter", "old", "--print"]);
        first.ok();
        assert!(first.stderr.contains("unsafe"), "{first:?}");
        let second = env.treebox(&["enter", "old", "--print"]);
        second.ok();
        assert!(!second.stderr.contains("unsafe"), "{second:?}");

        // The way out: teardown keeps the branch; create --checkout makes it safe.
        env.treebox(&["teardown", "--force", "old"]).ok();
        env.treebox(&["create", "--checkout", "old", "--no-launch"])
            .ok();
        let rec = b.record("old");
        assert!(rec["bareClone"].is_string(), "{rec}");
        let doc = env.treebox(&["doctor", "--json"]).json();
        let boxes = crate::env::named(&doc, "checks", "boxes");
        assert_eq!(boxes["status"], "ok", "{boxes}");
        env.treebox(&["teardown", "--force", "old"]).ok();
    });
}

/// A new container box's index matches its files' stat data although create gave every
/// file to the agent (a chown, which changes each file's ctime): otherwise every host
/// status of the box (`list --dirty`, `ls`, `rm`) hashed every tracked file until the
/// agent's own git refreshed the index. The index stays the agent's.
#[test]
fn a_new_container_box_starts_with_its_index_in_step_with_its_files() {
    // The first box of an image and a later one (whose `create` runs nothing through
    // the launcher, so only its own wait keeps it from returning mid-hand-over).
    each_engine(|b: Boxed| {
        for leaf in ["fresh", "fresh2"] {
            handed_over_on_return(&b, leaf);
        }
        b.env.sandbox(&["down", "-f", "fresh"]).ok();
        b.env.sandbox(&["down", "-f", "fresh2"]).ok();
    });
}

/// `create --no-launch` of `leaf` hands back a box whose files are the agent's, whose
/// index is in step with them, and whose hand-over note the host has seen.
fn handed_over_on_return(b: &Boxed, leaf: &str) {
    {
        let doc = b.create_here(leaf);
        let path = PathBuf::from(doc["path"].as_str().unwrap());
        // Plain git on the host (a test may): which tracked files does the index
        // say changed, without refreshing it?
        let stale = b.env.git(
            &path,
            &["-c", "safe.directory=*", "diff-files", "--name-only"],
        );
        assert_eq!(
            stale.trim(),
            "",
            "{}: index out of step with: {stale}",
            b.engine
        );
        let index = b.env.git(
            &path,
            &[
                "-c",
                "safe.directory=*",
                "rev-parse",
                "--path-format=absolute",
                "--git-path",
                "index",
            ],
        );
        let owner = std::fs::metadata(index.trim()).unwrap().uid();
        let file_owner = std::fs::metadata(path.join("README.md")).unwrap().uid();
        assert_eq!(
            owner, file_owner,
            "{}: the index is not the agent's",
            b.engine
        );
        let agent = b.record(leaf)["container"]["user"]
            .as_str()
            .unwrap()
            .split(':')
            .next()
            .unwrap()
            .parse::<u32>()
            .unwrap();
        if b.engine == "docker" {
            // Rootless podman maps the agent to a subordinate uid of the user's.
            assert_eq!(
                file_owner, agent,
                "{}: {leaf}'s files are not the agent's",
                b.engine
            );
        }
        let status = record_path(&b.env, leaf).parent().unwrap().join("status");
        assert!(
            status.join("handed").is_file(),
            "{}: no hand-over note in {}",
            b.engine,
            status.display()
        );
        // Not asked about after its start (no engine call on the way to an agent): its
        // first process is learned, and kept, by the next program run in it.
        assert_eq!(b.record(leaf)["container"]["pid"], 0, "{}", b.engine);
        // The anchor made the launcher's marks dir, root's alone, before any launch
        // (a plain engine `exec` is none).
        let name = b.container(leaf);
        let marks = b.engine(&["exec", &name, "stat", "-c", "%a %u", "/run/treebox-run"]);
        assert_eq!(
            String::from_utf8_lossy(&marks.stdout).trim(),
            "700 0",
            "{}: {}",
            b.engine,
            String::from_utf8_lossy(&marks.stderr)
        );
        b.exec(&[leaf, "--", "true"]).ok();
        let out = b.engine(&["container", "inspect", "--format", "{{.State.Pid}}", &name]);
        let pid: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert_eq!(b.record(leaf)["container"]["pid"], pid, "{}", b.engine);
    }
}
