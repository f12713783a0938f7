#include "analyzer/cluster/shares.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>
#include <utility>

namespace iotap::analyzer::cluster {

std::vector<int> ShareBySize(const std::vector<uint64_t>& sizes, int ranks) {
  std::vector<int> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return sizes[a] > sizes[b]; });
  // (bytes so far, rank), least first.
  using Load = std::pair<uint64_t, int>;
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> loads;
  for (int r = 0; r < std::max(1, ranks); ++r) loads.push({0, r});
  std::vector<int> owner(sizes.size(), 0);
  for (int i : order) {
    Load least = loads.top();
    loads.pop();
    owner[i] = least.second;
    // Empty files still cost an open and a header: count each as a byte.
    least.first += std::max<uint64_t>(sizes[i], 1);
    loads.push(least);
  }
  return owner;
}

std::vector<int> ShareGroupsBySize(const std::vector<uint64_t>& sizes,
                                   const std::vector<int>& group, int ranks) {
  // Units: each group, in the order its first file comes, and each file of
  // no group.
  std::vector<int> unit(sizes.size());
  std::vector<uint64_t> unit_sizes;
  std::map<int, int> unit_of_group;
  for (size_t i = 0; i < sizes.size(); ++i) {
    int g = group[i];
    if (g < 0 || !unit_of_group.count(g)) {
      if (g >= 0) unit_of_group[g] = static_cast<int>(unit_sizes.size());
      unit[i] = static_cast<int>(unit_sizes.size());
      unit_sizes.push_back(0);
    } else {
      unit[i] = unit_of_group[g];
    }
    // Empty files still cost an open and a header: count each as a byte.
    unit_sizes[unit[i]] += std::max<uint64_t>(sizes[i], 1);
  }
  std::vector<int> unit_owner = ShareBySize(unit_sizes, ranks);
  std::vector<int> owner(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) owner[i] = unit_owner[unit[i]];
  return owner;
}

std::vector<int> ShareOf(const std::vector<int>& owner, int rank) {
  std::vector<int> share;
  for (size_t i = 0; i < owner.size(); ++i) {
    if (owner[i] == rank) share.push_back(static_cast<int>(i));
  }
  return share;
}

ReductionStep ReductionOf(int rank, int ranks) {
  ReductionStep step;
  for (int bit = 1; bit < ranks; bit <<= 1) {
    if (rank & bit) {
      step.parent = rank - bit;
      break;
    }
    if (rank + bit < ranks) step.children.push_back(rank + bit);
  }
  return step;
}

}  // namespace iotap::analyzer::cluster
