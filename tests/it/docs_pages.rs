//! The docs are tested (issue 39): every key the config parser accepts has its heading
//! in docs/configuration.md, every relative link of the pages (README.md, CHANGELOG.md,
//! docs/*.md) resolves, and the README's 60-second tour runs, line by line, on a fresh
//! clone with the agents replaced by a stand-in.
//!
//! The pages are read as the reader gets them (the checked-in files); nothing here
//! writes to them.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::env::{write_exec, TestEnv, SANDBOX, TREEBOX};

/// The crate root, where the pages are.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[track_caller]
fn read_page(rel: &str) -> String {
    let p = root().join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

// ---- Markdown, as far as these tests read it --------------------------------------

/// The lines of a page with their numbers (from 1), each marked whether it is inside a
/// fenced code block (its fence lines included).
fn lines_with_fences(text: &str) -> Vec<(usize, &str, bool)> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        let run = |c: char| t.chars().take_while(|&x| x == c).count();
        match fence {
            None => {
                let opens = ['`', '~'].into_iter().find(|&c| run(c) >= 3);
                if let (Some(c), true) = (opens, indent <= 3) {
                    fence = Some((c, run(c)));
                    out.push((i + 1, line, true));
                    continue;
                }
                out.push((i + 1, line, false));
            }
            Some((c, n)) => {
                if indent <= 3 && run(c) >= n && t[run(c)..].trim().is_empty() {
                    fence = None;
                }
                out.push((i + 1, line, true));
            }
        }
    }
    out
}

