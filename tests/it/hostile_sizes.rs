//! Hostile boxes, round 3, point 3 (SPEC §8.8): one box's oversized git file — a
//! sparse 4 GiB `packed-refs`, `index`, `HEAD` or `config`, which costs the box no
//! disk — makes that box `broken` and no command slow or hungry: `list`, `list
//! --dirty`, `git sandbox ls`, `doctor` and `run` of another box answer in seconds,
//! in the memory they take without it, and name the big box broken.
//!
//! Each command is measured alone: wall time, and its own peak resident memory, as
//! GNU `time` reports it (`%M`: `ru_maxrss` of its one child). Without `/usr/bin/time`
//! the test says so and takes `ru_maxrss` from `wait4` on the command itself, an upper
//! bound: a child spawned from the test runner starts with the runner's own peak.

use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::container::on_docker;
use crate::env::{named, Run, TestEnv, SANDBOX, TREEBOX};
use crate::hostile_boxes::state_of;

/// What the planted files are: 4 GiB, sparse.
const BIG: u64 = 4 << 30;

/// How long a command may take with an oversized box (a few boxes take well under a
/// second; today's code took minutes).
const QUICK: Duration = Duration::from_secs(5);

/// One command's answer, wall time and peak resident memory.
pub(crate) struct Measured {
    pub(crate) run: Run,
    pub(crate) took: Duration,
    /// Peak resident set, KiB.
    pub(crate) peak_kib: u64,
}

/// `m` within `limit` and `2 × base + slack_kib` of peak memory, `base` being the
/// same command's peak without the hostile payload; both figures printed either way.
#[track_caller]
pub(crate) fn bounded_beside(
    what: &str,
    m: &Measured,
    base: &Measured,
    limit: Duration,
    slack_kib: u64,
) {
    let said = format!(
        "{what}: {:?} and {} KiB (baseline: {:?} and {} KiB)",
        m.took, m.peak_kib, base.took, base.peak_kib
    );
    eprintln!("{said}");
    assert!(m.took < limit, "too slow: {said}\n{:?}", m.run);
    assert!(
        m.peak_kib <= 2 * base.peak_kib + slack_kib,
        "too hungry: {said}"
    );
}

/// GNU `time`, which measures its child's peak resident memory alone.
const GNU_TIME: &str = "/usr/bin/time";

/// The data segment a measured command may have (`prlimit --data`): a regression
/// that reads a hostile box whole fails its allocation, and the test, instead of
/// exhausting the machine. The bounded commands take tens of MB.
const DATA_LIMIT: u64 = 2 << 30;

/// `bin args` in the repository, measured; killed after 60 s (an answer then is a
/// failure of the test, with its figures), its data segment within [`DATA_LIMIT`].
pub(crate) fn measured(env: &TestEnv, bin: &str, args: &[&str]) -> Measured {
    use std::os::unix::process::CommandExt;
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let report = env
        .tmp
        .path()
        .join(format!("peak-{}", N.fetch_add(1, Ordering::Relaxed)));
    let gnu_time = Path::new(GNU_TIME).is_file();
    let mut cmd = if gnu_time {
        let mut c = env.command(GNU_TIME, &env.repo);
        c.args(["-f", "%M", "-o"]).arg(&report).arg(bin);
        c
    } else {
        eprintln!(
            "note: {GNU_TIME} is not installed (Debian: time); peak memory is an upper bound"
        );
        env.command(bin, &env.repo)
    };
    let limit = libc::rlimit {
        rlim_cur: DATA_LIMIT,
        rlim_max: DATA_LIMIT,
    };
    // SAFETY: setrlimit is async-signal-safe, and `limit` is a plain value copied in.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_DATA, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    // Reaped by `wait4` below, which is what gives its resource usage.
    #[allow(clippy::zombie_processes)]
    let mut child = cmd
        .args(args)
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: a plain C struct, all zeroes is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our child, not yet reaped; the pointers are valid.
        let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if got == pid {
            break;
        }
        assert_eq!(got, 0, "wait4: {}", std::io::Error::last_os_error());
        if start.elapsed() > Duration::from_secs(60) {
            // SAFETY: the child's own process group (`process_group(0)`).
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let took = start.elapsed();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    let peak_kib = match gnu_time {
        // The last line (a signalled command gets a line before it).
        true => std::fs::read_to_string(&report)
            .ok()
            .and_then(|t| t.lines().last()?.trim().parse().ok())
            .unwrap_or(u64::MAX),
        false => u64::try_from(usage.ru_maxrss).unwrap(),
    };
    let _ = std::fs::remove_file(&report);
    Measured {
        run: Run {
            code,
            stdout: out.join().unwrap(),
            stderr: err.join().unwrap(),
        },
        took,
        peak_kib,
    }
}

/// Make `file` [`BIG`] bytes, sparse, keeping what it starts with — the start git
/// checks (a `packed-refs` header and ref, an index's signature) — as a box would: a
/// file of zeroes alone is junk, refused on its first bytes. A config gets 80 KiB of
/// comments first, so its start reads as a config however far one looks.
pub(crate) fn oversize(file: &Path) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(file)
        .unwrap();
    let name = file.file_name().unwrap().to_string_lossy();
    if name.starts_with("config") {
        f.write_all(&b"# padding\n".repeat(8 << 10)).unwrap();
    }
    f.set_len(BIG).unwrap();
}

