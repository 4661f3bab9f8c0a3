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
# Needs: git, python3.
set -euo pipefail
bin=$(cd "${1:-target/release}" && pwd)
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
python3 - "$bin/git-treebox" "$runs" <<'PY'
import json, statistics, subprocess, sys, time

tb, runs = sys.argv[1], int(sys.argv[2])
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "bench", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class Server:
    def __init__(self):
        self.p = subprocess.Popen([tb, "mcp"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.id = 0
        self.send(INIT)
        self.recv()
        self.send(INITIALIZED)

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def recv(self):
        return json.loads(self.p.stdout.readline())

    def box_list(self):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": "tools/call",
                   "params": {"name": "box_list", "arguments": {}}})
        r = self.recv()["result"]
        assert not r.get("isError"), r
        return r["structuredContent"]

    def close(self):
        self.p.stdin.close()
        assert self.p.wait() == 0


def cli():
    return json.loads(subprocess.run([tb, "list", "--json"], check=True,
                                     capture_output=True).stdout)


def timed(f):
    s = time.perf_counter()
    f()
    return (time.perf_counter() - s) * 1000


def cold():
    s = Server()
    s.box_list()
    s.close()


warm = Server()
assert warm.box_list() == cli(), "box_list is not list --json's document"
boxes = len(cli()["boxes"])
times = {"list --json": [], "box_list": [], "cold": []}
for i in range(runs + 2):
    got = {"list --json": timed(cli), "box_list": timed(warm.box_list), "cold": timed(cold)}
    if i >= 2:
        for k, v in got.items():
            times[k].append(v)
warm.close()
base = statistics.median(times["list --json"])
print(f"{boxes} boxes, {runs} interleaved rounds, medians:")
for k, v in times.items():
    m = statistics.median(v)
    print(f"  {k:<12} {m:8.1f} ms   {m / base:5.2f}x list --json")
PY
