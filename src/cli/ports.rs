//! `git treebox open`: a box's dev server in the browser (SPEC §7b).

use clap::Args;

use super::error::{self, CliError, ErrorKind};
use super::ui::Ui;

#[derive(Debug, Clone, Args)]
pub struct OpenArgs {
    /// The box: its name, its current branch, or a unique part of either.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// One of the box's ports (default: the first that listens now).
    #[arg(value_name = "PORT")]
    pub port: Option<u16>,
    /// Print the URL, and open nothing. (Without a desktop — over SSH, in a script —
    /// the URL is only printed.)
    #[arg(long)]
    pub print: bool,
}

/// `git treebox open NAME [PORT]`: the URL of a box's dev server, opened in the
/// desktop's browser where there is one, and printed. A box on another machine has
/// its ports forwarded here on that machine's shared connection first.
pub fn run(args: OpenArgs, ui: &mut Ui) -> Result<i32, CliError> {
    let entry = match super::sandbox::find_at(&super::cwd()?, &args.name) {
        Ok((_, _, entry)) => entry,
        Err(e) if e.kind == ErrorKind::BoxNotFound => {
            let cfg = super::load_config()?;
            return match super::on::find_elsewhere_with(&cfg, &args.name, true)? {
                Some(far) => open_far(&args, &far, ui),
                None => Err(e),
            };
        }
        Err(e) => return Err(e),
    };
    let leaf = entry.leaf.to_string();
    let record = entry.record.as_ref().ok_or_else(|| {
        CliError::new(
            ErrorKind::NotABox,
            format!("`{leaf}` has no record, so no ports"),
        )
    })?;
    let now = crate::runner::ports_now(record, &std::sync::OnceLock::new());
    let port = choose(&args, &leaf, &record.ports, now.as_ref(), ui)?;
    show(&args, port, ui);
    Ok(error::OK)
}

/// `open` of box `far` on another machine: its port chosen from what that machine says
/// listens, its block forwarded here, and the URL of the chosen port's number here.
fn open_far(args: &OpenArgs, far: &super::on::Far, ui: &mut Ui) -> Result<i32, CliError> {
    let leaf = crate::sanitize::line(&far.leaf);
    // The machine's word, read leniently: only ports of the block it names count.
    let (block, now) = crate::remote::listing::far_ports(&far.entry);
    let port = choose(args, &leaf, &block, now.as_ref(), ui)?;
    let forwarded = super::forward::forward_far(far, ui);
    let Some((_, here)) = forwarded.iter().find(|(there, _)| *there == port) else {
        return Err(CliError::new(
            ErrorKind::MachineUnreachable,
            format!(
                "port {port} of box `{leaf}` on `{}` could not be forwarded here",
                far.machine.name
            ),
        )
        .hint(format!(
            "Check the connection: `git treebox doctor`; or reach it there: `git sandbox run {} -- curl -sS http://127.0.0.1:{port}/`.",
            crate::cmd::quote(&leaf)
        )));
    };
    show(args, *here, ui);
    Ok(error::OK)
}

