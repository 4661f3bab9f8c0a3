//! The dashboard's state and what each key does to it: pure (no terminal, no
//! threads), so it is unit-tested key by key. [`super::live`] feeds it keys and
//! snapshots and carries out the [`Action`]s it returns; [`super::view`] draws it.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::watch::{needs, Row};

/// What the pane shows of the selected box (read for that box alone).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Details {
    /// `repo\0name` of the box it describes.
    pub key: String,
    /// The last lines of its screen, cleaned; `None` without a session.
    pub screen: Option<Vec<String>>,
    /// Its recent commits since the base, newest first (subjects, raw).
    pub commits: Vec<String>,
    /// Files changed since the base, committed and not: path (raw), +, −.
    pub files: Vec<(String, usize, usize)>,
    /// Whether the checkout holds uncommitted changes (`None`: not read).
    pub uncommitted: Option<bool>,
    /// Why the box's git could not be read.
    pub error: Option<String>,
}

/// What the keyboard is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Normal,
    /// Typing a filter (`/`).
    Filter,
    /// Typing a new box's name (`n`).
    Create(String),
    /// Teardown's question (`x`), waiting for `y`.
    Confirm {
        key: String,
        question: String,
        then: Then,
    },
    /// The keys (`?`).
    Help,
    /// A box's diff (`d`), scrolled.
    Diff {
        title: String,
        lines: Vec<String>,
        scroll: usize,
    },
}

/// What a `y` to a question does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    Remove,
    Land,
}

/// What the event loop must do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    None,
    Quit,
    /// Attach to the box's session (leaving the screen while attached).
    Attach(Row),
    /// Create a box of this name, detached.
    Create(String),
    /// Assess the box for removal (teardown's refusals), then ask.
    Teardown(Row),
    /// The user said yes to teardown's question about this box (`repo\0name`).
    Remove(String),
    /// The user said yes to landing this box (`repo\0name`).
    Land(String),
    /// Read the box's diff.
    Diff(Row),
    /// Read everything again now.
    Refresh,
}

/// The dashboard.
#[derive(Debug, Clone)]
pub struct App {
    /// `git treebox watch · /path` or `git sandbox watch`.
    pub title: String,
    /// Rows in needs-me order ([`crate::watch::sort`]).
    pub rows: Vec<Row>,
    /// The selected row's key (`repo\0name`): it stays selected when rows move.
    pub selected: Option<String>,
    pub filter: String,
    pub mode: Mode,
    /// The last word of an action: text, and whether it is a failure.
    pub message: Option<(String, bool)>,
    pub details: Option<Details>,
    /// What runs in the background now (`creating fix-x`).
    pub busy: Option<String>,
    pub color: bool,
    /// Inside the user's own tmux (the footer says how to detach).
    pub in_tmux: bool,
    /// Rows carry the repository (`git sandbox watch`): grouped by it.
    pub grouped: bool,
    /// The config names other machines: an ON column says where each box is.
    pub machines: bool,
    /// The machines not asked on the last look (their rows are stale).
    pub unreached: Vec<String>,
    /// Now, in seconds since the epoch (ages are computed against it).
    pub now: i64,
    /// Without tmux, no screens (attach falls back as `enter` does).
    pub tmux: bool,
    /// `q` was pressed once while an action ran.
    pub quit_armed: bool,
}

/// The key of a row: `repo\0name`, and `\0machine` for a box on another machine.
pub fn key_of(r: &Row) -> String {
    match &r.machine {
        Some(m) => format!("{}\0{}\0{m}", r.repo, r.name),
        None => format!("{}\0{}", r.repo, r.name),
    }
}

/// What the dashboard says when `key` asks for what it cannot do to a box on another
/// machine yet, or when that machine cannot be asked now; `None` when it can.
fn far_refusal(key: char, r: &Row) -> Option<String> {
    let m = crate::watch::clean(r.machine.as_deref()?);
    let name = crate::watch::clean(&r.name);
    let q = crate::cmd::quote(&name);
    Some(match key {
        '\n' if r.stale => format!(
            "`{name}` is on machine `{m}`, which did not answer: its row is what it last listed"
        ),
        '\n' => return None,
        'd' => format!("`{name}` is on machine `{m}`: its diff is not shown here yet"),
        'l' => format!("`{name}` is on machine `{m}`: landing it from here is not there yet"),
        _ => format!("`{name}` is on machine `{m}`: remove it with `git treebox rm {q}`"),
    })
}

