//! The dashboard's screens on ratatui's `TestBackend`: 80×24, 120×30, `NO_COLOR`,
//! the column drop order, prompts, and no control character from a box on screen.

use super::*;
use crate::watch::Size;

const NOW: i64 = 1_800_000_000;

fn row(name: &str, agent: Agent, since: i64) -> Row {
    Row {
        repo: "/home/me/src/app".into(),
        name: name.into(),
        path: format!("/home/me/src/app/.treebox/worktrees/{name}"),
        branch: Some(name.replace("--", "/")),
        placeholder: false,
        kind: "wt".into(),
        git_mode: Some("worktree".into()),
        runner: Some("host".into()),
        harness: Some("claude".into()),
        live: !matches!(agent, Agent::Exited(_) | Agent::None),
        agent,
        since: Some(NOW - since),
        created: Some(NOW - 7200),
        last_commit: Some(NOW - 600),
        subject: Some("wip".into()),
        size: Some(Size {
            commits: 0,
            additions: 0,
            deletions: 0,
        }),
        landed: None,
        state: "ok".into(),
        machine: None,
        stale: false,
        ports: Vec::new(),
        listening: None,
        loopback_only: Vec::new(),
        unknown: Vec::new(),
    }
}

/// A dashboard of five boxes, one of them hostile, the first selected.
fn app(color: bool) -> App {
    let mut work = row("fix--login", Agent::Idle, 300);
    work.size = Some(Size {
        commits: 1,
        additions: 41,
        deletions: 3,
    });
    let mut exited = row("bump-deps", Agent::Exited(1), 0);
    exited.since = None;
    let mut hostile = row("evil", Agent::Working, 20);
    hostile.branch = Some("evil\u{9b}2J\u{202e}txt.exe\u{1b}]0;pwned\u{7}".into());
    let mut docker = row("api-v2", Agent::Working, 180);
    docker.kind = "clone@docker".into();
    let mut landed = row("old-fix", Agent::None, 0);
    landed.since = None;
    landed.landed = Some(true);
    landed.state = "landed".into();
    let mut placeholder = row("brave-otter", Agent::Live, 0);
    placeholder.since = None;
    placeholder.branch = Some("treebox/brave-otter".into());
    placeholder.placeholder = true;
    let mut pagination = row("add-pagination", Agent::Waiting, 20);
    pagination.size = Some(Size {
        commits: 2,
        additions: 120,
        deletions: 8,
    });
    let mut rows = vec![
        work,
        exited,
        hostile,
        docker,
        pagination,
        landed,
        placeholder,
    ];
    crate::watch::sort(&mut rows);
    let mut a = App::new("git treebox watch · /home/me/src/app".into(), color);
    a.now = NOW;
    a.set_rows(rows);
    a.details = Some(super::super::app::Details {
        key: key_of(a.selected_row().unwrap()),
        screen: Some(vec![
            "● I can add cursor pagination to /users.".into(),
            "  Should the page size be configurable?".into(),
            "\u{1b}]0;pwned-title\u{7}\u{1b}[31mred?\u{9b}0m".into(),
            "> ".into(),
        ]),
        commits: vec!["Add cursor type".into(), "Paginate /users\u{202e}".into()],
        files: vec![
            ("src/users.rs".into(), 80, 4),
            ("src/page\u{1b}[2J.rs".into(), 40, 4),
        ],
        uncommitted: Some(true),
        error: None,
    });
    a
}

fn assert_clean(text: &str) {
    for c in text.chars() {
        assert!(
            c == '\n'
                || !(c.is_control()
                    || ('\u{202a}'..='\u{202e}').contains(&c)
                    || ('\u{2066}'..='\u{2069}').contains(&c)),
            "{c:?} reached the screen"
        );
    }
}

#[test]
fn screen_80x24() {
    let text = text(&app(true), 80, 24);
    assert_clean(&text);
    insta::assert_snapshot!("screen_80x24", text);
}

