//! Drawing the dashboard: [`App`] in, a frame out (ratatui), nothing else. Snapshot
//! tests render it on ratatui's `TestBackend` (80×24, `NO_COLOR`).
//!
//! Every string a box wrote (name, branch, commit subjects, file paths, screen lines)
//! goes through [`clean`] here, at the last step before ratatui, which draws control
//! characters as they are.
//!
//! Columns, and the order they drop when the terminal is narrow: BOX first, then AGE,
//! then STATE, then BRANCH, then LAST; NAME, AGENT and DIFF always stay (at 80 columns
//! only BOX is dropped). `git sandbox watch` adds REPO (the repository's directory
//! name; rows are grouped by it), which drops last of all (at 80 columns BOX, AGE and
//! STATE make room for it). With machines in the config, ON (the machine a box is on,
//! `-` for this one) comes after REPO, and drops just before it (at 80 columns AGE
//! makes room for it). A box of a machine that cannot be asked now shows its last-known
//! row with the state `stale`.
//!
//! The pane's side column starts with the selected box's ports (`ports_lines`): the
//! row table does not show them.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Row as TRow, Table, TableState};
use ratatui::Frame;

use super::app::{key_of, App, Mode};
use crate::cli::list::age;
use crate::watch::{clean, needs, Agent, Need, Row};

/// One column: its title, width, and whether it is dropped before the others (lower:
/// dropped first; `None`: never dropped).
struct Col {
    title: &'static str,
    width: u16,
    drop: Option<u8>,
}

const REPO: Col = Col {
    title: "REPO",
    width: 12,
    drop: Some(7),
};
/// The machine a box is on: index [`ON_AT`].
const ON: Col = Col {
    title: "ON",
    width: 6,
    drop: Some(6),
};
const ON_AT: usize = COLS.len() + 1;
const COLS: [Col; 8] = [
    Col {
        title: "NAME",
        width: 14,
        drop: None,
    },
    Col {
        title: "BRANCH",
        width: 16,
        drop: Some(4),
    },
    Col {
        title: "BOX",
        width: 10,
        drop: Some(1),
    },
    Col {
        title: "AGENT",
        width: 12,
        drop: None,
    },
    Col {
        title: "AGE",
        width: 4,
        drop: Some(2),
    },
    Col {
        title: "LAST",
        width: 4,
        drop: Some(5),
    },
    Col {
        title: "DIFF",
        width: 11,
        drop: None,
    },
    Col {
        title: "STATE",
        width: 7,
        drop: Some(3),
    },
];

/// The column of index `i`: REPO, then COLS, then ON.
fn col(i: usize) -> &'static Col {
    match i {
        0 => &REPO,
        ON_AT => &ON,
        i => &COLS[i - 1],
    }
}

/// The columns that fit `width` (indices, see [`col`]), in order: REPO when
/// `grouped`, ON with `machines`, then COLS.
fn columns(width: u16, grouped: bool, machines: bool) -> Vec<usize> {
    let mut cols: Vec<usize> = grouped.then_some(0).into_iter().collect();
    cols.extend(machines.then_some(ON_AT));
    cols.extend(1..=COLS.len());
    // The selection mark, then one space between columns.
    let need = |cols: &[usize]| -> u16 { 3 + cols.iter().map(|&i| col(i).width + 1).sum::<u16>() };
    while need(&cols) > width {
        let Some(pos) = cols
            .iter()
            .enumerate()
            .filter_map(|(p, &i)| col(i).drop.map(|d| (d, p)))
            .min()
            .map(|(_, p)| p)
        else {
            break;
        };
        cols.remove(pos);
    }
    cols
}

fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// The AGENT cell: `working 3m`, `waiting 20s`, `idle 1h`, `exited 1`, `live`, `-`.
pub fn agent_cell(r: &Row, now: i64) -> String {
    let with_age = |w: &str| match r.since {
        Some(t) => format!("{w} {}", age(now, t)),
        None => w.to_string(),
    };
    match r.agent {
        Agent::Exited(code) => format!("exited {code}"),
        Agent::None => "-".into(),
        Agent::Live => "live".into(),
        a => with_age(a.word()),
    }
}

/// The DIFF cell: `+120 −8` (committed work against the base), `-` for none.
pub fn diff_cell(r: &Row) -> String {
    match r.size {
        Some(s) if s.commits > 0 || s.additions > 0 || s.deletions > 0 => {
            format!("+{} \u{2212}{}", s.additions, s.deletions)
        }
        Some(_) => "-".into(),
        None => "?".into(),
    }
}

