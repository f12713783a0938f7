#!/usr/bin/env bash
# Runs one of the six planted-bottleneck jobs under `iotap run` and reports on
# it: what iotap must diagnose, with the cause known in advance (README.md).
#
#   examples/planted/run.sh CASE WORKDIR
#
# CASE is prep-bound, fetch-bound, memmap-cold, tiny-chunks, small-files or clean. The
# data is generated once under WORKDIR/data-CASE; each run writes
# WORKDIR/trace-CASE/ and WORKDIR/report-CASE.{txt,json}, prints the text
# report and exits with iotap report's status. Exit 77: the case cannot run
# here (fetch-bound, memmap-cold and small-files without FUSE or python3-fusepy), with the reason on stderr.
#
# STEP_SOURCES=logs runs the job without --torch-steps, logging its steps
# itself, and reports with each step source other jobs leave (see the end).
#
# IOTAP (default: build/bin/iotap of this checkout, else `iotap` on PATH) and
# PYTHON (default /usr/bin/python3, which must have torch, torchvision and
# h5py) choose the programs.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
if [[ $# -ne 2 ]]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
case_name=$1
work=$2
python=${PYTHON:-/usr/bin/python3}
iotap=${IOTAP:-$root/build/bin/iotap}
[[ -x $iotap ]] || iotap=$(command -v iotap || true)
[[ -n $iotap ]] || { echo "run.sh: no iotap binary (set IOTAP)" >&2; exit 2; }

mkdir -p "$work"
work=$(cd "$work" && pwd)
data=$work/data-$case_name
trace=$work/trace-$case_name
examples=$root/examples
unmount=
fs_pid=

cleanup() {
  if [[ -n $unmount ]]; then
    fusermount -u "$unmount" 2>/dev/null || umount "$unmount" 2>/dev/null || true
  fi
  if [[ -n $fs_pid ]]; then
    kill "$fs_pid" 2>/dev/null || true
    wait "$fs_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT

# Generates the case's data once; a half-written directory from an
# interrupted run is started again.
generate() {
  [[ -e $data/.complete ]] && return
  rm -rf "$data"
  mkdir -p "$data"
  "$python" "$@" >/dev/null
  touch "$data/.complete"
}

# mount_slow SOURCE LATENCY_MS: mounts SOURCE read-only at WORKDIR/mnt-CASE
# through slowfs.py, a FUSE file system that answers every request after
# LATENCY_MS, as network storage does; prints the mount point. Exits 77 where
# FUSE or python3-fusepy is missing.
mount_slow() {
  "$python" -c "import fusepy" 2>/dev/null ||
    { echo "run.sh: $case_name needs python3-fusepy (apt-get install python3-fusepy)" >&2; exit 77; }
  [[ -c /dev/fuse ]] ||
    { echo "run.sh: $case_name needs FUSE, and there is no /dev/fuse here" >&2; exit 77; }
  mnt=$work/mnt-$case_name
  mkdir -p "$mnt"
  fusermount -u "$mnt" 2>/dev/null || umount "$mnt" 2>/dev/null || true
  "$python" "$examples/planted/slowfs.py" "$1" "$mnt" --latency-ms "$2" \
    2>"$work/slowfs.err" &
  fs_pid=$!
  unmount=$mnt
  for _ in $(seq 100); do
    mountpoint -q "$mnt" && break
    kill -0 "$fs_pid" 2>/dev/null || break
    sleep 0.1
  done
  if ! mountpoint -q "$mnt"; then
    echo "run.sh: cannot mount $mnt with slowfs.py (is /dev/fuse there, and may this user mount?): $(cat "$work/slowfs.err")" >&2
    exit 77
  fi
}

case $case_name in
  prep-bound)
    # (a) One worker and an expensive transform (random crops, colour jitter,
    # blur of 160x160 images): preparing a batch takes longer than training
    # on it, and the other core sits idle.
    generate "$examples/imagefolder/train.py" --data "$data/images" --generate-only \
      --images 600 --image-size 160
    job=("$examples/imagefolder/train.py" --data "$data/images" --num-workers 1
         --transform-cost heavy --image-size 160 --batch-size 20)
    ;;
  fetch-bound)
    # (b) Shards of 192 KiB samples on network storage (slowfs.py: every
    # request answered after 1 ms), read in random order after each epoch
    # drops them from the page cache: every read waits for the server.
    generate "$examples/shards/train.py" --data "$data/shards" --generate-only \
      --shards 4 --samples 1024
    mount_slow "$data/shards" 1
    job=("$examples/shards/train.py" --data "$mnt" --evict --epochs 2)
    ;;
  memmap-cold)
    # (f) The fetch-bound shards read through numpy.memmap instead of pread
    # (--mmap), on the same slow storage, evicted before each epoch: every
    # sample is read by page faults that wait for the server, and no system
    # call shows them (issue 15: mapped reads).
    generate "$examples/shards/train.py" --data "$data/shards" --generate-only \
      --shards 4 --samples 1024
    mount_slow "$data/shards" 1
    job=("$examples/shards/train.py" --data "$mnt" --mmap --evict --epochs 2)
    ;;
  tiny-chunks)
    # (c) An HDF5 dataset of 3x80x80 images in chunks of 64 bytes: each
    # sample's H5Dread becomes some three hundred small reads of the file.
    # (At 3x64x64 the one worker kept up with the trainer on some machines:
    # a stall of 8%, where this machine saw 30%.)
    generate "$examples/h5py/train.py" --data "$data/images.h5" --generate-only \
      --samples 1024 --image-size 80 --chunks tiny
    job=("$examples/h5py/train.py" --data "$data/images.h5" --num-workers 1)
    ;;
  small-files)
    # (d) 1000 images of under a kilobyte each, on network storage
    # (slowfs.py: every request answered after 0.2 ms): every open, stat and
    # close is a round trip.
    generate "$examples/imagefolder/train.py" --data "$data/images" --generate-only \
      --images 1000 --image-size 16
    mount_slow "$data/images" 0.2
    job=("$examples/imagefolder/train.py" --data "$mnt" --num-workers 2 --batch-size 50)
    ;;
  clean)
    # (e) Two workers with a light transform keep ahead of a training step
    # that costs more than preparing its batch: nothing to fix.
    generate "$examples/imagefolder/train.py" --data "$data/images" --generate-only \
      --images 1000 --image-size 64
    job=("$examples/imagefolder/train.py" --data "$data/images" --num-workers 2
         --compute-cost heavy --image-size 64)
    ;;
  *)
    echo "run.sh: unknown case '$case_name' (prep-bound, fetch-bound, memmap-cold, tiny-chunks, small-files, clean)" >&2
    exit 2
    ;;
