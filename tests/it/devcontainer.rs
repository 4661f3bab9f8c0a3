//! `git treebox template import-devcontainer` (issue 43): the repository's dev
//! container, as committed at HEAD, imported into an operator-owned template behind a
//! plan and one agreement; what reaches the host refused, each key with its reason,
//! and nothing written; a box built on the template runs the file's lifecycle commands
//! in its container as the agent (nothing on the host) and keeps treebox's own agent
//! account and firewall; an agent that rewrites `.devcontainer/` in its box changes
//! nothing.

use std::path::PathBuf;

use crate::container::{on_docker, BASE};
use crate::env::TestEnv;

const FILE: &str = ".devcontainer/devcontainer.json";

/// The user's template `name`, where it would be.
fn template_dir(env: &TestEnv, name: &str) -> PathBuf {
    env.config_dir().join("treebox/templates").join(name)
}

fn import(env: &TestEnv, args: &[&str]) -> crate::env::Run {
    env.treebox(&[&["template", "import-devcontainer"], args].concat())
}

/// Commit [`python_project`] on `image` as the repository's dev container.
fn commit_python(env: &TestEnv, image: &str, message: &str) {
    env.commit_file(&env.repo, FILE, &python_project(image), message);
}

/// A Python project's dev container, written as such projects write it.
fn python_project(image: &str) -> String {
    format!(
        r#"// For format details, see https://aka.ms/devcontainer.json.
{{
  "name": "Python 3",
  "image": "{image}",
  // Features add tools from a registry: not here.
  "containerEnv": {{
    "APP_MODE": "dev",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
  }},
  "remoteUser": "vscode",
  "postCreateCommand": {{
    "marker": "id -u > /tmp/tb-devcontainer-post-create && echo created > ${{containerWorkspaceFolder}}/.post-created",
    "argv": ["sh", "-c", "echo $APP_MODE > /tmp/tb-devcontainer-env"],
  }},
  "postStartCommand": "date +%s >> /tmp/tb-devcontainer-started",
  // The app listens on 8000 inside; the database is another service's.
  "forwardPorts": [8000, "db:5432"],
  "customizations": {{ "vscode": {{ "extensions": ["ms-python.python"] }} }},
}}
"#
    )
}

#[test]
fn refused_keys_are_each_named_and_nothing_is_written() {
    let env = TestEnv::new();
    // Nothing committed: the work tree's file is never read.
    std::fs::create_dir_all(env.repo.join(".devcontainer")).unwrap();
    std::fs::write(env.repo.join(FILE), python_project("python:3.12")).unwrap();
    let r = import(&env, &["--yes"]);
    r.code(3);
    assert!(r.stderr.contains("HEAD has no"), "{r:?}");
    std::fs::remove_file(env.repo.join(FILE)).unwrap();

    for (text, key, why) in [
        (
            r#"{"image": "x", "features": {"ghcr.io/devcontainers/features/node:1": {},},}"#,
            "features",
            "ghcr.io/devcontainers/features/node:1",
        ),
        (
            r#"{"image": "x", /* host */ "initializeCommand": "touch /tmp/pwned"}"#,
            "initializeCommand",
            "runs on the host",
        ),
        (
            r#"{"image": "x", "remoteUser": "root"}"#,
            "remoteUser",
            "root",
        ),
        (
            r#"{"image": "x", "runArgs": ["--privileged"], "mounts": ["source=/,target=/host,type=bind"]}"#,
            "runArgs",
            "engine arguments",
        ),
        (
            r#"{"image": "x", "containerEnv": {"GH": "${localEnv:GITHUB_TOKEN}"}}"#,
            "containerEnv.GH",
            "variable of the host",
        ),
        (
            r#"{"build": {"dockerfile": "Dockerfile", "context": "../..", "args": {"V": "1"}}}"#,
            "build.context",
            "outside the repository",
        ),
    ] {
        env.commit_file(&env.repo, FILE, text, "dev container");
        let r = import(&env, &["probe", "--yes"]);
        r.code(2);
        assert!(
            r.stdout.contains(&format!("! {key}: refused: ")) && r.stdout.contains(why),
            "{key}: {r:?}"
        );
        assert!(r.stderr.contains("nothing was imported"), "{r:?}");
        assert!(!template_dir(&env, "probe").exists(), "{key}: written");
    }
}

