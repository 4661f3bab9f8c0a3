#!/usr/bin/env bash
# How ready is a new box to build? A benchmark on a real crate: this project's own
# source at HEAD (cloned, so the main checkout here is a scratch copy with its own
# origin). Prints, side by side in one run:
#
#   - raw `git worktree add` + cold `cargo build`, against `git treebox create` + the
#     box's first `cargo build` (warm); the same for `cargo test --no-run`;
#   - the no-op incremental build in the main checkout (goal: the warm first build
#     within 2x of it);
#   - `git worktree add` against `git treebox create --no-fetch --no-launch` with setup
#     off, and against the same with --no-warm, interleaved rounds, each command after
#     an untimed `sync` (goal: within 1.3x
#     where the filesystem clones by reflink); and how long the background clone of
#     target/ took after create returned (each round waits for it, untimed).
#
# Usage: benches/warm-build.sh [WORKDIR] [WARM]
#   WORKDIR  where the scratch repository and boxes go (default: a new temp dir). Put it
#            on the filesystem to measure: an XFS or btrfs mount clones by reflink, ext4
#            does not. Emptied first.
#   WARM     the warm mode for the treebox side: auto (default) or copy.
# Knobs: WARM_ROUNDS (create rounds, default 7), WARM_NOOP_RUNS (default 5),
# WARM_FIRST_RUNS (boxes per first-build row, default 5; the median), WARM_COLD=0
# (skip the two cold builds: minutes less; their rows then read 0).
# Needs: git, cargo (and crates.io or a filled ~/.cargo registry), GNU coreutils, flock.
# Takes minutes: it builds the crate from cold three times.
set -euo pipefail

src=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
work=${1:-$(mktemp -d)}
warm=${2:-auto}
rounds=${WARM_ROUNDS:-7}
noop_runs=${WARM_NOOP_RUNS:-5}
first_runs=${WARM_FIRST_RUNS:-5}

cargo build --release --quiet --manifest-path "$src/Cargo.toml" --bins
bins="$src/target/release"

# A hermetic git and treebox world; cargo keeps the user's registry and toolchain.
export CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
rm -rf "$work"
mkdir -p "$work/home"
export HOME="$work/home"
export XDG_CONFIG_HOME="$HOME/.config" XDG_STATE_HOME="$HOME/.local/state" XDG_CACHE_HOME="$HOME/.cache"
export GIT_CONFIG_GLOBAL="$HOME/.gitconfig" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
printf '[user]\n\tname = Bench\n\temail = bench@example.com\n' >"$GIT_CONFIG_GLOBAL"
export PATH="$bins:$PATH"
mkdir -p "$XDG_CONFIG_HOME/treebox"

