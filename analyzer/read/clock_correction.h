// A host's wall clock put on the run's reference clock.
//
// The processes of one host share its clock; across hosts, clocks differ by
// an offset that changes slowly (drift). The analysis fits, per host, a line
// through moments both hosts saw (clocks/clock_alignment.h) and the reader
// applies it to every wall-clock time it gives out for that host's processes
// (ProcessTrace::ToRealtimeNs), so that every figure built from those times
// is on one clock:
//
//   HostClockCorrections clocks;
//   clocks["node1"] = ClockCorrection{/*at_ns=*/t0, /*offset_ns=*/50e6, /*drift=*/12e-6};
//   int64_t on_reference = clocks["node1"].Apply(node1_wall_clock_ns);
//   ReadTraceFile(path, &visitor, &issues, &clocks);  // every time of node1's processes
//
// A host without an entry keeps its own clock.

#ifndef IOTAP_ANALYZER_READ_CLOCK_CORRECTION_H_
#define IOTAP_ANALYZER_READ_CLOCK_CORRECTION_H_

#include <cstdint>
#include <map>
#include <string>

namespace iotap::analyzer {

// host time - reference time = offset_ns + drift * (host time - at_ns).
struct ClockCorrection {
  int64_t at_ns = 0;     // a wall-clock time of the host, where offset_ns holds
  double offset_ns = 0;  // how far the host's clock is ahead of the reference's there
  double drift = 0;      // how fast that grows: ns per ns (1e-6 is 1 ppm)

  // How far the host's clock is ahead of the reference's at `host_ns`.
  double OffsetAt(int64_t host_ns) const {
    return offset_ns + drift * static_cast<double>(host_ns - at_ns);
  }
  // `host_ns`, a wall-clock time read on the host, on the reference clock.
  int64_t Apply(int64_t host_ns) const;
};

// By host name (ProcessHeader::hostname).
using HostClockCorrections = std::map<std::string, ClockCorrection>;

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_READ_CLOCK_CORRECTION_H_
