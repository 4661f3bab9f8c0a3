//! The live screen: the terminal, the threads, and the actions the keys ask for.
//!
//! - The main thread owns the terminal and the [`App`]; it draws, reads keys (100 ms
//!   polls) and takes what the other threads send ([`Msg`]).
//! - The refresher ([`super::refresh`]) sends snapshots and the selected box's
//!   details; it never blocks the screen.
//! - `n`, `x` and `d` run on a worker thread each (a create's fetch and image build,
//!   a teardown's assessment), reporting back with a [`Msg`]; one at a time.
//! - `Enter` leaves raw mode and the alternate screen, attaches (or does what `enter`
//!   does when no session is live: start one, or run in the foreground without tmux),
//!   and restores both once the user detaches.

use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event, KeyEventKind};
use ratatui::crossterm::{cursor, execute, terminal};
use ratatui::Terminal;

use super::actions::{assess, create, diff, land, remove};
use super::app::{Action, App, Details, Mode, Then};
use super::refresh::Wake;
use super::Scope;
use crate::cli::error::{self, CliError, ErrorKind};
use crate::cli::ui::Ui;
use crate::git::Repo;
use crate::state::Layout;
use crate::watch::Row;

/// What the other threads tell the screen.
pub enum Msg {
    Rows(Vec<Row>),
    Details(Details),
    /// An action ended: its last word, and whether it failed.
    Done(String, bool),
    /// Teardown's question about a box (`repo\0name`), and what it assessed.
    Ask(String, String, Box<crate::teardown::Target>),
    /// The refresher could not read the boxes (said, not retried at once).
    Trouble(String),
    /// A diff to show.
    Diff(String, Vec<String>),
    /// The machines of the config not asked this time (their rows are stale).
    Unreached(Vec<String>),
}

/// Raw mode and the alternate screen, undone on drop (also on a panic's unwind).
struct Screen;

impl Screen {
    fn enter() -> std::io::Result<Screen> {
        terminal::enable_raw_mode()?;
        execute!(
            std::io::stdout(),
            terminal::EnterAlternateScreen,
            cursor::Hide
        )?;
        Ok(Screen)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = execute!(
            std::io::stdout(),
            terminal::LeaveAlternateScreen,
            cursor::Show
        );
        let _ = terminal::disable_raw_mode();
    }
}

fn io_error(e: std::io::Error) -> CliError {
    CliError::new(ErrorKind::Runtime, "the terminal could not be drawn on").caused_by(e)
}

/// A box's repository and layout, from the repository's path.
pub fn open(repo: &str) -> Result<(Repo, Layout), CliError> {
    let repo = Repo::discover(std::path::Path::new(repo))
        .map_err(crate::provision::ProvisionError::from)?;
    let layout = crate::provision::enter::layout_for(&repo, None)?;
    Ok((repo, layout))
}

