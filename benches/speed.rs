//! `cargo bench --bench speed`: how much does treebox cost on top of plain git?
//!
//! A benchmark, not a test: it prints a table and writes `bench/results.json`; it never
//! fails on a missed target. Everything runs in a throwaway, hermetic environment
//! (temporary HOME, XDG dirs and global git config; no system git config).
//!
//! Measures, each as a *group* whose variants run interleaved (round-robin, with the
//! order rotated every round, so machine noise hits every variant alike):
//!
//! - `create`: raw `git worktree add -b raw-<i> <dir>/raw-<i> origin/main` vs
//!   `git treebox create bench-<i> --no-fetch --no-launch`, on a generated repository
//!   of ~5,000 files. Target: ratio of medians ≤ 1.25.
//! - `startup`: `git --version` (reference) vs `git-treebox --version` and
//!   `git-sandbox --version`. Target: median ≤ 10 ms.
//!
//! Knobs: `BENCH_ROUNDS` (create rounds, default 15), `BENCH_STARTUP_RUNS` (default 30),
//! `BENCH_CLEANUP=1` (remove the worktrees between rounds; see [`between_rounds`]).
//!
//! To add a measurement (list with 10/100/500 boxes, clone mode, docker exec, …), build
//! another [`Group`] — usually with [`Group::pair`] — and push it onto the list in
//! `main`.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

const TREEBOX: &str = env!("CARGO_BIN_EXE_git-treebox");
const SANDBOX: &str = env!("CARGO_BIN_EXE_git-sandbox");

const DIRS: usize = 50;
const FILES_PER_DIR: usize = 100;

// ---------------------------------------------------------------------------------
// Hermetic environment
// ---------------------------------------------------------------------------------

/// The throwaway world every child process runs in.
struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    path: OsString,
    gitconfig: PathBuf,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::Builder::new()
            .prefix("treebox-bench-")
            .tempdir()
            .expect("tempdir");
        let root = tmp.path().canonicalize().expect("canonical tempdir");
        let home = root.join("home");
        for d in ["home", "config", "state", "cache"] {
            fs::create_dir_all(root.join(d)).expect("mkdir");
        }
        let gitconfig = root.join("gitconfig");
        fs::write(
            &gitconfig,
            "[user]\n\tname = Bench\n\temail = bench@example.invalid\n\
             [init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n",
        )
        .expect("write gitconfig");
        // The built binaries first, so `git treebox` dispatches to this build.
        let bin_dir = Path::new(TREEBOX).parent().expect("bin dir").to_path_buf();
        let mut dirs = vec![bin_dir];
        if let Some(p) = std::env::var_os("PATH") {
            dirs.extend(std::env::split_paths(&p));
        }
        let path = std::env::join_paths(dirs).expect("PATH");
        World {
            _tmp: tmp,
            root,
            home,
            path,
            gitconfig,
        }
    }

    /// A command with a scrubbed, hermetic environment, run in `cwd`.
    fn cmd(&self, program: impl AsRef<std::ffi::OsStr>, cwd: &Path) -> Command {
        let mut c = Command::new(program);
        c.current_dir(cwd)
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("XDG_STATE_HOME", self.root.join("state"))
            .env("XDG_CACHE_HOME", self.root.join("cache"))
            .env("GIT_CONFIG_GLOBAL", &self.gitconfig)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("LC_ALL", "C")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        if let Some(t) = std::env::var_os("TMPDIR") {
            c.env("TMPDIR", t);
        }
        c
    }

    fn git(&self, cwd: &Path, args: &[&str]) -> String {
        let mut c = self.cmd("git", cwd);
        c.args(args);
        run_ok(&mut c)
    }
}

