#!/usr/bin/env bash
# What a block of ports costs container boxes (issue 42), docker:
#
#   list     `git treebox list` (warm) of BOXES container boxes with a block of 3 ports
#            each, against the same of BOXES boxes without ports, in two repositories of
#            one run, interleaved (budget: 1.2x); and `list --ports` of the first (which
#            ports listen: each running container's socket tables read)
#   create   `create NAME --no-launch` of one box with a block vs one without (medians
#            over the boxes made)
#   proxies  docker-proxy processes and their memory (RSS) with the blocks published
#
# Usage: benches/ports.sh [ROUNDS]   (default 15; medians in ms)   Knobs: BOXES (50).
# Needs the local image treebox-test-base:1 (../shared/scripts/setup-engines) and a
# built treebox (TREEBOX_BIN, default target/release). Everything it makes — a temp
# HOME and two repositories, their boxes and containers, one image tag — is removed at
# the end, also on failure.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-15}
boxes=${BOXES:-50}
bin=${TREEBOX_BIN:-$here/target/release}
[ -x "$bin/git-treebox" ] || { echo "build first: cargo build --release (or set TREEBOX_BIN)" >&2; exit 1; }
work=$(mktemp -d /tmp/treebox-ports.XXXXXX)
export HOME=$work/home PATH=$bin:$PATH XDG_CONFIG_HOME=$work/home/.config XDG_STATE_HOME=$work/home/.local/state
export XDG_DATA_HOME=$work/home/.local/share
mkdir -p "$HOME"
git config --global user.name bench && git config --global user.email bench@example.invalid
cleanup() {
  for r in with without; do
    [ -d "$work/$r" ] || continue
    for b in $(cd "$work/$r" && git treebox list --json 2>/dev/null \
      | python3 -c 'import json,sys; [print(b["name"]) for b in json.load(sys.stdin)["boxes"]]' 2>/dev/null); do
      (cd "$work/$r" && git treebox teardown --force "$b" >/dev/null 2>&1) || true
    done
    ids=$(docker ps -aq --filter "label=org.treebox.repo=$work/$r" 2>/dev/null || true)
    [ -n "$ids" ] && docker rm -f $ids >/dev/null 2>&1 || true
  done
  for img in $(docker images --format '{{.Repository}}:{{.Tag}}' | grep '^treebox-test:' || true); do
    docker image inspect --format '{{index .Config.Labels "org.treebox.ports-bench"}}' "$img" 2>/dev/null | grep -qx "$work" \
      && docker image rm -f "$img" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

cd "$work" && git init -q --bare origin.git
git clone -q origin.git seed 2>/dev/null
(cd seed && echo hi > a && git add a && git commit -qm init && git push -q origin HEAD:main)
git clone -q origin.git with && git clone -q origin.git without
git -C with treebox template init test >/dev/null
tdir=$XDG_CONFIG_HOME/treebox/templates/test
python3 - "$tdir" "$work" <<'PY'
import json, sys
d, work = sys.argv[1], sys.argv[2]
j = json.load(open(d + "/container.json"))
j["baseImage"] = "treebox-test-base:1"; j["buildArgs"]["INSTALL_AGENTS"] = "0"
json.dump(j, open(d + "/container.json", "w"))
open(d + "/Dockerfile", "a").write('\nLABEL org.treebox.ports-bench="%s"\n' % work)
PY
cfg=$XDG_CONFIG_HOME/treebox/config.json
config() { printf '{"template": "test", "isolation": "docker", "ports": {"count": %s}}\n' "$1" >"$cfg"; }

ms() { local s=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

proxies_before=$(pgrep -c -x docker-proxy || true)
# The image, once (not timed).
config 0 && (cd without && git treebox create warm --no-launch --no-fetch >/dev/null)
: >"$work/create-with" && : >"$work/create-without"
for i in $(seq "$boxes"); do
  config 3 && (cd with && ms git treebox create "b$i" --no-launch --no-fetch) >>"$work/create-with"
  config 0 && (cd without && ms git treebox create "b$i" --no-launch --no-fetch) >>"$work/create-without"
done
(cd without && git treebox teardown --force warm >/dev/null)
proxies=$(( $(pgrep -c -x docker-proxy || true) - proxies_before ))
rss=$(ps -C docker-proxy -o rss= | awk '{s += $1} END {print s + 0}')
n_with=$(cd with && git treebox list --json | python3 -c 'import json,sys; print(sum(1 for b in json.load(sys.stdin)["boxes"] if b.get("ports")))')

# Warm both caches, then interleave.
for _ in 1 2; do (cd with && git treebox list >/dev/null); (cd without && git treebox list >/dev/null); done
: >"$work/list-with" && : >"$work/list-without" && : >"$work/list-ports"
for _ in $(seq "$rounds"); do
  (cd with && ms git treebox list) >>"$work/list-with"
  (cd without && ms git treebox list) >>"$work/list-without"
  (cd with && ms git treebox list --ports) >>"$work/list-ports"
done
lw=$(median <"$work/list-with"); lo=$(median <"$work/list-without"); lp=$(median <"$work/list-ports")
cw=$(median <"$work/create-with"); co=$(median <"$work/create-without")
printf 'boxes: %s with a block of 3 (%s listed with ports), %s without\n' "$boxes" "$n_with" "$boxes"
printf 'list (warm, median of %s):   with ports %s ms   without %s ms   ratio %s (budget 1.2)\n' \
  "$rounds" "$lw" "$lo" "$(python3 -c "print(round($lw / max($lo, 1), 2))")"
printf 'list --ports (median):        %s ms\n' "$lp"
printf 'create --no-launch (median):  with ports %s ms   without %s ms   (+%s ms)\n' "$cw" "$co" "$((cw - co))"
printf 'docker-proxy: %s processes for %s published ports, %s MiB RSS in all (%s KiB each)\n' \
  "$proxies" "$((boxes * 3))" "$((rss / 1024))" "$(( proxies > 0 ? rss / proxies : 0 ))"
printf 'load: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