fn cell(r: &Row, i: usize, now: i64) -> String {
    let ages = |t: Option<i64>| t.map_or("-".into(), |t| age(now, t));
    match i {
        0 => clean(
            std::path::Path::new(&r.repo)
                .file_name()
                .map_or(r.repo.as_str(), |n| n.to_str().unwrap_or("?")),
        ),
        1 => clean(&r.name),
        2 => match &r.branch {
            Some(b) if r.placeholder => format!("{}*", clean(b)),
            Some(b) => clean(b),
            None => "-".into(),
        },
        3 => r.kind.clone(),
        4 => agent_cell(r, now),
        5 => ages(r.created),
        6 => ages(r.last_commit),
        7 => diff_cell(r),
        ON_AT => r.machine.as_deref().map_or("-".into(), clean),
        _ if r.stale => "stale".into(),
        _ => match r.state.as_str() {
            "ok" => String::new(),
            s => s.to_string(),
        },
    }
}

fn agent_style(r: &Row, color: bool) -> Style {
    if !color {
        return Style::default();
    }
    match r.agent {
        Agent::Waiting => Style::default()
            .fg(Color::Yellow)
            .add_modifier(Modifier::BOLD),
        Agent::Exited(0) => Style::default().fg(Color::Blue),
        Agent::Exited(_) => Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        Agent::Working => Style::default().fg(Color::Green),
        _ => Style::default(),
    }
}

/// Draw the whole screen.
pub fn draw(f: &mut Frame, app: &App) {
    let area = f.area();
    if let Mode::Diff {
        title,
        lines,
        scroll,
    } = &app.mode
    {
        return draw_diff(f, area, title, lines, *scroll);
    }
    let visible = app.visible();
    // At least the header and a row, even on a terminal too small to hold them (one
    // that reports 0×0, as `script` without a size gives): ratatui clips the rest.
    let table_h =
        (visible.len() as u16 + 1).clamp(2, (area.height.saturating_sub(3) / 2 + 1).max(2));
    // A long message (an error and its hint) takes two lines rather than being cut.
    let (footer, style) = footer(app);
    let len = footer.chars().count() as u16;
    let foot_h = if len <= area.width {
        1
    } else {
        // Word wrapping leaves lines short: room for it.
        (len + area.width / 4)
            .div_ceil(area.width.max(1))
            .clamp(2, 3)
    };
    let [top, table, pane, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(table_h),
        Constraint::Min(3),
        Constraint::Length(foot_h),
    ])
    .areas(area);
    draw_title(f, top, app, visible.len());
    draw_table(f, table, app, &visible);
    draw_pane(f, pane, app);
    let text = fit(&footer, foot.width as usize * foot.height as usize);
    f.render_widget(
        Paragraph::new(text)
            .style(style)
            .wrap(ratatui::widgets::Wrap { trim: false }),
        foot,
    );
    if app.mode == Mode::Help {
        draw_help(f, area);
    }
}

fn draw_title(f: &mut Frame, area: Rect, app: &App, shown: usize) {
    let waiting = app.rows.iter().filter(|r| needs(r).is_some()).count();
    let n = app.rows.len();
    let mut text = format!(
        "{} · {n} box{}",
        clean(&app.title),
        if n == 1 { "" } else { "es" }
    );
    if shown != app.rows.len() {
        text.push_str(&format!(" ({shown} shown)"));
    }
    if waiting > 0 {
        text.push_str(&format!(" · {waiting} need you"));
    }
    if !app.unreached.is_empty() {
        text.push_str(&format!(
            " · no answer: {}",
            clean(&app.unreached.join(", "))
        ));
    }
    if let Some(b) = &app.busy {
        text.push_str(&format!(" · {}…", clean(b)));
    }
    let style = Style::default().add_modifier(Modifier::BOLD);
    f.render_widget(
        Paragraph::new(fit(&text, area.width as usize)).style(style),
        area,
    );
}

