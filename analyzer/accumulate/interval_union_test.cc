#include "analyzer/accumulate/interval_union.h"

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(IntervalUnionTest, OverlapsAndGapsAreCountedOnce) {
  std::vector<std::pair<int64_t, int64_t>> emitted;
  IntervalUnion u(1000000, [&](int64_t s, int64_t e) { emitted.push_back({s, e}); });
  u.Add(100, 250);
  u.Add(200, 300);  // overlaps the first
  u.Add(300, 350);  // touches: merged
  u.Add(400, 500);  // a gap
  u.Add(50, 60);    // earlier, disjoint
  u.Add(0, 0);      // empty: ignored
  u.Finish();
  EXPECT_EQ(u.total_ns(), 10 + 250 + 100);
  EXPECT_EQ(emitted, (std::vector<std::pair<int64_t, int64_t>>{{50, 60}, {100, 350}, {400, 500}}));
  EXPECT_EQ(u.late_clipped_ns(), 0);
}

TEST(IntervalUnionTest, NestedCallRecordedAfterItsChildren) {
  // An H5Dread [0, 1000) ends after the preads it made, which come first.
  IntervalUnion u(1000000);
  u.Add(100, 200);
  u.Add(300, 400);
  u.Add(0, 1000);
  u.Finish();
  EXPECT_EQ(u.total_ns(), 1000);
}

TEST(IntervalUnionTest, SegmentsOlderThanTheHorizonAreHandedOnAndLateCallsClipped) {
  std::vector<std::pair<int64_t, int64_t>> emitted;
  IntervalUnion u(100, [&](int64_t s, int64_t e) { emitted.push_back({s, e}); });
  u.Add(0, 10);
  u.Add(500, 510);  // [0,10) ends more than 100 before 510: emitted
  ASSERT_EQ(emitted.size(), 1u);
  EXPECT_EQ(u.pending_segments(), 1u);
  u.Add(5, 520);    // a call that outlasted the horizon: clipped at 10
  u.Finish();
  EXPECT_EQ(u.late_clipped_ns(), 5);
  EXPECT_EQ(u.total_ns(), 10 + (520 - 10));
}

TEST(IntervalUnionTest, MatchesBruteForceOnRandomThreads) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 50; ++round) {
    // Four threads of back-to-back calls with random gaps, merged by end time
    // as a trace file presents them.
    std::vector<std::pair<int64_t, int64_t>> all;
    for (int t = 0; t < 4; ++t) {
      int64_t now = static_cast<int64_t>(rng() % 1000);
      for (int i = 0; i < 200; ++i) {
        int64_t d = 1 + static_cast<int64_t>(rng() % 50);
        all.push_back({now, now + d});
        now += d + static_cast<int64_t>(rng() % 60);
      }
    }
    std::sort(all.begin(), all.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
    std::vector<bool> busy(20000, false);
    for (const auto& [s, e] : all) {
      for (int64_t k = s; k < e; ++k) busy[k] = true;
    }
    int64_t truth = std::count(busy.begin(), busy.end(), true);
    IntervalUnion u(100);  // longer than any call: exact
    for (const auto& [s, e] : all) u.Add(s, e);
    u.Finish();
    ASSERT_EQ(u.total_ns(), truth) << "round " << round;
    ASSERT_EQ(u.late_clipped_ns(), 0);
  }
}

}  // namespace
}  // namespace iotap::analyzer
