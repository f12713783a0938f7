#!/usr/bin/env bash
# The main job: from a fresh clone, install what is missing, build, trace a
# real PyTorch training job (ImageFolder over generated images, DataLoader
# workers) under `iotap run`, and print what iotap saw.
# A second run reuses the build and the generated images.
# Usage: examples/main-job.sh [OUTPUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-iotap-main-job}

.ci/install-deps
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build

data=build/examples-data/imagefolder
rm -rf "$out"
build/bin/iotap run -o "$out" -- /usr/bin/python3 examples/imagefolder/train.py \
  --data "$data" --images 2000 --num-workers 2 --epochs 1
echo
build/bin/iotap stats "$out"
