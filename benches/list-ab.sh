#!/usr/bin/env bash
# Warm `list --json` of two builds, interleaved: binary A on workdir WA, binary B on
# workdir WB (two `benches/list-landed.sh` workdirs; each keeps its own caches, since a
# cache written by another build is not used), one run of each in turn, PAIRS times.
# Usage: benches/list-ab.sh WA A WB B   (PAIRS=40)
set -euo pipefail
wa=$1 a=$2 wb=$3 b=$4 pairs=${PAIRS:-40}
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) * 1000 }'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
run() { local w=$1 bin=$2; ( export HOME=$w/home XDG_STATE_HOME=$w/home/state XDG_CONFIG_HOME=$w/home/config GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=$w/home/gitconfig; cd "$w/repo"; s=$EPOCHREALTIME; "$bin" list --json >/dev/null; ms "$s" "$EPOCHREALTIME" ); }
wt() { local w=$1; ( cd "$w/repo"; s=$EPOCHREALTIME; git worktree list --porcelain >/dev/null; ms "$s" "$EPOCHREALTIME" ); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
run "$wa" "$a" >/dev/null; run "$wa" "$a" >/dev/null; run "$wb" "$b" >/dev/null; run "$wb" "$b" >/dev/null
: >"$tmp/a"; : >"$tmp/b"; : >"$tmp/w"
for _ in $(seq "$pairs"); do run "$wa" "$a" >>"$tmp/a"; echo >>"$tmp/a"; run "$wb" "$b" >>"$tmp/b"; echo >>"$tmp/b"; wt "$wb" >>"$tmp/w"; echo >>"$tmp/w"; done
echo "A median $(median <"$tmp/a") ms, B median $(median <"$tmp/b") ms, git worktree list (B's repo) $(median <"$tmp/w") ms, load $(cut -d' ' -f1-3 /proc/loadavg)"
