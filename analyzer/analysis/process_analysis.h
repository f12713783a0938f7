// What the analysis learns from one trace file, in one streaming pass.
//
// ProcessAnalyzer is a TraceVisitor for a single file; its ProcessResult
// holds only aggregates (per file, per layer, per dataset, time series, a
// bitmap of busy time) plus the few events the run-level analysis needs one
// by one (step markers, CUDA copies). Several ProcessAnalyzers run in
// parallel, one file each; the run analysis (run_analysis.h) merges their
// results. Every figure `iotap report` and `iotap stats` print is counted
// here, once; AnalysisScope says how much of the rest is worked out.
//
//   PathTable paths;
//   ProcessAnalyzer analyzer(AnalysisScope::kCounts, &paths);
//   std::vector<ReadIssue> issues;
//   absl::Status s = ReadTraceFile("run/host.42.....iotap", &analyzer, &issues);
//   ProcessResult r = analyzer.Take();
//   // r.files[i]: the counts of the file paths.path(r.file_refs[i].path_id)
//
// Files are sorted into categories by path (FileCategory, path_table.h). Only
// data files count towards I/O busy time, overlap and data stalls; every file
// is in the file table with its category.

#ifndef IOTAP_ANALYZER_ANALYSIS_PROCESS_ANALYSIS_H_
#define IOTAP_ANALYZER_ANALYSIS_PROCESS_ANALYSIS_H_

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/accumulate/accumulators.h"
#include "analyzer/accumulate/cuda_accumulator.h"
#include "analyzer/accumulate/file_accumulator.h"
#include "analyzer/accumulate/hdf5_accumulator.h"
#include "analyzer/accumulate/interval_union.h"
#include "analyzer/accumulate/mapped_accumulator.h"
#include "analyzer/accumulate/tfrecord_accumulator.h"
#include "analyzer/accumulate/time_bitmap.h"
#include "analyzer/analysis/py_profile.h"
#include "analyzer/analysis/wait_inference.h"
#include "analyzer/read/event.h"
#include "analyzer/read/path_table.h"
#include "analyzer/read/trace_reader.h"
#include "analyzer/steps/marker_steps.h"
#include "iotap/report.pb.h"

namespace iotap::analyzer {

// How much a ProcessAnalyzer works out.
enum class AnalysisScope {
  // The counts: per file and kind of descriptor, per process, per HDF5
  // dataset, per TFRecord file, per CUDA copy group (what `iotap stats`
  // prints).
  kCounts,
  // Also what only the report needs: busy time, time series, layers, access
  // sizes and patterns, bytes read again, step markers, CPU samples, Python
  // stack samples.
  kFull,
};

// How a process ended, in words: "exit 0", "_exit 1", "exec", "abort",
// "unloaded", "unknown", or "killed (no end record)".
std::string EndText(const ProcessTrace& process);

struct LayerAccumulator {
  uint64_t ops = 0;
  uint64_t reads = 0;
  uint64_t read_bytes = 0;
  uint64_t writes = 0;
  uint64_t write_bytes = 0;
  uint64_t metadata_ops = 0;
  int64_t time_ns = 0;
  SizeHistogram read_sizes;
  AccessPattern read_pattern;

  void Merge(const LayerAccumulator& o);
};

inline constexpr int kLayerCount = static_cast<int>(Layer::kOther) + 1;

// The first bin width of every time series (AdaptiveSeries) of the analysis.
inline constexpr int64_t kInitialBinNs = 1'000'000;

// An event the run-level analysis needs one by one, in wall-clock ns.
struct TimedEvent {
  Op op;
  int64_t start_unix_ns;
  int64_t end_unix_ns;
  uint64_t aux;
  uint64_t bytes;
  uint32_t flags;
};

// Which file a process's FileCounts are of.
struct FileRef {
  uint32_t path_id = 0;  // in the run's PathTable
  InternedString::Kind kind = InternedString::KIND_PATH;  // KIND_PATH or KIND_DEVICE
  const char* category = nullptr;  // FileCategory() of the path (kFull only)
};

// A process's own figures, which both commands print; the run keeps them
// (ProcessSummary, run_state.h) once the rest of its result is merged.
struct ProcessCounts {
  ProcessHeader header;  // as the trace file's header says
  std::string end;       // EndText
  uint64_t events = 0;
  uint64_t dropped = 0;
  // Every POSIX, STDIO and GDS call, of any file or descriptor.
  uint64_t reads = 0;
  uint64_t read_bytes = 0;
  uint64_t write_calls = 0;
  uint64_t write_bytes = 0;
  uint64_t metadata_ops = 0;
};

struct ProcessResult : ProcessCounts {
  // Both scopes.
  // The files the process touched, in the order it first did (one entry per
  // string id naming a path or device: a path interned twice has two), and
  // which file each is (file_refs[i] is files[i]'s). A deque: slots point
  // into it while the file is read.
  std::deque<FileCounts> files;
  std::vector<FileRef> file_refs;  // (with shared files, the only record of them)
  std::map<int, FileCounts> ipc;  // pipes, sockets, ...: by InternedString::Kind
  std::map<std::string, DatasetAccumulator> datasets;  // by "FILE:/path"
  TfRecordAccumulator tfrecords;
  CudaAccumulator cuda;
  MappedAccumulator mapped;  // mapped reads and io_uring requests

