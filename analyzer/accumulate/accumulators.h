// Small accumulators the analysis keeps per file, layer and process.
//
// SizeHistogram: Darshan's ten access-size buckets and power-of-two buckets.
// AccessPatternTracker: classifies each access against the previous one.
// ByteRanges: which bytes of a file were read, to tell re-reads apart.
// AdaptiveSeries: a time series that halves its resolution when it would
// grow past a fixed number of bins, so memory does not grow with run length.

#ifndef IOTAP_ANALYZER_ACCUMULATE_ACCUMULATORS_H_
#define IOTAP_ANALYZER_ACCUMULATE_ACCUMULATORS_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "analyzer/base/numbers.h"
#include "iotap/report.pb.h"

namespace iotap::analyzer {

// Darshan's bucket edges: 100, 1K, 10K, 100K, 1M, 4M, 10M, 100M, 1G bytes.
// Counted without a branch: sizes vary from one read to the next.
inline int DarshanBucket(uint64_t bytes) {
  return (bytes >= 100) + (bytes >= 1000) + (bytes >= 10000) + (bytes >= 100000) +
         (bytes >= 1000000) + (bytes >= 4000000) + (bytes >= 10000000) +
         (bytes >= 100000000) + (bytes >= 1000000000);
}
// floor(log2(bytes)), with 0 for 0 and 1.
inline int Log2Bucket(uint64_t bytes) { return bytes <= 1 ? 0 : 63 - std::countl_zero(bytes); }

struct SizeHistogram {
  std::array<uint64_t, 10> darshan{};
  std::array<uint64_t, 64> log2{};
  std::array<uint64_t, 64> log2_bytes{};  // the sizes in each log2 bucket, summed

  void Add(uint64_t bytes) {
    ++darshan[DarshanBucket(bytes)];
    int k = Log2Bucket(bytes);
    ++log2[k];
    AddTo(&log2_bytes[k], bytes);
  }
  // The mean size within the power-of-two bucket that holds the median: the
  // median itself when the sizes in that bucket are all alike, as a data
  // loader's mostly are; 0 when empty.
  double ApproximateMedian() const;
  void Merge(const SizeHistogram& o);
  bool empty() const;
  void ToProto(report::SizeHistogram* out) const;
};

enum class AccessKind { kFirst, kConsecutive, kSequential, kStrided, kRandom };

// Darshan's buckets only, in 32-bit counters: what every file keeps (the
// power-of-two histogram is kept per layer and for all data files).
struct DarshanHistogram {
  std::array<uint32_t, 10> buckets{};

  void Add(uint64_t bytes) { ++buckets[DarshanBucket(bytes)]; }
  void Merge(const DarshanHistogram& o) {
    for (size_t i = 0; i < buckets.size(); ++i) buckets[i] += o.buckets[i];
  }
  void ToProto(report::SizeHistogram* out) const {
    for (uint32_t v : buckets) out->add_darshan(static_cast<double>(v));
  }
};

struct AccessPattern {
  uint64_t consecutive = 0;
  uint64_t sequential = 0;
  uint64_t strided = 0;
  uint64_t random = 0;

  void Count(AccessKind kind) {
    switch (kind) {
      case AccessKind::kFirst: break;
      case AccessKind::kConsecutive: ++consecutive; break;
      case AccessKind::kSequential: ++sequential; break;
      case AccessKind::kStrided: ++strided; break;
      case AccessKind::kRandom: ++random; break;
    }
  }
  void Merge(const AccessPattern& o);
  uint64_t total() const { return consecutive + sequential + strided + random; }
  void ToProto(report::AccessPattern* out) const;
};

// offset + bytes without overflow: at most INT64_MAX (a damaged trace may
// hold any offset and size).
inline int64_t RangeEnd(int64_t offset, uint64_t bytes) {
  const uint64_t max = static_cast<uint64_t>(INT64_MAX);
  bytes = std::min(bytes, max);
  if (offset < 0) return offset + static_cast<int64_t>(bytes);
  return bytes >= max - static_cast<uint64_t>(offset) ? INT64_MAX
                                                       : offset + static_cast<int64_t>(bytes);
}

// Classifies the accesses of one thread to one file, in the order it made
// them (see report.proto, AccessPattern).
class AccessPatternTracker {
 public:
  // Inline: it is called for every read.
  AccessKind Add(int64_t offset, uint64_t bytes) {
    AccessKind kind = AccessKind::kFirst;
    if (has_previous_) {
      // Wrapping: both may be anything in a damaged trace.
      auto gap = static_cast<int64_t>(static_cast<uint64_t>(offset) -
                                      static_cast<uint64_t>(previous_end_));
      if (gap == 0) {
        kind = AccessKind::kConsecutive;
      } else if (has_gap_ && gap == previous_gap_) {
        kind = AccessKind::kStrided;
      } else if (gap > 0 &&
                 gap <= std::max<int64_t>(kReadAheadBytes,
                                          bytes > (uint64_t{1} << 60) ? INT64_MAX
                                                                      : 4 * static_cast<int64_t>(bytes))) {
        kind = AccessKind::kSequential;
      } else {
        kind = AccessKind::kRandom;
      }
      previous_gap_ = gap;
      has_gap_ = true;
    }
    has_previous_ = true;
    previous_end_ = RangeEnd(offset, bytes);
    return kind;
  }

