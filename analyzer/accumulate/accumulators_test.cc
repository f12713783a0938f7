#include "analyzer/accumulate/accumulators.h"

#include <algorithm>
#include <bit>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(ByteRangesTest, OneFileReadThroughIsOneRange) {
  ByteRanges r;
  r.Add(0, 4096);
  r.Add(4096, 65536);
  r.Add(69632, 1000);
  EXPECT_EQ(r.covered(), 70632u);
  r.Add(100, 200);  // read before
  EXPECT_EQ(r.covered(), 70632u);
  EXPECT_FALSE(r.approximate());
}

TEST(ByteRangesTest, RangesApartThenJoined) {
  ByteRanges r;
  r.Add(1000, 100);  // [1000, 1100)
  r.Add(0, 10);      // [0, 10): apart
  EXPECT_EQ(r.covered(), 110u);
  r.Add(1100, 50);   // extends the first: [1000, 1150)
  EXPECT_EQ(r.covered(), 160u);
  r.Add(5, 1000);    // [5, 1005) joins both: [0, 1150)
  EXPECT_EQ(r.covered(), 1150u);
  r.Add(2000, 0);    // nothing read
  EXPECT_EQ(r.covered(), 1150u);
}

TEST(ByteRangesTest, TouchingRangesMergeAndCopiesKeepTheirRanges) {
  ByteRanges r;
  r.Add(100, 100);  // [100, 200)
  r.Add(50, 50);    // [50, 100) touches it
  EXPECT_EQ(r.covered(), 150u);
  ByteRanges copy = r;
  copy.Add(150, 100);  // [50, 250)
  EXPECT_EQ(copy.covered(), 200u);
  EXPECT_EQ(r.covered(), 150u);
  ByteRanges moved = std::move(copy);
  moved.Add(300, 10);
  EXPECT_EQ(moved.covered(), 210u);
}

TEST(ByteRangesTest, MergeCountsBytesOnce) {
  ByteRanges a, b, c;
  a.Add(0, 100);
  b.Add(50, 100);   // overlaps a: [0, 150)
  c.Add(400, 10);
  c.Add(500, 10);   // two ranges
  a.Merge(b);
  EXPECT_EQ(a.covered(), 150u);
  a.Merge(c);
  EXPECT_EQ(a.covered(), 170u);
  ByteRanges empty;
  empty.Merge(a);
  EXPECT_EQ(empty.covered(), 170u);
  empty.Merge(a);
  EXPECT_EQ(empty.covered(), 170u);
}

TEST(AdaptiveSeriesTest, CoarsensByPairsAndGrowsBack) {
  constexpr auto kBins = static_cast<int64_t>(AdaptiveSeries::kMaxBins);
  AdaptiveSeries s(/*origin_ns=*/1000, /*initial_bin_ns=*/1);
  for (int64_t i = 0; i < kBins; ++i) s.AddAt(1000 + i, static_cast<double>(i) + 0.25);
  EXPECT_EQ(s.bin_ns(), 1);
  s.AddAt(1000 + kBins, 3.0);  // one bin too many: pairs join
  EXPECT_EQ(s.bin_ns(), 2);
  EXPECT_EQ(s.SumOver(1000, 1002), 0.25 + 1.25);
  EXPECT_EQ(s.SumOver(1000 + kBins - 2, 1000 + kBins), (kBins - 2 + 0.25) + (kBins - 1 + 0.25));
  EXPECT_EQ(s.SumOver(1000 + kBins, 1000 + kBins + 2), 3.0);
  s.AddAt(1000 + 2 * kBins - 1, 7.0);  // the last bin at the new width
  EXPECT_EQ(s.bin_ns(), 2);
  EXPECT_EQ(s.SumOver(1000 + 2 * kBins - 2, 1000 + 2 * kBins), 7.0);
  EXPECT_EQ(s.SumOver(1000 + kBins + 2, 1000 + 2 * kBins - 2), 0.0);
}

TEST(AdaptiveSeriesTest, MergeCoarsensAnOddNumberOfBins) {
  AdaptiveSeries fine(0, 1);
  fine.AddAt(2, 5.0);  // three bins: 0, 0, 5
  AdaptiveSeries coarse(0, 2);
  coarse.AddAt(0, 1.0);
  coarse.AddAt(3, 2.0);
  fine.Merge(coarse);
  EXPECT_EQ(fine.bin_ns(), 2);
  EXPECT_EQ(fine.SumOver(0, 2), 1.0);
  EXPECT_EQ(fine.SumOver(2, 4), 7.0);
  EXPECT_EQ(fine.SumOver(4, 8), 0.0);
}

