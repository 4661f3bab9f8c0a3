//! The one owner of stdout and stderr.
//!
//! stdout carries the answer (a path, a command line, a JSON document); stderr carries
//! progress, warnings, errors and hints. Progress (a spinner and per-stage timings) is
//! shown only when stderr is a terminal and never in JSON mode. Colour follows
//! `--color`, `NO_COLOR` and whether stderr is a terminal.
//!
//! Prompts go through it too ([`Ui::confirm`], [`Ui::ask`]): a question is asked only
//! when both stdin and stderr are terminals ([`Ui::can_ask`]). All of this is decided once,
//! in [`Ui::new`]; the CLI owns the one `Ui` of a process, the engine reports to it
//! through [`Reporter`].

use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::provision::Reporter;
use crate::sanitize;

use super::error::CliError;
use super::json::Document as _;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// How the user asked output to look.
#[derive(Debug, Clone, Copy, Default)]
pub struct UiOptions {
    pub json: bool,
    pub quiet: bool,
    pub verbose: bool,
    pub color: ColorChoice,
}

/// Where the two streams go: the process's own, or buffers (tests).
#[derive(Clone, Default)]
enum Streams {
    #[default]
    Std,
    Buffers {
        out: Arc<Mutex<Vec<u8>>>,
        err: Arc<Mutex<Vec<u8>>>,
    },
}

/// What a [`Ui::capture`] Ui wrote, for tests.
#[derive(Clone)]
pub struct Captured {
    out: Arc<Mutex<Vec<u8>>>,
    err: Arc<Mutex<Vec<u8>>>,
}

impl Captured {
    pub fn stdout(&self) -> String {
        self.out
            .lock()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    pub fn stderr(&self) -> String {
        self.err
            .lock()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }
}

pub struct Ui {
    opts: UiOptions,
    streams: Streams,
    /// stderr is a terminal.
    tty: bool,
    /// stdin is a terminal.
    stdin_tty: bool,
    color: bool,
    spinner: Option<Spinner>,
    /// Warnings seen, for JSON documents.
    pub warnings: Vec<String>,
}

const FRAMES: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// A spinner thread that animates the current stage on stderr.
struct Spinner {
    current: Arc<Mutex<Option<String>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Spinner {
    fn start() -> Spinner {
        let current: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (c, s) = (current.clone(), stop.clone());
        let handle = std::thread::spawn(move || {
            let mut i = 0usize;
            while !s.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(guard) = c.lock() {
                    if let Some(stage) = guard.as_ref() {
                        let mut e = std::io::stderr().lock();
                        let _ = write!(e, "\r\x1b[2K{} {stage}…", FRAMES[i % FRAMES.len()]);
                        let _ = e.flush();
                    }
                }
                i += 1;
                std::thread::sleep(Duration::from_millis(80));
            }
        });
        Spinner {
            current,
            stop,
            handle: Some(handle),
        }
    }

    fn set(&self, stage: Option<String>) {
        if let Ok(mut g) = self.current.lock() {
            *g = stage;
        }
    }

    /// Run `f` with the spinner paused and its line cleared.
    fn paused<T>(&self, f: impl FnOnce() -> T) -> T {
        let guard = self.current.lock();
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
        let out = f();
        drop(guard);
        out
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
}

impl Ui {
    pub fn new(opts: UiOptions) -> Ui {
        let tty = std::io::stderr().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let color = match opts.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => tty && !no_color,
        };
        Ui {
            opts,
            streams: Streams::Std,
            tty,
            stdin_tty: std::io::stdin().is_terminal(),
            color,
            spinner: None,
            warnings: Vec::new(),
        }
    }

    /// A Ui that writes to buffers instead of the process's streams: no terminal, so
    /// no colour, progress or questions.
    pub fn capture(opts: UiOptions) -> (Ui, Captured) {
        let out = Arc::new(Mutex::new(Vec::new()));
        let err = Arc::new(Mutex::new(Vec::new()));
        let ui = Ui {
            opts,
            streams: Streams::Buffers {
                out: out.clone(),
                err: err.clone(),
            },
            tty: false,
            stdin_tty: false,
            color: matches!(opts.color, ColorChoice::Always),
            spinner: None,
            warnings: Vec::new(),
        };
        (ui, Captured { out, err })
    }