#[test]
fn the_plan_is_agreed_once_and_a_change_is_shown_and_noticed() {
    let env = TestEnv::new();
    commit_python(&env, "python:3.12", "dev container");
    // Off a terminal, the plan is shown and nothing is written without --yes.
    let r = import(&env, &["py"]);
    r.code(5);
    assert!(
        r.stdout.contains("+ image: the base image: `python:3.12`"),
        "{r:?}"
    );
    assert!(
        r.stdout.contains("+ postCreateCommand: 2 commands"),
        "{r:?}"
    );
    assert!(r.stdout.contains("+ postStartCommand: 1 command"), "{r:?}");
    assert!(r.stdout.contains("- customizations: not used"), "{r:?}");
    assert!(r.stderr.contains("--yes"), "{r:?}");
    assert!(!template_dir(&env, "py").exists());

    let r = import(&env, &["py", "--yes"]);
    r.ok();
    let dir = template_dir(&env, "py");
    let spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("container.json")).unwrap())
            .unwrap();
    assert_eq!(spec["baseImage"], "python:3.12");
    assert_eq!(spec["env"]["APP_MODE"], "dev");
    assert_eq!(
        spec["postStart"][0],
        "date +%s >> /tmp/tb-devcontainer-started"
    );
    // treebox's own template underneath: its firewall and capabilities, its Dockerfile.
    assert_eq!(spec["firewall"]["script"], "init-firewall.sh");
    assert!(dir.join("Dockerfile").exists() && dir.join("init-firewall.sh").exists());
    let blob = env.git(&env.repo, &["rev-parse", &format!("HEAD:{FILE}")]);
    let record = std::fs::read_to_string(dir.join("devcontainer-import.json")).unwrap();
    assert!(record.contains(blob.trim()), "{record}");
    let listed = env.treebox(&["template", "list", "--json"]).ok().json();
    let py = crate::env::named(&listed, "templates", "py");
    assert_eq!(py["ok"], true, "{py}");
    let doctor = |env: &TestEnv| {
        let d = env.treebox(&["doctor", "--json"]).json();
        crate::env::named(&d, "checks", "devcontainer")
    };
    assert_eq!(doctor(&env)["status"], "ok", "{}", doctor(&env));

    // Committed again, changed: doctor says so; importing again shows what changed.
    commit_python(&env, "python:3.13", "newer python");
    let d = doctor(&env);
    assert_eq!(d["status"], "advisory", "{d}");
    assert!(
        d["summary"].as_str().unwrap().contains("has changed"),
        "{d}"
    );
    let r = import(&env, &["py"]);
    r.code(5);
    assert!(r.stdout.contains("- baseImage: \"python:3.12\""), "{r:?}");
    assert!(r.stdout.contains("+ baseImage: \"python:3.13\""), "{r:?}");
    import(&env, &["py", "--yes"]).ok();
    assert_eq!(doctor(&env)["status"], "ok");

    // A template of the user's own is not replaced unless asked.
    env.treebox(&["template", "init", "mine"]).ok();
    import(&env, &["mine", "--yes"]).code(5);
}

/// On a terminal the plan is asked about: `n` (or just Enter) writes nothing, a new
/// template or a change to one; `y` writes it.
#[test]
fn no_at_the_question_writes_nothing() {
    let env = TestEnv::new();
    commit_python(&env, "python:3.12", "dev container");
    let answer = |keys: &[&str]| {
        let pane = crate::watch::Pane::run(&env, "template import-devcontainer py");
        pane.wait_for("the question", |s| {
            s.contains("+ image: the base image") && s.contains("Write template `py`? [y/N]")
        });
        pane.keys(keys);
        let s = pane.wait_for("the answer", |_| pane.exit_code().is_some());
        (pane.exit_code(), s)
    };
    let (code, s) = answer(&["n", "Enter"]);
    assert_eq!(code, Some(0), "{s}");
    assert!(s.contains("nothing imported"), "{s}");
    assert!(
        !template_dir(&env, "py").exists(),
        "written after `n`:\n{s}"
    );
    let (code, s) = answer(&["Enter"]);
    assert_eq!(code, Some(0), "{s}");
    assert!(
        !template_dir(&env, "py").exists(),
        "written after Enter:\n{s}"
    );
    let (code, s) = answer(&["y", "Enter"]);
    assert_eq!(code, Some(0), "{s}");
    let spec = template_dir(&env, "py").join("container.json");
    let before = std::fs::read(&spec).unwrap();

    // A change, declined: the template stays as it was, byte for byte.
    commit_python(&env, "python:3.13", "newer python");
    let (code, s) = answer(&["n", "Enter"]);
    assert_eq!(code, Some(0), "{s}");
    assert!(s.contains("nothing imported"), "{s}");
    assert_eq!(std::fs::read(&spec).unwrap(), before);
}

