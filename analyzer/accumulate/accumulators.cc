#include "analyzer/accumulate/accumulators.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace iotap::analyzer {

void SizeHistogram::Merge(const SizeHistogram& o) {
  for (size_t i = 0; i < darshan.size(); ++i) darshan[i] += o.darshan[i];
  for (size_t i = 0; i < log2.size(); ++i) log2[i] += o.log2[i];
  for (size_t i = 0; i < log2_bytes.size(); ++i) AddTo(&log2_bytes[i], o.log2_bytes[i]);
}

double SizeHistogram::ApproximateMedian() const {
  uint64_t total = 0;
  for (uint64_t v : log2) total += v;
  if (total == 0) return 0;
  uint64_t seen = 0;
  for (size_t k = 0; k < log2.size(); ++k) {
    seen += log2[k];
    if (2 * seen >= total) {
      return static_cast<double>(log2_bytes[k]) / static_cast<double>(log2[k]);
    }
  }
  return 0;
}

bool SizeHistogram::empty() const {
  return std::all_of(darshan.begin(), darshan.end(), [](uint64_t v) { return v == 0; });
}

void SizeHistogram::ToProto(report::SizeHistogram* out) const {
  for (uint64_t v : darshan) out->add_darshan(static_cast<double>(v));
  size_t last = log2.size();
  while (last > 0 && log2[last - 1] == 0) --last;
  for (size_t i = 0; i < last; ++i) out->add_log2(static_cast<double>(log2[i]));
}

void AccessPattern::Merge(const AccessPattern& o) {
  consecutive += o.consecutive;
  sequential += o.sequential;
  strided += o.strided;
  random += o.random;
}

void AccessPattern::ToProto(report::AccessPattern* out) const {
  out->set_consecutive(static_cast<double>(consecutive));
  out->set_sequential(static_cast<double>(sequential));
  out->set_strided(static_cast<double>(strided));
  out->set_random(static_cast<double>(random));
}

void ByteRanges::Add(int64_t offset, uint64_t bytes) {
  // No byte of a file lies before offset 0 (only a damaged trace says so).
  if (bytes == 0 || offset < 0) return;
  int64_t end = RangeEnd(offset, bytes);
  if (ranges_.empty()) {
    if (!solo_) {
      solo_ = true;
      solo_start_ = offset;
      solo_end_ = end;
      AddTo(&covered_, bytes);
      return;
    }
    if (offset <= solo_end_ && end >= solo_start_) {  // overlaps or touches: still one
      int64_t start = std::min(solo_start_, offset);
      int64_t stop = std::max(solo_end_, end);
      AddTo(&covered_, static_cast<uint64_t>((stop - start) - (solo_end_ - solo_start_)));
      solo_start_ = start;
      solo_end_ = stop;
      return;
    }
    // A second range: both go into the tree.
    last_ = ranges_.emplace(solo_start_, solo_end_).first;
    solo_ = false;
  }
  if (last_ != ranges_.end() && offset == last_->second) {
    auto next = std::next(last_);
    if (next == ranges_.end() || next->first > end) {
      last_->second = end;
      AddTo(&covered_, bytes);
      return;
    }
  }
  AddSlow(offset, end);
}

void ByteRanges::AddSlow(int64_t start, int64_t end) {
  auto it = ranges_.upper_bound(start);
  if (it != ranges_.begin() && std::prev(it)->second >= start) --it;
  if (it != ranges_.end() && it->first <= start && it->second >= end) {
    last_ = it;  // read before: nothing changes (as when runs merge re-reads)
    return;
  }
  while (it != ranges_.end() && it->first <= end) {
    start = std::min(start, it->first);
    end = std::max(end, it->second);
    covered_ -= static_cast<uint64_t>(it->second - it->first);
    it = ranges_.erase(it);
  }
  last_ = ranges_.emplace(start, end).first;
  AddTo(&covered_, static_cast<uint64_t>(end - start));
  if (ranges_.size() > kMaxRanges) Shrink();
}