/// `line` without its inline code spans (a link shown as code is not a link).
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find('`') {
        out.push_str(&rest[..at]);
        let ticks = rest[at..].chars().take_while(|&c| c == '`').count();
        let after = &rest[at + ticks..];
        let close = "`".repeat(ticks);
        match after.find(&close) {
            Some(end) => rest = &after[end + ticks..],
            None => {
                out.push_str(&rest[at..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The headings of a page (ATX `## text` and setext), outside code: (level, text).
fn headings(text: &str) -> Vec<(usize, String)> {
    let lines = lines_with_fences(text);
    let mut out = Vec::new();
    for (i, &(_, line, code)) in lines.iter().enumerate() {
        if code {
            continue;
        }
        let t = line.trim_start();
        let level = t.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&level)
            && line.len() - t.len() <= 3
            && (t.len() == level || t[level..].starts_with([' ', '\t']))
        {
            let body = t[level..].trim();
            // An optional closing run of `#`s (after a space).
            let body = match body.trim_end_matches('#') {
                b if b.is_empty() || b.ends_with([' ', '\t']) => b.trim_end(),
                _ => body,
            };
            out.push((level, body.to_string()));
            continue;
        }
        // Setext: a paragraph line underlined with `===` or `---`.
        if let Some(&(_, next, false)) = lines.get(i + 1) {
            let n = next.trim();
            let para = !t.is_empty()
                && !t.starts_with(['-', '*', '+', '>', '|', '<'])
                && !t.chars().next().is_some_and(|c| c.is_ascii_digit());
            // (The underline of a paragraph's one line, not of a longer paragraph's.)
            let first = i == 0 || {
                let (_, prev, code) = lines[i - 1];
                code || prev.trim().is_empty() || prev.trim_start().starts_with('#')
            };
            if para && first && !n.is_empty() {
                if n.chars().all(|c| c == '=') {
                    out.push((1, t.trim().to_string()));
                } else if n.chars().all(|c| c == '-') {
                    out.push((2, t.trim().to_string()));
                }
            }
        }
    }
    out
}

/// A heading's text as rendered: code spans' contents, links' texts.
fn rendered(heading: &str) -> String {
    let mut out = String::new();
    let mut rest = heading;
    // Links and images: `[text](url)` → `text`.
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](") else {
            break;
        };
        let Some(close) = rest[open + mid..].find(')') else {
            break;
        };
        out.push_str(rest[..open].trim_end_matches('!'));
        out.push_str(&rest[open + 1..open + mid]);
        rest = &rest[open + mid + close + 1..];
    }
    out.push_str(rest);
    out.replace('`', "")
}

/// GitHub's anchor for a heading: lower case, punctuation dropped but `-` and `_`, each
/// space a `-`.
fn slug(heading: &str) -> String {
    rendered(heading)
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor a page has: its headings' slugs (a repeated one gets `-1`, `-2`, …) and
/// the `id`s and `name`s of its HTML anchors.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, h) in headings(text) {
        let base = slug(&h);
        let mut candidate = base.clone();
        let mut n = 0;
        while out.contains(&candidate) {
            n += 1;
            candidate = format!("{base}-{n}");
        }
        out.insert(candidate);
    }
    for (_, line, code) in lines_with_fences(text) {
        if code {
            continue;
        }
        for attr in ["id=\"", "name=\""] {
            let mut rest = line;
            while let Some(at) = rest.find(attr) {
                let after = &rest[at + attr.len()..];
                let end = after.find('"').unwrap_or(after.len());
                out.insert(after[..end].to_string());
                rest = &after[end..];
            }
        }
    }
    out
}

/// The link targets on one line of prose: inline `[text](target "title")` (and
/// images) and reference definitions `[label]: target`.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut out = Vec::new();
    let t = line.trim_start();
    // (A footnote, `[^1]: text`, is no link.)
    if t.starts_with('[') && !t.starts_with("[^") && line.len() - t.len() <= 3 {
        if let Some(end) = t.find("]:") {
            if let Some(target) = t[end + 2..].split_whitespace().next() {
                out.push(target.trim_matches(['<', '>']).to_string());
            }
        }
    }
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let after = rest[at + 2..].trim_start();
        let target = if let Some(inner) = after.strip_prefix('<') {
            inner.split('>').next().unwrap_or("").to_string()
        } else {
            let mut depth = 0usize;
            let end = after
                .char_indices()
                .find(|&(_, c)| match c {
                    '(' => {
                        depth += 1;
                        false
                    }
                    ')' if depth == 0 => true,
                    ')' => {
                        depth -= 1;
                        false
                    }
                    c => c.is_whitespace(),
                })
                .map_or(after.len(), |(i, _)| i);
            after[..end].to_string()
        };
        out.push(target);
        rest = &rest[at + 2..];
    }
    out
}

/// `%20` and friends, decoded.
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b[i], hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An absolute URL (`https:`, `mailto:`, any scheme): not this test's to resolve.
fn is_external(target: &str) -> bool {
    target.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
    }) || target.starts_with("//")
}

/// The pages whose links are checked: README.md, CHANGELOG.md and docs/*.md.
fn pages() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ["README.md", "CHANGELOG.md"]
        .iter()
        .map(|p| root().join(p))
        .filter(|p| p.is_file())
        .collect();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "md") && p.is_file())
                .collect()
        })
        .unwrap_or_default();
    docs.sort();
    out.extend(docs);
    out
}

/// Why `target`, linked from `page`, does not resolve; `None` when it does.
fn broken(page: &Path, text: &str, target: &str) -> Option<String> {
    if target.is_empty() {
        return Some("an empty target".into());
    }
    let (path, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(percent_decoded(a))),
        None => (target, None),
    };
    let path = percent_decoded(path);
    let (file, file_text) = if path.is_empty() {
        (page.to_path_buf(), Some(text.to_string()))
    } else {
        let base = if path.starts_with('/') {
            root()
        } else {
            page.parent().unwrap().to_path_buf()
        };
        let file = base.join(path.trim_start_matches('/'));
        let Ok(real) = file.canonicalize() else {
            return Some("no such file or directory".into());
        };
        if !real.starts_with(root().canonicalize().unwrap()) {
            return Some("outside the repository".into());
        }
        let md = real.is_file() && real.extension().is_some_and(|x| x == "md");
        (
            real.clone(),
            md.then(|| std::fs::read_to_string(&real).unwrap()),
        )
    };
    match (anchor, file_text) {
        (Some(a), Some(t)) if !a.is_empty() => {
            let all = anchors(&t);
            (!all.contains(&a.to_lowercase())).then(|| {
                format!(
                    "no heading of {} has the anchor `#{a}`",
                    file.strip_prefix(root()).unwrap_or(&file).display()
                )
            })
        }
        _ => None,
    }
}

