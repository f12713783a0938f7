// Time as a sparse bitmap at a fixed resolution: which instants of a run
// something was busy. Unions across processes become ORs, and "how much of
// the loaders' I/O happened while the trainer waited" a count of set bits in
// a window, whatever order the processes were read in.
//
//   TimeBitmap io(run_start_ns, /*resolution_ns=*/1000);
//   io.Set(start_ns, end_ns);              // any order, overlaps fine
//   io.Count(window_start, window_end);    // busy ns inside the window
//
// An interval covers the slots its time touches, rounded outward; with the
// resolution of 1 us the analyzer uses for runs up to about an hour, counts
// are exact for times on microsecond boundaries and otherwise within one
// resolution per interval. Memory is 8 KiB per 65,536 slots that hold
// anything (chunks are allocated on first use).
//
// Compact() keeps each chunk of few runs of set slots (at most kMaxRuns) as
// its runs instead, 4 bytes a run: busy time that a process wrote down is
// mostly long runs with long gaps between, so a run's state merged from many
// processes (analyzer/merge/shared_run.h) takes a fraction of the words.
// Every query answers the same in either form; a Set into a chunk of runs
// turns it back into words.

#ifndef IOTAP_ANALYZER_ACCUMULATE_TIME_BITMAP_H_
#define IOTAP_ANALYZER_ACCUMULATE_TIME_BITMAP_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"

namespace iotap::analyzer {

class TimeBitmap {
 public:
  TimeBitmap(int64_t origin_ns, int64_t resolution_ns);

  void Set(int64_t start_ns, int64_t end_ns);
  // Set of each interval [first, second), in order; cheapest when
  // consecutive ones mostly fall in one chunk, as a process's do.
  void SetAll(const std::vector<std::pair<int64_t, int64_t>>& intervals);
  // Busy time in [start_ns, end_ns), in ns (slots x resolution).
  int64_t Count(int64_t start_ns, int64_t end_ns) const;
  // Busy time in [start_ns, end_ns) where `other` is busy too.
  int64_t CountBoth(const TimeBitmap& other, int64_t start_ns, int64_t end_ns) const;
  int64_t Total() const;
  // The end of the last busy slot in [start_ns, end_ns), at most end_ns;
  // -1 if nothing in the window is busy.
  int64_t LastBusyEnd(int64_t start_ns, int64_t end_ns) const;
  // Sets every slot `other` has set (same origin and resolution).
  void Or(const TimeBitmap& other);
  // Sets in `into` (any origin and resolution) the instants set here: Or()
  // where both agree, slot by slot otherwise.
  void SetInto(TimeBitmap* into) const;

  int64_t resolution_ns() const { return resolution_ns_; }
  int64_t origin_ns() const { return origin_ns_; }
  size_t memory_bytes() const;

  // Keeps every chunk of at most kMaxRuns runs as its runs (and frees the
  // chunks with nothing set).
  void Compact();

  // The bitmap chunk by chunk, for copying it between processes: chunk k
  // holds slots [k * 65,536, (k + 1) * 65,536), as kChunkWords words
  // (chunk(k)), as runs (chunk_runs(k)), or not at all (both null: nothing
  // set). A run is the chunk's slots first..last (both included) as
  // RunOf(first, last); a chunk's runs are sorted, apart (a clear slot
  // between two) and never empty.
  static constexpr size_t kChunkWords = size_t{1} << 10;
  static constexpr int64_t kChunkSlots = int64_t{1} << 16;
  static constexpr size_t kMaxRuns = 1024;  // 4 KiB, half the words
  // Chunks past this hold slots that are never set (kMaxSlots).
  static constexpr size_t kMaxChunks = size_t{1} << 15;
  static constexpr uint32_t RunOf(uint32_t first, uint32_t last) { return first << 16 | last; }
  static constexpr uint32_t RunFirst(uint32_t run) { return run >> 16; }
  static constexpr uint32_t RunLast(uint32_t run) { return run & 0xffff; }
  size_t chunk_count() const { return chunks_.size(); }
  const uint64_t* chunk(size_t k) const { return chunks_[k].get(); }
  const std::vector<uint32_t>* chunk_runs(size_t k) const {
    return k < runs_.size() && !runs_[k].empty() ? &runs_[k] : nullptr;
  }
  // Sets the slots of chunk k (< kMaxChunks) that `words` (kChunkWords of
  // them) set.
  void OrChunk(size_t k, const uint64_t* words);
  // Sets the slots of chunk k (< kMaxChunks) of `runs` (sorted and apart,
  // as chunk_runs gives them).
  void OrRuns(size_t k, const std::vector<uint32_t>& runs);

