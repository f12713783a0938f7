// What the reader knows about the process a trace file came from: its header,
// its interned strings, its clocks and how it ended.

#ifndef IOTAP_ANALYZER_READ_PROCESS_TRACE_H_
#define IOTAP_ANALYZER_READ_PROCESS_TRACE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iotap/trace.pb.h"

namespace iotap::analyzer {

struct InternedName {
  std::string value;
  InternedString::Kind kind = InternedString::KIND_UNSPECIFIED;
  bool defined = false;
};

class ProcessTrace {
 public:
  explicit ProcessTrace(std::string path) : path_(std::move(path)) {}

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
  // nearest clock snapshot.
  int64_t ToRealtimeNs(int64_t monotonic_ns) const;

  // Reader side: absorb a packet.
  void SetHeader(const ProcessHeader& header) { header_ = header; }
  void AddStrings(const StringTable& table);
  // One entry of a string table (AddStrings, entry by entry).
  void AddString(uint32_t id, InternedString::Kind kind, std::string_view value);
  void AddClock(const ClockSnapshot& clock);
  void SetEnd(const EndOfTrace& end);
  void NoteExec() { exec_replaced_ = true; }
  void CountEvents(uint64_t n, uint64_t dropped) {
    events_ += n;
    dropped_ += dropped;
  }

 private:
  std::string path_;
  ProcessHeader header_;
  std::vector<InternedName> names_;
  std::vector<ClockSnapshot> clocks_;
  std::optional<EndOfTrace> end_;
  bool exec_replaced_ = false;
  uint64_t events_ = 0;
  uint64_t dropped_ = 0;
  uint64_t dropped_reported_by_shim_ = 0;
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_READ_PROCESS_TRACE_H_