esac

rm -rf "$trace"
if [[ ${STEP_SOURCES:-} != logs ]]; then
  "$iotap" run --torch-steps -o "$trace" -- "$python" "${job[@]}"
  "$iotap" report "$trace" --format json -o "$work/report-$case_name.json"
  "$iotap" report "$trace" -o "$work/report-$case_name.txt"
  cat "$work/report-$case_name.txt"
  exit
fi
# STEP_SOURCES=logs: the job runs without --torch-steps and logs its steps;
# step_sources.py turns the log into the sources other jobs leave, and each
# is reported on: -measured (JSON lines with the waits the loop measured),
# -start-end (JSON lines of compute spans alone) and -tensorboard (one
# TensorBoard scalar per step).
steps=$work/steps-$case_name
"$iotap" run -o "$trace" -- "$python" "${job[@]}" --step-log "$steps.log"
"$python" "$examples/planted/step_sources.py" "$steps.log" "$steps"
for source in measured start-end tensorboard; do
  log=$steps-$source.jsonl
  [[ $source == tensorboard ]] && log=$steps-tensorboard/events.out.tfevents.0.planted
  "$iotap" report "$trace" --steps "$log" --format json -o "$work/report-$case_name-$source.json"
  "$iotap" report "$trace" --steps "$log" -o "$work/report-$case_name-$source.txt"
done
cat "$work/report-$case_name-start-end.txt"
