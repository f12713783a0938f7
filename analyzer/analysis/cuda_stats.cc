#include "analyzer/analysis/cuda_stats.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer {

namespace {

const char* Direction(Op op) {
  switch (op) {
    case OP_CUDA_MEMCPY_HTOD:
      return "HtoD";
    case OP_CUDA_MEMCPY_DTOH:
      return "DtoH";
    case OP_CUDA_MEMCPY_DTOD:
      return "DtoD";
    case OP_CUDA_MEMCPY_HTOH:
      return "HtoH";
    case OP_CUDA_MEMCPY_PEER:
      return "peer";
    default:
      return "default";
  }
}

// CUpti_ActivityMemcpyKind, as OP_CUPTI_MEMCPY's result holds it.
const char* DeviceDirection(int64_t kind) {
  switch (kind) {
    case 1:
      return "HtoD";
    case 2:
      return "DtoH";
    case 8:
      return "DtoD";
    case 9:
      return "HtoH";
    case 10:
      return "peer";
    default:
      return "other";
  }
}

bool IsCopy(Op op) { return op >= OP_CUDA_MEMCPY_HTOD && op <= OP_CUDA_MEMCPY_DEFAULT; }

std::string HostMemory(const Event& e) {
  if (e.flags & FLAG_CUDA_PINNED) return "pinned";
  if (e.flags & FLAG_CUDA_PAGEABLE) return "pageable";
  if (e.op == OP_CUDA_MEMCPY_DTOD || e.op == OP_CUDA_MEMCPY_PEER) return "none";
  return "unknown";
}

}  // namespace

void CudaStats::Add(const Event& e) {
  if (IsCopy(e.op)) {
    std::string mode = (e.flags & FLAG_CUDA_ASYNC) ? "async" : "sync";
    auto key = std::make_tuple(std::string(Direction(e.op)), HostMemory(e), mode);
    CudaCopyStats& s = copies_[key];
    std::tie(s.direction, s.host_memory, s.mode) = key;
    ++s.calls;
    if (e.result != 0) {
      ++s.failed_calls;
    } else {
      s.bytes += e.requested;
    }
    s.ns += e.duration_ns();
  } else if (e.op == OP_CUPTI_MEMCPY) {
    std::string host = (e.flags & FLAG_CUDA_PINNED)     ? "pinned"
                       : (e.flags & FLAG_CUDA_PAGEABLE) ? "pageable"
                                                        : "none";
    auto key = std::make_pair(std::string(DeviceDirection(e.result)), host);
    CudaDeviceCopyStats& s = device_copies_[key];
    std::tie(s.direction, s.host_memory) = key;
    ++s.copies;
    s.bytes += e.requested;
    s.ns += e.duration_ns();
  } else if (e.op == OP_CUPTI_KERNEL) {
    ++kernels_;
    kernel_ns_ += e.duration_ns();
  } else if ((e.op == OP_CUDA_HOST_ALLOC || e.op == OP_CUDA_HOST_REGISTER) && e.result == 0) {
    ++pinned_allocations_;
    pinned_bytes_ += e.requested;
  }
}

CudaReport CudaStats::Finish() const {
  CudaReport r;
  for (const auto& [key, s] : copies_) r.copies.push_back(s);
  std::stable_sort(
      r.copies.begin(), r.copies.end(),
      [](const CudaCopyStats& a, const CudaCopyStats& b) { return a.bytes > b.bytes; });
  for (const auto& [key, s] : device_copies_) r.device_copies.push_back(s);
  r.kernels = kernels_;
  r.kernel_ns = kernel_ns_;
  r.pinned_allocations = pinned_allocations_;
  r.pinned_bytes = pinned_bytes_;
  return r;
}

void WriteCudaJson(JsonWriter& j, const CudaReport& r) {
  j.Key("cuda_copies");
  j.BeginArray();
  for (const CudaCopyStats& s : r.copies) {
    j.BeginObject();
    j.Key("direction");
    j.String(s.direction);
    j.Key("host_memory");
    j.String(s.host_memory);
    j.Key("mode");
    j.String(s.mode);
    j.Key("calls");
    j.Uint(s.calls);
    j.Key("failed_calls");
    j.Uint(s.failed_calls);
    j.Key("bytes");
    j.Uint(s.bytes);
    j.Key("seconds");
    j.Double(Seconds(s.ns));
    j.EndObject();
  }
  j.EndArray();
  j.Key("cuda_device");
  j.BeginObject();
  j.Key("copies");
  j.BeginArray();
  for (const CudaDeviceCopyStats& s : r.device_copies) {
    j.BeginObject();
    j.Key("direction");
    j.String(s.direction);
    j.Key("host_memory");
    j.String(s.host_memory);
    j.Key("copies");
    j.Uint(s.copies);
    j.Key("bytes");
    j.Uint(s.bytes);
    j.Key("seconds");
    j.Double(Seconds(s.ns));
    j.EndObject();
  }
  j.EndArray();
  j.Key("kernels");
  j.Uint(r.kernels);
  j.Key("kernel_seconds");
  j.Double(Seconds(r.kernel_ns));
  j.EndObject();
  j.Key("cuda_pinned");
  j.BeginObject();
  j.Key("allocations");
  j.Uint(r.pinned_allocations);
  j.Key("bytes");
  j.Uint(r.pinned_bytes);
  j.EndObject();
}

std::string CudaToText(const CudaReport& r) {
  if (r.empty()) return "";
  std::string out =
      "CUDA copies (host side: bytes of the calls that succeeded, time the calls took):\n";
  absl::StrAppendFormat(&out, "  %-9s %-9s %-6s %8s %7s %12s %10s %12s\n", "direction", "host",
                        "mode", "calls", "failed", "bytes", "time", "bytes/call");
  for (const CudaCopyStats& s : r.copies) {
    uint64_t ok = s.calls - s.failed_calls;
    absl::StrAppendFormat(&out, "  %-9s %-9s %-6s %8d %7d %12s %10s %12s\n", s.direction,
                          s.host_memory, s.mode, s.calls, s.failed_calls, HumanBytes(s.bytes),
                          HumanDuration(Seconds(s.ns)),
                          ok == 0 ? "-" : HumanBytes(static_cast<double>(s.bytes) / ok));
  }
  absl::StrAppendFormat(&out, "  pinned host memory: %d allocations or registrations, %s\n",
                        r.pinned_allocations, HumanBytes(r.pinned_bytes));
  if (!r.device_copies.empty() || r.kernels != 0) {
    out += "CUDA on the device (CUPTI: bytes, device time):\n";
    for (const CudaDeviceCopyStats& s : r.device_copies) {
      absl::StrAppendFormat(&out, "  %-9s %-9s %8d copies %12s %10s\n", s.direction, s.host_memory,
                            s.copies, HumanBytes(s.bytes), HumanDuration(Seconds(s.ns)));
    }
    absl::StrAppendFormat(&out, "  kernels   %8d, %s\n", r.kernels,
                          HumanDuration(Seconds(r.kernel_ns)));
  }
  return out;
}

}  // namespace iotap::analyzer
