#!/usr/bin/env bash
# Reproduces the shim's speed, size and memory figures in the README.
# Each scenario runs traced and untraced runs in pairs in one invocation and
# reports medians (see overhead_harness.cc). Build first (tests/run-all.sh or
# cmake --build build). Usage: tests/bench/run-overhead.sh [BUILD_DIR] [PAIRS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
pairs=${2:-15}
data=$(mktemp -d /tmp/iotap-bench-XXXXXX)
trap 'rm -rf "$data"' EXIT
head -c $((64 << 20)) /dev/urandom >"$data/data.bin"
cat "$data/data.bin" >/dev/null  # into the page cache

run() {
  "$build/bin/overhead_harness" --shim "$build/lib/libiotap.so" --worker "$build/bin/io_worker" \
    --iotap "$build/bin/iotap" --file "$data/data.bin" "$@"
}
# A program that never creates a thread (cat, dd, a DataLoader worker) and
# one whose reads run in threads it created are served differently by Linux
# even untraced, so both are measured.
echo "== pread of 1 byte from the page cache, on the main thread of a program with no other thread (target: at most 40 ns added)"
run --mode pread1 --calls 1000000 --threads main --pairs "$pairs"
echo "== the same in 1 created thread (target: at most 40 ns added)"
run --mode pread1 --calls 1000000 --threads 1 --pairs "$pairs"
echo "== the same with 4 threads (target: per-call cost within 20% of 1 thread; compare cpu)"
run --mode pread1 --calls 1000000 --threads 4 --pairs "$pairs"
echo "== 1,000,000 sequential 4 KiB reads on the main thread (target: at most 1.5 bytes/event, none dropped)"
run --mode read4k --calls 1000000 --threads main --pairs 5
echo "== the same in 1 created thread"
run --mode read4k --calls 1000000 --threads 1 --pairs 5
echo "== 10,000,000 events (target: RSS growth under 16 MiB)"
run --mode pread1 --calls 10000000 --threads 1 --pairs 3
if [[ -x "$build/bin/cuda_copy_worker" ]]; then
  # The CUDA copy wrappers, against the test doubles (no GPU involved).
  cuda() {
    "$build/bin/overhead_harness" --shim "$build/lib/libiotap.so" \
      --worker "$build/bin/cuda_copy_worker" --iotap "$build/bin/iotap" \
      --file "$build/bin/cuda_copy_worker" --calls 1000000 --threads 1 --pairs "$pairs" "$@"
  }
  echo "== cudaMemcpyAsync, pinned, 1000 pinned ranges (target: at most 100 ns added)"
  cuda --mode runtime-pinned
  echo "== cudaMemcpyAsync, pageable (target: at most 100 ns added)"
  cuda --mode runtime-pageable
  echo "== cuMemcpyHtoDAsync through cuGetProcAddress, pinned (target: at most 100 ns added)"
  cuda --mode driver-proc
fi

echo "== H5Dread of a cached 64-byte row (target: the wrapper adds at most 1 us per call)"
"$build/bin/overhead_harness" --shim "$build/lib/libiotap.so" --worker "$build/bin/hdf5_worker" \
  --iotap "$build/bin/iotap" --file "$data/rows.h5" --mode h5dread --calls 200000 --pairs "$pairs"
# The waits layer (poll, select, epoll, semaphores, conditions) in a PyTorch
# DataLoader epoch: the same epoch traced with and without it, 2 workers of
# each start method and none. Needs /usr/bin/python3 with torch.
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  for workers in "fork 2" "spawn 2" "fork 0"; do
    set -- $workers
    echo "== a DataLoader epoch, $2 workers ($1), waits layer on vs off (target: at most 2% added)"
    "$build/bin/overhead_harness" --shim "$build/lib/libiotap.so" \
      --worker tests/bench/dataloader_epoch.py --iotap "$build/bin/iotap" --file "$data/samples" \
      --mode "$1" --calls 2048 --threads "$2" --pairs "$pairs" \
      --baseline-layers posix,stdio,hdf5,tfrecord,cuda
  done
fi
# TFRecord attribution: the same 256 KiB reads traced with and without the
# TFRecord layer, for records of 100 KiB (images), 10 KiB and 1 KiB.
for record in 102400 10240 1024; do
  "$build/bin/io_worker" make-tfrecord "$data/r$record.tfrecord" $((64 << 20)) "$record"
  cat "$data/r$record.tfrecord" >/dev/null
  echo "== 256 KiB reads of $record-byte TFRecord records, TFRecord layer on vs off (target: at most 10% added)"
  run --file "$data/r$record.tfrecord" --mode read256k --calls 20000 --threads 1 --pairs "$pairs" \
    --baseline-layers posix,stdio,hdf5,cuda
done
