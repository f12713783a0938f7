#include "analyzer/accumulate/time_bitmap.h"

#include <algorithm>
#include <bit>

namespace iotap::analyzer {

namespace {

// Set bits of `x`. std::popcount compiles to a call into libgcc unless the
// build targets processors with POPCNT (the baseline x86-64 does not); the
// reports count bits of every step's span, so this is written out.
inline int PopCount(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<int>((x * 0x0101010101010101ull) >> 56);
}

// Slots past this are never set or counted. ChooseResolution keeps a whole
// run within it (256 MiB of bits); only damaged times fall beyond, and they
// must neither take memory nor make a count scan all the way to them.
constexpr int64_t kMaxSlots = int64_t{256} << 23;
static_assert(kMaxSlots == static_cast<int64_t>(TimeBitmap::kMaxChunks) * TimeBitmap::kChunkSlots);

constexpr uint32_t RunOf(int64_t first, int64_t last) {
  return TimeBitmap::RunOf(static_cast<uint32_t>(first), static_cast<uint32_t>(last));
}
constexpr int64_t First(uint32_t run) { return TimeBitmap::RunFirst(run); }
constexpr int64_t Last(uint32_t run) { return TimeBitmap::RunLast(run); }

// Sets a chunk's slots first..last (both included), a word at a time.
inline void SetSlots(uint64_t* words, int64_t first, int64_t last) {
  int64_t first_word = first >> 6;
  int64_t last_word = last >> 6;
  uint64_t first_mask = ~uint64_t{0} << (first & 63);
  uint64_t last_mask = ~uint64_t{0} >> (63 - (last & 63));
  if (first_word == last_word) {
    words[first_word] |= first_mask & last_mask;
  } else {
    words[first_word] |= first_mask;
    for (int64_t w = first_word + 1; w < last_word; ++w) words[w] = ~uint64_t{0};
    words[last_word] |= last_mask;
  }
}

void SetRuns(const std::vector<uint32_t>& runs, uint64_t* words) {
  for (uint32_t run : runs) SetSlots(words, First(run), Last(run));
}

// The first slot at or after `slot` that is set (`set`) or clear; the
// chunk's end if none.
int64_t NextSlot(const uint64_t* words, int64_t slot, bool set) {
  constexpr int64_t kWordCount = TimeBitmap::kChunkSlots / 64;
  int64_t w = slot >> 6;
  uint64_t x = (set ? words[w] : ~words[w]) & (~uint64_t{0} << (slot & 63));
  while (x == 0) {
    if (++w == kWordCount) return TimeBitmap::kChunkSlots;
    x = set ? words[w] : ~words[w];
  }
  return (w << 6) + std::countr_zero(x);
}

// A chunk's runs; false (and `runs` unfinished) if it has more than `limit`.
bool WordsToRuns(const uint64_t* words, size_t limit, std::vector<uint32_t>* runs) {
  runs->clear();
  for (int64_t slot = 0; slot < TimeBitmap::kChunkSlots;) {
    int64_t first = NextSlot(words, slot, true);
    if (first == TimeBitmap::kChunkSlots) break;
    int64_t end = NextSlot(words, first, false);
    if (runs->size() == limit) return false;
    runs->push_back(RunOf(first, end - 1));
    slot = end;
  }
  return true;
}

// The union of two chunks' runs, sorted and apart.
void UniteRuns(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
               std::vector<uint32_t>* out) {
  out->clear();
  out->reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    uint32_t next = j == b.size() || (i < a.size() && a[i] < b[j]) ? a[i++] : b[j++];
    if (!out->empty() && First(next) <= Last(out->back()) + 1) {
      if (Last(next) > Last(out->back())) out->back() = RunOf(First(out->back()), Last(next));
    } else {
      out->push_back(next);
    }
  }
}

// Set bits of a & b in a chunk's slots [k, k_end).
int64_t CountWords(const uint64_t* a, const uint64_t* b, int64_t k, int64_t k_end) {
  int64_t count = 0;
  while (k < k_end) {
    int bit = static_cast<int>(k & 63);
    int64_t n = std::min<int64_t>(64 - bit, k_end - k);
    uint64_t mask = n == 64 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1) << bit;
    count += PopCount(a[k >> 6] & b[k >> 6] & mask);
    k += n;
  }
  return count;
}

