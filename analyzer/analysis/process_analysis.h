// What the analysis learns from one trace file, in one streaming pass.
//
// ProcessAnalyzer is a TraceVisitor for a single file; its ProcessResult
// holds only aggregates (per file, per layer, time series, a bitmap of busy
// time) plus the few events the run-level analysis needs one by one (step
// markers, CUDA copies). Several ProcessAnalyzers run in parallel, one file
// each; RunAnalysis merges their results.
//
// Files are sorted into categories by path (FileCategory, path_table.h). Only
// data files count towards I/O busy time, overlap and data stalls; every file
// is in the file table with its category.

#ifndef IOTAP_ANALYZER_ANALYSIS_PROCESS_ANALYSIS_H_
#define IOTAP_ANALYZER_ANALYSIS_PROCESS_ANALYSIS_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/analysis/accumulators.h"
#include "analyzer/analysis/interval_union.h"
#include "analyzer/analysis/tfrecord_stats.h"
#include "analyzer/analysis/time_bitmap.h"
#include "analyzer/analysis/wait_inference.h"
#include "analyzer/read/event.h"
#include "analyzer/read/path_table.h"
#include "analyzer/read/trace_reader.h"
#include "analyzer/steps/marker_steps.h"
#include "iotap/report.pb.h"

namespace iotap::analyzer {

// One file's figures; there may be millions of files, so this stays small.
struct FileAccumulator {
  const char* kind = nullptr;      // "file", "device"
  const char* category = nullptr;  // FileCategory() of the path
  uint64_t processes = 0;
  uint64_t opens = 0;
  uint64_t reads = 0;
  uint64_t read_bytes = 0;
  uint64_t writes = 0;
  uint64_t write_bytes = 0;
  uint64_t metadata_ops = 0;
  int64_t metadata_ns = 0;
  int64_t read_ns = 0;
  int64_t write_ns = 0;
  int64_t size_bytes = -1;
  uint64_t direct_opens = 0;      // opened with O_DIRECT
  uint64_t dontneed_advice = 0;   // posix_fadvise(POSIX_FADV_DONTNEED)
  uint64_t hdf5_reads = 0;        // reads made inside HDF5 calls
  DarshanHistogram read_sizes;
  DarshanHistogram write_sizes;
  AccessPattern read_pattern;
  ByteRanges read_ranges;

  void Merge(const FileAccumulator& o);
};

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

// An HDF5 dataset as one process used it.
struct DatasetAccumulator {
  std::string file;
  std::string name;
  Hdf5Dataset description;
  bool described = false;
  uint64_t reads = 0;
  uint64_t logical_bytes = 0;
  uint64_t posix_reads = 0;
  uint64_t posix_bytes = 0;
  int64_t read_ns = 0;

  void Merge(const DatasetAccumulator& o);
};

struct CudaKey {
  std::string direction;
  std::string host_memory;
  bool async;
  bool operator<(const CudaKey& o) const {
    return std::tie(direction, host_memory, async) < std::tie(o.direction, o.host_memory, o.async);
  }
};

// The table row a copy event counts in.
CudaKey CudaKeyOf(Op op, uint32_t flags);

struct CudaAccumulator {
  uint64_t copies = 0;
  uint64_t bytes = 0;
  int64_t time_ns = 0;
};

// An event the run-level analysis needs one by one, in wall-clock ns.
struct TimedEvent {
  Op op;
  int64_t start_unix_ns;
  int64_t end_unix_ns;
  uint64_t aux;
  uint64_t bytes;
  uint32_t flags;
};

struct ProcessResult {
  report::Process summary;
  // The files the process touched, in the order it first did, and each
  // one's id in the run's PathTable (file_ids[i] is files[i]'s): a process
  // may touch every file of a dataset, and the run merges them by id.
  std::vector<FileAccumulator> files;
  std::vector<uint32_t> file_ids;
  std::array<LayerAccumulator, kLayerCount> layers;
  std::map<std::string, DatasetAccumulator> datasets;  // by "file:/name"
  TfRecordCollector tfrecords;                         // the TFRecord files it read
  std::map<CudaKey, CudaAccumulator> cuda;
  std::unique_ptr<TimeSpans> io;      // busy instants of data-file I/O
  std::unique_ptr<TimeSpans> writes;  // busy instants of data-file writes
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
  WaitEvidence waits;                   // what its threads waited on (wait_inference.h)
  int64_t io_busy_ns = 0;               // exact union over the process's threads
  int64_t late_clipped_ns = 0;
  int64_t first_unix_ns = INT64_MAX;
  int64_t last_unix_ns = INT64_MIN;
  uint64_t events = 0;
  uint64_t dropped = 0;
  uint64_t reads = 0;
  uint64_t read_bytes = 0;
  uint64_t write_calls = 0;
  uint64_t write_bytes = 0;
  uint64_t metadata_ops = 0;
};

class ProcessAnalyzer : public TraceVisitor {
 public:
  // `origin_unix_ns` is the run's start; `resolution_ns` the bitmap's;
  // `paths` the run's path table (null: one of the analyzer's own);
  // `may_train`: the process may be a trainer, whose waits are kept
  // (a loader's are not needed).
  ProcessAnalyzer(int64_t origin_unix_ns, int64_t resolution_ns, PathTable* paths = nullptr,
                  bool may_train = true);

  void OnProcess(const ProcessTrace& process) override;
  void OnEvents(const ProcessTrace& process, const EventBatch& batch) override;
  void OnPacket(const ProcessTrace& process, const Packet& packet) override;
  void OnFileEnd(const ProcessTrace& process) override;

  ProcessResult Take() { return std::move(result_); }

 private:
  static constexpr uint32_t kNoFile = UINT32_MAX;
  struct FileSlot {
    uint32_t file = kNoFile;  // index in result_.files
    bool data = false;
    bool known = false;
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
    if (id < slots_.size() && slots_[id].known) [[likely]] return slots_[id];
    return NewSlot(process, id);
  }
  FileSlot& NewSlot(const ProcessTrace& process, uint32_t id);
  void OnIo(const ProcessTrace& process, const Event& e, const OpTraits& op, int64_t start,
            int64_t end);
  void OnHdf5(const ProcessTrace& process, const Event& e, int64_t start, int64_t end);
  void OnCuda(const Event& e, int64_t start, int64_t end);
  void OnWait(const ProcessTrace& process, const Event& e, int64_t start, int64_t end);
  void OnResources(const ResourceSample& sample, const ProcessTrace& process);

  int64_t origin_unix_ns_;
  int64_t resolution_ns_;
  std::unique_ptr<PathTable> own_paths_;  // when the run has none
  PathTable* paths_;
  ProcessResult result_;
  std::vector<FileSlot> slots_;  // by the trace's string id
  // result_.files' indices by run path id: a process may intern one path
  // under two ids.
  absl::flat_hash_map<uint32_t, uint32_t> file_of_path_;
  // Trackers of threads after a file's first reader. Node-based:
  // FileSlot::tracker points into it.
  std::unordered_map<PatternKey, AccessPatternTracker, PatternKeyHash> patterns_;
  std::unique_ptr<IntervalUnion> io_union_;
  MarkerCollector markers_;
  WaitCollector waits_;
  // POSIX reads made inside HDF5 calls, by call id, until the call's own
  // event (recorded after them) says which dataset they served.
  std::unordered_map<uint64_t, std::pair<uint64_t, uint64_t>> hdf5_children_;
  int64_t last_cpu_ns_ = -1;
  int64_t last_run_queue_ns_ = -1;
  int64_t last_cpu_at_ = 0;
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ANALYSIS_PROCESS_ANALYSIS_H_
