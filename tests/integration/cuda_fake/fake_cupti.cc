// A stand-in for CUPTI, libcupti.so.13, for testing IOTAP_CUPTI=1 without a
// GPU: its activity API delivers three records when flushed (at the latest
// at exit), timed from when activity was first enabled:
//
//   memcpy  HtoD, pinned -> device, 4096 bytes, stream 7, +1000..+6000 ns
//   kernel  stream 7, +7000..+9000 ns
//   memcpy  DtoH, device -> pageable, 1024 bytes, stream 7, +10000..+12000 ns
//
// Its own clock runs 5000 s ahead of CLOCK_MONOTONIC; a client's timestamp
// callback replaces it, as in CUPTI.
//
//   IOTAP_FAKE_CUPTI_BUSY=1       cuptiSubscribe says another client holds CUPTI
//   IOTAP_FAKE_CUPTI_OWN_CLOCK=1  the timestamp callback is not supported

#include <cupti.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

namespace {

CUpti_BuffersCallbackRequestFunc g_requested = nullptr;
CUpti_BuffersCallbackCompleteFunc g_completed = nullptr;
CUpti_TimestampCallbackFunc g_timestamp = nullptr;
uint64_t g_enabled_at = 0;
bool g_delivered = false;

bool Set(const char* name) {
  const char* v = getenv(name);
  return v != nullptr && strcmp(v, "1") == 0;
}

uint64_t Now() {
  if (g_timestamp != nullptr) return g_timestamp();
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000ull + ts.tv_nsec + 5000000000000ull;
}

size_t SizeOf(const CUpti_Activity* record) {
  return record->kind == CUPTI_ACTIVITY_KIND_MEMCPY ? sizeof(CUpti_ActivityMemcpy6)
                                                    : sizeof(CUpti_ActivityKernel10);
}

size_t AddCopy(uint8_t* at, CUpti_ActivityMemcpyKind kind, uint8_t src, uint8_t dst, uint64_t bytes,
               uint64_t from, uint64_t to) {
  CUpti_ActivityMemcpy6 m = {};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = kind;
  m.srcKind = src;
  m.dstKind = dst;
  m.bytes = bytes;
  m.start = g_enabled_at + from;
  m.end = g_enabled_at + to;
  m.streamId = 7;
  memcpy(at, &m, sizeof(m));
  return sizeof(m);
}

size_t AddKernel(uint8_t* at, uint64_t from, uint64_t to) {
  CUpti_ActivityKernel10 k = {};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = g_enabled_at + from;
  k.end = g_enabled_at + to;
  k.streamId = 7;
  memcpy(at, &k, sizeof(k));
  return sizeof(k);
}

}  // namespace

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc,
                                       void*) {
  if (Set("IOTAP_FAKE_CUPTI_BUSY")) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(1);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed) {
  g_requested = requested;
  g_completed = completed;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f) {
  if (Set("IOTAP_FAKE_CUPTI_OWN_CLOCK")) return CUPTI_ERROR_NOT_SUPPORTED;
  g_timestamp = f;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
  *timestamp = Now();
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind) {
  if (g_enabled_at == 0) g_enabled_at = Now();
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t) {
  if (g_delivered || g_requested == nullptr || g_enabled_at == 0) return CUPTI_SUCCESS;
  g_delivered = true;
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  g_requested(&buffer, &size, &max_records);
  if (buffer == nullptr || size < 4096) return CUPTI_ERROR_UNKNOWN;
  size_t used = AddCopy(buffer, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                        CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 4096, 1000, 6000);
  used += AddKernel(buffer + used, 7000, 9000);
  used += AddCopy(buffer + used, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                  CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 1024, 10000, 12000);
  g_completed(nullptr, 0, buffer, size, used);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid,
                                                   CUpti_Activity** record) {
  uint8_t* next =
      *record == nullptr ? buffer : reinterpret_cast<uint8_t*>(*record) + SizeOf(*record);
  if (next >= buffer + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return CUPTI_SUCCESS;
}
