// Device-side timing through CUPTI (IOTAP_CUPTI=1): when each copy and
// kernel ran on the GPU, next to the host-side calls the wrappers record.
//
// Nothing happens unless IOTAP_CUPTI=1. Then the first CUDA wrapper to run
// (CUDA is initialised by then, and the wrapper has not entered it yet)
// loads libcupti (the one already loaded, else libcupti.so.13, .12, or
// libcupti.so; never linked), subscribes, and enables memcpy and concurrent
// kernel activity records. CUPTI hands back filled buffers on its own thread;
// each becomes an EventChunk of its own (tid 0: device work belongs to no
// host thread) written straight to the trace. At exit, a handler registered
// after CUDA's own (so it runs before CUDA tears down) flushes what is left.
//
// Clock: where CUPTI takes a timestamp callback (CUDA 11.6 on), its records
// carry CLOCK_MONOTONIC directly; otherwise an offset from cuptiGetTimestamp
// to CLOCK_MONOTONIC, measured once, is added.
//
// CUPTI has room for one subscriber per process. If another tool holds it
// (a profiler, Nsight through CUDA_INJECTION64_PATH), the shim says so once
// on stderr and records without device-side timing; while the shim holds it,
// a profiler started later in the job cannot attach.

#include <cupti.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/core/raw_syscall.h"
#include "interpose/core/recorder.h"
#include "interpose/cuda/cuda_layer.h"
#include "interpose/file/wire_writer.h"
#include "interpose/file/writer.h"

