// The CUDA part of `iotap stats`: host-to-device and other copies grouped by
// direction, host memory and call style, and what CUPTI saw on the device.
//
//   CudaStats cuda;
//   for (const Event& e : batch.events) cuda.Add(e);
//   CudaReport report = cuda.Finish();
//
// A copy's bytes are what it asked to move, counted for calls that
// succeeded; its time is the call's own on the host, summed. An asynchronous
// call returns once the copy is queued (a pageable one after staging it), so
// its time is not the transfer's: CUPTI's device-side records (IOTAP_CUPTI=1)
// give that.

#ifndef IOTAP_ANALYZER_ANALYSIS_CUDA_STATS_H_
#define IOTAP_ANALYZER_ANALYSIS_CUDA_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/base/json_writer.h"
#include "analyzer/read/event.h"

namespace iotap::analyzer {

// One group of host-side copy calls.
struct CudaCopyStats {
  std::string direction;    // HtoD, DtoH, DtoD, HtoH, peer, default (inferred by the driver)
  std::string host_memory;  // pinned, pageable, none (no host side), unknown
  std::string mode;         // sync or async
  uint64_t calls = 0;
  uint64_t failed_calls = 0;  // a non-zero return code
  uint64_t bytes = 0;         // of the calls that succeeded
  int64_t ns = 0;             // summed durations of the calls
};

// One group of device-side copies (CUPTI).
struct CudaDeviceCopyStats {
  std::string direction;    // HtoD, DtoH, DtoD, HtoH, peer, other
  std::string host_memory;  // pinned, pageable, none
  uint64_t copies = 0;
  uint64_t bytes = 0;
  int64_t ns = 0;  // summed device time
};

struct CudaReport {
  std::vector<CudaCopyStats> copies;  // most bytes first
  std::vector<CudaDeviceCopyStats> device_copies;
  uint64_t kernels = 0;
  int64_t kernel_ns = 0;            // summed device time of kernels
  uint64_t pinned_allocations = 0;  // OP_CUDA_HOST_ALLOC and _REGISTER that succeeded
  uint64_t pinned_bytes = 0;        // their bytes

  bool empty() const {
    return copies.empty() && device_copies.empty() && kernels == 0 && pinned_allocations == 0;
  }
};

class CudaStats {
 public:
  void Add(const Event& e);
  CudaReport Finish() const;

 private:
  std::map<std::tuple<std::string, std::string, std::string>, CudaCopyStats> copies_;
  std::map<std::pair<std::string, std::string>, CudaDeviceCopyStats> device_copies_;
  uint64_t kernels_ = 0;
  int64_t kernel_ns_ = 0;
  uint64_t pinned_allocations_ = 0;
  uint64_t pinned_bytes_ = 0;
};

// The "cuda_copies", "cuda_device" and "cuda_pinned" members of the stats
// JSON (documented in stats.h).
void WriteCudaJson(JsonWriter& j, const CudaReport& report);
// The terminal table; empty if the run made no CUDA calls.
std::string CudaToText(const CudaReport& report);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ANALYSIS_CUDA_STATS_H_
