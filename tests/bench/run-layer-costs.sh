#!/usr/bin/env bash
# Which layer costs a warm-cache memmap DataLoader epoch
# (examples/shards/train.py --mmap, 2 workers): each round runs the epoch
# untraced and under `iotap run` with all layers, all but mapped, all but
# waits and posix alone, in an order that rotates from round to round, and
# prints each round's epochs ("N steps, S samples in X s", as the job times
# its loop); at the end, per configuration, the median of its epochs'
# ratios to the round's untraced epoch with a bootstrap 95% interval, and
# all layers against the two configurations without one of them. On a
# shared VM one epoch differs from the next by 15-20%: use 60 rounds or
# more. Not a test.
#
# Usage: tests/bench/run-layer-costs.sh [BUILD_DIR] [ROUNDS]
#   SAMPLES=2048 tests/bench/run-layer-costs.sh build 80
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/memmap-epoch.sh
build=${1:-build}
rounds=${2:-40}
python=${PYTHON:-/usr/bin/python3}
data=$(mktemp -d /tmp/iotap-layer-costs-XXXXXX)
trap 'rm -rf "$data"' EXIT
memmap_epoch_job "$python" "$data" "${SAMPLES:-2048}"
all=posix,stdio,hdf5,tfrecord,cuda,mapped,uring,waits
declare -A layers=([all]=$all [no_mapped]=${all/mapped,/} [no_waits]=${all/,waits/} [posix]=posix)
configs=(untraced all no_mapped no_waits posix)
run() {
  if [[ $1 == untraced ]]; then
    "${job[@]}" 2>/dev/null | epoch_of
  else
    rm -rf "$data/trace"
    "$build/bin/iotap" run --quiet --layers "${layers[$1]}" -o "$data/trace" -- "${job[@]}" \
      2>/dev/null | epoch_of
  fi
}
echo "round ${configs[*]}"
rows=()
for ((i = 0; i < rounds; i++)); do
  declare -A epoch=()
  for ((k = 0; k < ${#configs[@]}; k++)); do
    c=${configs[$(((i + k) % ${#configs[@]}))]}
    epoch[$c]=$(run "$c")
  done
  row="${epoch[untraced]} ${epoch[all]} ${epoch[no_mapped]} ${epoch[no_waits]} ${epoch[posix]}"
  echo "$i $row"
  rows+=("$row")
done
# Percent added, per round, of column B's epoch over column A's (1-based).
added() { printf '%s\n' "${rows[@]}" | awk -v a="$1" -v b="$2" '{print ($b / $a - 1) * 100}'; }
summary() {
  local values; values=$(added "$2" "$3")
  printf '%-28s %s%% (95%% interval %s)\n' "$1" "$(median_pct <<<"$values")" "$(median_ci <<<"$values")"
}
summary "all layers vs untraced" 1 2
summary "all but mapped vs untraced" 1 3
summary "all but waits vs untraced" 1 4
summary "posix alone vs untraced" 1 5
summary "all vs all but mapped" 3 2
summary "all vs all but waits" 4 2
printf 'median epochs: untraced %s s, all %s s, all but mapped %s s, all but waits %s s, posix alone %s s\n' \
  $(for k in 1 2 3 4 5; do printf '%s\n' "${rows[@]}" | awk -v k=$k '{print $k}' | median; done)
