// JSON-lines step logs: the format any framework (or a few lines of the
// user's own code) can write, one JSON object per line, one line per step:
//
//   {"step": 12, "start": 1700000000.125, "end": 1700000000.480, "data_wait": 0.052, "rank": 0}
//
//   step       integer, required: the step number
//   start      number, required: when the step began, seconds since the Unix
//              epoch (time.time()); read as an exact decimal, so nine
//              decimals give nanoseconds
//   end        number, required, >= start: when the step ended, same unit
//   data_wait  number >= 0, optional: seconds of the step spent waiting for
//              data; the log does not say when, so the wait is placed at the
//              start of the step (where a `for batch in loader` loop waits),
//              cut to the step's length if longer
//   data_waits array of [start, end] pairs, optional: the waits themselves,
//              in epoch seconds; clipped to the step; wins over data_wait
//   rank, pid  integers, optional: who ran the step (default: unknown)
//
// Every other field (epoch, loss, lr, phase durations such as "forward" or
// "backward") is accepted and ignored, so a log can carry what its writer
// likes. Blank lines are skipped. A line that is not such an object is
// reported in StepLog::errors ("FILE: line 7, column 12 (byte 391): ...") and
// skipped; the other lines are read.
//
// Written from Python:
//
//   t0 = time.time(); batch = next(it); t1 = time.time(); train(batch); t2 = time.time()
//   log.write(json.dumps({"step": n, "start": t0, "end": t2, "data_wait": t1 - t0}) + "\n")

#ifndef IOTAP_ANALYZER_STEPS_JSONL_READER_H_
#define IOTAP_ANALYZER_STEPS_JSONL_READER_H_

#include <string>

#include "absl/status/statusor.h"
#include "analyzer/steps/step_log.h"

namespace iotap::analyzer {

// Reads a JSON-lines step log, plain or gzip-compressed.
absl::StatusOr<StepLog> ReadJsonLinesLog(const std::string& path);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_STEPS_JSONL_READER_H_
