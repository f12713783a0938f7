#include "analyzer/interval_union.h"

#include <algorithm>

namespace iotap::analyzer {

void IntervalUnion::Emit(const Segment& s) {
  total_ns_ += s.end - s.start;
  emitted_until_ = s.end;
  if (sink_) sink_(s.start, s.end);
}

void IntervalUnion::Add(int64_t start, int64_t end) {
  if (end <= start) return;
  if (start < emitted_until_) {
    int64_t clipped = std::min(end, emitted_until_) - start;
    late_clipped_ns_ += clipped;
    start = emitted_until_;
    if (end <= start) return;
  }
  latest_end_ = std::max(latest_end_, end);
  // Intervals mostly come in order, touching only the last segment: no
  // earlier segment can reach an interval that starts at or after the last
  // one's start.
  if (!segments_.empty() && start >= segments_.back().start) {
    Segment& back = segments_.back();
    if (start > back.end) {
      segments_.push_back(Segment{start, end});
    } else {
      back.end = std::max(back.end, end);
    }
    EmitOlderThanHorizon();
    return;
  }
  auto it = std::lower_bound(segments_.begin(), segments_.end(), start,
                             [](const Segment& s, int64_t t) { return s.end < t; });
  Segment merged{start, end};
  auto first = it;
  while (it != segments_.end() && it->start <= merged.end) {
    merged.start = std::min(merged.start, it->start);
    merged.end = std::max(merged.end, it->end);
    ++it;
  }
  it = segments_.erase(first, it);
  segments_.insert(it, merged);
  EmitOlderThanHorizon();
}

void IntervalUnion::EmitOlderThanHorizon() {
  while (!segments_.empty() && segments_.front().end < latest_end_ - horizon_ns_) {
    Emit(segments_.front());
    segments_.pop_front();
  }
}

void IntervalUnion::Finish() {
  for (const Segment& s : segments_) Emit(s);
  segments_.clear();
}

}  // namespace iotap::analyzer
