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
//! - `sandboxed`: raw `git worktree add -b sraw-<i> …` vs the git part of creating a
//!   sandboxed worktree (SPEC §6), `treebox::provision::sandboxed::make` called in this
//!   process on the same fixture (see [`sandboxed_section`]). Target ≤ 1.25×. Each
//!   round's worktrees, branch, pin and bare clone are unmade between rounds.
//! - `startup`: `git --version` (reference) vs `git-treebox --version` and
//!   `git-sandbox --version`. Target: median ≤ 5 ms (issue 16).
//! - `list`: `git treebox list --json` and `git treebox list` (the table) in three
//!   repositories of 20 files holding 10 / 100 / 1,000 boxes, each next to
//!   `git worktree list --porcelain` in the same repository. Target: 1,000 boxes
//!   ≤ 50 ms (issue 16). Plus the growth in ms per box, the cost of each `create` as
//!   boxes accumulate, and the peak RSS of `git-treebox list --json` at 1,000 boxes
//!   (GNU `/usr/bin/time -f %M`, i.e. `ru_maxrss` from `wait4`). Target ≤ 30 MB.
//! - `ls`: `git sandbox ls --json` over every box on the machine (the list
//!   repositories' and the other groups'), which also reads each box's status
//!   (DIRTY) through libgit2: no target, reported for what it costs.
//! - `enter`: `git treebox enter b1 --print` on a fresh box, in the 5,000-file
//!   repository and in the 1,000-box one, each next to `git rev-parse HEAD` in the box.
//!   Target ≤ 20 ms.
//! - `clone`: raw `git clone --shared --no-checkout` + `git checkout -q -b` vs
//!   `git treebox create c<i> --git clone --no-fetch --no-launch` on a repository
//!   with history (the same 5,001 paths, 3,001 commits; [`make_history_origin`]).
//!   Target ≤ 1.35×. Plus the size of the clone's own `.git` against the user's
//!   `.git/objects` (file sizes, hard links counted once). Target < 1 %.
//! - `docker run` / `docker create`, only when `docker info` answers and the local
//!   image `treebox-test-base:1` exists: `git sandbox run <box> -- true` vs raw
//!   `docker exec <container> true` (target ≤ 1.2×), and a `create` with a warm image
//!   vs raw `docker run -d --init <image> sleep infinity` (and the same + `docker rm
//!   -f`). Every container and the image the bench made are removed at the end, also on
//!   failure ([`DockerGuard`]).
//!
//! Knobs: `BENCH_ROUNDS` (create and clone rounds, default 15), `BENCH_STARTUP_RUNS`
//! (default 30), `BENCH_LIST_RUNS` (list and enter rounds, default 20),
//! `BENCH_LIST_MAX` (cap on the 10/100/1,000 box counts), `BENCH_DOCKER_ROUNDS`
//! (default 12), `BENCH_DOCKER=0` (skip containers), `BENCH_CLEANUP=1` (remove the
//! worktrees between create rounds; see [`between_rounds`]), `BENCH_ONLY=sandboxed,…`
//! (only these groups: `create`, `sandboxed`, `startup`, `list` (with `ls` and `enter`),
//! `clone`, `docker`; the big fixture is always made).
//!
//! To add a measurement, build another [`Group`] — usually with [`Group::pair`] — and
//! hand it to [`measure`] in `main`.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

/// The tests' hermetic environment, shared (`tests/it/env.rs`).
#[allow(dead_code)]
#[path = "../tests/it/env.rs"]
mod env;

use env::{run_ok, TestEnv, SANDBOX, TREEBOX};

const DIRS: usize = 50;
const FILES_PER_DIR: usize = 100;

/// The small repository the list and container measures use (boxes are cheap on it).
const SMALL_DIRS: usize = 2;
const SMALL_FILES_PER_DIR: usize = 10;

/// How the list group's peak RSS is measured (recorded in the results).
const RSS_METHOD: &str = "/usr/bin/time -f %M (ru_maxrss from wait4) of git-treebox list --json";

/// The local image the container measures build on (as the integration tests do).
const BASE_IMAGE: &str = "treebox-test-base:1";

// ---------------------------------------------------------------------------------
// Hermetic environment
// ---------------------------------------------------------------------------------

/// The throwaway world every child process runs in: the integration tests' hermetic
/// [`TestEnv`] (temp HOME and XDG dirs, private git config, no system config), without
/// their origin and repository (the bench makes its own fixtures), with the built
/// binaries first on PATH so `git treebox` dispatches to this build.
struct World {
    env: TestEnv,
    root: PathBuf,
}

impl World {
    fn new() -> World {
        let mut env = TestEnv::empty();
        // The built binaries first, then the caller's PATH (docker, GNU time).
        let bin_dir = Path::new(TREEBOX).parent().expect("bin dir").to_path_buf();
        let mut dirs = vec![bin_dir];
        if let Some(p) = std::env::var_os("PATH") {
            dirs.extend(std::env::split_paths(&p));
        }
        let path = std::env::join_paths(dirs).expect("PATH");
        let path = path.into_string().expect("PATH is UTF-8");
        env.extra_env.push(("PATH".into(), path));
        env.extra_env.push(("NO_COLOR".into(), "1".into()));
        if let Some(t) = std::env::var_os("TMPDIR") {
            let t = t.into_string().expect("TMPDIR is UTF-8");
            env.extra_env.push(("TMPDIR".into(), t));
        }
        let root = env.root();
        World { env, root }
    }

    /// A command with the world's scrubbed, hermetic environment, run in `cwd`.
    fn cmd(&self, program: impl AsRef<std::ffi::OsStr>, cwd: &Path) -> Command {
        let mut c = Command::new(program);
        self.env.apply_env(&mut c);
        c.current_dir(cwd);
        c
    }

    fn git(&self, cwd: &Path, args: &[&str]) -> String {
        self.env.git(cwd, args)
    }

    /// `$XDG_STATE_HOME`.
    fn state_dir(&self) -> PathBuf {
        self.env.state_dir()
    }

    /// `$XDG_CONFIG_HOME`.
    fn config_dir(&self) -> PathBuf {
        self.env.config_dir()
    }
}

// ---------------------------------------------------------------------------------
// The fixture repository
// ---------------------------------------------------------------------------------

/// Deterministic text: a few hundred bytes per file from a xorshift stream.
fn content(seed: u64) -> String {
    let len = 200 + (xorshift(seed)() % 300) as usize;
    text(seed, len)
}

