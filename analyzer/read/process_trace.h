// What the reader knows about the process a trace file came from: its header,
// its interned strings, its clocks and how it ended.

#ifndef IOTAP_ANALYZER_READ_PROCESS_TRACE_H_
#define IOTAP_ANALYZER_READ_PROCESS_TRACE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/read/clock_correction.h"
#include "analyzer/read/path_table.h"
#include "iotap/trace.pb.h"

namespace iotap::analyzer {

struct InternedName {
  // The text, in the ProcessTrace's own storage (or the path table it shares
  // paths with): valid while it lives (copy it to keep it longer).
  std::string_view value;
  InternedString::Kind kind = InternedString::KIND_UNSPECIFIED;
  bool defined = false;
};

class ProcessTrace {
 public:
  explicit ProcessTrace(std::string path) : path_(std::move(path)) {}
  // Names point into the trace's own storage: moved with it, never copied.
  ProcessTrace(ProcessTrace&&) = default;
  ProcessTrace& operator=(ProcessTrace&&) = default;
  ProcessTrace(const ProcessTrace&) = delete;
  ProcessTrace& operator=(const ProcessTrace&) = delete;

  const std::string& path() const { return path_; }
  const ProcessHeader& header() const { return header_; }
  int pid() const { return header_.pid(); }

  // The string with `id`, or an empty name (kind unspecified) if the file
  // never defined it.
  const InternedName& Name(uint32_t id) const;
  // The string's text, "" for id 0 or undefined ids.
  std::string_view Text(uint32_t id) const { return Name(id).value; }

  const std::vector<ClockSnapshot>& clocks() const { return clocks_; }
  // The last end packet, if the file has one (a killed process has none).
  const std::optional<EndOfTrace>& end() const { return end_; }
  bool exec_replaced() const { return exec_replaced_; }

  // Events decoded so far, and events the shim reported lost (the larger of
  // its running total and the losses announced chunk by chunk).
  uint64_t events() const { return events_; }
  uint64_t dropped() const;

  // Wall-clock time (ns since the epoch) of a CLOCK_MONOTONIC time, from the
  // nearest clock snapshot; on the reference clock if the reader was given a
  // correction for the process's host (clock_correction.h).
  int64_t ToRealtimeNs(int64_t monotonic_ns) const {
    return OnReferenceClock(OwnRealtimeNs(monotonic_ns));
  }
  // As ToRealtimeNs, on the host's own clock.
  int64_t OwnRealtimeNs(int64_t monotonic_ns) const;
  // A wall-clock time of the host's clock (OwnRealtimeNs) on the reference
  // clock: for times converted with one offset per chunk, as the drift
  // makes the correction differ from one end of a chunk to the other.
  int64_t OnReferenceClock(int64_t own_ns) const {
    return corrected_ ? correction_.Apply(own_ns) : own_ns;
  }

  // Reader side: absorb a packet.
  void SetHeader(const ProcessHeader& header) { header_ = header; }
  void SetClockCorrection(const ClockCorrection& correction) {
    correction_ = correction;
    corrected_ = true;
  }
  // Keeps the text of file paths and devices in `paths` (which must outlive
  // the trace) instead of blocks of its own: a reader that keeps many traces
  // whose processes name the same files (`iotap top`'s followers, while the
  // analysis interns the same paths) holds each path once. Before any
  // string is added.
  void set_shared_paths(PathTable* paths) { shared_paths_ = paths; }
  void AddStrings(const StringTable& table);
  // One entry of a string table (AddStrings, entry by entry).
  void AddString(uint32_t id, InternedString::Kind kind, std::string_view value);
  void AddClock(const ClockSnapshot& clock);
  void SetEnd(const EndOfTrace& end);
  void NoteExec() { exec_replaced_ = true; }
  void CountEvents(uint64_t n, uint64_t dropped) {
    events_ += n;
    // Losses a crafted trace announces stop at the largest count rather than
    // wrap (as AddTo in analyzer/base/numbers.h, which read/ does not link).
    if (__builtin_add_overflow(dropped_, dropped, &dropped_)) dropped_ = UINT64_MAX;
  }

 private:
  std::string path_;
  ProcessHeader header_;
  std::vector<InternedName> names_;
  PathTable* shared_paths_ = nullptr;
  // The names' bytes, side by side in blocks that never move: a worker's
  // trace defines a string or two per file it opens, one allocation each
  // if every name were a std::string of its own.
  std::string_view Store(std::string_view text);
  std::vector<std::unique_ptr<char[]>> name_blocks_;
  size_t name_block_size_ = 0;
  size_t name_block_used_ = 0;
  std::vector<ClockSnapshot> clocks_;
  std::optional<EndOfTrace> end_;
  ClockCorrection correction_;
  bool corrected_ = false;
  bool exec_replaced_ = false;
  uint64_t events_ = 0;
  uint64_t dropped_ = 0;
  uint64_t dropped_reported_by_shim_ = 0;
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_READ_PROCESS_TRACE_H_
