//! A rogue agent inside a container box, round 3 (SPEC §7, §8.7, §8.9), against the
//! real engines: the agent is never root, every program treebox starts in the box is
//! the agent, its files are its own (so the user's git refuses to run what it
//! configured), secrets stay out of the engine's config, and a container treebox did
//! not record is never adopted.

use crate::container::{each_engine, Boxed};

/// The three system programs' directories and the firewall's files a root agent could
/// write (and the host or a root step would later run).
const SYSTEM: [&str; 8] = [
    "/usr/local/bin",
    "/usr/local/sbin",
    "/usr/bin",
    "/usr/sbin",
    "/bin",
    "/sbin",
    "/usr/local/sbin/treebox-init-firewall",
    "/etc/treebox/allowlist.txt",
];

fn host_uid() -> u32 {
    // SAFETY: getuid cannot fail and touches no memory.
    unsafe { libc::getuid() }
}

/// What `sh -c script` prints in box `leaf`, trimmed.
fn inside(b: &Boxed, leaf: &str, script: &str) -> String {
    b.exec(&[leaf, "--", "sh", "-c", script])
        .ok()
        .stdout
        .trim()
        .to_string()
}

/// The identity line a probe writes: uid, then the capability bounding set.
const PROBE: &str = "echo \"$(id -u) $(awk '/^CapBnd/ {print $2}' /proc/self/status)\"";

#[test]
fn the_agent_is_never_root_and_every_program_runs_as_it() {
    each_engine(|b| {
        let env = &b.env;
        // Setup and postCreate report who they ran as, into the checkout.
        env.write_config(&format!(
            r#"{{"template": "test", "isolation": "{}", "setup": ["{} > .setup-id"]}}"#,
            b.engine,
            PROBE.replace('\\', "\\\\").replace('"', "\\\"")
        ));
        let spec_path = env
            .config_dir()
            .join("treebox/templates/test/container.json");
        let mut spec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&spec_path).unwrap()).unwrap();
        spec["postCreate"] = serde_json::json!([format!("{PROBE} > .post-create-id")]);
        std::fs::write(&spec_path, spec.to_string()).unwrap();
        std::fs::write(env.repo.join(".env"), "SECRET=one\n").unwrap();
        env.treebox(&["create", "who", "--no-launch"]).ok();
        let checkout = env.box_path("who");
        // `.env` is the agent's to read, at create and when `enter` refreshes it.
        assert_eq!(inside(&b, "who", "cat .env"), "SECRET=one");
        std::fs::write(env.repo.join(".env"), "SECRET=two\n").unwrap();
        env.treebox(&["enter", "who", "--print"]).ok();
        assert_eq!(inside(&b, "who", "cat .env"), "SECRET=two");
        let (uid, caps) = {
            let line = inside(&b, "who", PROBE);
            let (u, c) = line.split_once(' ').unwrap();
            (u.parse::<u32>().unwrap(), c.to_string())
        };
        assert_ne!(uid, 0, "the agent runs as root");
        assert_ne!(uid, host_uid(), "the agent runs as the host user");
        assert_eq!(caps, "0000000000000000", "the agent holds capabilities");
        for file in [".setup-id", ".post-create-id"] {
            let text = std::fs::read_to_string(checkout.join(file)).unwrap();
            assert_eq!(text.trim(), format!("{uid} {caps}"), "{file}");
        }
        // The record says so, and the container runs no program as root but its anchor.
        assert_eq!(b.record("who")["container"]["launcher"], true);
        // Nothing the host or a root step runs is writable.
        for target in SYSTEM {
            let probe = format!(
                "if [ -d {target} ]; then touch {target}/planted; else echo x >> {target}; fi"
            );
            let r = b.exec(&["who", "--", "sh", "-c", &probe]);
            assert_ne!(r.code, 0, "{target} is writable by the agent: {r:?}");
        }
        assert_ne!(b.exec(&["who", "--", "sudo", "-n", "true"]).code, 0);
        // Its files are its own, the checkout's root and `.git` included.
        use std::os::unix::fs::MetadataExt;
        inside(
            &b,
            "who",
            "echo made > made.txt && mkdir -p sub && echo x > sub/f",
        );
        for p in ["", ".git", "made.txt", "sub", "sub/f"] {
            let m = std::fs::symlink_metadata(checkout.join(p)).unwrap();
            assert_eq!(m.uid(), uid, "{p:?} is not the agent's");
        }
        // ...and the host user can still read them and remove the box.
        assert_eq!(
            std::fs::read_to_string(checkout.join("made.txt")).unwrap(),
            "made\n"
        );
        env.treebox(&["teardown", "--force", "who"]).ok();
        assert!(!checkout.exists());
    });
}

