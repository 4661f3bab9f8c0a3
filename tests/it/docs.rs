//! Generated documentation, checked in: man pages (`man/man1/`) and shell completions
//! (`completions/`), both rendered from the clap definitions (SPEC §10).
//!
//! The tests fail when a checked-in file drifts from what the CLI definition renders.
//! To regenerate after changing the CLI, run
//! `TREEBOX_UPDATE_DOCS=1 cargo test --test it docs`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_complete::{Generator, Shell};

use treebox::cli::sandbox::SandboxCli;
use treebox::cli::TreeboxCli;

/// The two front ends, by the name their executables have on PATH.
fn commands() -> [(&'static str, clap::Command); 2] {
    [
        ("git-treebox", TreeboxCli::command()),
        ("git-sandbox", SandboxCli::command()),
    ]
}

/// One page per command and per (non-hidden) subcommand, as `clap_mangen::generate_to`
/// would write them, but in memory: file name → contents. Every page's footer names
/// the program and version (`git-treebox 0.1.0`), not the subcommand.
fn man_pages() -> BTreeMap<String, Vec<u8>> {
    fn render(cmd: clap::Command, source: &str, out: &mut BTreeMap<String, Vec<u8>>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
            render(sub, source, out);
        }
        let man = clap_mangen::Man::new(cmd).source(source);
        let mut page = Vec::new();
        man.render(&mut page).expect("render to memory");
        out.insert(man.get_filename(), page);
    }
    let mut out = BTreeMap::new();
    for (bin, cmd) in commands() {
        let source = format!("{bin} {}", cmd.get_version().unwrap_or_default());
        let mut cmd = cmd.disable_help_subcommand(true);
        cmd.build();
        render(cmd, &source, &mut out);
    }
    out
}

/// bash, zsh and fish completions for both executables: file name → contents.
fn completions() -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for (bin, cmd) in commands() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            // What `git treebox completions SHELL` prints.
            let script = treebox::cli::completions::script(bin, cmd.clone(), shell);
            out.insert(shell.file_name(bin), script);
        }
    }
    out
}

fn update_requested() -> bool {
    std::env::var_os("TREEBOX_UPDATE_DOCS").is_some_and(|v| v == "1")
}

/// Compare `files` with the directory `dir` under the crate root (every file in it must
/// be generated, byte for byte), or rewrite it when `TREEBOX_UPDATE_DOCS=1`.
#[track_caller]
fn check_or_update(dir: &str, files: &BTreeMap<String, Vec<u8>>) {
    let dir: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let on_disk: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    if update_requested() {
        std::fs::create_dir_all(&dir).expect("create the docs dir");
        for stale in on_disk.iter().filter(|f| !files.contains_key(*f)) {
            std::fs::remove_file(dir.join(stale)).expect("remove a stale file");
        }
        for (name, contents) in files {
            std::fs::write(dir.join(name), contents).expect("write a generated file");
        }
        return;
    }
    let mut problems = Vec::new();
    for stale in on_disk.iter().filter(|f| !files.contains_key(*f)) {
        problems.push(format!("{stale}: not generated from the CLI (stale?)"));
    }
    for (name, contents) in files {
        match std::fs::read(dir.join(name)) {
            Ok(disk) if disk == *contents => {}
            Ok(_) => problems.push(format!("{name}: differs from the CLI definition")),
            Err(e) => problems.push(format!("{name}: {e}")),
        }
    }
    assert!(
        problems.is_empty(),
        "{} is out of date:\n  {}\nRegenerate with `TREEBOX_UPDATE_DOCS=1 cargo test --test it docs` and commit the result.",
        dir.display(),
        problems.join("\n  ")
    );
}

#[test]
fn docs_man_pages_match_the_cli() {
    let pages = man_pages();
    for expected in [
        "git-treebox.1",
        "git-treebox-create.1",
        "git-sandbox.1",
        "git-sandbox-up.1",
    ] {
        assert!(
            pages.contains_key(expected),
            "{expected} in {:?}",
            pages.keys()
        );
    }
    check_or_update("man/man1", &pages);
}

#[test]
fn docs_completions_match_the_cli() {
    let scripts = completions();
    for expected in [
        "git-treebox.bash",
        "_git-treebox",
        "git-treebox.fish",
        "git-sandbox.bash",
        "_git-sandbox",
        "git-sandbox.fish",
    ] {
        assert!(
            scripts.contains_key(expected),
            "{expected} in {:?}",
            scripts.keys()
        );
    }
    check_or_update("completions", &scripts);
}

