#include "analyzer/accumulate/interval_union.h"

#include <algorithm>
#include <cstddef>

#include "analyzer/base/numbers.h"

namespace iotap::analyzer {

void IntervalUnion::Emit(const Segment& s) {
  AddTo(&total_ns_, s.end - s.start);
  emitted_until_ = s.end;
  if (sink_) sink_(s.start, s.end);
}

void IntervalUnion::Add(int64_t start, int64_t end) {
  if (end <= start) return;
  if (start < emitted_until_) {
    int64_t clipped = std::min(end, emitted_until_) - start;
    AddTo(&late_clipped_ns_, clipped);
    start = emitted_until_;
    if (end <= start) return;
  }
  latest_end_ = std::max(latest_end_, end);
  // Intervals mostly come in order, touching only the last segment: no
  // earlier segment can reach an interval that starts at or after the last
  // one's start.
  if (segments_.size() > first_ && start >= segments_.back().start) {
    Segment& back = segments_.back();
    if (start > back.end) {
      segments_.push_back(Segment{start, end});
    } else {
      back.end = std::max(back.end, end);
    }
    EmitOlderThanHorizon();
    return;
  }
  auto it = std::lower_bound(segments_.begin() + static_cast<ptrdiff_t>(first_), segments_.end(),
                             start, [](const Segment& s, int64_t t) { return s.end < t; });
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
  while (first_ < segments_.size() && segments_[first_].end < latest_end_ - horizon_ns_) {
    Emit(segments_[first_++]);
  }
  // Drop the segments handed on once they are most of the vector.
  if (first_ > 1024 && first_ * 2 > segments_.size()) {
    segments_.erase(segments_.begin(), segments_.begin() + static_cast<ptrdiff_t>(first_));
    first_ = 0;
  }
}

void IntervalUnion::Finish() {
  for (size_t i = first_; i < segments_.size(); ++i) Emit(segments_[i]);
  segments_.clear();
  first_ = 0;
}

}  // namespace iotap::analyzer
