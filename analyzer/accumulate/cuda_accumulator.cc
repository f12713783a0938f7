#include "analyzer/accumulate/cuda_accumulator.h"

#include "analyzer/base/numbers.h"

namespace iotap::analyzer {

namespace {

const char* Direction(Op op) {
  switch (op) {
    case OP_CUDA_MEMCPY_HTOD: return "HtoD";
    case OP_CUDA_MEMCPY_DTOH: return "DtoH";
    case OP_CUDA_MEMCPY_DTOD: return "DtoD";
    case OP_CUDA_MEMCPY_HTOH: return "HtoH";
    case OP_CUDA_MEMCPY_PEER: return "peer";
    default: return "default";
  }
}

// CUpti_ActivityMemcpyKind, as OP_CUPTI_MEMCPY's result holds it.
const char* DeviceDirection(int64_t kind) {
  switch (kind) {
    case 1: return "HtoD";
    case 2: return "DtoH";
    case 8: return "DtoD";
    case 9: return "HtoH";
    case 10: return "peer";
    default: return "other";
  }
}

bool IsCopy(Op op) { return op >= OP_CUDA_MEMCPY_HTOD && op <= OP_CUDA_MEMCPY_DEFAULT; }

}  // namespace

CudaCopyKey CudaCopyKeyOf(Op op, uint32_t flags) {
  // Device-to-device and peer copies have no host side; any other copy has
  // one, which the shim classifies when it can.
  const char* host = (flags & FLAG_CUDA_PINNED)                             ? "pinned"
                     : (flags & FLAG_CUDA_PAGEABLE)                         ? "pageable"
                     : (op == OP_CUDA_MEMCPY_DTOD || op == OP_CUDA_MEMCPY_PEER) ? "none"
                                                                                : "unknown";
  return CudaCopyKey{Direction(op), host, (flags & FLAG_CUDA_ASYNC) != 0};
}

void CudaAccumulator::Add(const Event& e) {
  if (IsCopy(e.op)) {
    CudaCopyCounts& c = copies[CudaCopyKeyOf(e.op, e.flags)];
    ++c.calls;
    if (e.result != 0) {
      ++c.failed_calls;
    } else {
      AddTo(&c.bytes, e.requested);
    }
    AddTo(&c.ns, e.duration_ns());
  } else if (e.op == OP_CUPTI_MEMCPY) {
    const char* host = (e.flags & FLAG_CUDA_PINNED)     ? "pinned"
                       : (e.flags & FLAG_CUDA_PAGEABLE) ? "pageable"
                                                        : "none";
    CudaDeviceCounts& c = device_copies[CudaDeviceKey{DeviceDirection(e.result), host}];
    ++c.copies;
    AddTo(&c.bytes, e.requested);
    AddTo(&c.ns, e.duration_ns());
  } else if (e.op == OP_CUPTI_KERNEL) {
    ++kernels;
    AddTo(&kernel_ns, e.duration_ns());
  } else if ((e.op == OP_CUDA_HOST_ALLOC || e.op == OP_CUDA_HOST_REGISTER) && e.result == 0) {
    ++pinned_allocations;
    AddTo(&pinned_bytes, e.requested);
  }
}

void CudaAccumulator::Merge(const CudaAccumulator& o) {
  for (const auto& [key, c] : o.copies) {
    CudaCopyCounts& into = copies[key];
    into.calls += c.calls;
    into.failed_calls += c.failed_calls;
    AddTo(&into.bytes, c.bytes);
    AddTo(&into.ns, c.ns);
  }
  for (const auto& [key, c] : o.device_copies) {
    CudaDeviceCounts& into = device_copies[key];
    into.copies += c.copies;
    AddTo(&into.bytes, c.bytes);
    AddTo(&into.ns, c.ns);
  }
  kernels += o.kernels;
  AddTo(&kernel_ns, o.kernel_ns);
  pinned_allocations += o.pinned_allocations;
  AddTo(&pinned_bytes, o.pinned_bytes);
}

}  // namespace iotap::analyzer
