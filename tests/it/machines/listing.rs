//! Listing across machines over real OpenSSH (issue 41): `list`, `ls` and `watch` show
//! this machine's boxes and each machine's together; a machine that takes the
//! connection and never answers, or whose sshd is down, costs the listing its short
//! deadline — under 2 s, exit 0, one warning naming it — and shows its last-known
//! boxes marked stale; the dashboard never waits for a slow machine, and Enter on a
//! box there attaches as `enter NAME` does.

use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{machines_config, remote_agent, Sshd};
use crate::env::{write_exec, Run, TestEnv};

/// A box here, without an agent.
const HERE: &[&str] = &[
    "create",
    "here",
    "--no-launch",
    "--no-fetch",
    "--isolation",
    "host",
];

/// A machine of the config: the test's sshd, `path` its treebox there.
fn machine(sshd: &Sshd, path: &str) -> Value {
    json!({"ssh": "big", "sshCommand": sshd.ssh_command(), "path": path})
}

/// A test world with a box here (`here`, no agent) and the machine `big` (the test's
/// sshd, this build's treebox there, a stand-in agent), with the boxes `names` made on
/// it (`create --on`, each agent up there).
pub(super) fn world(names: &[&str]) -> Option<(TestEnv, Sshd, String)> {
    let mut env = TestEnv::new();
    let sshd = Sshd::start(&env)?;
    sshd.for_treebox(&mut env);
    remote_agent(&sshd);
    let bin = sshd.treebox_dir();
    machines_config(&env, json!({ "big": machine(&sshd, &bin) }));
    env.treebox(HERE).ok();
    for name in names {
        let made = env
            .treebox(&[
                "create",
                name,
                "--on",
                "big",
                "--isolation",
                "host",
                "--json",
            ])
            .ok()
            .json();
        assert_eq!(made["agent"]["state"], "ready", "{made}\n{}", sshd.log());
    }
    Some((env, sshd, bin))
}

/// `run` timed.
fn timed(run: impl FnOnce() -> Run) -> (Run, Duration) {
    let since = Instant::now();
    let r = run();
    (r, since.elapsed())
}

/// Each box of a `--json` document: (machine or `-`, name, stale).
fn sides(doc: &Value) -> Vec<(String, String, bool)> {
    let mut out: Vec<(String, String, bool)> = doc["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            assert!(b["stale"].is_null() || b["stale"] == true, "{b}");
            (
                b["machine"].as_str().unwrap_or("-").to_string(),
                b["name"].as_str().unwrap().to_string(),
                b["stale"] == true,
            )
        })
        .collect();
    out.sort();
    out
}

fn side(machine: &str, name: &str, stale: bool) -> (String, String, bool) {
    (machine.to_string(), name.to_string(), stale)
}

/// The processes on this machine still talking to a machine of this test (an `ssh`
/// whose command runs the entry point there, under this test's control dir): none
/// once a listing has answered, whatever the machine did.
fn asking(env: &TestEnv) -> Vec<String> {
    let root = env.root().to_string_lossy().into_owned();
    let pids = crate::env::processes_where(|p| {
        let cmd = std::fs::read(p.join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd);
        cmd.contains("__treebox-remote") && cmd.contains(&root)
    });
    pids.iter()
        .map(|p| {
            let cmd = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmd).replace('\0', " ")
        })
        .collect()
}

