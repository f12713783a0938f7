#!/usr/bin/env bash
# The main job: from a fresh clone, install what is missing, build iotap, trace
# a real PyTorch training job under `iotap run`, and write its report as a web
# page, Markdown and JSON; then print the findings and where the reports are.
#
# The job is examples/imagefolder/train.py: 1500 generated JPEG images read by
# one DataLoader worker with an expensive transform, one epoch. A second run
# reuses the build and the images and takes about a minute.
#
# Usage: examples/main-job.sh [OUTPUT_DIR]     (default ./iotap-main-job)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-iotap-main-job}

.ci/install-deps
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target iotap_cli iotap

data=build/examples-data/imagefolder-jpeg
if [[ ! -e $data/.complete ]]; then
  rm -rf "$data"
  echo "main-job: generating 1500 JPEG images in $data" >&2
  /usr/bin/python3 examples/imagefolder/train.py --data "$data" --generate-only \
    --images 1500 --image-size 128 --format jpeg
  touch "$data/.complete"
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
trace=$out/trace
rm -rf "$trace"
echo "main-job: training under iotap run (traces in $trace)" >&2
build/bin/iotap run --torch-steps -o "$trace" -- /usr/bin/python3 \
  examples/imagefolder/train.py --data "$data" --num-workers 1 \
  --transform-cost heavy --image-size 128 --batch-size 25 --epochs 1

build/bin/iotap report "$trace" --format json -o "$out/report.json" --html "$out/report.html"
build/bin/iotap report "$trace" --format markdown -o "$out/report.md"
build/bin/iotap report "$trace" -o "$out/report.txt"
echo
# The run's summary and its findings: the text report up to its layer table.
sed -n '1,/^Layers$/p' "$out/report.txt" | sed '$d'
echo
echo "Reports: $out/report.html (open in a browser), $out/report.md (for a ticket),"
echo "         $out/report.json (schema: proto/iotap/report.proto), $out/report.txt"
