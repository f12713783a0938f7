#include "analyzer/cluster/shares.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::analyzer::cluster {
namespace {

TEST(SharesTest, FilesAreDealtBySizeNotCount) {
  // One big file and six small ones: the big one's rank gets nothing else.
  std::vector<uint64_t> sizes = {600, 100, 100, 100, 100, 100, 100};
  std::vector<int> owner = ShareBySize(sizes, 2);
  EXPECT_EQ(owner, (std::vector<int>{0, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(ShareOf(owner, 0), std::vector<int>{0});
  EXPECT_EQ(ShareOf(owner, 1), (std::vector<int>{1, 2, 3, 4, 5, 6}));
}

TEST(SharesTest, EqualSizesGoRoundTheRanksInFileOrder) {
  std::vector<int> owner = ShareBySize({5, 5, 5, 5, 5}, 3);
  EXPECT_EQ(owner, (std::vector<int>{0, 1, 2, 0, 1}));
}

TEST(SharesTest, MoreRanksThanFilesLeaveSomeWithout) {
  std::vector<int> owner = ShareBySize({0, 7}, 8);
  EXPECT_EQ(owner, (std::vector<int>{1, 0}));
  EXPECT_TRUE(ShareOf(owner, 5).empty());
}

TEST(SharesTest, AGroupStaysOnOneRank) {
  // Group 7: files 0, 2, 3 (300 bytes); group 9: file 1 and 5 (250); file 4
  // alone (200).
  std::vector<uint64_t> sizes = {100, 150, 100, 100, 200, 100};
  std::vector<int> group = {7, 9, 7, 7, -1, 9};
  std::vector<int> owner = ShareGroupsBySize(sizes, group, 2);
  EXPECT_EQ(owner, (std::vector<int>{0, 1, 0, 0, 1, 1}));
  // One rank: everything on it.
  EXPECT_EQ(ShareGroupsBySize(sizes, group, 1), (std::vector<int>(6, 0)));
}

TEST(SharesTest, BinomialTreeReachesRankZeroInLogSteps) {
  EXPECT_EQ(ReductionOf(0, 8).children, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(ReductionOf(0, 8).parent, -1);
  EXPECT_EQ(ReductionOf(4, 8).children, (std::vector<int>{5, 6}));
  EXPECT_EQ(ReductionOf(4, 8).parent, 0);
  EXPECT_EQ(ReductionOf(6, 8).children, std::vector<int>{7});
  EXPECT_EQ(ReductionOf(6, 8).parent, 4);
  EXPECT_EQ(ReductionOf(7, 8).parent, 6);
  EXPECT_EQ(ReductionOf(2, 3).children, std::vector<int>{});
  EXPECT_EQ(ReductionOf(2, 3).parent, 0);
  EXPECT_TRUE(ReductionOf(0, 1).children.empty());
  // Every rank but 0 sends exactly once, to a lower rank that lists it.
  for (int n : {1, 2, 3, 5, 8, 13, 64}) {
    for (int r = 1; r < n; ++r) {
      int parent = ReductionOf(r, n).parent;
      ASSERT_GE(parent, 0);
      ASSERT_LT(parent, r);
      std::vector<int> siblings = ReductionOf(parent, n).children;
      EXPECT_EQ(std::count(siblings.begin(), siblings.end(), r), 1) << n << " " << r;
    }
  }
}

}  // namespace
}  // namespace iotap::analyzer::cluster
