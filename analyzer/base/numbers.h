// The small arithmetic of figures that every stage shares, written once:
//
//   Median({0.25, 0.5, 0.125});   // 0.25
//   Seconds(1'500'000);           // 0.0015: nanoseconds to seconds
//   Ratio(3, 0);                  // 0: a share or a mean of nothing
//
// Ratio is for shares and means whose denominator is a count or a duration,
// never negative: where there is nothing to divide by, the figure is 0.

#ifndef IOTAP_ANALYZER_BASE_NUMBERS_H_
#define IOTAP_ANALYZER_BASE_NUMBERS_H_

#include <vector>

namespace iotap::analyzer {

// The middle value of `values`, or the mean of the middle two for an even
// count; 0 for none.
double Median(std::vector<double> values);

// `ns` nanoseconds in seconds.
constexpr double Seconds(double ns) { return ns / 1e9; }

// `num` / `den`, or 0 when `den` is not positive.
constexpr double Ratio(double num, double den) { return den > 0 ? num / den : 0; }

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_BASE_NUMBERS_H_