  // AnalysisScope::kFull only.
  report::Process summary;
  std::deque<FileDetail> file_details;  // file_details[i] is files[i]'s
  std::array<LayerAccumulator, kLayerCount> layers;
  std::unique_ptr<TimeSpans> io;      // busy instants of data-file I/O
  std::unique_ptr<TimeSpans> writes;  // busy instants of data-file writes
  // By layer: busy instants of its calls (every file, not only data files).
  std::vector<TimeSpans> layer_busy;
  // Time series (origin: the run's start): read bytes per layer; data-file
  // read bytes, calls and summed call time; CPU time (ns of CPU per bin).
  std::vector<AdaptiveSeries> read_bytes_by_layer;
  std::unique_ptr<AdaptiveSeries> data_read_bytes;
  std::unique_ptr<AdaptiveSeries> data_read_calls;
  std::unique_ptr<AdaptiveSeries> data_read_ns;
  std::unique_ptr<AdaptiveSeries> cpu_ns;
  // Time the main thread was runnable but waited for a CPU (ns per bin).
  std::unique_ptr<AdaptiveSeries> run_queue_ns;
  SizeHistogram data_read_sizes;        // every data-file read
  std::vector<StepLog> steps;           // from the process's in-band markers
  std::vector<TimedEvent> cuda_copies;  // host-to-device and others
  PySamples py;                         // Python stack samples
  WaitEvidence waits;                   // what its threads waited on (wait_inference.h)
  int64_t io_busy_ns = 0;               // exact union over the process's threads
  int64_t late_clipped_ns = 0;
  int64_t first_unix_ns = INT64_MAX;
  int64_t last_unix_ns = INT64_MIN;
  int64_t end_unix_ns = 0;              // the end record's time, if any
};

// Where analyzers of the same part of a run keep their files' figures, one
// entry per path for all of them, instead of one per process and file: an
// analyzer of one second of a file (a slice, sliced_run.h) opens a few
// hundred files a second, whose counts and details the slice only ever adds
// up by path. The entry of `path_id` (in the analyzers' PathTable) stays
// where it is for as long as the analyzers write into it.
class SharedFileFigures {
 public:
  virtual ~SharedFileFigures() = default;
  virtual std::pair<FileCounts*, FileDetail*> Of(uint32_t path_id) = 0;
};

class ProcessAnalyzer : public TraceVisitor {
 public:
  // `paths`: the run's path table (null: one of the analyzer's own). With
  // kFull, `origin_unix_ns` is the run's start and `resolution_ns` the busy
  // time bitmap's, and `may_train` says the process may be a trainer, whose
  // waits are kept (a loader's are not needed).
  explicit ProcessAnalyzer(AnalysisScope scope, PathTable* paths = nullptr,
                           int64_t origin_unix_ns = 0, int64_t resolution_ns = 1000,
                           bool may_train = true);

  void OnProcess(const ProcessTrace& process) override;
  void OnEvents(const ProcessTrace& process, const EventBatch& batch) override;
  void OnPacket(const ProcessTrace& process, const Packet& packet) override;
  void OnFileEnd(const ProcessTrace& process) override;

  ProcessResult Take() { return std::move(result_); }

  // Where the CPU time series start (`origin_unix_ns` unless set, before
  // OnProcess): a CPU sample spreads the time since the sample before it,
  // which may lie before the origin of an analyzer of part of a run.
  void set_cpu_origin(int64_t unix_ns) { cpu_origin_unix_ns_ = unix_ns; }

  // Finds the slots of the file's ids in a hash table instead of an array
  // indexed by id (before OnProcess): for an analyzer of a part of a file
  // (a slice, sliced_run.h), which sees a few of the ids a long-running
  // file has, the array's size would follow the file's ids, not its own.
  void set_sparse_ids() { sparse_ids_ = true; }

