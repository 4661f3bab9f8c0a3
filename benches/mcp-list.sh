#!/usr/bin/env bash
# What does a lead agent pay for `box_list` over `git treebox mcp`, against a script's
# `git treebox list --json` (issue 40: within 1.2x)? On one fixture of N host worktree
# boxes, interleaved, RUNS rounds after two warm-up rounds, each round timing:
#   list --json  a process of its own, as a script runs it;
#   box_list     one tools/call on a server already running (what the lead agent pays
#                per call: its client starts the server once);
#   cold         a server started, initialised, asked box_list once, and closed.
# Prints the medians and the ratios to list --json. Checks once that box_list's
# document is list --json's.
#
# Usage: benches/mcp-list.sh [BIN_DIR]   (holds git-treebox; default target/release)
# Knobs: N (100), RUNS (21), WORK (fixture dir, a new temp dir, removed at the end).
# Needs: git, python3 (and benches/mcp_bench.py beside it).
set -euo pipefail
bin=$(cd "${1:-target/release}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
n=${N:-100} runs=${RUNS:-21}
work=${WORK:-$(mktemp -d)}
trap '[ -n "${WORK:-}" ] || rm -rf "$work"' EXIT

export HOME=$work/home XDG_STATE_HOME=$work/home/state XDG_CONFIG_HOME=$work/home/config
export XDG_DATA_HOME=$work/home/data XDG_CACHE_HOME=$work/home/cache
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=$work/home/gitconfig
mkdir -p "$HOME"
printf '[user]\n\tname = B\n\temail = b@example.com\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"
echo "making $n host boxes in $work…" >&2
(
  cd "$work"
  git init -q --bare origin.git
  git init -q seed
  echo seed >seed/README.md
  git -C seed add . && git -C seed commit -qm seed && git -C seed push -q ../origin.git main
  git clone -q origin.git repo
  cd repo
  for i in $(seq "$n"); do
    "$bin/git-treebox" create "b$i" --isolation host --no-fetch --no-launch -q >/dev/null 2>&1
    # Every third box has a commit of its own.
    if ((i % 3 == 0)); then
      echo "$i" >".treebox/worktrees/b$i/w.txt"
      git -C ".treebox/worktrees/b$i" add w.txt
      git -C ".treebox/worktrees/b$i" commit -qm "work $i"
    fi
  done
)

cd "$work/repo"
PYTHONPATH="$here" python3 - "$bin/git-treebox" "$runs" <<'PY'
import json, subprocess, sys

from mcp_bench import Server, report, timed

tb, runs = sys.argv[1], int(sys.argv[2])


def cli():
    return json.loads(subprocess.run([tb, "list", "--json"], check=True,
                                     capture_output=True).stdout)


def cold():
    s = Server(tb)
    s.call("box_list", {})
    s.close()


warm = Server(tb)
assert warm.call("box_list", {}) == cli(), "box_list is not list --json's document"
boxes = len(cli()["boxes"])
times = {"list --json": [], "box_list": [], "cold": []}
for i in range(runs + 2):
    got = {"list --json": timed(cli), "box_list": timed(lambda: warm.call("box_list", {})),
           "cold": timed(cold)}
    if i >= 2:
        for k, v in got.items():
            times[k].append(v)
warm.close()
report(f"{boxes} boxes, {runs} interleaved rounds, medians:", times, "list --json")
PY