// AddOver's rule spelled out: each bin [s, s + w) that [start, end) reaches
// gets amount / (end - start) times the ns of it inside.
std::vector<double> SpreadByDefinition(int64_t start, int64_t end, double amount, int64_t width,
                                       size_t bins) {
  std::vector<double> out(bins, 0.0);
  double per_ns = amount / static_cast<double>(end - start);
  for (size_t i = 0; i < bins; ++i) {
    int64_t s = static_cast<int64_t>(i) * width;
    int64_t from = std::max(start, s);
    int64_t to = std::min(end, s + width);
    if (from < to) out[i] += per_ns * static_cast<double>(to - from);
  }
  return out;
}

TEST(AdaptiveSeriesTest, AddOverSpreadsOverPiecesAndWholeBins) {
  const std::vector<std::pair<int64_t, int64_t>> spans = {
      {0, 1}, {0, 10}, {3, 7}, {3, 10}, {3, 20}, {10, 20}, {7, 58}, {9, 11}, {19, 100}, {20, 60}};
  for (const auto& [start, end] : spans) {
    AdaptiveSeries s(0, 10);
    s.AddOver(start, end, 1000.0 / 3.0);
    std::vector<double> want = SpreadByDefinition(start, end, 1000.0 / 3.0, 10, 10);
    for (double& v : want) v = 0.0 + v * 10.0 / 10.0;  // as Resample reads a whole bin
    EXPECT_EQ(s.Resample(0, 10, 10), want) << start << " " << end;
  }
}

