// The analysis of a whole run: every trace file plus any step logs, turned
// into a report::Report (proto/iotap/report.proto); or, for `iotap stats`,
// the counts of the same analysis, without steps, timeline or findings,
// turned into a stats::Stats (proto/iotap/stats.proto).
//
//   AnalysisOptions options;
//   options.step_logs = {"runs/tb/events.out.tfevents..."};
//   absl::StatusOr<report::Report> r = AnalyzeRun("iotap-20261121-101500", options);
//
//   RunCounts counts = CountTraceFiles({"run/host.42.....iotap"}, AnalysisOptions());
//   // counts.WithFileRows().files(0).reads(): the same figure as the report's
//
// How the numbers are defined (the report's reader sees the same in
// report.proto):
// - I/O busy time is the union of the intervals of I/O calls on data files:
//   exact per process; across processes and within steps, at the resolution
//   of a time bitmap (1 us for runs up to about an hour, see time_bitmap.h).
// - A step's data wait is what its step source says (data-wait markers,
//   profiler DataLoader spans, a JSON-lines field). During a wait, `fetch` is
//   the time the trainer or its loaders were in I/O calls; `prep` is the rest
//   of the wait scaled by how busy the busiest loader was: running on a CPU
//   or runnable and waiting for one (from the CPU and run-queue samples every
//   process takes); `other` is what remains (queues, IPC, collation, idle
//   workers).
// - Exposed I/O is the trainer group's I/O during data waits; hidden I/O is
//   its I/O during the rest of the steps.
// Memory grows with the number of processes, files and time bins, not with
// the number of events; files are read in parallel.

#ifndef IOTAP_ANALYZER_ANALYSIS_RUN_ANALYSIS_H_
#define IOTAP_ANALYZER_ANALYSIS_RUN_ANALYSIS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/accumulate/file_accumulator.h"
#include "analyzer/analysis/time_range.h"
#include "analyzer/clocks/clock_alignment.h"
#include "google/protobuf/arena.h"
#include "iotap/report.pb.h"
#include "iotap/rules.pb.h"
#include "iotap/stats.pb.h"

namespace iotap::analyzer {

struct AnalysisOptions {
  std::vector<std::string> step_logs;  // extra step sources (see steps/step_log.h)
  int top_files = 50;                  // files listed one by one
  int timeline_bins = 600;
  TimeRange range;                     // the part of the run (time_range.h)
  int threads = 2;                     // files read (and trainer groups analysed) in parallel
  const rules::RuleSet* rules = nullptr;  // findings' rules; null: the built-in ones
  // Called after each trace file with (files done, files total).
  std::function<void(size_t, size_t)> progress;
  // Hosts' clocks (clock_alignment.h): put every host on the reference
  // host's clock before any figure is computed. Off, the fit is still
  // reported, and times are as each host's clock gave them.
  bool correct_clocks = true;
  // The fit of these files' clocks, if the caller made it (iotap export
  // needs it too); null: the analysis fits them.
  const RunClocks* clocks = nullptr;
};

// Analyses the run at `path` (a trace file or a directory of them). Fails
// only if nothing could be read; everything else becomes a note.
absl::StatusOr<report::Report> AnalyzeRun(const std::string& path,
                                          const AnalysisOptions& options);

// As AnalyzeRun, over a list of trace files.
absl::StatusOr<report::Report> AnalyzeTraceFiles(const std::vector<std::string>& files,
                                                 const AnalysisOptions& options);

namespace run_state {
struct RunState;
}  // namespace run_state

// What `iotap stats` prints, and how many files could be read. The stats
// live on an arena the counts own. Their file rows are not in the message:
// a DataLoader worker's trace names a new file every few dozen events, and a
// run millions, so each row is made from the run's own figures when it is
// printed (FillFileRow, into a message the printer reuses); the counts keep
// the run's state for that. WithFileRows() puts them all into the message,
// for a reader that wants it whole. Moved, never assigned (the stats stay
// where the arena put them).
struct RunCounts {
  RunCounts();
  RunCounts(RunCounts&&);
  ~RunCounts();

  std::unique_ptr<google::protobuf::Arena> arena;
  stats::Stats& stats;  // with every issue met while reading, in file order; no files (above)
  int files_read = 0;   // files that yielded a process

  // The rows of stats.files, in order (most bytes read and written first,
  // then by path): how many, and the i-th (every field of `row` set).
  size_t file_rows() const;
  void FillFileRow(size_t i, stats::File* row) const;
  // The stats with every file row added (once; later calls add nothing).
  const stats::Stats& WithFileRows();

  // What the rows are made from (BuildCounts sets both).
  std::unique_ptr<run_state::RunState> state;
  std::vector<RunFile> files;
  bool rows_added = false;
};

// Counts the trace files (AnalysisScope::kCounts): every file is read that
// can be, header or not; one that cannot becomes an issue. Uses `threads`
// and `progress` of `options`.
RunCounts CountTraceFiles(const std::vector<std::string>& files, const AnalysisOptions& options);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ANALYSIS_RUN_ANALYSIS_H_
