#!/usr/bin/env bash
# What does a box pay for package caches it cannot write (SPEC §7, Mounts)? A container
# box's installs, on a real crate (itoa + serde) and a real uv project (numpy +
# requests), in one run:
#
#   - box `a`, host caches empty (a runner where nothing builds on the host): cold;
#   - box `b`, after `a` (host still empty): boxes share nothing a box wrote;
#   - the host fills its own caches (cold), then the same install on the host, warm,
#     into a fresh .venv / CARGO_HOME-less project (what the old shared read-write
#     mount gave a second box);
#   - box `c`, host caches warm (and holding another project's packages too):
#     `create` (which seeds the box's own caches) and the installs in it.
#
# The test image has neither cargo nor uv nor python: each install runs in a throwaway
# container with exactly the box container's mounts, environment, user and working
# directory (read from `inspect`), plus the host's own toolchain, uv and python
# mounted read-only — for the measure only.
#
# Usage: benches/box-caches.sh [WORKDIR]   (default: a new temp dir; put it on the
#        filesystem to measure — ext4 copies, XFS/btrfs clone by reflink)
# Knobs: ENGINE (docker|podman, default docker), TREEBOX (the git-treebox binary,
#        default target/release/git-treebox), BASE (default treebox-test-base:1).
# Needs: network to crates.io and PyPI, cargo + rustc, uv, python3 (a build whose
#        libpython lives under its own prefix), jq, bash 5 ($EPOCHREALTIME).
set -euo pipefail

