# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_git_treebox_global_optspecs
    string join \n q/quiet v/verbose color= h/help V/version
end

function __fish_git_treebox_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_git_treebox_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_git_treebox_using_subcommand
    set -l cmd (__fish_git_treebox_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c git-treebox -n "__fish_git_treebox_needs_command" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_needs_command" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "create" -d 'Provision a box and launch the agent in it'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "enter" -d 'Enter a box: finish or refresh its setup, then launch the agent in it'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "list" -d 'List this repository\'s boxes'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "ls" -d 'List this repository\'s boxes'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "diff" -d 'Show what a box changed since its base: its commits and uncommitted work'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "watch" -d 'A live dashboard of this repository\'s boxes: who works, who waits, one key to jump in'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "land" -d 'Put a box\'s work onto its base branch (squash, rebase or merge), or open a pull request of it'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "teardown" -d 'Remove boxes without losing work by accident'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "rm" -d 'Remove boxes without losing work by accident'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "doctor" -d 'Check the machine and the repository'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "template" -d 'Operator-owned container templates'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "completions" -d 'Print the shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "claude-worktree" -d 'Claude Code\'s worktree backend: its WorktreeCreate / WorktreeRemove hooks'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "mcp" -d 'An MCP server over stdio for a lead agent: this repository\'s boxes as tools'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "version" -d 'Print the version'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l checkout -d 'Work on an existing local or origin/ branch instead of creating one' -r
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l base -d 'Base branch to cut the box from [default: the configured `base`, else origin\'s default branch (origin/HEAD), else main]' -r
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l harness -d 'Which agent to launch' -r -f -a "claude\t''
codex\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l isolation -d 'Where the agent runs' -r -f -a "host\t''
docker\t''
podman\t''
auto\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l git -d 'How the box\'s checkout is made' -r -f -a "worktree\t''
clone\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l template -d 'Container template (operator-owned; see `git treebox template list`)' -r
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l token-from -d 'Forward this environment variable (e.g. a forge token, GH_TOKEN) into the box: its value goes into the box\'s 0600 env file at container start (the agent\'s environment on the host runner), never into an image, a record or output. Repeatable. Without it, GH_TOKEN, GITHUB_TOKEN and GITLAB_TOKEN are kept out. In a container, a forwarded GH_TOKEN or GITHUB_TOKEN is also git\'s credential for https://github.com (through `gh auth git-credential` where the image has gh)' -r
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l on -d 'Make the box on another machine of your config (`machines`), over SSH: this repository\'s origin/<base> travels there as a bundle, that machine\'s treebox makes the box and starts its agent detached. `local`: this machine' -r
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l no-fetch -d 'Do not fetch origin first (the base may be stale)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l no-launch -d 'Provision only; do not launch the agent'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -s d -l detach -d 'Detached: start the agent in its session (tmux, on treebox\'s own socket) without attaching, wait until it is at its prompt, and print the box path (an agent that ends first fails it with its exit code). `git treebox enter NAME` attaches later'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l print -d 'Provision, then print the launch command as one shell-quoted line'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l json -d 'Provision, then print the result as JSON (does not launch)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l dry-run -d 'Print the plan and change nothing'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l cold -d 'Install dependencies with throwaway caches instead of the shared ones'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l warm -d 'Start the box with the main checkout\'s build outputs (cargo\'s target/, node build caches) even where the filesystem cannot clone them by reflink: copy them [default: the config\'s `warm`, else `auto`: clone by reflink, or skip]. On the host a reflinked target/ is cloned after create returns; cargo in the box waits for it'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l no-warm -d 'Start the box without the main checkout\'s build outputs'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l allow-forge -d 'With --firewall: also allow the hosts of origin\'s URL (and api.github.com for GitHub), so the box can push and open its pull request. Shown in the plan'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l firewall -d 'Containers: deny egress except the template\'s allowlist'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand enter" -l harness -d 'Which agent to launch, this session only (the box keeps its own)' -r -f -a "claude\t''
codex\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand enter" -l isolation -d 'Must match the box\'s recorded runner (a box never changes runner)' -r -f -a "host\t''
docker\t''
podman\t''
auto\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand enter" -l git -d 'Must match the box\'s recorded git mode' -r -f -a "worktree\t''
clone\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand enter" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand enter" -l cold -d 'Re-sync dependencies with throwaway caches, even when unchanged'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand enter" -l print -d 'Print the launch command as one shell-quoted line instead of launching'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand enter" -s d -l detach -d 'Detached: start the agent in the box\'s session (tmux) without attaching, unless one is live already; wait until it is at its prompt; print the box path'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand enter" -l json -d 'Print the result as JSON instead of launching'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand enter" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand enter" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand enter" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand enter" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand list" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand list" -l json -d 'Print the boxes as JSON'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand list" -l dirty -d 'Also read each box\'s working tree: a DIRTY column (`dirty` in JSON) saying whether it holds uncommitted changes. A git status per box, so slower with many boxes (the plain list reads no working tree)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand list" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand list" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand list" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand list" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand ls" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand ls" -l json -d 'Print the boxes as JSON'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand ls" -l dirty -d 'Also read each box\'s working tree: a DIRTY column (`dirty` in JSON) saying whether it holds uncommitted changes. A git status per box, so slower with many boxes (the plain list reads no working tree)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand ls" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand ls" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand ls" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand ls" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand diff" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand diff" -l stat -d 'Only the files changed and how much (`git diff --stat`), not the patch'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand diff" -l json -d 'Print the diff as JSON: commits, files with their counts, and the patch (not with --stat)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand diff" -l no-pager -d 'Print straight to the terminal, without your pager (`GIT_PAGER`, your own `core.pager`, `PAGER`, else `less`; on a terminal only, fed text with every control character escaped)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand diff" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand diff" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand diff" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand diff" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand watch" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand watch" -l once -d 'Print one snapshot and exit (instead of the live screen): the screen as text (80×24), or with --json the rows as data'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand watch" -l json -d 'With --once: print the snapshot as JSON (see docs/schema/watch.schema.json)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand watch" -l no-notify -d 'No bell and no desktop notifications (config: `"notify": false`)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand watch" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand watch" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand watch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand watch" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand land" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand land" -l squash -d 'One new commit on the base with the box\'s whole change, listing its commits (the default, unless the config\'s `land` says otherwise)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand land" -l rebase -d 'The box\'s commits replayed onto the base, authors kept (a fast-forward when the base has not moved)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand land" -l merge -d 'A merge commit of the base and the box\'s branch'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand land" -l push -d 'After landing, push the base to origin'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand land" -l pr -d 'Do not land here: push the box\'s branch and open a pull request with `gh`'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand land" -l remove -d 'Remove the box after landing, without asking (it asks on a terminal otherwise)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand land" -l json -d 'Print the result as JSON'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand land" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand land" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand land" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand land" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand teardown" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand teardown" -s f -l force -d 'Remove without asking, even dirty boxes and boxes with a live session (which is ended: the agent goes first, whether it runs in tmux or in the foreground)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand teardown" -l delete-branch -d 'Also delete each box\'s branch'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand teardown" -l json -d 'Print the result as JSON'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand teardown" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand teardown" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand teardown" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand teardown" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand rm" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand rm" -s f -l force -d 'Remove without asking, even dirty boxes and boxes with a live session (which is ended: the agent goes first, whether it runs in tmux or in the foreground)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand rm" -l delete-branch -d 'Also delete each box\'s branch'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand rm" -l json -d 'Print the result as JSON'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand rm" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand rm" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand rm" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand rm" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand doctor" -l isolation -d 'Check this runner instead of the configured one [default: auto: an engine on a machine marked as a runner, else the host]' -r -f -a "host\t''
docker\t''
podman\t''
auto\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand doctor" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand doctor" -l json -d 'Print the result as JSON'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand doctor" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand doctor" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand doctor" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and not __fish_seen_subcommand_from init list ls path help" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and not __fish_seen_subcommand_from init list ls path help" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and not __fish_seen_subcommand_from init list ls path help" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and not __fish_seen_subcommand_from init list ls path help" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and not __fish_seen_subcommand_from init list ls path help" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and not __fish_seen_subcommand_from init list ls path help" -f -a "init" -d 'Copy the bundled template into your config dir, to edit it there'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and not __fish_seen_subcommand_from init list ls path help" -f -a "list" -d 'List the templates: the bundled one and yours, with their problems'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and not __fish_seen_subcommand_from init list ls path help" -f -a "ls" -d 'List the templates: the bundled one and yours, with their problems'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and not __fish_seen_subcommand_from init list ls path help" -f -a "path" -d 'Print the directory of a template'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and not __fish_seen_subcommand_from init list ls path help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from init" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from init" -l force -d 'Replace an existing template of that name'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from init" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from init" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from init" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from init" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from list" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from list" -l json -d 'Print the result as JSON'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from ls" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from ls" -l json -d 'Print the result as JSON'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from ls" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from ls" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from ls" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from ls" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from path" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from path" -l json -d 'Print the result as JSON'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from path" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from path" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from path" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from path" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from help" -f -a "init" -d 'Copy the bundled template into your config dir, to edit it there'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the templates: the bundled one and yours, with their problems'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from help" -f -a "path" -d 'Print the directory of a template'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand template; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand completions" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand completions" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand completions" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand completions" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand completions" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and not __fish_seen_subcommand_from create remove settings help" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and not __fish_seen_subcommand_from create remove settings help" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and not __fish_seen_subcommand_from create remove settings help" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and not __fish_seen_subcommand_from create remove settings help" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and not __fish_seen_subcommand_from create remove settings help" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and not __fish_seen_subcommand_from create remove settings help" -f -a "create" -d 'WorktreeCreate: read Claude Code\'s JSON on stdin, provision a box, print its path'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and not __fish_seen_subcommand_from create remove settings help" -f -a "remove" -d 'WorktreeRemove: read Claude Code\'s JSON on stdin, remove that treebox box'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and not __fish_seen_subcommand_from create remove settings help" -f -a "settings" -d 'Print the Claude Code settings that wire the two hooks up'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and not __fish_seen_subcommand_from create remove settings help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from create" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from create" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from create" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from create" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from create" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from remove" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from remove" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from remove" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from remove" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from settings" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from settings" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from settings" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from settings" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from settings" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from help" -f -a "create" -d 'WorktreeCreate: read Claude Code\'s JSON on stdin, provision a box, print its path'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from help" -f -a "remove" -d 'WorktreeRemove: read Claude Code\'s JSON on stdin, remove that treebox box'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from help" -f -a "settings" -d 'Print the Claude Code settings that wire the two hooks up'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand claude-worktree; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand mcp" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand mcp" -l all -d 'Serve every repository `git sandbox ls` knows, not only this one: each tool then takes the repository as `repo`, and `box_list` without it lists every box'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand mcp" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand mcp" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand mcp" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand mcp" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand version" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand version" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand version" -s v -l verbose -d 'More output on stderr (per-stage timings even off a terminal)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand version" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand version" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create enter list diff watch land teardown doctor template completions claude-worktree mcp version help" -f -a "create" -d 'Provision a box and launch the agent in it'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create enter list diff watch land teardown doctor template completions claude-worktree mcp version help" -f -a "enter" -d 'Enter a box: finish or refresh its setup, then launch the agent in it'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create enter list diff watch land teardown doctor template completions claude-worktree mcp version help" -f -a "list" -d 'List this repository\'s boxes'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create enter list diff watch land teardown doctor template completions claude-worktree mcp version help" -f -a "diff" -d 'Show what a box changed since its base: its commits and uncommitted work'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create enter list diff watch land teardown doctor template completions claude-worktree mcp version help" -f -a "watch" -d 'A live dashboard of this repository\'s boxes: who works, who waits, one key to jump in'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create enter list diff watch land teardown doctor template completions claude-worktree mcp version help" -f -a "land" -d 'Put a box\'s work onto its base branch (squash, rebase or merge), or open a pull request of it'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create enter list diff watch land teardown doctor template completions claude-worktree mcp version help" -f -a "teardown" -d 'Remove boxes without losing work by accident'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create enter list diff watch land teardown doctor template completions claude-worktree mcp version help" -f -a "doctor" -d 'Check the machine and the repository'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create enter list diff watch land teardown doctor template completions claude-worktree mcp version help" -f -a "template" -d 'Operator-owned container templates'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create enter list diff watch land teardown doctor template completions claude-worktree mcp version help" -f -a "completions" -d 'Print the shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create enter list diff watch land teardown doctor template completions claude-worktree mcp version help" -f -a "claude-worktree" -d 'Claude Code\'s worktree backend: its WorktreeCreate / WorktreeRemove hooks'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create enter list diff watch land teardown doctor template completions claude-worktree mcp version help" -f -a "mcp" -d 'An MCP server over stdio for a lead agent: this repository\'s boxes as tools'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create enter list diff watch land teardown doctor template completions claude-worktree mcp version help" -f -a "version" -d 'Print the version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create enter list diff watch land teardown doctor template completions claude-worktree mcp version help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and __fish_seen_subcommand_from template" -f -a "init" -d 'Copy the bundled template into your config dir, to edit it there'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and __fish_seen_subcommand_from template" -f -a "list" -d 'List the templates: the bundled one and yours, with their problems'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and __fish_seen_subcommand_from template" -f -a "path" -d 'Print the directory of a template'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and __fish_seen_subcommand_from claude-worktree" -f -a "create" -d 'WorktreeCreate: read Claude Code\'s JSON on stdin, provision a box, print its path'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and __fish_seen_subcommand_from claude-worktree" -f -a "remove" -d 'WorktreeRemove: read Claude Code\'s JSON on stdin, remove that treebox box'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and __fish_seen_subcommand_from claude-worktree" -f -a "settings" -d 'Print the Claude Code settings that wire the two hooks up'