/// The commands that read every box, each as `(bin, args)`.
fn every_box_commands(other: &str) -> Vec<(&'static str, Vec<String>)> {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        (TREEBOX, v(&["list", "--json"])),
        (TREEBOX, v(&["list"])),
        (TREEBOX, v(&["list", "--dirty", "--json"])),
        (SANDBOX, v(&["ls", "--json"])),
        (TREEBOX, v(&["doctor", "--json"])),
        (SANDBOX, v(&["run", other, "--", "true"])),
    ]
}

/// Every command of [`every_box_commands`], measured: before the plant (the baseline),
/// after it with `plant` run in between. After: each answers as before, within
/// [`QUICK`] and twice the baseline's peak memory (plus 16 MiB: threads and allocator
/// slack of a process this small), and names each of `broken` broken, `ok` as before.
fn quick_and_lean(env: &TestEnv, plant: impl FnOnce(), broken: &[&str], ok: &[&str]) {
    let commands = every_box_commands(ok[0]);
    let run = |(bin, args): &(&str, Vec<String>)| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        measured(env, bin, &args)
    };
    let before: Vec<Measured> = commands.iter().map(run).collect();
    for m in &before {
        m.run.ok();
    }
    plant();
    for ((bin, args), was) in commands.iter().zip(&before) {
        let m = run(&(bin, args.clone()));
        let what = format!(
            "{} {args:?}",
            Path::new(bin).file_name().unwrap().to_string_lossy()
        );
        bounded_beside(&what, &m, was, QUICK, 16 << 10);
        m.run.ok();
        let doc = || m.run.json();
        match args[0].as_str() {
            "list" if args.len() > 1 => {
                for name in broken {
                    assert_eq!(state_of(&doc(), name), "broken", "{what}");
                }
                for name in ok {
                    assert_eq!(state_of(&doc(), name), "ok", "{what}");
                    assert_eq!(state_of(&doc(), name), state_of(&was.run.json(), name));
                }
            }
            "ls" => {
                for name in broken {
                    assert_eq!(state_of(&doc(), name), "broken", "{what}");
                }
                for name in ok {
                    assert_eq!(state_of(&doc(), name), state_of(&was.run.json(), name));
                }
            }
            "doctor" => {
                let check = named(&doc(), "checks", "boxes");
                let summary = check["summary"].as_str().unwrap();
                assert!(summary.starts_with("broken box(es): "), "{check}");
                for name in broken {
                    assert!(summary.contains(name), "{name} not named: {check}");
                }
                let q = broken.iter().min().unwrap();
                let hint = format!("teardown --force {q}");
                assert!(check["hint"].as_str().unwrap().contains(&hint), "{check}");
            }
            _ => {}
        }
    }
}

/// A clone box with a 4 GiB sparse `packed-refs` (libgit2 read it whole on every
/// `list`): broken, and the worktree and clone boxes beside it listed as before.
#[test]
fn a_huge_packed_refs_in_one_clone_breaks_that_box_alone() {
    let env = TestEnv::new();
    env.treebox(&["create", "wt", "--no-launch"]).ok();
    for name in ["cl", "big"] {
        env.treebox(&["create", name, "--git", "clone", "--no-launch"])
            .ok();
    }
    // The branch only packed, as `git pack-refs --all` in the box leaves it: HEAD's
    // ref is then read from packed-refs.
    env.git(&env.box_path("big"), &["pack-refs", "--all"]);
    let packed = env.box_path("big").join(".git/packed-refs");
    assert!(
        std::fs::metadata(&packed).unwrap().len() > 0,
        "no packed-refs"
    );
    quick_and_lean(&env, || oversize(&packed), &["big"], &["wt", "cl"]);
    // Refused by name, nothing read; removed by force.
    let r = measured(&env, SANDBOX, &["run", "big", "--", "true"]);
    assert!(r.took < QUICK);
    r.run.code(5);
    assert!(r.run.stderr.contains("size cap"), "{:?}", r.run);
    assert!(r.run.stderr.contains("teardown --force big"), "{:?}", r.run);
    env.sandbox(&["down", "-f", "big"]).ok();
    assert!(!env.box_path("big").exists());
}