/// A xorshift64 stream from `seed`.
fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// Deterministic text of about `len` bytes: words from a small vocabulary, which zlib
/// compresses about as well as source code (3–4×).
fn text(seed: u64, len: usize) -> String {
    const WORDS: &[&str] = &[
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo",
    ];
    let mut next = xorshift(seed ^ 0x5DEE_CE66);
    let mut s = String::with_capacity(len + 80);
    let _ = writeln!(s, "// file {seed}");
    while s.len() < len {
        let w = WORDS[(next() % WORDS.len() as u64) as usize];
        s.push_str(w);
        s.push(if next().is_multiple_of(8) { '\n' } else { ' ' });
    }
    s.push('\n');
    s
}

/// Paths of the generated fixture: a bare `origin` and a clone with `origin/main`.
struct Fixture {
    clone: PathBuf,
    /// Where raw worktrees and clones go (a sibling of the clone, same filesystem).
    raw_dir: PathBuf,
    files: usize,
}

/// A bare `<name>-origin.git` of one commit with `dirs` × `per_dir` generated files.
/// Returns the origin's path and the number of files.
fn make_origin(w: &World, name: &str, dirs: usize, per_dir: usize) -> (PathBuf, usize) {
    let seed = w.root.join(format!("{name}-seed"));
    fs::create_dir_all(&seed).expect("mkdir seed");
    w.git(&seed, &["init", "--quiet"]);
    let mut n = 0;
    for d in 0..dirs {
        let dir = seed.join(format!("pkg{d:02}"));
        fs::create_dir_all(&dir).expect("mkdir");
        for f in 0..per_dir {
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
    let origin = w.root.join(format!("{name}-origin.git"));
    let mut c = w.cmd("git", &w.root);
    c.args(["clone", "--quiet", "--bare"])
        .arg(&seed)
        .arg(&origin);
    run_ok(&mut c);
    (origin, n)
}

/// History fixture: commits after the first, and files each one rewrites.
const HISTORY_COMMITS: usize = 3_000;
const HISTORY_FILES_PER_COMMIT: usize = 10;

/// A bare `<name>-origin.git` shaped like a project with a past: the same 5,001 paths
/// as the big fixture but with source-sized files (1–12 KB), then
/// [`HISTORY_COMMITS`] commits that each rewrite [`HISTORY_FILES_PER_COMMIT`] files with
/// fresh text. Written with `git fast-import` (seconds, not minutes); every new version
/// is fresh text, so the pack fast-import writes is close to what `git repack -adf`
/// would make (deltas would find little to share). Returns the origin and the file count.
fn make_history_origin(w: &World, name: &str) -> (PathBuf, usize) {
    use std::io::Write as _;
    let origin = w.root.join(format!("{name}-origin.git"));
    let mut c = w.cmd("git", &w.root);
    c.args(["init", "--quiet", "--bare", "-b", "main"])
        .arg(&origin);
    run_ok(&mut c);
    let mut imp = w.cmd("git", &origin);
    imp.args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null());
    let mut child = imp.spawn().expect("spawn git fast-import");
    let mut stdin = std::io::BufWriter::new(child.stdin.take().expect("stdin"));
    let mut paths: Vec<String> = Vec::new();
    for d in 0..DIRS {
        for f in 0..FILES_PER_DIR {
            paths.push(format!("pkg{d:02}/mod{f:03}.rs"));
        }
    }
    paths.push("README.md".to_string());
    let size = |seed: u64| 1_024 + (xorshift(seed ^ 0xA5A5)() % 11_264) as usize;
    let mut emit = |n: usize, files: &mut dyn Iterator<Item = (usize, u64)>| {
        let when = 1_700_000_000 + n as u64 * 3_600;
        let msg = format!("change {n}\n");
        write!(
            stdin,
            "commit refs/heads/main\nauthor Bench <bench@example.invalid> {when} +0000\n\
             committer Bench <bench@example.invalid> {when} +0000\ndata {}\n{msg}",
            msg.len()
        )
        .expect("write fast-import");
        for (i, seed) in files {
            let body = text(seed, size(seed));
            write!(
                stdin,
                "M 100644 inline {}\ndata {}\n{body}\n",
                paths[i],
                body.len()
            )
            .expect("write fast-import");
        }
        stdin.write_all(b"\n").expect("write fast-import");
    };
    emit(0, &mut (0..paths.len()).map(|i| (i, i as u64)));
    let mut pick = xorshift(0x00C0_FFEE);
    for n in 1..=HISTORY_COMMITS {
        let files: Vec<(usize, u64)> = (0..HISTORY_FILES_PER_COMMIT)
            .map(|k| {
                let i = (pick() % paths.len() as u64) as usize;
                (i, (n * 1_000 + k) as u64 * 7_919 + 1_000_000)
            })
            .collect();
        emit(n, &mut files.into_iter());
    }
    drop(stdin);
    let status = child.wait().expect("wait git fast-import");
    assert!(status.success(), "git fast-import failed: {status}");
    (origin, paths.len())
}

/// A clone of `origin` at `<root>/<name>`, with `origin/main`.
fn clone_of(w: &World, origin: &Path, name: &str) -> PathBuf {
    let dir = w.root.join(name);
    let mut c = w.cmd("git", &w.root);
    c.args(["clone", "--quiet"]).arg(origin).arg(&dir);
    run_ok(&mut c);
    dir
}

fn make_fixture(w: &World) -> Fixture {
    // The names the first version of this bench used: `origin.git` and `clone`.
    let (origin, files) = make_origin(w, "big", DIRS, FILES_PER_DIR);
    let bare = w.root.join("origin.git");
    fs::rename(&origin, &bare).expect("rename origin");
    let clone = clone_of(w, &bare, "clone");
    let raw_dir = w.root.join("raw");
    fs::create_dir_all(&raw_dir).expect("mkdir raw");
    Fixture {
        clone,
        raw_dir,
        files,
    }
}

/// `git treebox create <name> --no-fetch --no-launch [extra…]` in `repo`, timed.
fn create_box(w: &World, repo: &Path, name: &str, extra: &[&str]) -> Duration {
    let mut c = w.cmd("git", repo);
    c.args(["treebox", "create", name, "--no-fetch", "--no-launch"])
        .args(extra);
    time_once(vec![c])
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

/// One timed run of a variant, given the round number: returns its wall time.
type RunOnce<'a> = Box<dyn FnMut(usize) -> Duration + 'a>;

#[derive(Clone, Copy, Debug)]
enum Target {
    /// Reference row: no target.
    None,
    /// Median at most this many ms.
    MedianMs(f64),
    /// Median at most this multiple of the baseline's median.
    Ratio(f64),
    /// Value at most this much, in the row's unit.
    AtMost(f64),
    /// Value strictly below this, in the row's unit.
    Below(f64),
    /// A goal stated in words, with no pass/fail.
    Note(&'static str),
}

impl Target {
    fn describe(self, unit: &str) -> String {
        match self {
            Target::None => "—".into(),
            Target::MedianMs(ms) => format!("≤ {ms} ms"),
            Target::Ratio(r) => format!("≤ {r:.2}× raw"),
            Target::AtMost(x) => format!("≤ {x} {unit}"),
            Target::Below(x) => format!("< {x} {unit}"),
            Target::Note(s) => s.into(),
        }
    }
    fn json(self) -> Value {
        match self {
            Target::None => Value::Null,
            Target::MedianMs(ms) => json!({ "median_ms_max": ms }),
            Target::Ratio(r) => json!({ "ratio_max": r }),
            Target::AtMost(x) => json!({ "max": x }),
            Target::Below(x) => json!({ "below": x }),
            Target::Note(s) => json!({ "note": s }),
        }
    }
}

/// One command line (or library call) to time; called with a fresh index every run.
struct Variant<'a> {
    label: String,
    run: RunOnce<'a>,
    target: Target,
    /// The index (in its group) of the variant this one is compared with; itself for a
    /// reference row. Defaults to the group's first variant.
    baseline: usize,
}

impl<'a> Variant<'a> {
    fn new(label: &str, target: Target, mut make: impl FnMut(usize) -> Command + 'a) -> Self {
        Variant::seq(label, target, move |i| vec![make(i)])
    }
    /// Several commands timed as one run (e.g. `git clone` then `git checkout`).
    fn seq(label: &str, target: Target, mut make: impl FnMut(usize) -> Vec<Command> + 'a) -> Self {
        Variant {
            label: label.into(),
            run: Box::new(move |i| time_once(make(i))),
            target,
            baseline: 0,
        }
    }
    /// A call into the library, in this process, timed from entry to return (for a
    /// stage that has no command of its own). Panics inside are the bench failing.
    fn call(label: &str, target: Target, mut f: impl FnMut(usize) + 'a) -> Self {
        Variant {
            label: label.into(),
            run: Box::new(move |i| {
                let start = Instant::now();
                f(i);
                start.elapsed()
            }),
            target,
            baseline: 0,
        }
    }
    /// Compare with the group's variant `k` instead of the first one.
    fn vs(mut self, k: usize) -> Self {
        self.baseline = k;
        self
    }
}

/// Variants timed together. Each is compared with its baseline (by default the first,
/// the "raw" one).
struct Group<'a> {
    name: String,
    rounds: usize,
    warmup: usize,
    variants: Vec<Variant<'a>>,
    /// Untimed, after every round (e.g. remove the worktrees just made).
    between: Option<Box<dyn FnMut(usize) + 'a>>,
}

impl<'a> Group<'a> {
    /// The common shape: plain git vs treebox doing the same job.
    fn pair(name: &str, rounds: usize, raw: Variant<'a>, ours: Variant<'a>) -> Self {
        Group::new(name, rounds, 1, vec![raw, ours])
    }
    fn new(name: &str, rounds: usize, warmup: usize, variants: Vec<Variant<'a>>) -> Self {
        Group {
            name: name.into(),
            rounds,
            warmup,
            variants,
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
    fn median_ms(&self) -> f64 {
        median(self.ms())
    }
    fn min_ms(&self) -> f64 {
        self.ms().into_iter().fold(f64::NAN, f64::min)
    }
}

/// Time one run of `cmds` in sequence (spawn of the first to exit of the last, output
/// captured). Panics if one fails.
fn time_once(cmds: Vec<Command>) -> Duration {
    let start = Instant::now();
    for mut c in cmds {
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        let out = c.output().unwrap_or_else(|e| panic!("spawn {c:?}: {e}"));
        if !out.status.success() {
            panic!(
                "{c:?} failed ({}):\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    start.elapsed()
}

/// Run every variant once per round, rotating the order each round, after `warmup`
/// untimed rounds. Indices passed to the command builders (and to `between`) are the
/// round numbers, unique per group.
fn measure_interleaved(g: &mut Group) -> Vec<Stats> {
    let n = g.variants.len();
    let mut stats: Vec<Stats> = (0..n).map(|_| Stats { samples: vec![] }).collect();
    for round in 0..g.warmup + g.rounds {
        let timed = round >= g.warmup;
        for k in 0..n {
            let v = (round + k) % n;
            let d = (g.variants[v].run)(round);
            if timed {
                stats[v].samples.push(d);
            }
        }
        if let Some(b) = g.between.as_mut() {
            b(round);
        }
    }
    stats
}

/// Measure `g`, append its rows, and note the load average seen before it.
fn measure(mut g: Group, rows: &mut Vec<Row>, loads: &mut Vec<Value>) {
    let load = first_line("/proc/loadavg");
    eprintln!(
        "measuring {} ({} rounds, {} variants; load {load})…",
        g.name,
        g.rounds,
        g.variants.len()
    );
    loads.push(json!({ "group": g.name, "loadavg_before": load }));
    let stats = measure_interleaved(&mut g);
    rows.extend(rows_for(&g, &stats));
}

// ---------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------

struct Row {
    group: String,
    measure: String,
    /// `ms` for timings; `MB`, `KB`, `%`, `ms/box` for derived figures.
    unit: &'static str,
    median: f64,
    min: f64,
    vs_raw: Option<f64>,
    /// Median over rounds of (this − baseline) in the same round: robust to drift.
    paired_delta: Option<f64>,
    target: Target,
    samples: Vec<f64>,
}

impl Row {
    /// A figure that is not a timing group: a size, a ratio, a growth rate.
    fn value(group: &str, measure: &str, unit: &'static str, samples: Vec<f64>) -> Row {
        let min = samples.iter().copied().fold(f64::NAN, f64::min);
        Row {
            group: group.into(),
            measure: measure.into(),
            unit,
            median: median(samples.clone()),
            min,
            vs_raw: None,
            paired_delta: None,
            target: Target::None,
            samples,
        }
    }
    fn target(mut self, t: Target) -> Row {
        self.target = t;
        self
    }
    fn meets(&self) -> Option<bool> {
        match self.target {
            Target::None | Target::Note(_) => None,
            Target::MedianMs(ms) => Some(self.median <= ms),
            Target::Ratio(r) => self.vs_raw.map(|x| x <= r),
            Target::AtMost(x) => Some(self.median <= x),
            Target::Below(x) => Some(self.median < x),
        }
    }
    fn fmt(&self, x: f64) -> String {
        match self.unit {
            "KB" => format!("{x:.0} KB"),
            "%" | "ms/box" => format!("{x:.2} {}", self.unit),
            u => format!("{x:.1} {u}"),
        }
    }
    fn json(&self) -> Value {
        let mut o = json!({
            "group": self.group,
            "measure": self.measure,
            "unit": self.unit,
            "median": self.median,
            "min": self.min,
            "vs_raw": self.vs_raw,
            "paired_delta_ms_median": self.paired_delta,
            "target": self.target.json(),
            "meets_target": self.meets(),
            "samples_in_run_order": self.samples,
        });
        if self.unit == "ms" {
            o["median_ms"] = json!(self.median);
            o["min_ms"] = json!(self.min);
        }
        o
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
    g.variants
        .iter()
        .zip(stats)
        .enumerate()
        .map(|(i, (v, s))| {
            let base = &stats[v.baseline];
            let compared = v.baseline != i;
            Row {
                group: g.name.clone(),
                measure: v.label.clone(),
                unit: "ms",
                median: s.median_ms(),
                min: s.min_ms(),
                vs_raw: compared.then(|| s.median_ms() / base.median_ms()),
                paired_delta: compared
                    .then(|| median(s.ms().iter().zip(base.ms()).map(|(a, b)| a - b).collect())),
                target: v.target,
                samples: s.ms(),
            }
        })
        .collect()
}

fn print_table(rows: &[Row]) {
    let head = ["measure", "median", "min", "vs raw", "target"];
    let body: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            let verdict = match r.meets() {
                Some(true) => " ok",
                Some(false) => " MISSED",
                None => "",
            };
            [
                format!("{}: {}", r.group, r.measure),
                r.fmt(r.median),
                r.fmt(r.min),
                r.vs_raw.map_or("—".into(), |x| format!("{x:.2}×")),
                format!("{}{verdict}", r.target.describe(r.unit)),
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
                "{}: {} costs {d:+.1} ms over its baseline (median of same-round differences)",
                r.group, r.measure
            );
        }
    }
}

// ---------------------------------------------------------------------------------
// Boxes, sizes, records
// ---------------------------------------------------------------------------------

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `git treebox list --json` in `repo`, parsed.
fn list_json(w: &World, repo: &Path) -> Value {
    let mut c = w.cmd("git", repo);
    c.args(["treebox", "list", "--json"]);
    serde_json::from_str(&run_ok(&mut c)).expect("list --json is JSON")
}

/// A box's checkout, as `list --json` reports it.
fn box_path(w: &World, repo: &Path, name: &str) -> PathBuf {
    let doc = list_json(w, repo);
    let b = doc["boxes"]
        .as_array()
        .and_then(|a| a.iter().find(|b| b["name"] == name))
        .unwrap_or_else(|| panic!("no box {name} in {}", repo.display()));
    PathBuf::from(b["path"].as_str().expect("box path"))
}

/// A box's record (`$XDG_STATE_HOME/treebox/repos/*/boxes/<leaf>/record.json`) in the
/// repository `repo`.
fn record(w: &World, repo: &Path, leaf: &str) -> Value {
    let repos = w.state_dir().join("treebox/repos");
    for e in fs::read_dir(&repos).expect("state dir").flatten() {
        let p = e.path().join("boxes").join(leaf).join("record.json");
        if let Ok(text) = fs::read_to_string(&p) {
            let v: Value = serde_json::from_str(&text).expect("record is JSON");
            if v["repo"].as_str().map(Path::new) == Some(repo) {
                return v;
            }
        }
    }
    panic!("no record for {leaf} of {}", repo.display());
}

/// Bytes in the files under `dir` (sizes, not blocks), each inode counted once.
fn tree_bytes(dir: &Path, seen: &mut HashSet<(u64, u64)>) -> u64 {
    let mut total = 0;
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    for e in entries.flatten() {
        let Ok(m) = e.path().symlink_metadata() else {
            continue;
        };
        if m.is_dir() {
            total += tree_bytes(&e.path(), seen);
        } else if seen.insert((m.dev(), m.ino())) {
            total += m.len();
        }
    }
    total
}

fn kb(bytes: u64) -> f64 {
    bytes as f64 / 1024.0
}

// ---------------------------------------------------------------------------------
// list: 10 / 100 / 1,000 boxes
// ---------------------------------------------------------------------------------

/// One repository of 20 files per box count, holding boxes `b1…b<n>`. Returns the
/// repositories and the time of every `create` made in the largest one, in order.
fn make_list_repos(w: &World, origin: &Path, counts: &[usize]) -> (Vec<PathBuf>, Vec<f64>) {
    let total: usize = counts.iter().sum();
    let largest = counts.iter().copied().max().unwrap_or(0);
    let t = Instant::now();
    let mut done = 0;
    let mut repos = Vec::new();
    let mut create_ms = Vec::new();
    for &n in counts {
        let repo = clone_of(w, origin, &format!("list-{n}"));
        for i in 1..=n {
            let d = create_box(w, &repo, &format!("b{i}"), &[]);
            if n == largest {
                create_ms.push(ms(d));
            }
            done += 1;
            if done % 50 == 0 || done == total {
                eprintln!(
                    "list fixtures: {done}/{total} boxes ({:.0} s)",
                    t.elapsed().as_secs_f64()
                );
            }
        }
        let listed = list_json(w, &repo)["boxes"].as_array().map_or(0, Vec::len);
        assert_eq!(listed, n, "list --json in list-{n} shows {listed} boxes");
        repos.push(repo);
    }
    (repos, create_ms)
}

/// Peak RSS in KB of `git-treebox list --json` in `repo` (GNU time's `%M`: the
/// `ru_maxrss` that `wait4` returns), `runs` times. `None` without `/usr/bin/time`.
fn list_rss_kb(w: &World, repo: &Path, runs: usize) -> Option<Vec<f64>> {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        return None;
    }
    let out = w.root.join("rss.txt");
    let mut v = Vec::new();
    for _ in 0..runs {
        let mut c = w.cmd(time, repo);
        c.args(["-f", "%M", "-o"])
            .arg(&out)
            .arg(TREEBOX)
            .args(["list", "--json"]);
        run_ok(&mut c);
        let text = fs::read_to_string(&out).expect("time output");
        let kb: f64 = text
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("unexpected /usr/bin/time output {text:?}"));
        v.push(kb);
    }
    Some(v)
}

// ---------------------------------------------------------------------------------
// Sandboxed worktrees: the git part, in process
// ---------------------------------------------------------------------------------

/// Puts the process environment back as it was (see [`adopt_world_env`]).
struct EnvGuard(Vec<(std::ffi::OsString, std::ffi::OsString)>);

impl Drop for EnvGuard {
    fn drop(&mut self) {
        for (k, _) in std::env::vars_os() {
            std::env::remove_var(k);
        }
        for (k, v) in &self.0 {
            std::env::set_var(k, v);
        }
    }
}

/// Give this process the world's hermetic environment (exactly what [`World::cmd`]
/// gives a child), so that a library call made here — libgit2's config lookup and the
/// `git` it spawns — sees what a `git treebox` child would. The bench is one thread.
fn adopt_world_env(w: &World) -> EnvGuard {
    let saved: Vec<_> = std::env::vars_os().collect();
    let probe = w.cmd("true", &w.root);
    for (k, _) in &saved {
        std::env::remove_var(k);
    }
    for (k, v) in probe.get_envs() {
        if let Some(v) = v {
            std::env::set_var(k, v);
        }
    }
    EnvGuard(saved)
}

/// The `sandboxed` group: raw `git worktree add -b` vs the git part of creating a
/// sandboxed worktree, `treebox::provision::sandboxed::make` (bare clone by hand,
/// `git worktree add` in it, the pin in the user's repository), called in this process
/// on the big fixture. Its timed run includes `Repo::discover` (raw git finds the
/// repository too). Between rounds, untimed, each round's work is unmade — the raw
/// worktree's registration and branch, our pin — so every round starts from the same
/// repository; the directories are moved aside rather than deleted (see
/// [`between_rounds`] on ext4) and removed after the group.
fn sandboxed_section(
    w: &World,
    fx: &Fixture,
    rounds: usize,
    rows: &mut Vec<Row>,
    loads: &mut Vec<Value>,
) {
    use treebox::git::Repo;
    use treebox::plan::Checkout;

    let repo = &fx.clone;
    let base = w
        .git(repo, &["rev-parse", "origin/main"])
        .trim()
        .to_string();
    let dir = w.root.join("sbx");
    let bares = w.root.join("sbx-state");
    let trash = w.root.join("sbx-trash");
    for d in [&dir, &bares, &trash] {
        fs::create_dir_all(d).expect("mkdir");
    }
    let _env = adopt_world_env(w);
    let mut g = Group::pair(
        "sandboxed",
        rounds,
        Variant::new("git worktree add -b (raw)", Target::None, |i| {
            let mut c = w.cmd("git", repo);
            c.args(["worktree", "add", "--quiet", "-b", &format!("sraw-{i}")])
                .arg(dir.join(format!("raw-{i}")))
                .arg("origin/main");
            c
        }),
        Variant::call(
            "provision::sandboxed::make (in process)",
            Target::Ratio(1.25),
            |i| {
                let leaf = format!("sbx-{i}");
                let r = Repo::discover(repo).expect("discover the fixture");
                let checkout = Checkout::NewBranch {
                    branch: leaf.clone(),
                    start: "refs/remotes/origin/main".into(),
                };
                treebox::provision::sandboxed::make(
                    &r,
                    &bares.join(&leaf).join("git"),
                    &dir.join(&leaf),
                    &leaf,
                    &checkout,
                    Some(&base),
                )
                .unwrap_or_else(|e| panic!("sandboxed::make {leaf}: {e}"));
            },
        ),
    );
    g.between = Some(Box::new(|i| {
        for (from, to) in [
            (dir.join(format!("raw-{i}")), format!("raw-{i}")),
            (dir.join(format!("sbx-{i}")), format!("sbx-{i}")),
            (bares.join(format!("sbx-{i}")), format!("sbx-{i}-bare")),
        ] {
            fs::rename(&from, trash.join(to)).expect("move a round's checkout aside");
        }
        w.git(repo, &["worktree", "prune"]);
        w.git(repo, &["branch", "-q", "-D", &format!("sraw-{i}")]);
        w.git(
            repo,
            &["update-ref", "-d", &format!("refs/hort/sbx-{i}/base")],
        );
        between_rounds(w, repo, false);
    }));
    measure(g, rows, loads);
    let _ = fs::remove_dir_all(&trash);
}

// ---------------------------------------------------------------------------------
// Containers
// ---------------------------------------------------------------------------------

/// Removes every container and image the bench made, however the container section
/// ends: containers by label (the fixture repository's, which treebox sets, and the
/// bench's own, which the template's image carries into every container made from it),
/// images by the bench label and by the tag the box record names.
struct DockerGuard {
    repo: String,
    bench_id: String,
    images: Vec<String>,
}

impl Drop for DockerGuard {
    fn drop(&mut self) {
        let mut ids = HashSet::new();
        for label in [
            format!("label=org.treebox.repo={}", self.repo),
            format!("label=org.treebox.bench={}", self.bench_id),
        ] {
            if let Ok(out) = Command::new("docker")
                .args(["ps", "-aq", "--filter", &label])
                .output()
            {
                ids.extend(
                    String::from_utf8_lossy(&out.stdout)
                        .split_whitespace()
                        .map(str::to_string),
                );
            }
        }
        for id in &ids {
            let _ = Command::new("docker").args(["rm", "-f", "-v", id]).output();
        }
        let mut images: Vec<String> = self.images.clone();
        if let Ok(out) = Command::new("docker")
            .args(["image", "ls", "-q", "--filter"])
            .arg(format!("label=org.treebox.bench={}", self.bench_id))
            .output()
        {
            images.extend(
                String::from_utf8_lossy(&out.stdout)
                    .split_whitespace()
                    .map(str::to_string),
            );
        }
        images.dedup();
        for img in &images {
            let _ = Command::new("docker")
                .args(["image", "rm", "-f", img])
                .output();
        }
        eprintln!(
            "docker cleanup: removed {} containers and {} image references",
            ids.len(),
            images.len()
        );
    }
}

fn answers(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The container measures. `Err` says why they were skipped.
fn docker_section(
    w: &World,
    origin: &Path,
    rounds: usize,
    rows: &mut Vec<Row>,
    loads: &mut Vec<Value>,
) -> Result<(), String> {
    if std::env::var_os("BENCH_DOCKER").is_some_and(|v| v == "0") {
        return Err("BENCH_DOCKER=0".into());
    }
    if !answers("docker", &["info"]) {
        return Err("`docker info` does not answer".into());
    }
    if !answers("docker", &["image", "inspect", BASE_IMAGE]) {
        return Err(format!("no local image {BASE_IMAGE}"));
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let bench_id = format!("{}-{now}", std::process::id());
    let repo = clone_of(w, origin, "ctr");
    let repo_s = repo.to_str().expect("utf-8").to_string();
    let mut guard = DockerGuard {
        repo: repo_s.clone(),
        bench_id: bench_id.clone(),
        images: vec![],
    };

    // A user template as tests/it/container.rs sets one up: the local base image, no
    // agent install; plus a label of the bench's own (a tag of its own, and cleanup).
    let mut c = w.cmd("git", &repo);
    c.args(["treebox", "template", "init", "test"]);
    run_ok(&mut c);
    let dir = w.config_dir().join("treebox/templates/test");
    let path = dir.join("container.json");
    let mut spec: Value = serde_json::from_str(&fs::read_to_string(&path).expect("container.json"))
        .expect("container.json is JSON");
    spec["baseImage"] = BASE_IMAGE.into();
    spec["buildArgs"]["INSTALL_AGENTS"] = "0".into();
    fs::write(&path, serde_json::to_string_pretty(&spec).expect("json")).expect("write");
    let dockerfile = dir.join("Dockerfile");
    let mut text = fs::read_to_string(&dockerfile).expect("Dockerfile");
    let _ = write!(text, "\nLABEL org.treebox.bench=\"{bench_id}\"\n");
    fs::write(&dockerfile, text).expect("write Dockerfile");
    let config = w.config_dir().join("treebox/config.json");
    fs::write(&config, r#"{"template":"test","isolation":"docker"}"#).expect("config");

    eprintln!("docker: first create (builds the image from cached layers)…");
    let first = create_box(w, &repo, "run1", &[]);
    let rec = record(w, &repo, "run1");
    let container = rec["container"]["name"]
        .as_str()
        .expect("container.name")
        .to_string();
    let image = rec["container"]["image"]
        .as_str()
        .expect("container.image")
        .to_string();
    guard.images.push(image.clone());
    if let Some(r) = rec["repo"].as_str() {
        guard.repo = r.to_string();
    }
    rows.push(
        Row::value(
            "docker create",
            "first create --isolation docker (image build, cached layers)",
            "ms",
            vec![ms(first)],
        )
        .target(Target::None),
    );

    // run: an exec in the running container.
    measure(
        Group::pair(
            "docker run",
            rounds,
            Variant::new("docker exec <container> true (raw)", Target::None, |_| {
                let mut c = w.cmd("docker", &repo);
                c.args(["exec", &container, "true"]);
                c
            }),
            Variant::new("git sandbox run <box> -- true", Target::Ratio(1.2), |_| {
                let mut c = w.cmd("git", &repo);
                c.args(["sandbox", "run", "run1", "--", "true"]);
                c
            }),
        ),
        rows,
        loads,
    );

    // create with a warm image vs a bare container start.
    let raw_run = |name: String| {
        let mut c = w.cmd("docker", &repo);
        c.args(["run", "-d", "--init", "--name", &name])
            .args(["--label", &format!("org.treebox.repo={repo_s}")])
            .args([image.as_str(), "sleep", "infinity"]);
        c
    };
    let id = &bench_id;
    let mut create = Group::new(
        "docker create",
        rounds,
        1,
        vec![
            Variant::new(
                "docker run -d --init <image> sleep infinity (raw)",
                Target::None,
                |i| raw_run(format!("tbraw-{id}-{i}")),
            ),
            Variant::seq(
                "docker run -d --init … + docker rm -f (raw)",
                Target::None,
                |i| {
                    let name = format!("tbrawrm-{id}-{i}");
                    let mut rm = w.cmd("docker", &repo);
                    rm.args(["rm", "-f", &name]);
                    vec![raw_run(name), rm]
                },
            ),
            Variant::new(
                "git treebox create --isolation docker (warm image)",
                Target::Note("close to raw"),
                |i| {
                    let mut c = w.cmd("git", &repo);
                    c.args(["treebox", "create", &format!("d{i}")])
                        .args(["--no-fetch", "--no-launch"]);
                    c
                },
            ),
        ],
    );
    // Untimed: remove this round's containers so every round starts alike.
    create.between = Some(Box::new(|i| {
        let mut names = vec![format!("tbraw-{id}-{i}")];
        let mut ps = w.cmd("docker", &repo);
        ps.args(["ps", "-aq", "--filter"])
            .arg(format!("label=org.treebox.box=d{i}"))
            .arg("--filter")
            .arg(format!("label=org.treebox.repo={repo_s}"));
        names.extend(run_ok(&mut ps).split_whitespace().map(str::to_string));
        for n in names {
            let mut rm = w.cmd("docker", &repo);
            rm.args(["rm", "-f", "-v", &n]);
            run_ok(&mut rm);
        }
    }));
    measure(create, rows, loads);

    drop(guard);
    let _ = fs::remove_file(&config);
    Ok(())
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

/// Whether `BENCH_ONLY` (a comma-separated list of group names; unset: all) asks for
/// `group`. `list` and `enter` share their fixtures and run together.
fn wanted(group: &str) -> bool {
    std::env::var("BENCH_ONLY").map_or(true, |only| {
        only.split(',').map(str::trim).any(|g| g == group)
    })
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

// ---------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------

fn main() {
    let rounds = env_usize("BENCH_ROUNDS", 15);
    let startup_runs = env_usize("BENCH_STARTUP_RUNS", 30);
    let list_runs = env_usize("BENCH_LIST_RUNS", 20);
    let list_max = env_usize("BENCH_LIST_MAX", 1000);
    let docker_rounds = env_usize("BENCH_DOCKER_ROUNDS", 12);
    let cleanup = std::env::var_os("BENCH_CLEANUP").is_some_and(|v| v == "1");
    let mut counts: Vec<usize> = [10, 100, 1000].map(|n| n.min(list_max)).to_vec();
    counts.dedup();

    let world = World::new();
    let w = &world;
    let git_version = w.git(&w.root, &["--version"]).trim().to_string();
    let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = first_line("/proc/version");
    let load_before = first_line("/proc/loadavg");
    eprintln!("treebox bench: {nproc} CPUs, {git_version}, load {load_before}");
    eprintln!("kernel: {kernel}");
    let started = Instant::now();

    let t = Instant::now();
    let fx = make_fixture(w);
    eprintln!(
        "fixture: {} files in {:.1}s; {rounds} create rounds, {startup_runs} startup runs",
        fx.files,
        t.elapsed().as_secs_f64()
    );

    let mut rows = Vec::new();
    let mut loads = Vec::new();

    // create: raw `git worktree add` vs `git treebox create`.
    if wanted("create") {
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
        create.between = Some(Box::new(|_| between_rounds(w, &fx.clone, cleanup)));
        measure(create, &mut rows, &mut loads);
    }

    // sandboxed: raw `git worktree add` vs the git part of a sandboxed worktree.
    if wanted("sandboxed") {
        sandboxed_section(w, &fx, rounds, &mut rows, &mut loads);
    }

    // startup: process start to exit, no work.
    if wanted("startup") {
        measure(
            Group::new(
                "startup",
                startup_runs,
                2,
                vec![
                    Variant::new("git --version", Target::None, |_| {
                        let mut c = w.cmd("git", &w.root);
                        c.arg("--version");
                        c
                    }),
                    Variant::new("git-treebox --version", Target::MedianMs(5.0), |_| {
                        let mut c = w.cmd(TREEBOX, &w.root);
                        c.arg("--version");
                        c
                    }),
                    Variant::new("git-sandbox --version", Target::MedianMs(5.0), |_| {
                        let mut c = w.cmd(SANDBOX, &w.root);
                        c.arg("--version");
                        c
                    }),
                ],
            ),
            &mut rows,
            &mut loads,
        );
    }

    // list: one small repository per box count. Enter reuses its repositories.
    let t = Instant::now();
    let (small_origin, small_files) = make_origin(w, "small", SMALL_DIRS, SMALL_FILES_PER_DIR);
    let mut list_fixture_s = 0.0;
    if wanted("list") || wanted("enter") {
        eprintln!(
        "list fixtures: {small_files} files, {} boxes in {} repositories (BENCH_LIST_MAX={list_max})…",
        counts.iter().sum::<usize>(),
        counts.len()
    );
        let (list_repos, create_ms) = make_list_repos(w, &small_origin, &counts);
        list_fixture_s = t.elapsed().as_secs_f64();
        let largest = *counts.last().expect("a box count");
        let largest_repo = list_repos.last().expect("a list repo").clone();
        let mut variants = Vec::new();
        for (k, (&n, repo)) in counts.iter().zip(&list_repos).enumerate() {
            variants.push(
                Variant::new(
                    &format!("git worktree list --porcelain, {n} boxes"),
                    Target::None,
                    move |_| {
                        let mut c = w.cmd("git", repo);
                        c.args(["worktree", "list", "--porcelain"]);
                        c
                    },
                )
                .vs(3 * k),
            );
            let target = if n == 1000 {
                Target::MedianMs(50.0)
            } else {
                Target::None
            };
            variants.push(
                Variant::new(
                    &format!("git treebox list --json, {n} boxes"),
                    target,
                    move |_| {
                        let mut c = w.cmd("git", repo);
                        c.args(["treebox", "list", "--json"]);
                        c
                    },
                )
                .vs(3 * k),
            );
            variants.push(
                Variant::new(
                    &format!("git treebox list (table), {n} boxes"),
                    target,
                    move |_| {
                        let mut c = w.cmd("git", repo);
                        c.args(["treebox", "list"]);
                        c
                    },
                )
                .vs(3 * k),
            );
        }
        let first_list_row = rows.len();
        measure(
            Group::new("list", list_runs, 2, variants),
            &mut rows,
            &mut loads,
        );
        // Growth between consecutive counts, from the medians.
        let medians: Vec<(f64, f64)> = rows[first_list_row..]
            .chunks(3)
            .map(|p| (p[0].median, p[1].median))
            .collect();
        for (i, pair) in counts.windows(2).enumerate() {
            let (a, b) = (pair[0], pair[1]);
            let per = |x: f64, y: f64| (y - x) / (b - a) as f64;
            rows.push(Row::value(
                "list",
                &format!("list --json growth, {a}→{b} boxes"),
                "ms/box",
                vec![per(medians[i].1, medians[i + 1].1)],
            ));
            rows.push(Row::value(
                "list",
                &format!("git worktree list growth, {a}→{b} boxes"),
                "ms/box",
                vec![per(medians[i].0, medians[i + 1].0)],
            ));
        }
        // Each create in the largest repository, early vs late.
        let win = (largest / 10).max(1);
        let early = create_ms[..win].to_vec();
        let late = create_ms[largest - win..].to_vec();
        let (em, lm) = (median(early.clone()), median(late.clone()));
        rows.push(Row::value(
            "list",
            &format!("create (20 files), boxes 1–{win}"),
            "ms",
            early,
        ));
        rows.push(Row::value(
            "list",
            &format!("create (20 files), boxes {}–{largest}", largest - win + 1),
            "ms",
            late,
        ));
        if largest > win {
            rows.push(Row::value(
                "list",
                "create growth per existing box",
                "ms/box",
                vec![(lm - em) / (largest - win) as f64],
            ));
        }
        // Peak RSS.
        for (&n, repo) in counts.iter().zip(&list_repos) {
            match list_rss_kb(w, repo, 5) {
                Some(kb) => {
                    let target = if n == 1000 {
                        Target::AtMost(30.0)
                    } else {
                        Target::None
                    };
                    rows.push(
                        Row::value(
                            "list",
                            &format!("peak RSS, list --json, {n} boxes"),
                            "MB",
                            kb.iter().map(|k| k / 1024.0).collect(),
                        )
                        .target(target),
                    );
                }
                None => eprintln!("note: no /usr/bin/time; peak RSS not measured"),
            }
        }

        // ls: every box on the machine, with a libgit2 status of each (DIRTY).
        let on_machine = counts.iter().sum::<usize>();
        measure(
            Group::new(
                "ls",
                list_runs.min(5),
                1,
                vec![Variant::new(
                    &format!("git sandbox ls --json, {on_machine}+ boxes on the machine"),
                    Target::None,
                    |_| {
                        let mut c = w.cmd("git", &largest_repo);
                        c.args(["sandbox", "ls", "--json"]);
                        c
                    },
                )],
            ),
            &mut rows,
            &mut loads,
        );

        // enter: a fresh box (never entered), in the 5,000-file repository and in each list
        // repository (same box, more neighbours).
        create_box(w, &fx.clone, "b1", &[]);
        let big_b1 = box_path(w, &fx.clone, "b1");
        let small_b1 = box_path(w, &largest_repo, "b1");
        let enter_in = |label: &str, repo: &Path| -> Variant {
            let repo = repo.to_path_buf();
            Variant::new(label, Target::MedianMs(20.0), move |_| {
                let mut c = w.cmd("git", &repo);
                c.args(["treebox", "enter", "b1", "--print"]);
                c
            })
        };
        let rev_parse_in = |label: &str, dir: &Path| -> Variant {
            let dir = dir.to_path_buf();
            Variant::new(label, Target::None, move |_| {
                let mut c = w.cmd("git", &dir);
                c.args(["rev-parse", "HEAD"]);
                c
            })
        };
        let mut variants = vec![
            rev_parse_in("git rev-parse HEAD in box, 5,000 files", &big_b1),
            enter_in("git treebox enter b1 --print, 5,000 files", &fx.clone),
            rev_parse_in("git rev-parse HEAD in box, 20 files", &small_b1).vs(2),
        ];
        for (&n, repo) in counts.iter().zip(&list_repos) {
            variants
                .push(enter_in(&format!("git treebox enter b1 --print, {n} boxes"), repo).vs(2));
        }
        let first_enter_row = rows.len() + 3;
        measure(
            Group::new("enter", list_runs, 2, variants),
            &mut rows,
            &mut loads,
        );
        let enter_medians: Vec<f64> = rows[first_enter_row..].iter().map(|r| r.median).collect();
        for (i, pair) in counts.windows(2).enumerate() {
            let (a, b) = (pair[0], pair[1]);
            rows.push(Row::value(
                "enter",
                &format!("enter growth, {a}→{b} boxes"),
                "ms/box",
                vec![(enter_medians[i + 1] - enter_medians[i]) / (b - a) as f64],
            ));
        }
    }

    // clone: raw `git clone --shared` + checkout vs `git treebox create --git clone`, on
    // a repository with a history (the size target is about a clone borrowing a real
    // object store; a one-commit store is barely larger than one index).
    let (mut hist_files, mut hist_build_s) = (0, 0.0);
    if wanted("clone") {
        let t = Instant::now();
        let hist_origin;
        (hist_origin, hist_files) = make_history_origin(w, "hist");
        let hist = clone_of(w, &hist_origin, "hist");
        let hist_raw = w.root.join("raw-hist");
        fs::create_dir_all(&hist_raw).expect("mkdir raw-hist");
        hist_build_s = t.elapsed().as_secs_f64();
        eprintln!(
            "history fixture: {hist_files} files, {} commits, in {hist_build_s:.1}s",
            HISTORY_COMMITS + 1
        );
        let mut clone = Group::pair(
            "clone",
            rounds,
            Variant::seq(
                "git clone --shared --no-checkout + checkout -b (raw)",
                Target::None,
                |i| {
                    let dir = hist_raw.join(format!("clone-{i}"));
                    let mut a = w.cmd("git", &hist_raw);
                    a.args(["clone", "--quiet", "--shared", "--no-checkout"])
                        .arg(&hist)
                        .arg(&dir);
                    let mut b = w.cmd("git", &hist_raw);
                    b.arg("-C").arg(&dir).args([
                        "checkout",
                        "-q",
                        "-b",
                        &format!("c{i}"),
                        "origin/main",
                    ]);
                    vec![a, b]
                },
            ),
            Variant::new(
                "git treebox create --git clone --no-fetch",
                Target::Ratio(1.35),
                |i| {
                    let mut c = w.cmd("git", &hist);
                    c.args(["treebox", "create", &format!("c{i}"), "--git", "clone"])
                        .args(["--no-fetch", "--no-launch"]);
                    c
                },
            ),
        );
        clone.between = Some(Box::new(|_| between_rounds(w, &hist, false)));
        measure(clone, &mut rows, &mut loads);
        // Sizes: the last clone of each kind, the user's object store, a worktree box.
        let last = rounds; // warm-up round 0, then rounds 1..=rounds
        let ours = box_path(w, &hist, &format!("c{last}")).join(".git");
        let raw = hist_raw.join(format!("clone-{last}/.git"));
        let objects = hist.join(".git/objects");
        let size = |p: &Path| tree_bytes(p, &mut HashSet::new());
        let git_dir =
            |p: &Path| PathBuf::from(w.git(p, &["rev-parse", "--absolute-git-dir"]).trim());
        create_box(w, &hist, "wt", &[]);
        let wt_admin = git_dir(&box_path(w, &hist, "wt"));
        let (ours_b, raw_b, objects_b, wt_b) =
            (size(&ours), size(&raw), size(&objects), size(&wt_admin));
        let index_b = fs::metadata(ours.join("index")).map_or(0, |m| m.len());
        let ours_objects_b = size(&ours.join("objects"));
        // The same clone on the one-commit fixture, for comparison with earlier runs.
        create_box(w, &fx.clone, "c-one", &["--git", "clone"]);
        let one_b = size(&box_path(w, &fx.clone, "c-one").join(".git"));
        let one_objects_b = size(&fx.clone.join(".git/objects"));
        for (label, bytes) in [
            ("user's .git/objects", objects_b),
            ("treebox clone's .git", ours_b),
            ("  of which index", index_b),
            ("  of which objects/", ours_objects_b),
            ("raw clone --shared .git", raw_b),
            ("worktree box's admin dir (reference)", wt_b),
        ] {
            rows.push(Row::value("clone size", label, "KB", vec![kb(bytes)]));
        }
        let pct = |b: u64, of: u64| 100.0 * b as f64 / of.max(1) as f64;
        rows.push(
            Row::value(
                "clone size",
                "treebox clone's .git / user's objects",
                "%",
                vec![pct(ours_b, objects_b)],
            )
            .target(Target::Below(1.0)),
        );
        rows.push(Row::value(
            "clone size",
            "same, without the index",
            "%",
            vec![pct(ours_b - index_b, objects_b)],
        ));
        rows.push(Row::value(
            "clone size",
            "one-commit fixture: clone's .git / objects (reference)",
            "%",
            vec![pct(one_b, one_objects_b)],
        ));
    }

    // containers, last: the section writes a user config that selects docker.
    let docker = if !wanted("docker") {
        json!({ "status": "skipped", "reason": "BENCH_ONLY" })
    } else {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            docker_section(w, &small_origin, docker_rounds, &mut rows, &mut loads)
        })) {
            Ok(Ok(())) => json!({ "status": "measured" }),
            Ok(Err(why)) => {
                eprintln!("note: container measures skipped: {why}");
                json!({ "status": "skipped", "reason": why })
            }
            Err(_) => {
                eprintln!("note: container measures failed (see the panic above); cleaned up");
                json!({ "status": "failed" })
            }
        }
    };

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
            "loadavg_by_group": loads,
        },
        "timestamp": iso8601(now),
        "unix_time": now,
        "duration_s": started.elapsed().as_secs_f64(),
        "config": {
            "create_rounds": rounds,
            "startup_runs": startup_runs,
            "list_runs": list_runs,
            "list_box_counts": counts,
            "list_fixture_files": small_files,
            "list_fixture_build_s": list_fixture_s,
            "docker_rounds": docker_rounds,
            "fixture_files": fx.files,
            "history_fixture_files": hist_files,
            "history_fixture_commits": HISTORY_COMMITS + 1,
            "history_fixture_build_s": hist_build_s,
            "cleanup_between_rounds": cleanup,
            "only": std::env::var("BENCH_ONLY").ok(),
            "rss_method": RSS_METHOD,
        },
        "docker": docker,
        "results": rows.iter().map(Row::json).collect::<Vec<_>>(),
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
