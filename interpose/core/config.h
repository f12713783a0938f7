// The shim's configuration, read once from IOTAP_* environment variables.
//
//   IOTAP_DIR                 output directory (required; tracing is off without it)
//   IOTAP_FLUSH_INTERVAL_MS   periodic flush, default 1000 (a SIGKILLed job keeps
//                             everything older than this)
//   IOTAP_BUFFER_EVENTS       events per thread buffer, power of two, default 4096
//   IOTAP_SAMPLE_INTERVAL_MS  CPU-use sampling period, default 100
//   IOTAP_LAYERS              comma list of posix,stdio,hdf5,tfrecord,cuda,mapped,uring,
//                             waits; default all
//   IOTAP_WAIT_THRESHOLD_US   shortest wait (poll, semaphore, ...) recorded, default 20
//   IOTAP_SESSION             job identifier, set by `iotap run`
//   IOTAP_CLOCK               "monotonic" to avoid the TSC, "tsc" (the default) to use
//                             it where the CPU and kernel trust it
//   IOTAP_ZSTD_LEVEL          compression level 1-19, -7 to -1 (zstd's fast levels),
//                             0 to store; default 1
//   IOTAP_TIME_UNIT_NS        resolution of event times, 1-100 ns, default 10
//   IOTAP_QUIET               "1" to silence the shim's warnings ("0": the default)
//   IOTAP_CUPTI               "1" to collect CUDA device-side activity ("0")
//   IOTAP_DISABLE             "1" to load but record nothing ("0")
//   IOTAP_PY_SAMPLES          Python stack samples per CPU-second the Python
//                             helper takes (0 or unset: none); the shim only
//                             writes the number into the trace header
//   IOTAP_TEST_NO_PERF        "1": act as if perf_event_open were refused (tests of
//                             the page-fault counters' fallback)
//
// Test-only, for the tests of clock correction: one machine plays two hosts.
//   IOTAP_TEST_CLOCK_OFFSET_NS  added to every wall-clock reading the trace records
//                               (header, clock snapshots, end record, file name)
//   IOTAP_TEST_HOSTNAME         the host name the trace records (header, file name)

#ifndef IOTAP_INTERPOSE_CORE_CONFIG_H_
#define IOTAP_INTERPOSE_CORE_CONFIG_H_

#include <limits.h>
#include <stdint.h>

#include "proto/wire/settings.h"

namespace iotap::interpose {

enum Layer : uint32_t {
  kLayerPosix = 1u << 0,
  kLayerStdio = 1u << 1,
  kLayerHdf5 = 1u << 2,
  kLayerTfRecord = 1u << 3,
  kLayerCuda = 1u << 4,
  kLayerMapped = 1u << 5,  // reads through file mappings (page faults)
  kLayerUring = 1u << 6,   // io_uring submissions and completions
  kLayerWaits = 1u << 7,   // blocking waits (poll, select, epoll, semaphores, conditions)
  kLayerAll = 0xff,
};

struct Config {
  char dir[PATH_MAX] = {};  // absolute; empty = not tracing
  char session[128] = {};
  // The numeric settings' defaults are proto/wire/settings.h's.
  uint32_t flush_interval_ms = wire::DefaultOf("IOTAP_FLUSH_INTERVAL_MS");
  uint32_t buffer_events = wire::DefaultOf("IOTAP_BUFFER_EVENTS");
  uint32_t sample_interval_ms = wire::DefaultOf("IOTAP_SAMPLE_INTERVAL_MS");
  uint32_t layers = kLayerAll;
  int zstd_level = wire::DefaultOf("IOTAP_ZSTD_LEVEL");
  uint32_t time_unit_ns = wire::DefaultOf("IOTAP_TIME_UNIT_NS");
  uint64_t wait_threshold_ns = 1000 * wire::DefaultOf("IOTAP_WAIT_THRESHOLD_US");
  bool allow_tsc = true;
  bool quiet = false;
  bool cupti = false;
  uint32_t py_sample_hz = wire::DefaultOf("IOTAP_PY_SAMPLES");
  bool no_perf = false;  // IOTAP_TEST_NO_PERF
  // IOTAP_TEST_PY_GIL_SAMPLER: Python stacks sampled with the GIL only, as
  // before the signal sampler (for comparisons).
  bool py_gil_sampler = false;
  // IOTAP_TEST_NO_MAPS_QUERY: as on a kernel without PROCMAP_QUERY.
  bool no_maps_query = false;
  // IOTAP_TEST_NO_PAGEMAP_SCAN: as on a kernel without PAGEMAP_SCAN.
  bool no_pagemap_scan = false;
  // Test-only (above): 0 and empty unless set, and then read only where the
  // writer reads the wall clock or the host name, never on a call's path.
  int64_t test_clock_offset_ns = 0;
  char test_hostname[64] = {};
  // A line per setting whose value the shim does not take (the default is
  // used instead, or an unknown layer name left out), for the shim to print
  // (shim.cc): "iotap: IOTAP_CLOCK=mono is not a value it takes (monotonic
  // or tsc); using tsc\n". Values are cut to fit; empty if all were taken.
  char bad_settings[640] = {};
};

// Fills `config` from the environment. `cwd` makes a relative IOTAP_DIR
// absolute. Returns false (with a reason in `why`) when tracing must stay off.
bool ReadConfig(Config* config, const char* cwd, const char** why);

// Whether the environment block `block` (`size` bytes of NUL-ended
// entries, as /proc/PID/environ holds them) gives the same iotap settings as
// `env` (a null-ended list, as `environ`): the same IOTAP_* entries and the
// same LD_PRELOAD, none more and none fewer. A process whose parent was
// started with the same settings need not say again what is wrong with them:
// the parent, or the first of its ancestors started so, said it (shim.cc).
bool SameIotapSettings(char* const* env, const char* block, size_t size);

// The names of the layers in `mask`, for the trace header.
const char* LayerName(uint32_t single_layer_bit);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CORE_CONFIG_H_
