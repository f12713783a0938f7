#!/usr/bin/env bash
# The HTML report at scale: a synthetic run of 10 million events
# (generate_traces), reported with `iotap report --html`, then loaded in
# headless Chromium. Prints, per run shape, the analysis time, the page's
# size and the time from navigation to charts drawn (median of 5 loads), and
# fails if the page is over 5 MB (5,000,000 bytes) or takes 2 s or more.
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
# PROCESSES x EVENTS_PER_PROCESS = 10 million: one trainer whose markers make
# a step every 100 us (a third of its events), the rest loaders' reads.
for shape in "10 1000000" "100 100000"; do
  read -r processes per_process <<< "$shape"
  run="$work/run-$processes"
  rm -rf "$run"
  "$build/bin/generate_traces" "$run" "$processes" "$per_process"
  start=$(date +%s%N)
  "$build/bin/iotap" report "$run" --html "$work/report-$processes.html" > "$work/report-$processes.txt"
  end=$(date +%s%N)
  events=$(sed -n 's/^ *\([0-9]*\) events traced.*/\1/p' "$work/report-$processes.txt")
  bytes=$(stat -c %s "$work/report-$processes.html")
  line=$(tests/viewer/browser_check.sh "$work/report-$processes.html" --steps --bucketed --timing-runs 4 |
         tail -n 1)
  median=$(/usr/bin/python3 -c 'import json,sys; print(json.loads(sys.argv[1])["render_ms_median"])' "$line")
  loads=$(/usr/bin/python3 -c 'import json,sys; print(json.loads(sys.argv[1])["render_ms"])' "$line")
  printf '%-28s %12s %10.2f %12s %12s %s\n' "$processes processes x $per_process" "$events" \
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
done
exit $status