engine=${ENGINE:-docker}
base=${BASE:-treebox-test-base:1}
src=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
treebox=${TREEBOX:-$src/target/release/git-treebox}
work=${1:-$(mktemp -d)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
rm -rf "${work:?}"/*

sysroot=$(rustc --print sysroot)
uv=$(command -v uv)
py_prefix=$(python3 -c 'import sys; print(sys.base_prefix)')
# A machine behind a TLS-intercepting proxy: its CA bundle reaches the throwaway
# containers too (SSL_CERT_FILE, as cargo and uv read it).
ca=${SSL_CERT_FILE:-}
py=$(python3 -c 'import sys, os; print(os.path.realpath(sys.executable))')
# The box's programs run as its agent, not root, and a python under /root (pyenv) is out
# of its reach there (the image's /root is 0700): the prefix is mounted at /opt/python,
# its libpython found through LD_LIBRARY_PATH (a build's RUNPATH names its own prefix).
py_in=/opt/python${py#"$py_prefix"}

export HOME=$work/home XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state
export XDG_CACHE_HOME=$work/home/.cache GIT_CONFIG_GLOBAL=$work/gitconfig GIT_CONFIG_NOSYSTEM=1
unset CARGO_HOME UV_CACHE_DIR RUSTUP_HOME GOMODCACHE npm_config_cache
mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_STATE_HOME"
printf '[user]\n\tname = bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"
bin=$work/bin
mkdir -p "$bin"
ln -s "$treebox" "$bin/git-treebox"
export PATH=$bin:$PATH
export RUSTUP_HOME=${RUSTUP_HOME_REAL:-/root/.rustup}

now() { echo "${EPOCHREALTIME/./}"; }
ms() { echo $((($2 - $1) / 1000)); }

# The project: a crate with crates.io deps, a uv project with wheels.
git init -q --bare "$work/origin.git"
git clone -q "$work/origin.git" "$work/repo" 2>/dev/null
cd "$work/repo"
cat >Cargo.toml <<'EOF'
[package]
name = "bench"
version = "0.1.0"
edition = "2021"

[dependencies]
itoa = "1"
serde = { version = "1", features = ["derive"] }
EOF
mkdir -p src && echo 'fn main() {}' >src/main.rs
cat >pyproject.toml <<'EOF'
[project]
name = "bench"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["numpy", "requests"]
EOF
echo target/ >.gitignore && echo .venv/ >>.gitignore
CARGO_HOME=$work/lockhome cargo generate-lockfile -q
UV_CACHE_DIR=$work/lockhome/uv "$uv" lock -q --python "$py"
rm -rf "$work/lockhome"
git add -A && git commit -qm project && git push -q origin main

git treebox template init bench >/dev/null
tpl=$XDG_CONFIG_HOME/treebox/templates/bench/container.json
jq --arg b "$base" '.baseImage = $b | .buildArgs.INSTALL_AGENTS = "0"' "$tpl" >"$tpl.new" && mv "$tpl.new" "$tpl"
printf '{"template": "bench", "isolation": "%s", "setup": []}\n' "$engine" >"$XDG_CONFIG_HOME/treebox/config.json"

# Run `$@` in box $1's cache view: a throwaway container like the box's, plus tools.
in_box() {
  local leaf=$1
  shift
  local name args=()
  name=$(jq -r .container.name "$XDG_STATE_HOME"/treebox/repos/*/boxes/"$leaf"/record.json)
  while IFS= read -r m; do args+=(--mount "$m"); done < <("$engine" inspect "$name" |
    jq -r '.[0].Mounts[] | "type=bind,src=\(.Source),dst=\(.Destination)" + (if .RW then "" else ",readonly" end)')
  # The box's environment is its env file (the engine's config holds none of it), and
  # its programs run as the agent the record names (the container's own user is root).
  local state
  state=$(echo "$XDG_STATE_HOME"/treebox/repos/*/boxes/"$leaf")
  while IFS= read -r e; do args+=(-e "$e"); done <"$state/run/env"
  local image user wd
  image=$("$engine" inspect "$name" | jq -r '.[0].Config.Image')
  user=$(jq -r .container.user "$state/record.json")
  wd=$("$engine" inspect "$name" | jq -r '.[0].Config.WorkingDir')
  "$engine" run --rm "${args[@]}" ${user:+--user "$user"} -w "$wd" \
    --mount "type=bind,src=$sysroot,dst=/opt/rust,readonly" \
    --mount "type=bind,src=$uv,dst=/usr/local/bin/uv,readonly" \
    --mount "type=bind,src=$py_prefix,dst=/opt/python,readonly" -e LD_LIBRARY_PATH=/opt/python/lib \
    ${ca:+--mount "type=bind,src=$ca,dst=/etc/ssl/certs/treebox-bench-ca.crt,readonly"} \
    ${ca:+-e SSL_CERT_FILE=/etc/ssl/certs/treebox-bench-ca.crt} \
    ${ca:+-e CARGO_HTTP_CAINFO=/etc/ssl/certs/treebox-bench-ca.crt} \
    -e PATH=/opt/rust/bin:/usr/local/bin:/usr/bin:/bin \
    "$image" "$@"
}

declare -A fig
# Time one install where it runs (inside the container: its start is not counted), and
# note what it fetched: cargo's `Downloaded` lines, uv's `Prepared N packages`.
timed='s=$(date +%s%N); "$@" 2>/tmp/out; r=$?; e=$(date +%s%N); echo "$(((e - s) / 1000000)) $(grep -c "Downloaded " /tmp/out) $(grep -o "Prepared [0-9]* package" /tmp/out | grep -o "[0-9]*" || echo 0)"; [ $r = 0 ] || cat /tmp/out >&2; exit $r'
run() { # $1: box or "host", then the command
  local where=$1
  shift
  if [ "$where" = host ]; then
    (cd "$work/repo" && sh -c "$timed" sh "$@")
  else
    in_box "$where" sh -c "$timed" sh "$@"
  fi
}
installs() { # $1: label, $2: box or "host"
  local r
  r=$(run "$2" cargo fetch --locked)
  fig["$1 cargo fetch"]="${r%% *} ms, $(echo "$r" | cut -d' ' -f2) crates downloaded"
  [ "$2" = host ] && rm -rf "$work/repo/.venv"
  local python=$py_in
  [ "$2" = host ] && python=$py
  r=$(run "$2" env UV_LINK_MODE=copy uv sync --frozen --python "$python")
  fig["$1 uv sync"]="${r%% *} ms, $(echo "$r" | cut -d' ' -f3) packages prepared"
}
create() {
  local t0 t1
  t0=$(now)
  git treebox create "$1" --no-launch -q >/dev/null 2>&1 || git treebox create "$1" --no-launch
  t1=$(now)
  fig["create $1"]="$(ms "$t0" "$t1") ms"
}

cleanup() {
  cd "$work/repo" 2>/dev/null || return 0
  for b in a b c; do git treebox teardown --force "$b" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

create a # builds the image too: not a figure
installs "a (host empty)" a
create b
installs "b (after a, host empty)" b
installs "host cold" host
installs "host warm" host
# Another project of the user's in the same host cache: a box copies only what its
# own uv.lock names, so this does not make `create c` slower.
mkdir -p "$work/other" && cat >"$work/other/pyproject.toml" <<'EOF'
[project]
name = "other"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["pandas", "scipy"]
EOF
(cd "$work/other" && "$uv" sync -q --python "$py")
create c
installs "c (host warm)" c

printf '\n%s on %s (%s), %s\n' "$engine" "$(findmnt -no FSTYPE -T "$work")" "$work" "$(date -u +%FT%TZ)"
printf 'host caches: cargo %s, uv %s\n' "$(du -sh "$HOME/.cargo" | cut -f1)" "$(du -sh "$HOME/.cache/uv" | cut -f1)"
for k in "create b" "create c" \
  "a (host empty) cargo fetch" "b (after a, host empty) cargo fetch" "host cold cargo fetch" \
  "host warm cargo fetch" "c (host warm) cargo fetch" \
  "a (host empty) uv sync" "b (after a, host empty) uv sync" "host cold uv sync" \
  "host warm uv sync" "c (host warm) uv sync"; do
  printf '%-40s %s\n' "$k" "${fig[$k]}"
done
