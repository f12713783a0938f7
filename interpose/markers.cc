// The marker API declared in iotap.h (not included here: it declares the
// functions weak for callers): step boundaries and named instants, recorded
// as events on the calling thread.

#include <string.h>

#include "interpose/io_event.h"
#include "interpose/strings.h"
#include "interpose/trace_call.h"

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
