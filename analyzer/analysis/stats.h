// `iotap stats`: counts per file and per process, summed over every process
// of a run.
//
// A read is any call that moves data from a file into the program (read,
// pread, readv, preadv, preadv2, copy_file_range and sendfile from the file,
// fread, fgets, fgetc, and GPUDirect Storage's cuFileRead into GPU memory);
// a write the reverse. Bytes are what the calls returned, not what they asked
// for (a cuFile request that was queued, by cuFileReadAsync or a batch,
// counts what it asked for). Opens are open, openat, creat, mkstemp, fopen
// and freopen, failed ones included (as strace shows them); fdopen and
// opendir are not opens of a file. STDIO calls are counted where the program
// made them: glibc's streams reach the kernel through calls no wrapper sees.
//
// CUDA (cuda_stats.h), in the JSON:
//   "cuda_copies": [{"direction": "HtoD", "host_memory": "pinned",
//                    "mode": "async", "calls": 12, "failed_calls": 0,
//                    "bytes": 4915200, "seconds": 0.0012}, ...]
//     host-side copy calls grouped by direction (HtoD, DtoH, DtoD, HtoH,
//     peer, default: inferred by the driver), host memory (pinned, pageable,
//     none: no host side, unknown) and mode (sync, async); bytes of the calls
//     that succeeded, most first; seconds the calls took, summed.
//   "cuda_device": {"copies": [{"direction", "host_memory", "copies",
//                   "bytes", "seconds"}], "kernels": N, "kernel_seconds": S}
//     what CUPTI measured on the device (IOTAP_CUPTI=1), summed device time.
//   "cuda_pinned": {"allocations": N, "bytes": N}
//     pinned allocations and registrations that succeeded.
// Two more layers have their own sections: `datasets` (JSON) / "HDF5
// datasets" (text), one entry per HDF5 dataset with its calls and the POSIX
// I/O beneath them (every field: DatasetStats in hdf5_stats.h), and
// `tfrecord_files` / "TFRecord files", one entry per TFRecord file with the
// records read and how reads covered them (TfRecordFileStats in
// tfrecord_stats.h). The JSON keys are those names in snake_case, as
// DatasetsToJson and TfRecordFilesToJson write them.
//
//   StatsCollector stats;
//   TraceSetResult read = ReadTraceSet(files, &stats);
//   std::cout << StatsToJson(stats.Finish(std::move(read.issues)));

#ifndef IOTAP_ANALYZER_ANALYSIS_STATS_H_
#define IOTAP_ANALYZER_ANALYSIS_STATS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <unordered_map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/analysis/cuda_stats.h"
#include "analyzer/analysis/hdf5_stats.h"
#include "analyzer/analysis/tfrecord_stats.h"
#include "analyzer/read/trace_reader.h"

namespace iotap::analyzer {

struct FileStats {
  std::string path;
  InternedString::Kind kind = InternedString::KIND_UNSPECIFIED;
  uint64_t opens = 0;
  uint64_t reads = 0;
  uint64_t read_bytes = 0;
  uint64_t writes = 0;
  uint64_t write_bytes = 0;
  uint64_t posix_reads = 0;
  uint64_t stdio_reads = 0;
  uint64_t posix_writes = 0;
  uint64_t stdio_writes = 0;
  uint64_t gds_reads = 0;     // cuFileRead, cuFileReadAsync, batched reads
  uint64_t gds_writes = 0;
  uint64_t metadata_ops = 0;  // stat, readdir, close, lseek, ... (IsMetadata)
  uint64_t mmaps = 0;
  uint64_t mmap_bytes = 0;
  uint64_t errors = 0;        // calls that failed
  int64_t read_ns = 0;        // summed durations (not a union)
  int64_t write_ns = 0;
  int64_t metadata_ns = 0;
  uint64_t processes = 0;     // how many processes touched the file
};

struct ProcessStats {
  std::string trace_file;
  int pid = 0;
  int ppid = 0;
  std::string hostname;
  std::string executable;
  std::vector<std::string> argv;
  int rank = -1;
  uint64_t events = 0;
  uint64_t dropped = 0;
  uint64_t reads = 0;
  uint64_t read_bytes = 0;
  uint64_t writes = 0;
  uint64_t write_bytes = 0;
  std::string end;  // "exit 0", "_exit 0", "exec", "abort", "killed (no end record)"
};

struct StatsReport {
  uint64_t processes = 0;
  uint64_t events = 0;
  uint64_t dropped_events = 0;
  std::vector<FileStats> files;        // paths and devices, most bytes first
  std::vector<FileStats> ipc;          // pipes, sockets, anonymous: one entry per kind
  std::vector<ProcessStats> process_list;
  CudaReport cuda;
  std::vector<DatasetStats> datasets;            // most logical bytes first
  std::vector<TfRecordFileStats> tfrecord_files; // most records first
  std::vector<ReadIssue> issues;
};

class StatsCollector : public TraceVisitor {
 public:
  void OnProcess(const ProcessTrace& process) override;
  void OnEvents(const ProcessTrace& process, const EventBatch& batch) override;
  void OnPacket(const ProcessTrace& process, const Packet& packet) override;
  void OnFileEnd(const ProcessTrace& process) override;

  // The report; `issues` are those met while reading.
  StatsReport Finish(std::vector<ReadIssue> issues);

 private:
  // A file's stats, and the last process that touched it (counted once in
  // FileStats::processes however many of its string ids name the file).
  struct Entry {
    FileStats stats;
    uint64_t last_process = 0;
  };

  FileStats* Slot(const ProcessTrace& process, uint32_t id);

  // The files, in a deque (entries stay put for by_id_ and for the index's
  // keys, which are their paths), and an index by path whose keys sit in
  // the table itself: a lookup that finds its path touches the table and
  // the entry, nothing more. Finish orders the files.
  std::deque<Entry> files_;
  absl::flat_hash_map<std::string_view, Entry*> file_index_;
  std::map<int, Entry> ipc_;  // by InternedString::Kind
  std::vector<ProcessStats> processes_;
  // Per trace file being read: string id -> entry; and the file's number,
  // counting from 1 (Entry::last_process).
  std::vector<Entry*> by_id_;
  uint64_t process_number_ = 0;
  ProcessStats current_;
  CudaStats cuda_;
  Hdf5Collector hdf5_;
  TfRecordCollector tfrecord_;
  uint64_t events_ = 0;
  uint64_t dropped_ = 0;
};

std::string StatsToJson(const StatsReport& report);
std::string StatsToText(const StatsReport& report);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ANALYSIS_STATS_H_