/// `list`, `git sandbox ls`, `watch --once` and `git sandbox watch --once` (`--json`
/// each, schema-checked) show the box here and the box on `big` together, the far one
/// with its machine and as that machine says (its agent live and idle), none stale;
/// the tables and the screen add a column naming the machine. The first listing,
/// which sets up the shared connection, is well within the listing's deadline.
#[test]
fn list_ls_and_watch_show_both_sides_each_far_box_with_its_machine() {
    let Some((env, sshd, bin)) = world(&["feat/far"]) else {
        return;
    };
    // ssh through a wrapper that counts its starts.
    let starts = env.tmp.path().join("ssh-starts");
    let counting = env.tmp.path().join("counting-ssh");
    write_exec(
        &counting,
        &format!(
            "#!/bin/sh\necho \"$*\" >>'{}'\nexec {} \"$@\"\n",
            starts.display(),
            sshd.ssh_command()
        ),
    );
    let mut m = machine(&sshd, &bin);
    m["sshCommand"] = json!(counting.to_string_lossy());
    machines_config(&env, json!({ "big": m }));
    let started = || {
        std::fs::read_to_string(&starts)
            .unwrap_or_default()
            .lines()
            .count()
    };
    // Cold: no shared connection yet (the listing makes it), then warm.
    sshd.close_connections();
    let (cold, cold_took) = timed(|| env.treebox(&["list", "--json"]));
    assert_eq!(started(), 1, "the cold listing starts ssh once");
    let (warm, warm_took) = timed(|| env.treebox(&["list", "--json"]));
    // Warm, the call is a session opened on the shared connection: no ssh started.
    assert_eq!(started(), 1, "the warm listing started ssh");
    eprintln!("list across the machine: cold {cold_took:?}, warm {warm_took:?}");
    for r in [&cold, &warm] {
        let doc = r.ok().json();
        crate::schema::assert_valid("list", &doc, "list --json across machines");
        assert_eq!(
            sides(&doc),
            [side("-", "here", false), side("big", "feat--far", false)],
            "{r:?}"
        );
        assert!(r.stderr.is_empty(), "{r:?}");
    }
    assert!(cold_took < Duration::from_millis(1500), "{cold_took:?}");

    let ls = env.sandbox(&["ls", "--json"]).ok().json();
    crate::schema::assert_valid("sandbox-ls", &ls, "ls --json across machines");
    assert_eq!(
        sides(&ls),
        [side("-", "here", false), side("big", "feat--far", false)]
    );
    assert_eq!(
        crate::env::named(&ls, "boxes", "feat--far")["state"],
        "live"
    );

    for (what, r) in [
        ("watch", env.treebox(&["watch", "--once", "--json"])),
        ("sandbox watch", env.sandbox(&["watch", "--once", "--json"])),
    ] {
        let doc = r.ok().json();
        crate::schema::assert_valid("watch", &doc, what);
        assert_eq!(
            sides(&doc),
            [side("-", "here", false), side("big", "feat--far", false)],
            "{what}: {doc}"
        );
        let far = crate::env::named(&doc, "boxes", "feat--far");
        assert_eq!(far["session"], "live", "{what}: {far}");
        assert_eq!(far["agent"], "idle", "{what}: {far}");
        assert_eq!(far["box"], "wt", "{what}: {far}");
        assert!(
            PathBuf::from(far["path"].as_str().unwrap()).starts_with(&sshd.home),
            "{what}: {far}"
        );
        let main = env.repo.canonicalize().unwrap();
        assert_eq!(
            far["repo"],
            main.to_string_lossy().as_ref(),
            "{what}: {far}"
        );
        let here = crate::env::named(&doc, "boxes", "here");
        assert!(here.get("machine").is_none(), "{what}: {here}");
    }

    // The screen: an ON column, `-` here, `big` there.
    let screen = env.treebox(&["watch", "--once"]).ok().stdout.clone();
    assert!(screen.lines().nth(1).unwrap().contains(" ON "), "{screen}");
    let row = |name: &str| {
        screen
            .lines()
            .find(|l| l.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("no row {name}:\n{screen}"))
            .to_string()
    };
    assert!(row("feat--far").contains(" big "), "{screen}");
    assert!(row("here").contains(" - "), "{screen}");
    // Selected (sorted first), the far box's pane says where its screen is.
    assert!(screen.contains("on machine `big`"), "{screen}");
}

