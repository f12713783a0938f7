// The HDF5 figures: per dataset, its HDF5 calls and the POSIX and STDIO I/O
// beneath them, for `iotap report` (its datasets table) and `iotap stats`
// (its datasets section) alike.
//
// A dataset is named "FILE:/path" (a KIND_DATASET string) and merged over
// every process by that name. A POSIX or STDIO event made inside an
// outermost HDF5 call carries that call's id in `parent` (trace.proto);
// the call's own event comes after them and says which dataset they served:
// beneath H5Dread and H5Dread_chunk they are the dataset's POSIX reads,
// beneath H5Dwrite and H5Dwrite_chunk its POSIX writes, beneath its opens
// and closes its other POSIX calls. HDF5 calls made inside another get none
// (their I/O is the outermost call's).
//
//   Hdf5Accumulator hdf5;                      // one per process
//   hdf5.OnBeneath(e, op, BytesMoved(e));      // a POSIX or STDIO event with a parent
//   hdf5.OnCall(process, e);                   // an HDF5 event
//   hdf5.OnDescription(packet.hdf5_dataset()); // an Hdf5Dataset packet
//   std::map<std::string, DatasetAccumulator> datasets = hdf5.Finish(process);

#ifndef IOTAP_ANALYZER_ACCUMULATE_HDF5_ACCUMULATOR_H_
#define IOTAP_ANALYZER_ACCUMULATE_HDF5_ACCUMULATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analyzer/base/numbers.h"
#include "analyzer/read/event.h"
#include "analyzer/read/process_trace.h"

namespace iotap::analyzer {

// A layout's name: "compact", "contiguous", "chunked", "virtual", "unknown".
const char* LayoutName(Hdf5Dataset::Layout layout);

// "FILE:/path" split into FILE and "/path" (at the last ":/", else the last
// ':'; no colon: no file).
std::pair<std::string_view, std::string_view> DatasetNameParts(std::string_view dataset);

struct DatasetAccumulator {
  // The dataset's description, when a process wrote one; when several did,
  // the one from the process ranked last (RunState's trace-file order).
  Hdf5Dataset description;
  bool described = false;
  int described_rank = -1;

  uint64_t opens = 0;            // H5Dopen2, H5Dcreate2 and H5Oopen of it
  uint64_t closes = 0;           // H5Dclose and H5Oclose of it
  uint64_t reads = 0;            // H5Dread calls
  uint64_t read_elements = 0;    // elements selected by those that succeeded
  uint64_t read_bytes = 0;       // logical bytes (elements x element size) of those
  int64_t read_ns = 0;           // H5Dread durations, summed
  uint64_t writes = 0;           // H5Dwrite calls
  uint64_t write_elements = 0;
  uint64_t write_bytes = 0;      // logical
  int64_t write_ns = 0;
  uint64_t chunk_reads = 0;      // H5Dread_chunk calls
  uint64_t chunk_read_bytes = 0; // stored chunk bytes
  int64_t chunk_read_ns = 0;     // H5Dread_chunk durations, summed
  uint64_t chunk_writes = 0;     // H5Dwrite_chunk calls
  uint64_t chunk_write_bytes = 0;
  uint64_t failed_calls = 0;     // any of the above that failed (result < 0)
  uint64_t nested_calls = 0;     // made inside another HDF5 call

  // POSIX and STDIO calls beneath the dataset's outermost HDF5 calls.
  uint64_t posix_reads = 0;        // beneath H5Dread and H5Dread_chunk
  uint64_t posix_read_bytes = 0;
  uint64_t posix_writes = 0;       // beneath H5Dwrite and H5Dwrite_chunk
  uint64_t posix_write_bytes = 0;
  uint64_t posix_other = 0;        // every call beneath opens and closes
  // Fewest and most POSIX reads beneath one H5Dread (0 and 0 if no read).
  uint64_t min_posix_reads_per_read = 0;
  uint64_t max_posix_reads_per_read = 0;

  uint64_t processes = 0;  // processes that used it

  // Adds `o` (another process's, or several processes' already merged).
  void Merge(const DatasetAccumulator& o);
  // Bytes of one chunk: chunk elements x element size (0 unless chunked).
  uint64_t ChunkBytes() const;
};

// One process's HDF5 calls, as its trace file is read.
class Hdf5Accumulator {
 public:
  // A POSIX or STDIO event `e` (traits `op`, `bytes` moved) whose parent is
  // an HDF5 call.
  void OnBeneath(const Event& e, const OpTraits& op, uint64_t bytes) {
    Beneath& b = pending_[e.parent];
    ++b.calls;
    if (op.transfer == Transfer::kRead) {
      ++b.reads;
      AddTo(&b.read_bytes, bytes);
    } else if (op.transfer == Transfer::kWrite) {
      ++b.writes;
      AddTo(&b.write_bytes, bytes);
    }
  }
  // An HDF5 event of `process`.
  void OnCall(const ProcessTrace& process, const Event& e);
  // A dataset's description (Hdf5Dataset packet); a dataset described but
  // never used still counts.
  void OnDescription(const Hdf5Dataset& d);
  // The process's datasets by name, each counting one process; forgets them.
  std::map<std::string, DatasetAccumulator> Finish(const ProcessTrace& process);

 private:
  // Calls seen beneath one HDF5 call, before that call's own event.
  struct Beneath {
    uint64_t reads = 0, read_bytes = 0, writes = 0, write_bytes = 0, calls = 0;
  };
  std::unordered_map<uint32_t, DatasetAccumulator> by_id_;  // by string id
  std::unordered_map<uint64_t, Beneath> pending_;           // by HDF5 call id
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ACCUMULATE_HDF5_ACCUMULATOR_H_
