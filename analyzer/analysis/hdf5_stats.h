// The HDF5 layer in `iotap stats`: per dataset, the HDF5 calls and the POSIX
// I/O beneath them.
//
// A dataset is named "FILE:/path/in/file" and merged over every process.
// POSIX (and STDIO) events whose `parent` is an HDF5 call's id are counted
// beneath that call: beneath H5Dread and H5Dread_chunk as the dataset's
// POSIX reads, beneath H5Dwrite and H5Dwrite_chunk as its POSIX writes, and
// beneath its opens and closes as other POSIX calls. So "each 40 KiB H5Dread
// became 20 POSIX reads of 2 KiB" is posix_reads / reads and
// posix_read_bytes / posix_reads.
//
//   Hdf5Collector hdf5;      // fed by StatsCollector, visitor by visitor
//   std::vector<DatasetStats> datasets = hdf5.Finish();

#ifndef IOTAP_ANALYZER_ANALYSIS_HDF5_STATS_H_
#define IOTAP_ANALYZER_ANALYSIS_HDF5_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/read/trace_reader.h"

namespace iotap::analyzer {

class JsonWriter;

struct DatasetStats {
  std::string dataset;  // "FILE:/path"
  std::string file;     // FILE, absolute
  std::string name;     // "/path" in the file

  // From the dataset's Hdf5Dataset description (described = false if no
  // process wrote one, and then these are empty).
  bool described = false;
  uint64_t element_size = 0;         // bytes
  std::vector<uint64_t> dims;        // elements per dimension
  std::string layout = "unknown";    // "contiguous", "chunked", "compact", "virtual"
  std::vector<uint64_t> chunk_dims;  // chunked only
  std::vector<std::pair<int, std::string>> filters;  // (H5Z id, name), in order
  std::string type_class;            // "integer", "float", ...
  // Bytes of one chunk: chunk elements x element size (0 unless chunked).
  uint64_t ChunkBytes() const;

  uint64_t opens = 0;            // H5Dopen2, H5Dcreate2 and H5Oopen of it
  uint64_t closes = 0;           // H5Dclose and H5Oclose of it
  uint64_t reads = 0;            // H5Dread calls
  uint64_t read_elements = 0;    // elements selected, summed
  uint64_t read_bytes = 0;       // logical bytes (elements x element size), summed
  int64_t read_ns = 0;           // H5Dread durations, summed
  uint64_t writes = 0;           // H5Dwrite calls
  uint64_t write_elements = 0;
  uint64_t write_bytes = 0;      // logical
  int64_t write_ns = 0;
  uint64_t chunk_reads = 0;      // H5Dread_chunk calls
  uint64_t chunk_read_bytes = 0; // stored chunk bytes
  uint64_t chunk_writes = 0;     // H5Dwrite_chunk calls
  uint64_t chunk_write_bytes = 0;
  uint64_t failed_calls = 0;     // any of the above that failed
  uint64_t nested_calls = 0;     // made inside another HDF5 call

  // POSIX and STDIO calls beneath the dataset's outermost HDF5 calls.
  uint64_t posix_reads = 0;        // beneath H5Dread and H5Dread_chunk
  uint64_t posix_read_bytes = 0;
  uint64_t posix_writes = 0;       // beneath H5Dwrite and H5Dwrite_chunk
  uint64_t posix_write_bytes = 0;
  uint64_t posix_other = 0;        // every POSIX call beneath opens and closes
  // Fewest and most POSIX reads beneath one H5Dread (0 and 0 if no read).
  uint64_t min_posix_reads_per_read = 0;
  uint64_t max_posix_reads_per_read = 0;

  uint64_t processes = 0;  // processes that used the dataset
};

class Hdf5Collector {
 public:
  void OnProcess(const ProcessTrace& process);
  void OnEvents(const ProcessTrace& process, const EventBatch& batch);
  // One event of a batch (OnEvents, for a caller that walks the batch itself).
  void OnEvent(const ProcessTrace& process, const Event& e, const OpTraits& op);
  void OnPacket(const ProcessTrace& process, const Packet& packet);
  void OnFileEnd(const ProcessTrace& process);

  // Every dataset, most logical bytes read first.
  std::vector<DatasetStats> Finish();

 private:
  // POSIX calls seen beneath one HDF5 call, before that call's own event
  // (recorded after them) arrives.
  struct Beneath {
    uint64_t reads = 0, read_bytes = 0, writes = 0, write_bytes = 0, calls = 0;
  };

  std::map<std::string, DatasetStats> datasets_;
  // The file being read: accumulators and descriptions by string id, and
  // the calls still waiting for their HDF5 event.
  std::unordered_map<uint32_t, DatasetStats> current_;
  std::unordered_map<uint32_t, Hdf5Dataset> descriptions_;
  std::unordered_map<uint64_t, Beneath> pending_;
};

// JSON array and text section for `iotap stats`.
void DatasetsToJson(const std::vector<DatasetStats>& datasets, JsonWriter& j);
std::string DatasetsToText(const std::vector<DatasetStats>& datasets);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ANALYSIS_HDF5_STATS_H_