 private:
  static constexpr int kChunkBits = 16;  // 65,536 slots per chunk
  static constexpr int kWords = kChunkSlots / 64;
  static_assert(kWords == kChunkWords && kChunkSlots == int64_t{1} << kChunkBits);
  using Chunk = std::unique_ptr<uint64_t[]>;
  using Runs = std::vector<uint32_t>;

  int64_t SlotOf(int64_t t) const;
  // The quotient d / resolution_ns_ for d >= 0, by multiplying.
  int64_t Divide(int64_t d) const;
  uint64_t* ChunkFor(int64_t slot);
  const uint64_t* ChunkAt(int64_t slot) const;
  const Runs* RunsAt(int64_t slot) const {
    size_t c = static_cast<size_t>(slot >> kChunkBits);
    return chunk_runs(c);
  }
  // Chunk c as words again (it holds runs).
  uint64_t* Expand(size_t c);
  // Set slots in [from, to), of this bitmap and, if given, of `other` too.
  int64_t CountSlots(int64_t from, int64_t to, const TimeBitmap* other) const;

  int64_t origin_ns_;
  int64_t resolution_ns_;
  double inverse_resolution_;
  std::vector<Chunk> chunks_;
  // Chunk c's runs, where chunks_[c] is null; empty until Compact().
  std::vector<Runs> runs_;
};

// Busy intervals on their way into TimeBitmaps: what one process's file adds
// to the run's bitmaps, kept until the file has been read whole (a file that
// turns out unreadable adds nothing). A list while it is short, so a process
// costs memory for its calls rather than for the length of the run; past
// kMaxIntervals, a bitmap of its own, so memory stays bounded.
//
//   TimeSpans io(run_start_ns, 1000);
//   io.Add(start_ns, end_ns);      // as TimeBitmap::Set
//   io.SetInto(&run_bitmap);       // as run_bitmap.Or(bitmap of the Adds)
class TimeSpans {
 public:
  TimeSpans(int64_t origin_ns, int64_t resolution_ns)
      : origin_ns_(origin_ns), resolution_ns_(resolution_ns) {}

  // Inline: every call of a process's analysis adds one.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Add(int64_t start_ns, int64_t end_ns) {
    if (end_ns <= start_ns) return;
    // An interval that starts less than a slot after the last one ends sets
    // no other slots when joined to it: no whole slot fits in the gap. The
    // process's union hands its segments on in order, mostly such neighbours.
    if (!intervals_.empty()) {
      std::pair<int64_t, int64_t>& last = intervals_.back();
      if (start_ns >= last.first && start_ns - last.second < resolution_ns_) {
        last.second = std::max(last.second, end_ns);
        return;
      }
    }
    if (intervals_.size() == kMaxIntervals) Spill();
    intervals_.push_back({start_ns, end_ns});
  }
  // Room for `n` more intervals in one allocation, for a caller that knows
  // how many are coming (a union handing its segments on all at once).
  void Reserve(size_t n) {
    intervals_.reserve(std::min(kMaxIntervals, intervals_.size() + n));
  }
  // Sets every slot the Adds cover in `into` (same origin and resolution).
  void SetInto(TimeBitmap* into) const;
  // Adds what `other` (any origin) holds, as if its Adds were made here.
  void Absorb(const TimeSpans& other);

 private:
  static constexpr size_t kMaxIntervals = size_t{1} << 18;  // 4 MiB
  void Spill();

  int64_t origin_ns_;
  int64_t resolution_ns_;
  std::vector<std::pair<int64_t, int64_t>> intervals_;
  std::unique_ptr<TimeBitmap> bitmap_;  // intervals spilled so far
};

// The resolution for a run of `duration_ns`: 1 us, coarser only if the run
// is so long that a dense bitmap of it would pass `max_bytes`.
int64_t ChooseResolution(int64_t duration_ns, int64_t max_bytes = int64_t{256} << 20);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ACCUMULATE_TIME_BITMAP_H_