now() { date +%s.%N; }
# secs CMD... : run CMD quietly, print its wall time in seconds.
secs() {
  local t0 t1
  t0=$(now)
  "$@" >/dev/null 2>&1
  t1=$(now)
  echo "$t1 - $t0" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
fmt() { printf '%8.3f s' "$1"; }
ratio() { echo "scale=2; $1 / $2" | bc -l; }

git clone -q "$src" "$work/proj"
cd "$work/proj"
fs=$(stat -f -c %T .)
echo "filesystem of $work: $fs; cores: $(nproc); $(cargo --version)"
echo "warming the main checkout (untimed): cargo build; cargo test --no-run"
cargo build -q 2>/dev/null
cargo test --no-run -q 2>/dev/null
# A main checkout that has been worked in: its index written after its files. (A fresh
# clone's files are racily clean, written in the second its index was: create then
# compares each of them byte for byte before it gives it the main file's time.)
# Its outputs written back to disk too, as they long are when a box is made: the first
# measures do not pay for the writeback of the build just done.
sleep 1
git update-index -q --really-refresh
sync
target_size=$(du -sh target | cut -f1)
target_files=$(find target -type f | wc -l)
echo "main target/: $target_size in $target_files files"

noop_build=$(for _ in $(seq "$noop_runs"); do secs cargo build; done | median)
noop_test=$(for _ in $(seq "$noop_runs"); do secs cargo test --no-run; done | median)

base=$(git rev-parse --abbrev-ref HEAD)
echo '{"setup": []}' >"$XDG_CONFIG_HOME/treebox/config.json"
warm_flag=()
[ "$warm" = copy ] && warm_flag=(--warm)

# settle NAME: wait (untimed) until a background clone of box NAME's target/ is done,
# by taking cargo's lock as cargo would, so it does not run into the next measure.
settle() {
  local lock=".treebox/worktrees/$1/target/debug/.cargo-lock"
  if [ -e "$lock" ]; then flock "$lock" true; fi
  sleep 0.5
}
# The warmer's own time for box NAME (warm.json), when it cloned in the background.
clone_secs() {
  sed -n 's/.*"seconds": *\([0-9.]*\).*/\1/p' \
    "$XDG_STATE_HOME"/treebox/repos/*/boxes/"$1"/warm.json 2>/dev/null | head -1
}

# Cold: a raw worktree has no target/.
raw_add=$(secs git worktree add -b raw-build ../raw-build "origin/$base")
raw_add_t=$(secs git worktree add -b raw-test ../raw-test "origin/$base")
if [ "${WARM_COLD:-1}" = 0 ]; then
  raw_build=0 raw_test=0
else
  raw_build=$(cd ../raw-build && secs cargo build)
  raw_test=$(cd ../raw-test && secs cargo test --no-run)
fi

# Warm: a box starts with target/. A box builds for the first time once, so each
# first build is one sample: WARM_FIRST_RUNS boxes of each kind, interleaved, each
# after an untimed `sync`; the medians are reported.
# The build starts at once: where target/ is cloned in the background, cargo waits
# for the clone, and that wait is part of the build's time.
# The same once the clone is done (an agent's first build comes after it has started
# and read the code): the build alone.
first_creates=() first_builds=() first_creates_t=() first_tests=()
settled_builds=() settled_tests=()
for i in $(seq "$first_runs"); do
  sync
  first_creates+=("$(secs git treebox create "warm-build-$i" --no-fetch --no-launch "${warm_flag[@]}")")
  first_builds+=("$(cd ".treebox/worktrees/warm-build-$i" && secs cargo build)")
  sync
  first_creates_t+=("$(secs git treebox create "warm-test-$i" --no-fetch --no-launch "${warm_flag[@]}")")
  first_tests+=("$(cd ".treebox/worktrees/warm-test-$i" && secs cargo test --no-run)")
  git treebox create "settled-build-$i" --no-fetch --no-launch "${warm_flag[@]}" >/dev/null 2>&1
  settle "settled-build-$i"
  settled_builds+=("$(cd ".treebox/worktrees/settled-build-$i" && secs cargo build)")
  git treebox create "settled-test-$i" --no-fetch --no-launch "${warm_flag[@]}" >/dev/null 2>&1
  settle "settled-test-$i"
  settled_tests+=("$(cd ".treebox/worktrees/settled-test-$i" && secs cargo test --no-run)")
done
med() { printf '%s\n' "$@" | median; }
tb_create=$(med "${first_creates[@]}")
tb_build=$(med "${first_builds[@]}")
tb_create_t=$(med "${first_creates_t[@]}")
tb_test=$(med "${first_tests[@]}")
tb_build_s=$(med "${settled_builds[@]}")
tb_test_s=$(med "${settled_tests[@]}")
how=$(sed -n 's/.*"method": *"\([a-z]*\)".*/\1/p' \
  "$XDG_STATE_HOME"/treebox/repos/*/boxes/warm-build-1/record.json | head -1)

# create against worktree add, interleaved; create without warming shows treebox's
# own share.
adds=()
creates=()
colds=()
clones=()
# Each timed command starts on a quiet filesystem: `sync` (untimed) first, so that no
# command's fsync pays for the metadata the one before it left in the log (git never
# syncs; create syncs its record, and on XFS that forces everything logged before it).
for i in $(seq "$rounds"); do
  sync
  adds+=("$(secs git worktree add -b "r-$i" "../r-$i" "origin/$base")")
  sleep 0.5
  sync
  colds+=("$(secs git treebox create "n-$i" --no-fetch --no-launch --no-warm)")
  sleep 0.5
  sync
  creates+=("$(secs git treebox create "c-$i" --no-fetch --no-launch "${warm_flag[@]}")")
  settle "c-$i"
  c=$(clone_secs "c-$i")
  [ -n "$c" ] && clones+=("$c")
done
add_med=$(printf '%s\n' "${adds[@]}" | median)
create_med=$(printf '%s\n' "${creates[@]}" | median)
cold_med=$(printf '%s\n' "${colds[@]}" | median)

echo
echo "                                   checkout      build     total"
printf 'cargo build, raw worktree (cold)  %s %s %s\n' "$(fmt "$raw_add")" "$(fmt "$raw_build")" "$(fmt "$(echo "$raw_add + $raw_build" | bc -l)")"
printf 'cargo build, treebox box (warm)   %s %s %s\n' "$(fmt "$tb_create")" "$(fmt "$tb_build")" "$(fmt "$(echo "$tb_create + $tb_build" | bc -l)")"
printf 'cargo build, no-op in main                   %s\n' "$(fmt "$noop_build")"
printf 'cargo test --no-run, raw (cold)   %s %s %s\n' "$(fmt "$raw_add_t")" "$(fmt "$raw_test")" "$(fmt "$(echo "$raw_add_t + $raw_test" | bc -l)")"
printf 'cargo test --no-run, box (warm)   %s %s %s\n' "$(fmt "$tb_create_t")" "$(fmt "$tb_test")" "$(fmt "$(echo "$tb_create_t + $tb_test" | bc -l)")"
printf 'cargo test --no-run, no-op in main           %s\n' "$(fmt "$noop_test")"
printf 'cargo build, box, clone done                 %s\n' "$(fmt "$tb_build_s")"
printf 'cargo test --no-run, box, clone done         %s\n' "$(fmt "$tb_test_s")"
echo
echo "warm method: ${how:-none} (mode $warm); box rows: medians of $first_runs boxes each"
echo "first build in a box / no-op build in main:        $(ratio "$tb_build" "$noop_build")x  (goal <= 2)"
echo "first test build in a box / no-op in main:         $(ratio "$tb_test" "$noop_test")x  (goal <= 2)"
echo "  the same once the clone is done:                   $(ratio "$tb_build_s" "$noop_build")x, $(ratio "$tb_test_s" "$noop_test")x"
[ "${WARM_COLD:-1}" = 0 ] || echo "cold build / warm first build:                     $(ratio "$raw_build" "$tb_build")x"
echo "create / git worktree add (median of $rounds rounds):  $(ratio "$create_med" "$add_med")x  ($(fmt "$create_med") vs $(fmt "$add_med"); goal <= 1.3 with reflink)"
echo "create --no-warm / git worktree add:                 $(ratio "$cold_med" "$add_med")x  ($(fmt "$cold_med"))"
if [ "${#clones[@]}" -gt 0 ]; then
  echo "background clone of target/ after create returned:   $(fmt "$(printf '%s\n' "${clones[@]}" | median)") (median, warm.json)"
fi
