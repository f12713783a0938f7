// Steps from the in-band markers libiotap.so records (interpose/iotap.h and
// the Python helper interpose/python/iotap): OP_STEP_BEGIN, OP_STEP_END,
// OP_DATA_WAIT, OP_OPTIMIZER_STEP and OP_MARK events, one StepLog per trace
// file (that is, per process image), with the rank from the process header.
//
// What a step span is, in order of precedence:
//  - explicit markers (iotap_step_begin/end, iotap.step()): from a step's
//    begin marker to the end marker with the same number;
//  - otherwise optimizer steps (iotap.instrument_torch(), `iotap run
//    --torch-steps`): steps are numbered by the helper (aux); step N spans
//    from the end of the last optimizer step of the step before it to the end
//    of its own last optimizer step; the first step recorded starts with its
//    first event (its first data wait, as a rule);
//  - otherwise, with data waits alone (an evaluation or inference loop, a
//    hand-written update), each iteration of the loader: from one data
//    wait's start to the next one's, or to an "epoch" mark between them;
//    the last wait gives no step. StepLog::step_definition says so.
// Either way a step's data waits are the OP_DATA_WAIT spans inside it,
// clipped to it; has_data_wait is true when the process recorded any data
// wait. Marks ("epoch") become StepLog::marks. Times are converted from
// CLOCK_MONOTONIC to the wall clock with the process's clock snapshots
// (ProcessTrace::ToRealtimeNs): each step boundary on its own, so that
// consecutive steps stay contiguous, and a step's waits with the offset of
// its start, so that they stay inside it.
//
// Use it as the TraceVisitor of ReadTraceFile, or call its three On*
// methods from another visitor while it reads:
//
//   MarkerCollector markers;
//   for (const std::string& file : trace_files) {
//     if (absl::Status s = ReadTraceFile(file, &markers, &issues); !s.ok()) return s;
//   }
//   std::vector<StepLog> logs = markers.TakeLogs();
//
// It keeps only marker events (a few per step), and reads one file at a
// time: OnFileEnd closes the file begun by OnProcess. Not thread-safe.

#ifndef IOTAP_ANALYZER_STEPS_MARKER_STEPS_H_
#define IOTAP_ANALYZER_STEPS_MARKER_STEPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/read/trace_reader.h"
#include "analyzer/steps/step_log.h"

namespace iotap::analyzer {

class MarkerCollector : public TraceVisitor {
 public:
  void OnProcess(const ProcessTrace& process) override;
  void OnEvents(const ProcessTrace& process, const EventBatch& batch) override;
  void OnFileEnd(const ProcessTrace& process) override;

  // The logs of the files read so far that recorded any marker, in the order
  // they were read; the collector is empty afterwards.
  std::vector<StepLog> TakeLogs();

 private:
  struct Marker {
    Op op = OP_UNSPECIFIED;
    int64_t start_ns = 0;  // CLOCK_MONOTONIC
    int64_t end_ns = 0;
    int64_t step = 0;  // aux
  };
  struct Mark {
    std::string name;
    int64_t time_ns = 0;  // CLOCK_MONOTONIC
  };

  std::string path_;             // the file being read
  std::vector<Marker> markers_;  // ... and its markers
  std::vector<Mark> marks_;
  std::vector<StepLog> logs_;
};

// The markers of one trace file (ReadStepLog uses it for .iotap files). A
// file without markers gives a log without spans, and a note that says so.
absl::StatusOr<StepLog> ReadMarkerSteps(const std::string& trace_path);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_STEPS_MARKER_STEPS_H_
