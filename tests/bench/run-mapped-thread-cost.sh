#!/usr/bin/env bash
# What the mapped-read layer (issue 15) costs a memmap DataLoader worker, by
# thread: a quieter measure than the epoch's wall time (run-mapped-overhead.sh),
# which moves by 15-20% between runs on a shared 2-core VM.
#
# One process does a worker's work over a numpy.memmap dataset
# (memmap_worker_loop.py: SAMPLES samples in 4 shards, read in a shuffled
# order, the shards mapped afresh each epoch) for EPOCHS epochs, pinned to
# one CPU, so that the shim's writer thread shares the CPU with the thread
# that reads, as it does where the job's processes already fill the cores.
# Each round runs it three times, in a rotating order: untraced, traced with
# every layer, and traced with every layer but `mapped` (preloaded, the
# trace on the same disk as the data). Per run, the median of its epochs
# after the first (the first imports and starts the events); per round, the
# differences between runs; over the rounds, the median difference with a
# bootstrap 95% interval, of:
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
build=${1:-build}
rounds=${2:-30}
python=${PYTHON:-/usr/bin/python3}
samples=${SAMPLES:-2048}
epochs=${EPOCHS:-4}
cpu=${CPU:-$(($(nproc) - 1))}
lib=$build/lib/libiotap.so
[[ -f $lib ]] || { echo "build first: $lib is needed" >&2; exit 1; }
data=$(mktemp -d /tmp/iotap-mapped-threads-XXXXXX)
trap 'rm -rf "$data"' EXIT
"$python" examples/shards/train.py --data "$data/shards" --generate-only --shards 4 \
  --samples "$samples" >/dev/null
cat "$data"/shards/*.bin >/dev/null
all_but_mapped=posix,stdio,hdf5,tfrecord,cuda,uring,waits
results=$data/results

# One run: NAME ENV...; appends "ROUND NAME MAIN WRITER WALL FAULTS" (the
# medians of the epochs after the first).
run() {
  local name=$1
  shift
  rm -rf "$data/trace"
  env "$@" taskset -c "$cpu" "$python" tests/bench/memmap_worker_loop.py "$data/shards" "$epochs" |
    awk -v round="$round" -v name="$name" '
      $1 == "epoch" && ++n > 1 { m[n] = $2; w[n] = $3; t[n] = $4; f[n] = $5 }
      function median(a, k, i, j, v, tmp) {
        k = 0; for (i in a) v[++k] = a[i]
        for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { tmp = v[j]; v[j] = v[j - 1]; v[j - 1] = tmp }
        return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
      }
      END { if (n > 1) print round, name, median(m), median(w), median(t), median(f) }' >>"$results"
}
echo "rounds of $epochs epochs of $samples samples, pinned to CPU $cpu"
for ((round = 0; round < rounds; round++)); do
  kinds=(untraced all no_mapped)
  for ((k = 0; k < 3; k++)); do
    case ${kinds[(round + k) % 3]} in
      untraced) run untraced IOTAP_BENCH=1 ;;
      all) run all LD_PRELOAD="$lib" IOTAP_DIR="$data/trace" ;;
      no_mapped) run no_mapped LD_PRELOAD="$lib" IOTAP_DIR="$data/trace" IOTAP_LAYERS=$all_but_mapped ;;
    esac
  done
done
"$python" - "$results" <<'EOF'
import collections, random, statistics, sys
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r, name, *v = line.split()
    runs[r][name] = [float(x) for x in v]
rounds = [x for x in runs.values() if len(x) == 3]
def ci(v):
    random.seed(20261207)
    m = sorted(statistics.median(random.choices(v, k=len(v))) for _ in range(2000))
    return "%+.1f to %+.1f" % (m[49], m[1950])
print("%d rounds; medians per epoch:" % len(rounds))
for name in ("untraced", "all", "no_mapped"):
    col = lambda k: statistics.median(x[name][k] for x in rounds)
    print("  %-9s main %.1f ms, writer %.1f ms, wall %.1f ms, %.0f faults" % (name, col(0), col(1), col(2), col(3)))
print("paired differences (median, 95% interval), ms per epoch:")
for a, b in (("all", "no_mapped"), ("all", "untraced"), ("no_mapped", "untraced")):
    parts = []
    for k, what in ((0, "main"), (1, "writer"), (2, "wall")):
        d = [x[a][k] - x[b][k] for x in rounds]
        parts.append("%s %+.1f (%s)" % (what, statistics.median(d), ci(d)))
    print("  %s - %s: %s" % (a, b, "; ".join(parts)))
EOF