impl App {
    pub fn new(title: String, color: bool) -> App {
        App {
            title,
            rows: Vec::new(),
            selected: None,
            filter: String::new(),
            mode: Mode::Normal,
            message: None,
            details: None,
            busy: None,
            color,
            in_tmux: false,
            grouped: false,
            machines: false,
            unreached: Vec::new(),
            now: 0,
            tmux: true,
            quit_armed: false,
        }
    }

    /// The rows the filter lets through, in order.
    pub fn visible(&self) -> Vec<&Row> {
        let f = self.filter.to_lowercase();
        self.rows
            .iter()
            .filter(|r| {
                f.is_empty()
                    || r.name.to_lowercase().contains(&f)
                    || r.branch
                        .as_deref()
                        .is_some_and(|b| b.to_lowercase().contains(&f))
            })
            .collect()
    }

    /// The selected row's index among [`Self::visible`] (the first when the selected
    /// one is gone or filtered out).
    pub fn cursor(&self) -> Option<usize> {
        let v = self.visible();
        if v.is_empty() {
            return None;
        }
        let at = self
            .selected
            .as_ref()
            .and_then(|k| v.iter().position(|r| &key_of(r) == k));
        Some(at.unwrap_or(0))
    }

    pub fn selected_row(&self) -> Option<&Row> {
        let i = self.cursor()?;
        self.visible().get(i).copied()
    }

    /// Take a new snapshot (already sorted), keeping the selection.
    pub fn set_rows(&mut self, rows: Vec<Row>) {
        self.rows = rows;
        self.fix_selection();
    }

    fn fix_selection(&mut self) {
        let key = self.selected_row().map(key_of);
        self.selected = key;
    }

    fn step(&mut self, by: isize) {
        let v = self.visible();
        let Some(i) = self.cursor() else { return };
        let n = v.len() as isize;
        let j = (i as isize + by).clamp(0, n - 1) as usize;
        self.selected = Some(key_of(v[j]));
    }

    /// Select the next box (after the selected one, wrapping) that needs the user.
    fn next_needing(&mut self) {
        let v = self.visible();
        let Some(i) = self.cursor() else { return };
        let n = v.len();
        let found = (1..=n)
            .map(|k| (i + k) % n)
            .find(|&j| needs(v[j]).is_some());
        match found {
            Some(j) => self.selected = Some(key_of(v[j])),
            None => self.message = Some(("no box needs you".into(), false)),
        }
    }

