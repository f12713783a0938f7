// The TFRecord layer in `iotap stats`: per TFRecord file, the records the
// program read and how its reads covered them.
//
// A file appears when a process described it (TfRecordFile packet) or read
// records of it, merged over every process by path. Per file:
//
//   records, record_bytes     records whose data a read completed, and their
//                             data bytes (framing excluded)
//   record size distribution  min, max, mean, and log2 buckets [2^k, 2^(k+1))
//   reads, read_bytes         every POSIX and STDIO read of the file (from the
//                             per-file counts), so records_per_read =
//                             records / reads
//   reads_completing_records  reads that completed at least one record
//   spanned_records           records whose header and data took two or more
//                             reads
//   order                     "in order" when each record follows the previous
//                             one in the file (or the reader starts again at
//                             offset 0), "shuffled" when most do not, "mixed"
//                             otherwise; from sequential_steps, restarts and
//                             jumps between consecutive records of a process
//
//   TfRecordCollector tf;    // fed by StatsCollector, and per process by
//                            // ProcessAnalyzer for `iotap report`
//   std::vector<TfRecordFileStats> files = tf.Finish();

#ifndef IOTAP_ANALYZER_ANALYSIS_TFRECORD_STATS_H_
#define IOTAP_ANALYZER_ANALYSIS_TFRECORD_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/read/trace_reader.h"

namespace iotap::analyzer {

class JsonWriter;

struct TfRecordFileStats {
  std::string path;
  bool described = false;        // a TfRecordFile packet was seen
  std::string compression = "none";  // "none", "gzip", "zlib"
  bool detected_by_suffix = false;
  bool detected_by_header = false;
  std::string note;              // why records were not attributed, if they were not

  uint64_t records = 0;
  uint64_t record_bytes = 0;     // data bytes
  uint64_t min_record = 0;       // data bytes of the smallest record (0 if none)
  uint64_t max_record = 0;
  std::map<int, uint64_t> size_log2;  // k -> records of [2^k, 2^(k+1)) bytes; -1 = empty records
  uint64_t reads = 0;            // POSIX and STDIO reads of the file
  uint64_t read_bytes = 0;
  uint64_t reads_completing_records = 0;
  uint64_t spanned_records = 0;
  uint64_t index_unknown_records = 0;  // reached by a jump
  uint64_t sequential_steps = 0;
  uint64_t restarts = 0;
  uint64_t jumps = 0;
  uint64_t processes = 0;

  std::string Order() const;     // "in order", "shuffled", "mixed", "" (fewer than 2 records)
};

class TfRecordCollector {
 public:
  void OnProcess(const ProcessTrace& process);
  void OnEvents(const ProcessTrace& process, const EventBatch& batch);
  void OnPacket(const ProcessTrace& process, const Packet& packet);
  void OnFileEnd(const ProcessTrace& process);
  // One event of the process being read; anything but a record is ignored.
  void OnRecord(const Event& e);
  // Adds another collector's files (of other processes) to this one's.
  void Absorb(TfRecordCollector&& other);

  // Every file, most records first. `reads` and `read_bytes` are left for the
  // caller, which has the per-file counts.
  std::vector<TfRecordFileStats> Finish();

 private:
  struct Current {
    TfRecordFileStats stats;
    uint64_t last_parent = 0;
    int64_t last_end = -1;  // offset after the previous record's footer
  };
  std::map<std::string, TfRecordFileStats> files_;
  std::unordered_map<uint32_t, Current> current_;  // the file being read, by string id
};

void TfRecordFilesToJson(const std::vector<TfRecordFileStats>& files, JsonWriter& j);
std::string TfRecordFilesToText(const std::vector<TfRecordFileStats>& files);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ANALYSIS_TFRECORD_STATS_H_
