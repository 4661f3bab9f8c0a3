#!/usr/bin/env bash
# Time from a command to the real Claude Code's prompt (issue 29's done-means), against
# doing the same by hand:
#
#   host    git treebox create -d NAME (host runner, worktree)
#           vs  git worktree add + tmux new-session -d 'claude …'
#   docker  git treebox create -d NAME (docker, sandboxed worktree)
#           vs  docker run -d IMAGE sleep infinity + tmux new-session -d 'docker exec -it C claude …'
#           (the image treebox built for the box, the same staged ~/.claude.json)
#           and the same on a worktree of the repository (`git worktree add`, mounted
#           and made the workdir, the agent's own), as the box is and as the host row
#           does by hand: the agent's own start reads the repository there (git), so
#           this is the like-for-like figure
#
# "The prompt" is the pane showing `❯` and "bypass permissions on", polled every 20 ms
# from the start on treebox's own tmux socket (or the bench's). treebox's rows are the
# later of its return and its prompt (the return alone is shown too). Medians in ms,
# and their ratio.
#
# Usage: benches/agent-prompt.sh [ROUNDS]   (default 5; HOST_ONLY=1: the host rows only;
#        TREEBOX_BIN_B=DIR: another build's host box too, in the same rounds, for an A/B;
#        ENGINE=podman: the container rows on podman, by hand and in the box;
#        SPLIT=1: the container rows split in two, up to the agent's exec and from
#        there to its prompt: the image's `claude` is then a two-line script that
#        notes the time in the container's /tmp and execs the real one, in every
#        container row alike;
#        LIKE_BOX=1: one more by-hand container row, on a worktree and started with
#        the box's own run options, read from the `warm` box's container: its block
#        of ports published on loopback (`-p 127.0.0.1::PORT`, the same count), its
#        limits, its security options and extra hosts. What is left between it and
#        the box is treebox's own share: its fetch and checkout, session, launcher,
#        hooks and hand-over;
#        PARTS=1: instead of the rows, the agent's own start, each part against its
#        absence, interleaved: on the host, in a host box's checkout, with and without
#        treebox's `--settings`; in the warm box's container (a plain engine exec, no
#        launcher), with and without them, and with them in a new home, put back as
#        treebox staged it, as every new box's is)
# Needs: TREEBOX_TEST_AGENTS (a directory with the real `claude` and `codex`, see
# tests/it/real_agents.rs), tmux, docker (or ENGINE) with treebox-test-base:1, and a built
# treebox (TREEBOX_BIN, default target/release). The agents' base image, boxes,
# containers, tmux servers and the temp HOME are removed at the end, also on failure.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-5}
bin=${TREEBOX_BIN:-$here/target/release}
engine=${ENGINE:-docker}
case $engine in
  docker) host_name=host.docker.internal ;;
  podman) host_name=host.containers.internal ;;
  *) echo "ENGINE is docker or podman, not $engine" >&2; exit 2 ;;
