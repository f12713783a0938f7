// The Python stack sampler's entry points, declared in interpose/iotap.h:
// the helper's sampler thread (interpose/python/iotap/_sampler.py) interns
// each Python function and stack once, through the shim's string table, and
// records each sample as one event on its own thread's ring, so samples line
// up with steps, data waits and I/O calls on the trace's clock.
//
// The sampler calls these through ctypes while it holds the GIL. None of them
// blocks, except that interning takes the string table lock, and recording
// an event into a full ring drains it (as every wrapper may).

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "interpose/pystacks/py_samples.h"

#include "interpose/core/io_event.h"
#include "interpose/core/strings.h"
#include "interpose/core/trace_call.h"

using namespace iotap::interpose;

namespace {

// Bounds of what the sampler may intern: a function's "QUALNAME\0FILE\0LINE"
// or a stack of up to 128 frames (two varints each, at most 5 + 5 bytes).
constexpr size_t kMaxPyString = 8192;


}  // namespace

IOTAP_EXPORT long long iotap_py_intern(int kind, const char* bytes, size_t size) {
  if ((kind != kKindPyFunction && kind != kKindPyStack) || bytes == nullptr || size == 0 ||
      size > kMaxPyString || !Recording()) {
    return 0;
  }
  ThreadState* ts = &tls_thread;
  if (ts->busy) return 0;
  ts->busy = true;
  uint32_t id = InternString(bytes, size, static_cast<StringKind>(kind));
  // Read after interning: a table emptied to make room for this string
  // counts, and `id` belongs to the new generation.
  uint32_t generation = StringGeneration();
  ts->busy = false;
  if (id == 0) return 0;
  return static_cast<long long>((static_cast<uint64_t>(generation) << 32) | id);
}

namespace iotap::interpose {

int RecordPySample(pid_t tid, uint32_t stack, int64_t cpu_ns, int64_t start_monotonic_ns,
                   int64_t end_monotonic_ns, uint32_t generation) {
  if (tid <= 0 || stack == 0 || cpu_ns < 0 || start_monotonic_ns <= 0 ||
      end_monotonic_ns < start_monotonic_ns) {
    return -1;
  }
  if (generation != StringGeneration()) return 1;
  TraceCall call(kLayerAll);
  RawEvent* e = call.Finish(kOpPySample, false);
  if (e == nullptr) return -1;
  e->t0 = static_cast<uint64_t>(start_monotonic_ns);
  e->t1 = static_cast<uint64_t>(end_monotonic_ns);
  e->file = stack;
  e->aux = static_cast<uint64_t>(tid);
  e->requested = static_cast<uint64_t>(cpu_ns);
  e->flags |= kFlagExplicitTimes;
  return 0;
}

uint32_t InternForSampler(const char* bytes, size_t n, StringKind kind) {
  ThreadState* ts = &tls_thread;
  bool was_busy = ts->busy;
  ts->busy = true;
  uint32_t id = InternString(bytes, n, kind);
  ts->busy = was_busy;
  return id;
}

int RecordPySamplerState(int state, int64_t samples_per_cpu_second, const char* note) {
  if (state < kPySamplerStarted || state > kPySamplerWithGil || samples_per_cpu_second < 0) {
    return -1;
  }
  TraceCall call(kLayerAll);
  RawEvent* e = call.Finish(kOpPySampler, false);
  if (e == nullptr) return -1;
  e->result = state;
  e->aux = static_cast<uint64_t>(samples_per_cpu_second);
  if (note != nullptr && note[0] != '\0') {
    e->file = InternString(note, strnlen(note, 4096), kKindMark);
  }
  return 0;
}

}  // namespace iotap::interpose

IOTAP_EXPORT int iotap_py_sample(int tid, unsigned stack, long long cpu_ns,
                                 long long start_monotonic_ns, long long end_monotonic_ns,
                                 unsigned generation) {
  return RecordPySample(tid, stack, cpu_ns, start_monotonic_ns, end_monotonic_ns, generation);
}

IOTAP_EXPORT int iotap_py_sampler(int state, long long samples_per_cpu_second,
                                  const char* note) {
  return RecordPySamplerState(state, samples_per_cpu_second, note);
}
