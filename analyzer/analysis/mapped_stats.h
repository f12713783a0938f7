// The mapped-read and io_uring parts of `iotap stats` (issue 15): reads no
// wrapper sees, per file.
//
//   MappedCollector mapped;
//   mapped.OnProcess(process);              // per trace file
//   mapped.OnPacket(process, packet);       // FaultSampling, FaultCounters
//   for (const Event& e : batch.events) mapped.OnEvent(process, e);
//   mapped.OnFileEnd(process);
//   MappedReport report = mapped.Finish();
//
// Mapped reads (OP_MAPPED_READ): one per page fault the program took in a
// file mapping. `faults` counts them, `major_faults` those the kernel had to
// read from storage, `span_bytes` the pages the faults mapped (fault-around
// included: at least the bytes the program touched, at most one fault-around
// window per fault more), `major_ns` the summed time of the major ones.
// Touches of pages already mapped are not faults and are not counted.
//
// io_uring requests (OP_URING_READ, _WRITE, _OPENAT, _CLOSE, _STATX): per
// file, requests and the bytes their completions reported; `incomplete`
// those whose completion the shim never saw (FLAG_INCOMPLETE).
//
// How a process's faults were seen: sampled (SOURCE_PERF_SAMPLES), or only
// counted per thread (SOURCE_THREAD_COUNTERS, where the kernel refused the
// samples): then the counters' growth while the process had data mappings
// is reported instead, not attributable to files.

#ifndef IOTAP_ANALYZER_ANALYSIS_MAPPED_STATS_H_
#define IOTAP_ANALYZER_ANALYSIS_MAPPED_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyzer/base/json_writer.h"
#include "analyzer/read/event.h"
#include "analyzer/read/process_trace.h"
#include "iotap/trace.pb.h"

namespace iotap::analyzer {

struct MappedFileStats {
  std::string path;
  uint64_t faults = 0;
  uint64_t major_faults = 0;
  uint64_t span_bytes = 0;     // pages the faults mapped
  uint64_t touched_bytes = 0;  // one page per fault: what the program certainly touched
  uint64_t estimated_spans = 0;  // faults whose span is the nominal window (FLAG_INCOMPLETE)
  int64_t major_ns = 0;
};

struct UringFileStats {
  std::string path;
  uint64_t reads = 0;
  uint64_t read_bytes = 0;
  uint64_t writes = 0;
  uint64_t write_bytes = 0;
  uint64_t other = 0;       // openat, close, statx
  uint64_t failed = 0;
  uint64_t incomplete = 0;  // no completion seen
  int64_t read_ns = 0;      // submit to completion seen, summed
};

struct MappedReport {
  std::vector<MappedFileStats> mapped;  // most span bytes first
  std::vector<UringFileStats> uring;    // most bytes first
  uint64_t uring_calls = 0;             // OP_URING_ENTER events
  // Requests the kernel took without a call the shim saw (OP_URING_ENTER
  // with FLAG_INCOMPLETE at a ring's teardown): counted, files unknown.
  uint64_t uring_unseen_requests = 0;
  uint64_t processes_sampled = 0;       // SOURCE_PERF_SAMPLES
  uint64_t processes_counted = 0;       // SOURCE_THREAD_COUNTERS
  uint64_t lost_faults = 0;
  std::vector<std::string> notes;       // why faults were only counted, once each
  // SOURCE_THREAD_COUNTERS: growth of the threads' counters from their first
  // sample to their last, summed.
  uint64_t counted_minor_faults = 0;
  uint64_t counted_major_faults = 0;
  uint64_t counted_read_bytes = 0;

  bool empty() const {
    return mapped.empty() && uring.empty() && uring_calls == 0 && uring_unseen_requests == 0 &&
           processes_sampled == 0 &&
           processes_counted == 0;
  }
};

class MappedCollector {
 public:
  void OnProcess(const ProcessTrace& process);
  void OnPacket(const ProcessTrace& process, const Packet& packet);
  void OnEvent(const ProcessTrace& process, const Event& e);
  void OnFileEnd(const ProcessTrace& process);
  MappedReport Finish() const;

 private:
  struct FirstLast {
    FaultCounters::ThreadCounters first;
    FaultCounters::ThreadCounters last;
  };
  std::map<std::string, MappedFileStats> mapped_;
  std::map<std::string, UringFileStats> uring_;
  std::map<uint32_t, FirstLast> threads_;  // of the current process
  FaultSampling::Source source_ = FaultSampling::SOURCE_UNSPECIFIED;
  uint64_t lost_ = 0;
  MappedReport totals_;
};

// The "mapped_reads" and "io_uring" members of the stats JSON.
void WriteMappedJson(JsonWriter& j, const MappedReport& report);
// The terminal section; empty if the run had neither.
std::string MappedToText(const MappedReport& report);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ANALYSIS_MAPPED_STATS_H_