// ---- 1. Every config key is documented ---------------------------------------------

/// The level-3 headings of docs/configuration.md that are one code span: the keys it
/// documents.
fn documented_keys(text: &str) -> BTreeSet<String> {
    headings(text)
        .into_iter()
        .filter(|(level, _)| *level == 3)
        .filter_map(|(_, h)| {
            let inner = h.strip_prefix('`')?.strip_suffix('`')?;
            (!inner.contains('`')).then(|| inner.to_string())
        })
        .collect()
}

#[test]
fn every_config_key_the_parser_accepts_has_its_heading_in_configuration_md() {
    let keys = treebox::config::accepted_keys();
    assert!(keys.len() > 10, "{keys:?}");
    let page = "docs/configuration.md";
    let text = read_page(page);
    let documented = documented_keys(&text);
    let missing: Vec<&String> = keys.iter().filter(|k| !documented.contains(*k)).collect();
    assert!(
        missing.is_empty(),
        "{page} has no level-3 heading for {} key(s) the config parser accepts; each key \
         wants one, its path in backticks (nested keys joined with `.`, a harness's name \
         as `<name>`):\n{}",
        missing.len(),
        missing
            .iter()
            .map(|k| format!("  ### `{k}`"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

// ---- 2. Every relative link resolves ------------------------------------------------

#[test]
fn every_relative_link_of_the_docs_resolves() {
    let pages = pages();
    assert!(
        pages.iter().any(|p| p.ends_with("README.md")),
        "no README.md"
    );
    let mut bad = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let rel = page.strip_prefix(root()).unwrap().display().to_string();
        for (n, line, code) in lines_with_fences(&text) {
            if code {
                continue;
            }
            for target in link_targets(line) {
                if is_external(&target) {
                    continue;
                }
                checked += 1;
                if let Some(why) = broken(page, &text, &target) {
                    bad.push(format!("  {rel}:{n} → {target} ({why})"));
                }
            }
        }
    }
    eprintln!("{checked} relative link(s) in {} page(s)", pages.len());
    assert!(
        bad.is_empty(),
        "{} of {checked} relative link(s) do not resolve:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn the_link_checker_reads_markdown_as_github_does() {
    assert_eq!(slug("A 60-second tour"), "a-60-second-tour");
    assert_eq!(slug("`limits.memory`"), "limitsmemory");
    assert_eq!(
        slug("`harnesses.<name>.allowRoot`"),
        "harnessesnameallowroot"
    );
    assert_eq!(slug("What [create](x.md) does!"), "what-create-does");
    assert_eq!(slug("snake_case & more"), "snake_case--more");
    let page = "# T\n## Same\n```\n## Not a heading [x](nowhere.md)\n```\n## Same\nSub\n---\n";
    let a = anchors(page);
    assert_eq!(
        a,
        ["t", "same", "same-1", "sub"]
            .map(String::from)
            .into_iter()
            .collect()
    );
    assert_eq!(
        link_targets("see [a](docs/x.md#y \"t\"), `[b](no.md)` and ![i](<p q.png>)"),
        ["docs/x.md#y", "p q.png"]
    );
    assert_eq!(link_targets("[ref]: ../a.md"), ["../a.md"]);
    assert!(is_external("https://x") && is_external("mailto:a@b"));
    // Resolved against the page, and anchors against the page linked to.
    let readme = root().join("README.md");
    let text = "# Top\n## A 60-second tour\n";
    for ok in [
        "Cargo.toml",
        "docs",
        "./docs/../Cargo.toml",
        "#a-60-second-tour",
        "#top",
    ] {
        assert_eq!(broken(&readme, text, ok), None, "{ok}");
    }
    for bad in [
        "nowhere.md",
        "..",
        "#no-such-heading",
        "docs/../README.md#nope",
    ] {
        assert!(broken(&readme, text, bad).is_some(), "{bad}");
    }
    assert!(!is_external("docs/guide.md#a:b"));
    assert_eq!(
        documented_keys("### `a.b`\n#### `c`\n### `d` and more\n###   `e`  ##\n"),
        ["a.b", "e"].map(String::from).into_iter().collect()
    );
}

// ---- 3. The tour runs -----------------------------------------------------------------

/// One command of the tour: where it is in README.md, as written, and its words.
#[derive(Debug)]
struct TourLine {
    line: usize,
    text: String,
    words: Vec<String>,
}

/// `line` up to its shell comment (a `#` starting a word, outside quotes).
fn without_comment(line: &str) -> &str {
    let (mut quote, mut escaped, mut prev_space) = (None, false, true);
    for (i, c) in line.char_indices() {
        match (quote, c) {
            _ if escaped => escaped = false,
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('"'), '\\') => escaped = true,
            (Some(_), _) => {}
            (None, '\\') => escaped = true,
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') if prev_space => return &line[..i],
            _ => {}
        }
        prev_space = c.is_whitespace();
    }
    line
}

/// The `git treebox …` and `git sandbox …` lines of README.md's first ```sh block after
/// its `## A 60-second tour` heading, in order (a line ending in `\` goes on).
fn tour(readme: &str) -> Vec<TourLine> {
    let lines = lines_with_fences(readme);
    let start = lines
        .iter()
        .position(|(_, l, code)| !code && l.trim() == "## A 60-second tour")
        .expect("README.md has no `## A 60-second tour` heading");
    let open = lines[start..]
        .iter()
        .position(|(_, l, _)| l.trim() == "```sh")
        .map(|i| start + i)
        .expect("README.md's tour has no ```sh block");
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for &(n, line, code) in &lines[open + 1..] {
        if !code || line.trim_start().starts_with("```") {
            break;
        }
        let (at, mut joined) = pending.take().unwrap_or((n, String::new()));
        joined.push_str(line);
        if let Some(cont) = without_comment(&joined).trim_end().strip_suffix('\\') {
            pending = Some((at, format!("{cont} ")));
            continue;
        }
        let command = without_comment(&joined).trim();
        if command.starts_with("git treebox") || command.starts_with("git sandbox") {
            let words = shell_words::split(command)
                .unwrap_or_else(|e| panic!("README.md:{at}: `{command}`: {e}"));
            if matches!(
                words.get(1).map(String::as_str),
                Some("treebox" | "sandbox")
            ) {
                out.push(TourLine {
                    line: at,
                    text: command.to_string(),
                    words,
                });
            }
        }
    }
    out
}

/// The agent of the tour, for every harness: does a little work in its box (a commit)
/// and is done at once.
const STAND_IN_AGENT: &str = r#"#!/bin/sh
printf '%s %s\n' "${TREEBOX_BOX-}" "$$" >> stand-in-work.txt
git add stand-in-work.txt && git commit -q -m "Work of the stand-in agent" >/dev/null 2>&1
exit 0
"#;

/// What a user types to leave a tour command that holds the terminal: `q` for the live
/// screen and the pager, `exit` for a shell (or the agent `enter` opens again).
fn leave_keys(args: &[String]) -> &'static str {
    match args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(String::as_str)
    {
        Some("watch" | "diff") => "q",
        Some("up" | "attach" | "enter") => "exit\r",
        _ => "",
    }
}

/// The longest one tour command may take on the terminal.
const COMMAND_LIMIT: Duration = Duration::from_secs(20);

/// Run `program ARGS` in the repository on a pseudo-terminal (util-linux `script`) of
/// 40×120, as a user at a terminal would: a `[y/N]` question is answered `y`; once the
/// screen is still (or 2 s after it first showed something) and the command is still
/// running, `leave` is typed (again every 2 s). Returns the exit code (`None`: still
/// running at [`COMMAND_LIMIT`], then ended) and what the terminal showed.
fn on_terminal(
    env: &TestEnv,
    program: &str,
    args: &[String],
    leave: &str,
) -> (Option<i32>, String) {
    let line = format!(
        "stty rows 40 cols 120 2>/dev/null; exec {}",
        shell_words::join(std::iter::once(program).chain(args.iter().map(String::as_str)))
    );
    let mut child: Child = env
        .command("script", &env.repo)
        .args(["-qec", &line, "/dev/null"])
        // A terminal has a type (less and tmux read it).
        .env("TERM", "xterm-256color")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux script (a pseudo-terminal for the tour)");
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let readers: Vec<_> = [
        Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ]
    .into_iter()
    .map(|mut out| {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        })
    })
    .collect();
    drop(tx);
    let mut keys = child.stdin.take().unwrap();
    let mut type_in = |s: &str| {
        // The command may be gone already: nothing left to read what is typed.
        let _ = keys.write_all(s.as_bytes()).and_then(|()| keys.flush());
    };
    let started = Instant::now();
    let (mut seen, mut answered) = (Vec::new(), 0);
    let (mut first_output, mut last_output, mut typed) = (None, started, None::<Instant>);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            use std::os::unix::process::ExitStatusExt;
            break Some(
                status
                    .code()
                    .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
            );
        }
        if started.elapsed() > COMMAND_LIMIT {
            // `script` ends the command on its terminal, then itself; if it does not
            // within a few seconds, it is killed (the command gets the hangup).
            for signal in [libc::SIGTERM, libc::SIGKILL] {
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                // SAFETY: a plain kill(2) of the `script` this function started, not
                // yet waited for (so its pid is still its own).
                unsafe { libc::kill(child.id() as i32, signal) };
                let since = Instant::now();
                while child.try_wait().unwrap().is_none() && since.elapsed().as_secs() < 3 {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            let _ = child.wait();
            break None;
        }
        if let Ok(chunk) = rx.recv_timeout(Duration::from_millis(50)) {
            seen.extend(chunk);
            last_output = Instant::now();
            first_output.get_or_insert(last_output);
            continue;
        }
        let questions = String::from_utf8_lossy(&seen).matches("[y/N]").count();
        if questions > answered {
            answered = questions;
            type_in("y\r");
            continue;
        }
        let still = last_output.elapsed() > Duration::from_millis(400);
        let shown_long = first_output.is_some_and(|t| t.elapsed() > Duration::from_secs(2));
        let again = typed.is_none_or(|t| t.elapsed() > Duration::from_secs(2));
        if !leave.is_empty() && first_output.is_some() && (still || shown_long) && again {
            type_in(leave);
            typed = Some(Instant::now());
        }
    };
    drop(keys);
    for r in readers {
        r.join().unwrap();
    }
    while let Ok(chunk) = rx.try_recv() {
        seen.extend(chunk);
    }
    (code, plain(&String::from_utf8_lossy(&seen)))
}

