#include "interpose/cuda/pinned_ranges.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>

namespace iotap::interpose {
namespace {

// Memory ordering (the seqlock of Boehm, "Can seqlocks get along with
// programming language memory models?", 2012): the writer stores the odd
// sequence, then a release fence, then the data (relaxed), then the even
// sequence with release. A reader loads the sequence with acquire, the data
// (relaxed), then an acquire fence and the sequence again: if both reads are
// the same even number, no write overlapped the data it read. The data are
// atomics only so that the benign race is not undefined behaviour; on x86
// and ARM a relaxed load is a plain load.
struct Table {
  std::atomic<uint32_t> sequence{0};
  std::atomic<uint32_t> count{0};
  std::atomic<bool> overflowed{false};
  std::atomic<uint64_t> begin[kMaxPinnedRanges] = {};
  std::atomic<uint64_t> end[kMaxPinnedRanges] = {};
};
constinit Table g_table;

// Serialises writers. Held only while a few kilobytes move, never on the
// copy path; fork handlers keep it consistent in a child.
constinit pthread_mutex_t g_write_lock = PTHREAD_MUTEX_INITIALIZER;
constinit std::atomic<bool> g_fork_handlers{false};

// A reader that keeps meeting a writer gives up rather than spin (it may be
// a signal handler that interrupted the writer on its own thread).
constexpr int kMaxReadAttempts = 64;

void LockForFork() { pthread_mutex_lock(&g_write_lock); }
void UnlockAfterFork() { pthread_mutex_unlock(&g_write_lock); }

void LockWriter() {
  if (!g_fork_handlers.exchange(true, std::memory_order_acq_rel)) {
    pthread_atfork(LockForFork, UnlockAfterFork, UnlockAfterFork);
  }
  pthread_mutex_lock(&g_write_lock);
  uint32_t s = g_table.sequence.load(std::memory_order_relaxed);
  g_table.sequence.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
}

void UnlockWriter() {
  uint32_t s = g_table.sequence.load(std::memory_order_relaxed);
  g_table.sequence.store(s + 1, std::memory_order_release);
  pthread_mutex_unlock(&g_write_lock);
}

// Index of the first range whose begin is greater than `p` (the reader's and
// the writer's binary search).
uint32_t UpperBound(uint32_t n, uint64_t p) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (g_table.begin[mid].load(std::memory_order_relaxed) <= p) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Moves ranges [from, n) by `shift` places (writer only).
void Shift(uint32_t from, uint32_t n, int shift) {
  auto move = [](uint32_t dst, uint32_t src) {
    g_table.begin[dst].store(g_table.begin[src].load(std::memory_order_relaxed),
                             std::memory_order_relaxed);
    g_table.end[dst].store(g_table.end[src].load(std::memory_order_relaxed),
                           std::memory_order_relaxed);
  };
  if (shift > 0) {
    for (uint32_t i = n; i > from; --i) move(i - 1 + shift, i - 1);
  } else {
    for (uint32_t i = from; i < n; ++i) move(i + shift, i);
  }
}

}  // namespace

void PinnedAdd(uintptr_t begin, uint64_t bytes) {
  if (bytes == 0) return;
  uint64_t end = begin + bytes < begin ? UINT64_MAX : begin + bytes;
  LockWriter();
  uint32_t n = g_table.count.load(std::memory_order_relaxed);
  // Ranges overlapping [begin, end) are [first, last).
  uint32_t last = n == 0 ? 0 : UpperBound(n, end - 1);
  uint32_t first = last;
  while (first > 0 && g_table.end[first - 1].load(std::memory_order_relaxed) > begin) --first;
  uint32_t stale = last - first;
  if (n - stale >= kMaxPinnedRanges) {
    g_table.overflowed.store(true, std::memory_order_relaxed);
  } else {
    Shift(last, n, 1 - static_cast<int>(stale));
    g_table.begin[first].store(begin, std::memory_order_relaxed);
    g_table.end[first].store(end, std::memory_order_relaxed);
    g_table.count.store(n - stale + 1, std::memory_order_relaxed);
  }
  UnlockWriter();
}

uint64_t PinnedRemove(uintptr_t begin) {
  LockWriter();
  uint32_t n = g_table.count.load(std::memory_order_relaxed);
  uint32_t i = UpperBound(n, begin);
  uint64_t bytes = 0;
  if (i > 0 && g_table.begin[i - 1].load(std::memory_order_relaxed) == begin) {
    bytes = g_table.end[i - 1].load(std::memory_order_relaxed) - begin;
    Shift(i, n, -1);
    g_table.count.store(n - 1, std::memory_order_relaxed);
  }
  UnlockWriter();
  return bytes;
}

HostMemory PinnedLookup(uintptr_t p) {
  for (int attempt = 0; attempt < kMaxReadAttempts; ++attempt) {
    uint32_t before = g_table.sequence.load(std::memory_order_acquire);
    if (before & 1) {
      sched_yield();
      continue;
    }
    uint32_t n = g_table.count.load(std::memory_order_relaxed);
    if (n > kMaxPinnedRanges) n = kMaxPinnedRanges;  // torn read; retried below
    uint32_t i = n == 0 ? 0 : UpperBound(n, p);
    bool pinned = i > 0 && p < g_table.end[i - 1].load(std::memory_order_relaxed);
    bool overflowed = g_table.overflowed.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (g_table.sequence.load(std::memory_order_relaxed) == before) {
      if (pinned) return HostMemory::kPinned;
      return overflowed ? HostMemory::kUnknown : HostMemory::kPageable;
    }
  }
  return HostMemory::kUnknown;
}

void PinnedResetForTesting() {
  LockWriter();
  g_table.count.store(0, std::memory_order_relaxed);
  g_table.overflowed.store(false, std::memory_order_relaxed);
  UnlockWriter();
}

}  // namespace iotap::interpose
