#!/usr/bin/env bash
# The cluster-scale analysis's benchmark (issue 17): `mpirun -np N iotap
# report` against one process. Not a test: nothing here fails on time. The
# machine is shared: every line says the load, and figures are medians.
#
# Usage: tests/bench/run-analyzer-cluster.sh [BUILD_DIR] MODE [RUNS]
#   ranks  N=1 (one process) against N=2 ranks on the 100-million-event job
#          of run-analyzer-scale.sh, RUNS interleaved pairs: wall time, CPU
#          time, peak RSS per rank; the ratio of median wall times.
#   merge  the merge alone (IOTAP_MPI_TIMES: the ranks wait for each other
#          after reading, then merge up the tree) for N = 2, 4, 8, 16, 32, 64
#          ranks (oversubscribed) on a cluster-shaped job: 64 hosts x 8
#          trainers x 8 workers (4,608 processes), IOTAP_CLUSTER_EVENTS events
#          (default 100 million) over 120 s; rank 0's merge time, the
#          largest rank's peak RSS, the largest partial sent (of it, busy-time
#          bitmaps, series and the trainer groups' results) and rank 0's
#          merged bitmaps and series in memory (IOTAP_MPI_TIMES's notes).
#   share  one rank's share of the 1-billion-event cluster job at N=16 (the
#          groups of 32 of its 512 trainers: generate_traces --part=0/16),
#          read as that rank would: time, CPU, peak RSS.
#   whole  the whole 1-billion-event cluster job (7.5 GiB of traces, written
#          in 16 parts) on IOTAP_CLUSTER_RANKS (default 16) ranks: wall, CPU,
#          rank 0's merge time, the largest rank's and rank 0's peak RSS;
#          with IOTAP_CLUSTER_ONE=1 also one process, and whether its report
#          is the ranks' byte for byte.
# Environment: IOTAP_SCALE_DIR (default /tmp/iotap-scale) holds the traces;
# IOTAP_CLUSTER_RANKS (default "2 4 8 16 32 64") the rank counts of merge;
# MPIRUN (default mpirun) with MPIRUN_FLAGS (default --oversubscribe
# --allow-run-as-root).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
mode=${2:-ranks}
runs=${3:-3}
iotap=$build/bin/iotap
root=${IOTAP_SCALE_DIR:-/tmp/iotap-scale}
mpirun=${MPIRUN:-mpirun}
read -r -a mpiflags <<<"${MPIRUN_FLAGS:---oversubscribe --allow-run-as-root}"
[[ -x $iotap && -x $build/bin/generate_traces ]] || { echo "build first: $iotap, generate_traces" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 1; }
out=$(mktemp -d /tmp/iotap-cluster-run-XXXXXX)
trap 'rm -rf "$out"' EXIT
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
load() { cut -d' ' -f1 /proc/loadavg; }

