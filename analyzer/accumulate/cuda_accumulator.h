// The CUDA figures of a process and of a run: host-side copy calls grouped
// by direction, host memory and call style; what CUPTI saw on the device;
// pinned host memory. `iotap report` (its cuda_copies table) and
// `iotap stats` (its cuda_copies, cuda_device and cuda_pinned sections)
// both print them from here.
//
//   CudaAccumulator cuda;
//   for (const Event& e : batch.events) cuda.Add(e);  // anything but CUDA is ignored
//   for (const auto& [key, copies] : cuda.copies) ...  // key.direction: "HtoD", ...
//
// A copy's bytes are what it asked to move, counted for calls that
// succeeded: a failed call (a non-zero return code) moved nothing, and
// counts only in `failed_calls`. Its time is the call's own on the host,
// summed; an asynchronous call returns once the copy is queued, so CUPTI's
// device-side records (IOTAP_CUPTI=1) give the transfer's time.

#ifndef IOTAP_ANALYZER_ACCUMULATE_CUDA_ACCUMULATOR_H_
#define IOTAP_ANALYZER_ACCUMULATE_CUDA_ACCUMULATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "analyzer/read/event.h"

namespace iotap::analyzer {

// The group a host-side copy counts in. Ordered by its words, as the
// report lists the groups.
struct CudaCopyKey {
  std::string direction;    // "HtoD", "DtoH", "DtoD", "HtoH", "peer", "default" (left to the driver)
  // "pinned", "pageable", "none" (no host side: device-to-device and peer
  // copies), "unknown" (a host side the shim could not classify)
  std::string host_memory;
  bool async = false;
  bool operator<(const CudaCopyKey& o) const {
    return std::tie(direction, host_memory, async) < std::tie(o.direction, o.host_memory, o.async);
  }
};

// The group of a copy event (an OP_CUDA_MEMCPY_* op) with `flags`.
CudaCopyKey CudaCopyKeyOf(Op op, uint32_t flags);

struct CudaCopyCounts {
  uint64_t calls = 0;
  uint64_t failed_calls = 0;
  uint64_t bytes = 0;  // of the calls that succeeded
  int64_t ns = 0;      // the calls' durations, summed
};

// A group of device-side copies (CUPTI), by direction and host memory.
struct CudaDeviceKey {
  std::string direction;    // "HtoD", "DtoH", "DtoD", "HtoH", "peer", "other"
  std::string host_memory;  // "pinned", "pageable", "none"
  bool operator<(const CudaDeviceKey& o) const {
    return std::tie(direction, host_memory) < std::tie(o.direction, o.host_memory);
  }
};

struct CudaDeviceCounts {
  uint64_t copies = 0;
  uint64_t bytes = 0;
  int64_t ns = 0;  // device time, summed
};

struct CudaAccumulator {
  std::map<CudaCopyKey, CudaCopyCounts> copies;
  std::map<CudaDeviceKey, CudaDeviceCounts> device_copies;
  uint64_t kernels = 0;
  int64_t kernel_ns = 0;            // device time of kernels, summed
  uint64_t pinned_allocations = 0;  // host allocations and registrations that succeeded
  uint64_t pinned_bytes = 0;

  // Counts `e` if it is a CUDA copy, a CUPTI record or a pinned allocation.
  void Add(const Event& e);
  void Merge(const CudaAccumulator& o);
  bool empty() const {
    return copies.empty() && device_copies.empty() && kernels == 0 && pinned_allocations == 0;
  }
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ACCUMULATE_CUDA_ACCUMULATOR_H_
