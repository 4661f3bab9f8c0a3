#!/usr/bin/env bash
# What do boxes on other machines cost from the laptop (issue 41's budgets)?
#   list       `git treebox list` here, with this machine's BOXES boxes and two
#              machines' BOXES each, over warm shared SSH connections — against the
#              slowest machine's own `list` plus one SSH round trip (budget 1.5x);
#   create     `git treebox create NAME --on m1` of a box whose base moved (so a
#              bundle travels), its agent started there — against that machine's own
#              `create -d` plus the push (the bundle made and sent over the same
#              connection) (budget 1.3x).
# The two machines are two accounts of this machine behind a real sshd on loopback
# (their own HOME, treebox state, clones), as tests/it/machines.rs sets them up; the
# agents are a stand-in that reports itself ready at once, so the figures are
# treebox's and ssh's, not an agent's start-up. A machine's own commands run as that
# account through `runuser` (its overhead, `runuser true`, is printed beside them).
# Interleaved, RUNS rounds after two warm-up rounds; medians.
#
# Usage: sudo benches/machines.sh [BIN_DIR]   (holds git-treebox; default target/release)
# Knobs: RUNS (15), BOXES (50).
# Needs: root (two accounts), /usr/sbin/sshd (openssh-server), ssh, git, tmux, python3.
set -euo pipefail
bin=$(cd "${1:-target/release}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
runs=${RUNS:-15}
boxes=${BOXES:-50}
[ "$(id -u)" = 0 ] || { echo "needs root (it makes two accounts)" >&2; exit 2; }
work=$(mktemp -d /tmp/tbm.XXXXXX)
chmod 755 "$work"
users=(tbbench1$$ tbbench2$$)
cleanup() {
  for sock in "$work"/run/treebox-ssh/*; do
    [ -S "$sock" ] && ssh -S "$sock" -O exit x 2>/dev/null || true
  done
  [ -f "$work/sshd.pid" ] && kill "$(cat "$work/sshd.pid")" 2>/dev/null || true
  tmux -S "$work/home/state/treebox/tmux.sock" kill-server 2>/dev/null || true
  for u in "${users[@]}"; do
    pkill -KILL -u "$u" 2>/dev/null || true
    userdel -r "$u" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# This machine, "the laptop".
export HOME=$work/home XDG_STATE_HOME=$work/home/state XDG_CONFIG_HOME=$work/home/config
export XDG_DATA_HOME=$work/home/data XDG_CACHE_HOME=$work/home/cache XDG_RUNTIME_DIR=$work/run
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=$work/home/gitconfig
mkdir -p "$HOME" "$XDG_CONFIG_HOME/treebox" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
printf '[user]\n\tname = B\n\temail = b@example.com\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"
(
  cd "$work"
  git init -q --bare origin.git
  git init -q seed
  for i in $(seq 200); do echo "$i" >"seed/f$i.txt"; done
  git -C seed add . && git -C seed commit -qm seed && git -C seed push -q ../origin.git main
  git clone -q origin.git repo
  chmod -R a+rX origin.git
)

# The machines: two accounts, one sshd, a client config naming them m1 and m2.
ssh-keygen -q -t ed25519 -N '' -f "$work/client"
ssh-keygen -q -t ed25519 -N '' -f "$work/host"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
agent='#!/bin/sh
settings= prev=
for a in "$@"; do [ "$prev" = --settings ] && settings=$a; prev=$a; done
sh "$(dirname "$settings")/status" idle
exec sleep 600'
: >"$work/ssh_config"
n=0
for u in "${users[@]}"; do
  n=$((n + 1))
  useradd -m -s /bin/sh "$u"
  usermod -p '*' "$u"
  h=$(getent passwd "$u" | cut -d: -f6)
  mkdir -p "$h/.ssh" "$h/bin" "$h/.config/treebox"
  cp "$work/client.pub" "$h/.ssh/authorized_keys"
  cp "$bin/git-treebox" "$bin/git-sandbox" "$bin/git-treebox-guard" "$h/bin/"
  printf '%s\n' "$agent" >"$h/bin/agent" && chmod +x "$h/bin/agent"
  printf '{"harnesses": {"claude": {"program": "%s/bin/agent"}}}\n' "$h" >"$h/.config/treebox/config.json"
  printf '[user]\n\tname = M\n\temail = m@example.com\n[safe]\n\tdirectory = *\n' >"$h/.gitconfig"
  chown -R "$u" "$h"
  chmod 700 "$h/.ssh"
  printf 'Host m%s\n  HostName 127.0.0.1\n  Port %s\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n' \
    "$n" "$port" "$u" "$work/client" "$work/known_hosts" >>"$work/ssh_config"
done
printf '[127.0.0.1]:%s %s\n' "$port" "$(cat "$work/host.pub")" >"$work/known_hosts"
mkdir -p /run/sshd
printf 'Port %s\nListenAddress 127.0.0.1\nHostKey %s\nPidFile %s\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nAllowUsers %s\nPermitRootLogin no\n' \
  "$port" "$work/host" "$work/sshd.pid" "${users[*]}" >"$work/sshd_config"
/usr/sbin/sshd -f "$work/sshd_config" -E "$work/sshd.log"
for _ in $(seq 100); do [ -f "$work/sshd.pid" ] && break; sleep 0.05; done
h1=$(getent passwd "${users[0]}" | cut -d: -f6)
h2=$(getent passwd "${users[1]}" | cut -d: -f6)
printf '{"harnesses": {"claude": {"program": "%s"}}, "machines": {"m1": {"ssh": "m1", "sshCommand": "ssh -F %s", "path": "%s/bin"}, "m2": {"ssh": "m2", "sshCommand": "ssh -F %s", "path": "%s/bin"}}}\n' \
  "$h1/bin/agent" "$work/ssh_config" "$h1" "$work/ssh_config" "$h2" >"$XDG_CONFIG_HOME/treebox/config.json"

cd "$work/repo"
# BOXES boxes here, and on each machine: the first made from here (the mirror seeded,
# its clone made), the rest by that machine's own treebox in its clone.
for i in $(seq "$boxes"); do "$bin/git-treebox" create "here$i" --no-launch --no-fetch --isolation host >/dev/null; done
for m in 1 2; do
  u=${users[$((m - 1))]}
  h=$(getent passwd "$u" | cut -d: -f6)
  "$bin/git-treebox" create "m${m}b1" --on "m$m" --isolation host >/dev/null 2>&1
  clone=$(ls -d "$h"/.local/share/treebox/machines/*/repo)
  for i in $(seq 2 "$boxes"); do
    (cd "$clone" && runuser -u "$u" -- env -i HOME="$h" PATH="$PATH" USER="$u" "$h/bin/git-treebox" create "m${m}b$i" --no-launch --no-fetch --isolation host >/dev/null)
  done
done
c1=$(ls -d "$h1"/.local/share/treebox/machines/*/repo)
c2=$(ls -d "$h2"/.local/share/treebox/machines/*/repo)

PYTHONPATH="$here" python3 - "$bin/git-treebox" "$runs" "$work" "${users[0]}" "$h1" "$c1" "${users[1]}" "$h2" "$c2" <<'PY'
import json, os, statistics, subprocess, sys

from mcp_bench import report, timed

tb, runs, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
machines = [(sys.argv[4], sys.argv[5], sys.argv[6]), (sys.argv[7], sys.argv[8], sys.argv[9])]
ssh = ["ssh", "-F", f"{work}/ssh_config", "-o", "ControlMaster=auto", "-o", "ControlPersist=60",
       "-o", f"ControlPath={work}/run/treebox-ssh/%C"]


def ok(*cmd, **kw):
    subprocess.run(cmd, check=True, capture_output=True, **kw)


def own(m, *args):
    """`git-treebox ARGS` as machine m's account, in its clone."""
    user, home, clone = machines[m]
    ok("runuser", "-u", user, "--", "env", "-i", f"HOME={home}", f"PATH={os.environ['PATH']}",
       f"USER={user}", f"{home}/bin/git-treebox", *args, cwd=clone)


listed = json.loads(subprocess.run([tb, "list", "--json"], check=True, capture_output=True).stdout)
count = len(listed["boxes"])
far = sum(1 for b in listed["boxes"] if b.get("machine"))
assert far == count - count // 3 and count >= 3, (count, far)

# list: here with both machines, here alone, one machine's answer as the laptop asks
# for it, each machine's own, one round trip, runuser alone.
alone = f"{work}/alone"
os.makedirs(f"{alone}/treebox", exist_ok=True)
with open(f"{os.environ['XDG_CONFIG_HOME']}/treebox/config.json") as f:
    cfg = json.load(f)
machines_cfg = cfg.pop("machines")
with open(f"{alone}/treebox/config.json", "w") as f:
    json.dump(cfg, f)
one = f"{work}/one"
os.makedirs(f"{one}/treebox", exist_ok=True)
with open(f"{one}/treebox/config.json", "w") as f:
    json.dump({**cfg, "machines": {"m1": machines_cfg["m1"]}}, f)
key = os.path.basename(os.path.dirname(machines[0][2]))
request = json.dumps({"op": "list", "key": key}).encode() + b"\n"
times = {"list here + 2 machines": [], "list here, no machines": [], "list here + m1 alone": [],
         "m1's answer (ssh + its entry)": [],
         "m1's own list": [], "m2's own list": [], "ssh round trip (warm)": [], "runuser true": []}
for i in range(runs + 2):
    got = {
        "list here + 2 machines": timed(lambda: ok(tb, "list")),
        "list here, no machines": timed(lambda: ok(tb, "list", env={**os.environ, "XDG_CONFIG_HOME": alone})),
        "list here + m1 alone": timed(lambda: ok(tb, "list", env={**os.environ, "XDG_CONFIG_HOME": one})),
        "m1's answer (ssh + its entry)": timed(lambda: ok(*ssh, "m1", f"exec {machines[0][1]}/bin/git-treebox __treebox-remote", input=request)),
        "m1's own list": timed(lambda: own(0, "list")),
        "m2's own list": timed(lambda: own(1, "list")),
        "ssh round trip (warm)": timed(lambda: ok(*ssh, "m1", "true")),
        "runuser true": timed(lambda: ok("runuser", "-u", machines[0][0], "--", "true")),
    }
    if i >= 2:
        for k, v in got.items():
            times[k].append(v)
print(f"{count} boxes: {count - far} here, {far // 2} on each of 2 machines")
report(f"{runs} interleaved rounds, medians:", times, "list here + 2 machines")
med = {k: statistics.median(v) for k, v in times.items()}
# A machine's own list without runuser's own cost (the budget's "machine's own list").
own_list = max(med["m1's own list"], med["m2's own list"]) - med["runuser true"]
budget = own_list + med["ssh round trip (warm)"]
print(f"  list across machines / (slowest machine's own list, less runuser, + one round trip): "
      f"{med['list here + 2 machines'] / budget:.2f}x (budget 1.5x)")

# create --on: origin moves each round, so a bundle travels.
times = {"create --on m1": [], "m1's own create -d": [], "push (bundle made and sent)": []}
for i in range(runs + 2):
    ok("git", "-C", f"{work}/seed", "commit", "-q", "--allow-empty", "-m", f"round {i}")
    ok("git", "-C", f"{work}/seed", "push", "-q", f"{work}/origin.git", "main")
    ok("git", "fetch", "-q", "origin")
    def push():
        ok("git", "bundle", "create", "-q", f"{work}/round.bundle", "origin/main", "^origin/main~1")
        with open(f"{work}/round.bundle", "rb") as f:
            ok(*ssh, "m1", "cat >/dev/null", stdin=f)
    got = {
        "push (bundle made and sent)": timed(push),
        "create --on m1": timed(lambda: ok(tb, "create", f"on{i}", "--on", "m1", "--isolation", "host")),
        "m1's own create -d": timed(lambda: own(0, "create", "-d", f"own{i}", "--isolation", "host")),
    }
    ok(tb, "rm", "--force", f"on{i}")
    own(0, "rm", "--force", f"own{i}")
    if i >= 2:
        for k, v in got.items():
            times[k].append(v)
report(f"{runs} interleaved rounds, medians:", times, "create --on m1")
med = {k: statistics.median(v) for k, v in times.items()}
budget = med["m1's own create -d"] + med["push (bundle made and sent)"]
print(f"  create --on / (the machine's own create -d + the push): "
      f"{med['create --on m1'] / budget:.2f}x (budget 1.3x)")
PY
