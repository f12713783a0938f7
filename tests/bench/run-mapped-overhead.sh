#!/usr/bin/env bash
# The cost of the mapped-read layer (issue 15), as the README gives it:
#   1. a page fault in a file mapping, sampled (perf_event_open) vs untraced:
#      bench/fault_worker.c touching every page of a 64 MiB cached file with
#      MADV_RANDOM (one minor fault per page);
#   2. an epoch of examples/shards/train.py --mmap (a DataLoader over
#      numpy.memmap, 2 workers) from a warm page cache, traced vs untraced.
# Runs alternate traced and untraced, in PAIRS pairs; prints each pair and
# the median of the differences. Usage:
#   tests/bench/run-mapped-overhead.sh [BUILD_DIR] [PAIRS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
pairs=${2:-9}
python=${PYTHON:-/usr/bin/python3}
data=$(mktemp -d /tmp/iotap-mapped-bench-XXXXXX)
trap 'rm -rf "$data"' EXIT
head -c $((64 << 20)) /dev/urandom >"$data/data.bin"
cat "$data/data.bin" >/dev/null
worker=$data/fault_worker
cc -O2 -o "$worker" tests/bench/fault_worker.c

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

echo "== a sampled page fault (target: at most 1.5 us added)"
diffs=()
for ((i = 0; i < pairs; i++)); do
  plain=$("$worker" "$data/data.bin" 4 | awk '/ns_per_fault/ {print $2}')
  rm -rf "$data/trace"
  traced=$(IOTAP_DIR="$data/trace" LD_PRELOAD="$build/lib/libiotap.so" \
             "$worker" "$data/data.bin" 4 | awk '/ns_per_fault/ {print $2}')
  echo "  pair $i: untraced $plain ns/fault, traced $traced ns/fault"
  diffs+=("$(echo "$traced - $plain" | bc -l)")
done
echo "  median added: $(printf '%s\n' "${diffs[@]}" | median) ns/fault"

echo "== a warm-cache epoch of a numpy.memmap DataLoader (target: at most 3% slower)"
"$python" examples/shards/train.py --data "$data/shards" --generate-only --shards 4 \
  --samples 512 >/dev/null
cat "$data"/shards/*.bin >/dev/null
job=("$python" examples/shards/train.py --data "$data/shards" --mmap --epochs 1)
ratios=()
for ((i = 0; i < pairs; i++)); do
  t0=$(date +%s.%N); "${job[@]}" >/dev/null; t1=$(date +%s.%N)
  rm -rf "$data/trace"
  "$build/bin/iotap" run --quiet -o "$data/trace" -- "${job[@]}" >/dev/null 2>&1
  t2=$(date +%s.%N)
  plain=$(echo "$t1 - $t0" | bc -l); traced=$(echo "$t2 - $t1" | bc -l)
  echo "  pair $i: untraced ${plain}s, traced ${traced}s"
  ratios+=("$(echo "($traced / $plain - 1) * 100" | bc -l)")
done
echo "  median added: $(printf '%s\n' "${ratios[@]}" | median)%"
