//! The entry point another machine's treebox calls over SSH (issue 41):
//! `git-treebox __treebox-remote`, a front end like the CLI and the MCP server.
//!
//! The channel's stdin holds one line of JSON, the request (at most [`MAX_REQUEST`]
//! bytes), then, for `seed` (or `create` with a seed), the pack; the answer is one framed document on stdout
//! ([`crate::remote::frame`]), and the process exits 0. The streams are taken for the
//! protocol first ([`crate::stdio::take`]): whatever provisioning or the agent's
//! start prints goes to stderr, never into the answer. A request it does not take,
//! or one that fails, is answered with an `error` document (the CLI's error
//! document: code, kind, message, hint). Nothing of a request reaches a shell or a
//! command line: each field is checked by the call it feeds.
//!
//! Requests: `hello`; `heads {key}` (the mirror's branches); `seed {key, branch,
//! tip, ref?, dotenv?, includes?}` + pack, or `seed {key, branch, fetchFrom}` (origin
//! fetched by this machine; the answer names the tip), and the laptop's `.env`, 0600,
//! and the files its `.worktreeinclude` names, in the clone; `create {key,
//! name, base, isolation?, harness?, mode?, env?, claudeProject?}` (the forwarded
//! variables and the laptop user's Claude Code answers for their main checkout given
//! to the clone; the box made in the clone, its agent started detached: `box_create`'s
//! document); `list {key}` (`list --json`'s document of that clone); `lists {keys}`
//! (each of those that has boxes here, for `git sandbox ls`); `remove {key,
//! name, force}` (`git sandbox down` off a terminal: its refusals unless `force`);
//! `back {key, name, haves}` (the box's branch as a bundle after the document, which
//! names its length: [`crate::remote::pack`]).

use std::io::{BufRead, BufReader, Read, Write};

use serde_json::{json, Value};

use super::error::{CliError, ErrorKind};
use super::json::{Document, ErrorDocument};
use crate::remote::mirror;

/// The largest request line read.
pub const MAX_REQUEST: u64 = 1 << 20;

/// The most repositories one `lists` request names.
const MAX_KEYS: usize = 1000;

/// Serve one request on this process's stdin and stdout; the exit code.
pub fn serve() -> i32 {
    let Ok(protocol) = crate::stdio::take() else {
        return 1;
    };
    let mut input = BufReader::new(protocol.input);
    let mut line = Vec::new();
    let read = (&mut input)
        .take(MAX_REQUEST + 1)
        .read_until(b'\n', &mut line);
    let doc = match read {
        Err(e) => refusal(&usage(format!("could not read the request: {e}"))),
        Ok(_) if line.len() as u64 > MAX_REQUEST => {
            refusal(&usage(format!("the request is over {MAX_REQUEST} bytes")))
        }
        Ok(_) => match serde_json::from_slice::<Value>(&line) {
            Ok(request) if request["op"] == "back" => match back(&request) {
                Ok((doc, bundle)) => return send(protocol.output, &doc, &bundle),
                Err(e) => refusal(&e),
            },
            Ok(request) => answer(&request, &mut input).unwrap_or_else(|e| refusal(&e)),
            Err(_) => refusal(&usage("the request is not JSON".into())),
        },
    };
    send(protocol.output, &doc, &[])
}

/// Write `doc`, framed, and `payload` after it (which `doc` names by its length).
fn send(mut out: impl Write, doc: &Value, payload: &[u8]) -> i32 {
    let framed = crate::remote::frame::write(crate::remote::PROTOCOL, doc);
    let sent = out
        .write_all(&framed)
        .and_then(|()| out.write_all(payload))
        .and_then(|()| out.flush());
    i32::from(sent.is_err())
}