/// A terminal too small for anything (one that reports 0×0, as `script` run without a
/// size gives, or a pane squeezed to a line) draws what fits and does not panic.
#[test]
fn a_tiny_or_empty_terminal_draws_without_panicking() {
    for (w, h) in [(0, 0), (1, 1), (80, 0), (0, 24), (80, 1), (80, 3), (10, 4)] {
        let text = text(&app(true), w, h);
        assert!(text.lines().count() <= usize::from(h), "{w}×{h}: {text}");
    }
}

#[test]
fn screen_120x30_shows_every_column() {
    let text = text(&app(true), 120, 30);
    assert_clean(&text);
    for title in [
        "NAME", "BRANCH", "BOX", "AGENT", "AGE", "LAST", "DIFF", "STATE",
    ] {
        assert!(text.lines().nth(1).unwrap().contains(title), "{title}");
    }
    insta::assert_snapshot!("screen_120x30", text);
}

#[test]
fn columns_drop_in_the_stated_order() {
    let with = |w: u16, grouped: bool, machines: bool| -> Vec<&str> {
        columns(w, grouped, machines)
            .into_iter()
            .map(|i| col(i).title)
            .collect()
    };
    let titles = |w: u16, grouped: bool| with(w, grouped, false);
    assert_eq!(titles(200, false).len(), 8);
    assert!(!titles(80, false).contains(&"BOX"));
    assert!(titles(80, false).contains(&"AGE"));
    assert!(!titles(200, false).contains(&"REPO"));
    assert!(titles(200, true).contains(&"REPO"));
    assert_eq!(
        titles(80, true),
        ["REPO", "NAME", "BRANCH", "AGENT", "LAST", "DIFF"]
    );
    assert_eq!(titles(40, false), ["NAME", "AGENT", "DIFF"]);
    assert_eq!(titles(60, false), ["NAME", "AGENT", "LAST", "DIFF"]);
    // With machines, ON: at 80 columns AGE makes room for it; it drops before REPO.
    assert_eq!(
        with(80, false, true),
        ["ON", "NAME", "BRANCH", "AGENT", "LAST", "DIFF", "STATE"]
    );
    assert_eq!(with(200, true, true)[..3], ["REPO", "ON", "NAME"]);
    assert_eq!(
        with(80, true, true),
        ["REPO", "ON", "NAME", "AGENT", "LAST", "DIFF"]
    );
    assert_eq!(with(60, true, true), ["REPO", "NAME", "AGENT", "DIFF"]);
}

/// With machines in the config: the ON column names each box's machine (`-`: this
/// one), a machine that did not answer is named in the title and its boxes' rows are
/// `stale` (never counted as needing you); a box there has no screen here.
#[test]
fn screen_with_machines_80x24() {
    let mut a = app(false);
    let mut far = row("feat--far", Agent::Idle, 60);
    far.machine = Some("big".into());
    far.repo = "/home/me/src/app".into();
    far.path =
        "/home/them/.local/share/treebox/machines/k/repo/.treebox/worktrees/feat--far".into();
    far.size = None;
    let mut gone = row("feat--gone", Agent::Waiting, 600);
    gone.machine = Some("gpu".into());
    gone.stale = true;
    gone.size = None;
    let mut rows = a.rows.clone();
    rows.extend([far.clone(), gone.clone()]);
    crate::watch::sort(&mut rows);
    a.machines = true;
    a.unreached = vec!["gpu".into()];
    a.set_rows(rows);
    let t = text(&a, 80, 24);
    assert_clean(&t);
    let line = |name: &str| t.lines().find(|l| l.contains(name)).unwrap().to_string();
    assert!(line("feat--far").contains(" big "), "{t}");
    assert!(line("feat--gone").trim_end().ends_with("stale"), "{t}");
    assert!(line("fix--login").contains(" -  "), "{t}");
    assert!(t.lines().next().unwrap().contains("no answer: gpu"), "{t}");
    // 3 need you, as without the machines: the stale waiting box is not news.
    assert!(t.lines().next().unwrap().contains("3 need you"), "{t}");
    insta::assert_snapshot!("screen_with_machines_80x24", t);
    a.selected = Some(key_of(&far));
    a.details = Some(super::super::refresh::details(&far, true));
    let t = text(&a, 80, 24);
    assert!(t.contains("(Enter attaches to it there)"), "{t}");
    assert!(t.contains("on machine `big`"), "{t}");
}