  // Counts and details of files (paths and devices) go to `files`, by path,
  // shared with other analyzers (before OnProcess; kFull): the result's
  // `files` and `file_details` then stay empty, and `file_refs` says which
  // paths the process named, as before.
  void set_shared_files(SharedFileFigures* files) { shared_files_ = files; }

 private:
  struct FileSlot {
    FileCounts* counts = nullptr;  // null: not a file nor a descriptor (datasets, marks)
    FileDetail* detail = nullptr;  // files only, kFull only
    bool data = false;
    bool shared_memory = false;  // under /dev/shm (IsSharedMemory), kFull only
    uint32_t channel = WaitCollector::kNoChannel;  // a pipe's or socket's
    // Access pattern trackers, one per thread reading the file: the first
    // reader's here (most files have one), other threads' in patterns_, the
    // last of them cached.
    bool has_reader = false;
    uint32_t reader_tid = 0;
    AccessPatternTracker reader;
    uint32_t tracker_tid = 0;
    AccessPatternTracker* tracker = nullptr;
  };
  struct PatternKey {
    uint32_t file;
    uint32_t tid;
    bool operator==(const PatternKey& o) const { return file == o.file && tid == o.tid; }
  };
  struct PatternKeyHash {
    size_t operator()(const PatternKey& k) const { return (size_t{k.file} << 32) ^ k.tid; }
  };

  // The slot of string id `id`; inline, as every I/O event asks.
  FileSlot& Slot(const ProcessTrace& process, uint32_t id) {
    if (id < slot_of_.size() && slot_of_[id] != 0) [[likely]] return slots_[slot_of_[id] - 1];
    return SlotSlow(process, id);
  }
  // The slot of `id` by the hash table (set_sparse_ids), or a new one.
  FileSlot& SlotSlow(const ProcessTrace& process, uint32_t id);
  // The slot of `id` if it has one.
  const FileSlot* FindSlot(uint32_t id) const;
  // A new slot for `id`, last in slots_.
  FileSlot& NewSlot(const ProcessTrace& process, uint32_t id);
  // The counts of an I/O event (inline: every event of a worker asks), then
  // with kFull what only the report needs (OnIoDetail).
  void OnIo(const ProcessTrace& process, const Event& e, const OpTraits& op, int64_t offset);
  void OnIoDetail(const Event& e, const OpTraits& op, int64_t offset, uint64_t bytes,
                  FileSlot& slot);
  void OnHdf5(const ProcessTrace& process, const Event& e, int64_t offset);
  void OnCuda(const Event& e, int64_t offset);
  void OnWait(const ProcessTrace& process, const Event& e, int64_t offset);
  // The wait channel of a pipe or socket (kNoChannel for other names).
  uint32_t ChannelOf(const InternedName& name);
  void OnResources(const ResourceSample& sample, const ProcessTrace& process);

  // A call's busy interval into its layer's (TimeSpans::Add, inline: a call
  // that starts within a resolution of the layer's latest end, as most do,
  // costs a comparison).
  void Busy(Layer layer, int64_t start, int64_t end) {
    result_.layer_busy[static_cast<int>(layer)].Add(start, end);
  }

  const bool full_;
  int64_t origin_unix_ns_;
  int64_t cpu_origin_unix_ns_;
  int64_t resolution_ns_;
  std::unique_ptr<PathTable> own_paths_;  // when the run has none
  PathTable* paths_;
  ProcessResult result_;
  // The slots of the ids seen, in the order first seen, and by string id
  // the index in slots_ plus one (0: none yet), in an array or (with
  // sparse_ids_) a hash table. A slot is large and a trace's ids run into
  // the thousands (a loader's sample files), while an analyzer of one
  // second of a file (sliced_run.h) sees a few of them.
  std::vector<FileSlot> slots_;
  std::vector<uint32_t> slot_of_;
  bool sparse_ids_ = false;
  SharedFileFigures* shared_files_ = nullptr;
  absl::flat_hash_map<uint32_t, uint32_t> sparse_slot_of_;  // with sparse_ids_
  // Trackers of threads after a file's first reader. Node-based:
  // FileSlot::tracker points into it.
  std::unordered_map<PatternKey, AccessPatternTracker, PatternKeyHash> patterns_;
  std::unique_ptr<IntervalUnion> io_union_;
  MarkerCollector markers_;
  PySampleCollector py_;  // kFull only
  WaitCollector waits_;  // kFull only
  Hdf5Accumulator hdf5_;
  int64_t last_cpu_ns_ = -1;
  int64_t last_run_queue_ns_ = -1;
  int64_t last_cpu_at_ = 0;
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ANALYSIS_PROCESS_ANALYSIS_H_
