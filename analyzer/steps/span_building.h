// Helpers the step-log readers share: placing data waits inside steps,
// ordering a finished log, turning seconds into nanoseconds.

#ifndef IOTAP_ANALYZER_STEPS_SPAN_BUILDING_H_
#define IOTAP_ANALYZER_STEPS_SPAN_BUILDING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/steps/step_log.h"

namespace iotap::analyzer::internal {

// Adds to span->data_waits the parts of `waits` (sorted by start) that lie
// inside the span, clipped to it, overlapping ones merged. Returns how many
// of `waits` touched the span. `*first` (start at 0) remembers where the scan
// may begin: call it for spans in order of start.
int AddWaitsInside(const std::vector<TimeWindow>& waits, size_t* first, StepSpan* span);

// How many of `waits` overlap none of `steps` (both sorted by start; steps
// do not overlap one another).
int64_t CountOutside(const std::vector<TimeWindow>& waits, const std::vector<TimeWindow>& steps);

// Collects a reader's error messages, keeping the first kMaxErrors: a file
// that is damaged throughout says so once, not a million times.
class ErrorList {
 public:
  static constexpr int kMaxErrors = 20;
  explicit ErrorList(StepLog* log) : log_(log) {}
  ErrorList(const ErrorList&) = delete;
  ErrorList& operator=(const ErrorList&) = delete;
  void Add(std::string message);
  // Adds "... and N more" for those left out; call once, at the end.
  void Close();

 private:
  StepLog* log_;
  int64_t more_ = 0;
};

// Sorts spans by (rank, pid, start) and marks by time.
void SortStepLog(StepLog* log);

// The log, sorted; or, when damage left no span at all, an error that lists
// the damage.
absl::StatusOr<StepLog> FinishStepLog(StepLog log);

// Epoch seconds as a double (TensorBoard's wall_time) to ns: the whole
// seconds exactly, the fraction rounded to the nearest ns (halves to even).
// nullopt for NaN, infinities and times before 1970 or after 2262.
std::optional<int64_t> SecondsToNs(double seconds);

}  // namespace iotap::analyzer::internal

#endif  // IOTAP_ANALYZER_STEPS_SPAN_BUILDING_H_
