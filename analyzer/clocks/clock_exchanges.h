// Time exchanges between `iotap run` instances: anchors for the host clock
// fit that do not depend on the job's steps.
//
// With `iotap run --clock-sync HOST:PORT` on every node, the instance on
// HOST serves its wall clock on PORT and every other instance asks it for
// the time, NTP-style, in bursts: at the start, 1, 2, 4 ... 64 s later, then
// every 64 s, and at the end (clock_exchanger.h). Each exchange is four
// readings: t1 (the asking host sends), t2 (the server receives), t3 (the
// server answers), t4 (the answer arrives). The asking host's clock is
// ahead of the server's by
//   offset = ((t1 - t2) + (t4 - t3)) / 2,
// give or take half the round trip, delay = (t4 - t1) - (t3 - t2): the
// network's asymmetry is all that can hide in it. The asking instance
// writes its exchanges into the trace directory, one file per instance,
// `clock-HOST-PID.iotap-clock` (0600), as text:
//
//   iotap-clock 1
//   host node07
//   reference node01
//   x 1700000000000000000 1699999999950000000 1699999999950001000 1700000000000080000
//
// ReadClockExchanges reads such a file; ExchangeAnchors picks the exchanges
// worth fitting: in each burst, those whose round trip is within 1.5 times
// the burst's fastest (a slow exchange was queued somewhere, on one side
// more than the other).
//
//   absl::StatusOr<ClockExchangeFile> f = ReadClockExchanges(path);
//   ExchangeAnchors a = PickExchangeAnchors(f->exchanges);
//   ClockFit fit = FitClockLine(a.anchors, from_ns, to_ns);

#ifndef IOTAP_ANALYZER_CLOCKS_CLOCK_EXCHANGES_H_
#define IOTAP_ANALYZER_CLOCKS_CLOCK_EXCHANGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/clocks/clock_fit.h"

namespace iotap::analyzer {

inline constexpr char kClockExchangeSuffix[] = ".iotap-clock";
inline constexpr char kClockExchangeMagic[] = "iotap-clock 1";

struct ClockExchange {
  int64_t t1 = 0;  // asked, on the asking host's clock
  int64_t t2 = 0;  // received, on the server's clock
  int64_t t3 = 0;  // answered, on the server's clock
  int64_t t4 = 0;  // answer received, on the asking host's clock

  // The asking host's clock minus the server's (ns), and the round trip.
  double Offset() const;
  int64_t Delay() const { return (t4 - t1) - (t3 - t2); }
};

struct ClockExchangeFile {
  std::string path;
  std::string host;       // the asking host (as its traces name it)
  std::string reference;  // the serving host
  std::vector<ClockExchange> exchanges;
  int bad_lines = 0;      // lines that were not exchanges (skipped)
};

// Reads one exchange file. An error names the file and what is wrong; a
// file cut short by a crash keeps its complete lines.
absl::StatusOr<ClockExchangeFile> ReadClockExchanges(const std::string& path);

// One line of the file, "x T1 T2 T3 T4\n".
std::string ClockExchangeLine(const ClockExchange& x);

struct ExchangeAnchors {
  std::vector<ClockAnchor> anchors;  // at the exchange's middle on the asking host's clock
  int exchanges = 0;                 // exchanges read (before picking)
  int bursts = 0;
  double best_delay_ns = 0;          // the fastest round trip
  double median_delay_ns = 0;        // of the anchors picked
};

// The anchors worth fitting (above). Exchanges with a negative delay or
// times out of order are dropped.
ExchangeAnchors PickExchangeAnchors(const std::vector<ClockExchange>& exchanges);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_CLOCKS_CLOCK_EXCHANGES_H_