/// A machine that never answers — its treebox hangs, or its address takes the
/// connection and says nothing — and one whose sshd is stopped: `list`, `ls` and
/// `watch --once` each answer within 2 s, exit 0, with one warning naming it, and
/// show the boxes it listed last, each `"stale": true` (the table says `stale`);
/// a box treebox removed there since is not among them; the laptop's ssh is gone
/// when the listing answers; `enter` of a stale box says the machine is down (4).
#[test]
fn a_machine_that_hangs_or_is_down_leaves_its_last_boxes_stale_within_2s() {
    let Some((env, mut sshd, bin)) = world(&["feat/far", "feat/gone"]) else {
        return;
    };
    // Listed once while it answers; then one of its boxes removed through treebox.
    let both = env.treebox(&["list", "--json"]).ok().json();
    assert_eq!(sides(&both).len(), 3, "{both}");
    env.treebox(&["rm", "--force", "feat--gone"]).ok();
    let expected = [side("-", "here", false), side("big", "feat--far", true)];

    // Its treebox hangs (takes the request, never answers).
    let hangs = sshd.bin_dir("hangs");
    write_exec(
        &hangs.join("git-treebox"),
        "#!/bin/sh\ncat >/dev/null\nexec sleep 600\n",
    );
    let hangs = hangs.to_string_lossy().into_owned();
    machines_config(&env, json!({ "big": machine(&sshd, &hangs) }));
    check_unreached(&env, &expected, "did not answer within 1.5 s", "hangs");

    // Its address takes the connection and never says a word (no SSH banner).
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        while let Ok((conn, _)) = silent.accept() {
            held.push(conn);
        }
    });
    let mut m = machine(&sshd, &bin);
    m["sshCommand"] = json!(format!("{} -p {port}", sshd.ssh_command()));
    machines_config(&env, json!({ "big": m }));
    check_unreached(&env, &expected, "did not answer within 1.5 s", "silent");

    // Its sshd stopped, its connections gone.
    machines_config(&env, json!({ "big": machine(&sshd, &bin) }));
    sshd.stop();
    sshd.close_connections();
    check_unreached(&env, &expected, "`big` cannot be reached", "stopped");

    // A stale box cannot be entered: the machine is down (4), named.
    let e = env.treebox(&["enter", "-d", "feat--far"]);
    e.code(4);
    assert!(e.stderr.contains("machine `big`"), "{e:?}");
    assert!(e.stderr.contains("when it last answered"), "{e:?}");
}

/// `list --json`, `list`, `ls --json` and `watch --once --json` with `big` not
/// answering (`why` in its one warning, or in the document's `unreachable`): each
/// within 2 s, exit 0, `expected` boxes.
#[track_caller]
fn check_unreached(env: &TestEnv, expected: &[(String, String, bool)], why: &str, case: &str) {
    let commands: [(&str, bool, &[&str]); 5] = [
        ("list", true, &["list", "--json"]),
        ("list", true, &["list"]),
        ("sandbox-ls", false, &["ls", "--json"]),
        ("sandbox-ls", false, &["ls"]),
        ("watch", true, &["watch", "--once", "--json"]),
    ];
    for (schema, treebox, args) in commands {
        let (r, took) = timed(|| {
            if treebox {
                env.treebox(args)
            } else {
                env.sandbox(args)
            }
        });
        let what = format!("{case}: {args:?}");
        eprintln!("{what}: {took:?}");
        assert!(took < Duration::from_secs(2), "{what} took {took:?}");
        r.ok();
        assert_eq!(
            asking(env),
            Vec::<String>::new(),
            "{what}: ssh left running"
        );
        if args.contains(&"--json") {
            // The document says which machine it could not ask, and why.
            assert_eq!(r.stderr, "", "{what}");
            let doc = r.json();
            crate::schema::assert_valid(schema, &doc, &what);
            assert_eq!(sides(&doc), expected, "{what}: {doc}");
            let unreachable = doc["unreachable"].as_array().unwrap();
            assert_eq!(unreachable.len(), 1, "{what}: {doc}");
            assert_eq!(unreachable[0]["machine"], "big", "{what}: {doc}");
            let message = unreachable[0]["message"].as_str().unwrap();
            assert!(message.contains(why), "{what}: {message}");
            assert!(unreachable[0]["lastAnswer"].is_u64(), "{what}: {doc}");
        } else {
            // One warning line naming the machine.
            let warnings: Vec<&str> = r.stderr.lines().collect();
            assert_eq!(warnings.len(), 1, "{what}: {r:?}");
            assert!(
                warnings[0].contains("machine `big`") && warnings[0].contains(why),
                "{what}: {r:?}"
            );
            assert!(warnings[0].contains("marked stale"), "{what}: {r:?}");
            let row = r
                .stdout
                .lines()
                .find(|l| l.contains("feat--far"))
                .unwrap_or_else(|| panic!("{what}: no row\n{}", r.stdout));
            let stale = row.split_whitespace().any(|cell| cell == "stale");
            assert!(row.starts_with("big ") && stale, "{what}: {row}");
            assert!(!r.stdout.contains("feat--gone"), "{what}: {}", r.stdout);
        }
    }
}