void ByteRanges::Shrink() {
  // Join each pair of neighbours separated by less than the median gap.
  std::vector<int64_t> gaps;
  for (auto it = ranges_.begin(); std::next(it) != ranges_.end(); ++it) {
    gaps.push_back(std::next(it)->first - it->second);
  }
  std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
  int64_t limit = gaps[gaps.size() / 2];
  std::map<int64_t, int64_t> joined;
  uint64_t covered = 0;
  std::pair<int64_t, int64_t> cur = *ranges_.begin();
  for (auto it = std::next(ranges_.begin()); it != ranges_.end(); ++it) {
    if (it->first - cur.second <= limit) {
      cur.second = it->second;
    } else {
      joined.insert(cur);
      AddTo(&covered, static_cast<uint64_t>(cur.second - cur.first));
      cur = *it;
    }
  }
  joined.insert(cur);
  AddTo(&covered, static_cast<uint64_t>(cur.second - cur.first));
  ranges_.swap(joined);
  last_ = ranges_.end();
  covered_ = covered;
  approximate_ = true;
}

void ByteRanges::Merge(const ByteRanges& o) {
  if (o.solo_) Add(o.solo_start_, static_cast<uint64_t>(o.solo_end_ - o.solo_start_));
  for (const auto& [s, e] : o.ranges_) Add(s, static_cast<uint64_t>(e - s));
  approximate_ = approximate_ || o.approximate_;
}

void AdaptiveSeries::Coarsen() {
  // In place, each pair summed as into a zeroed bin ((0 + a) + b): the
  // vector keeps its capacity, so the series grows back to kMaxBins bins
  // without a new allocation and copy every time it coarsens.
  const size_t n = bins_.size();
  for (size_t i = 0; i < n / 2; ++i) bins_[i] = (0.0 + bins_[2 * i]) + bins_[2 * i + 1];
  if (n % 2 == 1) bins_[n / 2] = 0.0 + bins_[n - 1];
  bins_.resize((n + 1) / 2);
  bin_ns_ *= 2;
  inverse_bin_ = 1.0 / static_cast<double>(bin_ns_);
  last_end_ = last_start_;
}

void AdaptiveSeries::Compact() {
  if (bins_.empty()) return;
  size_t count = 0;
  ForEachRun([&](size_t, double) { ++count; });
  if (count * sizeof(Run) >= bins_.size() * sizeof(double)) return;
  std::vector<Run> runs;
  runs.reserve(count);
  uint32_t end = 0;
  ForEachRun([&](size_t n, double value) {
    end += static_cast<uint32_t>(n);
    runs.push_back({end, value});
  });
  runs_ = std::move(runs);
  bins_ = std::vector<double>();
  last_start_ = last_end_ = 0;
}

void AdaptiveSeries::Expand() {
  if (runs_.empty()) return;
  std::vector<double> bins;
  bins.reserve(runs_.back().end);
  for (const Run& run : runs_) bins.resize(run.end, run.value);
  bins_ = std::move(bins);
  runs_ = std::vector<Run>();
}

void AdaptiveSeries::Trim() {
  Expand();
  size_t last = bins_.size();
  while (last > 0 && bins_[last - 1] == 0) --last;
  bins_.resize(last);
  bins_.shrink_to_fit();
  last_start_ = last_end_ = 0;
}

void AdaptiveSeries::Grow(size_t index) {
  while (index >= kMaxBins) {
    Coarsen();
    index /= 2;
  }
  if (index >= bins_.size()) {
    bins_.resize(std::min(kMaxBins, std::max(index + 1, bins_.size() * 2)), 0.0);
  }
}

void AdaptiveSeries::AddAtSlow(int64_t t, double amount) {
  Expand();
  int64_t d = std::max<int64_t>(0, t - origin_ns_);
  Grow(BinOf(d));
  bins_[BinOf(d)] += amount;
}

bool AdaptiveSeries::AppendOver(int64_t start, int64_t end, double amount) {
  start = std::max(start, origin_ns_);
  if (end <= start) return false;
  const size_t covered = runs_.empty() ? 0 : runs_.back().end;
  const size_t index = BinOf(start - origin_ns_);
  if (BinOf(end - 1 - origin_ns_) >= kMaxBins || index + 1 < covered) return false;
  last_start_ = last_end_ = 0;  // AddAt goes by the bins, which runs leave empty
  // Each bin as AddOver's loop below leaves it: what it held (+0 past the
  // runs) plus its piece.
  double held = 0.0;
  if (index + 1 == covered) {  // starts in the last bin: taken off its run
    held = runs_.back().value;
    const uint32_t run_start = runs_.size() > 1 ? runs_[runs_.size() - 2].end : 0;
    if (runs_.back().end - run_start == 1) {
      runs_.pop_back();
    } else {
      --runs_.back().end;
    }
  } else if (index > covered) {
    AppendRun(index, 0.0);
  }
  const double per_ns = amount / static_cast<double>(end - start);
  const int64_t first_end = origin_ns_ + static_cast<int64_t>(index + 1) * bin_ns_;
  if (end <= first_end) {
    AppendRun(index + 1, held + per_ns * static_cast<double>(end - start));
    return true;
  }
  AppendRun(index + 1, held + per_ns * static_cast<double>(first_end - start));
  const auto full = static_cast<size_t>((end - first_end) / bin_ns_);
  if (full > 0) AppendRun(index + 1 + full, 0.0 + per_ns * static_cast<double>(bin_ns_));
  const int64_t t = first_end + static_cast<int64_t>(full) * bin_ns_;
  if (t < end) AppendRun(index + 2 + full, 0.0 + per_ns * static_cast<double>(end - t));
  return true;
}

