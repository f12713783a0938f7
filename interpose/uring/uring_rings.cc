#include "interpose/uring/uring_rings.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include <atomic>

#include "interpose/core/fd_table.h"
#include "interpose/core/io_event.h"
#include "interpose/uring/uring_requests.h"

#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY (1U << 16)
#endif

namespace iotap::interpose {

namespace {

struct UringEntry {
  bool used;
  int fd;
  uint32_t file;
  struct io_uring_params params;  // raw rings only
  bool raw;
  uint8_t* sq_ring;  // where the program mapped IORING_OFF_SQ_RING
  size_t sq_ring_size;
  uint8_t* cq_ring;  // IORING_OFF_CQ_RING, or sq_ring with a single mapping
  size_t cq_ring_size;
  uint8_t* sqes;
  size_t sqes_size;
  QueueState state;
  uint32_t* fixed;  // kMaxFixedFiles interned ids, mapped on first registration
};

struct Table {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  std::atomic<int> count{0};  // rings ever known, for the fast paths
  UringEntry rings[kMaxRings] = {};
};
constinit Table g_table;

// Caller holds the lock.
UringEntry* FindLocked(int fd) {
  for (UringEntry& r : g_table.rings) {
    if (r.used && r.fd == fd) return &r;
  }
  return nullptr;
}

UringEntry* AddLocked(int fd) {
  UringEntry* r = FindLocked(fd);
  if (r != nullptr) return r;
  for (UringEntry& slot : g_table.rings) {
    if (slot.used) continue;
    uint32_t* fixed = slot.fixed;
    slot = UringEntry{};
    slot.fixed = fixed;
    if (fixed != nullptr) memset(fixed, 0, kMaxFixedFiles * sizeof(uint32_t));
    slot.used = true;
    slot.fd = fd;
    slot.file = FileOf(fd);
    g_table.count.fetch_add(1, std::memory_order_release);
    return &slot;
  }
  return nullptr;
}

bool Overlaps(const uint8_t* base, size_t size, uintptr_t lo, uintptr_t hi) {
  uintptr_t b = reinterpret_cast<uintptr_t>(base);
  return base != nullptr && lo < b + size && b < hi;
}

// The view of a raw ring from its parameters and mappings.
RingView RawView(const UringEntry& r) {
  RingView v;
  v.fd = r.fd;
  v.setup_flags = r.params.flags;
  const struct io_sqring_offsets& sq = r.params.sq_off;
  const struct io_cqring_offsets& cq = r.params.cq_off;
  uint8_t* cq_ring = r.cq_ring;
  if (cq_ring == nullptr && (r.params.features & IORING_FEAT_SINGLE_MMAP)) cq_ring = r.sq_ring;
  if (r.sq_ring != nullptr) {
    v.sq_head = reinterpret_cast<const uint32_t*>(r.sq_ring + sq.head);
    v.sq_mask = *reinterpret_cast<const uint32_t*>(r.sq_ring + sq.ring_mask);
    if (!(r.params.flags & IORING_SETUP_NO_SQARRAY)) {
      v.sq_array = reinterpret_cast<const uint32_t*>(r.sq_ring + sq.array);
    }
  }
  v.sqes = r.sqes;
  if (cq_ring != nullptr) {
    v.cq_tail = reinterpret_cast<const uint32_t*>(cq_ring + cq.tail);
    v.cq_mask = *reinterpret_cast<const uint32_t*>(cq_ring + cq.ring_mask);
    v.cqes = cq_ring + cq.cqes;
  }
  return v;
}

// Forgets ring `r`, after a last look at its completions; its requests
// still in flight are handed back as incomplete. Caller holds the lock.
void ForgetLocked(UringEntry* r, const RingView* given, Leftovers* leftovers) {
  RingView v = given != nullptr ? *given : r->raw ? RawView(*r) : RingView{};
  if (v.complete()) CollectCompletionsLocked(v, &r->state, leftovers);
  TakeInflightLocked(r->fd, leftovers);
  // A raw ring's queue head counts every request since setup: those beyond
  // the ones the shim took are requests submitted without a call it saw.
  if (r->raw && v.complete()) {
    uint32_t head = __atomic_load_n(v.sq_head, __ATOMIC_ACQUIRE);
    uint32_t tail = __atomic_load_n(v.cq_tail, __ATOMIC_ACQUIRE);
    AddUnseenLocked(r->fd, r->file, head - r->state.sq_taken, tail, leftovers);
  }
  r->used = false;
}

}  // namespace

void UringRingSetUp(int fd, const struct io_uring_params& params) {
  pthread_mutex_lock(&g_table.lock);
  if (UringEntry* r = AddLocked(fd)) {
    r->params = params;
    r->raw = true;
    r->state = QueueState{0, true, 0};
  }
  pthread_mutex_unlock(&g_table.lock);
}

bool IsUringRing(int fd) {
  if (g_table.count.load(std::memory_order_acquire) == 0) return false;
  pthread_mutex_lock(&g_table.lock);
  bool found = FindLocked(fd) != nullptr;
  pthread_mutex_unlock(&g_table.lock);
  return found;
}

void UringRingMapped(int fd, int64_t offset, void* addr, size_t length) {
  if (g_table.count.load(std::memory_order_acquire) == 0) return;
  pthread_mutex_lock(&g_table.lock);
  if (UringEntry* r = FindLocked(fd)) {
    auto* base = static_cast<uint8_t*>(addr);
    if (static_cast<uint64_t>(offset) == IORING_OFF_SQ_RING) {
      r->sq_ring = base;
      r->sq_ring_size = length;
    } else if (static_cast<uint64_t>(offset) == IORING_OFF_CQ_RING) {
      r->cq_ring = base;
      r->cq_ring_size = length;
    } else if (static_cast<uint64_t>(offset) == IORING_OFF_SQES) {
      r->sqes = base;
      r->sqes_size = length;
    }
  }
  pthread_mutex_unlock(&g_table.lock);
}

void UringRingUnmapping(void* addr, size_t length) {
  if (g_table.count.load(std::memory_order_acquire) == 0) return;
  uintptr_t lo = reinterpret_cast<uintptr_t>(addr);
  uintptr_t hi = lo + length;
  Leftovers leftovers;
  pthread_mutex_lock(&g_table.lock);
  for (UringEntry& r : g_table.rings) {
    if (!r.used || !r.raw) continue;
    if (Overlaps(r.sq_ring, r.sq_ring_size, lo, hi) || Overlaps(r.cq_ring, r.cq_ring_size, lo, hi) ||
        Overlaps(r.sqes, r.sqes_size, lo, hi)) {
      ForgetLocked(&r, nullptr, &leftovers);
    }
  }
  pthread_mutex_unlock(&g_table.lock);
  RecordLeftovers(&leftovers);
}

void UringRingClosing(int fd, const RingView* given) {
  if (g_table.count.load(std::memory_order_acquire) == 0) return;
  Leftovers leftovers;
  pthread_mutex_lock(&g_table.lock);
  if (UringEntry* r = FindLocked(fd)) ForgetLocked(r, given, &leftovers);
  pthread_mutex_unlock(&g_table.lock);
  RecordLeftovers(&leftovers);
}

void UringFilesRegistered(int ring_fd, uint32_t first, const int* fds, uint32_t n) {
  if (fds == nullptr) return;
  pthread_mutex_lock(&g_table.lock);
  UringEntry* r = AddLocked(ring_fd);
  if (r != nullptr && r->fixed == nullptr) {
    void* m = mmap(nullptr, kMaxFixedFiles * sizeof(uint32_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    r->fixed = m == MAP_FAILED ? nullptr : static_cast<uint32_t*>(m);
  }
  if (r != nullptr && r->fixed != nullptr) {
    for (uint32_t i = 0; i < n && first + i < kMaxFixedFiles; ++i) {
      // IORING_REGISTER_FILES_SKIP (-2) leaves a slot as it was.
      if (fds[i] == -2) continue;
      r->fixed[first + i] = fds[i] >= 0 ? FileOf(fds[i]) : 0;
    }
  }
  pthread_mutex_unlock(&g_table.lock);
}

void UringFilesUnregistered(int ring_fd) {
  pthread_mutex_lock(&g_table.lock);
  UringEntry* r = FindLocked(ring_fd);
  if (r != nullptr && r->fixed != nullptr) memset(r->fixed, 0, kMaxFixedFiles * sizeof(uint32_t));
  pthread_mutex_unlock(&g_table.lock);
}

uint32_t UringFixedFile(int ring_fd, uint32_t index) {
  // Called from WithRing's callback: the lock is held.
  UringEntry* r = FindLocked(ring_fd);
  if (r == nullptr || r->fixed == nullptr || index >= kMaxFixedFiles) return 0;
  return r->fixed[index];
}

uint32_t UringRingFile(int ring_fd) {
  pthread_mutex_lock(&g_table.lock);
  UringEntry* r = FindLocked(ring_fd);
  uint32_t file = r != nullptr ? r->file : 0;
  pthread_mutex_unlock(&g_table.lock);
  return file;
}

bool WithRing(int fd, const RingView* given,
              void (*fn)(const RingView& view, QueueState* state, void* context), void* context) {
  pthread_mutex_lock(&g_table.lock);
  UringEntry* r = given != nullptr ? AddLocked(fd) : FindLocked(fd);
  bool ran = false;
  if (r != nullptr) {
    RingView v = given != nullptr ? *given : RawView(*r);
    if (v.complete()) {
      if (!r->state.cq_seen_valid) {
        // First look at a ring made before the shim saw it: what is in the
        // completion queue now was submitted unseen.
        r->state = QueueState{__atomic_load_n(v.cq_tail, __ATOMIC_ACQUIRE), true, 0};
      }
      fn(v, &r->state, context);
      ran = true;
    }
  }
  pthread_mutex_unlock(&g_table.lock);
  return ran;
}

void LockRingsTable() { pthread_mutex_lock(&g_table.lock); }

void UnlockRingsTable() { pthread_mutex_unlock(&g_table.lock); }

void LockRingsTableForFork() { pthread_mutex_lock(&g_table.lock); }

void UnlockRingsTableAfterFork(bool child) {
  if (!child) {
    pthread_mutex_unlock(&g_table.lock);
    return;
  }
  pthread_mutex_init(&g_table.lock, nullptr);
  ForgetInflightInChild();
}

}  // namespace iotap::interpose
