#!/usr/bin/env bash
# What do the bounded status reads (issue 38, points 2-4) cost a normal box? Two builds,
# interleaved, on two identical fixtures (each build keeps its own caches): `list
# --dirty --json` and `git sandbox ls --json` of N host worktree boxes of a repository
# of FILES tracked files in DIRS directories (every third box with an uncommitted
# change, every fifth with an untracked file), PAIRS runs of each in turn, after two
# warm-up runs each. Prints the medians.
#
# Usage: benches/dirty-ab.sh A_DIR B_DIR   (each holds git-treebox and git-sandbox)
# Knobs: N (50), FILES (2000), DIRS (100), PAIRS (20), WORK (fixture dir, a new temp dir),
# ISOLATION (host; docker or podman: container boxes, sandboxed worktrees, each build
# placing their checkouts where it does), BASE_IMAGE (treebox-test-base:1, the local
# image ../shared/scripts/setup-engines makes; the template builds from it offline).
# Needs: git, bash 5 ($EPOCHREALTIME); jq for container boxes.
set -euo pipefail
a=$1 b=$2 n=${N:-50} files=${FILES:-2000} dirs=${DIRS:-100} pairs=${PAIRS:-20}
isolation=${ISOLATION:-host} base=${BASE_IMAGE:-treebox-test-base:1}
work=${WORK:-$(mktemp -d)}
cleanup() {
  # The boxes' containers, then the fixtures (a container box's files belong to the
  # agent's user: the engine removes them with the container's own rm).
  if [ "$isolation" != host ]; then
    for w in "$work/a" "$work/b"; do
      [ -d "$w/repo" ] || continue
      "$isolation" ps -aq --filter "label=org.treebox.repo=$(cd "$w/repo" && pwd -P)" | xargs -r "$isolation" rm -f >/dev/null
    done
    # The image the `bench` template built (each fixture's HOME is its own, the
    # engine's images are not).
    "$isolation" images -q --filter 'reference=treebox-bench:*' | sort -u | xargs -r "$isolation" rmi -f >/dev/null 2>&1 || true
  fi
  [ -n "${WORK:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) * 1000 }'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
env_of() { echo "HOME=$1/home XDG_STATE_HOME=$1/home/state XDG_CONFIG_HOME=$1/home/config GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=$1/home/gitconfig"; }

fixture() { # DIR BIN_DIR
  local w=$1 bin=$2
  mkdir -p "$w/home"
  printf '[user]\n\tname = B\n\temail = b@example.com\n[init]\n\tdefaultBranch = main\n' >"$w/home/gitconfig"
  (
    export $(env_of "$w")
    cd "$w"
    git init -q --bare origin.git
    git init -q seed
    for i in $(seq "$files"); do
      d=seed/d$((i % dirs))
      mkdir -p "$d"
      echo "$i" >"$d/f$i.txt"
    done
    printf 'target/\n*.log\n' >seed/.gitignore
    git -C seed add . && git -C seed commit -qm seed && git -C seed push -q ../origin.git main
    git clone -q origin.git repo
    if [ "$isolation" != host ]; then
      # The template builds from the local base image, without the agents or gh.
      "$bin/git-treebox" template init bench >/dev/null
      t=$XDG_CONFIG_HOME/treebox/templates/bench/container.json
      jq --arg b "$base" '.baseImage = $b | .buildArgs.INSTALL_AGENTS = "0" | .buildArgs.INSTALL_GH = "0"' "$t" >"$t.new" && mv "$t.new" "$t"
      printf '{"template": "bench"}\n' >"$XDG_CONFIG_HOME/treebox/config.json"
    fi
    for i in $(seq "$n"); do
      if [ "$isolation" = host ]; then
        (cd repo && "$bin/git-treebox" create "b$i" --isolation host --no-fetch --no-launch -q >/dev/null)
        bx=repo/.treebox/worktrees/b$i
      else
        bx=$(cd repo && "$bin/git-treebox" create "b$i" --isolation "$isolation" --no-fetch --no-launch --json | jq -r .path)
      fi
      ((i % 3 == 0)) && echo change >>"$bx/d1/f1.txt"
      ((i % 5 == 0)) && echo new >"$bx/new$i.txt"
      mkdir -p "$bx/target/x" && echo o >"$bx/target/x/o"
    done
  )
}

run() { # WORKDIR BIN args…
  local w=$1 bin=$2
  shift 2
  (export $(env_of "$w"); cd "$w/repo"; s=$EPOCHREALTIME; "$bin" "$@" >/dev/null; ms "$s" "$EPOCHREALTIME")
}

echo "making two fixtures of $n boxes in $work…" >&2
fixture "$work/a" "$a"
fixture "$work/b" "$b"
for cmd in "git-treebox list --dirty --json" "git-sandbox ls --json"; do
  set -- $cmd
  bin=$1
  shift
  for _ in 1 2; do run "$work/a" "$a/$bin" "$@" >/dev/null; run "$work/b" "$b/$bin" "$@" >/dev/null; done
  : >"$work/ta"
  : >"$work/tb"
  for _ in $(seq "$pairs"); do
    run "$work/a" "$a/$bin" "$@" >>"$work/ta"; echo >>"$work/ta"
    run "$work/b" "$b/$bin" "$@" >>"$work/tb"; echo >>"$work/tb"
  done
  echo "$cmd: A median $(median <"$work/ta") ms, B median $(median <"$work/tb") ms, load $(cut -d' ' -f1-3 /proc/loadavg)"
done