/// Run the live screen until `q`.
pub fn run(
    scope: Scope,
    title: String,
    machines: &[crate::config::Machine],
    ui: &mut Ui,
    notify: bool,
) -> Result<i32, CliError> {
    if !ui.stdout_is_tty() || !ui.stdin_is_tty() {
        let bin = match scope {
            Scope::Machine => "git sandbox",
            Scope::Repo(..) => "git treebox",
        };
        return Err(CliError::new(
            ErrorKind::Usage,
            "watch draws a live screen, and this is not a terminal",
        )
        .hint(format!(
            "For scripts, print one snapshot: `{bin} watch --once --json`."
        )));
    }
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut app = App::new(title, color);
    app.grouped = matches!(scope, Scope::Machine);
    app.machines = !machines.is_empty();
    app.in_tmux = std::env::var_os("TMUX").is_some_and(|v| !v.is_empty());
    app.tmux = crate::session::available();
    let (tx, rx) = std::sync::mpsc::channel::<Msg>();
    let selected = Arc::new(Mutex::new(None::<String>));
    let (wake_tx, wake_rx) = std::sync::mpsc::channel::<Wake>();
    let machine = matches!(scope, Scope::Machine);
    super::refresh::spawn(
        scope,
        machines.to_vec(),
        tx.clone(),
        wake_rx,
        selected.clone(),
        app.tmux,
    );
    let mut screen = Some(Screen::enter().map_err(io_error)?);
    let mut term = Terminal::new(CrosstermBackend::new(std::io::stdout())).map_err(io_error)?;
    let mut pending: Option<crate::teardown::Target> = None;
    let mut bell = super::bell::Bell::new(notify);
    loop {
        app.now = crate::state::record::now() as i64;
        term.draw(|f| super::view::draw(f, &app))
            .map_err(io_error)?;
        // Everything the other threads sent since the last frame.
        while let Ok(m) = rx.try_recv() {
            // An action's end changes boxes: read everything again.
            if matches!(m, Msg::Done(..)) {
                let _ = wake_tx.send(Wake::Full);
            }
            if let Msg::Rows(rows) = &m {
                bell.ring(&app.rows, rows);
            }
            take(&mut app, m, &mut pending);
        }
        if !event::poll(Duration::from_millis(100)).map_err(io_error)? {
            continue;
        }
        let Event::Key(k) = event::read().map_err(io_error)? else {
            continue; // a resize: the next frame draws at the new size
        };
        if k.kind != KeyEventKind::Press {
            continue;
        }
        let before = app.selected.clone();
        let action = app.on_key(k);
        if app.selected != before {
            *selected
                .lock()
                .expect("the selection lock is never poisoned") = app.selected.clone();
            let _ = wake_tx.send(Wake::Details);
        }
        match action {
            Action::None => {}
            Action::Quit => break,
            Action::Refresh => {
                let _ = wake_tx.send(Wake::Full);
            }
            Action::Attach(row) => {
                drop(screen.take());
                let said = attach(&row, ui, machine);
                screen = Some(Screen::enter().map_err(io_error)?);
                term.clear().map_err(io_error)?;
                app.message = Some(said);
                let _ = wake_tx.send(Wake::Full);
            }
            Action::Create(name) => {
                app.busy = Some(format!("creating {name}"));
                let repo = app.selected_row().map(|r| r.repo.clone());
                worker(tx.clone(), move || {
                    create(&name, machine.then_some(repo).flatten())
                });
            }
            Action::Teardown(row) => {
                app.busy = Some(format!("looking at {}", row.name));
                worker(tx.clone(), move || assess(&row));
            }
            Action::Remove(key) => {
                let Some(t) = pending.take() else { continue };
                app.busy = Some(format!("removing {}", t.entry.leaf));
                let repo = key.split('\0').next().unwrap_or_default().to_string();
                worker(tx.clone(), move || remove(&repo, &t));
            }
            Action::Land(key) => {
                let mut parts = key.split('\0');
                let repo = parts.next().unwrap_or_default().to_string();
                let name = parts.next().unwrap_or_default().to_string();
                app.busy = Some(format!("landing {name}"));
                worker(tx.clone(), move || land(&repo, &name, machine));
            }
            Action::Diff(row) => {
                app.busy = Some(format!("reading {}'s diff", row.name));
                worker(tx.clone(), move || diff(&row));
            }
        }
    }
    drop(screen);
    Ok(error::OK)
}

/// Run `f` on a thread of its own and send what it says.
fn worker(tx: Sender<Msg>, f: impl FnOnce() -> Msg + Send + 'static) {
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
}