namespace iotap::interpose {

constinit std::atomic<bool> g_cupti_unchecked{true};

namespace {

struct Cupti {
  decltype(&::cuptiSubscribe) subscribe;
  decltype(&::cuptiActivityRegisterCallbacks) register_callbacks;
  decltype(&::cuptiActivityRegisterTimestampCallback) register_timestamp;
  decltype(&::cuptiActivityEnable) enable;
  decltype(&::cuptiActivityGetNextRecord) next_record;
  decltype(&::cuptiActivityFlushAll) flush_all;
  decltype(&::cuptiGetTimestamp) timestamp;
};
constinit Cupti g_cupti = {};
// Added to CUPTI's timestamps to make them CLOCK_MONOTONIC (0 with the
// timestamp callback).
constinit int64_t g_clock_offset = 0;
constinit pthread_mutex_t g_encode_lock = PTHREAD_MUTEX_INITIALIZER;
constinit uint64_t g_next_seq = 0;

constexpr size_t kBufferBytes = 1 << 20;
constexpr uint32_t kMaxChunkRecords = 1024;

// Says why device-side timing is off, once, on stderr (not through WarnOnce,
// whose one warning is for the trace file).
void Say(const char* why) {
  if (g_config.quiet) return;
  char msg[256];
  int n = snprintf(msg, sizeof(msg),
                   "iotap: IOTAP_CUPTI=1: %s; recording without device-side timing\n", why);
  if (n > 0) RawSyscall(SYS_write, 2, msg, static_cast<size_t>(n < 256 ? n : 255));
}

int FindLoaded(struct dl_phdr_info* info, size_t, void* out) {
  const char* name = info->dlpi_name;
  const char* base = name != nullptr ? strrchr(name, '/') : nullptr;
  base = base != nullptr ? base + 1 : name;
  if (base == nullptr || strncmp(base, "libcupti.so", 11) != 0) return 0;
  snprintf(static_cast<char*>(out), PATH_MAX, "%s", name);
  return 1;
}

void* LoadCupti() {
  char loaded[PATH_MAX] = {};
  dl_iterate_phdr(FindLoaded, loaded);
  if (loaded[0] != '\0') return dlopen(loaded, RTLD_NOW | RTLD_NOLOAD);
  for (const char* name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) {
    if (void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return handle;
  }
  return nullptr;
}

template <typename Fn>
bool Resolve(void* lib, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(RealDlsym()(lib, name));
  return *fn != nullptr;
}

void CUPTIAPI IgnoreCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

uint64_t CUPTIAPI MonotonicTimestamp() { return MonotonicNs(); }

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  void* p = mmap(nullptr, kBufferBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  *buffer = p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
  *size = p == MAP_FAILED ? 0 : kBufferBytes;
  *max_records = 0;
}

struct DeviceEvent {
  uint16_t op;
  uint16_t flags;
  int64_t start;
  int64_t end;
  uint64_t bytes;
  int64_t result;
  uint64_t stream;
};

// Encoding memory, used under g_encode_lock: the records of one chunk, one
// column's varints, the packet.
constinit DeviceEvent g_events[kMaxChunkRecords] = {};
constinit uint8_t g_column[kMaxChunkRecords * 10] = {};
constinit uint8_t g_packet[kMaxChunkRecords * 80 + 256] = {};

// The host side's memory kind of a copy, as FLAG_CUDA_PINNED or _PAGEABLE.
uint16_t HostFlag(const CUpti_ActivityMemcpy6& m) {
  uint8_t host;
  switch (m.copyKind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      host = m.srcKind;
      break;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      host = m.dstKind;
      break;
    default:
      return 0;
  }
  return host == CUPTI_ACTIVITY_MEMORY_KIND_PINNED     ? kFlagCudaPinned
         : host == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ? kFlagCudaPageable
                                                       : 0;
}

// One EventChunk of device events (see OP_CUPTI_MEMCPY in trace.proto).
// Caller holds g_encode_lock.
void WriteChunk(const DeviceEvent* events, uint32_t n) {
  if (n == 0) return;
  const int64_t unit = g_config.time_unit_ns;
  auto start = [&](uint32_t i) { return events[i].start / unit; };
  auto end = [&](uint32_t i) {
    return events[i].end > events[i].start ? events[i].end / unit : start(i);
  };
  WireWriter w(g_packet, sizeof(g_packet));
  size_t p = w.BeginNested(1);
  size_t chunk = w.BeginNested(4);
  int64_t base = start(0);
  w.Varint(2, static_cast<uint64_t>(base * unit));
  w.Varint(3, static_cast<uint64_t>(unit));
  w.VarintIfNonZero(4, g_next_seq);
  w.PackedVarints(10, n, g_column, [&](uint32_t i) { return events[i].op; });
  int64_t previous_end = base;
  w.PackedVarints(11, n, g_column, [&](uint32_t i) {
    int64_t gap = start(i) - previous_end;
    previous_end = end(i);
    return wire::ZigZag(gap);
  });
  w.PackedVarints(12, n, g_column,
                  [&](uint32_t i) { return static_cast<uint64_t>(end(i) - start(i)); });
  w.PackedVarints(15, n, g_column, [&](uint32_t i) { return events[i].bytes; });
  w.PackedVarints(16, n, g_column, [&](uint32_t i) { return wire::ZigZag(events[i].result); });
  w.PackedVarints(18, n, g_column, [&](uint32_t i) { return events[i].flags; });
  w.PackedVarints(20, n, g_column, [&](uint32_t i) { return events[i].stream; });
  w.EndNested(chunk);
  w.EndNested(p);
  if (!w.overflow()) WritePackets(g_packet, w.size());
  g_next_seq += n;
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  bool was_busy = tls_thread.busy;
  tls_thread.busy = true;
  DeviceEvent* events = g_events;
  pthread_mutex_lock(&g_encode_lock);
  uint32_t n = 0;
  CUpti_Activity* record = nullptr;
  while (buffer != nullptr && g_cupti.next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
    DeviceEvent& e = events[n];
    if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto& m = *reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      e = {kOpCuptiMemcpy,
           HostFlag(m),
           static_cast<int64_t>(m.start) + g_clock_offset,
           static_cast<int64_t>(m.end) + g_clock_offset,
           m.bytes,
           m.copyKind,
           m.streamId};
    } else if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
               record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto& k = *reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      e = {kOpCuptiKernel,
           0,
           static_cast<int64_t>(k.start) + g_clock_offset,
           static_cast<int64_t>(k.end) + g_clock_offset,
           0,
           0,
           k.streamId};
    } else {
      continue;
    }
    if (++n == kMaxChunkRecords) {
      WriteChunk(events, n);
      n = 0;
    }
  }
  WriteChunk(events, n);
  pthread_mutex_unlock(&g_encode_lock);
  if (buffer != nullptr) munmap(buffer, kBufferBytes);
  tls_thread.busy = was_busy;
}

void FlushAtExit() {
  if (g_cupti.flush_all != nullptr) g_cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void Start() {
  if (const char* injection = getenv("CUDA_INJECTION64_PATH"); injection != nullptr && *injection) {
    return Say("another CUPTI client is attached (CUDA_INJECTION64_PATH)");
  }
  void* lib = LoadCupti();
  if (lib == nullptr) return Say("libcupti cannot be loaded");
  Cupti c = {};
  if (!Resolve(lib, "cuptiSubscribe", &c.subscribe) ||
      !Resolve(lib, "cuptiActivityRegisterCallbacks", &c.register_callbacks) ||
      !Resolve(lib, "cuptiActivityEnable", &c.enable) ||
      !Resolve(lib, "cuptiActivityGetNextRecord", &c.next_record) ||
      !Resolve(lib, "cuptiActivityFlushAll", &c.flush_all) ||
      !Resolve(lib, "cuptiGetTimestamp", &c.timestamp)) {
    return Say("libcupti lacks the activity API");
  }
  Resolve(lib, "cuptiActivityRegisterTimestampCallback", &c.register_timestamp);
  CUpti_SubscriberHandle subscriber;
  CUptiResult r = c.subscribe(&subscriber, IgnoreCallback, nullptr);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    return Say("another CUPTI client is already attached");
  }
  if (r != CUPTI_SUCCESS) return Say("cuptiSubscribe failed");
  if (c.register_timestamp == nullptr ||
      c.register_timestamp(MonotonicTimestamp) != CUPTI_SUCCESS) {
    uint64_t cupti_now = 0;
    uint64_t before = MonotonicNs();
    c.timestamp(&cupti_now);
    uint64_t after = MonotonicNs();
    g_clock_offset =
        static_cast<int64_t>(before + (after - before) / 2) - static_cast<int64_t>(cupti_now);
  }
  g_cupti = c;
  if (c.register_callbacks(BufferRequested, BufferCompleted) != CUPTI_SUCCESS ||
      c.enable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS) {
    return Say("CUPTI refused activity collection");
  }
  c.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  atexit(FlushAtExit);
}

}  // namespace

void CuptiFirstCall() {
  if (!g_cupti_unchecked.exchange(false, std::memory_order_acq_rel)) return;
  if (!g_config.cupti || (g_active_layers.load(std::memory_order_relaxed) & kLayerCuda) == 0) {
    return;
  }
  bool was_busy = tls_thread.busy;
  tls_thread.busy = true;
  Start();
  tls_thread.busy = was_busy;
}

}  // namespace iotap::interpose
