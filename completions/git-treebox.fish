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
complete -c git-treebox -n "__fish_git_treebox_needs_command" -s v -l verbose -d 'More output on stderr'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "create" -d 'Provision a box and launch the agent in it'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "version" -d 'Print the version'
complete -c git-treebox -n "__fish_git_treebox_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l checkout -d 'Work on an existing local or origin/ branch instead of creating one' -r
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l base -d 'Base branch to cut the box from [default: main]' -r
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l harness -d 'Which agent to launch' -r -f -a "claude\t''
codex\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l isolation -d 'Where the agent runs' -r -f -a "host\t''
docker\t''
podman\t''
auto\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l git -d 'How the box\'s checkout is made' -r -f -a "worktree\t''
clone\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l no-fetch -d 'Do not fetch origin first (the base may be stale)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l no-launch -d 'Provision only; do not launch the agent'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l print -d 'Provision, then print the launch command as one shell-quoted line'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l json -d 'Provision, then print the result as JSON (does not launch)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l dry-run -d 'Print the plan and change nothing'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -l cold -d 'Install dependencies with throwaway caches instead of the shared ones'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -s v -l verbose -d 'More output on stderr'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand create" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand version" -l color -d 'When to colour stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-treebox -n "__fish_git_treebox_using_subcommand version" -s q -l quiet -d 'Less output on stderr (warnings and errors only)'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand version" -s v -l verbose -d 'More output on stderr'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand version" -s h -l help -d 'Print help'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand version" -s V -l version -d 'Print version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create version help" -f -a "create" -d 'Provision a box and launch the agent in it'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create version help" -f -a "version" -d 'Print the version'
complete -c git-treebox -n "__fish_git_treebox_using_subcommand help; and not __fish_seen_subcommand_from create version help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