/// The port of `block` to open: `args.port` when it is one of them (with a warning
/// when nothing listens on it, or that cannot be told), else the first that listens
/// `now`, else the first whose state cannot be told (with a warning); refused when
/// there is no block, the port is not of it, or nothing listens.
fn choose(
    args: &OpenArgs,
    leaf: &str,
    block: &[u16],
    now: Option<&crate::runner::PortsNow>,
    ui: &mut Ui,
) -> Result<u16, CliError> {
    let listening = now.map_or(&[][..], |n| n.listening.as_slice());
    let unknown = now.map_or(&[][..], |n| n.unknown.as_slice());
    let untold = |p: u16| {
        format!("whether anything in box `{leaf}` listens on port {p} cannot be told: its socket table is longer than treebox reads")
    };
    let listed = block
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(" ");
    if block.is_empty() {
        return Err(CliError::new(
            ErrorKind::NoPorts,
            format!("box `{leaf}` has no ports"),
        )
        .hint("It was made before boxes had ports, or with `\"ports\": {\"count\": 0}`: a box made now has a block of its own (`git treebox create NAME`)."));
    }
    match args.port {
        Some(p) if !block.contains(&p) => Err(CliError::new(
            ErrorKind::Usage,
            format!("port {p} is not one of box `{leaf}`'s ports ({listed})"),
        )
        .hint(format!(
            "Name one of them, or none for the first that listens: `git treebox open {}`.",
            crate::cmd::quote(leaf)
        ))),
        Some(p) => {
            if unknown.contains(&p) {
                ui.warning(&untold(p));
            } else if !listening.contains(&p) {
                ui.warning(&format!("nothing in box `{leaf}` listens on port {p} now"));
            }
            Ok(p)
        }
        None => match (
            listening.iter().find(|p| block.contains(p)),
            unknown.iter().find(|p| block.contains(p)),
        ) {
            (Some(p), _) => Ok(*p),
            (None, Some(p)) => {
                ui.warning(&untold(*p));
                Ok(*p)
            }
            (None, None) => {
                let mut e = CliError::new(
                    ErrorKind::NothingListens,
                    format!("nothing in box `{leaf}` listens on its ports ({listed})"),
                );
                if let Some(q) = now.and_then(|n| n.loopback_only.first()) {
                    e = e.hint(format!(
                        "Port {q} listens on its container's own loopback, which the published port does not reach: bind the server to `$TREEBOX_HOST` (0.0.0.0 there)."
                    ));
                }
                Err(e.hint(format!(
                    "Start its server on `$TREEBOX_PORT`, bound to `$TREEBOX_HOST`: e.g. `git sandbox run {} -- sh -c 'python3 -m http.server \"$TREEBOX_PORT\" --bind \"$TREEBOX_HOST\"'`.",
                    crate::cmd::quote(leaf)
                )))
            }
        },
    }
}

/// Print the URL of `port` here, and open it with the desktop's opener unless
/// `--print` (or there is none).
fn show(args: &OpenArgs, port: u16, ui: &mut Ui) {
    let url = format!("http://{}:{port}/", crate::ports::HOST_BIND);
    let opener = (!args.print).then(crate::ports::opener::detect).flatten();
    ui.out(&url);
    if let Some(program) = opener {
        if crate::ports::opener::open(program, &url) {
            ui.info(&format!("opened in your browser ({program})"));
        } else {
            ui.warning(&format!(
                "{program} could not be started: open the URL yourself"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::ui::UiOptions;
    use crate::runner::PortsNow;

    fn args(port: Option<u16>) -> OpenArgs {
        OpenArgs {
            name: "web".into(),
            port,
            print: true,
        }
    }

    #[test]
    fn a_port_that_cannot_be_told_is_opened_with_a_warning_not_refused() {
        let block = [20000, 20001];
        let now = PortsNow {
            unknown: vec![20001],
            ..PortsNow::default()
        };
        let (mut ui, cap) = Ui::capture(UiOptions::default());
        assert_eq!(
            choose(&args(None), "web", &block, Some(&now), &mut ui).unwrap(),
            20001
        );
        assert!(
            cap.stderr().contains("port 20001 cannot be told"),
            "{}",
            cap.stderr()
        );
        // One that listens comes first.
        let now = PortsNow {
            listening: vec![20000],
            unknown: vec![20001],
            ..PortsNow::default()
        };
        let (mut ui, cap) = Ui::capture(UiOptions::default());
        assert_eq!(
            choose(&args(None), "web", &block, Some(&now), &mut ui).unwrap(),
            20000
        );
        assert_eq!(cap.stderr(), "");
        // Named: warned as not told, not as not listening.
        let (mut ui, cap) = Ui::capture(UiOptions::default());
        assert_eq!(
            choose(&args(Some(20001)), "web", &block, Some(&now), &mut ui).unwrap(),
            20001
        );
        assert!(cap.stderr().contains("cannot be told") && !cap.stderr().contains("nothing"));
        // Nothing listens and nothing is unknown: refused.
        let (mut ui, _) = Ui::capture(UiOptions::default());
        let e = choose(
            &args(None),
            "web",
            &block,
            Some(&PortsNow::default()),
            &mut ui,
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::NothingListens);
    }
}