/// A 4 GiB sparse `index`, `HEAD` and `config` in clone boxes, and the same in worktree
/// boxes' registrations (`index`, `HEAD`, `config.worktree`): each box broken alone.
#[test]
fn a_huge_index_head_or_config_in_one_box_breaks_that_box_alone() {
    let env = TestEnv::new();
    let clones = [("ci", "index"), ("ch", "HEAD"), ("cc", "config")];
    let worktrees = [("wi", "index"), ("wh", "HEAD"), ("wc", "config.worktree")];
    for name in ["wt", "cl"].iter().chain(clones.iter().map(|(n, _)| n)) {
        let mode = if name.starts_with('c') {
            "clone"
        } else {
            "worktree"
        };
        env.treebox(&["create", name, "--git", mode, "--no-launch"])
            .ok();
    }
    for (name, _) in worktrees {
        env.treebox(&["create", name, "--no-launch"]).ok();
    }
    let files: Vec<_> = clones
        .iter()
        .map(|(n, f)| env.box_path(n).join(".git").join(f))
        .chain(
            worktrees
                .iter()
                .map(|(n, f)| env.repo.join(".git/worktrees").join(n).join(f)),
        )
        .collect();
    let broken = ["ci", "ch", "cc", "wi", "wh", "wc"];
    let plant = || files.iter().for_each(|f| oversize(f));
    quick_and_lean(&env, plant, &broken, &["wt", "cl"]);
    for name in broken {
        env.sandbox(&["down", "-f", name]).ok();
    }
}

/// A sandboxed worktree (a container box: its bare clone and registration are mounted
/// into the container) with a 4 GiB sparse `packed-refs` in its bare clone, another
/// with a 4 GiB `index` in its registration there: both broken, the other boxes listed
/// as before. Docker alone: the reads are the host's (see `sandboxed_hostile.rs`).
#[test]
fn a_huge_file_in_a_sandboxed_worktrees_git_data_breaks_that_box_alone() {
    on_docker(|b| {
        let env = &b.env;
        for name in ["sp", "si", "so"] {
            env.treebox(&["create", name, "--no-launch"]).ok();
        }
        env.treebox(&["create", "wt", "--isolation", "host", "--no-launch"])
            .ok();
        let bare = |leaf: &str| {
            std::path::PathBuf::from(b.record(leaf)["bareClone"].as_str().expect("bareClone"))
        };
        // As the agent would: the bare clone is its own (the user's git refuses it).
        b.exec(&["sp", "--", "git", "pack-refs", "--all"]).ok();
        let packed = bare("sp").join("packed-refs");
        let index = bare("si").join("worktrees/si/index");
        for f in [&packed, &index] {
            assert!(std::fs::metadata(f).unwrap().len() > 0, "{}", f.display());
        }
        let plant = || {
            oversize(&packed);
            oversize(&index);
        };
        quick_and_lean(env, plant, &["si", "sp"], &["wt", "so"]);
        for name in ["sp", "si"] {
            env.sandbox(&["down", "-f", name]).ok();
        }
    });
}

/// A measured command cannot take the machine's memory: past [`DATA_LIMIT`] its
/// allocation fails (and with it the command), while a small one runs.
#[test]
fn a_measured_command_is_held_to_its_data_limit() {
    let env = TestEnv::new();
    let small = measured(
        &env,
        "perl",
        &["-e", "my $x = 'a' x (64 << 20); print length $x"],
    );
    small.run.ok();
    let big = measured(
        &env,
        "perl",
        &["-e", "my $x = 'a' x (3 << 30); print length $x"],
    );
    assert_ne!(big.run.code, 0, "{:?}", big.run);
    assert!(big.peak_kib < DATA_LIMIT >> 10, "{} KiB", big.peak_kib);
}
