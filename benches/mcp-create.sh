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
# Needs: git, tmux, python3.
set -euo pipefail
bin=$(cd "${1:-target/release}" && pwd)
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
python3 - "$bin/git-treebox" "$runs" <<'PY'
import json, statistics, subprocess, sys, time

tb, runs = sys.argv[1], int(sys.argv[2])


class Server:
    def __init__(self):
        self.p = subprocess.Popen([tb, "mcp"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.id = 0
        self.call_raw("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "bench", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def call_raw(self, method, params):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        return json.loads(self.p.stdout.readline())["result"]

    def box_create(self, name):
        r = self.call_raw("tools/call", {"name": "box_create",
                                         "arguments": {"name": name, "isolation": "host"}})
        assert not r.get("isError"), r
        assert r["structuredContent"]["agent"]["state"] == "ready", r
        return r

    def close(self):
        self.p.stdin.close()
        assert self.p.wait() == 0


def run(*args):
    subprocess.run([tb, *args], check=True, capture_output=True)


def timed(f):
    s = time.perf_counter()
    f()
    return (time.perf_counter() - s) * 1000


server = Server()
times = {"create -d": [], "box_create": [], "git worktree add": []}
for i in range(runs + 2):
    got = {
        "create -d": timed(lambda: run("create", "-d", f"c{i}", "--isolation", "host")),
        "box_create": timed(lambda: server.box_create(f"m{i}")),
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
base = statistics.median(times["create -d"])
print(f"{runs} interleaved rounds, medians:")
for k, v in times.items():
    m = statistics.median(v)
    print(f"  {k:<17} {m:8.1f} ms   {m / base:5.2f}x create -d")
PY
