#include "analyzer/accumulate/time_bitmap.h"

#include <cstdint>
#include <utility>
#include <vector>

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

// splitmix64, for intervals that are the same on every run of the test.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Busy intervals of a loader-like process: a few us to a ms long, 0.1 to
// 3 ms apart, over ~0.4 s (6 chunks of 1 us slots), from an origin off the
// slot grid.
void SetLoaderLike(TimeBitmap* b, uint64_t seed, int64_t gap_ns = 3'000'000) {
  int64_t t = 1'000'000'123;
  for (uint64_t i = 0; t < 1'400'000'000; ++i) {
    uint64_t r = Mix(seed * 1'000'003 + i);
    int64_t length = 2'000 + static_cast<int64_t>(r % 1'000'000);
    b->Set(t, t + length);
    t += length + 100'000 + static_cast<int64_t>((r >> 24) % static_cast<uint64_t>(gap_ns));
  }
}

// Every slot of `a` and `b` alike (same origin and resolution).
void ExpectSameSlots(const TimeBitmap& a, const TimeBitmap& b) {
  ASSERT_EQ(a.chunk_count(), b.chunk_count());
  for (size_t k = 0; k < a.chunk_count(); ++k) {
    ASSERT_EQ(a.chunk(k) == nullptr, b.chunk(k) == nullptr) << "chunk " << k;
    if (a.chunk(k) == nullptr) continue;
    for (size_t w = 0; w < TimeBitmap::kChunkWords; ++w) {
      ASSERT_EQ(a.chunk(k)[w], b.chunk(k)[w]) << "chunk " << k << " word " << w;
    }
  }
}

