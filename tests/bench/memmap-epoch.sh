# Sourced by the memmap epoch benchmarks (run-mapped-overhead.sh,
# run-layer-costs.sh): the job both time, how its epoch is read, and the
# medians and intervals both give.
#
#   source tests/bench/memmap-epoch.sh
#   memmap_epoch_job "$python" "$data" 2048   # sets `job`, shards in $data/shards, cached
#   epoch=$("${job[@]}" | epoch_of)
#   phases=$(phases_of LOG)                   # after "${job[@]}" --step-log LOG
#   printf '%s\n' "${percents[@]}" | median_pct; ... | median_ci

# Writes 4 shards of SAMPLES samples under DIR/shards, reads them into the
# page cache (the epochs are warm-cache ones) and sets `job` to one epoch of
# examples/shards/train.py over them through numpy.memmap, 2 workers.
memmap_epoch_job() {
  local python=$1 dir=$2 samples=$3
  "$python" examples/shards/train.py --data "$dir/shards" --generate-only --shards 4 \
    --samples "$samples" >/dev/null
  cat "$dir"/shards/*.bin >/dev/null
  job=("$python" examples/shards/train.py --data "$dir/shards" --mmap --epochs 1)
}

# The epoch as the job times it (its loop, the workers' start included),
# from its line "N steps, S samples in X s": X.
epoch_of() { awk '/ steps, .* in [0-9.]+ s/ {for (i = 1; i < NF; i++) if ($i == "in") print $(i + 1)}'; }

# Where an epoch's time went, from the job's step log (--step-log LOG, one
# JSON line a step): "FIRST LATER COMPUTE" in seconds: the wait for the
# first batch (the workers' start and first samples), the waits for every
# later batch (how far the workers fell behind the training loop), and the
# training steps themselves.
phases_of() {
  "${python:-/usr/bin/python3}" -c '
import json, sys
steps = [json.loads(line) for line in open(sys.argv[1])]
print("%.4f %.4f %.4f" % (steps[0]["data_s"], sum(s["data_s"] for s in steps[1:]),
                          sum(s["compute_s"] for s in steps)))' "$1"
}

# The median of the numbers on stdin, one a line.
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
# The same, as a percentage with one decimal and its sign (the values are
# percentages already).
median_pct() { median | xargs printf '%+.1f'; }
# "LOW% to HIGH%": a 95% interval for the median of the percentages on
# stdin, by bootstrap (2,000 resamples, a fixed seed); `median_ci " ms"`
# for values in another unit. On this VM one epoch differs from the next by
# 15-20% either way, so the median of a few dozen pairs moves by several
# points between sittings: the interval says how far to trust it.
median_ci() {
  "${python:-/usr/bin/python3}" -c '
import random, statistics, sys
v = [float(x) for x in sys.stdin.read().split()]
unit = sys.argv[1]
random.seed(20261201)
m = sorted(statistics.median(random.choices(v, k=len(v))) for _ in range(2000))
print("%.1f%s to %.1f%s" % (m[49], unit, m[1950], unit))' "${1:-%}"
}
