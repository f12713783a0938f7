#!/usr/bin/env bash
# Runs every libFuzzer fuzzer of a fuzz build (IOTAP_FUZZ=ON, the `asan`
# preset) for SECONDS each, from its seeds in tests/fuzz/corpus/NAME (with
# the dictionary tests/fuzz/NAME.dict where there is one), and prints what
# each did: CPU time, executions, executions per second, coverage
# (libFuzzer's `cov`: edges reached; `ft`: features) and the outcome.
#
# Usage: tests/fuzz/run-fuzzers.sh [--build DIR] [--only NAME] [--jobs N]
#                                  [--cpu] [--work DIR] SECONDS
#   --build DIR   the fuzz build (default: build-asan)
#   --only NAME   one fuzzer (e.g. trace_reader_fuzzer)
#   --jobs N      run N fuzzers at once (default 1); each is one process
#   --cpu         SECONDS of CPU time each rather than of wall-clock time
#                 (on a busy machine a fuzzer gets less than a core)
#   --work DIR    where corpora grown by the run, logs and crash inputs go
#                 (default: DIR/fuzz-work); emptied first
# Exit status: 0 if no fuzzer found a crash, leak, hang or sanitizer report.
# Fuzzers run under `nice`: the machine stays usable for everything else.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="build-asan"
only=""
jobs=1
cpu=0
work=""
while (( $# > 1 )) || [[ "${1:-}" == --cpu ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --cpu) cpu=1; shift ;;
    --work) work="$2"; shift 2 ;;
    *) echo "run-fuzzers.sh: unknown option $1" >&2; exit 1 ;;
  esac
done
if (( $# != 1 )) || ! [[ "$1" =~ ^[0-9]+$ ]]; then
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 1
fi
seconds="$1"
work="${work:-$build/fuzz-work}"

fuzzers=()
for bin in "$build"/bin/*_fuzzer; do
  [[ -x "$bin" ]] || continue
  name="$(basename "$bin")"
  [[ -z "$only" || "$name" == "$only" ]] && fuzzers+=("$name")
done
if (( ${#fuzzers[@]} == 0 )); then
  echo "run-fuzzers.sh: no fuzzer${only:+ named $only} in $build/bin (configure with --preset asan)" >&2
  exit 1
fi

# One fuzzer: its corpus starts from the committed seeds; what it learns
# goes to its work directory, never into the source tree.
run_one() {
  local name="$1" dir="$work/$1"
  rm -rf "$dir"
  mkdir -p "$dir/corpus"
  local seeds="$root/tests/fuzz/corpus/$name"
  [[ -d "$seeds" ]] || seeds=""
  # A fuzzer's dictionary, if it has one (tests/fuzz/NAME.dict).
  local dict=()
  [[ -f "$root/tests/fuzz/$name.dict" ]] && dict=(-dict="$root/tests/fuzz/$name.dict")
  # The subshell's `times` gives the fuzzer's own CPU time (its children's).
  (
    set +e
    limit="$seconds"
    (( cpu )) && limit=0
    nice -n 10 "$build/bin/$name" -max_total_time="$limit" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$dir/" "${dict[@]}" \
      "$dir/corpus" $seeds >"$dir/log" 2>&1 &
    pid=$!
    if (( cpu )); then
      # SIGUSR1 makes libFuzzer finish the input at hand, print its
      # statistics and exit 0.
      ticks=$(getconf CLK_TCK)
      while kill -0 "$pid" 2>/dev/null; do
        used=$(awk -v t="$ticks" '{ print int(($14 + $15) / t) }' "/proc/$pid/stat" 2>/dev/null || echo 0)
        if (( used >= seconds )); then
          kill -USR1 "$pid"
          break
        fi
        sleep 2
      done
    fi
    wait "$pid"
    echo $? >"$dir/status"
    times >"$dir/times"
  )
}

summary() {
  local name="$1" dir="$work/$1"
  local status cpu execs rate cov ft corp outcome
  status=$(cat "$dir/status")
  # `times` prints the shell's, then its children's, user and system time,
  # e.g. "9m58.1s 0m1.2s".
  cpu=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
               printf "%.0f", t }' "$dir/times")
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$dir/log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$dir/log" | tail -1 | cut -d' ' -f2)
  corp=$(find "$dir/corpus" -type f | wc -l)
  if [[ "$status" == 0 ]]; then
    outcome="ok"
  else
    outcome="FAILED (exit $status; $(ls "$dir" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' | head -1 || true); log $dir/log)"
  fi
  printf '%-28s %8s %8s %12s %9s %7s %7s %7s  %s\n' "$name" "$seconds" "${cpu:-?}" \
    "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$corp" "$outcome"
  [[ "$status" == 0 ]]
}

mkdir -p "$work"
running=0
for name in "${fuzzers[@]}"; do
  if (( running >= jobs )); then
    wait -n || true
    running=$((running - 1))
  fi
  run_one "$name" &
  running=$((running + 1))
done
wait

printf '%-28s %8s %8s %12s %9s %7s %7s %7s  %s\n' fuzzer seconds cpu_s execs execs/s cov ft corpus outcome
failed=0
for name in "${fuzzers[@]}"; do
  summary "$name" || failed=1
done
if (( failed )); then
  for name in "${fuzzers[@]}"; do
    if [[ "$(cat "$work/$name/status")" != 0 ]]; then
      echo "--- $name: end of its log"
      tail -40 "$work/$name/log"
    fi
  done
fi
exit "$failed"
