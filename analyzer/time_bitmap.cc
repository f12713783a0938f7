#include "analyzer/time_bitmap.h"

#include <algorithm>
#include <bit>

namespace iotap::analyzer {

namespace {

// Slots past this are never set or counted. ChooseResolution keeps a whole
// run within it (256 MiB of bits); only damaged times fall beyond, and they
// must neither take memory nor make a count scan all the way to them.
constexpr int64_t kMaxSlots = int64_t{256} << 23;

}  // namespace

TimeBitmap::TimeBitmap(int64_t origin_ns, int64_t resolution_ns)
    : origin_ns_(origin_ns), resolution_ns_(std::max<int64_t>(1, resolution_ns)) {}

int64_t TimeBitmap::SlotOf(int64_t t) const {
  int64_t d = t - origin_ns_;
  // Floor division, also for times before the origin (clamped to slot 0).
  return d <= 0 ? 0 : d / resolution_ns_;
}

uint64_t* TimeBitmap::ChunkFor(int64_t slot) {
  size_t c = static_cast<size_t>(slot >> kChunkBits);
  if (c >= chunks_.size()) chunks_.resize(c + 1);
  if (!chunks_[c]) chunks_[c] = Chunk(new uint64_t[kWords]());
  return chunks_[c].get();
}

const uint64_t* TimeBitmap::ChunkAt(int64_t slot) const {
  size_t c = static_cast<size_t>(slot >> kChunkBits);
  return c < chunks_.size() ? chunks_[c].get() : nullptr;
}

void TimeBitmap::Set(int64_t start_ns, int64_t end_ns) {
  if (end_ns <= start_ns) return;
  int64_t from = SlotOf(start_ns);
  // The last slot the interval touches: end is exclusive.
  int64_t to = std::min(SlotOf(end_ns - 1) + 1, kMaxSlots);
  for (int64_t s = from; s < to;) {
    uint64_t* chunk = ChunkFor(s);
    int64_t in_chunk = s & (kChunkSlots - 1);
    int64_t chunk_end = std::min(to, (s | (kChunkSlots - 1)) + 1);
    for (int64_t k = in_chunk; k < in_chunk + (chunk_end - s);) {
      int bit = static_cast<int>(k & 63);
      int64_t n = std::min<int64_t>(64 - bit, in_chunk + (chunk_end - s) - k);
      uint64_t mask = n == 64 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1) << bit;
      chunk[k >> 6] |= mask;
      k += n;
    }
    s = chunk_end;
  }
}

template <typename WordFn>
int64_t TimeBitmap::CountSlots(int64_t from, int64_t to, WordFn word) const {
  int64_t count = 0;
  // Every word counted is one of ours: nothing lies past our last chunk, and
  // a chunk never allocated counts 0.
  to = std::min(to, static_cast<int64_t>(chunks_.size()) << kChunkBits);
  for (int64_t s = from; s < to;) {
    int64_t chunk_end = std::min(to, (s | (kChunkSlots - 1)) + 1);
    if (ChunkAt(s) == nullptr) {
      s = chunk_end;
      continue;
    }
    int64_t k = s & (kChunkSlots - 1);
    int64_t k_end = k + (chunk_end - s);
    while (k < k_end) {
      int bit = static_cast<int>(k & 63);
      int64_t n = std::min<int64_t>(64 - bit, k_end - k);
      uint64_t mask = n == 64 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1) << bit;
      count += std::popcount(word(s, k >> 6) & mask);
      k += n;
    }
    s = chunk_end;
  }
  return count;
}

int64_t TimeBitmap::Count(int64_t start_ns, int64_t end_ns) const {
  if (end_ns <= start_ns) return 0;
  int64_t from = SlotOf(start_ns), to = SlotOf(end_ns - 1) + 1;
  return resolution_ns_ * CountSlots(from, to, [&](int64_t slot, int64_t w) -> uint64_t {
           const uint64_t* c = ChunkAt(slot);
           return c ? c[w] : 0;
         });
}

int64_t TimeBitmap::CountBoth(const TimeBitmap& other, int64_t start_ns, int64_t end_ns) const {
  if (end_ns <= start_ns) return 0;
  int64_t from = SlotOf(start_ns), to = SlotOf(end_ns - 1) + 1;
  return resolution_ns_ * CountSlots(from, to, [&](int64_t slot, int64_t w) -> uint64_t {
           const uint64_t* a = ChunkAt(slot);
           const uint64_t* b = other.ChunkAt(slot);
           return a && b ? a[w] & b[w] : 0;
         });
}

int64_t TimeBitmap::Total() const {
  int64_t count = 0;
  for (const Chunk& c : chunks_) {
    if (!c) continue;
    for (int w = 0; w < kWords; ++w) count += std::popcount(c[w]);
  }
  return count * resolution_ns_;
}

void TimeBitmap::Or(const TimeBitmap& other) {
  for (size_t c = 0; c < other.chunks_.size(); ++c) {
    if (!other.chunks_[c]) continue;
    uint64_t* mine = ChunkFor(static_cast<int64_t>(c) << kChunkBits);
    for (int w = 0; w < kWords; ++w) mine[w] |= other.chunks_[c][w];
  }
}

size_t TimeBitmap::memory_bytes() const {
  size_t n = 0;
  for (const Chunk& c : chunks_) n += c ? kWords * sizeof(uint64_t) : 0;
  return n + chunks_.capacity() * sizeof(Chunk);
}

int64_t ChooseResolution(int64_t duration_ns, int64_t max_bytes) {
  int64_t resolution = 1000;
  while (duration_ns / resolution / 8 > max_bytes) resolution *= 2;
  return resolution;
}

}  // namespace iotap::analyzer
