#!/usr/bin/env bash
# The cost of the mapped-read layer (issue 15), as the README gives it:
#   1. a page fault in a file mapping, sampled (perf_event_open) vs untraced:
#      bench/fault_worker.c touching every page of a 64 MiB cached file with
#      MADV_RANDOM (each fault still maps 16 pages or more: fault-around),
#      per fault the thread counted, in the file's order
#      (FAULT_ORDER=random: shuffled; FAULT_MIB=N: an N MiB file); what the
#      faulting thread pays, and what the whole process's CPU does, the
#      writer's draining of the samples included (FAULTS_ONLY=1: this part
#      alone);
#   2. an epoch of examples/shards/train.py --mmap (a DataLoader over
#      numpy.memmap, 2 workers) from a warm page cache, traced vs untraced.
# Runs alternate traced and untraced, in PAIRS pairs; prints each pair and
# the median of the differences (with a bootstrap 95% interval for the
# epoch's). PAIRS_FILE=F appends each pair's epochs to F ("untraced_s
# traced_s"), and the median is then also given over every pair in F, so
# that sittings can be pooled. Usage:
#   tests/bench/run-mapped-overhead.sh [BUILD_DIR] [PAIRS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bench/memmap-epoch.sh
build=${1:-build}
pairs=${2:-9}
python=${PYTHON:-/usr/bin/python3}
data=$(mktemp -d /tmp/iotap-mapped-bench-XXXXXX)
trap 'rm -rf "$data"' EXIT
head -c $((64 << 20)) /dev/urandom >"$data/data.bin"
cat "$data/data.bin" >/dev/null
worker=$data/fault_worker
cc -O2 -o "$worker" tests/bench/fault_worker.c

# FAULT_ORDER=random touches the pages in a shuffled order, FAULT_MIB=1024
# maps a larger file: with both, nearly every fault falls in a page table of
# its own (the writer's costliest case).
fault_order=${FAULT_ORDER:-sequential}
fault_mib=${FAULT_MIB:-64}
if ((fault_mib != 64)); then
  head -c $((fault_mib << 20)) /dev/urandom >"$data/faults.bin"
  cat "$data/faults.bin" >/dev/null
else
  ln -s data.bin "$data/faults.bin"
fi
fault_rounds=$((fault_mib >= 256 ? 1 : 256 / fault_mib))
echo "== a sampled page fault ($fault_order order, $fault_mib MiB; target: at most 1.5 us added)"
diffs=(); cpu_diffs=()
# One run, with ENV...: "THREAD_NS CPU_NS" per fault, and pages per fault.
fault_run() {
  rm -rf "$data/trace"
  env "$@" "$worker" "$data/faults.bin" "$fault_rounds" "$fault_order" |
    awk '$1 == "ns_per_fault" {t = $2} $1 == "cpu_ns_per_fault" {c = $2}
         $1 == "pages_per_fault" {p = $2} END {print t, c, p}'
}
fault_plain() { read -r plain plain_cpu plain_pages < <(fault_run); }
fault_traced() {
  read -r traced traced_cpu traced_pages < <(fault_run IOTAP_DIR="$data/trace" LD_PRELOAD="$build/lib/libiotap.so")
}
for ((i = 0; i < pairs; i++)); do
  # Which runs first alternates, as the epochs' pairs do below.
  if ((i % 2 == 0)); then fault_plain; fault_traced; else fault_traced; fault_plain; fi
  echo "  pair $i: the faulting thread untraced $plain ns/fault, traced $traced; the process's CPU untraced $plain_cpu ns/fault, traced $traced_cpu; pages per fault $plain_pages, $traced_pages"
  diffs+=("$(echo "$traced - $plain" | bc -l)")
  cpu_diffs+=("$(echo "$traced_cpu - $plain_cpu" | bc -l)")
