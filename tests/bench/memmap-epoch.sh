# Sourced by the memmap epoch benchmarks (run-mapped-overhead.sh,
# run-layer-costs.sh): the job both time, and how its epoch is read.
#
#   source tests/bench/memmap-epoch.sh
#   memmap_epoch_job "$python" "$data" 2048   # sets `job`, shards in $data/shards, cached
#   epoch=$("${job[@]}" | epoch_of)

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