 private:
  // A forward skip read-ahead still covers (the kernel's default window) or
  // that is small next to the reads is sequential; a longer one is a jump
  // like any other, as a shuffled reader's mostly forward jumps are.
  static constexpr int64_t kReadAheadBytes = 128 * 1024;

  bool has_previous_ = false;
  int64_t previous_end_ = 0;
  int64_t previous_gap_ = 0;
  bool has_gap_ = false;
};

// The set of byte ranges of one file that have been read. Past kMaxRanges
// fragments, the closest neighbours are joined (counting the bytes between
// them as read), so memory stays bounded; `approximate()` says it happened.
class ByteRanges {
 public:
  ByteRanges() = default;
  // Copies and moves forget where the last read ended (an iterator into
  // the original's tree).
  ByteRanges(const ByteRanges& o) { *this = o; }
  ByteRanges(ByteRanges&& o) noexcept { *this = std::move(o); }
  ByteRanges& operator=(const ByteRanges& o) {
    ranges_ = o.ranges_;
    return TakeScalars(o);
  }
  ByteRanges& operator=(ByteRanges&& o) noexcept {
    ranges_ = std::move(o.ranges_);
    return TakeScalars(o);
  }

  void Add(int64_t offset, uint64_t bytes);
  uint64_t covered() const { return covered_; }
  bool approximate() const { return approximate_; }
  void Merge(const ByteRanges& o);
  // Calls f(start, end) for each range, in order (for copying the ranges
  // between processes: Add each, and MarkApproximate if approximate()).
  template <typename F>
  void ForEachRange(F&& f) const {
    if (solo_) f(solo_start_, solo_end_);
    for (const auto& [start, end] : ranges_) f(start, end);
  }
  void MarkApproximate() { approximate_ = true; }

 private:
  static constexpr size_t kMaxRanges = 1 << 14;
  void AddSlow(int64_t start, int64_t end);
  void Shrink();
  // Everything but the tree from `o`; the last range is forgotten.
  ByteRanges& TakeScalars(const ByteRanges& o) {
    last_ = ranges_.end();
    solo_start_ = o.solo_start_;
    solo_end_ = o.solo_end_;
    solo_ = o.solo_;
    covered_ = o.covered_;
    approximate_ = o.approximate_;
    return *this;
  }
  std::map<int64_t, int64_t> ranges_;  // start -> end, disjoint
  // The range the previous read ended in: sequential reads extend it.
  std::map<int64_t, int64_t>::iterator last_ = ranges_.end();
  // While the reads make one contiguous range, as a file read through once
  // does, it is kept here and ranges_ is empty: most files of a run never
  // need a tree node.
  int64_t solo_start_ = 0;
  int64_t solo_end_ = 0;
  bool solo_ = false;
  uint64_t covered_ = 0;
  bool approximate_ = false;
};

// Sums of a quantity in time bins over [origin, ...), starting at
// `initial_bin_ns` and doubling the bin width whenever more than kMaxBins
// would be needed. Merging adjacent bins keeps sums exact.
class AdaptiveSeries {
 public:
  static constexpr size_t kMaxBins = 1 << 15;

  AdaptiveSeries(int64_t origin_ns, int64_t initial_bin_ns)
      : origin_ns_(origin_ns),
        bin_ns_(initial_bin_ns),
        inverse_bin_(1.0 / static_cast<double>(initial_bin_ns)) {}