// The first of `runs` that ends at or after slot k.
std::vector<uint32_t>::const_iterator RunFrom(const std::vector<uint32_t>& runs, int64_t k) {
  return std::partition_point(runs.begin(), runs.end(),
                              [k](uint32_t run) { return Last(run) < k; });
}

// Slots of `runs` in [k, k_end), set in `words` too if given.
int64_t CountRuns(const std::vector<uint32_t>& runs, const uint64_t* words, int64_t k,
                  int64_t k_end) {
  int64_t count = 0;
  for (auto it = RunFrom(runs, k); it != runs.end() && First(*it) < k_end; ++it) {
    int64_t lo = std::max(k, First(*it));
    int64_t hi = std::min(k_end, Last(*it) + 1);
    count += words != nullptr ? CountWords(words, words, lo, hi) : hi - lo;
  }
  return count;
}

// Slots in [k, k_end) of both `a` and `b`.
int64_t CountRunsBoth(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b, int64_t k,
                      int64_t k_end) {
  int64_t count = 0;
  auto i = RunFrom(a, k), j = RunFrom(b, k);
  while (i != a.end() && j != b.end()) {
    int64_t lo = std::max({k, First(*i), First(*j)});
    if (lo >= k_end) break;
    int64_t hi = std::min({k_end, Last(*i) + 1, Last(*j) + 1});
    if (lo < hi) count += hi - lo;
    if (Last(*i) < Last(*j)) {
      ++i;
    } else {
      ++j;
    }
  }
  return count;
}

}  // namespace

TimeBitmap::TimeBitmap(int64_t origin_ns, int64_t resolution_ns)
    : origin_ns_(origin_ns),
      resolution_ns_(std::max<int64_t>(1, resolution_ns)),
      inverse_resolution_(1.0 / static_cast<double>(resolution_ns_)) {}

inline int64_t TimeBitmap::Divide(int64_t d) const {
  // A 64-bit division costs tens of cycles, and Set takes two per interval.
  // By the 1 us of every run up to about an hour the compiler divides by
  // multiplying; otherwise, below 2^52 the product is off by at most one,
  // and one step corrects it.
  if (resolution_ns_ == 1000) return d / 1000;
  if (d >= (int64_t{1} << 52)) return d / resolution_ns_;
  auto q = static_cast<int64_t>(static_cast<double>(d) * inverse_resolution_);
  if (q * resolution_ns_ > d) return q - 1;
  if ((q + 1) * resolution_ns_ <= d) return q + 1;
  return q;
}

inline int64_t TimeBitmap::SlotOf(int64_t t) const {
  int64_t d = t - origin_ns_;
  // Floor division, also for times before the origin (clamped to slot 0).
  return d <= 0 ? 0 : Divide(d);
}

uint64_t* TimeBitmap::ChunkFor(int64_t slot) {
  size_t c = static_cast<size_t>(slot >> kChunkBits);
  if (c >= chunks_.size()) chunks_.resize(c + 1);
  if (!chunks_[c]) {
    if (c < runs_.size() && !runs_[c].empty()) return Expand(c);
    chunks_[c] = Chunk(new uint64_t[kWords]());
  }
  return chunks_[c].get();
}

uint64_t* TimeBitmap::Expand(size_t c) {
  chunks_[c] = Chunk(new uint64_t[kWords]());
  SetRuns(runs_[c], chunks_[c].get());
  runs_[c] = Runs();
  return chunks_[c].get();
}

