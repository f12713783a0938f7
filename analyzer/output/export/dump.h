// `iotap dump`: every event as one line of text, like darshan-dxt-parser.
//
// Each file starts with a few "#" lines about its process; then one line per
// event, in the order each thread recorded them (chunk by chunk):
//
//   #      time_s    dur_us    pid    tid layer    op          offset   requested    result error  file
//        0.001234     1.250   4242   4242 POSIX    pread            0        4096      4096 -      /data/x.bin
//
// time_s counts from the process's start; offsets and byte counts are exact.
// A CUDA copy's line ends with what it was ("[pinned, async, stream 0x7,
// driver API]"); its result is the call's return code. Pinned-memory events
// show the host address in the offset column.
// Names are shown with control characters and invalid bytes escaped.
//
// HDF5 calls end with "[call ID]" (their id) and every event made inside an
// HDF5 call with "[in call ID]"; TFRecord records with "[record INDEX, data N
// B, K reads, completed by read TID:SEQ]" (INDEX "?" when unknown). Dataset
// and TFRecord file descriptions appear as "# dataset ..." and "# tfrecord
// ..." lines where the trace holds them.

#ifndef IOTAP_ANALYZER_OUTPUT_EXPORT_DUMP_H_
#define IOTAP_ANALYZER_OUTPUT_EXPORT_DUMP_H_

#include <cstdio>

#include "analyzer/read/trace_reader.h"

namespace iotap::analyzer {

class DumpWriter : public TraceVisitor {
 public:
  explicit DumpWriter(std::FILE* out) : out_(out) {}

  void OnProcess(const ProcessTrace& process) override;
  void OnEvents(const ProcessTrace& process, const EventBatch& batch) override;
  void OnPacket(const ProcessTrace& process, const Packet& packet) override;
  void OnFileEnd(const ProcessTrace& process) override;

 private:
  std::FILE* out_;
  int64_t origin_ns_ = 0;
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_OUTPUT_EXPORT_DUMP_H_