/// The row of box `name` on a dashboard screen (with its ON column).
fn screen_row<'a>(screen: &'a str, name: &str) -> Option<&'a str> {
    screen.lines().find(|l| l.contains(&format!(" {name} ")))
}

/// The live dashboard, with a machine that answers and one that never does: the box
/// here shows before any machine's (the slow one holds up none of this machine's
/// rows), then the far box with its machine, the slow machine named in the title; `d`
/// on the far box says it is there; Enter attaches to its agent there, as `enter NAME`
/// does (its tmux there has a client), and detaching comes back to the dashboard; `q`
/// leaves no ssh behind, though the slow machine was being asked.
#[test]
fn the_dashboard_never_waits_for_a_slow_machine_and_enter_attaches_there() {
    let Some((env, sshd, bin)) = world(&["feat/far"]) else {
        return;
    };
    let hangs = sshd.bin_dir("hangs");
    write_exec(
        &hangs.join("git-treebox"),
        "#!/bin/sh\ncat >/dev/null\nexec sleep 600\n",
    );
    let hangs = hangs.to_string_lossy().into_owned();
    machines_config(
        &env,
        json!({ "big": machine(&sshd, &bin), "slow": machine(&sshd, &hangs) }),
    );
    let since = Instant::now();
    let pane = crate::watch::Pane::start(&env, "--no-notify");
    let first = pane.wait_for("the box here", |s| screen_row(s, "here").is_some());
    eprintln!("the box here shows after {:?}", since.elapsed());
    assert!(screen_row(&first, "feat--far").is_none(), "{first}");
    let s = pane.wait_for("the far box and the slow machine", |s| {
        screen_row(s, "feat--far").is_some() && s.contains("no answer: slow")
    });
    eprintln!("the far box shows after {:?}", since.elapsed());
    assert!(
        screen_row(&s, "feat--far").unwrap().contains(" big "),
        "{s}"
    );
    assert!(screen_row(&s, "here").unwrap().contains(" - "), "{s}");

    // The far box sorts first; the selection stayed on the box here: up to it.
    pane.keys(&["k", "d"]);
    pane.wait_for("d refused", |s| {
        s.contains("`feat--far` is on machine `big`: its diff is not shown here yet")
    });
    let socket = sshd.home.join(".local/state/treebox/tmux.sock");
    let clients = || {
        let out = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["list-clients", "-F", "#{session_name}"])
            .env_remove("TMUX")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    pane.keys(&["Enter"]);
    let waited = Instant::now();
    while !clients().contains("feat--far") {
        assert!(
            waited.elapsed() < Duration::from_secs(15),
            "no client there; the screen:\n{}",
            pane.wait_for("anything", |_| true)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // That machine's tmux has its default prefix: detach, back to the dashboard.
    pane.keys(&["C-b", "d"]);
    pane.wait_for("the dashboard again", |s| {
        s.contains("back from `feat--far` on machine `big`")
    });
    assert_eq!(clients(), "");
    pane.keys(&["q"]);
    let waited = Instant::now();
    while pane.exit_code().is_none() && waited.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(pane.exit_code(), Some(0));
    let waited = Instant::now();
    while !asking(&env).is_empty() && waited.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(asking(&env), Vec::<String>::new(), "ssh left running");
}
