// Builds trace files event by event, for tests and benchmarks: the analyzer
// checked against hand-computed truth, without running a program.
//
//   SyntheticProcess p(/*pid=*/100, /*ppid=*/1, "/usr/bin/python3", {"python3", "train.py"},
//                      /*start_ns=*/1'000'000'000);
//   uint32_t f = p.Path("/data/a.bin");
//   p.Read(OP_PREAD, 1'000'010'000, 1'000'020'000, f, /*offset=*/0, /*bytes=*/4096);
//   p.End(EndOfTrace::REASON_EXIT, 0);
//   p.WriteTo(dir + "/p100.iotap");
//
// Times are wall-clock ns; the process's monotonic clock equals its wall
// clock, so what a test writes is what the analysis sees.

#ifndef IOTAP_ANALYZER_TESTING_SYNTHETIC_TRACE_H_
#define IOTAP_ANALYZER_TESTING_SYNTHETIC_TRACE_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "iotap/trace.pb.h"

namespace iotap::analyzer {

class SyntheticProcess {
 public:
  SyntheticProcess(int pid, int ppid, const std::string& executable,
                   const std::vector<std::string>& argv, int64_t start_ns,
                   ProcessHeader::Origin origin = ProcessHeader::ORIGIN_EXEC,
                   const std::string& host = "node0");

  ProcessHeader& header() { return *header_.mutable_process(); }
  // Interns a name; the same name always gets the same id.
  uint32_t Name(const std::string& value, InternedString::Kind kind);
  uint32_t Path(const std::string& path) { return Name(path, InternedString::KIND_PATH); }

  struct EventSpec {
    Op op = OP_UNSPECIFIED;
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    uint32_t file = 0;
    int64_t offset = -1;  // -1: no offset
    uint64_t requested = 0;
    int64_t result = 0;
    uint32_t error = 0;
    uint32_t flags = 0;
    uint64_t aux = 0;
    uint64_t parent = 0;
    uint32_t tid = 0;  // 0: the pid
  };
  void Add(const EventSpec& e);
  // A successful read or write of `bytes` at `offset` (-1: none).
  void Read(Op op, int64_t start, int64_t end, uint32_t file, int64_t offset, uint64_t bytes,
            uint32_t tid = 0);
  void Marker(Op op, int64_t start, int64_t end, int64_t step);
  // Cumulative CPU time (user) at `at`.
  void Cpu(int64_t at, uint64_t cpu_ns);
  // A packet written right after the header (before every event).
  void Packet(const iotap::Packet& p) { extra_.push_back(p); }
  // A packet written where the shim would write one taken at `at_ns` (a clock
  // snapshot or resource sample at a flush): at the end of the frame that
  // holds the last event starting before `at_ns`. Give them in time order.
  void TimedPacket(const iotap::Packet& p, int64_t at_ns) { timed_.push_back({at_ns, p}); }
  // The end record at `at_ns` (monotonic); its wall-clock reading follows
  // from the header's clock pair unless `wall_clock_ns` (>= 0) says.
  void End(EndOfTrace::Reason reason, int code, int64_t at_ns = 0, int64_t wall_clock_ns = -1);

  // Times in the event columns count in units of `unit_ns` (the shim's
  // IOTAP_TIME_UNIT_NS, 10 by default); event times are rounded down to it.
  // Default 1: times exactly as given.
  void set_time_unit_ns(uint32_t unit_ns) { time_unit_ns_ = unit_ns; }

  // The trace file's bytes: one zstd frame per `events_per_frame` events,
  // holding one chunk per thread of at most 4096 events (the shim's limit).
  // With `frame_ns`, a frame also ends where the events of one such period
  // from the process's start do, as the shim's flushes cut them.
  std::string Bytes(size_t events_per_frame = 4096, int64_t frame_ns = 0) const;
  void WriteTo(const std::string& path, size_t events_per_frame = 4096,
               int64_t frame_ns = 0) const;
  size_t event_count() const { return events_.size(); }

 private:
  iotap::Packet header_;
  std::map<std::string, uint32_t> ids_;
  std::vector<InternedString> names_;
  std::vector<EventSpec> events_;
  std::vector<iotap::Packet> extra_;
  std::vector<std::pair<int64_t, iotap::Packet>> timed_;
  uint32_t time_unit_ns_ = 1;
  bool ended_ = false;
  iotap::Packet end_;
  int64_t end_wall_clock_ns_ = -1;
};

// `values` as consecutive varints: the bytes of a Python stack string
// (KIND_PY_STACK: the frames' function ids, innermost first).
std::string Varints(std::initializer_list<uint32_t> values);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_TESTING_SYNTHETIC_TRACE_H_
