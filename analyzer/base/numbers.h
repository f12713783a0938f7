// The small arithmetic of figures that every stage shares, written once:
//
//   Median({0.25, 0.5, 0.125});   // 0.25
//   Seconds(1'500'000);           // 0.0015: nanoseconds to seconds
//   Ratio(3, 0);                  // 0: a share or a mean of nothing
//   AddTo(&read_ns, e.duration_ns());   // stops at INT64_MAX
//
// Ratio is for shares and means whose denominator is a count or a duration,
// never negative: where there is nothing to divide by, the figure is 0.
//
// AddTo is for every sum of values read from a trace. Each event's duration,
// offset and size is bounded where it is decoded, but a damaged or crafted
// trace can hold enough of them for a sum (a file's read time, a layer's
// bytes) to pass the largest value of its type: signed overflow would be
// undefined, unsigned would wrap to a small, wrong figure. The sum stops at
// the type's largest (or smallest) value instead, which no real trace
// reaches.

#ifndef IOTAP_ANALYZER_BASE_NUMBERS_H_
#define IOTAP_ANALYZER_BASE_NUMBERS_H_

#include <limits>
#include <type_traits>
#include <vector>

namespace iotap::analyzer {

// The middle value of `values`, or the mean of the middle two for an even
// count; 0 for none.
double Median(std::vector<double> values);

// `ns` nanoseconds in seconds.
constexpr double Seconds(double ns) { return ns / 1e9; }

// `num` / `den`, or 0 when `den` is not positive.
constexpr double Ratio(double num, double den) { return den > 0 ? num / den : 0; }

// a + b, saturating at the type's limits rather than overflowing.
template <typename T>
constexpr T SaturatingAdd(T a, T b) {
  static_assert(std::is_integral_v<T>);
  T sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b < 0 ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
}

// *sum += value, saturating (SaturatingAdd). `value` converts to the sum's
// type first, as with +=; a negative value into an unsigned sum is a caller's
// bug, not a trace's.
template <typename T, typename V>
constexpr void AddTo(T* sum, V value) {
  *sum = SaturatingAdd(*sum, static_cast<T>(value));
}

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_BASE_NUMBERS_H_