void AdaptiveSeries::AppendRun(size_t end, double value) {
  if (!runs_.empty() &&
      std::bit_cast<uint64_t>(runs_.back().value) == std::bit_cast<uint64_t>(value)) {
    runs_.back().end = static_cast<uint32_t>(end);
  } else {
    runs_.push_back({static_cast<uint32_t>(end), value});
  }
}

void AdaptiveSeries::AddOver(int64_t start, int64_t end, double amount) {
  // A series spread over in time order (CPU samples) stays runs, as
  // Compact would leave it, rather than bins zeroed and filled.
  if (bins_.empty() && AppendOver(start, end, amount)) return;
  Expand();
  start = std::max(start, origin_ns_);
  if (end <= start) {
    AddAt(start, amount);
    return;
  }
  Grow(BinOf(end - 1 - origin_ns_));
  double per_ns = amount / static_cast<double>(end - start);
  // Bin by bin from the one holding `start`: its piece, the whole bins (each
  // gets per_ns times the bin width, the same sum), the last piece.
  size_t index = BinOf(start - origin_ns_);
  const int64_t first_end = origin_ns_ + static_cast<int64_t>(index + 1) * bin_ns_;
  if (end <= first_end) {
    bins_[index] += per_ns * static_cast<double>(end - start);
    return;
  }
  bins_[index] += per_ns * static_cast<double>(first_end - start);
  const double whole = per_ns * static_cast<double>(bin_ns_);
  const auto full = static_cast<size_t>((end - first_end) / bin_ns_);
  double* next = bins_.data() + index + 1;
  for (size_t k = 0; k < full; ++k) next[k] += whole;
  const int64_t t = first_end + static_cast<int64_t>(full) * bin_ns_;
  if (t < end) next[full] += per_ns * static_cast<double>(end - t);
}

double AdaptiveSeries::SumOver(int64_t start, int64_t end) const {
  // Bin by bin in time order, each bin's value times the part of it inside
  // [start, end) over its width: v * (piece / width). A whole bin's term is
  // v * width / width, worked out once per run of equal bins; a bin of zeros
  // adds nothing (the sum, from +0, is never -0, and +-0 leaves it as it
  // is), so runs of zeros are passed over. The sum is bit for bit the same,
  // runs or bins, as adding every piece in order.
  start = std::max(start, origin_ns_);
  if (start >= end) return 0;
  const double width = static_cast<double>(bin_ns_);
  const size_t bins = runs_.empty() ? bins_.size() : runs_.back().end;
  size_t index = BinOf(start - origin_ns_);
  if (index >= bins) return 0;
  double sum = 0;
  // The bins [index, last) overlap [start, end); `last` itself is not reached.
  const size_t last = std::min(BinOf(end - 1 - origin_ns_) + 1, bins);
  auto piece = [&](size_t i, double value) {
    const int64_t bin_start = origin_ns_ + static_cast<int64_t>(i) * bin_ns_;
    const int64_t from = std::max(start, bin_start);
    const int64_t to = std::min(end, bin_start + bin_ns_);
    sum += value * static_cast<double>(to - from) / width;
  };
  // Bins [from, to) of `value`, in order: the first and last may be pieces.
  auto add = [&](size_t from, size_t to, double value) {
    if (value == 0 || from >= to) return;
    size_t i = from;
    if (i == index) piece(i++, value);
    const size_t whole_end = to == last ? to - (i < to ? 1 : 0) : to;
    if (i < whole_end) {
      const double whole = value * width / width;
      for (; i < whole_end; ++i) sum += whole;
    }
    if (i < to) piece(i, value);
  };
  if (!runs_.empty()) {
    auto run = std::partition_point(runs_.begin(), runs_.end(),
                                    [index](const Run& r) { return r.end <= index; });
    size_t from = index;
    for (; run != runs_.end() && from < last; ++run) {
      const size_t to = std::min<size_t>(run->end, last);
      add(from, to, run->value);
      from = to;
    }
    return sum;
  }
  for (size_t i = index; i < last; ++i) {
    const double v = bins_[i];
    if (v == 0) continue;
    if (i == index || i + 1 == last) {
      piece(i, v);
    } else {
      sum += v * width / width;
    }
  }
  return sum;
}