# generate NAME ARGS...: the traces of generate_traces ARGS, kept under
# $root while the generator and its arguments stay the same.
generate() {
  local key
  key=$( { cat "$build/bin/generate_traces"; echo "$*"; } | sha256sum | cut -c1-16)
  traces=$root/$key
  if [[ ! -f $traces/.complete ]]; then
    rm -rf "$traces"
    mkdir -p "$traces"
    echo "generating: generate_traces $traces $*" >&2
    "$build/bin/generate_traces" "$traces" "$@" >&2
    echo "$*" >"$traces/.complete"
  fi
  echo "traces: $traces ($(find "$traces" -name '*.iotap' | wc -l) files, $(du -sh "$traces" | cut -f1))" >&2
  cat "$traces"/*.iotap >/dev/null  # the page cache: measure the analysis, not the disk
}

# timed FILE COMMAND...: runs COMMAND under GNU time into FILE (wall user sys rss).
timed() { local f=$1; shift; /usr/bin/time -f '%e %U %S %M' -o "$f" "$@"; }

case $mode in
ranks)
  generate --processes=1000 --events=100000000
  printf '%-4s %-6s %8s %8s %10s %s\n' run ranks wall_s cpu_s rss_MiB "load"
  for ((i = 1; i <= runs; ++i)); do
    for n in 1 2; do
      l=$(load)
      if [[ $n == 1 ]]; then
        timed "$out/t.$n.$i" "$iotap" report "$traces" --format json -o "$out/r.$n.json"
        rss=$(cut -d' ' -f4 "$out/t.$n.$i")
      else
        IOTAP_MPI_TIMES=1 timed "$out/t.$n.$i" "$mpirun" "${mpiflags[@]}" -np "$n" \
          -x IOTAP_MPI_TIMES "$iotap" report "$traces" --format json -o "$out/r.$n.json" \
          2>"$out/e.$n.$i"
        rss=$(grep -o 'max_rss_kib=[0-9]*' "$out/e.$n.$i" | cut -d= -f2 | sort -g | tail -1)
        grep iotap-mpi-times "$out/e.$n.$i" | sed 's/^/     /'
      fi
      read -r wall user sys _ <"$out/t.$n.$i"
      awk -v i="$i" -v n="$n" -v w="$wall" -v c="$(echo "$user + $sys" | bc)" -v r="$rss" -v l="$l" \
        'BEGIN { printf "%-4d %-6d %8.2f %8.2f %10.0f %s\n", i, n, w, c, r / 1024, l }'
      echo "$wall" >>"$out/wall.$n"
    done
    cmp -s "$out/r.1.json" "$out/r.2.json" || { echo "N=2's report differs from one process's" >&2; exit 1; }
  done
  w1=$(median <"$out/wall.1"); w2=$(median <"$out/wall.2")
  awk -v a="$w1" -v b="$w2" -v n="$runs" 'BEGIN {
    printf "median of %d: one process %.2f s, 2 ranks %.2f s: ratio %.2f (target <= 0.60)\n", n, a, b, b / a }'
  ;;
merge)
  events=${IOTAP_CLUSTER_EVENTS:-100000000}
  generate --processes=4608 --ranks=512 --hosts=64 --events="$events" --duration-s=120
  printf '%-6s %9s %9s %12s %12s %26s %14s %s\n' ranks merge_s read_s max_rss_MiB \
    rank0_rss_MiB "max_partial_MiB (b/s/r)" rank0_state_MiB "load (median of $runs)"
  for n in ${IOTAP_CLUSTER_RANKS:-2 4 8 16 32 64}; do
    : >"$out/merge.$n"
    for ((i = 1; i <= runs; ++i)); do
      l=$(load)
      IOTAP_MPI_TIMES=1 "$mpirun" "${mpiflags[@]}" -np "$n" -x IOTAP_MPI_TIMES \
        "$iotap" report "$traces" --format json -o "$out/m.json" 2>"$out/e"
      merge=$(grep 'rank=0 ' "$out/e" | grep -o ' merge=[0-9.e-]*' | cut -d= -f2)
      read=$(grep -o ' read=[0-9.e-]*' "$out/e" | cut -d= -f2 | sort -g | tail -1)
      rss=$(grep -o 'max_rss_kib=[0-9]*' "$out/e" | cut -d= -f2 | sort -g | tail -1)
      echo "$merge $read $rss $l" >>"$out/merge.$n"
    done
    # The last run's sizes (they do not vary): the largest partial sent,
    # and rank 0's merged state.
    mib() { awk '{ printf "%.1f", $1 / 1048576 }'; }
    big=$(grep -o 'sent_bytes=[0-9]* (bitmaps=[0-9]* series=[0-9]* results=[0-9]*' "$out/e" |
      tr -dc '0-9 \n' | sort -k1,1g | tail -1)
    read -r sent sent_b sent_s sent_r <<<"$big"
    r0=$(grep 'rank=0 ' "$out/e")
    r0_rss=$(grep -o 'max_rss_kib=[0-9]*' <<<"$r0" | cut -d= -f2)
    r0_state=$(( $(grep -o 'merged_bitmaps_bytes=[0-9]*' <<<"$r0" | cut -d= -f2) +
      $(grep -o 'merged_series_bytes=[0-9]*' <<<"$r0" | cut -d= -f2) ))
    printf '%-6d %9.3f %9.2f %12.0f %12.0f %26s %14s %s\n' "$n" \
      "$(cut -d' ' -f1 "$out/merge.$n" | median)" "$(cut -d' ' -f2 "$out/merge.$n" | median)" \
      "$(cut -d' ' -f3 "$out/merge.$n" | median | awk '{ printf "%.0f", $1 / 1024 }')" \
      "$(awk -v k="$r0_rss" 'BEGIN { printf "%.0f", k / 1024 }')" \
      "$(mib <<<"$sent") ($(mib <<<"$sent_b")/$(mib <<<"$sent_s")/$(mib <<<"$sent_r"))" \
      "$(mib <<<"$r0_state")" \
      "$(cut -d' ' -f4 "$out/merge.$n" | tr '\n' ' ')"
  done
  ;;
share)
  generate --processes=4608 --ranks=512 --hosts=64 --events=1000000000 --duration-s=120 --part=0/16
  printf '%-4s %8s %8s %10s %s\n' run wall_s cpu_s rss_MiB "load"
  for ((i = 1; i <= runs; ++i)); do
    l=$(load)
    timed "$out/t.$i" "$iotap" report "$traces" --format json -o "$out/s.json"
    read -r wall user sys rss <"$out/t.$i"
    events=$(grep -m1 '"events":' "$out/s.json" | tr -dc '0-9')
    awk -v i="$i" -v w="$wall" -v c="$(echo "$user + $sys" | bc)" -v r="$rss" -v l="$l" -v e="$events" \
      'BEGIN { printf "%-4d %8.2f %8.2f %10.0f %s   (%d events: %.2f M/CPU-s)\n", i, w, c, r / 1024, l, e, e / c / 1e6 }'
  done
  ;;
whole)
  # The whole 1-billion-event cluster job (7.5 GiB), written part by part
  # (generate_traces --part=K/16) into one directory.
  args=(--processes=4608 --ranks=512 --hosts=64 --events=1000000000 --duration-s=120)
  key=$( { cat "$build/bin/generate_traces"; echo "${args[*]}"; } | sha256sum | cut -c1-16)
  traces=$root/whole-$key
  if [[ ! -f $traces/.complete ]]; then
    rm -rf "$traces"
    mkdir -p "$traces"
    for ((k = 0; k < 16; ++k)); do
      echo "generating part $k/16" >&2
      "$build/bin/generate_traces" "$traces" "${args[@]}" --part=$k/16 >&2
    done
    echo "${args[*]}" >"$traces/.complete"
  fi
  echo "traces: $traces ($(find "$traces" -name '*.iotap' | wc -l) files, $(du -sh "$traces" | cut -f1))" >&2
  n=${IOTAP_CLUSTER_RANKS:-16}
  printf '%-4s %-6s %8s %8s %9s %14s %14s %s\n' run ranks wall_s cpu_s merge_s max_rss_MiB rank0_rss_MiB load
  for ((i = 1; i <= runs; ++i)); do
    l=$(load)
    IOTAP_MPI_TIMES=1 timed "$out/t.$i" "$mpirun" "${mpiflags[@]}" -np "$n" -x IOTAP_MPI_TIMES \
      "$iotap" report "$traces" --format json -o "$out/w.$n.json" 2>"$out/e.$i"
    read -r wall user sys _ <"$out/t.$i"
    r0=$(grep 'rank=0 ' "$out/e.$i")
    awk -v i="$i" -v n="$n" -v w="$wall" -v c="$(echo "$user + $sys" | bc)" -v l="$l" \
      -v m="$(grep -o ' merge=[0-9.e-]*' <<<"$r0" | cut -d= -f2)" \
      -v r="$(grep -o 'max_rss_kib=[0-9]*' "$out/e.$i" | cut -d= -f2 | sort -g | tail -1)" \
      -v r0="$(grep -o 'max_rss_kib=[0-9]*' <<<"$r0" | cut -d= -f2)" \
      'BEGIN { printf "%-4d %-6d %8.2f %8.2f %9.3f %14.0f %14.0f %s\n", i, n, w, c, m, r / 1024, r0 / 1024, l }'
  done
  if [[ ${IOTAP_CLUSTER_ONE:-0} == 1 ]]; then  # and one process, for the same report (about 8 GiB)
    timed "$out/t.one" "$iotap" report "$traces" --format json -o "$out/w.1.json"
    read -r wall user sys rss <"$out/t.one"
    echo "one process: $wall s wall, $(echo "$user + $sys" | bc) CPU-s, $((rss / 1024)) MiB;" \
      "the same report as $n ranks: $(cmp -s "$out/w.1.json" "$out/w.$n.json" && echo yes || echo NO)"
  fi
  ;;
*) echo "mode: ranks, merge, share or whole" >&2; exit 1 ;;
esac