    /// One key. Ctrl-C quits from anywhere.
    pub fn on_key(&mut self, k: KeyEvent) -> Action {
        if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c') {
            return Action::Quit;
        }
        match std::mem::replace(&mut self.mode, Mode::Normal) {
            Mode::Normal => self.normal(k),
            Mode::Help => Action::None,
            Mode::Filter => {
                match k.code {
                    KeyCode::Esc => self.filter.clear(),
                    KeyCode::Enter => {}
                    KeyCode::Backspace => {
                        self.filter.pop();
                        self.mode = Mode::Filter;
                    }
                    KeyCode::Char(c) if !c.is_control() => {
                        self.filter.push(c);
                        self.mode = Mode::Filter;
                    }
                    _ => self.mode = Mode::Filter,
                }
                self.fix_selection();
                Action::None
            }
            Mode::Create(mut name) => match k.code {
                KeyCode::Esc => {
                    self.message = None;
                    Action::None
                }
                KeyCode::Enter => {
                    let name = name.trim().to_string();
                    if name.is_empty() {
                        return Action::None;
                    }
                    // The rule `create` applies (SPEC §5), said before anything runs.
                    match crate::names::BoxName::parse(&name) {
                        Ok(_) => Action::Create(name),
                        Err(e) => {
                            self.message = Some((
                                format!(
                                    "{} (a branch name: letters, digits, `.`, `_`, `-`, `/` between parts)",
                                    crate::watch::clean(&e.to_string())
                                ),
                                true,
                            ));
                            self.mode = Mode::Create(name);
                            Action::None
                        }
                    }
                }
                KeyCode::Backspace => {
                    self.message = None;
                    name.pop();
                    self.mode = Mode::Create(name);
                    Action::None
                }
                KeyCode::Char(c) if !c.is_control() => {
                    self.message = None;
                    name.push(c);
                    self.mode = Mode::Create(name);
                    Action::None
                }
                _ => {
                    self.mode = Mode::Create(name);
                    Action::None
                }
            },
            Mode::Confirm {
                key,
                question,
                then,
            } => match k.code {
                KeyCode::Char('y') | KeyCode::Char('Y') => match then {
                    Then::Remove => Action::Remove(key),
                    Then::Land => Action::Land(key),
                },
                KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc | KeyCode::Enter => {
                    let what = match then {
                        Then::Remove => "nothing removed",
                        Then::Land => "nothing landed",
                    };
                    self.message = Some((what.into(), false));
                    Action::None
                }
                _ => {
                    self.mode = Mode::Confirm {
                        key,
                        question,
                        then,
                    };
                    Action::None
                }
            },
            Mode::Diff {
                title,
                lines,
                scroll,
            } => {
                let page = 10;
                let scroll = match k.code {
                    KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('d') => return Action::None,
                    KeyCode::Down | KeyCode::Char('j') => scroll + 1,
                    KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
                    KeyCode::PageDown | KeyCode::Char(' ') => scroll + page,
                    KeyCode::PageUp => scroll.saturating_sub(page),
                    _ => scroll,
                };
                let scroll = scroll.min(lines.len().saturating_sub(1));
                self.mode = Mode::Diff {
                    title,
                    lines,
                    scroll,
                };
                Action::None
            }
        }
    }

    fn normal(&mut self, k: KeyEvent) -> Action {
        self.message = None;
        if k.code != KeyCode::Char('q') {
            self.quit_armed = false;
        }
        let row = self.selected_row().cloned();
        // A box on another machine: Enter attaches there; what cannot reach it yet
        // says so.
        let far = |c: char| row.as_ref().and_then(|r| far_refusal(c, r));
        let said = match k.code {
            KeyCode::Enter => far('\n'),
            KeyCode::Char(c @ ('d' | 'x' | 'l')) => far(c),
            _ => None,
        };
        if let Some(said) = said {
            self.message = Some((said, true));
            return Action::None;
        }
        match k.code {
            // Quitting ends an action half-way (a create's fetch or build): say so once.
            KeyCode::Char('q') if self.busy.is_some() && !self.quit_armed => {
                self.quit_armed = true;
                self.message = Some((
                    format!(
                        "{} is still running: q again quits anyway",
                        self.busy.as_deref().unwrap_or("an action")
                    ),
                    true,
                ));
                Action::None
            }
            KeyCode::Char('q') => Action::Quit,
            KeyCode::Esc if !self.filter.is_empty() => {
                self.filter.clear();
                self.fix_selection();
                Action::None
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.step(1);
                Action::None
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.step(-1);
                Action::None
            }
            KeyCode::Tab => {
                self.next_needing();
                Action::None
            }
            KeyCode::Char('/') => {
                self.mode = Mode::Filter;
                Action::None
            }
            KeyCode::Char('?') => {
                self.mode = Mode::Help;
                Action::None
            }
            KeyCode::Char('r') => Action::Refresh,
            KeyCode::Char('n') if self.busy.is_none() => {
                self.mode = Mode::Create(String::new());
                Action::None
            }
            KeyCode::Char('n') | KeyCode::Char('x') | KeyCode::Char('l') if self.busy.is_some() => {
                self.message = Some(("wait: another action is running".into(), true));
                Action::None
            }
            KeyCode::Enter => row.map_or(Action::None, Action::Attach),
            KeyCode::Char('d') => row.map_or(Action::None, Action::Diff),
            KeyCode::Char('x') => row.map_or(Action::None, Action::Teardown),
            // `land`'s own rules decide (its refusals: a live agent, uncommitted work,
            // a conflict); the dashboard asks first, since it moves the base.
            KeyCode::Char('l') => {
                if let Some(r) = row {
                    self.mode = Mode::Confirm {
                        key: key_of(&r),
                        question: format!(
                            "Land box `{}` onto its base (`git treebox land {}`: the config's strategy, squash by default)? [y/N]",
                            crate::watch::clean(&r.name),
                            crate::watch::clean(&r.name)
                        ),
                        then: Then::Land,
                    };
                }
                Action::None
            }
            _ => Action::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::{Agent, Size};

    /// The engine's test row, with a (zero) diff size as a gathered row has.
    pub(crate) fn row(name: &str, agent: Agent) -> Row {
        let mut r = crate::watch::tests::row(name, agent);
        r.size = Some(Size {
            commits: 0,
            additions: 0,
            deletions: 0,
        });
        r
    }

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    fn app() -> App {
        let mut a = App::new("t".into(), false);
        let mut rows = vec![
            row("a", Agent::Working),
            row("b", Agent::Idle),
            row("c", Agent::Waiting),
            row("d", Agent::Working),
        ];
        crate::watch::sort(&mut rows);
        a.set_rows(rows);
        a
    }

    fn selected(a: &App) -> String {
        a.selected_row().unwrap().name.clone()
    }

    #[test]
    fn moves_jumps_and_filters() {
        let mut a = app();
        assert_eq!(selected(&a), "c"); // waiting sorts first
        a.on_key(key(KeyCode::Char('j')));
        a.on_key(key(KeyCode::Down));
        assert_eq!(selected(&a), "b");
        a.on_key(key(KeyCode::Char('k')));
        assert_eq!(selected(&a), "a");
        a.on_key(key(KeyCode::Tab));
        assert_eq!(selected(&a), "c");
        a.on_key(key(KeyCode::Char('/')));
        for c in "d".chars() {
            a.on_key(key(KeyCode::Char(c)));
        }
        assert_eq!(a.visible().len(), 1);
        assert_eq!(selected(&a), "d");
        a.on_key(key(KeyCode::Enter));
        assert_eq!(a.mode, Mode::Normal);
        a.on_key(key(KeyCode::Esc));
        assert_eq!(a.visible().len(), 4);
        assert_eq!(a.on_key(key(KeyCode::Char('q'))), Action::Quit);
    }

    #[test]
    fn create_checks_the_name_as_create_does() {
        let mut a = app();
        a.on_key(key(KeyCode::Char('n')));
        for c in "bad..name".chars() {
            a.on_key(key(KeyCode::Char(c)));
        }
        assert_eq!(a.on_key(key(KeyCode::Enter)), Action::None);
        assert!(a.message.as_ref().is_some_and(|m| m.1), "{:?}", a.message);
        assert!(matches!(a.mode, Mode::Create(_)));
        for _ in 0.."..name".len() {
            a.on_key(key(KeyCode::Backspace));
        }
        for c in "/fix".chars() {
            a.on_key(key(KeyCode::Char(c)));
        }
        assert_eq!(
            a.on_key(key(KeyCode::Enter)),
            Action::Create("bad/fix".into())
        );
    }

    #[test]
    fn teardown_asks_and_only_y_removes() {
        let mut a = app();
        a.mode = Mode::Confirm {
            key: "/r\0b".into(),
            question: "Remove b?".into(),
            then: Then::Remove,
        };
        assert_eq!(a.on_key(key(KeyCode::Char('z'))), Action::None);
        assert_eq!(
            a.on_key(key(KeyCode::Char('y'))),
            Action::Remove("/r\0b".into())
        );
        a.mode = Mode::Confirm {
            key: "/r\0b".into(),
            question: "Remove b?".into(),
            then: Then::Remove,
        };
        assert_eq!(a.on_key(key(KeyCode::Enter)), Action::None);
        assert_eq!(a.message, Some(("nothing removed".into(), false)));
        // `l` asks before landing; `y` lands the selected box.
        a.on_key(key(KeyCode::Char('l')));
        assert!(
            matches!(&a.mode, Mode::Confirm { then: Then::Land, question, .. } if question.contains("Land box `c`"))
        );
        assert_eq!(
            a.on_key(key(KeyCode::Char('y'))),
            Action::Land("/r\0c".into())
        );
    }

    /// A box on another machine: Enter attaches there (as `enter NAME` does), unless
    /// its machine did not answer; diff, remove and land say they cannot reach it yet,
    /// and change nothing.
    #[test]
    fn keys_on_a_box_of_another_machine() {
        let mut a = App::new("t".into(), false);
        let mut far = row("far", Agent::Working);
        far.machine = Some("big".into());
        let mut here = row("far", Agent::Working);
        here.machine = None;
        a.set_rows(vec![far.clone(), here.clone()]);
        // The same name here and there: two rows, two keys.
        assert_ne!(key_of(&far), key_of(&here));
        assert_eq!(a.on_key(key(KeyCode::Enter)), Action::Attach(far.clone()));
        for c in ['d', 'x', 'l'] {
            assert_eq!(a.on_key(key(KeyCode::Char(c))), Action::None, "{c}");
            let (said, failed) = a.message.clone().unwrap();
            assert!(failed && said.contains("on machine `big`"), "{c}: {said}");
            assert_eq!(c == 'x', said.contains("`git treebox rm far`"), "{said}");
            assert_eq!(a.mode, Mode::Normal, "{c}");
        }
        let mut stale = far.clone();
        stale.stale = true;
        a.set_rows(vec![stale]);
        assert_eq!(a.on_key(key(KeyCode::Enter)), Action::None);
        assert!(a.message.unwrap().0.contains("did not answer"));
    }
}