fn draw_table(f: &mut Frame, area: Rect, app: &App, visible: &[&Row]) {
    if visible.is_empty() {
        let text = if app.rows.is_empty() {
            "no boxes yet: press n to make one"
        } else {
            "no box matches the filter (Esc clears it)"
        };
        f.render_widget(Paragraph::new(text), area);
        return;
    }
    let cols = columns(area.width, app.grouped, app.machines);
    let header = TRow::new(
        std::iter::once("  ".to_string()).chain(cols.iter().map(|&i| col(i).title.to_string())),
    )
    .style(Style::default().add_modifier(Modifier::BOLD));
    let cursor = app.cursor();
    let rows = visible.iter().enumerate().map(|(n, r)| {
        // The selection shows without colour or reverse video too (`>`), and so does
        // why a box needs the user.
        let mark = format!(
            "{}{}",
            if Some(n) == cursor { ">" } else { " " },
            match needs(r) {
                Some(Need::Waiting) => "?",
                Some(Need::Exited) => "!",
                Some(Need::IdleWithCommits) => "+",
                None => " ",
            }
        );
        let cells =
            std::iter::once(ratatui::widgets::Cell::from(mark)).chain(cols.iter().map(|&i| {
                let text = fit(&cell(r, i, app.now), col(i).width as usize);
                let style = if i == 4 {
                    agent_style(r, app.color)
                } else {
                    Style::default()
                };
                ratatui::widgets::Cell::from(text).style(style)
            }));
        TRow::new(cells)
    });
    let mut widths = vec![Constraint::Length(2)];
    widths.extend(cols.iter().map(|&i| {
        if i == 1 {
            Constraint::Min(col(i).width)
        } else {
            Constraint::Length(col(i).width)
        }
    }));
    let table = Table::new(rows, widths)
        .header(header)
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default().with_selected(app.cursor());
    f.render_stateful_widget(table, area, &mut state);
}

fn draw_pane(f: &mut Frame, area: Rect, app: &App) {
    let Some(r) = app.selected_row() else {
        return;
    };
    let title = format!(
        " {} · {} ",
        clean(&r.name),
        r.branch.as_deref().map_or("-".into(), clean)
    );
    let block = Block::default()
        .borders(Borders::TOP)
        .title(fit(&title, area.width as usize));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let details = app.details.as_ref().filter(|d| d.key == key_of(r));
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(inner);
    let h = left.height as usize;
    let screen: Vec<Line> = match details.map(|d| &d.screen) {
        _ if r.machine.is_some() && r.stale => {
            vec![Line::from(
                "(its machine did not answer: what it last listed)",
            )]
        }
        _ if r.machine.is_some() => vec![Line::from("(Enter attaches to it there)")],
        _ if !app.tmux => vec![Line::from("(no tmux: no screen preview)")],
        Some(Some(lines)) if lines.is_empty() => vec![Line::from("(an empty screen)")],
        Some(Some(lines)) => {
            let from = lines.len().saturating_sub(h);
            lines[from..].iter().map(|l| Line::from(clean(l))).collect()
        }
        Some(None) => vec![Line::from("(no session: Enter starts the agent)")],
        None => vec![Line::from("…")],
    };
    f.render_widget(Paragraph::new(screen), left);
    let width = right.width.saturating_sub(1) as usize;
    let mut side: Vec<Line> = ports_lines(r, width).into_iter().map(Line::from).collect();
    if let Some(d) = details {
        if let Some(e) = &d.error {
            side.push(Line::from(clean(e)));
        }
        side.push(Line::from(match d.uncommitted {
            Some(true) => "uncommitted changes".to_string(),
            Some(false) => "no uncommitted changes".to_string(),
            None => "uncommitted: not read".to_string(),
        }));
        if !d.commits.is_empty() {
            side.push(Line::from(Span::styled(
                format!(
                    "{} commit{}:",
                    d.commits.len(),
                    if d.commits.len() == 1 { "" } else { "s" }
                ),
                Style::default().add_modifier(Modifier::BOLD),
            )));
            side.extend(
                d.commits
                    .iter()
                    .take(4)
                    .map(|c| Line::from(format!("· {}", clean(c)))),
            );
        }
        if !d.files.is_empty() {
            side.push(Line::from(Span::styled(
                format!(
                    "{} file{}:",
                    d.files.len(),
                    if d.files.len() == 1 { "" } else { "s" }
                ),
                Style::default().add_modifier(Modifier::BOLD),
            )));
            side.extend(
                d.files
                    .iter()
                    .map(|(p, a, del)| Line::from(format!("{} +{a} \u{2212}{del}", clean(p)))),
            );
        }
    }
    let side: Vec<Line> = side
        .into_iter()
        .map(|l| Line::from(fit(&l.to_string(), width)).style(l.style))
        .collect();
    f.render_widget(
        Paragraph::new(side).block(Block::default().borders(Borders::LEFT)),
        right,
    );
}

