#include "analyzer/base/numbers.h"

#include <algorithm>

namespace iotap::analyzer {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  double m = values[mid];
  // Even count: the lower middle is the largest value before `mid`.
  if (values.size() % 2 == 0) m = (*std::max_element(values.begin(), values.begin() + mid) + m) / 2;
  return m;
}

}  // namespace iotap::analyzer
