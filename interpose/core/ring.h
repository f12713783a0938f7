// Per-thread event rings: the shim's hot path.
//
// Each recording thread owns one Ring, a single-producer single-consumer
// queue of fixed-size RawEvents. The owner appends without locks: it fills
// the slot at `head` and publishes it with a release store. A consumer (the
// writer thread, or the owner itself when the ring is full) drains
// [tail, head) while holding the writer lock, then advances `tail` with a
// release store, which hands the slots back to the owner.
//
// Rings are never freed. When a thread exits, its ring is marked orphaned;
// the writer drains it and marks it free for the next new thread, so memory is
// bounded by the largest number of threads that were recording at once.

#ifndef IOTAP_INTERPOSE_CORE_RING_H_
#define IOTAP_INTERPOSE_CORE_RING_H_

#include <stdint.h>

#include <atomic>

namespace iotap::interpose {

// One recorded call, before encoding. Times are raw (see clock.h).
struct RawEvent {
  uint64_t t0;
  uint64_t t1;
  int64_t offset;
  uint64_t requested;
  int64_t result;
  uint64_t aux;
  uint64_t parent;
  uint32_t file;
  uint16_t op;
  uint16_t error;
  uint16_t flags;
};

enum RingState : uint32_t {
  kRingFree = 0,
  kRingOwned = 1,
  kRingOrphaned = 2,  // owner exited; drain, then free
};

struct Ring {
  // Written by the owner only.
  alignas(64) std::atomic<uint64_t> head{0};
  uint64_t tail_seen = 0;  // owner's last look at `tail`
  std::atomic<uint64_t> dropped{0};

  // Written by consumers only, under the writer lock.
  alignas(64) std::atomic<uint64_t> tail{0};
  uint64_t dropped_reported = 0;

  // Identity, set when a thread takes the ring.
  alignas(64) std::atomic<uint32_t> state{kRingFree};
  uint32_t tid = 0;
  uint64_t seq_origin = 0;  // head when the current owner took the ring

  uint32_t capacity = 0;  // power of two
  // The events' times are CLOCK_MONOTONIC ns already (events the writer
  // made from the kernel's samples), not raw time stamps.
  bool monotonic_times = false;
  RawEvent* events = nullptr;
  Ring* next = nullptr;   // registry list, never unlinked
};

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CORE_RING_H_
