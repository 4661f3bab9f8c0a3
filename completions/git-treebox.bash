_git__treebox() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="git__treebox"
                ;;
            git__treebox,claude-worktree)
                cmd="git__treebox__subcmd__claude__subcmd__worktree"
                ;;
            git__treebox,completions)
                cmd="git__treebox__subcmd__completions"
                ;;
            git__treebox,create)
                cmd="git__treebox__subcmd__create"
                ;;
            git__treebox,diff)
                cmd="git__treebox__subcmd__diff"
                ;;
            git__treebox,doctor)
                cmd="git__treebox__subcmd__doctor"
                ;;
            git__treebox,enter)
                cmd="git__treebox__subcmd__enter"
                ;;
            git__treebox,help)
                cmd="git__treebox__subcmd__help"
                ;;
            git__treebox,land)
                cmd="git__treebox__subcmd__land"
                ;;
            git__treebox,list)
                cmd="git__treebox__subcmd__list"
                ;;
            git__treebox,ls)
                cmd="git__treebox__subcmd__list"
                ;;
            git__treebox,mcp)
                cmd="git__treebox__subcmd__mcp"
                ;;
            git__treebox,open)
                cmd="git__treebox__subcmd__open"
                ;;
            git__treebox,rm)
                cmd="git__treebox__subcmd__teardown"
                ;;
            git__treebox,teardown)
                cmd="git__treebox__subcmd__teardown"
                ;;
            git__treebox,template)
                cmd="git__treebox__subcmd__template"
                ;;
            git__treebox,version)
                cmd="git__treebox__subcmd__version"
                ;;
            git__treebox,watch)
                cmd="git__treebox__subcmd__watch"
                ;;
            git__treebox__subcmd__claude__subcmd__worktree,create)
                cmd="git__treebox__subcmd__claude__subcmd__worktree__subcmd__create"
                ;;
            git__treebox__subcmd__claude__subcmd__worktree,help)
                cmd="git__treebox__subcmd__claude__subcmd__worktree__subcmd__help"
                ;;
            git__treebox__subcmd__claude__subcmd__worktree,remove)
                cmd="git__treebox__subcmd__claude__subcmd__worktree__subcmd__remove"
                ;;
            git__treebox__subcmd__claude__subcmd__worktree,settings)
                cmd="git__treebox__subcmd__claude__subcmd__worktree__subcmd__settings"
                ;;
            git__treebox__subcmd__claude__subcmd__worktree__subcmd__help,create)
                cmd="git__treebox__subcmd__claude__subcmd__worktree__subcmd__help__subcmd__create"
                ;;
            git__treebox__subcmd__claude__subcmd__worktree__subcmd__help,help)
                cmd="git__treebox__subcmd__claude__subcmd__worktree__subcmd__help__subcmd__help"
                ;;
            git__treebox__subcmd__claude__subcmd__worktree__subcmd__help,remove)
                cmd="git__treebox__subcmd__claude__subcmd__worktree__subcmd__help__subcmd__remove"
                ;;
            git__treebox__subcmd__claude__subcmd__worktree__subcmd__help,settings)
                cmd="git__treebox__subcmd__claude__subcmd__worktree__subcmd__help__subcmd__settings"
                ;;
            git__treebox__subcmd__help,claude-worktree)
                cmd="git__treebox__subcmd__help__subcmd__claude__subcmd__worktree"
                ;;
            git__treebox__subcmd__help,completions)
                cmd="git__treebox__subcmd__help__subcmd__completions"
                ;;
            git__treebox__subcmd__help,create)
                cmd="git__treebox__subcmd__help__subcmd__create"
                ;;
            git__treebox__subcmd__help,diff)
                cmd="git__treebox__subcmd__help__subcmd__diff"
                ;;
            git__treebox__subcmd__help,doctor)
                cmd="git__treebox__subcmd__help__subcmd__doctor"
                ;;
            git__treebox__subcmd__help,enter)
                cmd="git__treebox__subcmd__help__subcmd__enter"
                ;;
            git__treebox__subcmd__help,help)
                cmd="git__treebox__subcmd__help__subcmd__help"
                ;;
            git__treebox__subcmd__help,land)
                cmd="git__treebox__subcmd__help__subcmd__land"
                ;;
            git__treebox__subcmd__help,list)
                cmd="git__treebox__subcmd__help__subcmd__list"
                ;;
            git__treebox__subcmd__help,mcp)
                cmd="git__treebox__subcmd__help__subcmd__mcp"
                ;;
            git__treebox__subcmd__help,open)
                cmd="git__treebox__subcmd__help__subcmd__open"
                ;;
            git__treebox__subcmd__help,teardown)
                cmd="git__treebox__subcmd__help__subcmd__teardown"
                ;;
            git__treebox__subcmd__help,template)
                cmd="git__treebox__subcmd__help__subcmd__template"
                ;;
            git__treebox__subcmd__help,version)
                cmd="git__treebox__subcmd__help__subcmd__version"
                ;;
            git__treebox__subcmd__help,watch)
                cmd="git__treebox__subcmd__help__subcmd__watch"
                ;;
            git__treebox__subcmd__help__subcmd__claude__subcmd__worktree,create)
                cmd="git__treebox__subcmd__help__subcmd__claude__subcmd__worktree__subcmd__create"
                ;;
            git__treebox__subcmd__help__subcmd__claude__subcmd__worktree,remove)
                cmd="git__treebox__subcmd__help__subcmd__claude__subcmd__worktree__subcmd__remove"
                ;;
            git__treebox__subcmd__help__subcmd__claude__subcmd__worktree,settings)
                cmd="git__treebox__subcmd__help__subcmd__claude__subcmd__worktree__subcmd__settings"
                ;;
            git__treebox__subcmd__help__subcmd__template,import-devcontainer)
                cmd="git__treebox__subcmd__help__subcmd__template__subcmd__import__subcmd__devcontainer"
                ;;
            git__treebox__subcmd__help__subcmd__template,init)
                cmd="git__treebox__subcmd__help__subcmd__template__subcmd__init"
                ;;
            git__treebox__subcmd__help__subcmd__template,list)
                cmd="git__treebox__subcmd__help__subcmd__template__subcmd__list"
                ;;
            git__treebox__subcmd__help__subcmd__template,path)
                cmd="git__treebox__subcmd__help__subcmd__template__subcmd__path"
                ;;
            git__treebox__subcmd__template,help)
                cmd="git__treebox__subcmd__template__subcmd__help"
                ;;
            git__treebox__subcmd__template,import-devcontainer)
                cmd="git__treebox__subcmd__template__subcmd__import__subcmd__devcontainer"
                ;;
            git__treebox__subcmd__template,init)
                cmd="git__treebox__subcmd__template__subcmd__init"
                ;;
            git__treebox__subcmd__template,list)
                cmd="git__treebox__subcmd__template__subcmd__list"
                ;;
            git__treebox__subcmd__template,ls)
                cmd="git__treebox__subcmd__template__subcmd__list"
                ;;
            git__treebox__subcmd__template,path)
                cmd="git__treebox__subcmd__template__subcmd__path"
                ;;
            git__treebox__subcmd__template__subcmd__help,help)
                cmd="git__treebox__subcmd__template__subcmd__help__subcmd__help"
                ;;
            git__treebox__subcmd__template__subcmd__help,import-devcontainer)
                cmd="git__treebox__subcmd__template__subcmd__help__subcmd__import__subcmd__devcontainer"
                ;;
            git__treebox__subcmd__template__subcmd__help,init)
                cmd="git__treebox__subcmd__template__subcmd__help__subcmd__init"
                ;;
            git__treebox__subcmd__template__subcmd__help,list)
                cmd="git__treebox__subcmd__template__subcmd__help__subcmd__list"
                ;;
            git__treebox__subcmd__template__subcmd__help,path)
                cmd="git__treebox__subcmd__template__subcmd__help__subcmd__path"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        git__treebox)
            opts="-q -v -h -V --quiet --verbose --color --help --version create enter list ls diff open watch land teardown rm doctor template completions claude-worktree mcp version help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__claude__subcmd__worktree)
            opts="-q -v -h -V --quiet --verbose --color --help --version create remove settings help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__claude__subcmd__worktree__subcmd__create)
            opts="-q -v -h -V --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__claude__subcmd__worktree__subcmd__help)
            opts="create remove settings help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__claude__subcmd__worktree__subcmd__help__subcmd__create)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__claude__subcmd__worktree__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__claude__subcmd__worktree__subcmd__help__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__claude__subcmd__worktree__subcmd__help__subcmd__settings)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__claude__subcmd__worktree__subcmd__remove)
            opts="-q -v -h -V --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__claude__subcmd__worktree__subcmd__settings)
            opts="-q -v -h -V --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__completions)
            opts="-q -v -h -V --quiet --verbose --color --help --version bash elvish fish powershell zsh"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__create)
            opts="-d -q -v -h -V --checkout --base --no-fetch --no-launch --detach --print --json --dry-run --cold --warm --no-warm --harness --isolation --git --template --token-from --allow-forge --firewall --on --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --checkout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --base)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --harness)
                    COMPREPLY=($(compgen -W "claude codex" -- "${cur}"))
                    return 0
                    ;;
                --isolation)
                    COMPREPLY=($(compgen -W "host docker podman auto" -- "${cur}"))
                    return 0
                    ;;
                --git)
                    COMPREPLY=($(compgen -W "worktree clone" -- "${cur}"))
                    return 0
                    ;;
                --template)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --token-from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --on)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__diff)
            opts="-q -v -h -V --stat --json --no-pager --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__doctor)
            opts="-q -v -h -V --json --isolation --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --isolation)
                    COMPREPLY=($(compgen -W "host docker podman auto" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__enter)
            opts="-d -q -v -h -V --harness --isolation --git --cold --print --detach --json --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --harness)
                    COMPREPLY=($(compgen -W "claude codex" -- "${cur}"))
                    return 0
                    ;;
                --isolation)
                    COMPREPLY=($(compgen -W "host docker podman auto" -- "${cur}"))
                    return 0
                    ;;
                --git)
                    COMPREPLY=($(compgen -W "worktree clone" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help)
            opts="create enter list diff open watch land teardown doctor template completions claude-worktree mcp version help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__claude__subcmd__worktree)
            opts="create remove settings"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__claude__subcmd__worktree__subcmd__create)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__claude__subcmd__worktree__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__claude__subcmd__worktree__subcmd__settings)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__completions)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__create)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__diff)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__doctor)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__enter)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__land)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__mcp)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__open)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__teardown)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__template)
            opts="init list path import-devcontainer"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__template__subcmd__import__subcmd__devcontainer)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__template__subcmd__init)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__template__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__template__subcmd__path)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__version)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__help__subcmd__watch)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__land)
            opts="-q -v -h -V --squash --rebase --merge --push --pr --remove --json --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__list)
            opts="-q -v -h -V --json --dirty --ports --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__mcp)
            opts="-q -v -h -V --all --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__open)
            opts="-q -v -h -V --print --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__teardown)
            opts="-f -q -v -h -V --force --delete-branch --json --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__template)
            opts="-q -v -h -V --quiet --verbose --color --help --version init list ls path import-devcontainer help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__template__subcmd__help)
            opts="init list path import-devcontainer help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__template__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__template__subcmd__help__subcmd__import__subcmd__devcontainer)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__template__subcmd__help__subcmd__init)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__template__subcmd__help__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__template__subcmd__help__subcmd__path)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__template__subcmd__import__subcmd__devcontainer)
            opts="-q -v -h -V --yes --force --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__template__subcmd__init)
            opts="-q -v -h -V --force --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__template__subcmd__list)
            opts="-q -v -h -V --json --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__template__subcmd__path)
            opts="-q -v -h -V --json --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__version)
            opts="-q -v -h -V --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__treebox__subcmd__watch)
            opts="-q -v -h -V --once --json --no-notify --quiet --verbose --color --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _git__treebox -o nosort -o bashdefault -o default git-treebox
