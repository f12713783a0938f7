// What every StepLog a reader returns must satisfy (analyzer/steps/step_log.h),
// checked by the step-log fuzzers on whatever they make the readers read.

#ifndef IOTAP_TESTS_FUZZ_STEP_LOG_CHECK_H_
#define IOTAP_TESTS_FUZZ_STEP_LOG_CHECK_H_

#include <tuple>

#include "absl/status/statusor.h"
#include "analyzer/steps/span_building.h"
#include "analyzer/steps/step_log.h"
#include "tests/fuzz/fuzz_support.h"

namespace iotap::fuzz {

inline void CheckStepLog(const absl::StatusOr<analyzer::StepLog>& log) {
  if (!log.ok()) return;
  const analyzer::StepSpan* previous = nullptr;
  for (const analyzer::StepSpan& s : log->spans) {
    // Sorted by (rank, pid, start).
    if (previous != nullptr) {
      FUZZ_CHECK(std::tie(previous->rank, previous->pid, previous->start_ns) <=
                 std::tie(s.rank, s.pid, s.start_ns));
    }
    previous = &s;
    // Waits inside the step, in time order, without overlaps; none unless
    // the source records waits.
    FUZZ_CHECK(s.has_data_wait || s.data_waits.empty());
    int64_t at = s.start_ns;
    for (const analyzer::TimeWindow& w : s.data_waits) {
      FUZZ_CHECK(w.start_ns >= at);
      FUZZ_CHECK(w.end_ns >= w.start_ns);
      FUZZ_CHECK(w.end_ns <= s.end_ns);
      at = w.end_ns;
    }
  }
  for (size_t i = 1; i < log->marks.size(); ++i) {
    FUZZ_CHECK(log->marks[i - 1].time_ns <= log->marks[i].time_ns);
  }
  // Damage is reported once per place, up to a bound, plus "... and N more".
  FUZZ_CHECK(log->errors.size() <= analyzer::internal::ErrorList::kMaxErrors + 1);
}

}  // namespace iotap::fuzz

#endif  // IOTAP_TESTS_FUZZ_STEP_LOG_CHECK_H_
