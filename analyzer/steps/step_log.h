// Training steps, from wherever the framework recorded them.
//
// Every source (TensorBoard event files, PyTorch profiler traces, JSON-lines
// step logs, and the in-band markers libiotap.so records) is normalised into
// StepSpans on one time base: wall-clock nanoseconds since the Unix epoch.
// The analyzer places trace events on the same base through each process's
// clock snapshots, so steps and I/O line up without hand-shifted clocks.
//
//   absl::StatusOr<StepLog> log = ReadStepLog("runs/exp1/events.out.tfevents.1622543341.host");
//   if (!log.ok()) ...                     // unreadable, not a step log, or nothing usable
//   for (const std::string& e : log->errors) ...  // damage read past: report it
//   for (const StepSpan& s : log->spans) ... s.step, s.start_ns, s.end_ns ...
//
// What a step span is differs by source, because sources record different
// moments; each reader says so in StepLog::notes, and README.md next to this
// header lists the definitions. The readers: tensorboard_reader.h,
// profiler_reader.h, jsonl_reader.h; in-band markers: marker_steps.h.

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
  int rank = -1;         // -1: the source does not say
  int pid = 0;           // 0: the source does not say
  int64_t start_ns = 0;  // wall clock, ns since the epoch (see StepLog::wall_clock)
  int64_t end_ns = 0;
  // When the training loop waited for its next batch during the step, if the
  // source knows (profiler `enumerate(DataLoader)#...__next__` spans, the
  // iotap markers' data-wait spans, a JSON-lines `data_wait` field). Empty
  // means unknown, not zero: see has_data_wait. Windows lie inside
  // [start_ns, end_ns), in time order, without overlaps.
  std::vector<TimeWindow> data_waits;
  // True when the source records waits, so empty data_waits means the step
  // did not wait.
  bool has_data_wait = false;

  int64_t duration_ns() const { return end_ns - start_ns; }
  // Total of data_waits (0 when there are none).
  int64_t data_wait_ns() const;
};

enum class StepSource { kTensorBoard, kProfiler, kJsonLines, kMarkers };

// "TensorBoard", "PyTorch profiler", "JSON lines", "iotap markers".
const char* StepSourceName(StepSource source);

// A named instant (iotap_mark; the Python helper marks "epoch" at every
// iter(DataLoader)).
struct StepMark {
  std::string name;
  int64_t time_ns = 0;  // on the same base as the spans
  int rank = -1;
  int pid = 0;
};

// The end of a collective operation that every rank completes at about the
// same moment (an all-reduce, all-gather or reduce-scatter; not a send or a
// broadcast): the `index`-th that ended in step `step` of rank `rank`. Read
// from profiler traces (gloo's collectives, NCCL's kernels); the host clock
// fit takes them as anchors beside the step ends (clocks/clock_alignment.h).
struct CollectiveEnd {
  int64_t step = 0;
  int index = 0;  // 0, 1, ... in the order they ended within the step
  int rank = -1;
  int64_t end_ns = 0;
};

struct StepLog {
  StepSource source = StepSource::kJsonLines;
  std::string path;  // the file read (or "markers of pid N in FILE")
  // Sorted by (rank, pid, start): by (rank, start) wherever each rank is one
  // process, as it is in every source but markers read from many processes.
  std::vector<StepSpan> spans;
  std::vector<StepMark> marks;  // sorted by time
  std::vector<CollectiveEnd> collectives;  // by rank, step and index
  // False when the source's times count from an origin it does not record
  // (PyTorch 1.13 built without Kineto: microseconds since the profiler
  // started). Spans then start near 0, durations and data-wait shares are
  // exact, and the steps cannot be lined up with trace events; the notes say
  // so.
  bool wall_clock = true;
  // What the reader had to assume, for the report ("older profiler format:
  // times are absolute epoch microseconds"; "TensorBoard records one time
  // per step: a step spans from the previous step's record to its own").
  std::vector<std::string> notes;
  // Set where the steps are not what the source's usual rule makes them
  // (markers without optimizer steps: loader iterations): the report shows
  // it, whatever the source.
  std::string step_definition;
  // Damage the reader found and read past, each naming the file and the
  // place (record number and byte offset, line): a bad CRC, a malformed line,
  // a file cut short. Spans hold everything that could be read.
  std::vector<std::string> errors;
};

// Reads a step log of any supported kind, recognised by its contents
// (TFRecord framing with a valid CRC, a JSON object with "traceEvents" or a
// JSON array, JSON objects with "step", a zstd-compressed iotap trace), plain
// or gzip-compressed. Fails when the file cannot be read, is none of these,
// or is damaged before a single step could be read; errors name the file and
// say what was wrong and where (record number, byte offset or line).
absl::StatusOr<StepLog> ReadStepLog(const std::string& path);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_STEPS_STEP_LOG_H_
