#!/usr/bin/env bash
# Reproduces the README's cost of Python stack sampling: one epoch of
# examples/imagefolder (1000 PNG images of 64x64 pixels, the heavy
# transforms, 2 DataLoader workers started by fork) traced as
# `iotap run --torch-steps` traces it (the shim preloaded, the helper's
# sitecustomize on PYTHONPATH; set here directly, so only libiotap.so is
# needed), sampling at the default rate against `--py-sample-rate 0`, in
# pairs whose order alternates. Prints each pair's
# epoch times (the example's own "in X s") and CPU times (the job's, all
# processes, from /usr/bin/time), and the medians of the pairs' relative
# differences. Usage:
#   tests/bench/run-py-samples-overhead.sh [BUILD_DIR] [PAIRS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
pairs=${2:-11}
python=${PYTHON:-/usr/bin/python3}
data=$(mktemp -d /tmp/iotap-pybench-XXXXXX)
trap 'rm -rf "$data"' EXIT
"$python" examples/imagefolder/train.py --data "$data/images" --generate-only --images "${IMAGES:-1000}" \
  --image-size 64
epoch() {  # RATE -> the epoch's wall time and the job's CPU time, in seconds
  rm -rf "$data/trace"
  mkdir -p "$data/trace"
  local samples=()
  (($1 > 0)) && samples=(IOTAP_PY_SAMPLES="$1" IOTAP_PY_SAMPLES_WHEN=torch)
  local wall
  wall=$(/usr/bin/time -f "%U %S" -o "$data/cpu" env LD_PRELOAD="$PWD/$build/lib/libiotap.so" \
    IOTAP_DIR="$data/trace" IOTAP_QUIET=1 IOTAP_TORCH_STEPS=1 \
    PYTHONPATH="$PWD/interpose/python/iotap/_site:$PWD/interpose/python" \
    "${samples[@]}" "$python" examples/imagefolder/train.py --data "$data/images" \
    --num-workers 2 --transform-cost heavy | sed -n 's/.* in \([0-9.]*\) s (.*/\1/p')
  echo "$wall $(awk '{ print $1 + $2 }' "$data/cpu")"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
walls=()
cpus=()
for ((i = 0; i < pairs; i++)); do
  if ((i % 2 == 0)); then off=($(epoch 0)); on=($(epoch 100)); else on=($(epoch 100)); off=($(epoch 0)); fi
  w=$(awk -v a="${on[0]}" -v b="${off[0]}" 'BEGIN { printf "%.4f", (a - b) / b }')
  c=$(awk -v a="${on[1]}" -v b="${off[1]}" 'BEGIN { printf "%.4f", (a - b) / b }')
  echo "pair $i: epoch ${on[0]} s sampled, ${off[0]} s not ($w); job CPU ${on[1]} s, ${off[1]} s ($c)"
  walls+=("$w")
  cpus+=("$c")
done
echo "median over $pairs pairs: epoch wall time $(printf '%s\n' "${walls[@]}" | median | awk '{ printf "%+.2f%%", 100 * $1 }'), job CPU time $(printf '%s\n' "${cpus[@]}" | median | awk '{ printf "%+.2f%%", 100 * $1 }')"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