esac
agents=${TREEBOX_TEST_AGENTS:?set TREEBOX_TEST_AGENTS to a directory holding claude and codex}
[ -x "$bin/git-treebox" ] || { echo "build first: cargo build --release (or set TREEBOX_BIN)" >&2; exit 1; }
work=$(mktemp -d /tmp/treebox-prompt.XXXXXX)
key=sk-ant-api03-bench-key-0123456789abcdefghij
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_STATE_HOME=$work/home/.local/state
export PATH=$bin:$work/bin:$PATH TERM=xterm-256color
export ANTHROPIC_API_KEY=$key ANTHROPIC_BASE_URL=http://127.0.0.1:9 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1
# Claude Code's own temp dirs (`claude-<uid>`, `cc-socks`, ssh configs) go with $work.
export TMPDIR=$work/tmp
mkdir -p "$HOME/.claude" "$work/bin" "$TMPDIR"
ln -s "$(readlink -f "$agents/claude")" "$work/bin/claude"
git config --global user.name bench && git config --global user.email bench@example.invalid
sock=$work/bench.sock
agents_img=treebox-bench-agents:$$
cleanup() {
  tmux -S "$sock" kill-server 2>/dev/null || true
  tmux -S "$XDG_STATE_HOME/treebox/tmux.sock" kill-server 2>/dev/null || true
  ids=$($engine ps -aq --filter "label=org.treebox.repo=$work/repo" 2>/dev/null || true)
  [ -n "$ids" ] && $engine rm -f $ids >/dev/null 2>&1 || true
  ids=$($engine ps -aq --filter "label=org.treebox.prompt=$work" 2>/dev/null || true)
  [ -n "$ids" ] && $engine rm -f $ids >/dev/null 2>&1 || true
  if [ -d "$work/repo" ]; then
    for b in $(cd "$work/repo" && git treebox list --json 2>/dev/null \
      | python3 -c 'import json,sys; [print(b["name"]) for b in json.load(sys.stdin)["boxes"]]' 2>/dev/null); do
      (cd "$work/repo" && git treebox teardown --force "$b" >/dev/null 2>&1) || true
    done
  fi
  # Twice: a base image goes only once the box images built on it are gone.
  for _ in 1 2; do
    for img in $($engine images -q --filter "label=org.treebox.prompt=$work" 2>/dev/null | sort -u); do
      $engine image rm -f "$img" >/dev/null 2>&1 || true
    done
  done
  rm -rf "$work"
}
trap cleanup EXIT

cd "$work" && git init -q --bare -b main origin.git && git clone -q origin.git repo 2>/dev/null && cd repo
echo hi > a && git add a && git commit -qm init && git push -q origin HEAD:main 2>/dev/null
repo=$work/repo
# A returning user who trusts the main checkout (and, for the by-hand container, the
# directory the agent starts in there).
# (The by-hand container on a worktree, `hw<N>`, is trusted too; the fullscreen
# renderer's offer, shown at some starts, is marked seen, as a returning user's is.)
python3 - "$HOME" "$repo" "$key" "$rounds" <<'PY'
import json, sys
home, repo, key, rounds = sys.argv[1:]
projects = {repo: {"hasTrustDialogAccepted": True},
            "/home/agent": {"hasTrustDialogAccepted": True}}
for i in range(1, int(rounds) + 1):
    projects["%s/hw%d" % (repo.rsplit("/", 1)[0], i)] = {"hasTrustDialogAccepted": True}
user = {"hasCompletedOnboarding": True, "fullscreenUpsellSeenCount": 3,
        "customApiKeyResponses": {"approved": [key[-20:]], "rejected": []},
        "projects": projects}
json.dump(user, open(home + "/.claude.json", "w"))
json.dump({"skipDangerousModePermissionPrompt": True}, open(home + "/.claude/settings.json", "w"))
PY

