#!/usr/bin/env bash
# One box's oversized git file against everything that lists boxes (SPEC §8.8): a
# dozen boxes (6 worktrees, 6 clones) in a scratch repository, then a 13th clone box
# whose branch is only packed and whose `packed-refs` is a sparse 4 GiB file (a valid
# start, then a hole: it costs the box no disk). Prints wall time and peak RSS (GNU
# time's %M) of `list` and `list --dirty` without and with that box, then of
# `git sandbox ls` and `doctor` with it, and the rows of `list` showing it broken.
#
# Usage: benches/oversized-box.sh BINDIR
#   BINDIR  where git-treebox, git-sandbox and git-treebox-guard are (e.g.
#           target/release). REPS (default 5) runs of each command; each run is cut
#           off after 100 s (an unfixed build takes seconds and gigabytes).
# Needs: git, GNU time (/usr/bin/time), truncate. Everything it makes is under a
# temp dir, removed at the end (HOME and XDG dirs too: your boxes are not touched).
set -euo pipefail

bin=$(cd "$1" && pwd)
reps=${REPS:-5}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
export HOME=$t/home XDG_CONFIG_HOME=$t/home/.config XDG_STATE_HOME=$t/home/.state \
  XDG_CACHE_HOME=$t/home/.cache GIT_CONFIG_GLOBAL=$t/gitconfig GIT_CONFIG_NOSYSTEM=1 \
  TREEBOX_SEED=42 LC_ALL=C
mkdir -p "$HOME"
printf '[user]\n\tname = t\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"
git init -q --bare "$t/origin.git"
git clone -q "$t/origin.git" "$t/repo" 2>/dev/null
cd "$t/repo"
echo hi >README.md
git add README.md
git commit -qm init
git push -q origin main
for i in 1 2 3 4 5 6; do
  "$bin/git-treebox" create "wt$i" --no-launch >/dev/null 2>&1
  "$bin/git-treebox" create "cl$i" --git clone --no-launch >/dev/null 2>&1
done
measure() { # LABEL PROGRAM ARGS...
  local label=$1
  shift
  for _ in $(seq "$reps"); do
    /usr/bin/time -f "$label: %e s, %M KiB" timeout 100 "$@" 2>&1 >/dev/null | tail -1
  done
}
measure "12 boxes: list" "$bin/git-treebox" list
measure "12 boxes: list --dirty" "$bin/git-treebox" list --dirty
"$bin/git-treebox" create big --git clone --no-launch >/dev/null 2>&1
git -C .treebox/worktrees/big pack-refs --all
truncate -s 4G .treebox/worktrees/big/.git/packed-refs
measure "12 boxes + big: list" "$bin/git-treebox" list
measure "12 boxes + big: list --dirty" "$bin/git-treebox" list --dirty
measure "12 boxes + big: git sandbox ls" "$bin/git-sandbox" ls
measure "12 boxes + big: doctor" "$bin/git-treebox" doctor
"$bin/git-treebox" list | grep -E '^(NAME|big|cl1|wt1) '
