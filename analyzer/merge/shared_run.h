// A run's analysis shared among cooperating processes (the ranks of an MPI
// job: analyzer/cluster/mpi_run.h): every process prepares the same run,
// reads its share of the trace files with the ordinary per-process analysis,
// and the shares' partial states are merged into one, which then finishes
// exactly as AnalyzeTraceFiles (or CountTraceFiles) would have.
//
//   SharedRun run;
//   absl::Status ok = run.Prepare(files, options);  // or PrepareCounts(files)
//   run.Read(my_indices, options.threads, nullptr); // indices < run.file_count()
//   int64_t end = run.end_ns();                     // the largest of every share's:
//   ok = run.AnalyzeGroups(end, options, options.threads);  // then the groups read here
//   run.WritePartial(out);                          // where a share is sent
//   absl::Status merged = run.MergePartial(in);     // where one is received
//   absl::StatusOr<report::Report> r = run.FinishReport(options);  // once, with all merged
//
// A trainer and its loaders must be read by one process, which works out
// the group's part of the report (analysis/run_state.h: GroupResult) from
// its busy time and series; only that part travels. A partial
// (partial_run.h) holds every process its run read or had merged into it,
// the run's sums over them and the groups' parts; merging gives the
// one-process state whatever the order, so reports are byte for byte the
// same.

#ifndef IOTAP_ANALYZER_MERGE_SHARED_RUN_H_
#define IOTAP_ANALYZER_MERGE_SHARED_RUN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analyzer/merge/partial_wire.h"
#include "analyzer/analysis/run_analysis.h"
#include "iotap/report.pb.h"

namespace iotap::analyzer {

namespace run_state {
struct RunState;
}  // namespace run_state

class SharedRun {
 public:
  SharedRun();
  ~SharedRun();
  SharedRun(const SharedRun&) = delete;
  SharedRun& operator=(const SharedRun&) = delete;

  // As AnalyzeTraceFiles before it reads: the catalog, step logs, clocks.
  // Fails as it does (no readable header).
  absl::Status Prepare(const std::vector<std::string>& files, const AnalysisOptions& options);
  // As CountTraceFiles before it reads.
  void PrepareCounts(const std::vector<std::string>& files);

  // The trace files, in the order Read's indices count them (the catalog's),
  // and the trainer group each belongs to (a catalog index; -1: none, and
  // always -1 for the counts).
  size_t file_count() const;
  const std::string& file(size_t index) const;
  int group(size_t index) const;
  // A hash of what every process must have prepared alike (the catalog and
  // what it sized).
  uint64_t Fingerprint() const;

  // Reads the files of `indices`, `threads` at a time; then keeps the
  // layers' busy time compact (runs where they take less memory:
  // TimeBitmap::Compact), as a merged state does.
  void Read(const std::vector<int>& indices, int threads,
            const std::function<void(size_t, size_t)>& progress);
  // The last event or end record read here (or the catalog's end, if
  // later): the run's end is the largest of every share's.
  int64_t end_ns() const;
  // Once every Read is done, with `run_end_ns` the largest end_ns() of every
  // share (the timeline's bins and the last epoch end there), and before
  // WritePartial: works out each trainer group read here into its part of
  // the report, `threads` groups at a time, then frees the group's busy
  // time, series and evidence, and keeps the run's busy time compact. Fails
  // if a group was read here in part only (the trainer or a loader in
  // another share). Nothing to do for the counts.
  absl::Status AnalyzeGroups(int64_t run_end_ns, const AnalysisOptions& options, int threads);
  // The memory the busy-time bitmaps and the series of the trainer groups
  // (and of processes outside them) take here.
  struct SummaryBytes {
    uint64_t bitmaps = 0;
    uint64_t series = 0;
  };
  SummaryBytes summary_bytes() const;
  // What reading (and merging) added, for a process that merges it.
  // With `sizes`, adds there how many bytes went to what.
  void WritePartial(WireWriter& out, PartialSizes* sizes = nullptr) const;
  // Adds a partial of a run prepared alike; fails if it is damaged or from
  // another run (this run is then unusable).
  absl::Status MergePartial(WireReader& in);

  // Once every file has been read here or merged: the report, or the counts
  // (which take the run's state: nothing else may be asked of this after).
  absl::StatusOr<report::Report> FinishReport(const AnalysisOptions& options);
  RunCounts FinishCounts();

 private:
  std::unique_ptr<run_state::RunState> state_;
  std::vector<int> read_;  // the indices Read was given
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_MERGE_SHARED_RUN_H_
