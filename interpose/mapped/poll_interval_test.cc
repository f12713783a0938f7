#include "interpose/mapped/poll_interval.h"

#include <vector>

#include "gtest/gtest.h"

namespace iotap::interpose::faults {
namespace {

constexpr uint64_t kMs = 1'000'000;

DrainLoad Found(uint64_t elapsed_ns, double fullest) {
  return DrainLoad{.elapsed_ns = elapsed_ns, .fullest = fullest, .looks_cap = 64,
                   .queries_cap = 32};
}

TEST(PollIntervalTest, TheHeaderExample) {
  DrainLoad load{.elapsed_ns = 8'000'000, .fullest = 0.5};  // half full in 8 ms
  EXPECT_EQ(NextPollNs(8'000'000, load, /*starting=*/false), 4'000'000u);
}

// Calm drains double the interval up to the cap: 1, 2, 4 ... 16, 25 ms, and
// to 4 ms only while the events are new.
TEST(PollIntervalTest, CalmDrainsBackOffToTheCap) {
  uint64_t poll = kFastPollNs;
  std::vector<uint64_t> seen;
  for (int i = 0; i < 8; ++i) {
    poll = NextPollNs(poll, Found(poll, 0.001), false);
    seen.push_back(poll / kMs);
  }
  EXPECT_EQ(seen, (std::vector<uint64_t>{2, 4, 8, 16, 25, 25, 25, 25}));
  poll = kFastPollNs;
  for (int i = 0; i < 5; ++i) poll = NextPollNs(poll, Found(poll, 0), true);
  EXPECT_EQ(poll, kStartMaxPollNs);
}

// A buffer found a quarter full keeps the interval at which it filled; half
// full halves it; the floor is the fast poll.
TEST(PollIntervalTest, TheRateSeenKeepsBuffersUnderAQuarter) {
  EXPECT_EQ(NextPollNs(20 * kMs, Found(20 * kMs, 0.25), false), 20 * kMs);
  EXPECT_EQ(NextPollNs(20 * kMs, Found(20 * kMs, 0.5), false), 10 * kMs);
  EXPECT_EQ(NextPollNs(20 * kMs, Found(20 * kMs, 1.0), false), 5 * kMs);
  EXPECT_EQ(NextPollNs(2 * kMs, Found(2 * kMs, 1.0), false), kFastPollNs);
  // A drain that came early (the writer woken for another reason) measures
  // the rate over its own elapsed time.
  EXPECT_EQ(NextPollNs(40 * kMs, Found(5 * kMs, 0.125), false), 10 * kMs);
}

TEST(PollIntervalTest, LostSamplesAndANewThreadPollFast) {
  DrainLoad load = Found(50 * kMs, 0);
  load.lost = true;
  EXPECT_EQ(NextPollNs(25 * kMs, load, false), kFastPollNs);
  load.lost = false;
  load.new_thread = true;
  EXPECT_EQ(NextPollNs(25 * kMs, load, false), kFastPollNs);
}

// Half of a drain's looks in /proc/self/pagemap, or of its questions about
// mappings, is the target: beyond it faults would go unmeasured or unplaced.
TEST(PollIntervalTest, LooksAndQuestionsStayUnderHalfTheirCaps) {
  DrainLoad load = Found(40 * kMs, 0.01);
  load.looks = 64;
  EXPECT_EQ(NextPollNs(40 * kMs, load, false), 20 * kMs);
  load.looks = 16;
  EXPECT_EQ(NextPollNs(40 * kMs, load, false), kMaxPollNs);
  load.looks = 0;
  load.queries = 32;
  EXPECT_EQ(NextPollNs(40 * kMs, load, false), 20 * kMs);
}

}  // namespace
}  // namespace iotap::interpose::faults
