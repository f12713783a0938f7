#!/usr/bin/env bash
# Writes the HTML reports the browser tests load, from real and synthetic runs.
#
#   tests/viewer/make_reports.sh synthetic|imagefolder BUILD_DIR OUT_DIR
#
# synthetic:   OUT_DIR/hostile.html (file names and arguments meant to break
#              the page) and OUT_DIR/many-steps.html (more steps than the page
#              carries one by one) and OUT_DIR/mapped.html (reads through a
#              file mapping and io_uring), from tests/viewer/make_sample_runs.
# imagefolder: OUT_DIR/imagefolder.html, from a real PyTorch job
#              (examples/imagefolder/train.py, 2 epochs of 600 small images,
#              2 DataLoader workers) traced with `iotap run --torch-steps`;
#              also its Perfetto export, OUT_DIR/imagefolder.pftrace.
set -euo pipefail

what=$1
build=$(cd "$2" && pwd)
out=$3
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
iotap="$build/bin/iotap"
mkdir -p "$out"

case "$what" in
  synthetic)
    "$build/bin/make_sample_runs" "$out/runs"
    "$iotap" report "$out/runs/hostile" --html "$out/hostile.html" > "$out/hostile.txt"
    "$iotap" report "$out/runs/many-steps" --html "$out/many-steps.html" > "$out/many-steps.txt"
    "$iotap" report "$out/runs/mapped" --html "$out/mapped.html" > "$out/mapped.txt"
    ;;
  imagefolder)
    python=${IOTAP_TEST_PYTHON:-/usr/bin/python3}
    rm -rf "$out/images" "$out/imagefolder-trace"
    "$python" "$source_dir/examples/imagefolder/train.py" --data "$out/images" --generate-only \
        --images 600
    "$iotap" run --torch-steps -o "$out/imagefolder-trace" -- "$python" \
        "$source_dir/examples/imagefolder/train.py" --data "$out/images" --num-workers 2 \
        --epochs 2 --batch-size 25 > "$out/imagefolder-train.txt"
    "$iotap" report "$out/imagefolder-trace" --html "$out/imagefolder.html" > "$out/imagefolder.txt"
    "$iotap" export "$out/imagefolder-trace" --perfetto "$out/imagefolder.pftrace"
    ;;
  *)
    echo "make_reports.sh: say synthetic or imagefolder" >&2
    exit 1
    ;;
esac
