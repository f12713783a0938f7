#include "interpose/core/recorder.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <new>

#include "interpose/core/raw_syscall.h"

namespace iotap::interpose {

constinit __thread ThreadState tls_thread __attribute__((tls_model("initial-exec"))) = {};
constinit std::atomic<uint32_t> g_active_layers{0};
constinit Config g_config;
constinit WriterHooks g_writer_hooks = {};

namespace {

constinit std::atomic<Ring*> g_rings{nullptr};
constinit pthread_mutex_t g_ring_lock = PTHREAD_MUTEX_INITIALIZER;  // allocation only
pthread_key_t g_thread_key;
constinit std::atomic<uint64_t> g_dropped_without_ring{0};

// The writer thread's sleep: WakeWriter bumps g_wake, and calls the kernel
// only while the writer is asleep.
constinit std::atomic<uint32_t> g_wake{0};
constinit std::atomic<bool> g_writer_sleeping{false};
constinit std::atomic<bool> g_warned{false};
// Set on a thread whose descriptor table has no stderr (the writer's).
constinit __thread bool t_warnings_deferred __attribute__((tls_model("initial-exec"))) = false;
// Such a thread's warning: the next application thread through the shim's
// slow path prints it (PrintDeferredWarning).
constinit char g_deferred_warning[512];
constinit std::atomic<size_t> g_deferred_warning_size{0};

void ThreadExited(void* ring) {
  static_cast<Ring*>(ring)->state.store(kRingOrphaned, std::memory_order_release);
  tls_thread.ring = nullptr;
}

Ring* NewRing() {
  uint32_t capacity = g_config.buffer_events;
  void* mem = mmap(nullptr, sizeof(Ring) + sizeof(RawEvent) * capacity, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return nullptr;
  Ring* ring = new (mem) Ring();
  ring->capacity = capacity;
  ring->events = reinterpret_cast<RawEvent*>(static_cast<uint8_t*>(mem) + sizeof(Ring));
  Ring* head = g_rings.load(std::memory_order_relaxed);
  do {
    ring->next = head;
  } while (!g_rings.compare_exchange_weak(head, ring, std::memory_order_acq_rel));
  return ring;
}

Ring* AcquireRing() {
  for (Ring* r = g_rings.load(std::memory_order_acquire); r != nullptr; r = r->next) {
    uint32_t expected = kRingFree;
    if (r->state.compare_exchange_strong(expected, kRingOwned, std::memory_order_acq_rel)) {
      return r;
    }
  }
  pthread_mutex_lock(&g_ring_lock);
  Ring* ring = NewRing();
  if (ring != nullptr) ring->state.store(kRingOwned, std::memory_order_release);
  pthread_mutex_unlock(&g_ring_lock);
  return ring;
}

}  // namespace

// --- Hot path helpers ------------------------------------------------------------

RawEvent* ReserveEventSlow(ThreadState* ts) {
  if (!Recording()) return nullptr;
  if (ts->ring == nullptr) {
    Ring* ring = AcquireRing();
    if (ring == nullptr) {
      g_dropped_without_ring.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    ring->tid = static_cast<uint32_t>(RawSyscall(SYS_gettid));
    ring->seq_origin = ring->head.load(std::memory_order_relaxed);
    ring->tail_seen = ring->tail.load(std::memory_order_acquire);
    ts->ring = ring;
    pthread_setspecific(g_thread_key, ring);
    g_writer_hooks.ring_taken();
  }
  Ring* r = ts->ring;
  uint64_t h = r->head.load(std::memory_order_relaxed);
  r->tail_seen = r->tail.load(std::memory_order_acquire);
  if (h - r->tail_seen >= r->capacity) {
    // Full: drain it ourselves rather than lose events.
    g_writer_hooks.ring_full(r, h);
    r->tail_seen = r->tail.load(std::memory_order_acquire);
  } else if (h - r->tail_seen >= r->capacity / 2) {
    // The writer freed only part of the ring since it was last woken, and
    // CommitEvent wakes it only when the fill level passes exactly half:
    // wake it now, or this thread would fill the ring and drain it itself.
    WakeWriter(ts);
  }
  return &r->events[h & (r->capacity - 1)];
}

void WakeWriter(ThreadState* ts) {
  if (g_deferred_warning_size.load(std::memory_order_relaxed) != 0) PrintDeferredWarning();
  Ring* r = ts->ring;
  r->tail_seen = r->tail.load(std::memory_order_acquire);
  if (r->head.load(std::memory_order_relaxed) - r->tail_seen < r->capacity / 2) return;
  WakeWriterNow();
}

void WakeWriterNow() {
  g_wake.fetch_add(1, std::memory_order_release);
  if (g_writer_sleeping.load(std::memory_order_seq_cst)) {
    RawSyscall(SYS_futex, &g_wake, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  }
}

void CountDropped(ThreadState* ts) {
  if (ts->ring != nullptr) {
    ts->ring->dropped.fetch_add(1, std::memory_order_relaxed);
  } else {
    g_dropped_without_ring.fetch_add(1, std::memory_order_relaxed);
  }
}

// --- The writer's side -------------------------------------------------------------

void SetWriterHooks(const WriterHooks& hooks) { g_writer_hooks = hooks; }

bool PrepareRings() { return pthread_key_create(&g_thread_key, ThreadExited) == 0; }

Ring* AllRings() { return g_rings.load(std::memory_order_acquire); }

uint64_t DroppedWithoutRing() { return g_dropped_without_ring.load(std::memory_order_relaxed); }

void WaitForWake(uint64_t timeout_ns) {
  struct timespec ts = {static_cast<time_t>(timeout_ns / 1000000000ull),
                        static_cast<long>(timeout_ns % 1000000000ull)};
  uint32_t seen = g_wake.load(std::memory_order_acquire);
  g_writer_sleeping.store(true, std::memory_order_seq_cst);
  RawSyscall(SYS_futex, &g_wake, FUTEX_WAIT_PRIVATE, seen, &ts, nullptr, 0);
  g_writer_sleeping.store(false, std::memory_order_relaxed);
}

// --- Fork ----------------------------------------------------------------------------

void LockRingsForFork() { pthread_mutex_lock(&g_ring_lock); }

void UnlockRingsAfterFork(bool child) {
  if (!child) {
    pthread_mutex_unlock(&g_ring_lock);
    return;
  }
  pthread_mutex_init(&g_ring_lock, nullptr);
  for (Ring* r = g_rings.load(std::memory_order_relaxed); r != nullptr; r = r->next) {
    r->tail.store(r->head.load(std::memory_order_relaxed), std::memory_order_relaxed);
    r->dropped_reported = r->dropped.load(std::memory_order_relaxed);
    r->state.store(kRingFree, std::memory_order_relaxed);
  }
  g_dropped_without_ring.store(0, std::memory_order_relaxed);
  tls_thread.ring = nullptr;
  g_writer_sleeping.store(false, std::memory_order_relaxed);
  g_deferred_warning_size.store(0, std::memory_order_relaxed);
}

void WarnOnce(const char* what, int err) {
  if (g_config.quiet || g_warned.exchange(true)) return;
  char msg[512];
  int n = err != 0 ? snprintf(msg, sizeof(msg), "iotap: %s (%s)\n", what, strerrordesc_np(err))
                   : snprintf(msg, sizeof(msg), "iotap: %s\n", what);
  if (n <= 0) return;
  size_t size = static_cast<size_t>(n < 512 ? n : 511);
  if (t_warnings_deferred) {
    memcpy(g_deferred_warning, msg, size);
    g_deferred_warning_size.store(size, std::memory_order_release);
  } else {
    RawSyscall(SYS_write, 2, msg, size);
  }
}

void DeferWarnings() { t_warnings_deferred = true; }

void PrintDeferredWarning() {
  size_t n = g_deferred_warning_size.exchange(0, std::memory_order_acquire);
  if (n != 0) RawSyscall(SYS_write, 2, g_deferred_warning, n);
}

}  // namespace iotap::interpose
