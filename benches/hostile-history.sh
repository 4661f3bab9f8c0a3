#!/usr/bin/env bash
# A box with 1.2 M empty commits on its branch and a box whose tip is a tree of 4 M
# files made of 22 identical subtrees (host worktree boxes: the reads are the same
# host code as for container boxes), then `list --json` and `watch --once --json` of
# each binary given, cold (landed and watch caches removed) and warm, then `diff
# --json` and `land` (a refusal: nothing changes) of the normal box and both hostile
# ones, with wall time and peak RSS (GNU time), each under `timeout 120`.
# Usage: TB=<binary that makes the boxes> benches/hostile-history.sh WORKDIR BIN...
# Needs: git, jq, awk, GNU time.
set -euo pipefail
w=${1:-$(mktemp -d)}; shift || true
mkdir -p "$w"; cd "$w"
export HOME=$w/home XDG_STATE_HOME=$w/home/state XDG_CONFIG_HOME=$w/home/config GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=$w/home/gitconfig
mkdir -p "$HOME"
printf '[user]\n\tname = B\n\temail = b@example.com\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"
if [ ! -d repo ]; then
  git init -q repo && cd repo && echo a >a && git add a && git commit -qm a
  "$TB" create normal --isolation host --no-launch >/dev/null
  "$TB" create long --isolation host --no-launch >/dev/null
  "$TB" create bomb --isolation host --no-launch >/dev/null
  lb=$(git -C "$("$TB" list --json | jq -r '.boxes[]|select(.name=="long").path')" symbolic-ref HEAD)
  awk -v b="$lb" -v from="$(git rev-parse main)" 'BEGIN{for(i=0;i<1200000;i++){printf "commit %s\ncommitter a <a@b> %d +0000\ndata 0\n", b, 1700000000+i; if(i==0) printf "from %s\n", from; printf "\n"}}' | git fast-import --quiet --force
  bp=$("$TB" list --json | jq -r '.boxes[]|select(.name=="bomb").path')
  ( cd "$bp" && t=$(echo x | git hash-object -w --stdin | xargs printf '100644 blob %s\tf\n' | git mktree) &&
    for i in $(seq 22); do t=$(printf '040000 tree %s\ta\n040000 tree %s\tb\n' $t $t | git mktree); done &&
    top=$(git ls-tree HEAD | { cat; printf '040000 tree %s\tbomb\n' $t; } | git mktree) &&
    git update-ref HEAD "$(git commit-tree $top -p HEAD -m bomb)" )
  cd ..
fi
cd repo
for bin in "$@"; do
  for cmd in "list --json" "watch --once --json"; do
    for round in cold warm; do
      find "$XDG_STATE_HOME" -name 'landed-cache.json' -o -name 'watch-cache.json' | { [ $round = cold ] && xargs -r rm -f || cat >/dev/null; }
      /usr/bin/time -f "%e s %M KiB" -o /tmp/hh-t timeout 120 "$bin" $cmd >/dev/null 2>&1 || echo "(exit $?)"
      echo "$bin  $cmd  $round: $(tail -1 /tmp/hh-t)"
    done
  done
done
for bin in "$@"; do
  for cmd in "diff normal --json" "diff long --json" "diff bomb --json" "land long" "land bomb"; do
    /usr/bin/time -f "%e s %M KiB" -o /tmp/hh-t timeout 120 "$bin" $cmd >/dev/null 2>&1 || echo "(exit $?)"
    echo "$bin  $cmd: $(tail -1 /tmp/hh-t)"
  done
done
