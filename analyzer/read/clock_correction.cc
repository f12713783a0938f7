#include "analyzer/read/clock_correction.h"

#include <cmath>

namespace iotap::analyzer {

int64_t ClockCorrection::Apply(int64_t host_ns) const {
  // A double holds a correction of up to hours to a small fraction of a
  // nanosecond; the time itself stays an exact integer.
  return host_ns - std::llround(OffsetAt(host_ns));
}

}  // namespace iotap::analyzer