void TimeBitmap::OrChunk(size_t k, const uint64_t* words) {
  if (k >= kMaxChunks) return;
  uint64_t* into = ChunkFor(static_cast<int64_t>(k) << kChunkBits);
  for (int w = 0; w < kWords; ++w) into[w] |= words[w];
}

void TimeBitmap::OrRuns(size_t k, const Runs& runs) {
  if (k >= kMaxChunks || runs.empty()) return;
  if (k < chunks_.size() && chunks_[k]) {
    SetRuns(runs, chunks_[k].get());
    return;
  }
  if (k >= chunks_.size()) chunks_.resize(k + 1);
  if (k >= runs_.size()) runs_.resize(chunks_.size());
  Runs& mine = runs_[k];
  if (mine.empty()) {
    mine = runs;
    return;
  }
  Runs united;
  UniteRuns(mine, runs, &united);
  if (united.size() <= kMaxRuns) {
    mine.assign(united.begin(), united.end());
  } else {
    SetRuns(runs, Expand(k));
  }
}

void TimeBitmap::Compact() {
  Runs runs;
  for (size_t c = 0; c < chunks_.size(); ++c) {
    if (!chunks_[c] || !WordsToRuns(chunks_[c].get(), kMaxRuns, &runs)) continue;
    chunks_[c].reset();
    if (runs.empty()) continue;
    if (c >= runs_.size()) runs_.resize(chunks_.size());
    runs_[c].assign(runs.begin(), runs.end());
  }
}

const uint64_t* TimeBitmap::ChunkAt(int64_t slot) const {
  size_t c = static_cast<size_t>(slot >> kChunkBits);
  return c < chunks_.size() ? chunks_[c].get() : nullptr;
}

void TimeBitmap::Set(int64_t start_ns, int64_t end_ns) {
  if (end_ns <= start_ns) return;
  int64_t from = SlotOf(start_ns);
  if (from >= kMaxSlots) return;
  // The last slot the interval touches: end is exclusive.
  int64_t last = std::min(SlotOf(end_ns - 1), kMaxSlots - 1);
  for (;;) {
    uint64_t* words = ChunkFor(from);
    int64_t chunk_last = std::min(last, from | (kChunkSlots - 1));
    SetSlots(words, from & (kChunkSlots - 1), chunk_last & (kChunkSlots - 1));
    if (chunk_last == last) return;
    from = chunk_last + 1;
  }
}

void TimeBitmap::SetAll(const std::vector<std::pair<int64_t, int64_t>>& intervals) {
  // Each interval within one chunk (nearly all: a chunk is 65.5 ms at 1 us)
  // costs its two slots and a mask; the chunk's words are looked up once
  // for the intervals in a row that fall in it. The intervals of a process
  // lie milliseconds apart in a bitmap of the whole run, each on a cache
  // line of its own that is not cached: the line of one a few intervals
  // ahead is asked for, so that the misses overlap.
  constexpr size_t kAhead = 8;
  const size_t n = intervals.size();
  int64_t chunk = -1;  // the chunk `words` holds
  uint64_t* words = nullptr;
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n && words != nullptr) {
      // A hint needs no exact slot: the uncorrected product will do.
      const int64_t d = intervals[i + kAhead].first - origin_ns_;
      const auto ahead = static_cast<int64_t>(static_cast<double>(d) * inverse_resolution_);
      if (d > 0 && ahead >> kChunkBits == chunk) {
        __builtin_prefetch(words + ((ahead & (kChunkSlots - 1)) >> 6), /*rw=*/1);
      }
    }
    const auto [start, end] = intervals[i];
    if (end <= start) continue;
    const int64_t from = SlotOf(start);
    const int64_t last = SlotOf(end - 1);
    if (last >= kMaxSlots || from >> kChunkBits != last >> kChunkBits) {
      Set(start, end);  // across chunks, or past the longest run
      continue;
    }
    if (from >> kChunkBits != chunk) {
      chunk = from >> kChunkBits;
      words = ChunkFor(from);
    }
    SetSlots(words, from & (kChunkSlots - 1), last & (kChunkSlots - 1));
  }
}