/// Terminal output without its escape sequences and carriage returns, last 40 lines.
fn plain(shown: &str) -> String {
    let mut out = String::new();
    let mut chars = shown.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => while chars.next().is_some_and(|c| !('@'..='~').contains(&c)) {},
                Some(']' | 'P') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                Some('(' | ')') => {
                    chars.next();
                }
                _ => {}
            },
            '\r' => {}
            c => out.push(c),
        }
    }
    let lines: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

#[test]
fn the_readme_tour_runs_line_by_line_on_a_fresh_clone() {
    let tour = tour(&read_page("README.md"));
    assert!(
        !tour.is_empty(),
        "README.md's tour runs no git treebox/sandbox command"
    );
    let failed = run_tour(&tour);
    assert!(
        failed.is_empty(),
        "{} of the tour's {} line(s) failed:\n{}",
        failed.len(),
        tour.len(),
        failed.join("\n")
    );
}

/// Run the tour's lines in order, on a terminal, in a fresh clone of a repository whose
/// bare origin has one commit on `main` (and the branches the tour checks out), the
/// agents replaced by [`STAND_IN_AGENT`], the runner the host. Returns what failed,
/// line by line.
fn run_tour(tour: &[TourLine]) -> Vec<String> {
    let env = TestEnv::new();
    // The sessions the tour's agents and shells run in: the test's own tmux server.
    let _server = crate::sessions::Server::of(&env);
    let agent = env.bin.join("stand-in-agent");
    write_exec(&agent, STAND_IN_AGENT);
    let a = agent.display();
    env.write_config(&format!(
        r#"{{"harnesses": {{"claude": {{"program": "{a}"}}, "codex": {{"program": "{a}"}}}}}}"#
    ));
    // The tour's project: origin has the branches it checks out (`--checkout NAME`).
    for l in tour {
        for (i, w) in l.words.iter().enumerate() {
            let branch = match w.strip_prefix("--checkout") {
                Some("") => l.words.get(i + 1).cloned(),
                Some(v) => v.strip_prefix('=').map(str::to_string),
                None => None,
            };
            if let Some(b) = branch {
                env.git(
                    &env.repo,
                    &["push", "-q", "origin", &format!("HEAD:refs/heads/{b}")],
                );
            }
        }
    }
    let mut failed = Vec::new();
    for l in tour {
        let program = if l.words[1] == "treebox" {
            TREEBOX
        } else {
            SANDBOX
        };
        let args = &l.words[2..];
        let since = Instant::now();
        let (code, shown) = on_terminal(&env, program, args, leave_keys(args));
        let took = since.elapsed();
        eprintln!("README.md:{} `{}`: {code:?} in {took:.1?}", l.line, l.text);
        if code != Some(0) {
            let how = code.map_or(format!("still running after {COMMAND_LIMIT:?}"), |c| {
                format!("exit {c}")
            });
            failed.push(format!(
                "README.md:{} `{}`: {how}{}; the terminal showed:\n{shown}\n",
                l.line,
                l.text,
                if failed.is_empty() {
                    ""
                } else {
                    " (after an earlier line failed)"
                }
            ));
        }
    }
    failed
}

