//! A block of ports per box (SPEC §7b): real servers in real boxes, on the host and in
//! docker, reached (or not) from this machine.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::env::{named, TestEnv};

/// A port no one holds now, as the start of a range of the test's own: blocks the
/// other tests hand out (from 20000, in the shared ledger) stay clear of it.
fn a_free_range() -> u16 {
    let s = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    s.local_addr().unwrap().port()
}

pub(crate) fn ports_of(env: &TestEnv, leaf: &str) -> Vec<u16> {
    let row = named(&env.treebox(&["list", "--json"]).ok().json(), "boxes", leaf);
    row["ports"]
        .as_array()
        .map(|a| a.iter().map(|p| p.as_u64().unwrap() as u16).collect())
        .unwrap_or_default()
}

pub(crate) fn listening_of(env: &TestEnv, leaf: &str, key: &str) -> Vec<u16> {
    let doc = env.treebox(&["list", "--json", "--ports"]).ok().json();
    let row = named(&doc, "boxes", leaf);
    row[key]
        .as_array()
        .map(|a| a.iter().map(|p| p.as_u64().unwrap() as u16).collect())
        .unwrap_or_default()
}

/// What a server at `addr` answers to one request; `None` when nothing accepts.
pub(crate) fn ask(addr: &str) -> Option<String> {
    let mut s = TcpStream::connect_timeout(&addr.parse().ok()?, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET / HTTP/1.0\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out)
}

