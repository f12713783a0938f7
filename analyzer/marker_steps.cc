// Step spans from a process's in-band markers.
//
// - iotap_step_begin(n) / iotap_step_end(n) pairs are steps as they are.
// - Without them, optimizer-step spans (iotap run --torch-steps) delimit
//   steps: step n runs from the end of the previous optimizer step (for the
//   first, the start of its first data wait) to the end of optimizer step n.
// - Data-wait spans belong to the step that contains their middle.

#include <algorithm>
#include <map>

#include "analyzer/run_state.h"

namespace iotap::analyzer::internal {

std::vector<StepSpan> StepsFromMarkers(const std::vector<TimedEvent>& markers, int pid,
                                       int rank) {
  std::map<int64_t, StepSpan> paired;
  std::map<int64_t, bool> begun, ended;
  std::vector<const TimedEvent*> waits, optimizer;
  for (const TimedEvent& m : markers) {
    int64_t step = static_cast<int64_t>(m.aux);
    switch (m.op) {
      case OP_STEP_BEGIN:
        paired[step].start_ns = m.start_unix_ns;
        begun[step] = true;
        break;
      case OP_STEP_END:
        paired[step].end_ns = m.end_unix_ns;
        ended[step] = true;
        break;
      case OP_DATA_WAIT:
        waits.push_back(&m);
        break;
      case OP_OPTIMIZER_STEP:
        optimizer.push_back(&m);
        break;
      default:
        break;
    }
  }
  std::vector<StepSpan> spans;
  for (auto& [step, span] : paired) {
    if (!begun[step] || !ended[step] || span.end_ns < span.start_ns) continue;
    span.step = step;
    spans.push_back(span);
  }
  auto by_start = [](const TimedEvent* a, const TimedEvent* b) {
    return a->start_unix_ns < b->start_unix_ns;
  };
  std::sort(waits.begin(), waits.end(), by_start);
  std::sort(optimizer.begin(), optimizer.end(), by_start);
  if (spans.empty()) {
    int64_t previous_end = waits.empty() ? (optimizer.empty() ? 0 : optimizer[0]->start_unix_ns)
                                         : waits[0]->start_unix_ns;
    for (const TimedEvent* o : optimizer) {
      StepSpan span;
      span.step = static_cast<int64_t>(o->aux);
      span.start_ns = std::min(previous_end, o->start_unix_ns);
      span.end_ns = o->end_unix_ns;
      previous_end = o->end_unix_ns;
      spans.push_back(span);
    }
  }
  std::sort(spans.begin(), spans.end(),
            [](const StepSpan& a, const StepSpan& b) { return a.start_ns < b.start_ns; });
  for (StepSpan& span : spans) {
    span.pid = pid;
    span.rank = rank;
    span.has_data_wait = !waits.empty();
  }
  size_t s = 0;
  for (const TimedEvent* w : waits) {
    int64_t middle = w->start_unix_ns + (w->end_unix_ns - w->start_unix_ns) / 2;
    while (s < spans.size() && spans[s].end_ns <= middle) ++s;
    if (s < spans.size() && spans[s].start_ns <= middle) {
      spans[s].data_waits.push_back(TimeWindow{w->start_unix_ns, w->end_unix_ns});
    }
  }
  return spans;
}

}  // namespace iotap::analyzer::internal
