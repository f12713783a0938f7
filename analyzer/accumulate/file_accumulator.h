// The figures of one file: its counts, which `iotap report` (its file
// tables) and `iotap stats` (its files and ipc sections) both print, and the
// detail only the report needs (sizes, access patterns, bytes read again).
//
// A read is a call that moves data from the file into the program (POSIX,
// STDIO or GPUDirect Storage; TransferOf in event.h), a write the reverse;
// bytes are what the calls moved (BytesMoved). Opens, failed ones included,
// are the calls IsOpen names; metadata calls those IsMetadata names.
//
//   FileCounts counts;
//   const OpTraits& op = TraitsOf(e.op);
//   counts.Count(e, op, BytesMoved(e));
//   counts.reads();  // POSIX, STDIO and GDS reads
//
// FileAccumulator is a file over the whole run, as RunState keeps it;
// RunFile points at it and at its FileDetail, as the report's tables read it.

#ifndef IOTAP_ANALYZER_ACCUMULATE_FILE_ACCUMULATOR_H_
#define IOTAP_ANALYZER_ACCUMULATE_FILE_ACCUMULATOR_H_

#include <cstdint>
#include <string_view>

#include "absl/base/attributes.h"
#include "analyzer/accumulate/accumulators.h"
#include "analyzer/base/numbers.h"
#include "analyzer/read/event.h"

namespace iotap::analyzer {

// What kind of name a file's string is, in a word: "file" (KIND_PATH),
// "device", "pipe", "socket", "anonymous", or "unknown".
const char* FileKindName(InternedString::Kind kind);

// Calls on one file (or one kind of descriptor) and what they moved. Kept
// per file of every process, so it stays small: two cache lines.
struct FileCounts {
  uint64_t opens = 0;
  uint64_t posix_reads = 0;
  uint64_t stdio_reads = 0;
  uint64_t gds_reads = 0;      // cuFileRead, cuFileReadAsync, batched reads
  uint64_t read_bytes = 0;
  uint64_t posix_writes = 0;
  uint64_t stdio_writes = 0;
  uint64_t gds_writes = 0;
  uint64_t write_bytes = 0;
  uint64_t metadata_ops = 0;
  uint64_t mmaps = 0;          // mmap calls, failed ones included
  uint64_t mmap_bytes = 0;     // bytes the successful ones mapped
  uint64_t errors = 0;         // calls that failed
  int64_t read_ns = 0;         // summed durations (not a union)
  int64_t write_ns = 0;
  int64_t metadata_ns = 0;

  uint64_t reads() const { return posix_reads + stdio_reads + gds_reads; }
  uint64_t writes() const { return posix_writes + stdio_writes + gds_writes; }

  // Counts `e`, a POSIX, STDIO or GDS event whose traits are `op` and which
  // moved `bytes`. Always inline: it runs for every I/O event.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Count(const Event& e, const OpTraits& op, uint64_t bytes) {
    if (e.Failed()) ++errors;
    if (op.open) ++opens;
    const int64_t ns = e.duration_ns();
    switch (op.transfer) {
      case Transfer::kRead:
        AddTo(&read_bytes, bytes);
        AddTo(&read_ns, ns);
        ++(op.layer == Layer::kStdio ? stdio_reads : op.layer == Layer::kGds ? gds_reads : posix_reads);
        break;
      case Transfer::kWrite:
        AddTo(&write_bytes, bytes);
        AddTo(&write_ns, ns);
        ++(op.layer == Layer::kStdio  ? stdio_writes
           : op.layer == Layer::kGds ? gds_writes
                                     : posix_writes);
        break;
      case Transfer::kNone:
        if (e.op == OP_MMAP) {
          ++mmaps;
          if (!e.Failed()) AddTo(&mmap_bytes, e.requested);
        }
        if (op.metadata) {
          ++metadata_ops;
          AddTo(&metadata_ns, ns);
        }
        break;
    }
  }
  void Merge(const FileCounts& o);
};

// What the report also wants of a file.
struct FileDetail {
  int64_t size_bytes = -1;        // the largest size stat calls saw
  uint64_t direct_opens = 0;      // opened with O_DIRECT
  uint64_t dontneed_advice = 0;   // posix_fadvise(POSIX_FADV_DONTNEED)
  uint64_t hdf5_reads = 0;        // reads made inside HDF5 calls
  DarshanHistogram read_sizes;
  DarshanHistogram write_sizes;
  AccessPattern read_pattern;
  ByteRanges read_ranges;

  void Merge(const FileDetail& o);
};

// A file over the run: merged from every process that touched it. What
// both commands print; the report's detail is kept apart (FileDetail), so that
// the counts of a run of a million files take 160 bytes a file, not 400.
struct FileAccumulator {
  InternedString::Kind kind = InternedString::KIND_UNSPECIFIED;  // KIND_PATH or KIND_DEVICE
  int kind_rank = -1;                // the rank of the process `kind` came from
  const char* category = nullptr;    // FileCategory() of the path
  uint64_t processes = 0;            // processes that touched it
  int last_process = -1;             // the last one counted in `processes`
  FileCounts counts;
};

// A file over the run with the report's detail of it, as the report's
// tables read it: its path and where the run keeps its figures (views, valid
// while the run's state lives).
struct RunFile {
  std::string_view path;
  const FileAccumulator* file = nullptr;
  const FileDetail* detail = nullptr;
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ACCUMULATE_FILE_ACCUMULATOR_H_