TEST(TimeBitmapTest, SetAllSetsWhatEachSetWould) {
  // Loader-like intervals over ~3 s (46 chunks), then the odd ones: out of
  // order, across chunks, before the origin, empty, inverted, and past the
  // longest run; SetAll takes a fast path for intervals inside one chunk.
  const int64_t origin = 1'000'000'000;
  std::vector<std::pair<int64_t, int64_t>> intervals;
  int64_t t = origin + 777;
  for (uint64_t i = 0; t < origin + 3'000'000'000; ++i) {
    uint64_t r = Mix(i);
    int64_t length = 500 + static_cast<int64_t>(r % 200'000);
    intervals.push_back({t, t + length});
    t += length + 2'000 + static_cast<int64_t>((r >> 24) % 3'000'000);
  }
  intervals.push_back({origin + 100'000'000, origin + 100'004'500});
  intervals.push_back({origin + 65'535'500, origin + 65'537'000});  // chunks 0 and 1
  intervals.push_back({origin + 2'900'000'000, origin + 3'600'000'000});
  intervals.push_back({origin - 5'000, origin + 2'500});
  intervals.push_back({origin + 7'000, origin + 7'000});
  intervals.push_back({origin + 9'000, origin + 8'000});
  intervals.push_back({origin + (int64_t{1} << 50), origin + (int64_t{1} << 50) + 5'000});
  TimeBitmap one_by_one(origin, 1000), all(origin, 1000);
  for (const auto& [start, end] : intervals) one_by_one.Set(start, end);
  all.SetAll(intervals);
  EXPECT_GT(one_by_one.Total(), 0);
  EXPECT_EQ(all.Total(), one_by_one.Total());
  ExpectSameSlots(all, one_by_one);
}

TEST(TimeSpansTest, SetIntoSetsWhatTheAddsCoverAlsoOnceSpilled) {
  // Past kMaxIntervals (2^18) intervals the first ones spill into a bitmap.
  const int64_t origin = 1'000'000'000;
  TimeSpans spans(origin, 1000);
  TimeBitmap expected(origin, 1000);
  for (int64_t i = 0; i < 300'000; ++i) {
    spans.Add(origin + i * 9'000, origin + i * 9'000 + 10);
    expected.Set(origin + i * 9'000, origin + i * 9'000 + 10);
  }
  TimeBitmap into(origin, 1000);
  spans.SetInto(&into);
  EXPECT_EQ(into.Total(), 300'000 * 1000);
  ExpectSameSlots(into, expected);
}

TEST(TimeBitmapRunsTest, CompactKeepsAFewRunsAsRunsOfTheUnion) {
  TimeBitmap b(0, 1);
  b.Set(10, 20);
  b.Set(15, 30);   // overlaps the one before: one run 10..29
  b.Set(30, 32);   // touches it: still one run, 10..31
  b.Set(100, 101);
  b.Set(65'530, 65'546);  // across the chunk boundary
  b.Compact();
  ASSERT_EQ(b.chunk(0), nullptr);
  ASSERT_NE(b.chunk_runs(0), nullptr);
  EXPECT_EQ(*b.chunk_runs(0), (std::vector<uint32_t>{TimeBitmap::RunOf(10, 31),
                                                      TimeBitmap::RunOf(100, 100),
                                                      TimeBitmap::RunOf(65'530, 65'535)}));
  ASSERT_NE(b.chunk_runs(1), nullptr);
  EXPECT_EQ(*b.chunk_runs(1), (std::vector<uint32_t>{TimeBitmap::RunOf(0, 9)}));
  EXPECT_EQ(b.Total(), 22 + 1 + 16);
  EXPECT_EQ(b.Count(0, 31), 21);
  EXPECT_EQ(b.Count(31, 65'540), 1 + 1 + 10);
  EXPECT_EQ(b.LastBusyEnd(0, 65'536), 65'536);
  EXPECT_EQ(b.LastBusyEnd(0, 65'000), 101);
  EXPECT_EQ(b.LastBusyEnd(32, 100), -1);
  EXPECT_EQ(b.LastBusyEnd(20, 25), 25);
  EXPECT_LT(b.memory_bytes(), size_t{200});
}

TEST(TimeBitmapRunsTest, EveryQueryAnswersAsTheWordsDo) {
  TimeBitmap words_a(1'000'000'000, 1000), words_b(1'000'000'000, 1000);
  SetLoaderLike(&words_a, 1);
  SetLoaderLike(&words_b, 2);
  TimeBitmap runs_a(1'000'000'000, 1000), runs_b(1'000'000'000, 1000);
  runs_a.Or(words_a);
  runs_b.Or(words_b);
  runs_a.Compact();
  runs_b.Compact();
  ASSERT_EQ(runs_a.chunk(0), nullptr);
  ASSERT_NE(runs_a.chunk_runs(0), nullptr);
  EXPECT_LT(runs_a.memory_bytes() * 8, words_a.memory_bytes());
  EXPECT_EQ(runs_a.Total(), words_a.Total());
  EXPECT_GT(runs_a.Total(), 50'000'000);
  // Windows of every length, on and off the slot grid, within chunks and
  // across them; each side as words or runs.
  for (uint64_t i = 0; i < 3000; ++i) {
    int64_t start = 999'000'000 + static_cast<int64_t>(Mix(i) % 420'000'000);
    int64_t end = start + static_cast<int64_t>(Mix(i + 7) % (i % 3 == 0 ? 200'000'000 : 300'000));
    ASSERT_EQ(runs_a.Count(start, end), words_a.Count(start, end)) << start << " " << end;
    ASSERT_EQ(runs_a.LastBusyEnd(start, end), words_a.LastBusyEnd(start, end)) << start;
    int64_t both = words_a.CountBoth(words_b, start, end);
    ASSERT_EQ(runs_a.CountBoth(runs_b, start, end), both) << start << " " << end;
    ASSERT_EQ(runs_a.CountBoth(words_b, start, end), both);
    ASSERT_EQ(words_a.CountBoth(runs_b, start, end), both);
  }
}

TEST(TimeBitmapRunsTest, OrOfRunsUnitesThemAndTooManyBecomeWords) {
  TimeBitmap a(0, 1), b(0, 1);
  a.Set(0, 5);
  a.Set(20, 30);
  b.Set(5, 10);   // joins a's first run
  b.Set(25, 40);  // overlaps a's second
  b.Set(50, 51);
  a.Compact();
  b.Compact();
  a.Or(b);
  ASSERT_NE(a.chunk_runs(0), nullptr);
  EXPECT_EQ(*a.chunk_runs(0), (std::vector<uint32_t>{TimeBitmap::RunOf(0, 9),
                                                      TimeBitmap::RunOf(20, 39),
                                                      TimeBitmap::RunOf(50, 50)}));
  EXPECT_EQ(a.Total(), 10 + 20 + 1);
  // Every other slot: 1,500 runs, more than kMaxRuns: the chunk stays words,
  // and runs OR-ed into it set its bits.
  TimeBitmap many(0, 1), odd(0, 1);
  for (int64_t slot = 0; slot < 3000; slot += 2) many.Set(slot, slot + 1);
  for (int64_t slot = 1; slot < 1001; slot += 2) odd.Set(slot, slot + 1);
  many.Compact();
  odd.Compact();
  ASSERT_NE(many.chunk(0), nullptr);
  ASSERT_NE(odd.chunk_runs(0), nullptr);
  EXPECT_EQ(odd.chunk_runs(0)->size(), 500u);
  odd.Or(many);  // 500 runs and 1,500 more: 1,000 of them joined into one
  EXPECT_EQ(odd.Total(), 1500 + 500);
  EXPECT_EQ(odd.Count(0, 1001), 1001);
  ASSERT_NE(odd.chunk(0), nullptr) << "words OR-ed into runs make words";
  many.Or(odd);
  EXPECT_EQ(many.Total(), 2000);
  // Runs OR-ed into runs: 600 and 600 more apart from them, past kMaxRuns.
  TimeBitmap x(0, 1), y(0, 1);
  for (int64_t slot = 0; slot < 2400; slot += 4) {
    x.Set(slot, slot + 1);
    y.Set(slot + 2, slot + 3);
  }
  x.Compact();
  y.Compact();
  ASSERT_NE(x.chunk_runs(0), nullptr);
  x.Or(y);
  EXPECT_EQ(x.chunk_runs(0), nullptr);
  ASSERT_NE(x.chunk(0), nullptr);
  EXPECT_EQ(x.Total(), 1200);
  EXPECT_EQ(x.Count(0, 4), 2);
}

TEST(TimeBitmapRunsTest, SetIntoRunsTurnsThemBackIntoWords) {
  TimeBitmap b(0, 1000);
  b.Set(5000, 8000);
  b.Compact();
  ASSERT_NE(b.chunk_runs(0), nullptr);
  b.Set(7000, 12'000);
  EXPECT_EQ(b.chunk_runs(0), nullptr);
  ASSERT_NE(b.chunk(0), nullptr);
  EXPECT_EQ(b.Total(), 7000);
  // Into a bitmap of another resolution: a run sets what its slots would.
  b.Compact();
  TimeBitmap coarse(0, 4000);
  b.SetInto(&coarse);
  EXPECT_EQ(coarse.Total(), 8000);  // [5000, 12000) touches [4000, 8000) and [8000, 12000)
  EXPECT_EQ(coarse.Count(0, 4000), 0);
}

}  // namespace
}  // namespace iotap::analyzer
