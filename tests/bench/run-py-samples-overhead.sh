#!/usr/bin/env bash
# Reproduces the README's cost of Python stack sampling: one epoch of
# examples/imagefolder (1000 PNG images of 64x64 pixels, the heavy
# transforms, 2 DataLoader workers started by fork) under
# `iotap run --torch-steps`, sampling at the default rate against
# `--py-sample-rate 0`, in pairs whose order alternates. Prints each pair's
# epoch times (the example's own "in X s") and the median of the pairs'
# relative differences. Usage:
#   tests/bench/run-py-samples-overhead.sh [BUILD_DIR] [PAIRS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
pairs=${2:-11}
python=${PYTHON:-/usr/bin/python3}
data=$(mktemp -d /tmp/iotap-pybench-XXXXXX)
trap 'rm -rf "$data"' EXIT
"$python" examples/imagefolder/train.py --data "$data/images" --generate-only --images 1000 \
  --image-size 64
epoch() {  # RATE -> the epoch's wall time in seconds
  rm -rf "$data/trace"
  "$build/bin/iotap" run --quiet -o "$data/trace" --torch-steps --py-sample-rate "$1" -- \
    "$python" examples/imagefolder/train.py --data "$data/images" --num-workers 2 \
    --transform-cost heavy | sed -n 's/.* in \([0-9.]*\) s (.*/\1/p'
}
diffs=()
for ((i = 0; i < pairs; i++)); do
  if ((i % 2 == 0)); then off=$(epoch 0); on=$(epoch 100); else on=$(epoch 100); off=$(epoch 0); fi
  d=$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.4f", (a - b) / b }')
  echo "pair $i: sampled ${on} s, not sampled ${off} s, difference $(awk -v d="$d" 'BEGIN { printf "%+.1f%%", 100 * d }')"
  diffs+=("$d")
done
printf '%s\n' "${diffs[@]}" | sort -g |
  awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                           printf "median difference over %d pairs: %+.2f%%\n", NR, 100 * m }'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
