#!/usr/bin/env bash
# What tracing adds to a fork: the time from os.fork() in a Python parent to
# the child running Python (it writes a byte to a pipe the parent waits on),
# the median of FORKS forks, untraced and under the shim of each BUILD_DIR,
# taken in turn PAIRS times (sittings interleaved, so that the VM's drift
# falls on every side alike). A DataLoader starting its workers, a
# multiprocessing pool, a subprocess-heavy pipeline pay it per process.
#
# The trace directory is on tmpfs (/dev/shm) by default: on ext4 the child's
# new trace file (an inode allocated in a directory) costs as much again and
# varies with what the directory held before. TRACE_ROOT=DIR puts it there.
#
# Usage: tests/bench/run-fork-latency.sh [PAIRS] [FORKS] BUILD_DIR [BUILD_DIR...]
#   tests/bench/run-fork-latency.sh 8 200 build
#   tests/bench/run-fork-latency.sh 8 200 /tmp/old/build build   (two builds)
set -euo pipefail
cd "$(dirname "$0")/../.."
pairs=${1:-8}
forks=${2:-200}
shift 2 || true
builds=("$@")
[[ ${#builds[@]} -gt 0 ]] || builds=(build)
python=${PYTHON:-/usr/bin/python3}
root=${TRACE_ROOT:-/dev/shm}
for b in "${builds[@]}"; do
  [[ -f $b/lib/libiotap.so ]] || { echo "no $b/lib/libiotap.so: build first" >&2; exit 1; }
done
dir=$(mktemp -d "$root/iotap-fork-XXXXXX")
trap 'rm -rf "$dir"' EXIT
loop='
import os, statistics, sys, time
ms = []
for _ in range(int(sys.argv[1])):
    r, w = os.pipe()
    t = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.write(w, b"x")
        os._exit(0)
    os.read(r, 1)
    ms.append((time.perf_counter() - t) * 1e3)
    os.waitpid(pid, 0)
    os.close(r)
    os.close(w)
print("%.3f" % statistics.median(ms))'
printf '%-8s %10s' sitting untraced_ms
for b in "${builds[@]}"; do printf ' %24s' "$b/lib/libiotap.so ms"; done
echo
results=()
for ((i = 1; i <= pairs; i++)); do
  line=$("$python" -c "$loop" "$forks")
  printf '%-8d %10s' "$i" "$line"
  for b in "${builds[@]}"; do
    rm -rf "$dir/trace"
    mkdir -m 700 "$dir/trace"
    v=$(IOTAP_DIR="$dir/trace" LD_PRELOAD="$b/lib/libiotap.so" "$python" -c "$loop" "$forks")
    printf ' %24s' "$v"
    line="$line $v"
  done
  echo
  results+=("$line")
done
printf '%s\n' "${results[@]}" | "$python" -c '
import statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
cols = list(zip(*rows))
print("median of the sittings: untraced %.3f ms" % statistics.median(cols[0]), end="")
for c, name in zip(cols[1:], sys.argv[1:]):
    print("; %s %.3f ms (+%.3f)" % (name, statistics.median(c), statistics.median(c) - statistics.median(cols[0])), end="")
print()' "${builds[@]}"