/// `back {key, name, haves}`: the box's branch bundled for the laptop
/// ([`crate::remote::pack`]), and the document before it.
fn back(request: &Value) -> Result<(Value, Vec<u8>), CliError> {
    let text = |k: &str| {
        request[k]
            .as_str()
            .ok_or_else(|| usage(format!("the request has no `{k}`")))
    };
    let key_dir = mirror::dir_of(text("key")?).map_err(|e| CliError::of(ErrorKind::Usage, e))?;
    let dir = key_dir.join("repo");
    let haves: Vec<String> = request["haves"]
        .as_array()
        .filter(|h| h.len() <= crate::remote::pack::MAX_HAVES)
        .ok_or_else(|| {
            usage(format!(
                "`haves` must list at most {} commits",
                crate::remote::pack::MAX_HAVES
            ))
        })?
        .iter()
        .map(|h| h.as_str().unwrap_or_default().to_string())
        .collect();
    let _cfg = super::load_config()?;
    let (repo, layout, entry) = super::sandbox::find_at(&dir, text("name")?)?;
    let sent = key_dir.join("mirror.git");
    crate::remote::pack::bundle(&repo, &layout, &entry, &haves, &sent).map_err(|e| {
        let kind = match &e {
            crate::remote::pack::PackError::TooLarge(_)
            | crate::remote::pack::PackError::TooMany { .. } => ErrorKind::TooLarge,
            crate::remote::pack::PackError::NoBranch(_) => ErrorKind::NoBranch,
            crate::remote::pack::PackError::BadHave(_) => ErrorKind::Usage,
            _ => ErrorKind::Repo,
        };
        CliError::of(kind, e)
    })
}

/// The verbs that take the user's terminal (`enter [-d]`, `run -- CMD…`), as
/// [`crate::remote::terminal`] sends them: `args` are the words after the entry
/// point's argument. The box is found in the clone of the repository's mirror, then
/// the command runs as the user would run it there; its exit code is this process's.
pub fn serve_terminal(args: &[std::ffi::OsString]) -> i32 {
    let words: Option<Vec<&str>> = args.iter().map(|a| a.to_str()).collect();
    let mut ui = super::ui::Ui::new(super::ui::UiOptions::default());
    let result = match words.as_deref() {
        Some([verb, key, leaf, rest @ ..]) => {
            // The laptop's terminal takes UTF-8: so does this side's (tmux reads it
            // from the locale, which a non-interactive SSH command may not have).
            let rest = match rest {
                [w, more @ ..] if *w == crate::remote::terminal::UTF8 => {
                    std::env::set_var("LC_CTYPE", "C.UTF-8");
                    more
                }
                _ => rest,
            };
            terminal(verb, key, leaf, rest, &mut ui)
        }
        _ => Err(usage("no verb, key and box".into())),
    };
    super::finish(result, &mut ui)
}

fn terminal(
    verb: &str,
    key: &str,
    leaf: &str,
    rest: &[&str],
    ui: &mut super::ui::Ui,
) -> Result<i32, CliError> {
    use clap::Parser;
    let named = |e| CliError::from(crate::provision::ProvisionError::from(e));
    // `up` names a box to make (a branch name); the others a box there (its leaf).
    let leaf = if verb == "up" {
        crate::names::BoxName::parse(leaf)
            .map_err(named)?
            .as_str()
            .to_string()
    } else {
        crate::names::Leaf::parse(leaf).map_err(named)?.to_string()
    };
    let dir = mirror::dir_of(key)
        .map_err(|e| CliError::of(ErrorKind::Usage, e))?
        .join("repo");
    std::env::set_current_dir(&dir).map_err(|e| {
        CliError::new(
            ErrorKind::BoxNotFound,
            format!(
                "this machine has no boxes of that repository ({})",
                dir.display()
            ),
        )
        .caused_by(e)
    })?;
    let parse_error = |e: clap::Error| usage(e.to_string().lines().next().unwrap_or("").into());
    match (verb, rest) {
        ("enter", []) | ("enter", ["-d"]) => {
            let mut argv = vec!["git-treebox", "enter", &leaf];
            argv.extend(rest);
            let cli = super::TreeboxCli::try_parse_from(argv).map_err(parse_error)?;
            super::dispatch(cli.command, ui)
        }
        ("run", ["--", cmd @ ..]) if !cmd.is_empty() => {
            let mut argv = vec!["git-sandbox", "run", &leaf, "--"];
            argv.extend(cmd);
            let cli = super::sandbox::SandboxCli::try_parse_from(argv).map_err(parse_error)?;
            super::sandbox::run(cli, ui)
        }
        ("up", [..]) if up_words(rest) => {
            let mut argv = vec!["git-sandbox", "up", &leaf];
            argv.extend(rest);
            let cli = super::sandbox::SandboxCli::try_parse_from(argv).map_err(parse_error)?;
            super::sandbox::run(cli, ui)
        }
        _ => Err(usage(format!(
            "this treebox ({}) takes no terminal verb `{}`",
            env!("CARGO_PKG_VERSION"),
            crate::sanitize::line(verb)
        ))),
    }
}

