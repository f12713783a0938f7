// How the ranks of a run shared among processes divide the work: which
// rank reads which trace file, and which rank each merges its partial into.
//
//   std::vector<int> owner = ShareBySize(sizes, ranks);  // owner[i]: file i's rank
//   ReductionStep step = ReductionOf(rank, ranks);
//   for (int child : step.children) ... merge child's partial ...
//   if (step.parent >= 0) ... send ours to step.parent ...

#ifndef IOTAP_ANALYZER_CLUSTER_SHARES_H_
#define IOTAP_ANALYZER_CLUSTER_SHARES_H_

#include <cstdint>
#include <vector>

namespace iotap::analyzer::cluster {

// Files of `sizes` (bytes) dealt to `ranks` ranks by size, not count: the
// largest first, each to the rank with the fewest bytes so far (the lowest
// rank on ties). Every rank given the same sizes deals the same way; no
// rank's share passes the fair share by more than the largest file.
std::vector<int> ShareBySize(const std::vector<uint64_t>& sizes, int ranks);

// As ShareBySize, but the files of one group (equal group[i] >= 0: a
// trainer and its loaders) go to one rank together, dealt by their summed
// size; a file of group -1 goes alone. A rank then holds the busy-time
// bitmaps and series of its own groups only, not a piece of every group's.
std::vector<int> ShareGroupsBySize(const std::vector<uint64_t>& sizes,
                                   const std::vector<int>& group, int ranks);

// The indices of the files `owner` gives to `rank`, in order.
std::vector<int> ShareOf(const std::vector<int>& owner, int rank);

// A binomial reduction tree over ranks 0..ranks-1: `rank` merges its
// children's partials in the order listed, then sends the result to its
// parent (-1 for rank 0, which ends with everything). Depth: ceil(log2
// ranks) merges on the way to rank 0.
struct ReductionStep {
  std::vector<int> children;
  int parent = -1;
};
ReductionStep ReductionOf(int rank, int ranks);

}  // namespace iotap::analyzer::cluster

#endif  // IOTAP_ANALYZER_CLUSTER_SHARES_H_
