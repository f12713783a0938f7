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
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "analyzer/read/clock_correction.h"
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

namespace internal {
// Where reading a file has got to, kept between reads of a growing file.
struct ReaderState {
  explicit ReaderState(std::string path) : process(std::move(path)) {}
  ProcessTrace process;
  uint64_t offset = 0;  // where the next frame starts
  bool seen_process = false;
  uint64_t packets = 0;
};
}  // namespace internal

// Says, before each frame of a file read by a TraceFollower, whether to stop
// there for now: true once the visitor has what it needs of the file up to
// some time (`iotap top` holds a second or so of each process at a time, however
// far behind it is). The frames not read are read by a later call.
using FrameLimit = std::function<bool(const ProcessTrace& process)>;

// A trace file read while the shim writes it (`iotap top`). Each ReadNew()
// reads the frames completed since the last call, so no frame is read twice;
// a frame still being written (cut at the end of the file) and a file not
// yet written wait for a later call. The shim writes self-contained frames
// at least once a flush interval, so each call sees what the process did up
// to about a second ago. Finish() reads what is left, salvaging a cut last
// frame as ReadTraceFile does, and tells the visitor the file has ended;
// call it once the writer is gone.
//
//   TraceFollower follower("run/host.42.....iotap");
//   while (follower.ReadNew(&visitor, &issues).ok() && !follower.ended()) sleep(1);
//   absl::Status s = follower.Finish(&visitor, &issues);  // the writer is gone
//
// Either call takes a FrameLimit, which stops it at a frame boundary
// (held_back() says it did); Finish() so stopped has not finished, and is
// called again for the rest.
class TraceFollower {
 public:
  explicit TraceFollower(std::string path) : state_(std::move(path)) {}

  absl::Status ReadNew(TraceVisitor* visitor, std::vector<ReadIssue>* issues,
                       const FrameLimit& limit = nullptr);
  absl::Status Finish(TraceVisitor* visitor, std::vector<ReadIssue>* issues,
                      const FrameLimit& limit = nullptr);

  // ProcessTrace::set_shared_paths, before the first read.
  void set_shared_paths(PathTable* paths) { state_.process.set_shared_paths(paths); }

  const std::string& path() const { return state_.process.path(); }
  // What has been read of the process so far (its header once started()).
  const ProcessTrace& process() const { return state_.process; }
  bool started() const { return state_.seen_process; }
  // The file's end record has been read (the process ended normally).
  bool ended() const { return state_.process.end().has_value(); }
  bool finished() const { return finished_; }
  // The last call stopped at its FrameLimit, with frames left to read.
  bool held_back() const { return held_back_; }
  // Bytes of the file read: the offset of the next frame.
  uint64_t offset() const { return state_.offset; }

 private:
  internal::ReaderState state_;
  bool finished_ = false;
  bool held_back_ = false;
};

// Reads `path`. Returns an error if the file cannot be read or holds no
// trace; damage after a readable start is reported in `issues` instead.
// With `clocks`, the process's wall-clock times are put on the reference
// clock if its host has a correction (clock_correction.h).
absl::Status ReadTraceFile(const std::string& path, TraceVisitor* visitor,
                           std::vector<ReadIssue>* issues,
                           const HostClockCorrections* clocks = nullptr);

// As ReadTraceFile, over bytes already in memory (for tests and fuzzers);
// `name` stands for the file in messages.
absl::Status ReadTraceBytes(const std::string& name, const std::string& bytes,
                            TraceVisitor* visitor, std::vector<ReadIssue>* issues);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_READ_TRACE_READER_H_