/// Are `rest` the words another treebox sends with `up`: `--base B`, then at most
/// `--isolation I` and `--git M`, each once?
fn up_words(rest: &[&str]) -> bool {
    let mut seen = Vec::new();
    let mut words = rest.iter();
    while let Some(flag) = words.next() {
        let ok = ["--base", "--isolation", "--git"].contains(flag) && !seen.contains(flag);
        if !ok || words.next().is_none_or(|v| v.starts_with('-')) {
            return false;
        }
        seen.push(flag);
    }
    seen.first() == Some(&"--base")
}

/// `hex` as bytes, when it is an even run of hex digits.
fn unhex(hex: &str) -> Option<Vec<u8>> {
    hex::decode(hex).ok()
}

fn usage(message: String) -> CliError {
    CliError::new(ErrorKind::Usage, message)
}

/// The answer to one request; `rest`: what follows it on the channel.
fn answer(request: &Value, rest: &mut dyn Read) -> Result<Value, CliError> {
    let text = |k: &str| {
        request[k]
            .as_str()
            .ok_or_else(|| usage(format!("the request has no `{k}`")))
    };
    let opt = |k: &str| request[k].as_str().map(str::to_string);
    let from_mirror = |e: mirror::MirrorError| CliError::of(ErrorKind::Usage, e);
    match request["op"].as_str() {
        Some("hello") => Ok(crate::remote::hello::answer()),
        Some("heads") => Ok(json!({"schemaVersion": 1, "heads": heads_doc(text("key")?)?})),
        Some("seed") => {
            let tip = seed(request, rest)?;
            Ok(json!({"schemaVersion": 1, "seeded": true, "tip": tip}))
        }
        Some("create") => {
            // The mirror seeded first when the laptop sends the seed with it (one round
            // trip less): its request, and its pack after the line.
            if let Some(s) = request.get("seed").filter(|s| s.is_object()) {
                if s["key"] != request["key"] {
                    return Err(usage("the seed is of another repository".into()));
                }
                seed(s, rest)?;
            }
            let cfg = super::load_config()?;
            let repo = mirror::clone_dir(text("key")?).map_err(from_mirror)?;
            // The laptop's forwarded variables (its config's `forwardEnv`): into this
            // process's environment, which the agent's session is started with (its
            // 0600 launch file), never onto a command line.
            if let Some(vars) = request["env"].as_object() {
                for (k, v) in vars {
                    let value = v.as_str().filter(|v| !v.contains('\0'));
                    let (true, Some(v)) = (crate::names::env_name_ok(k), value) else {
                        return Err(usage(format!(
                            "`{}` is not a variable to forward",
                            crate::sanitize::line(k)
                        )));
                    };
                    std::env::set_var(k, v);
                }
            }
            // The laptop user's Claude Code answers for their main checkout (its
            // trust), given to this clone in this user's config, as a clone box's are.
            if let (Some(answers), Some(file)) = (
                request.get("claudeProject").filter(|a| a.is_object()),
                crate::provision::host_trust::claude_config_path(),
            ) {
                crate::provision::host_trust::set_claude_answers(&file, &repo, answers)
                    .map_err(|e| CliError::of(ErrorKind::Io, e))?;
            }
            let req = crate::provision::CreateRequest {
                cwd: repo,
                name: Some(text("name")?.to_string()),
                base: Some(text("base")?.to_string()),
                isolation: opt("isolation"),
                harness: opt("harness").and_then(|h| h.parse().ok()),
                git_mode: opt("mode"),
                template: opt("template"),
                checkout: opt("checkout"),
                launch: true,
                ..Default::default()
            };
            Ok(super::detached::create(&req, &cfg)?.document(None))
        }
        Some("remove") => {
            let dir = mirror::dir_of(text("key")?)
                .map_err(from_mirror)?
                .join("repo");
            let force = request["force"].as_bool().unwrap_or(false);
            let returned: Vec<git2::Oid> = request["returned"]
                .as_array()
                .into_iter()
                .flatten()
                .take(crate::land::far::MAX_HAVES)
                .filter_map(|r| git2::Oid::from_str(r.as_str()?).ok())
                .collect();
            super::sandbox::down_unasked(&dir, text("name")?, force, Some(&returned))
        }
        Some("lists") => {
            // `list` of each repository the laptop names that has boxes here.
            let keys = request["keys"]
                .as_array()
                .filter(|k| k.len() <= MAX_KEYS)
                .ok_or_else(|| usage(format!("`keys` must list at most {MAX_KEYS} keys")))?;
            let ports = request["ports"] == true;
            let mut lists = serde_json::Map::new();
            for key in keys.iter().filter_map(Value::as_str) {
                let dir = mirror::dir_of(key).map_err(from_mirror)?.join("repo");
                if dir.join(".git").exists() {
                    lists.insert(key.to_string(), super::list::json_with(&dir, false, ports)?);
                }
            }
            Ok(json!({"schemaVersion": 1, "lists": lists}))
        }
        Some("list") => {
            let dir = mirror::dir_of(text("key")?)
                .map_err(from_mirror)?
                .join("repo");
            let mut doc = match dir.join(".git").exists() {
                true => super::list::json_with(&dir, false, request["ports"] == true)?,
                false => json!({"schemaVersion": 1, "repo": dir, "boxes": []}),
            };
            // The mirror's branches too: `create --on` asks for the name first, and
            // seeds the mirror from this without asking for its heads again.
            doc["heads"] = heads_doc(text("key")?)?;
            Ok(doc)
        }
        Some(op) => Err(usage(format!(
            "this treebox ({}) takes no request `{}`",
            env!("CARGO_PKG_VERSION"),
            crate::sanitize::line(op)
        ))),
        None => Err(usage("the request names no `op`".into())),
    }
}

