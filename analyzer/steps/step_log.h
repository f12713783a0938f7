// Training steps, from wherever the framework recorded them.
//
// Every source (TensorBoard event files, PyTorch profiler traces, JSON-lines
// step logs, and the in-band markers libiotap.so records) is normalised into
// StepSpans on one time base: wall-clock nanoseconds since the Unix epoch.
// The analyzer places trace events on the same base through each process's
// clock snapshots, so steps and I/O line up without hand-shifted clocks.
//
//   absl::StatusOr<StepLog> log = ReadStepLog("runs/exp1/events.out.tfevents.1622543341.host");
//   for (const StepSpan& s : log->spans) ... s.step, s.start_ns, s.end_ns ...

#ifndef IOTAP_ANALYZER_STEPS_STEP_LOG_H_
#define IOTAP_ANALYZER_STEPS_STEP_LOG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace iotap::analyzer {

// A stretch of time inside a step, [start_ns, end_ns), wall-clock ns.
struct TimeWindow {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t duration_ns() const { return end_ns - start_ns; }
};

struct StepSpan {
  int64_t step = 0;
  int rank = -1;        // -1: the source does not say
  int pid = 0;          // 0: the source does not say
  int64_t start_ns = 0;  // wall clock, ns since the epoch
  int64_t end_ns = 0;
  // When the training loop waited for its next batch during the step, if the
  // source knows (profiler `enumerate(DataLoader)#...__next__` spans, the
  // iotap markers' data-wait spans, a JSON-lines `data_wait` field). Empty
  // means unknown, not zero: see has_data_wait.
  std::vector<TimeWindow> data_waits;
  bool has_data_wait = false;

  int64_t duration_ns() const { return end_ns - start_ns; }
  int64_t data_wait_ns() const;
};

enum class StepSource { kTensorBoard, kProfiler, kJsonLines, kMarkers };

struct StepLog {
  StepSource source = StepSource::kJsonLines;
  std::string path;                 // the file read (or "markers of pid N")
  std::vector<StepSpan> spans;      // sorted by (rank, start)
  // What the reader had to assume, for the report ("older profiler format:
  // times are absolute epoch microseconds"; "TensorBoard records one time
  // per step: a step spans from the previous step's record to its own").
  std::vector<std::string> notes;
};

// Reads a step log of any supported kind, recognised by its contents (and
// its name for .gz files). Errors name the file and say what was wrong and
// where (record number, byte offset or line).
absl::StatusOr<StepLog> ReadStepLog(const std::string& path);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_STEPS_STEP_LOG_H_
