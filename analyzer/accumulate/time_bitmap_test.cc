#include "analyzer/accumulate/time_bitmap.h"

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(TimeBitmapTest, UnionAndWindowCountsAtMicrosecondResolution) {
  TimeBitmap b(1'000'000'000, 1000);
  b.Set(1'000'010'000, 1'000'020'000);  // 10 us
  b.Set(1'000'015'000, 1'000'030'000);  // overlaps: union 20 us
  b.Set(1'000'100'000, 1'000'101'000);  // 1 us
  EXPECT_EQ(b.Total(), 21'000);
  EXPECT_EQ(b.Count(1'000'000'000, 1'000'025'000), 15'000);
  EXPECT_EQ(b.Count(1'000'025'000, 1'000'200'000), 6'000);
  EXPECT_EQ(b.Count(1'000'200'000, 1'000'300'000), 0);
}

TEST(TimeBitmapTest, IntervalsRoundOutwardToWholeSlots) {
  TimeBitmap b(0, 1000);
  b.Set(1500, 2500);  // touches slots 1 and 2
  EXPECT_EQ(b.Total(), 2000);
  b.Set(5000, 5001);
  EXPECT_EQ(b.Count(5000, 6000), 1000);
}

TEST(TimeBitmapTest, SpansChunkBoundariesAndIntersects) {
  TimeBitmap a(0, 1), b(0, 1);
  a.Set(65530, 65546);  // across the first chunk boundary (65,536 slots)
  b.Set(65540, 70000);
  EXPECT_EQ(a.Total(), 16);
  EXPECT_EQ(a.CountBoth(b, 0, 100000), 6);
  a.Or(b);
  EXPECT_EQ(a.Total(), 70000 - 65530);
}

// A damaged trace's times can lie centuries away: they take no memory, and
// counting up to them costs no more than the bits actually set.
TEST(TimeBitmapTest, TimesFarPastAnyRunAreLeftOut) {
  TimeBitmap b(0, 1000);
  b.Set(2000, 3000);
  b.Set(int64_t{1} << 60, (int64_t{1} << 60) + 1000);  // slot 2^50
  b.Set(5000, int64_t{1} << 62);                       // from slot 5 to far away
  EXPECT_LE(b.memory_bytes(), size_t{300} << 20);
  EXPECT_EQ(b.Count(0, 6000), 2000);
  EXPECT_EQ(b.Count(0, INT64_MAX), b.Total());
  EXPECT_EQ(b.Count(int64_t{1} << 60, INT64_MAX), 0);
}

TEST(TimeBitmapTest, LastBusyEndIsTheEndOfTheWindowsLastSetSlot) {
  TimeBitmap b(0, 1000);
  b.Set(5000, 8000);                // slots 5-7
  b.Set(70'000'000, 70'002'000);    // slots 70000-70001, in the second chunk
  EXPECT_EQ(b.LastBusyEnd(0, 100'000'000), 70'002'000);
  EXPECT_EQ(b.LastBusyEnd(0, 70'001'500), 70'001'500);  // no later than the window
  EXPECT_EQ(b.LastBusyEnd(0, 60'000'000), 8000);
  EXPECT_EQ(b.LastBusyEnd(6000, 7000), 7000);
  EXPECT_EQ(b.LastBusyEnd(8000, 60'000'000), -1);
  EXPECT_EQ(b.LastBusyEnd(0, 5000), -1);
  EXPECT_EQ(b.LastBusyEnd(200'000'000, 300'000'000), -1);  // past every chunk
}

TEST(TimeBitmapTest, ResolutionCoarsensOnlyForLongRuns) {
  EXPECT_EQ(ChooseResolution(int64_t{600} * 1'000'000'000), 1000);
  EXPECT_EQ(ChooseResolution(int64_t{3600} * 1'000'000'000), 2000);
  EXPECT_EQ(ChooseResolution(int64_t{36000} * 1'000'000'000), 32000);
}

TEST(TimeSpansTest, NeighboursLessThanASlotApartSetTheSameSlots) {
  // 1 us slots from 0. [100, 900) and [1500, 1700) leave a gap of 600 ns,
  // shorter than a slot, so slots 0 and 1 are set either way; the gap of
  // [1700, 3100) holds the whole slot 2, which stays clear.
  TimeSpans spans(0, 1000);
  spans.Add(100, 900);
  spans.Add(1500, 1700);
  spans.Add(3100, 3200);
  spans.Add(3150, 3180);  // inside the last: joined, sets nothing new
  TimeBitmap bitmap(0, 1000);
  spans.SetInto(&bitmap);
  EXPECT_EQ(bitmap.Total(), 3000);
  EXPECT_EQ(bitmap.Count(2000, 3000), 0);
  EXPECT_EQ(bitmap.Count(3000, 4000), 1000);
}

}  // namespace
}  // namespace iotap::analyzer
