#!/usr/bin/env bash
# The container runner's steps, per engine, against what the engine itself costs:
#
#   create   git treebox create NAME --no-launch   vs  ENGINE run -d --init IMAGE sleep infinity
#   enter    git treebox enter NAME --print        (a running box: refresh keys, credentials)
#   run      git sandbox run NAME -- true          vs  ENGINE exec CONTAINER true
#   launch   ENGINE exec -u 0:0 C sh -c LAUNCHER … true  vs  ENGINE exec C true
#            (the launcher alone: read the env and keys files, drop to the agent)
#
# Usage: benches/container-steps.sh [ROUNDS]   (default 9; medians in ms)
# Needs the local image treebox-test-base:1 (../shared/scripts/setup-engines) and a
# built treebox (TREEBOX_BIN, default target/release). Everything it makes — a temp
# HOME and repository, boxes, containers, one image tag per engine — is removed at the
# end, also on failure.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-9}
bin=${TREEBOX_BIN:-$here/target/release}
[ -x "$bin/git-treebox" ] || { echo "build first: cargo build --release (or set TREEBOX_BIN)" >&2; exit 1; }
work=$(mktemp -d /tmp/treebox-steps.XXXXXX)
export HOME=$work/home PATH=$bin:$PATH XDG_CONFIG_HOME=$work/home/.config XDG_STATE_HOME=$work/home/.local/state
mkdir -p "$HOME"
git config --global user.name bench && git config --global user.email bench@example.invalid
cleanup() {
  if [ -d "$work/repo" ]; then
    for b in $(cd "$work/repo" && git treebox list --json 2>/dev/null \
      | python3 -c 'import json,sys; [print(b["name"]) for b in json.load(sys.stdin)["boxes"]]' 2>/dev/null); do
      (cd "$work/repo" && git treebox teardown --force "$b" >/dev/null 2>&1) || true
    done
  fi
  for e in docker podman; do
    command -v "$e" >/dev/null || continue
    ids=$("$e" ps -aq --filter "label=org.treebox.repo=$work/repo" 2>/dev/null || true)
    [ -n "$ids" ] && "$e" rm -f $ids >/dev/null 2>&1 || true
    ids=$("$e" ps -aq --filter "label=org.treebox.steps=$work" 2>/dev/null || true)
    [ -n "$ids" ] && "$e" rm -f $ids >/dev/null 2>&1 || true
    for img in $("$e" images --format '{{.Repository}}:{{.Tag}}' | grep '^\(localhost/\)\?treebox-test:' || true); do
      "$e" image inspect --format '{{index .Config.Labels "org.treebox.steps"}}' "$img" 2>/dev/null | grep -qx "$work" \
        && "$e" image rm -f "$img" >/dev/null 2>&1 || true
    done
  done
  rm -rf "$work"
}
trap cleanup EXIT

cd "$work" && git init -q --bare origin.git && git clone -q origin.git repo 2>/dev/null && cd repo
echo hi > a && git add a && git commit -qm init && git push -q origin HEAD:main && git remote set-head origin main 2>/dev/null || true
git treebox template init test >/dev/null
tdir=$XDG_CONFIG_HOME/treebox/templates/test
python3 - "$tdir" "$work" <<'PY'
import json, sys
d, work = sys.argv[1], sys.argv[2]
j = json.load(open(d + "/container.json"))
j["baseImage"] = "treebox-test-base:1"; j["buildArgs"]["INSTALL_AGENTS"] = "0"
json.dump(j, open(d + "/container.json", "w"))
open(d + "/Dockerfile", "a").write('\nLABEL org.treebox.steps="%s"\n' % work)
PY

ms() { local s=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
row() { printf '| %-8s | %-52s | %7s ms |\n' "$1" "$2" "$3"; }
launcher=$(sed -n '/^const LAUNCHER: &str = r#"/,/"#;$/p' "$here/src/runner/oci/launch.rs" \
  | sed '1s/^const LAUNCHER: &str = r#"//; $s/"#;$//')

echo "container steps: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds"
for e in docker podman; do
  "$e" image inspect treebox-test-base:1 >/dev/null 2>&1 || { echo "$e: no treebox-test-base:1; skipped"; continue; }
  echo "{\"template\":\"test\",\"isolation\":\"$e\"}" > "$XDG_CONFIG_HOME/treebox/config.json"
  git treebox create warm-$e --no-launch >/dev/null 2>&1   # builds the image once
  img=$(python3 -c "import json,glob;print(json.load(open(glob.glob('$XDG_STATE_HOME/treebox/repos/*/boxes/warm-$e/record.json')[0]))['container']['image'])")
  c=$(python3 -c "import json,glob;print(json.load(open(glob.glob('$XDG_STATE_HOME/treebox/repos/*/boxes/warm-$e/record.json')[0]))['container']['name'])")
  echo; echo "### $e"; echo
  echo "| step     | command                                              |  median |"
  echo "|----------|------------------------------------------------------|---------|"
  raw=(); ours=(); for i in $(seq "$rounds"); do
    raw+=("$(ms "$e" run -d --init --label "org.treebox.steps=$work" "$img" sleep infinity)")
    ours+=("$(ms git treebox create "c$e$i" --no-launch)")
  done
  row create "$e run -d --init IMAGE sleep infinity (raw)" "$(printf '%s\n' "${raw[@]}" | median)"
  row create "git treebox create NAME --no-launch" "$(printf '%s\n' "${ours[@]}" | median)"
  ent=(); for i in $(seq "$rounds"); do ent+=("$(ms git treebox enter "c${e}1" --print)"); done
  row enter "git treebox enter NAME --print (running)" "$(printf '%s\n' "${ent[@]}" | median)"
  raw=(); ours=(); lau=(); for i in $(seq "$rounds"); do
    raw+=("$(ms "$e" exec "$c" true)")
    lau+=("$(ms "$e" exec -u 0:0 "$c" /bin/sh -c "$launcher" treebox-launch 1000 1000 /home/agent -- true)")
    ours+=("$(ms git sandbox run "warm-$e" -- true)")
  done
  row run "$e exec CONTAINER true (raw)" "$(printf '%s\n' "${raw[@]}" | median)"
  row launch "$e exec -u 0:0 CONTAINER sh -c LAUNCHER … true" "$(printf '%s\n' "${lau[@]}" | median)"
  row run "git sandbox run NAME -- true" "$(printf '%s\n' "${ours[@]}" | median)"
done