void AdaptiveSeries::AddSeries(const AdaptiveSeries& o) {
  if (o.origin_ns_ == origin_ns_) {
    Merge(o);
    return;
  }
  if (!o.runs_.empty()) {
    AdaptiveSeries bins = o;
    bins.Expand();
    AddSeries(bins);
    return;
  }
  Expand();
  while (bin_ns_ < o.bin_ns_) Coarsen();
  const bool nested = bin_ns_ % o.bin_ns_ == 0 && (o.origin_ns_ - origin_ns_) % o.bin_ns_ == 0;
  for (size_t i = 0; i < o.bins_.size(); ++i) {
    if (o.bins_[i] == 0) continue;
    int64_t start = o.origin_ns_ + static_cast<int64_t>(i) * o.bin_ns_;
    if (start < origin_ns_) continue;  // before this series: not part of it
    if (nested) {  // the usual case: its bin lies inside one of ours
      size_t index = static_cast<size_t>((start - origin_ns_) / bin_ns_);
      Grow(index);
      index = static_cast<size_t>((start - origin_ns_) / bin_ns_);  // Grow may coarsen
      bins_[index] += o.bins_[i];
    } else {
      AddOver(start, start + o.bin_ns_, o.bins_[i]);
    }
  }
}

void AdaptiveSeries::Merge(const AdaptiveSeries& o) {
  // Zeros add nothing (below): a compact series stays so when merged with
  // one that holds none but zeros, as every rank's partial holds for the
  // groups it did not read.
  if (bin_ns_ >= o.bin_ns_ &&
      std::all_of(o.bins_.begin(), o.bins_.end(), [](double v) { return v == 0; }) &&
      std::all_of(o.runs_.begin(), o.runs_.end(), [](const Run& r) { return r.value == 0; })) {
    return;
  }
  if (!o.runs_.empty()) {
    if (bins_.empty() && runs_.empty()) {
      // Into nothing: the runs, as the bin for bin sum below would leave
      // them (0 + each bin: a zero is +0).
      while (bin_ns_ < o.bin_ns_) Coarsen();
      if (bin_ns_ == o.bin_ns_) {
        runs_ = o.runs_;
        for (Run& run : runs_) run.value = run.value == 0 ? 0.0 : 0.0 + run.value;
        last_start_ = last_end_ = 0;
        return;
      }
    }
    AdaptiveSeries bins = o;
    bins.Expand();
    Merge(bins);
    return;
  }
  Expand();
  while (bin_ns_ < o.bin_ns_) Coarsen();
  if (bin_ns_ == o.bin_ns_) {  // the usual case: bin for bin
    size_t last = o.bins_.size();
    while (last > 0 && o.bins_[last - 1] == 0) --last;
    if (last == 0) return;
    Grow(last - 1);
    for (size_t i = 0; i < last; ++i) {
      if (o.bins_[i] != 0) bins_[i] += o.bins_[i];
    }
    return;
  }
  // `o` may be finer: fold its bins into ours.
  int64_t ratio = bin_ns_ / o.bin_ns_;
  for (size_t i = 0; i < o.bins_.size(); ++i) {
    if (o.bins_[i] == 0) continue;
    size_t index = i / static_cast<size_t>(ratio);
    Grow(index);
    index = static_cast<size_t>(static_cast<int64_t>(i) * o.bin_ns_ / bin_ns_);
    bins_[index] += o.bins_[i];
  }
}

std::vector<double> AdaptiveSeries::Resample(int64_t start_ns, int64_t width_ns,
                                             size_t bins) const {
  std::vector<double> out(bins, 0.0);
  for (size_t k = 0; k < bins; ++k) {
    int64_t s = start_ns + static_cast<int64_t>(k) * width_ns;
    out[k] = SumOver(s, s + width_ns);
  }
  return out;
}

}  // namespace iotap::analyzer
