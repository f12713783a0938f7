// The mapped-read and io_uring figures (issue 15): reads no wrapper sees,
// per file, for `iotap stats` (its mapped_reads and io_uring sections).
//
//   MappedAccumulator mapped;           // one per process
//   mapped.OnPacket(packet);            // FaultSampling, FaultCounters
//   mapped.OnEvent(process, e);         // each event; others are ignored
//   mapped.OnFileEnd();                 // the process has been read
//   run.Absorb(std::move(mapped), rank);  // into the run's
//   MappedTotals totals = run.Totals();
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

#ifndef IOTAP_ANALYZER_ACCUMULATE_MAPPED_ACCUMULATOR_H_
#define IOTAP_ANALYZER_ACCUMULATE_MAPPED_ACCUMULATOR_H_

#include <cstdint>
#include <map>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/read/event.h"
#include "analyzer/read/process_trace.h"
#include "iotap/trace.pb.h"

namespace iotap::analyzer {

struct MappedFileStats {
  std::string path;
  uint64_t faults = 0;
  uint64_t major_faults = 0;
  uint64_t span_bytes = 0;       // pages the faults mapped
  uint64_t touched_bytes = 0;    // one page per fault: what the program certainly touched
  uint64_t estimated_spans = 0;  // faults whose span is the nominal window (FLAG_INCOMPLETE)
  int64_t major_ns = 0;
};

struct UringFileStats {
  std::string path;
  uint64_t reads = 0;
  uint64_t read_bytes = 0;
  uint64_t writes = 0;
  uint64_t write_bytes = 0;
  uint64_t other = 0;  // openat, close, statx
  uint64_t failed = 0;
  uint64_t incomplete = 0;  // no completion seen
  int64_t read_ns = 0;      // submit to completion seen, summed
};

struct MappedTotals {
  std::vector<MappedFileStats> mapped;  // most span bytes first, equal ones by path
  std::vector<UringFileStats> uring;    // most bytes first, equal ones by path
  uint64_t uring_calls = 0;             // OP_URING_ENTER events
  // Requests the kernel took without a call the shim saw (OP_URING_ENTER
  // with FLAG_INCOMPLETE at a ring's teardown): counted, files unknown.
  uint64_t uring_unseen_requests = 0;
  uint64_t processes_sampled = 0;  // SOURCE_PERF_SAMPLES
  uint64_t processes_counted = 0;  // SOURCE_THREAD_COUNTERS
  uint64_t lost_faults = 0;
  // Why faults were only counted, once each, in the order of the trace files.
  std::vector<std::string> notes;
  // SOURCE_THREAD_COUNTERS: growth of the threads' counters from their first
  // sample to their last, summed.
  uint64_t counted_minor_faults = 0;
  uint64_t counted_major_faults = 0;
  uint64_t counted_read_bytes = 0;
};

class MappedAccumulator {
 public:
  // One packet of the process being read; anything but FaultSampling and
  // FaultCounters is ignored.
  void OnPacket(const Packet& packet);
  // One event of the process being read; anything but mapped reads and
  // io_uring requests is ignored.
  void OnEvent(const ProcessTrace& process, const Event& e);
  // The process has been read: its sampling source and counters' growth
  // join the totals.
  void OnFileEnd();
  // Adds another accumulator's figures (of a process ranked `rank`, or of
  // processes merged already) to this one's.
  void Absorb(MappedAccumulator&& other, int rank);

  MappedTotals Totals() const;

  // One file's figures (zeros for a file without mapped reads or io_uring
  // requests), for the file tables' split of reads into calls, faults and
  // requests.
  uint64_t FaultsOf(std::string_view path) const;
  UringFileStats UringOf(std::string_view path) const;

  // Calls f on each member that a run's accumulator carries (files, notes
  // with their ranks, counts), for copying it between processes
  // (partial_run.cc); an accumulator so filled, Absorbed, adds as the
  // original would.
  template <typename F>
  void ForEachField(F&& f) {
    f(mapped_);
    f(uring_);
    f(notes_);
    f(totals_);
  }

 private:
  struct FirstLast {
    FaultCounters::ThreadCounters first;
    FaultCounters::ThreadCounters last;
  };
  // By path; looked up by view (every file of the report's tables asks).
  std::map<std::string, MappedFileStats, std::less<>> mapped_;
  std::map<std::string, UringFileStats, std::less<>> uring_;
  std::map<uint32_t, FirstLast> threads_;  // of the process being read
  FaultSampling::Source source_ = FaultSampling::SOURCE_UNSPECIFIED;
  uint64_t lost_ = 0;
  // Each note, with where it was first given: the rank of its process (-1
  // while the process's own) and its place among that process's notes.
  std::map<std::string, std::pair<int, int>> notes_;
  MappedTotals totals_;  // the counts; files and notes are kept above
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ACCUMULATE_MAPPED_ACCUMULATOR_H_