/// The pane's ports line ([`crate::watch::ports_parts`] joined by ` · `), nothing for a
/// box without ports; too long for `width`, each part on a line of its own, indented.
fn ports_lines(r: &Row, width: usize) -> Vec<String> {
    let parts = crate::watch::ports_parts(r);
    let one = parts.join(" · ");
    if parts.len() > 1 && one.chars().count() <= width {
        return vec![one];
    }
    let indent = |(i, p): (usize, String)| if i == 0 { p } else { format!("  {p}") };
    parts.into_iter().enumerate().map(indent).collect()
}

/// The bottom line: what is being typed, the question, the last message, or the keys.
fn footer(app: &App) -> (String, Style) {
    match &app.mode {
        Mode::Filter => (format!("/{}_", clean(&app.filter)), Style::default()),
        // A refused name is said on the prompt's line, the name kept for mending.
        Mode::Create(name) => match &app.message {
            Some((m, true)) => (
                format!("{m} — new box (Esc cancels): {}_", clean(name)),
                Style::default().add_modifier(Modifier::BOLD),
            ),
            _ => (
                format!("new box (a branch name; Esc cancels): {}_", clean(name)),
                Style::default(),
            ),
        },
        Mode::Confirm { question, .. } => (
            clean(question),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        _ => match &app.message {
            Some((m, failed)) => {
                let s = if *failed && app.color {
                    Style::default().fg(Color::Red)
                } else if *failed {
                    Style::default().add_modifier(Modifier::BOLD)
                } else {
                    Style::default()
                };
                (clean(m), s)
            }
            None => {
                let mut keys =
                    "↑↓ move  ⏎ attach  tab next  n new  d diff  x remove  / filter  ? keys  q quit"
                        .to_string();
                if app.in_tmux {
                    // Inside the user's own tmux: which key comes back from a box.
                    keys = "⏎ attach (prefix d: back)  tab next n new  d diff  x rm  / filter ? keys  q quit"
                        .to_string();
                }
                (keys, Style::default())
            }
        },
    }
}

/// The keys, one per line (`?`).
pub const KEYS: [(&str, &str); 12] = [
    ("↑ ↓  j k", "move"),
    (
        "Enter",
        "attach to the box's agent (detach: tmux prefix, then d)",
    ),
    (
        "Tab",
        "next box that needs you (? waiting, ! exited, + idle with commits)",
    ),
    ("n", "new box: name prompt, then `create -d`"),
    ("d", "the box's diff against its base"),
    ("x", "remove the box, as `teardown` would"),
    ("/", "filter by name or branch (Esc clears)"),
    ("r", "read everything again now"),
    ("?", "these keys"),
    ("q", "quit"),
    ("Ctrl-C", "quit"),
    (
        "l",
        "land the box's work onto its base (`git treebox land`), after a y",
    ),
];

fn draw_help(f: &mut Frame, area: Rect) {
    let h = (KEYS.len() as u16 + 2).min(area.height);
    let w = area.width.min(76);
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    let lines: Vec<Line> = KEYS
        .iter()
        .map(|(k, what)| Line::from(fit(&format!("{k:<9} {what}"), w as usize - 2)))
        .collect();
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .title(" keys (any key closes) "),
        ),
        r,
    );
}

fn draw_diff(f: &mut Frame, area: Rect, title: &str, lines: &[String], scroll: usize) {
    let [top, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(area);
    f.render_widget(
        Paragraph::new(fit(&clean(title), area.width as usize))
            .style(Style::default().add_modifier(Modifier::BOLD)),
        top,
    );
    let shown: Vec<Line> = lines
        .iter()
        .skip(scroll)
        .take(body.height as usize)
        .map(|l| Line::from(clean(l)))
        .collect();
    f.render_widget(Paragraph::new(shown), body);
    f.render_widget(
        Paragraph::new(format!(
            "line {}/{}  ↑↓ PgUp PgDn scroll  Esc back",
            (scroll + 1).min(lines.len()),
            lines.len()
        )),
        foot,
    );
}

/// The screen drawn once on a `width`×`height` buffer, as text (trailing blanks cut):
/// `watch --once` prints it, and the snapshot tests compare it.
pub fn text(app: &App, width: u16, height: u16) -> String {
    let backend = ratatui::backend::TestBackend::new(width, height);
    let mut term = ratatui::Terminal::new(backend).expect("a test backend never fails");
    term.draw(|f| draw(f, app))
        .expect("a test backend never fails");
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in 0..height {
        let mut line = String::new();
        for x in 0..width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.trim_end().to_string()
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
