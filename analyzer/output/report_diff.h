// Two runs compared: the key figures of each report side by side with their
// change, and which findings were resolved, are new, or persist
// (proto/iotap/diff.proto).
//
//   report::ReportDiff d = DiffReports(before, after);
//   for (const report::MetricDiff& m : d.metrics()) ...
//
// The figures (ids, in this order; A = before, B = after):
// - steps: steps, median_step_s, p90_step_s, steps_per_s (counted steps
//   over their summed duration, i.e. one over the mean step time; warm-up
//   steps are left out as in the report's statistics), duration_s.
// - data stalls: data_stall_share (wait over step time), median_data_wait_s,
//   data_wait_s (total) and its split fetch_s / prep_s / other_s,
//   exposed_io_s, hidden_io_s, hidden_share (hidden / (hidden + exposed)).
// - I/O: io_busy_s, read_bytes_per_s (over the run), bytes_read,
//   bytes_written.
// - data files: data_files, reads, opens, metadata_ops, metadata_s,
//   median_read_bytes, mean_read_latency_s.
// - loaders: trainers, loaders, loader_cores (in use during counted steps),
//   loader_run_queue_cores, loader_cpu_s (user + system of every loader).
// - trace: dropped_events.
// A figure is absent (n/a) when its run cannot give it: step figures without
// steps, stall figures when no step source says when steps waited, read
// sizes and latencies without reads. Nothing is divided by zero.
//
// Verdicts: a change is SAME below the noise floor (kNoiseRelative of A's
// value; for shares kNoiseShare of absolute change), otherwise BETTER or
// WORSE where the direction is obvious (a lower stall share is better; fewer
// bytes read is not obviously either). Totals that grow with the work done
// (duration, seconds of I/O and of waiting) are judged only when both runs
// ran the same, non-zero number of steps.
//
// Findings are matched by rule id (the n-th finding of an id in A with the
// n-th in B), their evidence by name.

#ifndef IOTAP_ANALYZER_OUTPUT_REPORT_DIFF_H_
#define IOTAP_ANALYZER_OUTPUT_REPORT_DIFF_H_

#include "iotap/diff.pb.h"
#include "iotap/report.pb.h"

namespace iotap::analyzer {

// Relative changes smaller than this are SAME (2%).
inline constexpr double kNoiseRelative = 0.02;
// Changes of a share smaller than this are SAME (one percentage point).
inline constexpr double kNoiseShare = 0.01;

// Compares `a` (before) with `b` (after). Fills everything but the sides'
// `path` and `source`, which only the caller knows.
report::ReportDiff DiffReports(const report::Report& a, const report::Report& b);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_OUTPUT_REPORT_DIFF_H_