#[track_caller]
pub(crate) fn wait_for(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let since = Instant::now();
    while !done() {
        assert!(
            since.elapsed() < Duration::from_secs(secs),
            "gave up waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A command started in its own process group, killed with its group when dropped.
pub(crate) struct Server(Child);

impl Server {
    pub(crate) fn start(mut c: Command) -> Server {
        c.process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        Server(c.spawn().unwrap())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: signalling the group the child leads; no memory is touched.
        unsafe { libc::killpg(self.0.id() as i32, libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

#[test]
fn two_host_boxes_serve_on_their_own_ports_at_once() {
    let env = TestEnv::new();
    let from = a_free_range();
    env.write_config(&format!(r#"{{"ports": {{"count": 3, "from": {from}}}}}"#));
    env.treebox(&["create", "one", "--no-launch", "--no-fetch"])
        .ok();
    env.treebox(&["create", "two", "--no-launch", "--no-fetch"])
        .ok();
    let (a, b) = (ports_of(&env, "one"), ports_of(&env, "two"));
    assert_eq!(a.len(), 3, "{a:?}");
    assert_eq!(b.len(), 3, "{b:?}");
    assert!(a.iter().all(|p| !b.contains(p)), "{a:?} {b:?}");
    assert!(a.windows(2).all(|w| w[1] == w[0] + 1), "{a:?}");
    // Not listening yet: known, and empty; not read at all without `--ports`.
    let doc = env.treebox(&["list", "--json", "--ports"]).ok().json();
    assert_eq!(
        named(&doc, "boxes", "one")["listening"],
        serde_json::json!([])
    );
    let row = named(
        &env.treebox(&["list", "--json"]).ok().json(),
        "boxes",
        "one",
    );
    assert!(row.get("listening").is_none(), "{row}");

    // The same command in each box, as an agent would run it.
    let serve = r#"exec python3 -m http.server "$TREEBOX_PORT" --bind "$TREEBOX_HOST""#;
    let servers: Vec<Server> = ["one", "two"]
        .iter()
        .map(|leaf| {
            let mut c = env.command(crate::env::SANDBOX, &env.repo);
            c.args(["run", leaf, "--", "sh", "-c", serve]);
            Server::start(c)
        })
        .collect();
    for (leaf, ports) in [("one", &a), ("two", &b)] {
        wait_for(&format!("{leaf}'s server"), 20, || {
            listening_of(&env, leaf, "listening") == [ports[0]]
        });
        let answer = ask(&format!("127.0.0.1:{}", ports[0])).unwrap();
        assert!(answer.starts_with("HTTP/1.0 200"), "{answer}");
    }
    // `open` off a desktop (here, and in any script) prints the first that listens.
    let r = env.treebox(&["open", "one"]);
    r.ok();
    assert_eq!(r.stdout.trim(), format!("http://127.0.0.1:{}/", a[0]));
    let r = env.treebox(&["open", "two", &b[2].to_string()]);
    assert_eq!(r.stdout.trim(), format!("http://127.0.0.1:{}/", b[2]));
    assert!(r.stderr.contains("listens on port"), "{r:?}");
    env.treebox(&["open", "one", "80"]).code(2);
    // The table says which listen.
    let table = env.treebox(&["list", "--ports"]).ok().stdout.clone();
    assert!(table.contains("PORTS"), "{table}");
    assert!(!env.treebox(&["list"]).ok().stdout.contains("PORTS"));
    assert!(table.contains(&a[0].to_string()), "{table}");
    // `watch --once` reads them too, as `list --ports` does.
    let watched = env.treebox(&["watch", "--once", "--json"]).ok().json();
    let one = named(&watched, "boxes", "one");
    assert_eq!(one["listening"], serde_json::json!([a[0]]), "{one}");
    // The variables the box's programs get.
    let out = env
        .sandbox(&[
            "run",
            "one",
            "--",
            "sh",
            "-c",
            "echo $TREEBOX_PORT/$TREEBOX_PORTS/$TREEBOX_HOST",
        ])
        .ok()
        .stdout
        .clone();
    assert_eq!(
        out.trim(),
        format!("{}/{} {} {}/127.0.0.1", a[0], a[0], a[1], a[2])
    );
    drop(servers);
}

#[test]
fn a_port_another_program_holds_is_skipped_and_teardown_frees_the_block() {
    let env = TestEnv::new();
    let from = a_free_range();
    // Another program listens on the first port of the first block.
    let taken = std::net::TcpListener::bind(("127.0.0.1", from)).unwrap();
    env.write_config(&format!(r#"{{"ports": {{"count": 2, "from": {from}}}}}"#));
    env.treebox(&["create", "a", "--no-launch", "--no-fetch"])
        .ok();
    let a = ports_of(&env, "a");
    assert!(!a.contains(&from), "{a:?}");
    assert!(
        a[0] >= from + 2 && (a[0] - from).is_multiple_of(2),
        "{from}: {a:?}"
    );
    drop(taken);

    // Given back at teardown: the next box gets it again, and the ledger holds
    // nothing of the removed box.
    env.treebox(&["teardown", "--force", "a"]).ok();
    let ledger = crate::env::ports_ledger();
    let entries = std::fs::read_dir(&ledger).unwrap();
    let record = env.box_state("a").join("record.json");
    for e in entries.flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        assert!(
            !text.contains(record.to_str().unwrap()),
            "{}: {text}",
            e.path().display()
        );
    }
    env.treebox(&["create", "b", "--no-launch", "--no-fetch"])
        .ok();
    assert_eq!(ports_of(&env, "b")[0], from);
    // With no ports asked for, a box has none, and no variables.
    env.write_config(r#"{"ports": {"count": 0}}"#);
    env.treebox(&["create", "c", "--no-launch", "--no-fetch"])
        .ok();
    assert!(ports_of(&env, "c").is_empty());
    let r = env.treebox(&["open", "c"]);
    r.code(3);
    assert!(r.stderr.contains("has no ports"), "{r:?}");
    // Nothing listens on b's: said, with the way to start one.
    let r = env.treebox(&["open", "b"]);
    r.code(3);
    assert!(r.stderr.contains("TREEBOX_PORT"), "{r:?}");
    let out = env
        .sandbox(&["run", "c", "--", "sh", "-c", "echo x${TREEBOX_PORT}x"])
        .ok()
        .stdout
        .clone();
    assert_eq!(out.trim(), "xx");
}

#[test]
fn parallel_creates_never_share_a_block() {
    let env = TestEnv::new();
    let from = a_free_range();
    env.write_config(&format!(r#"{{"ports": {{"count": 2, "from": {from}}}}}"#));
    let names: Vec<String> = (0..6).map(|i| format!("p{i}")).collect();
    std::thread::scope(|s| {
        for n in &names {
            let env = &env;
            s.spawn(move || {
                env.treebox(&["create", n, "--no-launch", "--no-fetch"])
                    .ok()
                    .code
            });
        }
    });
    let mut all: Vec<u16> = names.iter().flat_map(|n| ports_of(&env, n)).collect();
    assert_eq!(all.len(), 12, "{all:?}");
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 12, "a port given twice: {all:?}");
}

#[test]
fn bad_ports_config_is_refused_and_nothing_is_written() {
    let env = TestEnv::new();
    for (json, key) in [
        (r#"{"ports": {"count": 65}}"#, "ports.count"),
        (r#"{"ports": {"count": -1}}"#, "ports.count"),
        (r#"{"ports": {"from": 80}}"#, "ports.from"),
        (r#"{"ports": {"from": 70000}}"#, "ports.from"),
        (r#"{"ports": {"form": 30000}}"#, "ports.from"),
        (r#"{"ports": 3}"#, "ports"),
    ] {
        env.write_config(json);
        let before = env.snapshot();
        let r = env.treebox(&["create", "x", "--no-launch", "--no-fetch"]);
        r.code(2);
        assert!(r.stderr.contains(key), "{json}: {r:?}");
        assert_eq!(env.snapshot(), before, "{json}");
    }
    // No free block left above `from`: refused with the way out, nothing made.
    env.write_config(r#"{"ports": {"count": 64, "from": 65500}}"#);
    let before = env.snapshot();
    let r = env.treebox(&["create", "x", "--no-launch", "--no-fetch"]);
    r.code(5);
    assert!(r.stderr.contains("no free block of 64 ports"), "{r:?}");
    assert!(r.stderr.contains("\"count\""), "{r:?}");
    assert_eq!(env.snapshot(), before);
}

/// The host's addresses other than loopback, this machine's and the engine bridge's.
fn other_addresses() -> Vec<String> {
    let out = Command::new("hostname").arg("-I").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter(|a| a.parse::<std::net::Ipv4Addr>().is_ok())
        .map(str::to_string)
        .collect()
}

#[test]
fn a_container_boxs_server_answers_on_the_hosts_loopback_and_nowhere_else() {
    crate::container::each_engine(|b| {
        let env = &b.env;
        // Publishing needs a network that is not `--internal`: the test's own.
        let net = format!("treebox-ports-{}", std::process::id());
        let out = b.engine(&["network", "create", &net]);
        assert!(out.status.success(), "{out:?}");
        // Gone however the test ends: the box first (its container holds the network).
        struct Net<'a>(&'a crate::container::Boxed, String);
        impl Drop for Net<'_> {
            fn drop(&mut self) {
                let _ = self.0.env.treebox(&["teardown", "--force", "web"]);
                let _ = self.0.engine(&["network", "rm", &self.1]);
            }
        }
        let _net = Net(&b, net.clone());
        let from = a_free_range();
        let cfg = std::fs::read_to_string(env.config_dir().join("treebox/config.json")).unwrap();
        let mut cfg: serde_json::Value = serde_json::from_str(&cfg).unwrap();
        cfg["ports"] = serde_json::json!({"count": 2, "from": from});
        env.write_config(&cfg.to_string());
        let mut c = env.command(crate::env::TREEBOX, &env.repo);
        c.args(["create", "web", "--no-launch", "--no-fetch"])
            .env("TREEBOX_NETWORK", &net);
        crate::env::Run::from_output(c.output().unwrap()).ok();
        let ports = ports_of(env, "web");
        assert_eq!(ports.len(), 2);
        let (p, q) = (ports[0], ports[1]);

        // One server where the box is told to bind, one on the container's loopback.
        let serve = |host: &str, port: u16| {
            format!("while true; do printf 'HTTP/1.0 200 OK\\r\\n\\r\\nfrom-the-box' | nc -l -N {host} {port}; done")
        };
        let mut c = env.command(crate::env::SANDBOX, &env.repo);
        c.args(["run", "web", "--", "sh", "-c"])
            .arg(serve("\"$TREEBOX_HOST\"", p));
        let _s1 = Server::start(c);
        let mut c = env.command(crate::env::SANDBOX, &env.repo);
        c.args(["run", "web", "--", "sh", "-c"])
            .arg(serve("127.0.0.1", q));
        let _s2 = Server::start(c);

        wait_for("the box's servers", 30, || {
            listening_of(env, "web", "listening") == [p]
                && listening_of(env, "web", "loopbackOnly") == [q]
        });
        let answer = ask(&format!("127.0.0.1:{p}")).expect("the host's loopback reaches it");
        assert!(answer.contains("from-the-box"), "{answer}");
        for addr in other_addresses() {
            assert!(
                ask(&format!("{addr}:{p}")).is_none(),
                "{addr}:{p} answers: published beyond loopback"
            );
        }
        let format = match b.engine {
            "podman" => "{{range .Subnets}}{{.Gateway}}{{end}}",
            _ => "{{range .IPAM.Config}}{{.Gateway}}{{end}}",
        };
        let gw = b.engine(&["network", "inspect", "--format", format, &net]);
        let gw = String::from_utf8_lossy(&gw.stdout).trim().to_string();
        assert!(!gw.is_empty(), "no gateway for {net}");
        assert!(ask(&format!("{gw}:{p}")).is_none(), "{gw}:{p} answers");
        // The table marks the one out of reach, and says why (once `nc`, which stops
        // listening for a moment after each answer, listens again).
        wait_for("the box's server again", 10, || {
            listening_of(env, "web", "listening") == [p]
        });
        let table = env.treebox(&["list", "--ports"]).ok().stdout.clone();
        assert!(table.contains(&format!("{p},{q}!")), "{table}");
        assert!(table.contains("TREEBOX_HOST"), "{table}");
        env.treebox(&["teardown", "--force", "web"]).ok();
        // The container's ports went with it.
        assert!(ask(&format!("127.0.0.1:{p}")).is_none());
    });
}

/// A port of the block taken after it was handed out, before the container starts
/// (here while its image builds): the engine refuses to publish it, and the box gets
/// another block instead of failing.
#[test]
fn a_port_taken_while_the_box_is_made_gets_the_box_another_block() {
    crate::container::on_docker(|b| {
        let env = &b.env;
        // The test's own ledger, to see its block the moment it is handed out.
        let ledger = env.root().join("ledger");
        let from = a_free_range();
        let cfg = std::fs::read_to_string(env.config_dir().join("treebox/config.json")).unwrap();
        let mut cfg: serde_json::Value = serde_json::from_str(&cfg).unwrap();
        cfg["ports"] = serde_json::json!({"count": 2, "from": from});
        env.write_config(&cfg.to_string());
        // An image build that takes a while: the window to take the port in.
        let dockerfile = env.config_dir().join("treebox/templates/test/Dockerfile");
        let mut text = std::fs::read_to_string(&dockerfile).unwrap();
        text.push_str(&format!("\nRUN sleep 3 && echo {}\n", b.id));
        std::fs::write(&dockerfile, text).unwrap();

        let mut c = env.command(crate::env::TREEBOX, &env.repo);
        c.args(["create", "late", "--no-launch", "--no-fetch"])
            .env("TREEBOX_PORTS_DIR", &ledger)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = c.spawn().unwrap();
        let mut taken = None;
        wait_for("the block handed out", 60, || {
            taken = std::fs::read_dir(&ledger).ok().and_then(|rd| {
                rd.flatten()
                    .find_map(|e| e.file_name().to_str()?.parse::<u16>().ok())
            });
            taken.is_some()
        });
        let first = taken.unwrap();
        let hold = std::net::TcpListener::bind(("127.0.0.1", first)).unwrap();
        let r = crate::env::Run::from_output(child.wait_with_output().unwrap());
        r.ok();
        assert!(r.stderr.contains(&format!("port(s) {first} ")), "{r:?}");
        let mut c = env.command(crate::env::TREEBOX, &env.repo);
        c.args(["list", "--json"]).env("TREEBOX_PORTS_DIR", &ledger);
        let doc = crate::env::Run::from_output(c.output().unwrap()).json();
        let ports = named(&doc, "boxes", "late")["ports"].clone();
        let ports: Vec<u16> = serde_json::from_value(ports).unwrap();
        assert_eq!(ports.len(), 2);
        assert!(
            !ports.contains(&first) && !ports.contains(&(first + 1)),
            "{ports:?}"
        );
        // The ledger holds the new block alone.
        let held: Vec<u16> = std::fs::read_dir(&ledger)
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .collect();
        assert_eq!(held, [ports[0]]);
        drop(hold);
        let mut c = env.command(crate::env::TREEBOX, &env.repo);
        c.args(["teardown", "--force", "late"])
            .env("TREEBOX_PORTS_DIR", &ledger);
        crate::env::Run::from_output(c.output().unwrap()).ok();
    });
}

/// `doctor` names the boxes that have no ports (made before boxes had them), with the
/// way out; and says so when the config turns ports off.
#[test]
fn doctor_names_boxes_without_ports() {
    let env = TestEnv::new();
    let from = a_free_range();
    env.write_config(r#"{"ports": {"count": 0}}"#);
    env.treebox(&["create", "old", "--no-launch", "--no-fetch"])
        .ok();
    let check = |doc: &serde_json::Value| named(doc, "checks", "ports");
    let doc = env.treebox(&["doctor", "--json"]).json();
    assert!(
        check(&doc)["summary"].as_str().unwrap().starts_with("off"),
        "{doc}"
    );
    env.write_config(&format!(r#"{{"ports": {{"count": 2, "from": {from}}}}}"#));
    env.treebox(&["create", "new", "--no-launch", "--no-fetch"])
        .ok();
    let doc = env.treebox(&["doctor", "--json"]).json();
    let c = check(&doc);
    assert_eq!(c["status"], "advisory", "{c}");
    let summary = c["summary"].as_str().unwrap();
    assert!(summary.contains("old") && !summary.contains("new,"), "{c}");
    assert!(
        c["hint"]
            .as_str()
            .unwrap()
            .contains("git sandbox fetch old"),
        "{c}"
    );
}