#[test]
fn no_color_draws_the_same_text_without_colours() {
    let plain = app(false);
    let text_plain = text(&plain, 80, 24);
    assert_eq!(text_plain, text(&app(true), 80, 24));
    insta::assert_snapshot!("screen_80x24_no_color", text_plain);
    let backend = ratatui::backend::TestBackend::new(80, 24);
    let mut term = ratatui::Terminal::new(backend).unwrap();
    term.draw(|f| draw(f, &plain)).unwrap();
    let buf = term.backend().buffer();
    for c in buf.content() {
        assert_eq!(c.fg, Color::Reset, "{c:?}");
        assert_eq!(c.bg, Color::Reset, "{c:?}");
    }
}

#[test]
fn help_and_prompts() {
    let mut a = app(false);
    a.mode = Mode::Help;
    let t = text(&a, 80, 24);
    assert!(t.contains("next box that needs you"), "{t}");
    a.mode = Mode::Create("fix/\u{1b}x".into());
    let t = text(&a, 80, 24);
    assert_clean(&t);
    assert!(t.lines().last().unwrap().starts_with("new box"), "{t}");
    a.mode = Mode::Normal;
    a.message = Some(("refused (exit 5): box `x` has uncommitted changes. Commit or stash them in /home/me/src/app/.treebox/worktrees/x, or discard them: `git treebox teardown --force x`.".into(), true));
    let t = text(&a, 80, 24);
    assert!(t.contains("--force x`."), "{t}");
}

/// The selected box's ports in the pane, above its changes: the block, which listen,
/// and which listen on its container's loopback alone (`!`); the row table is as
/// without ports. Too long for the pane, each part takes a line.
#[test]
fn screen_with_ports_80x24() {
    let mut a = app(false);
    let table = |t: &str| t.lines().take(9).collect::<Vec<_>>().join("\n");
    let before = table(&text(&a, 80, 24));
    let mut rows = a.rows.clone();
    let api = rows.iter_mut().find(|r| r.name == "api-v2").unwrap();
    api.ports = vec![20000, 20001, 20002];
    api.listening = Some(vec![20000]);
    api.loopback_only = vec![20001];
    let api = api.clone();
    a.set_rows(rows);
    a.selected = Some(key_of(&api));
    a.details = Some(super::super::app::Details {
        key: key_of(&api),
        screen: Some(vec!["> ".into()]),
        uncommitted: Some(false),
        ..Default::default()
    });
    let t = text(&a, 80, 24);
    assert_clean(&t);
    // The table is as without ports: only the selection moved.
    let unmarked = |t: &str| -> Vec<String> {
        table(t)
            .lines()
            .map(|l| l.chars().skip(1).collect())
            .collect()
    };
    assert_eq!(unmarked(&t), unmarked(&before));
    assert!(t.contains("│ports 20000 20001 20002\n"), "{t}");
    assert!(t.contains("│  listening 20000\n"), "{t}");
    assert!(t.contains("│  20001! on its loopback only\n"), "{t}");
    insta::assert_snapshot!("screen_with_ports_80x24", t);
    // Wide enough, one line; a box without ports, none.
    assert_eq!(
        ports_lines(&api, 80),
        ["ports 20000 20001 20002 · listening 20000 · 20001! on its loopback only"]
    );
    assert!(ports_lines(&row("plain", Agent::Idle, 0), 80).is_empty());
}
