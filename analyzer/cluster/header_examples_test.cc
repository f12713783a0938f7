// The usage examples in this folder's headers, compiled and run (see
// analysis/header_examples_test.cc). mpi_run.h's needs mpirun:
// tests/integration/cluster_test.cc runs it.

#include <vector>

#include "analyzer/cluster/shares.h"
#include "gtest/gtest.h"

namespace iotap::analyzer::cluster {
namespace {

TEST(HeaderExamplesTest, Shares) {
  const std::vector<uint64_t> sizes = {10, 30, 20};
  const int ranks = 2, rank = 0;
  // shares.h
  std::vector<int> owner = ShareBySize(sizes, ranks);  // owner[i]: file i's rank
  ReductionStep step = ReductionOf(rank, ranks);
  EXPECT_EQ(owner, (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(step.children, std::vector<int>{1});
  EXPECT_EQ(step.parent, -1);
}

}  // namespace
}  // namespace iotap::analyzer::cluster
