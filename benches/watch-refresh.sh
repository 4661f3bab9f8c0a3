#!/usr/bin/env bash
# What does a full refresh of `git treebox watch` (issue 31) cost next to `list`?
# N host worktree boxes, each with one commit of its own and an agent status report,
# every fifth one `waiting`. A full refresh is what `watch --once --json` does: the
# snapshot the live screen's refresher takes every 1.5 s (the same code), i.e. what
# `list --json` reads plus each box's committed diff size (kept by box tip and base
# tip in watch-cache.json) and the needs-me sort. Measured, interleaved, medians of RUNS:
#
#   - `list --json` warm (its caches kept);
#   - `watch --once --json` warm (its caches kept): the ratio to list is the target
#     (issue 31: a full refresh costs no more than list, ratio ≤ 1.10 allowing noise);
#   - the first `watch --once --json` (no watch-cache.json: every diff size read).
#
# Usage: benches/watch-refresh.sh [WORKDIR]   (default: a new temp dir)
# Knobs: N (boxes, 1000), RUNS (15), TREEBOX (the binary, default
#        $CARGO_TARGET_DIR/release/git-treebox, else target/release/…).
# Needs: git, bash 5 ($EPOCHREALTIME).
set -euo pipefail

n=${N:-1000}
runs=${RUNS:-15}
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

if [ ! -d repo ]; then
  g init -q --bare origin.git
  g init -q seed
  for i in $(seq 20); do echo "$i" >"seed/f$i.txt"; done
  g -C seed add . && g -C seed commit -qm seed && g -C seed push -q ../origin.git main
  g clone -q origin.git repo
  echo "making $n boxes…" >&2
  for i in $(seq "$n"); do
    (cd repo && "$treebox" create "b$i" --isolation host --no-fetch --no-launch -q >/dev/null)
    bx=repo/.treebox/worktrees/b$i
    printf 'work %s\nmore\n' "$i" >"$bx/w$i.txt"
    g -C "$bx" add "w$i.txt" && g -C "$bx" commit -qm "work $i"
  done
fi
state=$(ls -d "$XDG_STATE_HOME"/treebox/repos/*)
for i in $(seq "$n"); do
  mkdir -p "$state/boxes/b$i/status"
  if [ $((i % 5)) = 0 ]; then echo waiting; else echo idle; fi >"$state/boxes/b$i/status/state"
done

list() { (cd repo && "$treebox" list --json >/dev/null); }
watch() { (cd repo && "$treebox" watch --once --json >/dev/null); }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
timed() { local s=$EPOCHREALTIME; "$@"; ms "$s" "$EPOCHREALTIME"; }

list
rm -f "$state/watch-cache.json"
first=$(timed watch)
waiting=$(cd repo && "$treebox" watch --once --json | { grep -o '"needsMe": *"waiting"' || true; } | wc -l)
watch
l=() w=()
for _ in $(seq "$runs"); do
  l+=("$(timed list)")
  w+=("$(timed watch)")
done
lm=$(printf '%s\n' "${l[@]}" | median)
wm=$(printf '%s\n' "${w[@]}" | median)
echo "boxes: $n (waiting: $waiting)"
echo "list --json warm (median of $runs): $lm ms"
echo "watch --once --json warm, one full refresh (median of $runs): $wm ms"
echo "ratio watch/list: $(awk -v a="$wm" -v b="$lm" 'BEGIN { printf "%.2f", a / b }')"
echo "first watch --once --json (no watch-cache.json): $first ms"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
