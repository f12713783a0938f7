#!/usr/bin/env bash
# The analyzer's scale target (issue 5): `iotap report` of 100 million events
# in 1,000 trace files in at most 10 s on a 2-core machine, in at most 1 GiB.
#
# Generates a synthetic DataLoader job once (generate_traces.cc says what it
# holds; the traces are kept and reused while the generator's arguments stay
# the same), then runs `iotap report --format json` on it RUNS times and
# prints, per run and as medians: wall time, user and system CPU time, peak
# RSS, and events per CPU-second (the per-core rate). The JSON of every run
# must be identical (the analysis is deterministic). Not a test: nothing here
# fails on time. On a loaded machine wall time is noise; CPU time is not.
#
# Usage: tests/bench/run-analyzer-scale.sh [BUILD_DIR] [RUNS] [-- GENERATOR FLAGS...]
#   tests/bench/run-analyzer-scale.sh build 5
#   tests/bench/run-analyzer-scale.sh build 3 -- --layout=stress
# Environment: IOTAP_SCALE_DIR (default /tmp/iotap-scale) holds the traces;
# IOTAP (default BUILD_DIR/bin/iotap) is the binary measured.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
runs=${2:-5}
shift $(( $# < 2 ? $# : 2 ))
[[ ${1:-} == -- ]] && shift
gen_args=(--processes=1000 --events=100000000 "$@")
iotap=${IOTAP:-$build/bin/iotap}
root=${IOTAP_SCALE_DIR:-/tmp/iotap-scale}
[[ -x $iotap && -x $build/bin/generate_traces ]] || {
  echo "build first: $iotap and $build/bin/generate_traces are needed" >&2
  exit 1
}
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 1; }

# One directory per generator version and arguments.
key=$( { cat "$build/bin/generate_traces"; echo "${gen_args[*]}"; } | sha256sum | cut -c1-16)
traces=$root/$key
if [[ ! -f $traces/.complete ]]; then
  rm -rf "$traces"
  mkdir -p "$traces"
  echo "generating: generate_traces $traces ${gen_args[*]}"
  "$build/bin/generate_traces" "$traces" "${gen_args[@]}"
  echo "${gen_args[*]}" >"$traces/.complete"
fi
files=$(find "$traces" -name '*.iotap' | wc -l)
echo "traces: $traces ($files files, $(du -sh "$traces" | cut -f1); generated with: $(cat "$traces/.complete"))"
cat "$traces"/*.iotap >/dev/null  # into the page cache: measure the analysis, not the disk

out=$(mktemp -d /tmp/iotap-scale-run-XXXXXX)
trap 'rm -rf "$out"' EXIT
printf '%-4s %8s %8s %8s %8s %9s %14s\n' run wall_s user_s sys_s cpu_s rss_MiB events/cpu_s
for ((i = 1; i <= runs; ++i)); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f '%e %U %S %M' -o "$out/time.$i" \
    "$iotap" report "$traces" --format json -o "$out/report.$i.json"
  read -r wall user sys rss_kib <"$out/time.$i"
  events=$(grep -m1 '"events":' "$out/report.$i.json" | tr -dc '0-9')
  awk -v i="$i" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss_kib" -v e="$events" -v l="$load" \
    'BEGIN { printf "%-4d %8.2f %8.2f %8.2f %8.2f %9.0f %12.2fM   (load %s)\n",
             i, w, u, s, u + s, r / 1024, e / (u + s) / 1e6, l }'
  echo "$wall $user $sys $rss_kib $events" >>"$out/all"
  if [[ $i -gt 1 ]] && ! cmp -s "$out/report.1.json" "$out/report.$i.json"; then
    echo "run $i's report differs from run 1's: the analysis is not deterministic" >&2
    exit 1
  fi
done
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
wall=$(cut -d' ' -f1 "$out/all" | median)
user=$(cut -d' ' -f2 "$out/all" | median)
sys=$(cut -d' ' -f3 "$out/all" | median)
cpu=$(awk '{ print $2 + $3 }' "$out/all" | median)
rss=$(cut -d' ' -f4 "$out/all" | median)
events=$(head -1 "$out/all" | cut -d' ' -f5)
awk -v w="$wall" -v u="$user" -v s="$sys" -v c="$cpu" -v r="$rss" -v e="$events" -v n="$runs" \
  -v cores="$(nproc)" 'BEGIN {
  printf "median of %d: wall %.2f s, CPU %.2f s (user %.2f, sys %.2f), peak RSS %.0f MiB\n",
         n, w, c, u, s, r / 1024
  printf "%d events: %.2f M events per CPU-second (per core), %.2f M events/s of wall time on %d cores\n",
         e, e / c / 1e6, e / w / 1e6, cores
  printf "target: wall <= 10 s: %s; CPU/2 <= 10 s (wall on 2 idle cores): %s; RSS <= 1024 MiB: %s\n",
         w <= 10 ? "met" : "NOT met", c / 2 <= 10 ? "met" : "NOT met", r <= 1048576 ? "met" : "NOT met"
}'