    /// Write `s` to stderr (or its buffer) as it is.
    fn write_err(&self, s: &str) {
        match &self.streams {
            Streams::Std => {
                let mut e = std::io::stderr().lock();
                let _ = e.write_all(s.as_bytes());
                let _ = e.flush();
            }
            Streams::Buffers { err, .. } => {
                if let Ok(mut b) = err.lock() {
                    b.extend_from_slice(s.as_bytes());
                }
            }
        }
    }

    /// Copy `r` to stdout (or its buffer).
    fn write_out(&self, r: &mut dyn std::io::Read) -> std::io::Result<u64> {
        match &self.streams {
            Streams::Std => {
                let mut o = std::io::stdout().lock();
                let n = std::io::copy(r, &mut o)?;
                o.flush()?;
                Ok(n)
            }
            Streams::Buffers { out, .. } => {
                let mut data = Vec::new();
                let n = r.read_to_end(&mut data)?;
                if let Ok(mut b) = out.lock() {
                    b.extend_from_slice(&data);
                }
                Ok(n as u64)
            }
        }
    }

    pub fn json(&self) -> bool {
        self.opts.json
    }

    /// Is stdout a terminal (not a pipe, a file or a test's buffer)?
    pub fn stdout_is_tty(&self) -> bool {
        matches!(self.streams, Streams::Std) && std::io::stdout().is_terminal()
    }

    pub fn stderr_is_tty(&self) -> bool {
        self.tty
    }

    /// Is stdin a terminal (so a container exec can be given one)?
    pub fn stdin_is_tty(&self) -> bool {
        self.stdin_tty
    }

    /// Can the user be asked a question: stdin and stderr both terminals?
    pub fn can_ask(&self) -> bool {
        self.stdin_tty && self.tty
    }

    /// Ask on stderr (`prompt` as given, no newline) and read one line of stdin, trimmed.
    /// `None` when stdin is closed or unreadable. Stops any spinner first.
    pub fn ask(&mut self, prompt: &str) -> Option<String> {
        self.finish();
        self.write_err(prompt);
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim().to_string()),
        }
    }

    /// Ask `question [y/N] ` and say whether the answer was yes (`y`, `Y` or `yes`).
    pub fn confirm(&mut self, question: &str) -> bool {
        matches!(
            self.ask(&format!("{question} [y/N] ")).as_deref(),
            Some("y" | "Y" | "yes")
        )
    }

    /// One line on stderr as it is (sanitised), in every mode: for messages whose form
    /// is a contract of their own, such as a shell's `command not found`.
    pub fn plain_error(&self, line: &str) {
        self.eprint(&sanitize::line(line));
    }

    /// Show progress? Only on a terminal, never in JSON or quiet mode.
    fn progress(&self) -> bool {
        self.tty && !self.opts.json && !self.opts.quiet
    }

    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    fn eprint(&self, line: &str) {
        let write = || self.write_err(&format!("{line}\n"));
        match &self.spinner {
            Some(s) => s.paused(write),
            None => write(),
        }
    }

    /// Data on stdout. A closed pipe ends the program quietly.
    pub fn out(&self, data: &str) {
        let line = format!("{data}\n");
        if self.write_out(&mut line.as_bytes()).is_err() {
            std::process::exit(0);
        }
    }

    /// Raw bytes on stdout (a bundle for `-o -`), copied from `r`.
    pub fn out_copy(&self, r: &mut dyn std::io::Read) -> std::io::Result<u64> {
        self.write_out(r)
    }

    pub fn out_json(&self, doc: &serde_json::Value) {
        self.out(&super::safe_json::pretty(doc));
    }

    /// A progress or information line on stderr (not in JSON or quiet mode).
    pub fn info(&self, line: &str) {
        if !self.opts.json && !self.opts.quiet {
            self.eprint(&sanitize::line(line));
        }
    }

    /// A line only with `-v`.
    pub fn verbose(&self, line: &str) {
        if self.opts.verbose && !self.opts.json {
            self.eprint(&sanitize::line(line));
        }
    }

    pub fn warning(&mut self, msg: &str) {
        self.warnings.push(msg.to_string());
        if !self.opts.json {
            let head = self.paint("33", "warning:");
            let text = sanitize::block(msg);
            self.eprint(&format!("{head} {text}"));
        }
    }

    /// Print an error: one line, then hints; in JSON mode one object on stderr.
    pub fn error(&mut self, e: &CliError) {
        self.spinner = None;
        if self.opts.json {
            // The whole chain: a JSON reader has no `caused by:` lines.
            let message = e.chain();
            let doc =
                super::json::ErrorDocument::new(e.code(), e.kind.as_str(), &message, &e.hints)
                    .to_value();
            self.write_err(&format!("{}\n", super::safe_json::compact(&doc)));
            return;
        }
        let head = self.paint("31;1", "error:");
        self.eprint(&format!("{head} {}", sanitize::line(&e.message)));
        for cause in e.causes() {
            let head = self.paint("31", "caused by:");
            self.eprint(&format!("{head} {cause}"));
        }
        for h in &e.hints {
            let head = self.paint("36", "hint:");
            self.eprint(&format!("{head} {}", sanitize::line(h)));
        }
    }

    /// Stop any spinner (before handing the terminal to a child).
    pub fn finish(&mut self) {
        self.spinner = None;
    }
}

