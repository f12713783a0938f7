// A report made small enough to embed in a web page, whatever the size of
// the run: what `iotap report --html` carries.
//
//   report::Report small = CondenseReport(full, CondenseOptions{});
//   std::string page = ReportToHtml(small);
//
// The analysis is already binned (timeline series, histograms, top files);
// what still grows with a run is one entry per step (`steps`, and two
// timeline spans per step) and one entry per process and per trainer group.
// CondenseReport keeps those as they are up to the limits below; beyond them
// it replaces the steps by buckets of consecutive steps (`step_buckets`, for
// the trainers that waited longest),
// leaves out the step and wait spans (the per-trainer "waiting" series still
// shows them, binned), keeps the busiest processes and per-process series,
// and records what it did in `condensed`. It also rounds timeline values and
// the figures of steps and buckets to a few significant digits (step start
// and end times to 3 more), which no chart can tell apart and which halves
// the text. Every total (run, layers, overlap, step statistics) is untouched.

#ifndef IOTAP_ANALYZER_OUTPUT_REPORT_CONDENSE_H_
#define IOTAP_ANALYZER_OUTPUT_REPORT_CONDENSE_H_

#include "iotap/report.pb.h"

namespace iotap::analyzer {

struct CondenseOptions {
  int max_steps = 4000;       // steps carried one by one
  int target_buckets = 1500;  // step buckets over all trainers, about
  int max_processes = 2000;   // trainers always kept, then by bytes read
  // Trainers whose per-process series ("process", "cpu", "wait") and step
  // buckets are carried: those that read most, and waited longest.
  int max_group_series = 48;
  int significant_digits = 4;  // timeline values and step figures; 0 keeps them exact
};

// A copy of `report`, condensed as described above.
report::Report CondenseReport(const report::Report& report, const CondenseOptions& options);

// `value` rounded to `digits` significant decimal digits (0: unchanged).
double RoundSignificant(double value, int digits);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_OUTPUT_REPORT_CONDENSE_H_
