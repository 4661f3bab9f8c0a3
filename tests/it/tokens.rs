//! Forge tokens (SPEC §7, issue 17 points 1, 2, 5): a token reaches a box only when
//! forwarded by name (`--token-from`, config `forwardTokens`), and then only its
//! environment — never an image layer, the record or any output.

use crate::container::each_engine;
use crate::env::TestEnv;

fn log_lines(env: &TestEnv) -> Vec<String> {
    env.harness_log()
        .lines()
        .filter(|l| l.starts_with("gh_token="))
        .map(str::to_string)
        .collect()
}

#[test]
fn on_the_host_a_forge_token_reaches_the_agent_only_when_forwarded() {
    let mut env = TestEnv::new();
    env.extra_env
        .push(("GH_TOKEN".into(), "ghp_secret_host".into()));
    // Not forwarded: the agent does not inherit it.
    env.treebox(&["create", "plain"]).ok();
    assert_eq!(log_lines(&env), ["gh_token=unset"]);
    // Forwarded: the agent has it; the record and the output have only its name.
    let r = env.treebox(&["create", "fwd", "--token-from", "GH_TOKEN"]);
    r.ok();
    assert_eq!(
        log_lines(&env),
        ["gh_token=unset", "gh_token=ghp_secret_host"]
    );
    assert!(r.stderr.contains("GH_TOKEN forwarded"), "{r:?}");
    assert!(!r.stderr.contains("ghp_secret_host") && !r.stdout.contains("ghp_secret_host"));
    let record = std::fs::read_to_string(env.box_state("fwd").join("record.json")).unwrap();
    assert!(
        record.contains(r#""forwardTokens""#) && record.contains("GH_TOKEN"),
        "{record}"
    );
    assert!(!record.contains("ghp_secret_host"));
    // `enter` reuses the recorded choice.
    env.treebox(&["enter", "fwd"]).ok();
    assert_eq!(log_lines(&env).last().unwrap(), "gh_token=ghp_secret_host");
    env.treebox(&["enter", "plain"]).ok();
    assert_eq!(log_lines(&env).last().unwrap(), "gh_token=unset");
    // The plan names it, the JSON documents never hold the value.
    let plan = env
        .treebox(&[
            "create",
            "p",
            "--token-from",
            "GH_TOKEN",
            "--dry-run",
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(plan["forwardTokens"], serde_json::json!(["GH_TOKEN"]));
    for args in [
        vec!["create", "j", "--token-from", "GH_TOKEN", "--json"],
        vec!["list", "--json"],
        vec!["enter", "fwd", "--json"],
    ] {
        let r = env.treebox(&args);
        r.ok();
        assert!(!r.stdout.contains("ghp_secret_host"), "{args:?}: {r:?}");
    }
}

#[test]
fn a_bad_token_name_is_refused_and_writes_nothing() {
    let env = TestEnv::new();
    let before = env.snapshot();
    for bad in ["A-B", "1X", "", "X=Y"] {
        let r = env.treebox(&["create", "b", "--token-from", bad, "--no-launch"]);
        r.code(2);
        assert!(r.stderr.contains("--token-from GH_TOKEN"), "{bad}: {r:?}");
    }
    assert_eq!(env.snapshot(), before, "something was written");
    env.write_config(r#"{"forwardTokens": ["GH TOKEN"]}"#);
    let r = env.treebox(&["create", "b", "--no-launch"]);
    r.code(2);
    assert!(r.stderr.contains("forwardTokens"), "{r:?}");
}

#[test]
fn in_a_container_a_forwarded_token_is_in_the_environment_and_nowhere_else() {
    each_engine(|mut b| {
        let secret = format!("tok_{}_secret", b.id);
        b.env
            .extra_env
            .push(("FORGE_TEST_TOKEN".into(), secret.clone()));
        b.env
            .extra_env
            .push(("GH_TOKEN".into(), format!("ghp_{}", b.id)));
        let env = &b.env;
        let r = env.treebox(&[
            "create",
            "tk",
            "--git",
            "clone",
            "--token-from",
            "FORGE_TEST_TOKEN",
            "--no-launch",
            "--json",
        ]);
        r.ok();
        assert!(!r.stdout.contains(&secret) && !r.stderr.contains(&secret));
        let inside = b
            .exec(&["tk", "--", "printenv", "FORGE_TEST_TOKEN"])
            .ok()
            .stdout
            .trim()
            .to_string();
        assert_eq!(inside, secret);
        // Not forwarded: absent inside, though the starting environment has it.
        let gh = b.exec(&["tk", "--", "sh", "-c", "echo ${GH_TOKEN-unset}"]);
        assert_eq!(gh.ok().stdout.trim(), "unset");
        let rec = b.record("tk");
        let text = rec.to_string();
        assert!(!text.contains(&secret), "the record holds the token");
        let image = rec["container"]["image"].as_str().unwrap().to_string();
        for args in [
            vec!["history", "--no-trunc", image.as_str()],
            vec!["image", "inspect", image.as_str()],
        ] {
            let out = b.engine(&args);
            assert!(out.status.success(), "{args:?}");
            assert!(
                !String::from_utf8_lossy(&out.stdout).contains(&secret),
                "{args:?} shows the token"
            );
        }
        for args in [vec!["list", "--json"], vec!["enter", "tk", "--print"]] {
            let r = env.treebox(&args);
            assert!(!r.stdout.contains(&secret), "{args:?}");
        }
        env.treebox(&["teardown", "--force", "tk"]).ok();
    });
}

/// `--allow-forge` (issue 17 point 3): origin's forge hosts join a firewalled box's
/// allowlist, shown in the plan and never added silently; refused without a firewall
/// or without a forge.
#[test]
fn allow_forge_adds_origins_hosts_to_a_firewalled_box_only() {
    let Some(b) = crate::container::Boxed::new("docker") else {
        return;
    };
    let env = &b.env;
    env.git(
        &env.repo,
        &["remote", "set-url", "origin", "git@github.com:o/r.git"],
    );
    let plan = |extra: &[&str]| {
        let args = [
            &[
                "create",
                "f",
                "--firewall",
                "--no-fetch",
                "--dry-run",
                "--json",
            ][..],
            extra,
        ]
        .concat();
        env.treebox(&args).ok().json()
    };
    assert_eq!(
        plan(&["--allow-forge"])["forgeHosts"],
        serde_json::json!(["github.com", "api.github.com"])
    );
    assert_eq!(plan(&[])["forgeHosts"], serde_json::json!([]));
    let before = env.snapshot();
    let r = env.treebox(&["create", "f", "--allow-forge", "--no-fetch", "--no-launch"]);
    r.code(2);
    assert!(r.stderr.contains("--firewall"), "{r:?}");
    assert_eq!(env.snapshot(), before, "something was written");
    env.git(
        &env.repo,
        &["remote", "set-url", "origin", &env.origin.to_string_lossy()],
    );
    let before = env.snapshot();
    let r = env.treebox(&[
        "create",
        "f",
        "--firewall",
        "--allow-forge",
        "--no-fetch",
        "--no-launch",
    ]);
    r.code(2);
    assert!(r.stderr.contains("names no forge host"), "{r:?}");
    assert_eq!(env.snapshot(), before, "something was written");
}

/// A clone box delivers its own work: with origin on a git server of the test's own
/// (`--internal` network), a commit inside is pushed to origin from the box.
#[test]
fn a_clone_box_pushes_its_work_to_origin() {
    each_engine(|mut b| {
        if crate::sandboxed::origin_on_a_server(&mut b).is_none() {
            return;
        }
        b.env
            .treebox(&[
                "create",
                "deliver",
                "--git",
                "clone",
                "--no-fetch",
                "--no-launch",
            ])
            .ok();
        let tip = crate::sandboxed::commit_and_push(&b, "deliver");
        assert_eq!(crate::sandboxed::on_server(&b, "deliver"), tip);
        let env = &b.env;
        env.sandbox(&["down", "-f", "deliver"]).ok();
    });
}

/// Issue 17 point 4: with a GitHub token forwarded, the box's git asks `gh` (or, where
/// the image has no `gh`, the environment) for github.com credentials; without one, no
/// credential helper is configured, though the starting environment has the token.
#[test]
fn a_forwarded_github_token_is_the_boxs_git_credential_for_github_only() {
    each_engine(|mut b| {
        let token = format!("ghp_{}_helper", b.id);
        b.env.extra_env.push(("GH_TOKEN".into(), token.clone()));
        let env = &b.env;
        for (name, forward) in [("cred", true), ("plain", false)] {
            let mut args = vec!["create", name, "--git", "clone", "--no-launch"];
            if forward {
                args.extend(["--token-from", "GH_TOKEN"]);
            }
            env.treebox(&args).ok();
        }
        let fill = "printf 'protocol=https\\nhost=github.com\\n\\n' | GIT_TERMINAL_PROMPT=0 git credential fill";
        let out = b.exec(&["cred", "--", "sh", "-c", fill]);
        out.ok();
        assert!(
            out.stdout.contains(&format!("password={token}\n"))
                && out.stdout.contains("username=x-access-token\n"),
            "{out:?}"
        );
        // Scoped to github.com: another host gets nothing from it.
        let other = b.exec(&[
            "cred",
            "--",
            "sh",
            "-c",
            "printf 'protocol=https\\nhost=gitlab.com\\n\\n' | GIT_TERMINAL_PROMPT=0 git credential fill",
        ]);
        assert_ne!(other.code, 0, "{other:?}");
        assert!(!other.stdout.contains(&token), "{other:?}");
        // Where the image has `gh` the helper is `gh`'s; the same helper without `gh`
        // on PATH answers from the environment.
        let has_gh = b.exec(&["cred", "--", "sh", "-c", "command -v gh"]).code == 0;
        eprintln!("{}: gh in the test image: {has_gh}", b.engine);
        let without_gh = b.exec(&[
            "cred",
            "--",
            "sh",
            "-c",
            &format!(
                "mkdir -p /tmp/nogh && ln -sf \"$(command -v git)\" /tmp/nogh/git && PATH=/tmp/nogh && {fill}"
            ),
        ]);
        without_gh.ok();
        assert!(
            without_gh.stdout.contains(&format!("password={token}\n")),
            "{without_gh:?}"
        );
        // The helper is configuration the box was given, not a file it could rewrite.
        let cfg = b.exec(&[
            "cred",
            "--",
            "sh",
            "-c",
            "git config --show-origin --get-all credential.https://github.com.helper",
        ]);
        cfg.ok();
        assert!(cfg.stdout.contains("command line:"), "{cfg:?}");
        assert!(cfg.stdout.contains("gh auth git-credential"), "{cfg:?}");
        // Not forwarded: no helper at all, and git has nothing to give.
        let none = b.exec(&[
            "plain",
            "--",
            "sh",
            "-c",
            "git config --get-regexp '^credential\\.' ; echo \"count=${GIT_CONFIG_COUNT-unset}\"",
        ]);
        assert_eq!(none.ok().stdout.trim(), "count=unset", "{none:?}");
        let r = b.exec(&["plain", "--", "sh", "-c", fill]);
        assert_ne!(r.code, 0, "{r:?}");
        assert!(!r.stdout.contains(&token), "{r:?}");
        // The value is in neither record nor image.
        for leaf in ["cred", "plain"] {
            let rec = b.record(leaf);
            assert!(!rec.to_string().contains(&token));
            let image = rec["container"]["image"].as_str().unwrap().to_string();
            let h = b.engine(&["history", "--no-trunc", &image]);
            assert!(!String::from_utf8_lossy(&h.stdout).contains(&token));
        }
        env.sandbox(&["down", "-f", "cred"]).ok();
        env.sandbox(&["down", "-f", "plain"]).ok();
    });
}

/// Issue 17 point 6, `file://` origin: a box in a container sees only its own mounts
/// (SPEC §7), so an origin that is a path on the host is out of its reach — it is not
/// mounted, because a writable origin would let the box plant hooks that the user's own
/// pushes run (SPEC §8). `create` says so, with the way the work gets there: fetched
/// back into the user's repository, pushed from the host. That route works end to end.
#[test]
fn a_file_origin_is_out_of_a_containers_reach_and_the_work_reaches_it_from_the_host() {
    each_engine(|b| {
        let env = &b.env;
        let url = format!("file://{}", env.origin.display());
        env.git(&env.repo, &["remote", "set-url", "origin", &url]);
        let r = env.treebox(&["create", "deliver", "--git", "clone", "--no-launch"]);
        r.ok();
        assert!(
            r.stderr.contains("out of reach from inside the container")
                && r.stderr.contains("`git sandbox fetch deliver`")
                && r.stderr
                    .contains("`git push origin refs/hort/deliver/incoming:refs/heads/deliver`"),
            "{r:?}"
        );
        let inside = b.exec(&["deliver", "--", "git", "remote", "get-url", "origin"]);
        assert_eq!(inside.ok().stdout.trim(), url);
        let tip = b.commit_inside(
            "deliver",
            "echo w > delivered.txt && git add delivered.txt && git commit -qm delivered",
        );
        // From inside: git's own refusal, and origin unchanged.
        let push = b.exec(&["deliver", "--", "git", "push", "origin", "HEAD"]);
        assert_eq!(push.code, 128, "{push:?}");
        assert!(
            push.stderr
                .contains("does not appear to be a git repository"),
            "{push:?}"
        );
        let on_origin = |branch: &str| {
            env.git_run(&env.origin, &["rev-parse", "--verify", "-q", branch])
                .stdout
                .trim()
                .to_string()
        };
        assert_eq!(on_origin("refs/heads/deliver"), "");
        // The route the warning names.
        env.sandbox(&["fetch", "deliver"]).ok();
        env.git(
            &env.repo,
            &[
                "push",
                "-q",
                "origin",
                "refs/hort/deliver/incoming:refs/heads/deliver",
            ],
        );
        assert_eq!(on_origin("refs/heads/deliver"), tip);
        // Delivered: `down` needs no force.
        env.sandbox(&["down", "deliver"]).ok();
    });
}

/// Issue 17 point 6, the allowlist: origin's forge hosts are in a firewalled box's
/// applied firewall with `--allow-forge`, and not without. The forge is a server on the
/// test's own `--internal` network that answers to `github.com` and `api.github.com`
/// (network aliases), so nothing outside is reached; origin is
/// `https://github.com/o/r.git`.
#[test]
fn the_applied_firewall_holds_the_forge_only_with_allow_forge() {
    let Some(b) = crate::container::Boxed::new("docker") else {
        return;
    };
    let env = &b.env;
    let net = format!("tbnet-{}", b.id);
    assert!(
        b.internal_network(&net),
        "could not make the test's network"
    );
    let srv = format!("tbsrv-allowed-{}", b.id);
    let ip = b.listener(&srv, &net, &["github.com", "api.github.com"]);
    let probe = b.engine(&[
        "run", "--rm", "--network", &net, crate::container::BASE, "sh", "-c",
        "for i in 1 2 3 4 5 6 7 8 9 10; do nc -z -w 2 github.com 8080 && exit 0; sleep 0.5; done; exit 1",
    ]);
    if !probe.status.success() {
        eprintln!("note: docker: the test's forge cannot be reached by name here; skipped");
        return;
    }
    // The template allows nothing of its own (its hosts do not resolve on this network).
    std::fs::write(
        env.config_dir()
            .join("treebox/templates/test/allowlist.txt"),
        "# nothing: only what --allow-forge adds\n",
    )
    .unwrap();
    env.git(
        &env.repo,
        &["remote", "set-url", "origin", "https://github.com/o/r.git"],
    );
    let mut with_net = env.extra_env.clone();
    with_net.push(("TREEBOX_NETWORK".into(), net.clone()));
    let create = |name: &str, extra: &[&str]| {
        let mut c = env.command(crate::env::TREEBOX, &env.repo);
        for (k, v) in &with_net {
            c.env(k, v);
        }
        let base = [
            "create",
            name,
            "--git",
            "clone",
            "--firewall",
            "--no-fetch",
            "--no-launch",
        ];
        let out = c.args(base).args(extra).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        err
    };
    let reaches = |name: &str| {
        b.exec(&[name, "--", "sh", "-c", "nc -z -w 3 github.com 8080"])
            .code
            == 0
    };
    let rules = |name: &str| {
        let c = b.container(name);
        let out = b.engine(&["exec", "-u", "0", &c, "iptables", "-S"]);
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let accept = format!("-d {ip}/32 -j ACCEPT");
    let err = create("forge", &["--allow-forge"]);
    // A server origin: no word of a host path out of reach.
    assert!(!err.contains("out of reach"), "{err}");
    assert_eq!(
        b.record("forge")["forgeHosts"],
        serde_json::json!(["github.com", "api.github.com"])
    );
    assert!(rules("forge").contains(&accept), "{}", rules("forge"));
    assert!(
        reaches("forge"),
        "the forge must be reachable with --allow-forge"
    );
    create("closed", &[]);
    assert!(!rules("closed").contains(&accept), "{}", rules("closed"));
    assert!(
        !reaches("closed"),
        "the forge is reachable without --allow-forge"
    );
    // A restart loses the rules; the next use applies them again, forge included.
    let c = b.container("forge");
    assert!(b.engine(&["restart", "-t", "0", &c]).status.success());
    env.treebox(&["enter", "forge", "--print"]).ok();
    assert!(rules("forge").contains(&accept));
    assert!(reaches("forge"));
    assert!(!reaches("closed"));
    // Back to the local origin, so removal asks no outside server.
    env.git(
        &env.repo,
        &["remote", "set-url", "origin", &env.origin.to_string_lossy()],
    );
    env.sandbox(&["down", "-f", "forge"]).ok();
    env.sandbox(&["down", "-f", "closed"]).ok();
}

/// A Claude Code OAuth login file, as `claude` writes it.
fn oauth_login(expires: i64, refresh: &str) -> String {
    format!(
        r#"{{"claudeAiOauth":{{"accessToken":"at-{refresh}","refreshToken":"{refresh}","expiresAt":{expires},"scopes":["user:inference"]}}}}"#
    )
}

fn logins_check(env: &TestEnv) -> serde_json::Value {
    let doc = env.treebox(&["doctor", "--json"]).json();
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "logins")
        .cloned()
        .unwrap_or_else(|| panic!("{doc:#}"))
}

/// Issue 29 point 5: one OAuth login copied into many boxes logs them out in turn.
/// `doctor` names boxes sharing one login; `enter` never overwrites a box's newer
/// login; with `CLAUDE_CODE_OAUTH_TOKEN` a box gets the token and no copy; boxes run
/// with the auto-updater off. The credentials code is the same for both engines: docker
/// only, to keep the container tests few.
#[test]
fn claude_logins_in_container_boxes_are_not_churned() {
    let Some(mut b) = crate::container::Boxed::new("docker") else {
        return;
    };
    let claude = b.env.home.join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join(".credentials.json"),
        oauth_login(1_000, "refresh-one"),
    )
    .unwrap();
    b.env.treebox(&["create", "a", "--no-launch"]).ok();
    b.env.treebox(&["create", "b", "--no-launch"]).ok();
    let check = logins_check(&b.env);
    assert_eq!(check["status"], "advisory", "{check}");
    let summary = check["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("boxes a, b (and this machine) hold copies of one Claude login"),
        "{check}"
    );
    assert!(!check.to_string().contains("refresh-one"), "{check}");

    // Box `a` refreshes its login: `enter` keeps the newer one.
    let home = b.record("a")["container"]["home"]
        .as_str()
        .unwrap()
        .to_string();
    let file = format!("{home}/.claude/.credentials.json");
    let newer = oauth_login(2_000, "refresh-two");
    b.exec(&[
        "a",
        "--",
        "sh",
        "-c",
        &format!("printf '%s' '{newer}' > {file}"),
    ])
    .ok();
    b.env.treebox(&["enter", "a", "--print"]).ok();
    let inside = b.exec(&["a", "--", "cat", &file]);
    assert!(inside.ok().stdout.contains("refresh-two"), "{inside:?}");
    let auto = b.exec(&["a", "--", "sh", "-c", "echo $DISABLE_AUTOUPDATER"]);
    assert_eq!(auto.ok().stdout.trim(), "1");

    // The long-lived token: new boxes get it and no copy; `enter` takes the host's
    // login back out of a box that had a copy.
    let token = format!("sk-ant-oat01-test-{}", b.id);
    b.env
        .extra_env
        .push(("CLAUDE_CODE_OAUTH_TOKEN".into(), token.clone()));
    let env = &b.env;
    env.treebox(&["create", "t", "--no-launch"]).ok();
    let seen = b.exec(&[
        "t",
        "--",
        "sh",
        "-c",
        &format!("test ! -e {file} && echo $CLAUDE_CODE_OAUTH_TOKEN"),
    ]);
    assert_eq!(seen.ok().stdout.trim(), token);
    env.treebox(&["enter", "b", "--print"]).ok();
    b.exec(&["b", "--", "test", "!", "-e", &file]).ok();
    // `a` keeps its own login (not the host's any more), and nothing is shared now.
    let check = logins_check(env);
    assert_eq!(check["status"], "ok", "{check}");
    let summary = check["summary"].as_str().unwrap();
    for part in [
        "a: a copy of your Claude login",
        "b: CLAUDE_CODE_OAUTH_TOKEN",
        "t: CLAUDE_CODE_OAUTH_TOKEN",
    ] {
        assert!(summary.contains(part), "{part}: {check}");
    }
    assert!(!check.to_string().contains(&token), "{check}");
    for leaf in ["a", "b", "t"] {
        env.treebox(&["teardown", "--force", leaf]).ok();
    }
}
