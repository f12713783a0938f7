// PyTorch profiler traces (Chrome trace JSON, `prof.export_chrome_trace` or
// torch.profiler.tensorboard_trace_handler) as step logs, plain or .gz.
//
// A step is a `ProfilerStep#N` span ("ph": "X"; the GPU copies, with a "cat"
// starting "gpu_", are left out): [ts, ts + dur). A step's data waits are the
// `enumerate(DataLoader)#<Iterator>.__next__` spans that lie inside it,
// clipped to it. When the trace has no such span at all, data waits are
// unknown; when it has some, a step without one did not wait.
//
// Three time bases, told apart by the file:
//  - current Kineto: `baseTimeNanoseconds` is given, and `ts` counts
//    microseconds from it;
//  - older Kineto: no `baseTimeNanoseconds`, `ts` are absolute epoch
//    microseconds (taken as such when they are after 2001-09-09);
//  - PyTorch without Kineto (Debian's python3-torch 1.13): a bare JSON array,
//    "pid": "CPU functions", and `ts` counting microseconds from the moment
//    the profiler began recording, which the file does not give. Steps keep
//    those times (they start near 0) with StepLog::wall_clock false: their
//    durations and waits are exact, their place on the wall clock unknown.
// `ts` and `dur` are read as exact decimals (no double rounding), so a
// nanosecond written as "123.456" stays one. The rank comes from
// `distributedInfo.rank`.
//
// The JSON is tokenized as it streams in (json_tokenizer.h); memory
// grows with the number of steps and waits, not the size of the file. A
// malformed or cut file keeps the steps before the damage and reports the
// line, column and byte offset in StepLog::errors.

#ifndef IOTAP_ANALYZER_STEPS_PROFILER_READER_H_
#define IOTAP_ANALYZER_STEPS_PROFILER_READER_H_

#include <string>

#include "absl/status/statusor.h"
#include "analyzer/steps/step_log.h"

namespace iotap::analyzer {

absl::StatusOr<StepLog> ReadProfilerTrace(const std::string& path);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_STEPS_PROFILER_READER_H_
