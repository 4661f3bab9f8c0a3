# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_git_sandbox_global_optspecs
    string join \n q/quiet v/verbose color= h/help V/version
end

function __fish_git_sandbox_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_git_sandbox_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_git_sandbox_using_subcommand
    set -l cmd (__fish_git_sandbox_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -s V -l version -d 'Print version'
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -f -a "up" -d 'Provision a box (like `git treebox create NAME --no-launch`) and open a shell in it'
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -f -a "attach" -d 'Attach to a box\'s live session (its agent, or a shell), or open a login shell in it'
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -f -a "run" -d 'Run a command in a box (no shell) and exit with its code'
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -f -a "ls" -d 'List every box on this machine, across repositories'
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -f -a "watch" -d 'A live dashboard of every box on this machine, grouped by repository'
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -f -a "down" -d 'Remove a box; asks only when uncommitted or unreturned work or a live session would be lost'
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -f -a "park" -d 'Stop containers idle for a while (they start again on next use)'
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -f -a "prune" -d 'Remove leftovers (records without a box, boxes without a record, stale pins, locks, records of repositories that are gone) and, with `--idle`, unused boxes that hold nothing to lose'
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -f -a "bundle" -d 'Write a git bundle of a clone\'s, sandboxed worktree\'s or far box\'s branch'
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -f -a "fetch" -d 'Import a clone\'s, sandboxed worktree\'s or far box\'s branch into refs/hort/<name>/incoming'
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -f -a "completions" -d 'Print the shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c git-sandbox -n "__fish_git_sandbox_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l branch -d 'Check out this existing branch instead of creating NAME' -r
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l base -d 'Base branch [default: the configured `base`, else origin\'s default branch (origin/HEAD), else main]' -r
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l isolation -d 'Where the box runs' -r -f -a "host\t''
docker\t''
podman\t''
auto\t''"
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l git -d 'How the box\'s checkout is made' -r -f -a "worktree\t''
clone\t''"
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l template -d 'Container template (operator-owned; see `git treebox template list`)' -r
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l token-from -d 'Forward this environment variable (e.g. GH_TOKEN) into the box\'s 0600 env file at container start, never into an image, a record or output. Repeatable. A forwarded GH_TOKEN or GITHUB_TOKEN is also git\'s credential for https://github.com' -r
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l harness -d 'Which agent `git treebox enter` launches in the box later' -r -f -a "claude\t''
codex\t''"
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l on -d 'Make the box on another machine of your config (`machines`), over SSH, and open the shell there: this repository\'s origin/<base> travels as a bundle, that machine\'s treebox makes the box. `local`: this machine' -r
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l no-fetch -d 'Do not fetch origin first'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l allow-forge -d 'With --firewall: also allow the hosts of origin\'s URL (and api.github.com)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l warm -d 'Start the box with the main checkout\'s build outputs (cargo\'s target/, node build caches) even where the filesystem cannot clone them by reflink: copy them [default: the config\'s `warm`, else `auto`: clone by reflink, or skip]. On the host a reflinked target/ is cloned after the box is up; cargo in the box waits for it'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l no-warm -d 'Start the box without the main checkout\'s build outputs'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l cold -d 'Install dependencies with throwaway caches instead of the shared ones'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l dry-run -d 'Print the plan and change nothing (with --json: as JSON)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l firewall -d 'Containers: deny egress except the template\'s allowlist'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -s d -l detach -d 'Detached: start the box\'s shell in its session without attaching; print the box path'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -l json -d 'Provision only (no shell, no session) and print the result as JSON'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand up" -s V -l version -d 'Print version'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand attach" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand attach" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand attach" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand attach" -s h -l help -d 'Print help'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand attach" -s V -l version -d 'Print version'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand run" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand run" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand run" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand run" -s h -l help -d 'Print help'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand run" -s V -l version -d 'Print version'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand ls" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand ls" -l json -d 'Print the boxes as JSON'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand ls" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand ls" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand ls" -s h -l help -d 'Print help'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand ls" -s V -l version -d 'Print version'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand watch" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand watch" -l once -d 'Print one snapshot and exit (instead of the live screen): the screen as text (80×24), or with --json the rows as data'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand watch" -l json -d 'With --once: print the snapshot as JSON (see docs/schema/watch.schema.json)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand watch" -l no-notify -d 'No bell and no desktop notifications (config: `"notify": false`)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand watch" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand watch" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand watch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand watch" -s V -l version -d 'Print version'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand down" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand down" -s f -l force -d 'Remove without asking, even with uncommitted or unreturned work or a live session (which is ended: its agent or shell goes first)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand down" -l json -d 'Print the result as JSON'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand down" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand down" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand down" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand down" -s V -l version -d 'Print version'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand park" -l idle -d 'Idle time before a box is stopped: e.g. 90m, 2h, 1d' -r
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand park" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand park" -l json -d 'Print what was parked as JSON'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand park" -l install -d 'Park automatically: install a systemd user timer that runs this every 15 minutes (with this --idle), or print the crontab line where systemd does not answer'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand park" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand park" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand park" -s h -l help -d 'Print help'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand park" -s V -l version -d 'Print version'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand prune" -l idle -d 'Also remove boxes idle this long whose work has landed in their base (or who have none) and that hold nothing else to lose: e.g. 90m, 2h, 7d' -r
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand prune" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand prune" -l pushed -d 'With --idle, also remove idle boxes whose work is on origin (a worktree\'s branch pushed) or fetched back into the repository (a clone\'s), though it has not landed in their base. Without it they are kept, and said so'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand prune" -s f -l force -d 'Remove without asking'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand prune" -l json -d 'Print what was removed as JSON'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand prune" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand prune" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand prune" -s h -l help -d 'Print help'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand prune" -s V -l version -d 'Print version'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand bundle" -s o -l output -d 'Where to write the bundle [default: the box\'s bookkeeping dir]' -r -F
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand bundle" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand bundle" -l json -d 'Print the result as JSON'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand bundle" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand bundle" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand bundle" -s h -l help -d 'Print help'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand bundle" -s V -l version -d 'Print version'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand fetch" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand fetch" -l json -d 'Print the result as JSON'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand fetch" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand fetch" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand fetch" -s h -l help -d 'Print help'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand fetch" -s V -l version -d 'Print version'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand completions" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand completions" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand completions" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand completions" -s h -l help -d 'Print help'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand completions" -s V -l version -d 'Print version'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand help; and not __fish_seen_subcommand_from up attach run ls watch down park prune bundle fetch completions help" -f -a "up" -d 'Provision a box (like `git treebox create NAME --no-launch`) and open a shell in it'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand help; and not __fish_seen_subcommand_from up attach run ls watch down park prune bundle fetch completions help" -f -a "attach" -d 'Attach to a box\'s live session (its agent, or a shell), or open a login shell in it'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand help; and not __fish_seen_subcommand_from up attach run ls watch down park prune bundle fetch completions help" -f -a "run" -d 'Run a command in a box (no shell) and exit with its code'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand help; and not __fish_seen_subcommand_from up attach run ls watch down park prune bundle fetch completions help" -f -a "ls" -d 'List every box on this machine, across repositories'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand help; and not __fish_seen_subcommand_from up attach run ls watch down park prune bundle fetch completions help" -f -a "watch" -d 'A live dashboard of every box on this machine, grouped by repository'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand help; and not __fish_seen_subcommand_from up attach run ls watch down park prune bundle fetch completions help" -f -a "down" -d 'Remove a box; asks only when uncommitted or unreturned work or a live session would be lost'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand help; and not __fish_seen_subcommand_from up attach run ls watch down park prune bundle fetch completions help" -f -a "park" -d 'Stop containers idle for a while (they start again on next use)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand help; and not __fish_seen_subcommand_from up attach run ls watch down park prune bundle fetch completions help" -f -a "prune" -d 'Remove leftovers (records without a box, boxes without a record, stale pins, locks, records of repositories that are gone) and, with `--idle`, unused boxes that hold nothing to lose'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand help; and not __fish_seen_subcommand_from up attach run ls watch down park prune bundle fetch completions help" -f -a "bundle" -d 'Write a git bundle of a clone\'s, sandboxed worktree\'s or far box\'s branch'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand help; and not __fish_seen_subcommand_from up attach run ls watch down park prune bundle fetch completions help" -f -a "fetch" -d 'Import a clone\'s, sandboxed worktree\'s or far box\'s branch into refs/hort/<name>/incoming'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand help; and not __fish_seen_subcommand_from up attach run ls watch down park prune bundle fetch completions help" -f -a "completions" -d 'Print the shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c git-sandbox -n "__fish_git_sandbox_using_subcommand help; and not __fish_seen_subcommand_from up attach run ls watch down park prune bundle fetch completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
