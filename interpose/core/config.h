// The shim's configuration, read once from IOTAP_* environment variables.
//
//   IOTAP_DIR                 output directory (required; tracing is off without it)
//   IOTAP_FLUSH_INTERVAL_MS   periodic flush, default 1000 (a SIGKILLed job keeps
//                             everything older than this)
//   IOTAP_BUFFER_EVENTS       events per thread buffer, power of two, default 4096
//   IOTAP_SAMPLE_INTERVAL_MS  CPU-use sampling period, default 100
//   IOTAP_LAYERS              comma list of posix,stdio,hdf5,tfrecord,cuda,waits; default all
//   IOTAP_WAIT_THRESHOLD_US   shortest wait (poll, semaphore, ...) recorded, default 20
//   IOTAP_SESSION             job identifier, set by `iotap run`
//   IOTAP_CLOCK               "monotonic" to avoid the TSC
//   IOTAP_ZSTD_LEVEL          compression level, default 1
//   IOTAP_TIME_UNIT_NS        resolution of event times, 1-100 ns, default 10
//   IOTAP_QUIET               "1" to silence the shim's warnings
//   IOTAP_CUPTI               "1" to collect CUDA device-side activity
//   IOTAP_DISABLE             "1" to load but record nothing

#ifndef IOTAP_INTERPOSE_CORE_CONFIG_H_
#define IOTAP_INTERPOSE_CORE_CONFIG_H_

#include <limits.h>
#include <stdint.h>

namespace iotap::interpose {

enum Layer : uint32_t {
  kLayerPosix = 1u << 0,
  kLayerStdio = 1u << 1,
  kLayerHdf5 = 1u << 2,
  kLayerTfRecord = 1u << 3,
  kLayerCuda = 1u << 4,
  kLayerWaits = 1u << 5,
  kLayerAll = 0x3f,
};

struct Config {
  char dir[PATH_MAX] = {};  // absolute; empty = not tracing
  char session[128] = {};
  uint32_t flush_interval_ms = 1000;
  uint32_t buffer_events = 4096;
  uint32_t sample_interval_ms = 100;
  uint32_t layers = kLayerAll;
  int zstd_level = 1;
  uint32_t time_unit_ns = 10;
  uint64_t wait_threshold_ns = 20000;
  bool allow_tsc = true;
  bool quiet = false;
  bool cupti = false;
};

// Fills `config` from the environment. `cwd` makes a relative IOTAP_DIR
// absolute. Returns false (with a reason in `why`) when tracing must stay off.
bool ReadConfig(Config* config, const char* cwd, const char** why);

// The names of the layers in `mask`, for the trace header.
const char* LayerName(uint32_t single_layer_bit);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CORE_CONFIG_H_
