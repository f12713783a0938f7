#!/usr/bin/env bash
# `iotap top` following a large job as it runs (issue 20): 1,000 trace files
# growing at N million events per second in total, followed with at most one
# core and 512 MiB.
#
# Per rate: generates the scale generator's job (generate_traces --flush-s=1:
# each process's frames hold a second of its events, as the shim flushes) of
# DURATION_S seconds at that many events per second, once, then RUNS times
# writes it again as it would grow (grow_traces: each file appears when its
# process starts and gains each frame when its last event has ended, on the
# wall clock of now) while `iotap top DIR` follows it, its lines read as they
# come. Per run and as medians it prints:
# - the events per second written (over the job, and over its second half,
#   when every worker runs);
# - top's CPU (user + system) as a fraction of one core, over its whole run
#   and over the job after WARMUP_S (the window full, every worker running);
# - top's peak RSS (VmHWM);
# - whether it kept up: the largest delay, after WARMUP_S, between a line's
#   window end and the wall clock when the line came, and the events it
#   counted late (left out). A window ends at the last whole second of the
#   run before now minus the lag, so a refresh that takes no time shows one
#   lag to lag + 1 s behind (where in that second depends on when top
#   started); it keeps up while the delay stays under lag + 2 s (no refresh
#   falls a whole refresh behind) and no event comes late.
# Everything runs under `nice -n 19` (the machine may be shared). Not a test:
# nothing here fails on time. The traces are removed when done (KEEP=1 keeps
# the generated ones, for another run at the same rate).
#
# Usage: tests/bench/run-top-follow.sh [BUILD_DIR] [RATE...]
#   tests/bench/run-top-follow.sh build 1000000 3000000
# Environment: RUNS (3), DURATION_S (40), WARMUP_S (15), PROCESSES (1000),
# LAG_S (2), IOTAP_FOLLOW_DIR (/tmp/iotap-top-follow), LIMIT_MIB (4096: top's
# address space, so that a top far behind a fast writer fails alone rather
# than taking the machine's memory).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
shift $(($# < 1 ? $# : 1))
rates=("$@")
[[ ${#rates[@]} -gt 0 ]] || rates=(1000000 3000000 10000000)
runs=${RUNS:-3}
duration=${DURATION_S:-40}
warmup=${WARMUP_S:-15}
processes=${PROCESSES:-1000}
lag=${LAG_S:-2}
limit_mib=${LIMIT_MIB:-4096}
root=${IOTAP_FOLLOW_DIR:-/tmp/iotap-top-follow}
for bin in iotap generate_traces grow_traces; do
  [[ -x $build/bin/$bin ]] || { echo "build first: $build/bin/$bin is needed" >&2; exit 1; }
done
mkdir -p "$root"
out=$root/out
top_pid=
grow_pid=
cleanup() {
  [[ -n $top_pid ]] && kill "$top_pid" 2>/dev/null || true
  [[ -n $grow_pid ]] && kill "$grow_pid" 2>/dev/null || true
  rm -rf "$root/grow"
  [[ ${KEEP:-0} == 1 ]] || rm -rf "$root"
}
trap cleanup EXIT
ticks=$(getconf CLK_TCK)
# top's CPU seconds so far ("nan" once it has died).
cpu_s() { awk -v t="$ticks" '{ print ($14 + $15) / t }' "/proc/$1/stat" 2>/dev/null || echo nan; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for rate in "${rates[@]}"; do
  stage=$root/stage-$processes-$rate-$duration
  if [[ ! -f $stage/.complete ]]; then
    rm -rf "$stage"
    echo "generating: generate_traces $stage --processes=$processes --events=$((rate * duration)) --duration-s=$duration --flush-s=1"
    nice -n 19 "$build/bin/generate_traces" "$stage" --processes="$processes" \
      --events=$((rate * duration)) --duration-s="$duration" --flush-s=1 >/dev/null
    touch "$stage/.complete"
  fi
  cat "$stage"/*.iotap >/dev/null  # into the page cache: the writer should cost little
  mkdir -p "$out"
  rm -f "$out/all"
  echo "rate $rate events/s: $(find "$stage" -name '*.iotap' | wc -l) files, $(du -sh "$stage" | cut -f1)"
  printf '%-4s %12s %12s %9s %9s %8s %10s %6s %6s %s\n' run events/s 2nd_half/s cpu_all cpu_steady \
    rss_MiB max_delay_s late lines load
  for ((i = 1; i <= runs; ++i)); do
    rm -rf "$root/grow"
    mkdir -p "$root/grow"
    load=$(cut -d' ' -f1 /proc/loadavg)
    # top's lines, each with the wall clock when it came.
    (ulimit -v $((limit_mib * 1024)) && exec nice -n 19 "$build/bin/iotap" top "$root/grow" --lag "$lag") \
      > >(while IFS= read -r line; do echo "$EPOCHREALTIME $line"; done >"$out/lines") \
      2>"$out/top.err" &
    top_pid=$!
    top_start=$EPOCHREALTIME
    rm -f "$out/grow"  # not the last run's origin
    nice -n 19 "$build/bin/grow_traces" "$stage" "$root/grow" --duration-s="$duration" \
      >"$out/grow" &
    grow_pid=$!
    until grep -q origin_unix_ns "$out/grow" 2>/dev/null; do sleep 0.1; done
    origin=$(sed -n 's/^origin_unix_ns=//p' "$out/grow")
    # The steady part: from WARMUP_S into the job to its end.
    sleep "$(awk -v o="$origin" -v w="$warmup" -v n="$EPOCHREALTIME" 'BEGIN { d = o / 1e9 + w - n; print (d > 0 ? d : 0) }')"
    hwm() { awk '/^VmHWM/ { print $2 }' "/proc/$top_pid/status" 2>/dev/null || echo 0; }
    steady_cpu0=$(cpu_s "$top_pid")
    steady_t0=$EPOCHREALTIME
    rss_kib=$(hwm)
    wait "$grow_pid"
    grow_pid=
    steady_cpu1=$(cpu_s "$top_pid")
    steady_t1=$EPOCHREALTIME
    sleep $((lag + 2))  # the last windows
    all_cpu=$(cpu_s "$top_pid")
    all_t=$EPOCHREALTIME
    rss_kib=$(hwm)
    kill -TERM "$top_pid" 2>/dev/null || true
    status=0
    wait "$top_pid" || status=$?
    top_pid=
    sleep 0.2  # the line reader's last line
    read -r events_per_s half_per_s < <(sed -n \
      's/.*events_per_s=\([0-9]*\) second_half_events_per_s=\([0-9]*\).*/\1 \2/p' "$out/grow")
    if [[ $status != 0 ]]; then
      # Died before the end: most likely out of its address space, far behind.
      printf '%-4d %12s %12s   iotap top died (status %s: %s) after %d lines; load %s\n' "$i" \
        "$events_per_s" "$half_per_s" "$status" "$(tail -1 "$out/top.err")" \
        "$(grep -c t_s= "$out/lines" || true)" "$load"
      echo "died" >>"$out/all"
      continue
    fi
    late=$(sed -n 's/^iotap top: \([0-9]*\) events came after.*/\1/p' "$out/top.err")
    late=${late:-0}
    read -r delay lines < <(awk -v o="$origin" -v w="$warmup" '
      { t = ""; for (k = 2; k <= NF; ++k) if ($k ~ /^t_s=/) t = substr($k, 5)
        if (t == "") next
        n++
        if (t + 0 >= w) { d = $1 - (o / 1e9 + t); if (d > m) m = d } }
      END { printf "%.2f %d\n", m, n }' "$out/lines")
    cpu_all=$(awk -v c="$all_cpu" -v a="$top_start" -v b="$all_t" 'BEGIN { printf "%.3f", c / (b - a) }')
    cpu_steady=$(awk -v c0="$steady_cpu0" -v c1="$steady_cpu1" -v a="$steady_t0" -v b="$steady_t1" \
      'BEGIN { printf "%.3f", (c1 - c0) / (b - a) }')
    printf '%-4d %12s %12s %9s %9s %8.0f %10s %6s %6s %s\n' "$i" "$events_per_s" "$half_per_s" \
      "$cpu_all" "$cpu_steady" "$((rss_kib / 1024))" "$delay" "$late" "$lines" "$load"
    echo "$events_per_s $half_per_s $cpu_all $cpu_steady $rss_kib $delay $late" >>"$out/all"
  done
  died=$(grep -c '^died' "$out/all" || true)
  if [[ $died == "$runs" ]]; then
    echo "at $rate events/s: iotap top died in all $runs runs (LIMIT_MIB=$limit_mib): NOT met"
  else
    grep -v '^died' "$out/all" >"$out/kept"
    col() { cut -d' ' -f"$1" "$out/kept" | median; }
    awk -v r="$rate" -v e="$(col 1)" -v h="$(col 2)" -v ca="$(col 3)" -v cs="$(col 4)" \
      -v m="$(col 5)" -v d="$(col 6)" -v l="$(col 7)" -v n="$((runs - died))" -v x="$died" \
      -v lag="$lag" 'BEGIN {
      printf "median of %d at %d events/s (%d more died): written %.0f events/s (%.0f in the " \
             "second half); top: %.2f of a core (%.2f after warm-up), peak RSS %.0f MiB, " \
             "max delay %.2f s, %d late events\n", n, r, x, e, h, ca, cs, m / 1024, d, l
      printf "target (1 core, 512 MiB, delay < lag + 2 refreshes = %d s, no late events): %s\n",
             lag + 2, (x == 0 && cs <= 1 && m <= 524288 && d < lag + 2 && l == 0) ? "met" : "NOT met"
    }'
  fi
  rm -rf "$root/grow"
  [[ ${KEEP:-0} == 1 ]] || rm -rf "$stage"
done
echo "command: tests/bench/run-top-follow.sh $build ${rates[*]} (RUNS=$runs DURATION_S=$duration WARMUP_S=$warmup PROCESSES=$processes LAG_S=$lag)"
