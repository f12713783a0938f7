// The report's analysis over a run read while it grows (`iotap top`): the
// run cut into time slices (1 s by default) from its start, and the report
// of any range of whole slices made from them, never from the trace again.
//
// SlicedRun is the TraceVisitor of a RunFollower (live/run_follower.h).
// Each event goes to the slice its end lies in, clipped to start there (the
// rule of time_range.h), into a ProcessAnalyzer of that file and slice; step
// markers go to one marker collector per file (read whole, as a range of the
// report reads them), and a CPU sample to the slice of its time with the
// sample before it, so that CPU time is spread as over the whole file.
// Descriptions (HDF5 datasets, TFRecord files, the fault sampling source) go
// to every slice; page-fault counters to the newest slice open, after the
// counters before them. Python samples and waits are each slice's, joined
// in order (a reception that continues one of an earlier slice is not seen
// to), and so are access patterns: the first read of a file in a slice is
// classified as a first read.
// Seal() closes the slices that end before a given time: later events of
// those are counted as late and left out. A sealed slice keeps per process
// what the report's merge keeps per process, and the rest (files by path,
// layers, busy time, the trainer groups' read series) summed over its
// processes (sliced_run_sealed.h): the groups are the processes' as
// classified when the slice is sealed. Report(from, to) merges the sealed
// slices of [from, to) per process, adds the slices' sums, and runs the
// report's run-wide stage and findings (run_state.h) on them, as AnalyzeRun
// does with options.range = [from, to). Slices older than `keep_slices`
// before the newest sealed one are dropped, so memory is bounded by the
// processes, paths and groups of the slices kept, and the slices open (the
// markers of steps, a few per step, are kept whole).
//
//   SlicedRun run(SlicedRun::Options{});
//   run.SetOrigin(CatalogTraceFiles(files).start_unix_ns);
//   TraceFollower follower(files[0]);       // in `iotap top`, a RunFollower
//   if (absl::Status s = follower.ReadNew(&run, &issues); !s.ok()) return s;
//   run.Seal(now_unix_ns - 2'000'000'000);  // slices no event will reach now
//   absl::StatusOr<report::Report> r =
//       run.Report(run.sealed_until() - 10'000'000'000, run.sealed_until());
//
// A ProcessTrace passed to OnProcess must outlive the SlicedRun (a
// RunFollower's do). Not thread-safe.

#ifndef IOTAP_ANALYZER_ANALYSIS_SLICED_RUN_H_
#define IOTAP_ANALYZER_ANALYSIS_SLICED_RUN_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/analysis/process_analysis.h"
#include "analyzer/analysis/run_analysis.h"
#include "analyzer/analysis/sliced_run_sealed.h"
#include "analyzer/read/path_table.h"
#include "analyzer/read/run_catalog.h"
#include "analyzer/read/trace_reader.h"
#include "analyzer/steps/marker_steps.h"
#include "iotap/report.pb.h"

namespace iotap::analyzer {

class SlicedRun : public TraceVisitor {
 public:
  struct Options {
    int64_t slice_ns = 1'000'000'000;
    int keep_slices = 10;  // sealed slices kept: the longest range Report() takes
    int top_files = 10;
    const rules::RuleSet* rules = nullptr;  // null: the built-in rules
  };

  explicit SlicedRun(Options options);
  ~SlicedRun() override;

  // The run's path table: where a RunFollower's traces may keep their paths
  // (RunFollower::set_shared_paths), so that each is held once.
  PathTable* paths() { return &paths_; }

  // The run's start (wall clock): the earliest process start, as the report
  // takes it. Set before anything is read; otherwise the first process's
  // start is taken.
  void SetOrigin(int64_t unix_ns);
  int64_t origin_ns() const { return origin_ns_; }

  void OnProcess(const ProcessTrace& process) override;
  void OnEvents(const ProcessTrace& process, const EventBatch& batch) override;
  void OnPacket(const ProcessTrace& process, const Packet& packet) override;