// A loader's CPU series: a sample every 100 ms spread over the bins since
// the one before, as the analysis adds them.
AdaptiveSeries CpuLike(int64_t origin_ns) {
  AdaptiveSeries s(origin_ns, 1'000'000);
  int64_t before = origin_ns + 3'000'000'000;
  for (int64_t k = 1; k <= 1200; ++k) {
    int64_t t = origin_ns + 3'000'000'000 + k * 100'000'000 + (k * 7919) % 3'000'000;
    s.AddOver(before, t, static_cast<double>(20'000'000 + (k * 104'729) % 60'000'000));
    before = t;
  }
  return s;
}

std::vector<std::pair<size_t, double>> RunsOf(const AdaptiveSeries& s) {
  std::vector<std::pair<size_t, double>> runs;
  s.ForEachRun([&](size_t n, double value) { runs.emplace_back(n, value); });
  return runs;
}

TEST(AdaptiveSeriesTest, CompactAnswersBitForBitAsTheBins) {
  const AdaptiveSeries bins = CpuLike(5'000'000);
  AdaptiveSeries runs = bins;
  runs.Compact();
  EXPECT_EQ(RunsOf(runs), RunsOf(bins));
  EXPECT_EQ(runs.bin_ns(), 4'000'000);  // 123 s in at most 32,768 bins
  size_t count = RunsOf(runs).size();
  EXPECT_LT(count * 4, AdaptiveSeries::kMaxBins) << "runs of about 25 bins, most equal";
  for (int64_t start = 0; start < 130'000'000'000; start += 777'777'777) {
    for (int64_t width : {int64_t{1'000'000}, int64_t{250'000'000}, int64_t{3'000'000'000}}) {
      ASSERT_EQ(std::bit_cast<uint64_t>(runs.SumOver(start, start + width)),
                std::bit_cast<uint64_t>(bins.SumOver(start, start + width)))
          << start << " " << width;
    }
  }
  EXPECT_EQ(runs.Resample(0, 1'000'000'000, 130), bins.Resample(0, 1'000'000'000, 130));
  // A change turns it back into bins, with the same sums.
  AdaptiveSeries changed = runs, changed_bins = bins;
  changed.AddAt(60'000'000'000, 5);
  changed_bins.AddAt(60'000'000'000, 5);
  EXPECT_EQ(RunsOf(changed), RunsOf(changed_bins));
}

// Every bin of `s`, runs or bins.
std::vector<double> BinsOf(const AdaptiveSeries& s) {
  std::vector<double> bins;
  s.ForEachRun([&](size_t n, double value) { bins.insert(bins.end(), n, value); });
  return bins;
}

// SumOver by its definition: every bin that [start, end) overlaps, in
// order, its value times the part inside over the bin's width.
double SumByDefinition(const AdaptiveSeries& s, const std::vector<double>& bins, int64_t start,
                       int64_t end) {
  start = std::max(start, s.origin_ns());
  if (start >= end) return 0;
  double sum = 0;
  for (size_t i = static_cast<size_t>((start - s.origin_ns()) / s.bin_ns()); i < bins.size();
       ++i) {
    int64_t bin_start = s.origin_ns() + static_cast<int64_t>(i) * s.bin_ns();
    if (bin_start >= end) break;
    int64_t from = std::max(start, bin_start);
    int64_t to = std::min(end, bin_start + s.bin_ns());
    sum += bins[i] * static_cast<double>(to - from) / static_cast<double>(s.bin_ns());
  }
  return sum;
}

TEST(AdaptiveSeriesTest, SumOverIsItsDefinitionBitForBit) {
  // CPU-like runs of equal bins, zeros between, and a ragged stretch of
  // values whose whole-bin term v * w / w is not v.
  AdaptiveSeries bins = CpuLike(5'000'000);
  for (int64_t k = 0; k < 3000; ++k) {
    bins.AddAt(40'000'000'000 + k * 1'300'000, 0.1 * static_cast<double>(k % 17) + 1e-9 * k);
  }
  // Runs of a value whose v * w / w is not v (4 ms bins: about one value
  // in twenty), each bin added once.
  for (int64_t k = 0; k < 200; ++k) bins.AddAt(60'000'000'000 + k * bins.bin_ns(), 93.8595867742349);
  ASSERT_NE(93.8595867742349 * 4e6 / 4e6, 93.8595867742349);
  ASSERT_EQ(bins.bin_ns(), 4'000'000);
  AdaptiveSeries runs = bins;
  runs.Compact();
  const std::vector<double> all = BinsOf(bins);
  ASSERT_EQ(BinsOf(runs), all);
  uint64_t x = 88172645463325252ull;  // xorshift: ranges anywhere, of any width
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (int k = 0; k < 3000; ++k) {
    int64_t start = static_cast<int64_t>(next() % 140'000'000'000) - 2'000'000'000;
    int64_t width = static_cast<int64_t>(next() % (k % 3 == 0 ? 10'000'000 : 20'000'000'000));
    if (k % 5 == 0) start -= start % bins.bin_ns();  // on a bin's bound
    if (k % 7 == 0) width -= width % bins.bin_ns();
    const uint64_t want =
        std::bit_cast<uint64_t>(SumByDefinition(bins, all, start, start + width));
    ASSERT_EQ(std::bit_cast<uint64_t>(bins.SumOver(start, start + width)), want)
        << start << " " << width;
    ASSERT_EQ(std::bit_cast<uint64_t>(runs.SumOver(start, start + width)), want)
        << start << " " << width;
  }
  EXPECT_EQ(bins.SumOver(10, 10), 0.0);
  EXPECT_EQ(bins.SumOver(200'000'000'000, 300'000'000'000), 0.0);  // past the last bin
}

// The runs of `s` without the zeros after its last value.
std::vector<std::pair<size_t, double>> RunsUpToLastValue(const AdaptiveSeries& s) {
  std::vector<std::pair<size_t, double>> runs = RunsOf(s);
  while (!runs.empty() && runs.back().second == 0) runs.pop_back();
  return runs;
}

TEST(AdaptiveSeriesTest, SpreadInTimeOrderStaysRunsWithTheBinsValues) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  auto next = [&](uint64_t n) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return static_cast<int64_t>(x % n);
  };
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t origin = next(5'000'000);
    AdaptiveSeries runs(origin, 1'000'000);
    AdaptiveSeries bins(origin, 1'000'000);
    bins.AddAt(origin, 0.0);               // bins from the start: AddOver's own loop
    int64_t t = origin - next(3'000'000);  // may begin before the origin
    for (int k = 0; k < 60; ++k) {
      // Mostly the next sample's range (CPU samples), sometimes after a
      // gap, inside one bin, back in time (into bins again), or a point.
      int64_t start = t;
      switch (next(12)) {
        case 0:
          start += next(50'000'000);
          break;
        case 1:
          start -= next(20'000'000);
          break;
        default:
          break;
      }
      int64_t end = start + (next(6) == 0 ? next(900'000) : next(300'000'000));
      double amount = static_cast<double>(next(90'000'000)) * (next(4) == 0 ? 0.37 : 1.0);
      runs.AddOver(start, end, amount);
      bins.AddOver(start, end, amount);
      t = std::max(t, end);
    }
    ASSERT_EQ(RunsUpToLastValue(runs), RunsUpToLastValue(bins)) << "trial " << trial;
    for (int k = 0; k < 50; ++k) {
      int64_t start = origin + next(20'000'000'000) - 1'000'000'000;
      int64_t width = next(3'000'000'000);
      ASSERT_EQ(std::bit_cast<uint64_t>(runs.SumOver(start, start + width)),
                std::bit_cast<uint64_t>(bins.SumOver(start, start + width)));
    }
  }
  // Samples a bin apart or more, as a process's CPU samples come, stay
  // runs: about three a sample, not a bin per millisecond.
  AdaptiveSeries cpu(0, 1'000'000);
  for (int64_t k = 0; k < 100; ++k) {
    cpu.AddOver(k * 100'300'000, (k + 1) * 100'300'000, 40'000'000);
  }
  EXPECT_LE(cpu.memory_bytes(), 512 * sizeof(double));
  AdaptiveSeries dense(0, 1'000'000);
  dense.AddAt(0, 0.0);
  for (int64_t k = 0; k < 100; ++k) {
    dense.AddOver(k * 100'300'000, (k + 1) * 100'300'000, 40'000'000);
  }
  EXPECT_GE(dense.memory_bytes(), 10'000 * sizeof(double));
  EXPECT_EQ(cpu.Resample(0, 1'000'000'000, 11), dense.Resample(0, 1'000'000'000, 11));
}

TEST(AdaptiveSeriesTest, MergingCompactRunsGivesWhatMergingBinsGives) {
  AdaptiveSeries a = CpuLike(0), b = CpuLike(0);
  b.AddAt(1'000'000'000, 3);
  AdaptiveSeries a_runs = a, b_runs = b;
  a_runs.Compact();
  b_runs.Compact();
  // Into nothing (stays runs), into bins, into runs, and runs into bins.
  AdaptiveSeries none(0, 1'000'000), none_bins(0, 1'000'000);
  none.Merge(b_runs);
  none_bins.Merge(b);
  EXPECT_EQ(none.Resample(0, 500'000'000, 300), none_bins.Resample(0, 500'000'000, 300));
  // Nothing but zeros leaves a compact series compact.
  AdaptiveSeries zeros(0, 1'000'000);
  zeros.AddAt(5'000'000, 0.0);
  size_t compact_bytes = a_runs.memory_bytes();
  a_runs.Merge(zeros);
  a_runs.Merge(AdaptiveSeries(0, 1'000'000));
  EXPECT_EQ(a_runs.memory_bytes(), compact_bytes);
  EXPECT_LT(compact_bytes * 4, a.memory_bytes());
  AdaptiveSeries expect = a;
  expect.Merge(b);
  for (auto [into, from] :
       {std::pair{a, b_runs}, std::pair{a_runs, b_runs}, std::pair{a_runs, b}}) {
    into.Merge(from);
    EXPECT_EQ(into.Resample(0, 100'000'000, 1300), expect.Resample(0, 100'000'000, 1300));
    EXPECT_EQ(into.SumOver(0, INT64_MAX / 2), expect.SumOver(0, INT64_MAX / 2));
  }
  // A series whose bins all differ: a run a bin (kept as bins: runs would
  // take more).
  AdaptiveSeries ramp(0, 1);
  for (int64_t t = 0; t < 1000; ++t) ramp.AddAt(t, static_cast<double>(t));
  AdaptiveSeries ramp_runs = ramp;
  ramp_runs.Compact();
  // 0, then 999 others, then the zeros up to the 1,024 bins it grew to.
  EXPECT_EQ(RunsOf(ramp_runs).size(), 1001u);
  EXPECT_EQ(RunsOf(ramp_runs), RunsOf(ramp));
}

}  // namespace
}  // namespace iotap::analyzer