/// SPEC §8.7: the box's git data is the agent's, so git's ownership check keeps the
/// user's own git — typed, or run by a prompt or an editor — from running anything the
/// agent configured there, even in a repository the agent made of its own.
#[test]
fn plain_git_on_the_host_runs_nothing_the_box_configured() {
    each_engine(|b| {
        let env = &b.env;
        env.treebox(&["create", "cfg", "--no-launch"]).ok();
        let checkout = env.box_path("cfg");
        let marker = env.root().join("ran");
        let m = marker.display();
        inside(
            &b,
            "cfg",
            &format!(
                "git config core.fsmonitor 'touch {m}-fsmonitor; false' && \
                 git config core.pager 'touch {m}-pager; cat' && \
                 git config diff.evil.textconv 'touch {m}-textconv; cat' && \
                 echo '* diff=evil' > .gitattributes && echo changed >> README.md && \
                 mkdir -p own && cd own && git init -q && \
                 git config core.fsmonitor 'touch {m}-own; false' && echo y > y"
            ),
        );
        for (dir, args) in [
            (checkout.clone(), vec!["status"]),
            (checkout.clone(), vec!["diff"]),
            (checkout.clone(), vec!["-p", "log", "-1"]),
            (checkout.join("own"), vec!["status"]),
        ] {
            // git refuses the repository (dubious ownership), or does not see one.
            let out = env.command("git", &dir).args(&args).output().unwrap();
            assert!(
                !out.status.success(),
                "{args:?} in {}: {out:?}",
                dir.display()
            );
        }
        for what in ["fsmonitor", "pager", "textconv", "own"] {
            assert!(
                !env.root().join(format!("ran-{what}")).exists(),
                "the host ran the box's {what}"
            );
        }
        // treebox's own reads still see the work.
        let list = env.treebox(&["list", "--dirty", "--json"]).ok().json();
        let boxes = list["boxes"].as_array().unwrap();
        assert!(boxes.iter().any(|x| x["name"] == "cfg"), "{list}");
        for what in ["fsmonitor", "pager", "textconv", "own"] {
            assert!(!env.root().join(format!("ran-{what}")).exists());
        }
        env.treebox(&["teardown", "--force", "cfg"]).ok();
    });
}

/// SPEC §8.9: keys and forwarded tokens reach the programs started in the box, and
/// appear nowhere in the engine's config of its container.
#[test]
fn keys_and_tokens_stay_out_of_the_engines_config() {
    each_engine(|mut b| {
        let key = format!("sk-ant-test-{}", b.id);
        let token = format!("ghp_test{}", b.id);
        b.env
            .extra_env
            .push(("ANTHROPIC_API_KEY".into(), key.clone()));
        b.env.extra_env.push(("GH_TOKEN".into(), token.clone()));
        // A provider setting reaches the agent the same way (SPEC §7).
        b.env.extra_env.push((
            "ANTHROPIC_BASE_URL".into(),
            "http://stand-in.invalid:9".into(),
        ));
        let env = &b.env;
        env.treebox(&["create", "keys", "--no-launch", "--token-from", "GH_TOKEN"])
            .ok();
        let c = b.container("keys");
        let inspect = b.engine(&["container", "inspect", &c]);
        assert!(inspect.status.success());
        let text = String::from_utf8_lossy(&inspect.stdout);
        assert!(!text.contains(&key), "the key is in `inspect`");
        assert!(!text.contains(&token), "the token is in `inspect`");
        assert_eq!(inside(&b, "keys", "echo $ANTHROPIC_API_KEY"), key);
        assert_eq!(inside(&b, "keys", "echo $GH_TOKEN"), token);
        assert_eq!(
            inside(&b, "keys", "echo $ANTHROPIC_BASE_URL"),
            "http://stand-in.invalid:9"
        );
        // The file is not the agent's to read.
        assert_ne!(
            b.exec(&["keys", "--", "cat", "/run/treebox-env/env"]).code,
            0
        );
        // Nor in the record or the JSON documents.
        let rec =
            std::fs::read_to_string(env.box_state("keys").join("record.json")).unwrap_or_default();
        let list = env.treebox(&["list", "--json"]).ok().stdout.clone();
        for doc in [&rec, &list] {
            assert!(!doc.contains(&key) && !doc.contains(&token));
        }
        // A renewed key reaches the next program once `enter` has run (the file is read
        // at each start), and the container's config still holds none.
        let renewed = format!("{key}-renewed");
        for (k, v) in b.env.extra_env.iter_mut() {
            if k == "ANTHROPIC_API_KEY" {
                v.clone_from(&renewed);
            }
        }
        let env = &b.env;
        env.treebox(&["enter", "keys", "--print"]).ok();
        assert_eq!(inside(&b, "keys", "echo $ANTHROPIC_API_KEY"), renewed);
        let inspect = b.engine(&["container", "inspect", &c]);
        assert!(!String::from_utf8_lossy(&inspect.stdout).contains(&renewed));
        env.treebox(&["teardown", "--force", "keys"]).ok();
    });
}

