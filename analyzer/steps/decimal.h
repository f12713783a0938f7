// Exact decimal arithmetic on number text, for times that a double cannot
// hold to the nanosecond: epoch microseconds with three decimals
// (1682725898079292.125) or epoch seconds with nine.
//
//   std::optional<int64_t> ns = ScaleDecimal("1212075529876.817", 3);  // us -> ns
//   // *ns == 1212075529876817

#ifndef IOTAP_ANALYZER_STEPS_DECIMAL_H_
#define IOTAP_ANALYZER_STEPS_DECIMAL_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace iotap::analyzer {

// The number written in `text` (JSON number syntax: sign, digits, fraction,
// exponent) times 10^`scale`, rounded to the nearest integer, halves to even.
// nullopt if `text` is not such a number (NaN, Infinity, "", "1.") or the
// result does not fit in an int64.
std::optional<int64_t> ScaleDecimal(std::string_view text, int scale);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_STEPS_DECIMAL_H_