now() { date +%s%N; }
# wait_prompt SOCKET TARGET START: ms from START until the pane shows Claude's prompt.
wait_prompt() {
  local deadline=$(( $(now) + 90000000000 )) screen
  while [ "$(now)" -lt "$deadline" ]; do
    screen=$(tmux -S "$1" capture-pane -p -t "$2" 2>/dev/null || true)
    if [[ $screen == *❯* && $screen == *"bypass permissions on"* ]]; then
      echo $(( ($(now) - $3) / 1000000 )); return
    fi
    sleep 0.02
  done
  echo "no prompt in $2:" >&2; printf '%s\n' "$screen" >&2; exit 1
}
# stop_session SOCKET TARGET KILL...: run KILL (which ends the session), then wait until
# every process of the pane's session has exited. Claude Code takes about a second
# of CPU to shut down after its terminal goes; without the wait, the next start
# measured shares the 2 CPUs with the last agent's shutdown.
stop_session() {
  local sock=$1 target=$2 pid deadline; shift 2
  pid=$(tmux -S "$sock" display-message -p -t "$target" '#{pane_pid}' 2>/dev/null || true)
  "$@" >/dev/null 2>&1 || true
  [ -n "$pid" ] || return 0
  deadline=$(( $(now) + 20000000000 ))
  while pgrep -s "$pid" >/dev/null 2>&1 && [ "$(now)" -lt "$deadline" ]; do sleep 0.02; done
}
# created NAME START CMD...: run CMD (a `create -d NAME`) in the background while
# polling, as wait_prompt does for the by-hand rows, for the box's pane to show the
# prompt. Prints "READY RETURNED": ms from START until the command has returned and the
# prompt is drawn (what a user waits for), and until it returned. Polling from the start
# keeps the rows alike: timing the return and then looking up the pane put the bench's
# own `list-panes` and first capture (70 ms at load) on treebox's side alone.
created() {
  local name=$1 s=$2 ret=$work/returned.$1 pane="" screen seen="" deadline; shift 2
  rm -f "$ret"
  ( "$@" >/dev/null 2>&1; echo $(( ($(now) - s) / 1000000 )) > "$ret" ) &
  deadline=$(( $(now) + 90000000000 ))
  while [ "$(now)" -lt "$deadline" ]; do
    if [ -z "$seen" ]; then
      [ -n "$pane" ] || pane=$(tb_pane "$name" 2>/dev/null || true)
      if [ -n "$pane" ]; then
        screen=$(tmux -S "$XDG_STATE_HOME/treebox/tmux.sock" capture-pane -p -t "$pane" 2>/dev/null || true)
        [[ $screen == *❯* && $screen == *"bypass permissions on"* ]] && seen=$(( ($(now) - s) / 1000000 ))
      fi
    fi
    [ -n "$seen" ] && [ -s "$ret" ] && break
    sleep 0.02
  done
  wait
  [ -n "$seen" ] && [ -s "$ret" ] || { echo "no prompt in box $name:" >&2; printf '%s\n' "$screen" >&2; exit 1; }
  local r; r=$(cat "$ret"); rm -f "$ret"
  echo "$(( seen > r ? seen : r )) $r"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
row() { printf '| %-7s | %-66s | %7s ms |\n' "$1" "$2" "$3"; }
tb_pane() { tmux -S "$XDG_STATE_HOME/treebox/tmux.sock" list-panes -a -F '#{pane_id} #{session_name}' | awk -v s="/$1" 'index($2, s) == length($2) - length(s) + 1 { print $1 }'; }
# make_warm: the operator's base image (the test base with the real CLIs), the `bench`
# template on it, and box `warm` made without its agent (its image built once); sets
# img (the box's image) and wc (its container).
make_warm() {
  ctx=$work/agents-ctx && mkdir -p "$ctx"
  cp --reflink=auto "$(readlink -f "$agents/claude")" "$(readlink -f "$agents/codex")" "$ctx/" 2>/dev/null \
    || { ln "$(readlink -f "$agents/claude")" "$ctx/claude"; ln "$(readlink -f "$agents/codex")" "$ctx/codex"; }
  printf 'FROM treebox-test-base:1\nCOPY claude codex /usr/local/bin/\n' > "$ctx/Dockerfile"
  if [ "${SPLIT:-0}" = 1 ]; then
    mv "$ctx/claude" "$ctx/claude.real"
    printf '#!/bin/sh\ndate +%%s%%N >/tmp/.agent-exec\nexec /usr/local/bin/claude.real "$@"\n' > "$ctx/claude"
    chmod 755 "$ctx/claude"
    printf 'COPY claude.real /usr/local/bin/\n' >> "$ctx/Dockerfile"
  fi
  $engine build -q -t "$agents_img" --label "org.treebox.prompt=$work" "$ctx" >/dev/null 2>&1
  rm -rf "$ctx"
  git treebox template init bench >/dev/null 2>&1
  python3 - "$XDG_CONFIG_HOME/treebox/templates/bench" "$agents_img" "$work" <<'PY'
import json, sys
d, img, work = sys.argv[1:]
j = json.load(open(d + "/container.json"))
j["baseImage"] = img; j["buildArgs"]["INSTALL_AGENTS"] = "0"; j["buildArgs"]["INSTALL_GH"] = "0"
json.dump(j, open(d + "/container.json", "w"))
open(d + "/Dockerfile", "a").write('\nLABEL org.treebox.prompt="%s"\n' % work)
PY
  echo "{\"template\": \"bench\", \"isolation\": \"$engine\"}" > "$XDG_CONFIG_HOME/treebox/config.json"
  git treebox create warm --no-launch >/dev/null 2>&1   # builds the box image once
  rec=$(ls "$XDG_STATE_HOME"/treebox/repos/*/boxes/warm/record.json)
  read -r img wc < <(python3 -c "import json,sys;c=json.load(open(sys.argv[1]))['container'];print(c['image'], c['name'])" "$rec")
}

# The host: treebox as root needs the user's opt-in (IS_SANDBOX=1), as by hand.
mkdir -p "$XDG_CONFIG_HOME/treebox"
[ "$(id -u)" = 0 ] && host_opt='{"harnesses": {"claude": {"allowRoot": true}}}' || host_opt='{}'
echo "$host_opt" > "$XDG_CONFIG_HOME/treebox/config.json"

if [ "${PARTS:-0}" = 1 ]; then
  # start_ms SESSION COMMAND: ms from starting COMMAND in a new session to its prompt;
  # the session then ended and its processes gone.
  start_ms() {
    local s ms; s=$(now)
    tmux -S "$sock" new-session -d -s "$1" -x 200 -y 50 "$2"
    ms=$(wait_prompt "$sock" "$1" "$s")
    stop_session "$sock" "$1" tmux -S "$sock" kill-session -t "$1"
    echo "$ms"
  }
  med() { printf '%s\n' "$@" | median; }
  echo "the agent's own start, each part against its absence: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds, claude $(claude --version 2>/dev/null | head -1)"
  git treebox create parts --isolation host --no-launch >/dev/null 2>&1
  st=$(dirname "$(ls "$XDG_STATE_HOME"/treebox/repos/*/boxes/parts/record.json)")
  co=$(python3 - "$HOME" "$st/record.json" <<'PY'
import json, sys
home, rec = sys.argv[1:]
co = json.load(open(rec))["path"]
j = json.load(open(home + "/.claude.json")); j["projects"][co] = {"hasTrustDialogAccepted": True}
json.dump(j, open(home + "/.claude.json", "w")); print(co)
PY
)
  run="cd '$co' && IS_SANDBOX=1 claude --dangerously-skip-permissions"
  set_h=(); none_h=()
  for i in $(seq "$rounds"); do
    if [ $((i % 2)) = 1 ]; then
      set_h+=("$(start_ms hs$i "$run --settings '$st/agent/claude-settings.json'")"); none_h+=("$(start_ms hn$i "$run")")
    else
      none_h+=("$(start_ms hn$i "$run")"); set_h+=("$(start_ms hs$i "$run --settings '$st/agent/claude-settings.json'")")
    fi
  done
  echo "host, in the box's checkout: with treebox's --settings $(med "${set_h[@]}") ms, without $(med "${none_h[@]}") ms"
  echo "  rounds: with ${set_h[*]}; without ${none_h[*]}"
  if [ "${HOST_ONLY:-0}" != 1 ] && $engine image inspect treebox-test-base:1 >/dev/null 2>&1; then
    make_warm
    wd=$($engine inspect "$wc" --format '{{.Config.WorkingDir}}')
    # The home as treebox staged it, kept to put back before a "new home" round.
    $engine exec -u 0 "$wc" sh -c 'cp -a /home/agent/.claude.json /tmp/staged.json && cp -a /home/agent/.claude /tmp/staged-claude'
    new_home() {
      $engine exec -u 0 "$wc" sh -c 'cat /tmp/staged.json >/home/agent/.claude.json && rm -rf /home/agent/.claude/* /home/agent/.claude/.[!.]* && cp -a /tmp/staged-claude/. /home/agent/.claude/'
    }
    # in_box SESSION [--settings]: a plain engine exec of the agent (no launcher).
    in_box() {
      local ms set=; [ "${2-}" = --settings ] && set="--settings /run/treebox/agent/claude-settings.json"
      ms=$(start_ms "$1" "$engine exec -it -u 1000:1000 -w '$wd' -e HOME=/home/agent -e TERM=xterm-256color -e ANTHROPIC_API_KEY=$key -e ANTHROPIC_BASE_URL=http://$host_name:9 -e CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 $wc claude --dangerously-skip-permissions $set")
      # The agent in the container outlives its engine client a moment.
      $engine exec "$wc" pkill -u 1000 claude >/dev/null 2>&1 || true
      while $engine exec "$wc" pgrep -u 1000 claude >/dev/null 2>&1; do sleep 0.1; done
      echo "$ms"
    }
    new_d=(); set_d=(); none_d=()
    for i in $(seq "$rounds"); do
      new_home; new_d+=("$(in_box df$i --settings)")
      if [ $((i % 2)) = 1 ]; then
        set_d+=("$(in_box ds$i --settings)"); none_d+=("$(in_box dn$i)")
      else
        none_d+=("$(in_box dn$i)"); set_d+=("$(in_box ds$i --settings)")
      fi
    done
    echo "$engine, in the warm box's container: with treebox's --settings $(med "${set_d[@]}") ms, without $(med "${none_d[@]}") ms; with them and a new home $(med "${new_d[@]}") ms"
    echo "  rounds: with ${set_d[*]}; without ${none_d[*]}; new home ${new_d[*]}"
  fi
  exit 0
fi

echo "agent to prompt: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds, claude $(claude --version 2>/dev/null | head -1)"
echo
echo "| where   | command                                                            |  median |"
echo "|---------|--------------------------------------------------------------------|---------|"

hand=(); ours=(); ours_back=(); theirs=()
for i in $(seq "$rounds"); do
  s=$(now)
  git worktree add -q "$work/wt$i" -b "hand$i"
  tmux -S "$sock" new-session -d -s "h$i" -x 200 -y 50 -c "$work/wt$i" "IS_SANDBOX=1 claude --dangerously-skip-permissions"
  hand+=("$(wait_prompt "$sock" "h$i" "$s")")
  stop_session "$sock" "h$i" tmux -S "$sock" kill-session -t "h$i"
  out=$(created "host$i" "$(now)" git treebox create -d "host$i" --isolation host)
  read -r ready back <<< "$out"
  ours+=("$ready"); ours_back+=("$back")
  pane=$(tb_pane "host$i")
  stop_session "$XDG_STATE_HOME/treebox/tmux.sock" "$pane" git treebox teardown --force "host$i"
  if [ -n "${TREEBOX_BIN_B:-}" ]; then
    out=$(created "hostb$i" "$(now)" "$TREEBOX_BIN_B/git-treebox" create -d "hostb$i" --isolation host)
    read -r ready back <<< "$out"
    theirs+=("$ready")
    pane=$(tb_pane "hostb$i")
    stop_session "$XDG_STATE_HOME/treebox/tmux.sock" "$pane" "$TREEBOX_BIN_B/git-treebox" teardown --force "hostb$i"
  fi
done
h_hand=$(printf '%s\n' "${hand[@]}" | median); h_ours=$(printf '%s\n' "${ours[@]}" | median)
row host "git worktree add + tmux new-session 'claude …' (by hand)" "$h_hand"
row host "git treebox create -d NAME --isolation host" "$h_ours"
row host "  (of which: the command's own return)" "$(printf '%s\n' "${ours_back[@]}" | median)"
host_ratio=$(ratio "$h_ours" "$h_hand")
# Each round's figures, in order, for the noise behind a median.
per_round="host by hand ${hand[*]}; host box ${ours[*]}"
if [ -n "${TREEBOX_BIN_B:-}" ]; then
  h_b=$(printf '%s\n' "${theirs[@]}" | median)
  row host "the same with TREEBOX_BIN_B ($(ratio "$h_b" "$h_hand")×)" "$h_b"
fi

if [ "${HOST_ONLY:-0}" != 1 ] && $engine image inspect treebox-test-base:1 >/dev/null 2>&1; then
  make_warm
  like=()
  if [ "${LIKE_BOX:-0}" = 1 ]; then
    mapfile -t like < <($engine inspect "$wc" --format '{{json .HostConfig}}' | python3 -c '
import json, sys
h = json.load(sys.stdin); o = []
for p in sorted(h.get("PortBindings") or {}):
    o += ["-p", "127.0.0.1::" + p.split("/")[0]]
if h.get("Memory"): o += ["--memory", str(h["Memory"])]
if h.get("NanoCpus"): o += ["--cpus", "%g" % (h["NanoCpus"] / 1e9)]
if h.get("PidsLimit"): o += ["--pids-limit", str(h["PidsLimit"])]
for x in h.get("SecurityOpt") or []: o += ["--security-opt", x]
for x in h.get("ExtraHosts") or []: o += ["--add-host", x]
print("\n".join(o))')
    [ "${#like[@]}" -gt 0 ] || { echo "LIKE_BOX=1: no run options read from the warm box's container" >&2; exit 1; }
  fi
  # exec_at C START: with SPLIT=1, ms from START to the agent's exec in container C
  # (its wrapper's note), else "-".
  exec_at() {
    local t
    [ "${SPLIT:-0}" = 1 ] && t=$($engine exec "$1" cat /tmp/.agent-exec 2>/dev/null) && [ -n "$t" ] \
      && echo $(( (t - $2) / 1000000 )) || echo -
  }
  # by_hand SESSION USER WORKDIR [docker run options…]: ms from `docker run -d` to the
  # prompt of `docker exec -it C claude` in a tmux session (and to the agent's exec,
  # see exec_at), then both removed.
  by_hand() {
    local name=$1 user=$2 wd=$3 s c ms; shift 3
    s=$(now)
    c=$($engine run -d --init --label "org.treebox.prompt=$work" -u "$user" -w "$wd" "$@" \
      -v "$HOME/.claude.json:/home/agent/.claude.json" -v "$HOME/.claude:/home/agent/.claude" \
      "$img" sleep infinity)
    tmux -S "$sock" new-session -d -s "$name" -x 200 -y 50 \
      "$engine exec -it -e HOME=/home/agent -e TERM=xterm-256color -e ANTHROPIC_API_KEY=$key -e ANTHROPIC_BASE_URL=http://$host_name:9 -e CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 $c claude --dangerously-skip-permissions"
    ms=$(wait_prompt "$sock" "$name" "$s")
    ms="$ms $(exec_at "$c" "$s")"
    tmux -S "$sock" kill-session -t "$name"; $engine rm -f "$c" >/dev/null
    echo "$ms"
  }
  hand=(); ours=(); ours_back=(); on_wt=(); theirs_d=(); x_hand=(); x_wt=(); x_ours=(); as_box=(); x_box=()
  for i in $(seq "$rounds"); do
    # By hand, on a worktree of the repository, as the box is: its checkout mounted
    # and the agent's own (on a desktop whose user is uid 1000 it already is; as root
    # here the files are given to 1000 before the clock starts).
    wt=$work/hw$i
    git worktree add -q "$wt" -b "hw$i"
    [ "$(id -u)" = 0 ] && wt_user=1000:1000 && chown -R 1000:1000 "$wt" "$repo/.git" || wt_user=$(id -u):$(id -g)
    read -r ms x <<< "$(by_hand "w$i" "$wt_user" "$wt" -v "$wt:$wt" -v "$repo/.git:$repo/.git")"
    on_wt+=("$ms"); x_wt+=("$x")
    if [ "${#like[@]}" -gt 0 ]; then
      read -r ms x <<< "$(by_hand "l$i" "$wt_user" "$wt" -v "$wt:$wt" -v "$repo/.git:$repo/.git" "${like[@]}")"
      as_box+=("$ms"); x_box+=("$x")
    fi
    [ "$(id -u)" = 0 ] && chown -R 0:0 "$wt" "$repo/.git"
    git worktree remove --force "$wt"
    read -r ms x <<< "$(by_hand "d$i" 1000:1000 /home/agent)"
    hand+=("$ms"); x_hand+=("$x")
    s=$(now)
    out=$(created "dock$i" "$s" git treebox create -d "dock$i")
    read -r ready back <<< "$out"
    ours+=("$ready"); ours_back+=("$back")
    x=-
    if [ "${SPLIT:-0}" = 1 ]; then
      c=$($engine ps -q --filter "label=org.treebox.repo=$repo" --filter "name=-dock$i\$" | head -1)
      [ -n "$c" ] && x=$(exec_at "$c" "$s")
    fi
    x_ours+=("$x")
    git treebox teardown --force "dock$i" >/dev/null 2>&1
    if [ -n "${TREEBOX_BIN_B:-}" ]; then
      out=$(created "dockb$i" "$(now)" "$TREEBOX_BIN_B/git-treebox" create -d "dockb$i")
      read -r ready back <<< "$out"
      theirs_d+=("$ready")
      "$TREEBOX_BIN_B/git-treebox" teardown --force "dockb$i" >/dev/null 2>&1
    fi
  done
  d_hand=$(printf '%s\n' "${hand[@]}" | median); d_ours=$(printf '%s\n' "${ours[@]}" | median)
  d_wt=$(printf '%s\n' "${on_wt[@]}" | median)
  row "$engine" "$engine run -d IMAGE + tmux new-session '$engine exec -it C claude …'" "$d_hand"
  row "$engine" "the same on a worktree (git worktree add, -v it, -w it; untimed)" "$d_wt"
  # With LIKE_BOX=1, its row and what the summary lines say of it.
  like_ratio= like_rounds= like_exec=
  if [ "${#like[@]}" -gt 0 ]; then
    d_like=$(printf '%s\n' "${as_box[@]}" | median)
    row "$engine" "  and with the box's run options (its ports, limits; LIKE_BOX=1)" "$d_like"
    like_ratio=", with the box's run options $(ratio "$d_ours" "$d_like")"
    like_rounds="; with the box's run options ${as_box[*]}"
    like_exec="; with the box's run options ${x_box[*]}"
  fi
  row "$engine" "git treebox create -d NAME (sandboxed worktree)" "$d_ours"
  row "$engine" "  (of which: the command's own return)" "$(printf '%s\n' "${ours_back[@]}" | median)"
  if [ -n "${TREEBOX_BIN_B:-}" ]; then
    d_b=$(printf '%s\n' "${theirs_d[@]}" | median)
    row "$engine" "the same with TREEBOX_BIN_B ($(ratio "$d_b" "$d_hand")×)" "$d_b"
  fi
  echo
  echo "ratios (treebox / by hand): host $host_ratio, $engine $(ratio "$d_ours" "$d_hand"), $engine on a worktree $(ratio "$d_ours" "$d_wt")$like_ratio"
  echo "rounds (ms): $per_round; $engine by hand ${hand[*]}; on a worktree ${on_wt[*]}$like_rounds; $engine box ${ours[*]}"
  if [ "${SPLIT:-0}" = 1 ]; then
    # The agent's exec, and from it to the prompt, per row (medians of each round's).
    parts() {
      local -n all=$1 ex=$2; local i to=() from=()
      for i in "${!all[@]}"; do
        [ "${ex[$i]}" = - ] && continue
        to+=("${ex[$i]}"); from+=("$(( all[i] - ex[i] ))")
      done
      [ "${#to[@]}" -gt 0 ] || { echo "not seen"; return; }
      echo "exec at $(printf '%s\n' "${to[@]}" | median), then $(printf '%s\n' "${from[@]}" | median) to the prompt"
    }
    like_parts=
    [ "${#like[@]}" -gt 0 ] && like_parts="; with the box's run options $(parts as_box x_box)"
    echo "split (ms): by hand $(parts hand x_hand); on a worktree $(parts on_wt x_wt)$like_parts; box $(parts ours x_ours)"
    echo "agent's exec per round: by hand ${x_hand[*]}; on a worktree ${x_wt[*]}$like_exec; box ${x_ours[*]}"
  fi
else
  echo
  [ "${HOST_ONLY:-0}" = 1 ] && why="HOST_ONLY=1" || why="no treebox-test-base:1"
  echo "ratio (treebox / by hand): host $host_ratio; $engine: skipped ($why)"
  echo "rounds (ms): $per_round"
fi
