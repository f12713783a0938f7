// The TFRecord figures: per TFRecord file, the records the program read and
// how its reads covered them, for `iotap report` (its tfrecord_files table)
// and `iotap stats` (its tfrecord_files section) alike.
//
// A file appears when a process described it (TfRecordFile packet) or read
// records of it, merged over every process by path. Per file:
//
//   records, record_bytes     records whose data a read completed, and their
//                             data bytes (framing excluded)
//   record size distribution  min, max, and log2 buckets [2^k, 2^(k+1))
//   reads_completing_records  reads that completed at least one record
//   spanned_records           records whose header and data took two or more
//                             reads
//   order                     "in order" when each record follows the previous
//                             one in the file (or the reader starts again at
//                             offset 0), "shuffled" when most do not, "mixed"
//                             otherwise; from sequential_steps, restarts and
//                             jumps between consecutive records of a process
//
// The reads of the file are its per-file counts (file_accumulator.h).
//
//   TfRecordAccumulator tf;          // one per process
//   tf.OnRecord(e);                  // each event; anything but a record is ignored
//   tf.OnPacket(process, packet);    // each packet: TfRecordFile descriptions
//   tf.OnFileEnd(process);           // the process's files, by path
//   run.Absorb(std::move(tf), rank); // into the run's
//   std::vector<TfRecordFileAccumulator> files = run.Files();

#ifndef IOTAP_ANALYZER_ACCUMULATE_TFRECORD_ACCUMULATOR_H_
#define IOTAP_ANALYZER_ACCUMULATE_TFRECORD_ACCUMULATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/read/event.h"
#include "analyzer/read/process_trace.h"

namespace iotap::analyzer {

struct TfRecordFileAccumulator {
  std::string path;
  // From the file's description; when several processes described it, the
  // one ranked last (RunState's trace-file order) says.
  bool described = false;
  int described_rank = -1;
  std::string compression = "none";  // "none", "gzip", "zlib"
  bool detected_by_suffix = false;   // any process's description
  bool detected_by_header = false;
  std::string note;                  // why records were not attributed, if they were not
  int note_rank = -1;

  uint64_t records = 0;
  uint64_t record_bytes = 0;     // data bytes
  uint64_t min_record = 0;       // data bytes of the smallest record (0 if none)
  uint64_t max_record = 0;
  std::map<int, uint64_t> size_log2;  // k -> records of [2^k, 2^(k+1)) bytes; -1 = empty records
  uint64_t reads_completing_records = 0;
  uint64_t spanned_records = 0;
  uint64_t index_unknown_records = 0;  // reached by a jump
  uint64_t sequential_steps = 0;
  uint64_t restarts = 0;
  uint64_t jumps = 0;
  uint64_t processes = 0;

  std::string Order() const;     // "in order", "shuffled", "mixed", "" (fewer than 2 records)
};

class TfRecordAccumulator {
 public:
  // One event of the process being read; anything but a record is ignored.
  void OnRecord(const Event& e);
  // One packet of the process being read; anything but a TfRecordFile is
  // ignored.
  void OnPacket(const ProcessTrace& process, const Packet& packet);
  // The process has been read: its files join this accumulator's, by path.
  void OnFileEnd(const ProcessTrace& process);
  // Adds another accumulator's files (of a process ranked `rank`, or of
  // processes merged already) to this one's.
  void Absorb(TfRecordAccumulator&& other, int rank);

  // Every file, most records first (equal ones by path).
  std::vector<TfRecordFileAccumulator> Files() const;

 private:
  struct Current {
    TfRecordFileAccumulator file;
    uint64_t last_parent = 0;
    int64_t last_end = -1;  // offset after the previous record's footer
  };
  std::map<std::string, TfRecordFileAccumulator> files_;
  std::unordered_map<uint32_t, Current> current_;  // the file being read, by string id
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ACCUMULATE_TFRECORD_ACCUMULATOR_H_