/// A container with the box's name that no record names (a create killed before it
/// recorded one, or anyone's) is refused with its id and never adopted; teardown removes
/// every container labelled for the box.
#[test]
fn a_container_treebox_did_not_record_is_never_adopted() {
    each_engine(|b| {
        let env = &b.env;
        // The name treebox would give box `orphan`, found from a box made first.
        env.treebox(&["create", "first", "--no-launch"]).ok();
        let name = b.container("first").replace("-first", "-orphan");
        let made = b.engine(&[
            "create",
            "--name",
            &name,
            "--label",
            &format!("org.treebox.repo={}", env.repo.display()),
            "--label",
            "org.treebox.box=orphan",
            crate::container::BASE,
            "sleep",
            "infinity",
        ]);
        assert!(made.status.success(), "{made:?}");
        let id = String::from_utf8_lossy(&made.stdout).trim().to_string();
        let r = env.treebox(&["create", "orphan", "--no-launch"]);
        r.code(5);
        assert!(r.stderr.contains("not adopted"), "{r:?}");
        assert!(r.stderr.contains(&format!("rm -f {id}")), "{r:?}");
        // The record holds no container; teardown still removes the labelled one.
        let rec = b.record("orphan");
        assert!(rec["container"].is_null(), "{rec}");
        env.treebox(&["teardown", "--force", "orphan"]).ok();
        assert!(!b.engine(&["container", "inspect", &id]).status.success());
        env.treebox(&["teardown", "--force", "first"]).ok();
    });
}

/// A host user who is not root (here uid 1500, in the docker socket's group) cannot
/// remove files the agent's uid owns; teardown gives them back through the container
/// first, whatever the agent did to their modes. Runs where the tests run as root
/// (to become that user) and docker's socket has a group.
#[test]
fn a_host_user_who_is_not_root_can_remove_what_the_agent_wrote() {
    use std::os::unix::fs::MetadataExt;
    if host_uid() != 0 {
        eprintln!("note: not root: cannot become another user; skipped");
        return;
    }
    let Ok(sock) = std::fs::metadata("/var/run/docker.sock") else {
        eprintln!("note: no docker socket; skipped");
        return;
    };
    let Some(b) = Boxed::new("docker") else {
        return;
    };
    let env = &b.env;
    let (uid, group) = (1500u32, sock.gid());
    env.give_to(uid);
    let as_user = |program: &str, args: &[&str]| env.run_as(uid, group, program, args);
    as_user(crate::env::TREEBOX, &["create", "mine", "--no-launch"]).ok();
    let checkout = env.box_path("mine");
    let state = env.box_state("mine");
    // The agent writes, and then takes every permission away from its files.
    as_user(
        crate::env::SANDBOX,
        &[
            "run",
            "mine",
            "--",
            "sh",
            "-c",
            "mkdir -p deep/er && echo x > deep/er/f && chmod 000 deep/er/f deep/er deep && chmod 500 .",
        ],
    )
    .ok();
    assert_ne!(std::fs::metadata(&checkout).unwrap().uid(), uid);
    as_user(crate::env::TREEBOX, &["teardown", "--force", "mine"]).ok();
    assert!(!checkout.exists(), "the checkout is left");
    assert!(!state.exists(), "the box's bookkeeping is left");
}
