#!/usr/bin/env bash
# Which layer costs a warm-cache memmap DataLoader epoch
# (examples/shards/train.py --mmap, 2 workers), and in which part of it.
# Each round runs the epoch untraced, under `iotap run` with all layers,
# all but mapped, all but waits and posix alone, and untraced under a CPU
# burner (cpu_burner.c: a thread in every process that wakes every
# BURNER_PERIOD_US, default 5000, and spins BURNER_SPIN_US, default 150:
# about three times the CPU time and as many wake-ups as the writer
# threads take in this job), in an order that rotates from round to round.
# It prints each round's epochs ("N steps, S samples in X s", as the job
# times its loop); at the end, per configuration, the median of its epochs'
# ratios to the round's untraced epoch with a bootstrap 95% interval, all
# layers against the two configurations without one of them, and the
# epoch's parts from the job's step log (phases_of in memmap-epoch.sh: the
# wait for the first batch, the waits for the later ones, the training
# steps), as medians of each round's difference from its untraced epoch,
# in ms. On a shared VM one epoch differs from the next by 15-20%: use 60
# rounds or more. Not a test.
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
cc -O2 -shared -fPIC -o "$data/libcpu_burner.so" tests/bench/cpu_burner.c -lpthread
all=posix,stdio,hdf5,tfrecord,cuda,mapped,uring,waits
declare -A layers=([all]=$all [no_mapped]=${all/mapped,/} [no_waits]=${all/,waits/} [posix]=posix)
configs=(untraced all no_mapped no_waits posix burner)
# One epoch of configuration $1: "EPOCH FIRST LATER COMPUTE", in seconds.
run() {
  local log=$data/steps.jsonl epoch
  rm -f "$log"
  case $1 in
    untraced) epoch=$("${job[@]}" --step-log "$log" 2>/dev/null | epoch_of) ;;
    burner)
      epoch=$(BURNER_PERIOD_US=${BURNER_PERIOD_US:-5000} BURNER_SPIN_US=${BURNER_SPIN_US:-150} \
                LD_PRELOAD="$data/libcpu_burner.so" "${job[@]}" --step-log "$log" 2>/dev/null |
                epoch_of) ;;
    *)
      rm -rf "$data/trace"
      epoch=$("$build/bin/iotap" run --quiet --layers "${layers[$1]}" -o "$data/trace" -- \
                "${job[@]}" --step-log "$log" 2>/dev/null | epoch_of) ;;
  esac
  echo "$epoch $(phases_of "$log")"
}
echo "round ${configs[*]} (epochs, s)"
rows=()    # per round, the configurations' epochs in the order of `configs`
phases=()  # per round, each configuration's "FIRST LATER COMPUTE" in that order
for ((i = 0; i < rounds; i++)); do
  declare -A epoch=() parts=()
  for ((k = 0; k < ${#configs[@]}; k++)); do
    c=${configs[$(((i + k) % ${#configs[@]}))]}
    read -r e f l t < <(run "$c")
    epoch[$c]=$e
    parts[$c]="$f $l $t"
  done
  row="" part=""
  for c in "${configs[@]}"; do
    row+="${epoch[$c]} "
    part+="${parts[$c]} "
  done
  echo "$i $row"
  rows+=("$row")
  phases+=("$part")
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
summary "CPU burner vs untraced" 1 6
summary "all vs all but mapped" 3 2
summary "all vs all but waits" 4 2
printf 'median epochs:'
for ((k = 1; k <= ${#configs[@]}; k++)); do
  printf ' %s %s s' "${configs[$((k - 1))]}" "$(printf '%s\n' "${rows[@]}" | awk -v k=$k '{print $k}' | median)"
done
echo
# Part P (1: first batch, 2: later batches, 3: steps) of configuration K
# (1-based) less the round's untraced one, in ms, one round a line.
part_added() {
  printf '%s\n' "${phases[@]}" |
    awk -v k="$1" -v p="$2" '{print ($((k - 1) * 3 + p) - $p) * 1000}'
}
echo "added to each part of the epoch (median ms; untraced medians first):"
printf '  %-10s first batch %s ms, later batches %s ms, steps %s ms\n' untraced \
  $(for p in 1 2 3; do printf '%s\n' "${phases[@]}" | awk -v p=$p '{print $p * 1000}' | median; done)
for ((k = 2; k <= ${#configs[@]}; k++)); do
  printf '  %-10s first batch %+.1f, later batches %+.1f, steps %+.1f\n' "${configs[$((k - 1))]}" \
    $(for p in 1 2 3; do part_added "$k" "$p" | median; done)
done
