#!/usr/bin/env bash
# The HTML report at scale: synthetic runs of 10 million events
# (generate_traces, in two shapes) and one of 2624 processes, reported with
# `iotap report --html`, then loaded in headless Chromium. Prints, per run,
# the analysis time, the page's size and the time from navigation to charts
# drawn (median of 5 loads), and fails if a page is over 5 MB (5,000,000
# bytes) or takes 2 s or more.
#
#   tests/bench/viewer_benchmark.sh [BUILD_DIR] [WORK_DIR]
#
# BUILD_DIR defaults to ./build, WORK_DIR to a fresh temporary directory
# (removed at the end). Needs what the browser tests need: Chromium, Node.js
# and `npm ci` in tests/viewer.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
work=${2:-}
if [[ -z "$work" ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

max_bytes=5000000
max_ms=2000
status=0
printf '%-28s %12s %10s %12s %12s %s\n' "run" "events" "report s" "html bytes" "render ms" "render ms (5 loads)"
# measure NAME RUN_DIR: reports the run, loads the page, prints a line.
measure() {
  local name=$1 run=$2 page="$work/$(basename "$2").html"
  local start end events bytes line median loads
  start=$(date +%s%N)
  "$build/bin/iotap" report "$run" --html "$page" > "$page.txt"
  end=$(date +%s%N)
  events=$(sed -n 's/^ *\([0-9]*\) events traced.*/\1/p' "$page.txt")
  bytes=$(stat -c %s "$page")
  line=$(tests/viewer/browser_check.sh "$page" --steps --bucketed --timing-runs 4 | tail -n 1)
  median=$(/usr/bin/python3 -c 'import json,sys; print(json.loads(sys.argv[1])["render_ms_median"])' "$line")
  loads=$(/usr/bin/python3 -c 'import json,sys; print(json.loads(sys.argv[1])["render_ms"])' "$line")
  printf '%-28s %12s %10.2f %12s %12s %s\n' "$name" "$events" \
         "$(( (end - start) / 1000000 ))e-3" "$bytes" "$median" "$loads"
  if (( bytes > max_bytes )); then
    echo "FAIL: the page is $bytes bytes, over $max_bytes" >&2
    status=1
  fi
  if ! /usr/bin/python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)' \
       "$median" "$max_ms"; then
    echo "FAIL: the page took $median ms to draw, not under $max_ms ms" >&2
    status=1
  fi
}

# PROCESSES x EVENTS_PER_PROCESS = 10 million: one trainer whose markers make
# a step every 100 us (a third of its events), the rest loaders' reads.
for shape in "10 1000000" "100 100000"; do
  read -r processes per_process <<< "$shape"
  rm -rf "$work/run-$processes"
  "$build/bin/generate_traces" "$work/run-$processes" "$processes" "$per_process"
  measure "$processes processes x $per_process" "$work/run-$processes"
done
# Wide rather than long: 2624 processes, 64 trainer groups on 8 hosts, where
# the page keeps the busiest processes and series (analyzer/output/report_condense.h).
"$build/bin/make_sample_runs" "$work/samples" --wide
measure "64 trainers x 40 loaders" "$work/samples/wide"
exit $status