  // Adds `amount` at instant `t`.
  void AddAt(int64_t t, double amount) {
    // Successive instants often fall in the bin of the previous one.
    if (t >= last_start_ && t < last_end_) {
      bins_[last_index_] += amount;
      return;
    }
    int64_t d = t - origin_ns_;
    if (d >= 0) {
      size_t index = BinOf(d);
      if (index < bins_.size()) {
        bins_[index] += amount;
        last_index_ = index;
        last_start_ = origin_ns_ + static_cast<int64_t>(index) * bin_ns_;
        last_end_ = last_start_ + bin_ns_;
        return;
      }
    }
    AddAtSlow(t, amount);
  }
  // Spreads `amount` evenly over [start, end). A new or compact series
  // spread over in time order (each range from the last one's bin on, as
  // CPU samples come) stays compact.
  void AddOver(int64_t start, int64_t end, double amount);
  // The sum over [start, end), bins partly inside counted in proportion.
  double SumOver(int64_t start, int64_t end) const;
  // Adds another series (same origin) into this one.
  void Merge(const AdaptiveSeries& o);
  // Adds a series of any origin: each of its bins spread over the time it
  // covers (exact where its bins fall inside ours); bins that begin before
  // this series's origin are left out.
  void AddSeries(const AdaptiveSeries& o);
  // Frees the memory of the zero bins at the end (a series kept long).
  void Trim();
  // Keeps the bins as runs of equal bins, if that takes less memory, until
  // the series next changes: a CPU series sampled every 100 ms in bins of
  // 4 ms is runs of about 25. Every answer stays the same. What a run's
  // state merged from many processes keeps (analyzer/merge/shared_run.h).
  void Compact();
  // `bins` sums of [origin + k * width, ...) for the requested width (a
  // multiple of the current bin width, or coarser by proportion).
  std::vector<double> Resample(int64_t start_ns, int64_t width_ns, size_t bins) const;

  int64_t bin_ns() const { return bin_ns_; }
  int64_t origin_ns() const { return origin_ns_; }
  size_t memory_bytes() const {
    return bins_.capacity() * sizeof(double) + runs_.capacity() * sizeof(Run);
  }
  // The bins as runs of equal bins (bit for bit), in order, for copying a
  // series between processes: f(bins in the run, their value). A series
  // made with the same origin, `bin_ns` and these runs sums the same.
  template <typename F>
  void ForEachRun(F&& f) const {
    if (bins_.empty()) {
      uint32_t start = 0;
      for (const Run& run : runs_) {
        f(run.end - start, run.value);
        start = run.end;
      }
      return;
    }
    for (size_t i = 0; i < bins_.size();) {
      size_t j = i + 1;
      while (j < bins_.size() && std::bit_cast<uint64_t>(bins_[j]) ==
                                     std::bit_cast<uint64_t>(bins_[i])) {
        ++j;
      }
      f(j - i, bins_[i]);
      i = j;
    }
  }
  // Bins [previous run's end, end) hold `value`.
  struct Run {
    uint32_t end;
    double value;
  };
  // A series of these runs (ends rising, the last at most kMaxBins), kept
  // compact; or of these bins.
  AdaptiveSeries(int64_t origin_ns, int64_t bin_ns, std::vector<Run> runs)
      : AdaptiveSeries(origin_ns, bin_ns) {
    runs_ = std::move(runs);
  }
  AdaptiveSeries(int64_t origin_ns, int64_t bin_ns, std::vector<double> bins)
      : AdaptiveSeries(origin_ns, bin_ns) {
    bins_ = std::move(bins);
  }

 private:
  void AddAtSlow(int64_t t, double amount);
  // AddOver on a series kept as runs (or empty) that [start, end) begins in
  // the last bin of, or after, and ends within kMaxBins bins: the bins it
  // changes appended as runs. False, with nothing done, otherwise.
  bool AppendOver(int64_t start, int64_t end, double amount);
  // Bins up to `end` hold `value` (the last run extended if it holds it).
  void AppendRun(size_t end, double value);
  // The runs back into bins.
  void Expand();
  void Coarsen();
  void Grow(size_t index);
  // d / bin_ns_ for 0 <= d: a multiply, corrected to the exact quotient
  // (a 64-bit division costs tens of cycles, and AddAt is per event).
  size_t BinOf(int64_t d) const {
    if (d >= (int64_t{1} << 52)) return static_cast<size_t>(d / bin_ns_);
    auto q = static_cast<int64_t>(static_cast<double>(d) * inverse_bin_);
    if (q * bin_ns_ > d) --q;
    else if ((q + 1) * bin_ns_ <= d) ++q;
    return static_cast<size_t>(q);
  }

  int64_t origin_ns_;
  int64_t bin_ns_;
  double inverse_bin_;
  // Bins past the last one added to are zeros and count for nothing; they
  // are there so that a growing series is not resized bin by bin.
  std::vector<double> bins_;
  // While compact (bins_ empty): the bins as runs.
  std::vector<Run> runs_;
  // The bin AddAt used last, [last_start_, last_end_); empty after Coarsen.
  size_t last_index_ = 0;
  int64_t last_start_ = 0;
  int64_t last_end_ = 0;
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ACCUMULATE_ACCUMULATORS_H_