#[test]
fn the_tour_is_read_from_its_sh_block() {
    let readme = "# x\n```sh\ngit treebox no\n```\n## A 60-second tour\n\nText.\n\n```sh\n\
                  cd ~/src/p\n\
                  git treebox create fix/a   # a comment, with 'quotes\n\
                  \x20                         # more comment\n\
                  git sandbox up \"two words\" \\\n  --json   # joined\n\
                  git treebox create --harness codex x -- \"add # not a comment\"\n\
                  ```\n```sh\ngit treebox later\n```\n";
    let t = tour(readme);
    let words: Vec<Vec<String>> = t.iter().map(|l| l.words.clone()).collect();
    assert_eq!(
        words,
        [
            vec!["git", "treebox", "create", "fix/a"],
            vec!["git", "sandbox", "up", "two words", "--json"],
            vec![
                "git",
                "treebox",
                "create",
                "--harness",
                "codex",
                "x",
                "--",
                "add # not a comment"
            ],
        ]
        .map(|v| v.into_iter().map(String::from).collect::<Vec<_>>())
    );
    assert_eq!(t.iter().map(|l| l.line).collect::<Vec<_>>(), [11, 13, 15]);
    assert_eq!(leave_keys(&["-q".into(), "watch".into()]), "q");
    assert_eq!(leave_keys(&["create".into(), "up".into()]), "");
}
