#!/usr/bin/env bash
# What does `landed` (issue 30) cost `list`? 1,000 host worktree boxes, each with one
# commit of its own (so every verdict takes the slow path: ancestry, then the content
# checks, then patch-ids), 100 of them squash-merged on origin's main. Measured:
#
#   - `list --json` warm: every verdict kept in landed-cache.json (median of RUNS);
#   - `list --json` first after a fetch that moved origin/main: every box asked again
#     (ROUNDS rounds, each after a new commit on origin and `git fetch`);
#   - the same first list with the landed cache removed but the list cache kept, and
#     `git worktree list --porcelain` for scale.
#
# Usage: benches/list-landed.sh [WORKDIR]   (default: a new temp dir)
# Knobs: N (boxes, 1000), SQUASHED (100), RUNS (15), ROUNDS (3), TREEBOX (the binary,
#        default $CARGO_TARGET_DIR/release/git-treebox, else target/release/…).
# Needs: git, bash 5 ($EPOCHREALTIME), jq.
set -euo pipefail

n=${N:-1000}
squashed=${SQUASHED:-100}
runs=${RUNS:-15}
rounds=${ROUNDS:-3}
src=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
treebox=${TREEBOX:-${CARGO_TARGET_DIR:-$src/target}/release/git-treebox}
work=${1:-$(mktemp -d)}
mkdir -p "$work"
cd "$work"
export HOME=$work/home XDG_STATE_HOME=$work/home/state XDG_CONFIG_HOME=$work/home/config
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=$work/home/gitconfig
mkdir -p "$HOME"
printf '[user]\n\tname = B\n\temail = b@example.com\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"
g() { git "$@" >/dev/null; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) * 1000 }'; }

g init -q --bare origin.git
g init -q seed
for i in $(seq 20); do echo "$i" >"seed/f$i.txt"; done
g -C seed add . && g -C seed commit -qm seed && g -C seed push -q ../origin.git main
g clone -q origin.git repo && g clone -q origin.git forge
echo "making $n boxes…" >&2
t0=$EPOCHREALTIME
for i in $(seq "$n"); do
  (cd repo && "$treebox" create "b$i" --isolation host --no-fetch --no-launch -q >/dev/null)
  bx=repo/.treebox/worktrees/b$i
  echo "work $i" >"$bx/w$i.txt"
  g -C "$bx" add "w$i.txt" && g -C "$bx" commit -qm "work $i"
done
echo "boxes made in $(ms "$t0" "$EPOCHREALTIME") ms" >&2
# The forge squash-merges the first $squashed boxes' work onto main.
for i in $(seq "$squashed"); do echo "work $i" >"forge/w$i.txt"; done
g -C forge add . && g -C forge commit -qm "squash $squashed boxes" && g -C forge push -q origin main
g -C repo fetch -q origin

list() { (cd repo && "$treebox" list --json >/dev/null); }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
time_list() { local s=$EPOCHREALTIME; list; ms "$s" "$EPOCHREALTIME"; }

first=$(time_list)
landed=$(cd repo && "$treebox" list --json | jq '[.boxes[] | select(.landed == true)] | length')
list
warm=$(for _ in $(seq "$runs"); do time_list; echo; done | median)
wt=$(for _ in $(seq "$runs"); do s=$EPOCHREALTIME; git -C repo worktree list --porcelain >/dev/null; ms "$s" "$EPOCHREALTIME"; echo; done | median)
after=()
for r in $(seq "$rounds"); do
  echo "round $r" >"forge/r$r.txt" && g -C forge add . && g -C forge commit -qm "r$r" && g -C forge push -q origin main
  g -C repo fetch -q origin
  after+=("$(time_list)")
  list
done
state=$(ls -d "$XDG_STATE_HOME"/treebox/repos/*)
rm -f "$state/landed-cache.json"
no_landed_cache=$(time_list)
list
echo "boxes: $n, landed: $landed (squash-merged: $squashed)"
echo "first list (no caches at all): $first ms"
echo "list --json warm (median of $runs): $warm ms"
echo "git worktree list --porcelain (median of $runs): $wt ms"
echo "first list after a fetch that moved origin/main: ${after[*]} ms"
echo "first list with the landed cache removed (list cache kept): $no_landed_cache ms"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
