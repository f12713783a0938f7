// A run's events laid out for trace viewers (Perfetto, chrome://tracing):
// what `iotap export` writes, whatever the format.
//
//   class Writer : public ExportSink { ... };
//   Writer w;
//   absl::Status s = ExportRun("iotap-20261121-101500", ExportOptions{}, &w);
//
// ExportRun analyses the run (run_analysis.h) for its steps, data waits and
// binned series, then reads each trace file again and hands the sink one
// process at a time: one track per thread with every traced call as a slice,
// one per CUDA stream for device-side (CUPTI) activity, and, for trainers, a
// track of training steps with their data waits inside. A thread's mapped
// reads (page faults) are slices on its track like its reads; its io_uring
// requests, which overlap one another and the calls that submitted them, are
// on tracks of their own beside it, as many as were in flight at once. Slices of a track are
// sorted and properly nested (a child ends before its parent: an HDF5 call
// holds the POSIX reads it made), so that begin and end events can be written
// in order; the rare slice that overlaps its parent's end without being
// inside it is cut at that end, and counted.
//
// Times are nanoseconds since the run's start (RunInfo::origin_unix_ns), on
// the wall clock the analysis aligns every process to: on several hosts, the
// reference host's (clocks/clock_alignment.h). Memory holds one
// process's events at a time (about 64 bytes each), never the whole run's.

#ifndef IOTAP_ANALYZER_OUTPUT_EXPORT_EXPORT_MODEL_H_
#define IOTAP_ANALYZER_OUTPUT_EXPORT_EXPORT_MODEL_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "iotap/report.pb.h"

namespace iotap::analyzer {

// Strings of one process, interned: slices name them by index (0 = none).
class ExportStrings {
 public:
  ExportStrings() : values_{""} {}
  uint32_t Intern(const std::string& value);
  const std::string& operator[](uint32_t id) const { return values_[id]; }
  size_t size() const { return values_.size(); }

 private:
  std::vector<std::string> values_;
  std::unordered_map<std::string, uint32_t> ids_;
};

struct ExportSlice {
  int64_t start_ns = 0;
  int64_t end_ns = 0;     // == start_ns for an instant
  uint32_t name = 0;      // "pread", "H5Dread", "step", "data wait", ...
  uint32_t category = 0;  // the layer: "POSIX", "HDF5", ..., "steps"
  uint32_t file = 0;      // the file, dataset or mark
  bool instant = false;   // a point in time (step begin/end markers, marks)
  int64_t bytes = -1;     // bytes moved, -1 if not a transfer
  int64_t offset = -1;    // file offset, -1 if none
  int64_t step = -1;      // step number of steps, waits and markers
  uint32_t error = 0;     // errno (or a CUDA return code) of a failed call
  int8_t major = -1;      // mapped reads: 1 a major fault, 0 a minor one; -1 not a fault
  // FLAG_INCOMPLETE: a mapped read whose span is the nominal fault-around
  // window (the shim could not look), an io_uring request whose completion
  // was never seen (its end is its submission, its bytes unknown).
  bool incomplete = false;
};

struct ExportTrack {
  // kUringRequests: a thread's io_uring requests in flight, one track per
  // request the thread had in flight at once, so that none overlaps another.
  enum Kind { kThread, kGpuStream, kSteps, kUringRequests };
  Kind kind = kThread;
  uint32_t id = 0;                  // tid (also of kUringRequests), or the CUPTI stream id
  std::string name;                 // thread name, "GPU stream 7", "training steps"
  std::vector<ExportSlice> slices;  // sorted by start, nested
};

struct ExportProcess {
  int pid = 0;
  std::string host;
  report::Role role = report::ROLE_UNSPECIFIED;
  int trainer_pid = 0;  // for loaders
  std::string name;     // "python3 train.py" (argv, shortened)
  std::vector<std::string> argv;
  ExportStrings strings;
  std::vector<ExportTrack> tracks;
  uint64_t clipped = 0;  // slices cut at their parent's end

  // What viewers show for the process:
  // "python3 train.py [pid 101 on node0, loader of 100]".
  std::string Title() const;
};

struct RunInfo {
  int64_t origin_unix_ns = 0;  // the run's start; export times count from it
  report::Report report;       // the analysis (steps, timeline series)
};

// Process and thread ids as a trace file numbers them: their own, unless a
// process (or thread) of another host used the same id first; then a number
// of its own, above any real id, the same for the same (host, id) each time.
class ExportIds {
 public:
  int Pid(const std::string& host, int pid) { return Renumber(&pid_hosts_, host, pid); }
  int Tid(const std::string& host, int tid) { return Renumber(&tid_hosts_, host, tid); }
  // A fresh id for a track that is no thread (steps, GPU streams).
  int Fresh() { return kFirst + static_cast<int>(renumbered_.size()) + fresh_++; }

 private:
  static constexpr int kFirst = 1 << 28;
  int Renumber(std::unordered_map<int, std::string>* hosts, const std::string& host, int id);

  std::unordered_map<int, std::string> pid_hosts_, tid_hosts_;  // id -> the host that used it first
  std::map<std::pair<std::string, int>, int> renumbered_;
  int fresh_ = 0;
};

class ExportSink {
 public:
  virtual ~ExportSink() = default;
  // Before any process.
  virtual absl::Status Begin(const RunInfo& run) { return absl::OkStatus(); }
  virtual absl::Status AddProcess(const ExportProcess& process) = 0;
  // After the last process: the binned series of run.report.timeline, say.
  virtual absl::Status Finish(const RunInfo& run) { return absl::OkStatus(); }
};

struct ExportOptions {
  int timeline_bins = 600;  // counters' resolution
  int threads = 2;          // for the analysis
  // Every host's events on the reference host's clock, as the analysis puts
  // them (AnalysisOptions::correct_clocks).
  bool correct_clocks = true;
};

// Exports the run at `path` (a trace file or a directory of them) to `sink`.
absl::Status ExportRun(const std::string& path, const ExportOptions& options, ExportSink* sink);

// Sorts `slices` by start (longer first at equal starts) and cuts each at the
// end of the slice it starts inside, so that they nest; returns how many were
// cut. Exposed for tests.
uint64_t NestSlices(std::vector<ExportSlice>* slices);

// Lays out `slices` (io_uring requests of the thread named `thread`) on as
// few tracks as keep them from overlapping: each on the first track whose
// last slice has ended when it starts. Exposed for tests.
std::vector<ExportTrack> InFlightLanes(const std::string& thread, std::vector<ExportSlice> slices);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_OUTPUT_EXPORT_EXPORT_MODEL_H_