/// `seed`: the mirror given `branch` (the pack in `rest`, or fetched from origin by
/// this machine), and the laptop's `.env` and `.worktreeinclude` files put in the
/// clone; the commit the mirror's branch names now.
fn seed(request: &Value, rest: &mut dyn Read) -> Result<String, CliError> {
    let text = |k: &str| {
        request[k]
            .as_str()
            .ok_or_else(|| usage(format!("the request has no `{k}`")))
    };
    let from_mirror = |e: mirror::MirrorError| CliError::of(ErrorKind::Usage, e);
    // `fetchFrom`: this machine fetches origin itself; else the pack that follows.
    let tip = match request["fetchFrom"].as_str() {
        Some(url) => mirror::fetch_from(text("key")?, text("branch")?, url),
        None => mirror::seed(
            text("key")?,
            text("branch")?,
            request["ref"].as_str(),
            text("tip")?,
            rest,
        )
        .map(|()| text("tip").unwrap_or_default().to_string()),
    }
    .map_err(from_mirror)?;
    if let Some(hex) = request["dotenv"].as_str() {
        let bytes = unhex(hex).ok_or_else(|| usage("`dotenv` is not hex".into()))?;
        mirror::put_env(text("key")?, &bytes).map_err(from_mirror)?;
    }
    if let Some(files) = request["includes"].as_array() {
        let bad = || usage("`includes` is not a list of {path, mode, hex}".into());
        let files = files
            .iter()
            .map(|f| {
                let path = std::path::PathBuf::from(f["path"].as_str()?);
                let mode = u32::try_from(f["mode"].as_u64()?).ok()?;
                Some((path, mode, unhex(f["hex"].as_str()?)?))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        mirror::put_files(text("key")?, &files).map_err(from_mirror)?;
    }
    Ok(tip)
}

/// The branches of the mirror of `key`, `{branch: commit}`.
fn heads_doc(key: &str) -> Result<Value, CliError> {
    let heads = mirror::heads(key).map_err(|e| CliError::of(ErrorKind::Usage, e))?;
    Ok(Value::Object(
        heads
            .into_iter()
            .map(|(b, o)| (b, Value::String(o)))
            .collect(),
    ))
}

/// A refusal, as the laptop reads it: the CLI's error document, with this version.
fn refusal(e: &CliError) -> Value {
    let mut doc = ErrorDocument::new(e.code(), e.kind.as_str(), &e.chain(), &e.hints).to_value();
    doc["version"] = Value::String(env!("CARGO_PKG_VERSION").into());
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_answered_or_refused() {
        let mut none = std::io::empty();
        let hello = answer(&json!({"op": "hello"}), &mut none).unwrap();
        assert_eq!(hello["protocol"], crate::remote::PROTOCOL);
        let e = answer(&json!({"op": "rm -rf /"}), &mut none).unwrap_err();
        assert!(e.message.contains("no request"), "{}", e.message);
        assert!(answer(&json!([]), &mut none).is_err());
        let e = answer(&json!({"op": "heads", "key": "../.."}), &mut none).unwrap_err();
        assert!(e.chain().contains("not a repository key"), "{}", e.chain());
        let doc = refusal(&e);
        assert_eq!(doc["error"]["code"], 2);
        assert_eq!(doc["version"], env!("CARGO_PKG_VERSION"));
    }
}