impl Reporter for Ui {
    fn stage(&mut self, name: &str) {
        if !self.progress() {
            return;
        }
        if self.spinner.is_none() {
            self.spinner = Some(Spinner::start());
        }
        if let Some(s) = &self.spinner {
            s.set(Some(sanitize::line(name)));
        }
    }

    fn stage_done(&mut self, name: &str, took: Duration) {
        if !self.progress() {
            // Off a terminal, `-v` still gives the per-stage timings, as plain lines.
            self.verbose(&format!("{:<24} {:>8.3}s", name, took.as_secs_f64()));
            return;
        }
        if let Some(s) = &self.spinner {
            s.set(None);
        }
        let tick = self.paint("32", "✓");
        self.eprint(&format!(
            "{tick} {:<24} {:>8.3}s",
            sanitize::line(name),
            took.as_secs_f64()
        ));
    }

    fn warn(&mut self, message: String) {
        self.warning(&message);
    }

    fn note(&mut self, message: String) {
        self.info(&message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::error::ErrorKind;

    #[test]
    fn an_error_is_a_line_then_its_causes_then_its_hints() {
        let (mut ui, cap) = Ui::capture(UiOptions::default());
        let e = CliError::new(ErrorKind::Io, "could not write x")
            .caused_by(std::io::Error::other("disk on fire"))
            .hint("Free some space.");
        ui.error(&e);
        assert_eq!(
            cap.stderr(),
            "error: could not write x\ncaused by: disk on fire\nhint: Free some space.\n"
        );
        assert_eq!(cap.stdout(), "");
    }

    #[test]
    fn a_json_error_is_one_object_with_code_kind_and_hint() {
        let (mut ui, cap) = Ui::capture(UiOptions {
            json: true,
            ..Default::default()
        });
        ui.error(&CliError::new(ErrorKind::BranchExists, "branch `x` already exists").hint("h"));
        let doc: serde_json::Value = serde_json::from_str(cap.stderr().trim()).unwrap();
        assert_eq!(doc["schemaVersion"], 1);
        assert_eq!(doc["error"]["code"], 5);
        assert_eq!(doc["error"]["kind"], "branch-exists");
        assert_eq!(doc["error"]["hint"], "h");
        assert_eq!(cap.stderr().lines().count(), 1);
    }

    #[test]
    fn a_json_error_message_carries_the_whole_chain() {
        let (mut ui, cap) = Ui::capture(UiOptions {
            json: true,
            ..Default::default()
        });
        let e = CliError::new(ErrorKind::Io, "could not write x")
            .caused_by(std::io::Error::other("disk on fire"))
            .hint("Free some space.");
        ui.error(&e);
        let doc: serde_json::Value = serde_json::from_str(cap.stderr().trim()).unwrap();
        assert_eq!(doc["error"]["message"], "could not write x: disk on fire");
        assert_eq!(doc["error"]["kind"], "io");
        assert_eq!(doc["error"]["hint"], "Free some space.");
    }

    #[test]
    fn data_goes_to_stdout_and_json_mode_keeps_stderr_quiet() {
        let (mut ui, cap) = Ui::capture(UiOptions {
            json: true,
            ..Default::default()
        });
        ui.info("progress");
        ui.warning("careful");
        ui.out("/path");
        assert_eq!(cap.stdout(), "/path\n");
        assert_eq!(cap.stderr(), "");
        assert_eq!(ui.warnings, vec!["careful".to_string()]);
        assert!(!ui.can_ask());
    }
}
