#include "analyzer/analysis/time_range.h"

#include <algorithm>

namespace iotap::analyzer {

void RangeFilter::OnEvents(const ProcessTrace& process, const EventBatch& batch) {
  if (batch.events.empty()) return;
  // One wall-clock offset per chunk, as the analysis takes it.
  int64_t offset =
      process.ToRealtimeNs(batch.events.front().start_ns) - batch.events.front().start_ns;
  int64_t start = start_ - offset, end = end_ - offset;  // the range on this chunk's clock
  kept_.tid = batch.tid;
  kept_.dropped_before = batch.dropped_before;
  kept_.events.clear();
  for (const Event& e : batch.events) {
    if (TraitsOf(e.op).layer == Layer::kMarker) {
      kept_.events.push_back(e);
    } else if (e.end_ns >= start && e.end_ns < end) {
      Event& k = kept_.events.emplace_back(e);
      k.start_ns = std::max(k.start_ns, start);
    }
  }
  inner_->OnEvents(process, kept_);
}

bool KeepStepsInRange(std::vector<StepSpan>* steps, int64_t start_unix_ns, int64_t end_unix_ns) {
  bool first_kept = false;
  std::vector<StepSpan> kept;
  for (size_t k = 0; k < steps->size(); ++k) {
    StepSpan& s = (*steps)[k];
    if (s.end_ns < start_unix_ns || s.end_ns >= end_unix_ns) continue;
    if (k == 0) first_kept = true;
    s.start_ns = std::max(s.start_ns, start_unix_ns);
    std::vector<TimeWindow> waits;
    for (const TimeWindow& w : s.data_waits) {
      if (w.end_ns <= start_unix_ns) continue;
      waits.push_back(TimeWindow{std::max(w.start_ns, start_unix_ns), w.end_ns});
    }
    s.data_waits = std::move(waits);
    kept.push_back(std::move(s));
  }
  *steps = std::move(kept);
  return first_kept;
}

}  // namespace iotap::analyzer
