#!/usr/bin/env bash
# The CUDA layer on a real GPU: traces PyTorch moving DataLoader batches to
# the GPU four ways (pin_memory off and on, x .cuda() and
# .to(device, non_blocking=True)) and an nvcc-built program with a static
# cudart, and checks that every host-to-device copy is in the trace with the
# tensor's size in bytes and the right pinned/pageable classification (see
# README.md). Exits 0 with a message, and checks nothing, where there is no
# GPU.
#
# Usage: examples/cuda/check-gpu.sh [BUILD_DIR] [OUTPUT_DIR]
#   BUILD_DIR   an iotap build with the CUDA layer (default: build)
#   OUTPUT_DIR  where traces and manifests go (default: a fresh temporary one)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=${2:-$(mktemp -d /tmp/iotap-check-gpu-XXXXXX)}
here=examples/cuda
iotap="$build/bin/iotap"

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "check-gpu: no NVIDIA GPU here (nvidia-smi lists none); nothing checked."
  exit 0
fi
if [[ ! -x "$iotap" ]]; then
  echo "check-gpu: no iotap in $build; build first (cmake -S . -B $build && cmake --build $build)" >&2
  exit 2
fi
if ! nm -D --defined-only "$build/lib/libiotap.so" | grep -q " T cuMemcpyHtoD_v2$"; then
  echo "check-gpu: $build/lib/libiotap.so has no CUDA layer (configure with -DIOTAP_CUDA=ON)" >&2
  exit 2
fi
python=${PYTHON:-python3}
mkdir -p "$out"
failed=0

# run NAME MANIFEST COMMAND...: traces COMMAND into OUT/NAME and checks it.
run() {
  local name=$1 manifest=$2
  shift 2
  echo "== $name"
  if ! "$iotap" run -o "$out/$name" -- "$@"; then
    echo "  FAIL: the traced command failed"
    failed=1
    return
  fi
  "$python" "$here/check_trace.py" --iotap "$iotap" --trace "$out/$name" \
    --manifest "$manifest" || failed=1
}

if "$python" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  for pin in 0 1; do
    for method in cuda to; do
      name="pytorch-pin$pin-$method"
      run "$name" "$out/$name.json" "$python" "$here/dataloader_to_gpu.py" \
        --pin-memory "$pin" --method "$method" --manifest "$out/$name.json"
    done
  done
else
  echo "== PyTorch with CUDA is not available to $python; the PyTorch checks are skipped"
  failed=1
fi

nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [[ -x "$nvcc" ]]; then
  "$nvcc" -O2 -o "$out/static_copy" "$here/static_copy.cu"  # -cudart static: nvcc's default
  run static-cudart "$out/static-cudart.json" "$out/static_copy" "$out/static-cudart.json"
else
  echo "== no nvcc; the static cudart check is skipped"
  failed=1
fi

echo
if [[ $failed -eq 0 ]]; then
  echo "check-gpu: every check passed (traces in $out)"
else
  echo "check-gpu: FAILED (traces in $out)"
fi
exit $failed
