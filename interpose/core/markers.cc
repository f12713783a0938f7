// The marker API declared in interpose/iotap.h (not included here: it declares the
// functions weak for callers): step boundaries, named instants and spans
// with caller-given times, recorded as events on the calling thread.

#include <string.h>

#include "interpose/core/io_event.h"
#include "interpose/core/strings.h"
#include "interpose/core/trace_call.h"

using namespace iotap::interpose;

IOTAP_EXPORT void iotap_step_begin(long long step) {
  TraceCall call(kLayerAll);
  if (RawEvent* e = call.Finish(kOpStepBegin, false)) e->aux = static_cast<uint64_t>(step);
}

IOTAP_EXPORT void iotap_step_end(long long step) {
  TraceCall call(kLayerAll);
  if (RawEvent* e = call.Finish(kOpStepEnd, false)) e->aux = static_cast<uint64_t>(step);
}

IOTAP_EXPORT void iotap_mark(const char* name) {
  TraceCall call(kLayerAll);
  if (RawEvent* e = call.Finish(kOpMark, false)) {
    if (name != nullptr) e->file = InternString(name, strnlen(name, 4096), kKindMark);
  }
}

// Unlike the calls above, the event's times are not the shim's own: they are
// the caller's CLOCK_MONOTONIC readings, flagged so that the writer does not
// take them for TSC ticks (file/packets.cc).
IOTAP_EXPORT int iotap_span(int kind, long long step, long long start_monotonic_ns,
                            long long end_monotonic_ns) {
  if ((kind != kOpDataWait && kind != kOpOptimizerStep) || start_monotonic_ns <= 0 ||
      end_monotonic_ns < start_monotonic_ns) {
    return -1;
  }
  TraceCall call(kLayerAll);
  RawEvent* e = call.Finish(static_cast<Op>(kind), false);
  if (e == nullptr) return -1;
  e->t0 = static_cast<uint64_t>(start_monotonic_ns);
  e->t1 = static_cast<uint64_t>(end_monotonic_ns);
  e->aux = static_cast<uint64_t>(step);
  e->flags |= kFlagExplicitTimes;
  return 0;
}