/// As the operator of an offline machine would: no agent CLIs from npm (and no `gh`
/// on a base of its own, whose package source would be waited on); the test's label,
/// so the image goes with the test run; template `name` the boxes'.
fn offline(b: &crate::container::Boxed, dir: &std::path::Path, name: &str, no_gh: bool) {
    let path = dir.join("container.json");
    let mut spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    spec["buildArgs"]["INSTALL_AGENTS"] = "0".into();
    if no_gh {
        spec["buildArgs"]["INSTALL_GH"] = "0".into();
    }
    spec["buildArgs"]["TREEBOX_TEST_ID"] = b.id.clone().into();
    std::fs::write(&path, serde_json::to_string_pretty(&spec).unwrap()).unwrap();
    let dockerfile = dir.join("Dockerfile");
    let mut text = std::fs::read_to_string(&dockerfile).unwrap();
    text.push_str(&format!(
        "\nARG TREEBOX_TEST_ID\nLABEL org.treebox.test-id=\"{}\"\n",
        b.id
    ));
    std::fs::write(&dockerfile, text).unwrap();
    b.env.write_config(&format!(
        r#"{{"template": "{name}", "isolation": "docker"}}"#
    ));
}

#[test]
fn a_dockerfile_dev_container_is_built_first_with_treebox_template_on_top() {
    on_docker(|b| {
        let env = &b.env;
        // The repository's own Dockerfile (on the local test image), its build args, a
        // file it copies and one it does not.
        env.commit_file(
            &env.repo,
            ".devcontainer/Dockerfile",
            &format!(
                "# The project's toolchain.\nARG BASE={BASE}\nFROM ${{BASE}}\nARG GREETING=none\n\
                 COPY hello.txt /etc/tb-hello.txt\nRUN echo \"$GREETING\" > /etc/tb-greeting\n\
                 LABEL org.treebox.test-id=\"{}\"\n",
                b.id
            ),
            "dockerfile",
        );
        env.commit_file(
            &env.repo,
            ".devcontainer/hello.txt",
            "hello from the repo\n",
            "hello",
        );
        env.commit_file(&env.repo, ".devcontainer/notes.md", "not needed\n", "notes");
        env.commit_file(
            &env.repo,
            FILE,
            r#"{
  // Built from the repository's own Dockerfile.
  "build": {
    "dockerfile": "Dockerfile",
    "context": ".",
    "args": { "GREETING": "hi from args", },
  },
  "postCreateCommand": ["sh", "-c", "cat /etc/tb-greeting > /tmp/tb-dc-greeting"],
}"#,
            "dev container",
        );
        let r = import(env, &["built", "--yes"]);
        assert!(
            r.stdout
                .contains("+ build: the base image, built first from `.devcontainer/Dockerfile`"),
            "{r:?}"
        );
        r.ok();
        let dir = template_dir(env, "built");
        // Only what its COPY lines read, from the commit.
        assert_eq!(
            std::fs::read_to_string(dir.join("base/hello.txt")).unwrap(),
            "hello from the repo\n"
        );
        assert!(!dir.join("base/notes.md").exists());
        assert!(dir.join("base.Dockerfile").is_file());
        offline(&b, &dir, "built", true);

        b.create_here("web");
        let said = |cmd: &[&str]| {
            b.exec(&[&["web", "--"], cmd].concat())
                .ok()
                .stdout
                .trim()
                .to_string()
        };
        assert_eq!(said(&["cat", "/etc/tb-greeting"]), "hi from args");
        assert_eq!(said(&["cat", "/etc/tb-hello.txt"]), "hello from the repo");
        assert_eq!(said(&["cat", "/tmp/tb-dc-greeting"]), "hi from args");
        // treebox's template on top of it.
        assert_eq!(said(&["id", "-un"]), "agent");
        assert_eq!(
            said(&["stat", "-c", "%U", "/usr/local/sbin/treebox-init-firewall"]),
            "root"
        );
        assert!(!std::path::Path::new("/tmp/tb-dc-greeting").exists());

        // The base treebox built goes with the last box made on it, not before.
        let base = b.record("web")["container"]["baseImage"]
            .as_str()
            .expect("the record names the base it built")
            .to_string();
        let base_exists = || b.engine(&["image", "inspect", &base]).status.success();
        assert!(base_exists(), "{base}");
        // The dev container changed since the import: a new box on the template says so.
        env.commit_file(
            &env.repo,
            ".devcontainer/notes.md",
            "still not needed\n",
            "notes",
        );
        let made = env.treebox(&["create", "web2", "--no-launch"]);
        made.ok();
        assert!(!made.stderr.contains("has changed since"), "{made:?}");
        env.commit_file(
            &env.repo,
            FILE,
            r#"{ "build": { "dockerfile": "Dockerfile", "args": { "GREETING": "changed" } } }"#,
            "dev container changed",
        );
        let made = env.treebox(&["create", "web3", "--no-launch"]);
        made.ok();
        assert!(
            made.stderr.contains("the repository's dev container (.devcontainer/devcontainer.json) has changed since template `built` was imported from it: `git treebox template import-devcontainer built` shows what changed"),
            "{made:?}"
        );
        env.treebox(&["teardown", "--force", "web3"]).ok();
        b.env.treebox(&["teardown", "--force", "web"]).ok();
        assert!(base_exists(), "{base} went while box web2 is on it");
        b.env.treebox(&["teardown", "--force", "web2"]).ok();
        assert!(!base_exists(), "{base} stayed after the last box on it");
    });
}

