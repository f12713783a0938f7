// Reading one trace file: frames, packets, decoded events.
//
// ReadTraceFile streams a file written by libiotap.so: it decompresses one
// zstd frame at a time (a frame is at most a few MiB), verifies it, parses its
// packets and hands them to a TraceVisitor, so memory does not grow with the
// number of events. Damage is survived, and reported, never fatal:
//
// - a frame whose checksum or contents are wrong is skipped, and reading goes
//   on at the next frame;
// - a file cut short (a job killed mid-write) yields every complete packet
//   before the cut;
// - anything that is not a trace at all is an error naming the file.
//
//   struct Counter : public TraceVisitor {
//     void OnEvents(const ProcessTrace& p, const EventBatch& b) override {
//       events += b.size();
//     }
//     uint64_t events = 0;
//   };
//   Counter c;
//   std::vector<ReadIssue> issues;
//   absl::Status s = ReadTraceFile("run/host.42.....iotap", &c, &issues);
//   // c.events: the events of the file that could be read

#ifndef IOTAP_ANALYZER_READ_TRACE_READER_H_
#define IOTAP_ANALYZER_READ_TRACE_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "analyzer/read/event.h"
#include "analyzer/read/process_trace.h"
#include "iotap/trace.pb.h"

namespace iotap::analyzer {

// Something that went wrong while reading, and what was lost because of it.
struct ReadIssue {
  std::string path;
  uint64_t offset = 0;         // byte offset in the file where it happened
  uint64_t bytes_skipped = 0;  // compressed bytes that could not be used
  bool truncated = false;      // the file ends in the middle of a frame
  std::string message;

  // "FILE: at byte N: MESSAGE (M bytes skipped)".
  std::string ToString() const;
};

class TraceVisitor {
 public:
  virtual ~TraceVisitor() = default;
  // The process header has been read (always the first callback).
  virtual void OnProcess(const ProcessTrace& process) {}
  // A chunk of events, decoded, in the order the thread recorded them.
  virtual void OnEvents(const ProcessTrace& process, const EventBatch& batch) {}
  // Every other packet (clock snapshots, resource samples, HDF5 datasets,
  // ...), after `process` has absorbed what it keeps of it. String tables
  // are not passed on: `process` holds their strings (ProcessTrace::Name).
  virtual void OnPacket(const ProcessTrace& process, const Packet& packet) {}
  // The whole file has been read (or all the visitor wanted of it).
  virtual void OnFileEnd(const ProcessTrace& process) {}
  // True once the visitor wants nothing more from the file: reading stops
  // after the current packet (a catalog needs only the header).
  virtual bool Satisfied() const { return false; }
};

// Reads `path`. Returns an error if the file cannot be read or holds no
// trace; damage after a readable start is reported in `issues` instead.
absl::Status ReadTraceFile(const std::string& path, TraceVisitor* visitor,
                           std::vector<ReadIssue>* issues);

// As ReadTraceFile, over bytes already in memory (for tests and fuzzers);
// `name` stands for the file in messages.
absl::Status ReadTraceBytes(const std::string& name, const std::string& bytes,
                            TraceVisitor* visitor, std::vector<ReadIssue>* issues);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_READ_TRACE_READER_H_
