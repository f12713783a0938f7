#include "analyzer/steps/span_building.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace iotap::analyzer::internal {

int AddWaitsInside(const std::vector<TimeWindow>& waits, size_t* first, StepSpan* span) {
  // Waits that ended before this span cannot touch a later one either.
  while (*first < waits.size() && waits[*first].end_ns <= span->start_ns &&
         waits[*first].start_ns < span->start_ns) {
    ++*first;
  }
  int touched = 0;
  for (size_t i = *first; i < waits.size(); ++i) {
    const TimeWindow& w = waits[i];
    if (w.start_ns >= span->end_ns) break;
    // Overlapping, or an empty wait inside the span.
    bool inside =
        w.end_ns > span->start_ns || (w.end_ns == w.start_ns && w.start_ns >= span->start_ns);
    if (!inside) continue;
    ++touched;
    TimeWindow clipped{std::max(w.start_ns, span->start_ns), std::min(w.end_ns, span->end_ns)};
    std::vector<TimeWindow>& out = span->data_waits;
    if (!out.empty() && clipped.start_ns <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, clipped.end_ns);
    } else {
      out.push_back(clipped);
    }
  }
  return touched;
}

int64_t CountOutside(const std::vector<TimeWindow>& waits, const std::vector<TimeWindow>& steps) {
  int64_t outside = 0;
  for (const TimeWindow& w : waits) {
    // The last step that starts before the wait ends.
    auto after = std::lower_bound(steps.begin(), steps.end(), w.end_ns,
                                  [](const TimeWindow& s, int64_t t) { return s.start_ns < t; });
    bool inside = after != steps.begin() && std::prev(after)->end_ns > w.start_ns;
    if (!inside) ++outside;
  }
  return outside;
}

void ErrorList::Close() {
  if (more_ > 0) {
    log_->errors.push_back(absl::StrCat("... and ", more_, " more errors like these"));
  }
}

void ErrorList::Add(std::string message) {
  if (static_cast<int>(log_->errors.size()) < kMaxErrors) {
    log_->errors.push_back(std::move(message));
  } else {
    ++more_;
  }
}

void SortStepLog(StepLog* log) {
  std::stable_sort(log->spans.begin(), log->spans.end(), [](const StepSpan& a, const StepSpan& b) {
    return std::tie(a.rank, a.pid, a.start_ns) < std::tie(b.rank, b.pid, b.start_ns);
  });
  std::stable_sort(log->marks.begin(), log->marks.end(),
                   [](const StepMark& a, const StepMark& b) { return a.time_ns < b.time_ns; });
}

absl::StatusOr<StepLog> FinishStepLog(StepLog log) {
  if (log.spans.empty() && !log.errors.empty()) {
    return absl::DataLossError(
        absl::StrCat("no step could be read: ", absl::StrJoin(log.errors, "; ")));
  }
  SortStepLog(&log);
  return log;
}

std::optional<int64_t> SecondsToNs(double seconds) {
  // 2^63 ns is in April 2262.
  if (!std::isfinite(seconds) || seconds < 0 || seconds >= 9.2e9) return std::nullopt;
  double whole = std::floor(seconds);
  return static_cast<int64_t>(whole) * 1000000000 +
         static_cast<int64_t>(std::nearbyint((seconds - whole) * 1e9));
}

}  // namespace iotap::analyzer::internal