else
    complete -F _git__treebox -o bashdefault -o default git-treebox
fi

# `git treebox …` through git's own completion, which calls _git_treebox.
_git_treebox() {
    local COMP_WORDS=("git-treebox" "${words[@]:2}") COMP_CWORD=$((cword - 1))
    _git__treebox "git-treebox" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    local cur="${COMP_WORDS[COMP_CWORD]}"
    if [[ $COMP_CWORD -eq 2 && $cur != -* ]]; then
        case "${COMP_WORDS[1]}" in
            enter|teardown|rm) COMPREPLY=($(compgen -W "$(__treebox_box_names)" -- "$cur")) ;;
        esac
    fi
}

# The boxes of the repository here: the directories under its box root, and under
# its checkouts root (container boxes), named by the hash of its resolved git dir.
__treebox_box_names() {
    local common real hex dir
    common=$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null) || return 0
    command ls -1 "${common%/.git}/.treebox/worktrees" 2>/dev/null
    real=$(cd "$common" 2>/dev/null && pwd -P) || return 0
    hex=$({ printf '%s' "$real" | sha256sum 2>/dev/null || printf '%s' "$real" | shasum -a 256; } | cut -c1-12)
    for dir in "${XDG_DATA_HOME:-$HOME/.local/share}"/treebox/checkouts/*-"$hex"; do
        [[ -d $dir ]] && command ls -1 "$dir" 2>/dev/null
    done
    return 0
}
