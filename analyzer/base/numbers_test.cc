#include "analyzer/base/numbers.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(MedianTest, MiddleValueOrMeanOfTheMiddleTwo) {
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({7}), 7);
  EXPECT_EQ(Median({5, 1, 3}), 3);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(Median({0.3, 0.1, 0.2, 0.4, 10, -1}), (0.2 + 0.3) / 2);
  EXPECT_EQ(Median({2, 2, 2, 9}), 2);
}

TEST(SecondsTest, NanosecondsToSeconds) {
  EXPECT_EQ(Seconds(1'500'000), 0.0015);
  EXPECT_EQ(Seconds(-2'000'000'000), -2);
  EXPECT_EQ(Seconds(int64_t{123456789}), 123456789 / 1e9);
  static_assert(Seconds(3e9) == 3);
}

TEST(RatioTest, ZeroWhenThereIsNothingToDivideBy) {
  EXPECT_EQ(Ratio(3, 4), 0.75);
  EXPECT_EQ(Ratio(3, 0), 0);
  EXPECT_EQ(Ratio(3, -1), 0);
  EXPECT_EQ(Ratio(0, 0), 0);
  EXPECT_EQ(Ratio(1, std::numeric_limits<double>::infinity()), 0);
  static_assert(Ratio(1, 8) == 0.125);
}

}  // namespace
}  // namespace iotap::analyzer
