#!/usr/bin/env bash
# What the mapped-read layer (issue 15) costs a memmap DataLoader worker, by
# thread: a quieter measure than the epoch's wall time (run-mapped-overhead.sh),
# which moves by 15-20% between runs on a shared 2-core VM.
#
# One process does a worker's work over a numpy.memmap dataset
# (memmap_worker_loop.py over memmap_epoch_job's shards: SAMPLES samples in
# 4 shards, read in a shuffled order, the shards mapped afresh each epoch)
# for EPOCHS epochs, pinned to one CPU, so that the shim's writer thread
# shares the CPU with the thread that reads, as it does where the job's
# processes already fill the cores. Each round runs it three times, in a
# rotating order: untraced, traced with every layer, and traced with every
# layer but `mapped` (preloaded, the trace on the same disk as the data).
# Per run, the median of its epochs after the first (the first imports and
# starts the events); per round, the differences between runs; over the
# rounds, the median difference with a bootstrap 95% interval, of:
#   main:   CPU time of the thread that reads (ms per epoch): what the job's
#           own thread pays;
#   writer: CPU time of the shim's writer thread (ms per epoch);
#   wall:   the epoch's wall time (ms);
# and the page faults per epoch. Not a test: nothing here fails on time.
#
# Usage: tests/bench/run-mapped-thread-cost.sh [BUILD_DIR] [ROUNDS]
# Environment: SAMPLES (2048), EPOCHS (4), CPU (the last one), PYTHON
# (/usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/memmap-epoch.sh
build=${1:-build}
rounds=${2:-30}
python=${PYTHON:-/usr/bin/python3}
epochs=${EPOCHS:-4}
cpu=${CPU:-$(($(nproc) - 1))}
lib=$build/lib/libiotap.so
[[ -f $lib ]] || { echo "build first: $lib is needed" >&2; exit 1; }
data=$(mktemp -d /tmp/iotap-mapped-threads-XXXXXX)
trap 'rm -rf "$data"' EXIT
memmap_epoch_job "$python" "$data" "${SAMPLES:-2048}"  # the shards, cached
all_but_mapped=posix,stdio,hdf5,tfrecord,cuda,uring,waits
kinds=(untraced all no_mapped)
metrics=(main writer wall faults)

# One run of KIND: ENV... sets results[KIND,METRIC] to the medians of its
# epochs after the first.
declare -A results
run() {
  local kind=$1 k
  shift
  rm -rf "$data/trace"
  local epochs_out
  epochs_out=$(env "$@" taskset -c "$cpu" "$python" tests/bench/memmap_worker_loop.py \
                 "$data/shards" "$epochs" | awk '$1 == "epoch"' | tail -n +2)
  for k in 0 1 2 3; do
    results[$kind,${metrics[k]}]=$(awk -v c=$((k + 2)) '{print $c}' <<<"$epochs_out" | median)
  done
}
# "KIND,METRIC" -> its value in each round, and "A-B,METRIC" -> the
# difference of A and B in each round, a line each.
declare -A series
echo "rounds of $epochs epochs of ${SAMPLES:-2048} samples, pinned to CPU $cpu"
for ((round = 0; round < rounds; round++)); do
  for ((k = 0; k < 3; k++)); do
    case ${kinds[(round + k) % 3]} in
      untraced) run untraced ;;
      all) run all LD_PRELOAD="$lib" IOTAP_DIR="$data/trace" ;;
      no_mapped) run no_mapped LD_PRELOAD="$lib" IOTAP_DIR="$data/trace" IOTAP_LAYERS=$all_but_mapped ;;
    esac
  done
  for kind in "${kinds[@]}"; do
    for m in "${metrics[@]}"; do series[$kind,$m]+="${results[$kind,$m]}"$'\n'; done
  done
  for pair in all-no_mapped all-untraced no_mapped-untraced; do
    a=${pair%-*} b=${pair#*-}
    for m in main writer wall; do
      series[$pair,$m]+="$(echo "${results[$a,$m]} - ${results[$b,$m]}" | bc -l)"$'\n'
    done
  done
done
echo "$rounds rounds; medians per epoch:"
for kind in "${kinds[@]}"; do
  printf '  %-9s main %.1f ms, writer %.1f ms, wall %.1f ms, %.0f faults\n' "$kind" \
    "$(median <<<"${series[$kind,main]}")" "$(median <<<"${series[$kind,writer]}")" \
    "$(median <<<"${series[$kind,wall]}")" "$(median <<<"${series[$kind,faults]}")"
done
echo "paired differences (median, 95% interval), ms per epoch:"
for pair in all-no_mapped all-untraced no_mapped-untraced; do
  line="  ${pair/-/ - }:"
  for m in main writer wall; do
    values=${series[$pair,$m]}
    line+=" $m $(median <<<"$values" | xargs printf '%+.1f') ($(median_ci " ms" <<<"$values"));"
  done
  echo "${line%;}"
done
