// Internal to SlicedRun (sliced_run.h): what a sealed slice keeps, and how a
// window is put together from what the slices of its range kept.
//
// A slice's analyzer (one per trace file) ends as a ProcessResult, which is
// split in two when the slice is sealed:
// - what the report's merge (run_state::MergeProcess) keeps process by
//   process (counts, CPU series, waits, Python samples, CUDA copies...)
//   stays the process's: a ProcessSlice;
// - what that merge only adds into the run's sums and unions (files by path,
//   layers, busy time, the trainer groups' read series) goes at once into
//   the slice's SliceTotals, whatever process it came from.
// A window then merges each process's ProcessSlices into one ProcessResult
// for MergeProcess, as before, and adds the SliceTotals of its range to the
// run's state: memory and a refresh's work grow with the paths and groups
// of a slice rather than with its processes times their files. Every part
// of the totals is a sum of integers, a union, or a maximum, so the order
// the processes are added in changes nothing.
//
// The groups a slice's busy time and read series go to are the processes'
// trainers as classified when the slice was sealed (SealGroup): a process
// whose trainer changes later (its trainer's trace appears after its own)
// counts in the old group in the slices sealed before.

#ifndef IOTAP_ANALYZER_ANALYSIS_SLICED_RUN_SEALED_H_
#define IOTAP_ANALYZER_ANALYSIS_SLICED_RUN_SEALED_H_

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/accumulate/time_bitmap.h"
#include "analyzer/analysis/process_analysis.h"
#include "analyzer/analysis/run_state.h"
#include "analyzer/read/path_table.h"