/// The install script puts the man pages and completions beside the binaries, where
/// man (from PATH) and the shells find them: `git treebox --help` opens the manual.
/// (`cargo install` itself is cargo's: the test stands `true` in for it and copies the
/// built binary into place, as cargo would.)
#[test]
fn install_puts_the_manual_where_git_help_finds_it() {
    let env = crate::env::TestEnv::new();
    let root = env.root().join("inst");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh");
    let out = env
        .command("sh", &env.root())
        .arg(&script)
        .env("CARGO", "true")
        .env("CARGO_INSTALL_ROOT", &root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    for f in [
        "share/man/man1/git-treebox.1",
        "share/man/man1/git-sandbox-up.1",
        "share/bash-completion/completions/git-treebox",
        "share/zsh/site-functions/_git-sandbox",
        "share/fish/vendor_completions.d/git-sandbox.fish",
    ] {
        assert!(root.join(f).is_file(), "{f} not installed");
    }
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::copy(crate::env::TREEBOX, root.join("bin/git-treebox")).unwrap();
    std::fs::copy(crate::env::SANDBOX, root.join("bin/git-sandbox")).unwrap();
    let path = format!(
        "{}:{}",
        root.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    for (args, want) in [
        (&["treebox", "--help"][..], "git-treebox"),
        (&["help", "sandbox"][..], "git-sandbox"),
        // git hands a subcommand's --help to it: clap's own help.
        (
            &["treebox", "create", "--help"][..],
            "Usage: git treebox create",
        ),
    ] {
        let out = env
            .command("git", &env.repo)
            .args(args)
            .env("PATH", &path)
            .env_remove("MANPATH")
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "git {args:?}: {out:?}");
        assert!(text.contains(want), "git {args:?} showed: {text}");
    }
}

/// `git treebox <TAB>` goes through git's own bash completion, which calls
/// `_git_treebox` from the script `git treebox completions bash` prints: subcommands,
/// options and box names complete, for `git sandbox` too.
#[test]
fn bash_completes_git_treebox_through_gits_completion() {
    let git_completion = "/usr/share/bash-completion/completions/git";
    assert!(
        Path::new(git_completion).is_file(),
        "git's bash completion is missing (Debian package bash-completion)"
    );
    let env = crate::env::TestEnv::new();
    env.treebox(&["create", "fix-a", "--no-launch"]).ok();
    env.treebox(&["create", "JIRA-7", "--no-launch"]).ok();
    let bin_dir = Path::new(crate::env::TREEBOX).parent().unwrap();
    let script = format!(
        r#"
source {git_completion}
source <(git-treebox completions bash)
source <(git-sandbox completions bash)
complete_line() {{
    COMP_LINE="$1"; COMP_POINT=${{#COMP_LINE}}
    read -ra COMP_WORDS <<< "$1"
    [[ "$1" == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); COMPREPLY=()
    __git_wrap__git_main
    echo "$1=> ${{COMPREPLY[*]}}"
}}
complete_line "git treebox cr"
complete_line "git treebox create --no-l"
complete_line "git treebox enter "
complete_line "git treebox enter JI"
complete_line "git sandbox do"
complete_line "git sandbox down f"
"#
    );
    let out = env
        .command("bash", &env.repo)
        .args(["-c", &script])
        .env(
            "PATH",
            format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap()),
        )
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    let line = |l: &str| {
        text.lines()
            .find(|t| t.starts_with(&format!("{l}=>")))
            .unwrap_or_else(|| panic!("no line for {l:?}: {text}"))
            .split_once("=> ")
            .map(|(_, r)| r.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert_eq!(line("git treebox cr"), ["create"], "{text}");
    assert_eq!(line("git treebox create --no-l"), ["--no-launch"], "{text}");
    let mut names = line("git treebox enter ");
    names.sort();
    assert_eq!(names, ["JIRA-7", "fix-a"], "{text}");
    assert_eq!(line("git treebox enter JI"), ["JIRA-7"], "{text}");
    assert_eq!(line("git sandbox do"), ["down"], "{text}");
    assert_eq!(line("git sandbox down f"), ["fix-a"], "{text}");
}

/// zsh: `git treebox <TAB>` goes through zsh's own git completion, which calls the
/// `_git-treebox` function of the installed script. Driven through a pseudo-terminal
/// (`zpty`), as a user types. Without zsh on the machine there is nothing to test
/// (`.ci/run` installs it).
#[test]
fn zsh_completes_git_treebox_through_gits_completion() {
    if which("zsh").is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "zsh is missing on CI (.ci/run installs it)"
        );
        eprintln!("note: zsh not installed; zsh completion test skipped");
        return;
    }
    let env = crate::env::TestEnv::new();
    env.treebox(&["create", "JIRA-7", "--no-launch"]).ok();
    let fpath = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions");
    let bin_dir = Path::new(crate::env::TREEBOX).parent().unwrap();
    // Type LINE and TAB; read until the completed line shows WANT (or 10 s pass).
    let script = format!(
        r#"
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z 'PS1="%% "; fpath=({fpath} $fpath); autoload -Uz compinit; compinit -u -D'
complete_line() {{
    local out chunk i
    zpty -w z $'\x15'
    zpty -n -w z "$1"$'\t'
    for i in {{1..50}}; do
        while zpty -r -t z chunk; do out+=$chunk; done
        [[ $out == *"$2"* ]] && {{ print -r -- "ok: $1"; return; }}
        sleep 0.2
    done
    print -r -- "missing: $1 -> $2 in: ${{out//$'\e'/^[}}"
}}
complete_line 'git treebox cr' 'git treebox create '
complete_line 'git treebox create --no-l' 'create --no-launch'
complete_line 'git sandbox do' 'git sandbox down '
complete_line 'git treebox enter JI' 'enter JIRA-7 '
complete_line 'git sandbox down JI' 'down JIRA-7 '
zpty -d z
"#,
        fpath = fpath.display()
    );
    let out = env
        .command("zsh", &env.repo)
        .args(["-f", "-c", &script])
        .env(
            "PATH",
            format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap()),
        )
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(text.matches("ok: ").count(), 5, "{text}");
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}