  // Seals every slice that ends at or before `unix_ns`.
  void Seal(int64_t unix_ns);
  // Where the sealed slices end (the origin before any is sealed).
  int64_t sealed_until() const { return origin_ns_ + sealed_slices_ * options_.slice_ns; }
  // The latest time an event or end record of any file mentions.
  int64_t last_seen_ns() const { return last_seen_ns_; }
  // The latest time (wall clock) that what has been read of `process`'s file
  // mentions: its start and its events' ends; INT64_MIN for a file not seen.
  // The shim writes events as they end, so a reader that stops each file
  // once this passes a time (a FrameLimit) has read every event that ends
  // before it, but for those the shim writes late (by up to the lag a watch
  // allows for). Samples are left out: they are few, and a file's may come
  // in any order.
  int64_t FrontierOf(const ProcessTrace& process) const;
  // Where the earliest slice not sealed that holds anything starts
  // (INT64_MAX if none).
  int64_t FirstOpenSliceStart() const;
  // Events that came after their slice was sealed, left out.
  uint64_t late_events() const { return late_events_; }
  // Since the start, what the sealed slices read: bytes per layer (by
  // LayerName), and at the lowest layers (the report's run.bytes_read).
  const std::map<std::string, uint64_t>& sealed_layer_read_bytes() const {
    return sealed_layer_read_bytes_;
  }
  uint64_t sealed_read_bytes() const { return sealed_read_bytes_; }

  // The report on [from_unix_ns, to_unix_ns), both on slice bounds, within
  // the sealed slices kept.
  absl::StatusOr<report::Report> Report(int64_t from_unix_ns, int64_t to_unix_ns) const;

 private:
  struct File;
  File& FileOf(const ProcessTrace& process);
  ProcessAnalyzer& Slice(File& f, int64_t slice);
  int64_t SliceOf(int64_t unix_ns) const;
  // The events of `batch` each slice takes: a batch that holds step
  // markers, late events, or calls of more than one slice (a frame's
  // second of a thread's calls mostly straddles two).
  void SplitEvents(const ProcessTrace& process, File& f, const EventBatch& batch,
                   int64_t offset);
  // The catalog of the files started so far, classified, with each entry's
  // end the latest time its file mentions.
  RunCatalog Catalog() const;
  // Where each file's slices go (by file number), as the files started
  // so far are classified now.
  const std::vector<internal::SealGroup>& SealGroups();
  // The resolution of the run's busy time as a report now takes it.
  int64_t Resolution() const;

  Options options_;
  bool origin_set_ = false;
  int64_t origin_ns_ = 0;
  int64_t sealed_slices_ = 0;  // slices [0, sealed_slices_) are sealed
  int64_t last_seen_ns_ = 0;
  uint64_t late_events_ = 0;
  std::map<std::string, uint64_t> sealed_layer_read_bytes_;
  uint64_t sealed_read_bytes_ = 0;
  PathTable paths_;
  std::map<std::string, std::unique_ptr<File>> files_;  // by trace path
  std::vector<File*> numbered_;                         // by file number: in order of appearance
  std::vector<std::pair<int64_t, EventBatch>> scratch_;  // one batch's events by slice
  std::map<int64_t, internal::SliceTotals> totals_;     // the sealed slices kept, by slice
  // The open slices' files, by slice: what their analyzers count into, by
  // path, for every process at once; a sealed slice's totals take them.
  std::map<int64_t, std::unique_ptr<internal::SliceFiles>> open_files_;
  // The files started so far classified (as Catalog, ends aside), and
  // where each file's slices go (by file number): worked out again only
  // when a file has started since (`classified_of` files started then), as
  // roles and trainers follow from the headers alone.
  RunCatalog classified_;
  std::vector<internal::SealGroup> seal_groups_;
  int classified_of_ = -1;
  int started_ = 0;                                     // files whose header was read
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ANALYSIS_SLICED_RUN_H_