done
echo "  median added to the faulting thread: $(printf '%s\n' "${diffs[@]}" | median) ns/fault"
echo "  median added to the process's CPU (the writer's draining included): $(printf '%s\n' "${cpu_diffs[@]}" | median) ns/fault"
[[ ${FAULTS_ONLY:-0} == 1 ]] && exit 0

echo "== a warm-cache epoch of a numpy.memmap DataLoader (target: at most 3% slower)"
memmap_epoch_job "$python" "$data" "${SAMPLES:-512}"
# The epoch as the job times it (epoch_of) and the whole job's wall time
# (Python's start-up and import of torch, traced too, included).
epochs=(); jobs=(); cpus=(); plain_epochs=(); traced_epochs=()
# CPU seconds (user + system) of the whole job, its workers and the tracer
# included: steadier than wall time on a shared VM.
cpu_of() { awk '{print $1 + $2}' "$data/cpu"; }
run_plain() {
  local t0; t0=$(date +%s.%N)
  plain_epoch=$(/usr/bin/time -o "$data/cpu" -f '%U %S' "${job[@]}" | epoch_of)
  plain=$(echo "$(date +%s.%N) - $t0" | bc -l); plain_cpu=$(cpu_of)
}
run_traced() {
  rm -rf "$data/trace"
  local t0; t0=$(date +%s.%N)
  traced_epoch=$(/usr/bin/time -o "$data/cpu" -f '%U %S' \
    "$build/bin/iotap" run --quiet -o "$data/trace" -- "${job[@]}" 2>/dev/null | epoch_of)
  traced=$(echo "$(date +%s.%N) - $t0" | bc -l); traced_cpu=$(cpu_of)
}
for ((i = 0; i < pairs; i++)); do
  # Which runs first alternates, so that neither side always follows the
  # other (the first run of a pair was seen to run slower on this VM).
  if ((i % 2 == 0)); then run_plain; run_traced; else run_traced; run_plain; fi
  echo "  pair $i: epoch untraced ${plain_epoch}s, traced ${traced_epoch}s; job untraced ${plain}s, traced ${traced}s; job CPU untraced ${plain_cpu}s, traced ${traced_cpu}s"
  epochs+=("$(echo "($traced_epoch / $plain_epoch - 1) * 100" | bc -l)")
  plain_epochs+=("$plain_epoch"); traced_epochs+=("$traced_epoch")
  [[ -n ${PAIRS_FILE:-} ]] && echo "$plain_epoch $traced_epoch" >>"$PAIRS_FILE"
  jobs+=("$(echo "($traced / $plain - 1) * 100" | bc -l)")
  cpus+=("$(echo "($traced_cpu / $plain_cpu - 1) * 100" | bc -l)")
done
echo "  median added to the epoch: $(printf '%s\n' "${epochs[@]}" | median_pct)% (95% interval $(printf '%s\n' "${epochs[@]}" | median_ci))"
if [[ -n ${PAIRS_FILE:-} ]]; then
  pooled=$(awk '$1 > 0 {print ($2 / $1 - 1) * 100}' "$PAIRS_FILE")
  echo "  pooled over the $(wc -l <"$PAIRS_FILE") pairs of $PAIRS_FILE: median added $(median_pct <<<"$pooled")% (95% interval $(median_ci <<<"$pooled"))"
fi
# The fastest epoch of each side: noise on a shared machine only adds time.
fastest() { sort -g | head -1; }
fast_plain=$(printf '%s\n' "${plain_epochs[@]}" | fastest)
fast_traced=$(printf '%s\n' "${traced_epochs[@]}" | fastest)
echo "  fastest epoch: untraced ${fast_plain}s, traced ${fast_traced}s ($(echo "($fast_traced / $fast_plain - 1) * 100" | bc -l | xargs printf '%+.1f')%)"
echo "  median added to the whole job (start-up included): $(printf '%s\n' "${jobs[@]}" | median_pct)%"
echo "  median added to the whole job's CPU time: $(printf '%s\n' "${cpus[@]}" | median_pct)%"
