#!/bin/bash
# What per-thread perf events add to each context switch (issue 15): the
# modes of perf_switch_cost.c in turn, ROUNDS times, on one CPU; prints each
# mode's median microseconds per round trip (two switches each way) and its
# difference from no event.
#
#   tests/bench/run-switch-cost.sh [ROUNDS] [ROUND_TRIPS]   (defaults 9, 100000)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-9}
trips=${2:-100000}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
cc -O2 -I. -o "$bin/perf_switch_cost" tests/bench/perf_switch_cost.c
modes=(none sampling one disabled keeper)
for ((r = 0; r < rounds; r++)); do
  for m in "${modes[@]}"; do taskset -c 0 "$bin/perf_switch_cost" "$m" "$trips"; done
done >"$bin/times"
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
none=$(awk '$1 == "none" {print $2}' "$bin/times" | median)
for m in "${modes[@]}"; do
  med=$(awk -v m="$m" '$1 == m {print $2}' "$bin/times" | median)
  awk -v m="$m" -v x="$med" -v b="$none" \
    'BEGIN {printf "%-9s %7.3f us per round trip  %+7.3f against none\n", m, x, x - b}'
done
