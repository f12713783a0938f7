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
build=${1:-build}
rounds=${2:-40}
python=${PYTHON:-/usr/bin/python3}
data=$(mktemp -d /tmp/iotap-layer-costs-XXXXXX)
trap 'rm -rf "$data"' EXIT
source tests/bench/memmap-epoch.sh
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
printf '%s\n' "${rows[@]}" | "$python" -c '
import random, statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin if len(l.split()) == 5]
random.seed(20261202)
def line(name, ratios):
    m = sorted(statistics.median(random.choices(ratios, k=len(ratios))) for _ in range(2000))
    print("%-28s %+6.1f%% (95%% interval %+.1f%% to %+.1f%%)" % (
        name, 100 * statistics.median(ratios), 100 * m[49], 100 * m[1950]))
names = ["all layers", "all but mapped", "all but waits", "posix alone"]
for k, name in enumerate(names, 1):
    line(name + " vs untraced", [r[k] / r[0] - 1 for r in rows])
line("all vs all but mapped", [r[1] / r[2] - 1 for r in rows])
line("all vs all but waits", [r[1] / r[3] - 1 for r in rows])
print("median epochs: " + ", ".join("%s %.3f s" % (n, statistics.median(c)) for n, c in
      zip(["untraced"] + names, zip(*rows))))'