namespace iotap::analyzer::internal {

// What a sealed slice keeps of one process: the parts of its ProcessResult
// that MergeProcess keeps per process.
struct ProcessSlice {
  uint64_t events = 0;
  uint64_t dropped = 0;  // the process's count so far
  std::string end;
  uint64_t reads = 0;
  uint64_t read_bytes = 0;
  uint64_t write_calls = 0;
  uint64_t write_bytes = 0;
  uint64_t metadata_ops = 0;
  std::map<int, FileCounts> ipc;
  std::map<std::string, DatasetAccumulator> datasets;
  TfRecordAccumulator tfrecords;
  CudaAccumulator cuda;
  MappedAccumulator mapped;
  PySamples py;
  WaitEvidence waits;  // a loader's without its own I/O (only a trainer's is used)
  std::unique_ptr<TimeSpans> writes;
  // Compacted (AdaptiveSeries::Compact): a CPU series is runs of equal bins
  // between samples.
  std::unique_ptr<AdaptiveSeries> cpu_ns;
  std::unique_ptr<AdaptiveSeries> run_queue_ns;
  std::vector<TimedEvent> cuda_copies;
  int64_t io_busy_ns = 0;
  int64_t late_clipped_ns = 0;
  int64_t first_unix_ns = INT64_MAX;
  int64_t last_unix_ns = INT64_MIN;
  int64_t end_unix_ns = 0;
};

// A path's figures over every process of a slice; SliceTotals::named_by
// [first_named, first_named + named) says which processes named it.
struct SliceFile {
  uint32_t path = 0;  // its id in SlicedRun's table
  const char* category = nullptr;
  FileCounts counts;
  FileDetail detail;
  uint32_t first_named = 0;
  uint32_t named = 0;
};

// A trainer group's part of a slice: its processes' data-file busy time
// and read series.
struct SliceGroup {
  SliceGroup(int64_t origin_ns, int64_t resolution_ns, int64_t series_origin_ns);
  TimeBitmap io;
  AdaptiveSeries read_bytes;
  AdaptiveSeries read_calls;
  AdaptiveSeries read_ns;
};

// The files of a slice's processes by path: while the slice is open, what
// its analyzers count into (ProcessAnalyzer::set_shared_files), one entry
// per path rather than one per process and path; then the slice's totals'.
// Entries stay where they are (a deque) while analyzers hold them.
struct SliceFiles : SharedFileFigures {
  std::pair<FileCounts*, FileDetail*> Of(uint32_t path_id) override;
  // Where the entry of `path_id` is in `entries`, added if new.
  uint32_t Entry(uint32_t path_id);
  std::deque<SliceFile> entries;
  // Where each path's entry is (by path id in SlicedRun's table), while
  // files come (Index drops it): a SliceFile is large, and a table of them
  // would keep as many empty slots again.
  absl::flat_hash_map<uint32_t, uint32_t> of;
};

// What a sealed slice keeps of every process together. Busy time is on the
// run's origin at `resolution_ns`; series start with the slice.
struct SliceTotals {
  // `files`: the table the slice's analyzers counted into (null: a table of
  // its own).
  SliceTotals(int64_t origin_ns, int64_t resolution_ns, int64_t slice_start_ns,
              std::unique_ptr<SliceFiles> files = nullptr);
  int64_t origin_ns;
  int64_t resolution_ns;
  int64_t slice_start_ns;
  std::array<LayerAccumulator, kLayerCount> layers;
  std::vector<AdaptiveSeries> layer_read_bytes;
  std::vector<TimeBitmap> layer_busy;
  SizeHistogram data_read_sizes;
  // The paths' figures (the slice's analyzers' shared files, or a table of
  // its own).
  std::unique_ptr<SliceFiles> files;
  // Which process (by SlicedRun's file number) named which path under which
  // kind: while the slice is sealed, in the order they did; then (Index)
  // path by path, each path's in that order, for SliceFile to point into.
  std::vector<std::pair<int, InternedString::Kind>> named_by;
  std::vector<uint32_t> named_files;  // while sealed: the index in `files` of each of named_by
  std::map<int, SliceGroup> groups;   // by the trainer's file number
  TimeBitmap other_io;                // processes of no group
};

// Where a process's slice goes, as the processes are classified when it is
// sealed.
struct SealGroup {
  int trainer = -1;     // the file number of its group's trainer; -1: none
  bool loader = false;  // a loader's waits are not kept (MergeProcess drops them)
};

// Splits `r`, the slice of the file numbered `file` (its paths interned in
// SlicedRun's table), into the process's part (returned) and `totals`. The
// counts and details of `r`'s files are added to totals->files, unless its
// analyzer counted them there itself (shared files: `r.files` is empty);
// which process named which path is taken from `r.file_refs` either way.
ProcessSlice Seal(ProcessResult r, int file, const SealGroup& group, SliceTotals* totals);
// Once every process's slice is sealed: sorts named_by path by path (a
// slice's files name each path a few dozen times, where a list per path
// would be an allocation or more for each).
void Index(SliceTotals* totals);

// Adds a slice of the window's range into the window's result of its
// process (an empty result of the process to start with), but for its CPU
// time (AbsorbCpu).
void AbsorbSlice(const ProcessSlice& slice, const run_state::RunState& s, ProcessResult* into);
// Adds the CPU time of the slices kept, in order, into the window's result
// (series empty, on the window's start): every slice's, in the window's
// range or not, as a range of the report reads every CPU sample.
void AbsorbCpu(const std::vector<const ProcessSlice*>& slices, ProcessResult* into);

// Adds the totals of the window's slices to the run's state, after every
// process has been merged into it. `index_of` gives the catalog index of a
// file number (-1: none), `rank_of` the rank of a file number (its place
// among the files, as RunState::rank), and `paths` the table the slices'
// path ids are in.
void AddTotals(const std::vector<const SliceTotals*>& slices, const PathTable& paths,
               const std::vector<int>& index_of, const std::vector<int>& rank_of,
               run_state::RunState& s);

}  // namespace iotap::analyzer::internal

#endif  // IOTAP_ANALYZER_ANALYSIS_SLICED_RUN_SEALED_H_
