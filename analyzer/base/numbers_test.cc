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

TEST(SaturatingAddTest, StopsAtTheTypesLimits) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(SaturatingAdd<int64_t>(2, 3), 5);
  EXPECT_EQ(SaturatingAdd<int64_t>(kMax - 1, 1), kMax);
  EXPECT_EQ(SaturatingAdd<int64_t>(kMax - 1, 2), kMax);
  EXPECT_EQ(SaturatingAdd<int64_t>(kMax, kMax), kMax);
  EXPECT_EQ(SaturatingAdd<int64_t>(kMin, -1), kMin);
  EXPECT_EQ(SaturatingAdd<int64_t>(kMax, -1), kMax - 1);
  EXPECT_EQ(SaturatingAdd<uint64_t>(UINT64_MAX - 5, 5), UINT64_MAX);
  EXPECT_EQ(SaturatingAdd<uint64_t>(UINT64_MAX - 5, 6), UINT64_MAX);
  EXPECT_EQ(SaturatingAdd<uint32_t>(UINT32_MAX, 1), UINT32_MAX);
  static_assert(SaturatingAdd<int64_t>(kMax, 1) == kMax);
}

TEST(SaturatingAddTest, AddToSumsManyHostileValues) {
  // A crafted trace's read times: each within the decoder's bound, their
  // sum far past INT64_MAX.
  int64_t read_ns = 0;
  uint64_t bytes = 0;
  for (int i = 0; i < 1000; ++i) {
    AddTo(&read_ns, int64_t{1} << 62);
    AddTo(&bytes, uint64_t{1} << 63);
  }
  EXPECT_EQ(read_ns, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(bytes, UINT64_MAX);
  int64_t small = 40;
  AddTo(&small, 2);
  EXPECT_EQ(small, 42);
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