/// Run to completion; panic with stderr on failure. Returns stdout.
fn run_ok(c: &mut Command) -> String {
    let out = c.output().unwrap_or_else(|e| panic!("spawn {c:?}: {e}"));
    if !out.status.success() {
        panic!(
            "{c:?} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

// ---------------------------------------------------------------------------------
// The fixture repository
// ---------------------------------------------------------------------------------

/// Paths of the generated fixture: a bare `origin` and a clone with `origin/main`.
struct Fixture {
    clone: PathBuf,
    /// Where raw worktrees go (a sibling of the clone, same filesystem).
    raw_dir: PathBuf,
    files: usize,
}

/// Deterministic text: a few hundred bytes per file from a xorshift stream.
fn content(seed: u64) -> String {
    const WORDS: &[&str] = &[
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo",
    ];
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let len = 200 + (next() % 300) as usize;
    let mut s = String::with_capacity(len + 80);
    let _ = writeln!(s, "// file {seed}");
    while s.len() < len {
        let w = WORDS[(next() % WORDS.len() as u64) as usize];
        s.push_str(w);
        s.push(if next() % 8 == 0 { '\n' } else { ' ' });
    }
    s.push('\n');
    s
}

fn make_fixture(w: &World) -> Fixture {
    let seed = w.root.join("seed");
    fs::create_dir_all(&seed).expect("mkdir seed");
    w.git(&seed, &["init", "--quiet"]);
    let mut n = 0;
    for d in 0..DIRS {
        let dir = seed.join(format!("pkg{d:02}"));
        fs::create_dir_all(&dir).expect("mkdir");
        for f in 0..FILES_PER_DIR {
            fs::write(
                dir.join(format!("mod{f:03}.rs")),
                content((d * 1000 + f) as u64),
            )
            .expect("write");
            n += 1;
        }
    }
    fs::write(seed.join("README.md"), "# bench fixture\n").expect("write");
    n += 1;
    w.git(&seed, &["add", "-A"]);
    w.git(&seed, &["commit", "--quiet", "-m", "fixture"]);
    let root = w.root.to_str().expect("utf-8 tempdir");
    w.git(
        &w.root,
        &[
            "clone",
            "--quiet",
            "--bare",
            "seed",
            &format!("{root}/origin.git"),
        ],
    );
    w.git(
        &w.root,
        &["clone", "--quiet", "origin.git", &format!("{root}/clone")],
    );
    let raw_dir = w.root.join("raw");
    fs::create_dir_all(&raw_dir).expect("mkdir raw");
    Fixture {
        clone: w.root.join("clone"),
        raw_dir,
        files: n,
    }
}

/// Between create rounds (untimed): flush dirty pages so one round's writeback does not
/// land in the next. With `BENCH_CLEANUP=1`, first remove every linked worktree.
///
/// Cleanup is off by default: on ext4, `__ext4_new_inode` skips inodes deleted in the
/// last ~30 s (`recently_deleted`), so deleting 10,000 files per round makes the next
/// round's file creation several times slower for both variants — a measurement of
/// the filesystem, not of treebox. Keeping the boxes costs ~15 MB each.
fn between_rounds(w: &World, repo: &Path, cleanup: bool) {
    if cleanup {
        let list = w.git(repo, &["worktree", "list", "--porcelain"]);
        let main = repo.to_str().expect("utf-8");
        for line in list.lines() {
            if let Some(p) = line.strip_prefix("worktree ") {
                if p != main {
                    w.git(repo, &["worktree", "remove", "--force", "--force", p]);
                }
            }
        }
    }
    let _ = Command::new("sync").status();
}

// ---------------------------------------------------------------------------------
// Measurement
// ---------------------------------------------------------------------------------

type MakeCmd<'a> = Box<dyn FnMut(usize) -> Command + 'a>;

#[derive(Clone, Copy, Debug)]
enum Target {
    /// Reference row: no target.
    None,
    /// Median at most this many ms.
    MedianMs(f64),
    /// Median at most this multiple of the group's baseline median.
    Ratio(f64),
}

impl Target {
    fn describe(self) -> String {
        match self {
            Target::None => "—".into(),
            Target::MedianMs(ms) => format!("≤ {ms} ms"),
            Target::Ratio(r) => format!("≤ {r:.2}× raw"),
        }
    }
    fn json(self) -> Value {
        match self {
            Target::None => Value::Null,
            Target::MedianMs(ms) => json!({ "median_ms_max": ms }),
            Target::Ratio(r) => json!({ "ratio_max": r }),
        }
    }
}

/// One command line to time; called with a fresh index every run.
struct Variant<'a> {
    label: String,
    make: MakeCmd<'a>,
    target: Target,
}

impl<'a> Variant<'a> {
    fn new(label: &str, target: Target, make: impl FnMut(usize) -> Command + 'a) -> Self {
        Variant {
            label: label.into(),
            make: Box::new(make),
            target,
        }
    }
}

/// Variants timed together. The first is the baseline ("raw") the others are
/// compared against.
struct Group<'a> {
    name: String,
    rounds: usize,
    warmup: usize,
    variants: Vec<Variant<'a>>,
    /// Untimed, after every round (e.g. remove the worktrees just made).
    between: Option<Box<dyn FnMut() + 'a>>,
}

impl<'a> Group<'a> {
    /// The common shape: plain git vs treebox doing the same job.
    fn pair(name: &str, rounds: usize, raw: Variant<'a>, ours: Variant<'a>) -> Self {
        Group {
            name: name.into(),
            rounds,
            warmup: 1,
            variants: vec![raw, ours],
            between: None,
        }
    }
}

struct Stats {
    samples: Vec<Duration>,
}

impl Stats {
    /// In run order.
    fn ms(&self) -> Vec<f64> {
        self.samples.iter().map(|d| d.as_secs_f64() * 1e3).collect()
    }
    fn sorted_ms(&self) -> Vec<f64> {
        let mut v = self.ms();
        v.sort_by(f64::total_cmp);
        v
    }
    fn median_ms(&self) -> f64 {
        median(self.ms())
    }
    fn min_ms(&self) -> f64 {
        self.sorted_ms().first().copied().unwrap_or(f64::NAN)
    }
}

/// Time one run of `c` (spawn to exit, output captured). Panics if it fails.
fn time_once(mut c: Command) -> Duration {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let out = c.output().unwrap_or_else(|e| panic!("spawn {c:?}: {e}"));
    let took = start.elapsed();
    if !out.status.success() {
        panic!(
            "{c:?} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    took
}

/// Run every variant once per round, rotating the order each round, after `warmup`
/// untimed rounds. Indices passed to the command builders are unique per group.
fn measure_interleaved(g: &mut Group) -> Vec<Stats> {
    let n = g.variants.len();
    let mut stats: Vec<Stats> = (0..n).map(|_| Stats { samples: vec![] }).collect();
    for round in 0..g.warmup + g.rounds {
        let timed = round >= g.warmup;
        for k in 0..n {
            let v = (round + k) % n;
            let c = (g.variants[v].make)(round);
            let d = time_once(c);
            if timed {
                stats[v].samples.push(d);
            }
        }
        if let Some(b) = g.between.as_mut() {
            b();
        }
    }
    stats
}

// ---------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------

struct Row {
    group: String,
    measure: String,
    median: f64,
    min: f64,
    vs_raw: Option<f64>,
    /// Median over rounds of (this − baseline) in the same round: robust to drift.
    paired_delta: Option<f64>,
    target: Target,
    samples: Vec<f64>,
}

impl Row {
    fn meets(&self) -> Option<bool> {
        match self.target {
            Target::None => None,
            Target::MedianMs(ms) => Some(self.median <= ms),
            Target::Ratio(r) => self.vs_raw.map(|x| x <= r),
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn rows_for(g: &Group, stats: &[Stats]) -> Vec<Row> {
    let base = &stats[0];
    g.variants
        .iter()
        .zip(stats)
        .enumerate()
        .map(|(i, (v, s))| Row {
            group: g.name.clone(),
            measure: v.label.clone(),
            median: s.median_ms(),
            min: s.min_ms(),
            vs_raw: (i > 0).then(|| s.median_ms() / base.median_ms()),
            paired_delta: (i > 0)
                .then(|| median(s.ms().iter().zip(base.ms()).map(|(a, b)| a - b).collect())),
            target: v.target,
            samples: s.ms(),
        })
        .collect()
}

fn print_table(rows: &[Row]) {
    let head = ["measure", "median ms", "min ms", "vs raw", "target"];
    let body: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            let verdict = match r.meets() {
                Some(true) => " ok",
                Some(false) => " MISSED",
                None => "",
            };
            [
                r.measure.clone(),
                format!("{:.1}", r.median),
                format!("{:.1}", r.min),
                r.vs_raw.map_or("—".into(), |x| format!("{x:.2}×")),
                format!("{}{verdict}", r.target.describe()),
            ]
        })
        .collect();
    let mut width = head.map(|h| h.chars().count());
    for row in &body {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let parts: Vec<String> = cells
            .iter()
            .zip(width)
            .enumerate()
            .map(|(i, (c, w))| {
                let pad = " ".repeat(w - c.chars().count());
                if i == 1 || i == 2 || i == 3 {
                    format!("{pad}{c}")
                } else {
                    format!("{c}{pad}")
                }
            })
            .collect();
        println!("| {} |", parts.join(" | "));
    };
    line(&head.map(String::from));
    let rule: Vec<String> = width.iter().map(|w| "-".repeat(*w)).collect();
    println!("|-{}-|", rule.join("-|-"));
    for row in &body {
        line(row);
    }
    println!();
    for r in rows {
        if let Some(d) = r.paired_delta {
            println!(
                "{}: {} costs {d:+.1} ms over the baseline (median of same-round differences)",
                r.group, r.measure
            );
        }
    }
}

// ---------------------------------------------------------------------------------
// Machine info
// ---------------------------------------------------------------------------------

fn first_line(path: &str) -> String {
    fs::read_to_string(path)
        .ok()
        .and_then(|s| s.lines().next().map(str::to_string))
        .unwrap_or_default()
}

fn cpu_model() -> String {
    fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default()
}

/// UTC `YYYY-MM-DDTHH:MM:SSZ` from a Unix time (civil-from-days, proleptic Gregorian).
fn iso8601(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

// ---------------------------------------------------------------------------------

fn main() {
    let rounds = env_usize("BENCH_ROUNDS", 15);
    let startup_runs = env_usize("BENCH_STARTUP_RUNS", 30);
    let cleanup = std::env::var_os("BENCH_CLEANUP").is_some_and(|v| v == "1");

    let w = World::new();
    let git_version = w.git(&w.root, &["--version"]).trim().to_string();
    let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = first_line("/proc/version");
    let load_before = first_line("/proc/loadavg");
    eprintln!("treebox bench: {nproc} CPUs, {git_version}");
    eprintln!("kernel: {kernel}");

    let t = Instant::now();
    let fx = make_fixture(&w);
    eprintln!(
        "fixture: {} files in {:.1}s; {rounds} create rounds, {startup_runs} startup runs",
        fx.files,
        t.elapsed().as_secs_f64()
    );

    let mut groups: Vec<Group> = Vec::new();

    // create: raw `git worktree add` vs `git treebox create`.
    let mut create = Group::pair(
        "create",
        rounds,
        Variant::new("git worktree add (raw)", Target::None, |i| {
            let mut c = w.cmd("git", &fx.clone);
            let dir = fx.raw_dir.join(format!("raw-{i}"));
            c.args(["worktree", "add", "--quiet", "-b", &format!("raw-{i}")])
                .arg(&dir)
                .arg("origin/main");
            c
        }),
        Variant::new("git treebox create --no-fetch", Target::Ratio(1.25), |i| {
            let mut c = w.cmd("git", &fx.clone);
            c.args(["treebox", "create", &format!("bench-{i}")])
                .args(["--no-fetch", "--no-launch"]);
            c
        }),
    );
    create.between = Some(Box::new(|| between_rounds(&w, &fx.clone, cleanup)));
    groups.push(create);

    // startup: process start to exit, no work.
    groups.push(Group {
        name: "startup".into(),
        rounds: startup_runs,
        warmup: 2,
        variants: vec![
            Variant::new("git --version", Target::None, |_| {
                let mut c = w.cmd("git", &w.root);
                c.arg("--version");
                c
            }),
            Variant::new("git-treebox --version", Target::MedianMs(10.0), |_| {
                let mut c = w.cmd(TREEBOX, &w.root);
                c.arg("--version");
                c
            }),
            Variant::new("git-sandbox --version", Target::MedianMs(10.0), |_| {
                let mut c = w.cmd(SANDBOX, &w.root);
                c.arg("--version");
                c
            }),
        ],
        between: None,
    });

    let mut rows = Vec::new();
    for g in &mut groups {
        eprintln!("measuring {} ({} rounds)…", g.name, g.rounds);
        let stats = measure_interleaved(g);
        rows.extend(rows_for(g, &stats));
    }

    println!();
    print_table(&rows);
    println!();

    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let doc = json!({
        "machine": {
            "nproc": nproc,
            "cpu": cpu_model(),
            "kernel": kernel,
            "git": git_version,
            "loadavg_before": load_before,
            "loadavg_after": first_line("/proc/loadavg"),
        },
        "timestamp": iso8601(now),
        "unix_time": now,
        "config": {
            "create_rounds": rounds,
            "startup_runs": startup_runs,
            "fixture_files": fx.files,
            "cleanup_between_rounds": cleanup,
        },
        "results": rows.iter().map(|r| json!({
            "group": r.group,
            "measure": r.measure,
            "median_ms": r.median,
            "min_ms": r.min,
            "vs_raw": r.vs_raw,
            "paired_delta_ms_median": r.paired_delta,
            "target": r.target.json(),
            "meets_target": r.meets(),
            "samples_ms_in_run_order": r.samples,
        })).collect::<Vec<_>>(),
    });
    let out_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench");
    fs::create_dir_all(&out_dir).expect("mkdir bench/");
    let out = out_dir.join("results.json");
    fs::write(
        &out,
        serde_json::to_string_pretty(&doc).expect("json") + "\n",
    )
    .expect("write results.json");
    println!("wrote {}", out.display());
}