#[test]
fn a_box_on_the_imported_template_runs_its_commands_inside_as_the_agent() {
    on_docker(|b| {
        let env = &b.env;
        env.commit_file(&env.repo, FILE, &python_project(BASE), "dev container");
        import(env, &["--yes"]).ok();
        // The repository's directory name, as the template's.
        let name = env
            .repo
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_lowercase();
        let dir = template_dir(env, &name);
        assert!(dir.is_dir(), "no template at {}", dir.display());
        offline(&b, &dir, &name, false);

        // Publishing needs a network that is not `--internal`: the test's own.
        let net = format!("treebox-dc-{}", b.id);
        assert!(b.engine(&["network", "create", &net]).status.success());
        struct Net<'a>(&'a crate::container::Boxed, String);
        impl Drop for Net<'_> {
            fn drop(&mut self) {
                let _ = self.0.env.treebox(&["teardown", "--force", "py"]);
                let _ = self.0.engine(&["network", "rm", &self.1]);
            }
        }
        let _net = Net(&b, net.clone());
        let mut c = env.command(crate::env::TREEBOX, &env.repo);
        c.args(["create", "py", "--no-launch", "--json"])
            .env("TREEBOX_NETWORK", &net);
        let made = crate::env::Run::from_output(c.output().unwrap());
        let made = made.ok().json();
        let box_path = PathBuf::from(made["path"].as_str().unwrap());
        // postCreateCommand ran inside, as the agent (never root); postStartCommand too.
        let uid = b.exec(&["py", "--", "cat", "/tmp/tb-devcontainer-post-create"]);
        let uid = uid.ok().stdout.trim().to_string();
        assert!(!uid.is_empty() && uid != "0", "postCreate as uid {uid:?}");
        let env_seen = b.exec(&["py", "--", "cat", "/tmp/tb-devcontainer-env"]);
        assert_eq!(env_seen.ok().stdout.trim(), "dev");
        b.exec(&["py", "--", "test", "-s", "/tmp/tb-devcontainer-started"])
            .ok();
        // postStartCommand runs again when the container is started again.
        b.exec(&["py", "--", "rm", "/tmp/tb-devcontainer-started"])
            .ok();
        let c = b.container("py");
        assert!(b.engine(&["stop", "-t", "0", &c]).status.success());
        env.treebox(&["enter", "py", "--print"]).ok();
        b.exec(&["py", "--", "test", "-s", "/tmp/tb-devcontainer-started"])
            .ok();
        // forwardPorts: the block's first port publishes 8000 inside, where the box's
        // programs are told to bind; `open` and `list --ports` name the block's port.
        let block = crate::ports::ports_of(env, "py");
        let inside = b.exec(&["py", "--", "sh", "-c", "echo $TREEBOX_PORT"]);
        assert_eq!(inside.ok().stdout.trim(), "8000");
        let mut c = env.command(crate::env::SANDBOX, &env.repo);
        c.args(["run", "py", "--", "sh", "-c"]).arg(
            "while true; do printf 'HTTP/1.0 200 OK\\r\\n\\r\\nfrom-8000' | nc -l -N \"$TREEBOX_HOST\" \"$TREEBOX_PORT\"; done",
        );
        let _server = crate::ports::Server::start(c);
        crate::ports::wait_for("the server on 8000", 30, || {
            crate::ports::listening_of(env, "py", "listening") == [block[0]]
        });
        // `open` first: the server (`nc` in a loop) stops listening for a moment after
        // each answer.
        let url = env.treebox(&["open", "py", "--print"]).ok().stdout.clone();
        assert_eq!(url.trim(), format!("http://127.0.0.1:{}/", block[0]));
        let answer = crate::ports::ask(&format!("127.0.0.1:{}", block[0])).unwrap_or_default();
        assert!(answer.contains("from-8000"), "{answer}");
        drop(_server);

        // ${containerWorkspaceFolder} was the box.
        assert_eq!(
            std::fs::read_to_string(box_path.join(".post-created")).unwrap(),
            "created\n"
        );
        // Nothing on the host.
        for marker in [
            "/tmp/tb-devcontainer-post-create",
            "/tmp/tb-devcontainer-env",
            "/tmp/tb-devcontainer-started",
        ] {
            assert!(
                !std::path::Path::new(marker).exists(),
                "{marker} on the host"
            );
        }
        // treebox's template on top: the agent is not root, the firewall script is
        // root's, and the agent cannot touch the rules.
        let id = b.exec(&["py", "--", "id", "-un"]);
        assert_eq!(id.ok().stdout.trim(), "agent");
        let owner = b.exec(&[
            "py",
            "--",
            "stat",
            "-c",
            "%U",
            "/usr/local/sbin/treebox-init-firewall",
        ]);
        assert_eq!(owner.ok().stdout.trim(), "root");
        assert_ne!(b.exec(&["py", "--", "iptables", "-F", "OUTPUT"]).code, 0);

        // The agent rewrites the dev container in its box: nothing changes here.
        let digest = crate::container::tree_digest(&dir);
        b.exec(&[
            "py",
            "--",
            "sh",
            "-c",
            "mkdir -p .devcontainer && printf '{\"image\":\"x\",\"initializeCommand\":\"touch /tmp/tb-pwned\"}' > .devcontainer/devcontainer.json && git add -A && git commit -qm evil",
        ])
        .ok();
        assert_eq!(crate::container::tree_digest(&dir), digest);
        let d = env.treebox(&["doctor", "--json"]).json();
        assert_eq!(
            crate::env::named(&d, "checks", "devcontainer")["status"],
            "ok",
            "{d}"
        );
        assert!(!std::path::Path::new("/tmp/tb-pwned").exists());

        // Removed outright (an engine's prune), the container is made again at the next
        // use: a new container, whose own files lack what postCreateCommand wrote, so
        // that runs again before postStartCommand.
        let c = b.container("py");
        assert!(b.engine(&["rm", "-f", &c]).status.success());
        let mut again = env.command(crate::env::TREEBOX, &env.repo);
        again
            .args(["enter", "py", "--print"])
            .env("TREEBOX_NETWORK", &net);
        crate::env::Run::from_output(again.output().unwrap()).ok();
        for made in [
            "/tmp/tb-devcontainer-post-create",
            "/tmp/tb-devcontainer-env",
            "/tmp/tb-devcontainer-started",
        ] {
            b.exec(&["py", "--", "test", "-s", made]).ok();
        }
    });
}
