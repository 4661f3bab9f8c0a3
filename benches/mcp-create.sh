#!/usr/bin/env bash
# What does a lead agent pay for `box_create` over `git treebox mcp`, against the user's
# `git treebox create -d` (issue 40: within 1.1x)? Both make a host worktree box of a
# repository with a local bare origin (each fetches it) and start its agent detached,
# returning once the agent reports itself ready. The agent is a stand-in that reports
# `idle` through treebox's own status hooks as soon as it runs (Claude Code's
# `SessionStart`), so the figures are treebox's cost, not an agent's start-up.
# Interleaved, RUNS rounds after two warm-up rounds; each round times:
#   create -d    a process of its own, as the user runs it;
#   box_create   one tools/call on a server already running (its client starts it once).
# Each box is removed after its round, outside the timing. Prints the medians and the
# ratio to create -d; then raw `git worktree add` for scale.
#
# Usage: benches/mcp-create.sh [BIN_DIR]   (holds git-treebox; default target/release)
# Knobs: RUNS (15), WORK (fixture dir, a new temp dir, removed at the end).
# Needs: git, tmux, python3 (and benches/mcp_bench.py beside it).
set -euo pipefail
bin=$(cd "${1:-target/release}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
runs=${RUNS:-15}
work=${WORK:-$(mktemp -d)}
cleanup() {
  tmux -S "$work/home/state/treebox/tmux.sock" kill-server 2>/dev/null || true
  [ -n "${WORK:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

export HOME=$work/home XDG_STATE_HOME=$work/home/state XDG_CONFIG_HOME=$work/home/config
export XDG_DATA_HOME=$work/home/data XDG_CACHE_HOME=$work/home/cache
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=$work/home/gitconfig
mkdir -p "$HOME" "$XDG_CONFIG_HOME/treebox"
printf '[user]\n\tname = B\n\temail = b@example.com\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"
cat >"$work/agent" <<'SH'
#!/bin/sh
settings= prev=
for a in "$@"; do [ "$prev" = --settings ] && settings=$a; prev=$a; done
sh "$(dirname "$settings")/status" idle
exec sleep 600
SH
chmod +x "$work/agent"
printf '{"harnesses": {"claude": {"program": "%s"}}}\n' "$work/agent" >"$XDG_CONFIG_HOME/treebox/config.json"
(
  cd "$work"
  git init -q --bare origin.git
  git init -q seed
  for i in $(seq 200); do echo "$i" >"seed/f$i.txt"; done
  git -C seed add . && git -C seed commit -qm seed && git -C seed push -q ../origin.git main
  git clone -q origin.git repo
)

cd "$work/repo"
PYTHONPATH="$here" python3 - "$bin/git-treebox" "$runs" <<'PY'
import subprocess, sys

from mcp_bench import Server, report, timed

tb, runs = sys.argv[1], int(sys.argv[2])


def run(*args):
    subprocess.run([tb, *args], check=True, capture_output=True)


def box_create(name):
    doc = server.call("box_create", {"name": name, "isolation": "host"})
    assert doc["agent"]["state"] == "ready", doc


server = Server(tb)
times = {"create -d": [], "box_create": [], "git worktree add": []}
for i in range(runs + 2):
    got = {
        "create -d": timed(lambda: run("create", "-d", f"c{i}", "--isolation", "host")),
        "box_create": timed(lambda: box_create(f"m{i}")),
        "git worktree add": timed(lambda: subprocess.run(
            ["git", "worktree", "add", "-q", "-b", f"w{i}", f"../w{i}", "origin/main"],
            check=True, capture_output=True)),
    }
    for leaf in (f"c{i}", f"m{i}"):
        run("rm", "--force", leaf)
    subprocess.run(["git", "worktree", "remove", "--force", f"../w{i}"], check=True)
    if i >= 2:
        for k, v in got.items():
            times[k].append(v)
server.close()
report(f"{runs} interleaved rounds, medians:", times, "create -d")
PY