/// Apply one message to the app.
fn take(app: &mut App, m: Msg, pending: &mut Option<crate::teardown::Target>) {
    match m {
        Msg::Rows(rows) => app.set_rows(rows),
        Msg::Details(d) => app.details = Some(d),
        Msg::Done(text, failed) => {
            app.busy = None;
            app.message = Some((crate::watch::clean(&text), failed));
        }
        Msg::Trouble(text) => app.message = Some((crate::watch::clean(&text), true)),
        Msg::Unreached(machines) => app.unreached = machines,
        Msg::Ask(key, question, target) => {
            app.busy = None;
            *pending = Some(*target);
            app.mode = Mode::Confirm {
                key,
                question,
                then: Then::Remove,
            };
        }
        Msg::Diff(title, lines) => {
            app.busy = None;
            app.mode = Mode::Diff {
                title,
                lines,
                scroll: 0,
            };
        }
    }
}

/// Attach to `row`'s agent, off the dashboard's screen. Returns what to say after.
fn attach(row: &Row, ui: &mut Ui, machine: bool) -> (String, bool) {
    if let Some(m) = &row.machine {
        return attach_far(row, m, ui);
    }
    let leaf = crate::watch::clean(&row.name);
    let (_, layout) = match open(&row.repo) {
        Ok(x) => x,
        Err(e) => return (super::actions::line(&e), true),
    };
    if std::env::var_os("TMUX").is_some_and(|v| !v.is_empty()) {
        ui.info(&format!(
            "attaching to `{leaf}` on treebox's own tmux server: detach with its prefix (your tmux.conf's, Ctrl-b by default), then d"
        ));
    }
    let live = crate::names::Leaf::parse(&row.name)
        .ok()
        .map(|l| layout.session_path(&l))
        .filter(|m| crate::state::session::is_live(m))
        .and_then(|m| crate::session::Session::for_marker(&m).ok());
    match live.map(|s| s.attach()) {
        Some(Ok(crate::session::Ended::Detached)) => {
            (format!("back from `{leaf}`; its agent runs on"), false)
        }
        Some(Ok(crate::session::Ended::Exited(code))) => {
            (format!("`{leaf}`'s agent exited {code}"), code != 0)
        }
        Some(Err(e)) => (crate::sanitize::chain(&e), true),
        // No live session: what `enter` does (start one and attach, or run in the
        // foreground without tmux).
        None => match enter(row, ui, machine) {
            Ok(0) => (format!("back from `{leaf}`"), false),
            Ok(code) => (format!("`{leaf}`: enter exited {code}"), true),
            Err(e) => (super::actions::line(&e), true),
        },
    }
}

/// Attach to the agent of a box on machine `m`, as `git treebox enter NAME` does for a
/// box there (`ssh -t`; detaching comes back here, the agent works on there).
fn attach_far(row: &Row, m: &str, ui: &mut Ui) -> (String, bool) {
    let leaf = crate::watch::clean(&row.name);
    let far = crate::cli::load_config()
        .and_then(|cfg| crate::cli::on::far_box(&cfg, m, &row.repo, &row.name));
    let entered = far.and_then(|far| {
        let verb = crate::remote::terminal::Verb::Enter { detach: false };
        crate::cli::on::on_terminal(&far, verb, ui)
    });
    match entered {
        Ok(0) => (format!("back from `{leaf}` on machine `{m}`"), false),
        Ok(code) => (
            format!("`{leaf}` on machine `{m}`: enter exited {code}"),
            true,
        ),
        Err(e) => (super::actions::line(&e), true),
    }
}

/// What `git treebox enter NAME` does (no session is live): in the box's repository.
fn enter(row: &Row, ui: &mut Ui, machine: bool) -> Result<i32, CliError> {
    use clap::Parser;
    if machine {
        std::env::set_current_dir(&row.repo).map_err(|e| {
            CliError::new(ErrorKind::Cwd, format!("cannot enter {}", row.repo)).caused_by(e)
        })?;
    }
    let cli = crate::cli::TreeboxCli::try_parse_from(["git-treebox", "enter", &row.name])
        .map_err(|e| CliError::new(ErrorKind::Usage, e.to_string()))?;
    let crate::cli::TreeboxCommand::Enter(args) = cli.command else {
        return Err(CliError::new(ErrorKind::Runtime, "not an enter command"));
    };
    crate::cli::enter::run(args, ui)
}