int64_t TimeBitmap::CountSlots(int64_t from, int64_t to, const TimeBitmap* other) const {
  int64_t count = 0;
  // Every word counted is one of ours: nothing lies past our last chunk, and
  // a chunk never allocated counts 0.
  to = std::min(to, static_cast<int64_t>(chunks_.size()) << kChunkBits);
  for (int64_t s = from; s < to;) {
    int64_t chunk_end = std::min(to, (s | (kChunkSlots - 1)) + 1);
    int64_t k = s & (kChunkSlots - 1);
    int64_t k_end = k + (chunk_end - s);
    const int64_t at = s;
    s = chunk_end;
    // Each side as words, or runs, or neither (nothing set in this chunk).
    const uint64_t* a = ChunkAt(at);
    const Runs* a_runs = a == nullptr ? RunsAt(at) : nullptr;
    if (a == nullptr && a_runs == nullptr) continue;
    if (other == nullptr) {
      count += a != nullptr ? CountWords(a, a, k, k_end) : CountRuns(*a_runs, nullptr, k, k_end);
      continue;
    }
    const uint64_t* b = other->ChunkAt(at);
    const Runs* b_runs = b == nullptr ? other->RunsAt(at) : nullptr;
    if (a != nullptr && b != nullptr) {
      count += CountWords(a, b, k, k_end);
    } else if (a_runs != nullptr && b != nullptr) {
      count += CountRuns(*a_runs, b, k, k_end);
    } else if (a != nullptr && b_runs != nullptr) {
      count += CountRuns(*b_runs, a, k, k_end);
    } else if (a_runs != nullptr && b_runs != nullptr) {
      count += CountRunsBoth(*a_runs, *b_runs, k, k_end);
    }
  }
  return count;
}

int64_t TimeBitmap::Count(int64_t start_ns, int64_t end_ns) const {
  if (end_ns <= start_ns) return 0;
  int64_t from = SlotOf(start_ns), to = SlotOf(end_ns - 1) + 1;
  return resolution_ns_ * CountSlots(from, to, nullptr);
}

int64_t TimeBitmap::CountBoth(const TimeBitmap& other, int64_t start_ns, int64_t end_ns) const {
  if (end_ns <= start_ns) return 0;
  int64_t from = SlotOf(start_ns), to = SlotOf(end_ns - 1) + 1;
  return resolution_ns_ * CountSlots(from, to, &other);
}

int64_t TimeBitmap::LastBusyEnd(int64_t start_ns, int64_t end_ns) const {
  if (end_ns <= start_ns) return -1;
  int64_t from = SlotOf(start_ns);
  int64_t to = std::min(SlotOf(end_ns - 1) + 1, static_cast<int64_t>(chunks_.size()) << kChunkBits);
  // Backwards a word at a time: the window's last slot is to - 1.
  for (int64_t s = to - 1; s >= from;) {
    const uint64_t* words = ChunkAt(s);
    int64_t chunk_first = s & ~(kChunkSlots - 1);
    if (words == nullptr) {
      if (const Runs* runs = RunsAt(s)) {
        // The last run that starts at or before s; if it ends before the
        // window, so do the runs before it.
        int64_t k = s - chunk_first;
        auto it = std::partition_point(runs->begin(), runs->end(),
                                       [k](uint32_t run) { return First(run) <= k; });
        if (it != runs->begin() && chunk_first + Last(*--it) >= from) {
          int64_t slot = chunk_first + std::min(k, Last(*it));
          return std::min(end_ns, origin_ns_ + (slot + 1) * resolution_ns_);
        }
      }
      s = chunk_first - 1;
      continue;
    }
    int64_t k = s & (kChunkSlots - 1);
    int bit = static_cast<int>(k & 63);
    uint64_t mask = bit == 63 ? ~uint64_t{0} : (uint64_t{1} << (bit + 1)) - 1;
    // Slots below `from` in the window's first word are not ours.
    int64_t word_first = s - bit;
    if (word_first < from) mask &= ~uint64_t{0} << (from - word_first);
    uint64_t busy = words[k >> 6] & mask;
    if (busy != 0) {
      int64_t slot = word_first + (63 - __builtin_clzll(busy));
      return std::min(end_ns, origin_ns_ + (slot + 1) * resolution_ns_);
    }
    s = word_first - 1;
  }
  return -1;
}

