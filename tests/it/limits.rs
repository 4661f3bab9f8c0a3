//! Resource limits of container boxes (SPEC §7 "Limits"), against the real engines: the
//! user config's `limits` reach the container (`inspect` and the kernel's cgroup agree),
//! a fork bomb in one box stays in that box while the host and another box answer, a
//! memory hog is killed in its box, and `doctor` shows the limits.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::container::{each_engine, Boxed};
use crate::env::SANDBOX;

const PIDS: u64 = 64;
const MEMORY: u64 = 256 << 20;

/// `inspect --format FORMAT` of a container, trimmed.
fn inspect(b: &Boxed, container: &str, format: &str) -> String {
    let out = b.engine(&["container", "inspect", "--format", format, container]);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The host's cgroup directory of a container's pids controller (cgroup v1 or v2),
/// found from its first process.
fn pids_cgroup(b: &Boxed, container: &str) -> PathBuf {
    let pid = inspect(b, container, "{{.State.Pid}}");
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    let v1 = text.lines().find_map(|l| {
        let (_, rest) = l.split_once(':')?;
        let (controllers, path) = rest.split_once(':')?;
        controllers
            .split(',')
            .any(|c| c == "pids")
            .then(|| PathBuf::from("/sys/fs/cgroup/pids").join(path.trim_start_matches('/')))
    });
    v1.unwrap_or_else(|| {
        let path = text
            .lines()
            .find_map(|l| l.strip_prefix("0::"))
            .expect("a cgroup");
        PathBuf::from("/sys/fs/cgroup").join(path.trim_start_matches('/'))
    })
}

fn read_number(path: &PathBuf) -> u64 {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .trim()
        .parse()
        .unwrap()
}

/// How long `sandbox run LEAF -- true` takes; it must succeed.
fn run_true(b: &Boxed, leaf: &str) -> Duration {
    let since = Instant::now();
    b.exec(&[leaf, "--", "true"]).ok();
    since.elapsed()
}

#[test]
fn a_fork_bomb_in_one_box_leaves_the_host_and_other_boxes_answering() {
    each_engine(|b| {
        let env = &b.env;
        env.write_config(&format!(
            r#"{{"template": "test", "isolation": "{}", "limits": {{"pids": {PIDS}, "memory": "256m", "cpus": 1}}}}"#,
            b.engine
        ));
        env.treebox(&["create", "--no-launch", "bomb"]).ok();
        env.treebox(&["create", "--no-launch", "calm"]).ok();
        // Recorded with the box, as the config said.
        let rec = b.record("bomb");
        assert_eq!(
            rec["limits"],
            serde_json::json!({"pids": PIDS, "memory": MEMORY, "cpus": 1.0}),
            "{rec:#}"
        );
        // The engine made the container with them...
        let c = b.container("bomb");
        assert_eq!(
            inspect(&b, &c, "{{.HostConfig.PidsLimit}}"),
            PIDS.to_string()
        );
        assert_eq!(
            inspect(&b, &c, "{{.HostConfig.Memory}}"),
            MEMORY.to_string()
        );
        assert_eq!(inspect(&b, &c, "{{.HostConfig.NanoCpus}}"), "1000000000");
        // ...and the kernel holds the container to them.
        let cgroup = pids_cgroup(&b, &c);
        assert_eq!(read_number(&cgroup.join("pids.max")), PIDS, "{cgroup:?}");
        // doctor shows the limits new boxes get.
        let doc = env.treebox(&["doctor", "--json"]).json();
        let limits = crate::env::named(&doc, "checks", "limits");
        assert_eq!(limits["status"], "ok", "{limits}");
        assert_eq!(
            limits["summary"],
            "each new container box gets at most 64 processes, 256m memory, 1 CPU (config `limits`)"
        );
        // ...and which agent CLI each box's image holds (the test image: none), learned
        // from the image itself.
        let versions = crate::env::named(&doc, "checks", "versions");
        assert_eq!(versions["status"], "advisory", "{versions}");
        assert_eq!(
            versions["summary"], "no agent CLI in the image: bomb (claude), calm (claude)",
            "{versions}"
        );

        // A memory hog is killed in its box (tail keeps a line with no end in memory).
        let r = b.exec(&[
            "bomb",
            "--",
            "sh",
            "-c",
            "head -c 600M /dev/zero | tail -n 1 >/dev/null",
        ]);
        assert_ne!(r.code, 0, "a 600m hog lived in a 256m box: {r:?}");
        let calm_before = run_true(&b, "calm");

        // The fork bomb (bash's: bash tries a refused fork again, so it goes on at
        // the limit where dash's dies out): it forks until the box's limit stops it.
        let mut bomb = env
            .command(SANDBOX, &env.repo)
            .args(["run", "bomb", "--", "bash", "-c", ":(){ :|:& };:"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let since = Instant::now();
        let mut peak = 0;
        while since.elapsed() < Duration::from_secs(4) {
            peak = peak.max(read_number(&cgroup.join("pids.current")));
            std::thread::sleep(Duration::from_millis(50));
        }
        // The kernel refused its forks at the limit (`pids.events`: `max <refusals>`).
        let events = std::fs::read_to_string(cgroup.join("pids.events")).unwrap();
        let refused: u64 = events
            .lines()
            .find_map(|l| l.strip_prefix("max "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0);
        assert!(
            refused > 0,
            "the bomb never reached the limit: {events:?}, peak {peak}"
        );
        assert!(peak <= PIDS, "{peak} processes in a box limited to {PIDS}");
        // The host answers: a process starts within a second.
        let host = Instant::now();
        let st = Command::new("true").status().unwrap();
        let host = host.elapsed();
        assert!(st.success() && host < Duration::from_secs(1), "{host:?}");
        // So does another box.
        let calm = run_true(&b, "calm");
        assert!(calm < Duration::from_secs(10), "{calm:?}");
        eprintln!(
            "{}: peak {peak} processes, {refused} forks refused; host `true` {host:?}; other box `true` {calm:?} (before the bomb {calm_before:?})",
            b.engine
        );
        let still = read_number(&cgroup.join("pids.current"));
        eprintln!("{}: {still} processes in the bombed box after", b.engine);
        assert!(still <= PIDS);

        // Removing the box ends the bomb with its container.
        env.sandbox(&["down", "-f", "bomb"]).ok();
        let gone = b.engine(&["container", "inspect", &c]);
        assert!(
            !gone.status.success(),
            "the bombed container is still there"
        );
        assert!(!cgroup.exists(), "{cgroup:?} outlived its container");
        let since = Instant::now();
        while bomb.try_wait().unwrap().is_none() {
            if since.elapsed() > Duration::from_secs(30) {
                let _ = bomb.kill();
                panic!("`git sandbox run` of the bomb outlived its container");
            }
            std::thread::sleep(Duration::from_millis(50));
        }

        // A box made before limits existed: its record (without them) still loads and
        // its container runs, and doctor names it as running without limits.
        let path = env.box_state("calm").join("record.json");
        let mut old = b.record("calm");
        old.as_object_mut().unwrap().remove("limits");
        std::fs::write(&path, serde_json::to_vec_pretty(&old).unwrap()).unwrap();
        run_true(&b, "calm");
        let doc = env.treebox(&["doctor", "--json"]).json();
        let limits = crate::env::named(&doc, "checks", "limits");
        assert_eq!(limits["status"], "advisory", "{limits}");
        assert!(
            limits["summary"]
                .as_str()
                .unwrap()
                .ends_with("run without any: calm"),
            "{limits}"
        );
        assert!(
            limits["hint"]
                .as_str()
                .unwrap()
                .contains("git treebox teardown calm"),
            "{limits}"
        );
        env.sandbox(&["down", "-f", "calm"]).ok();
    });
}