int64_t TimeBitmap::Total() const {
  int64_t count = 0;
  for (const Chunk& c : chunks_) {
    if (!c) continue;
    for (int w = 0; w < kWords; ++w) count += PopCount(c[w]);
  }
  for (const Runs& runs : runs_) {
    for (uint32_t run : runs) count += Last(run) - First(run) + 1;
  }
  return count * resolution_ns_;
}

void TimeBitmap::Or(const TimeBitmap& other) {
  for (size_t c = 0; c < other.chunks_.size(); ++c) {
    if (other.chunks_[c]) {
      OrChunk(c, other.chunks_[c].get());
    } else if (const Runs* runs = other.chunk_runs(c)) {
      OrRuns(c, *runs);
    }
  }
}

size_t TimeBitmap::memory_bytes() const {
  size_t n = 0;
  for (const Chunk& c : chunks_) n += c ? kWords * sizeof(uint64_t) : 0;
  for (const Runs& runs : runs_) n += runs.capacity() * sizeof(uint32_t);
  return n + chunks_.capacity() * sizeof(Chunk) + runs_.capacity() * sizeof(Runs);
}

void TimeSpans::Spill() {
  if (!bitmap_) bitmap_ = std::make_unique<TimeBitmap>(origin_ns_, resolution_ns_);
  for (const auto& [start, end] : intervals_) bitmap_->Set(start, end);
  intervals_.clear();
}

void TimeBitmap::SetInto(TimeBitmap* into) const {
  if (into->origin_ns_ == origin_ns_ && into->resolution_ns_ == resolution_ns_) {
    into->Or(*this);
    return;
  }
  for (size_t c = 0; c < chunks_.size(); ++c) {
    const int64_t chunk_first = static_cast<int64_t>(c) << kChunkBits;
    if (const Runs* runs = chunk_runs(c)) {
      // A run's slots make one interval: it sets in `into` what they would
      // one by one.
      for (uint32_t run : *runs) {
        into->Set(origin_ns_ + (chunk_first + First(run)) * resolution_ns_,
                  origin_ns_ + (chunk_first + Last(run) + 1) * resolution_ns_);
      }
    }
    if (!chunks_[c]) continue;
    for (int w = 0; w < kWords; ++w) {
      for (uint64_t bits = chunks_[c][w]; bits != 0; bits &= bits - 1) {
        int64_t slot = (static_cast<int64_t>(c) << kChunkBits) + w * 64 + std::countr_zero(bits);
        int64_t t = origin_ns_ + slot * resolution_ns_;
        into->Set(t, t + resolution_ns_);
      }
    }
  }
}

void TimeSpans::Absorb(const TimeSpans& other) {
  if (other.bitmap_) {
    if (!bitmap_) bitmap_ = std::make_unique<TimeBitmap>(origin_ns_, resolution_ns_);
    other.bitmap_->SetInto(bitmap_.get());
  }
  for (const auto& [start, end] : other.intervals_) Add(start, end);
}

void TimeSpans::SetInto(TimeBitmap* into) const {
  if (bitmap_) bitmap_->SetInto(into);
  into->SetAll(intervals_);
}

int64_t ChooseResolution(int64_t duration_ns, int64_t max_bytes) {
  int64_t resolution = 1000;
  while (duration_ns / resolution / 8 > max_bytes) resolution *= 2;
  return resolution;
}

}  // namespace iotap::analyzer
