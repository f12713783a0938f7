// The recorder: thread state and the event path of libiotap.so.
//
// Wrappers record through TraceCall (trace_call.h), which uses ReserveEvent
// and CommitEvent below.
//
// Threads: an application thread only appends to its own ring (ring.h). The
// trace writer (file/writer.h), which drains the rings, is told through
// WriterHooks when a thread takes its first ring (its thread then starts)
// and when a ring fills up before the writer came: the filling thread then
// drains it itself under the writer lock rather than drop events.
//
// Lock order: writer lock, then the string table lock, then the ring lock
// (ring allocation only). None is taken on the hot path. The writer and
// string table locks are taken through LockShim/UnlockShim, which keep count
// of them on the thread (see ThreadState::locks).

#ifndef IOTAP_INTERPOSE_CORE_RECORDER_H_
#define IOTAP_INTERPOSE_CORE_RECORDER_H_

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "interpose/core/config.h"
#include "interpose/core/ring.h"

namespace iotap::interpose {

// Per-thread state. Plain __thread data (no C++ TLS wrapper), so access is
// one TLS load.
struct ThreadState {
  Ring* ring;  // null until the thread's first event, and again after fork
  // Set while the shim itself runs on this thread: calls made then (and by
  // signal handlers that interrupt it) pass through unrecorded.
  bool busy;
  // Id of the HDF5 call this thread is inside, for the POSIX events it causes.
  uint64_t parent;
  // The thread's errno (libc's __errno_location()), taken at its first
  // recorded call: the address of a thread's TLS never changes, and a fork
  // child's thread has its parent's layout. Saves a call per event.
  int* errno_location;
  // Shim locks (writer, string table) this thread holds or is about to take.
  // A signal handler runs on whatever thread it interrupts, and handlers do
  // call _exit (torch's DataLoader workers do on SIGTERM): finishing the trace
  // there must not wait for a lock the interrupted code holds, or the process
  // never ends.
  uint32_t locks;
};

extern __thread ThreadState tls_thread __attribute__((tls_model("initial-exec")));

// The layers being recorded (Layer bits); 0 before start-up, when IOTAP_DIR
// is missing or unusable, and in secure-execution processes. One load tells
// a wrapper whether to record.
extern std::atomic<uint32_t> g_active_layers;
extern Config g_config;

inline bool Recording() { return g_active_layers.load(std::memory_order_relaxed) != 0; }

// Takes and releases the writer and string table locks, counting them in
// tls_thread.locks. The count goes up before the lock is requested and down
// after it is released, so a signal handler never sees 0 while this thread is
// anywhere inside pthread_mutex_lock or unlock of a shim lock.
inline void LockShim(pthread_mutex_t* m) {
  ++tls_thread.locks;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  pthread_mutex_lock(m);
}
// Returns false, counting nothing, if the lock is held.
// Waits for the lock until `deadline` (CLOCK_REALTIME); false if it passed.
inline bool TimedLockShim(pthread_mutex_t* m, const struct timespec* deadline) {
  ++tls_thread.locks;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (pthread_mutex_timedlock(m, deadline) == 0) return true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  --tls_thread.locks;
  return false;
}
inline void UnlockShim(pthread_mutex_t* m) {
  pthread_mutex_unlock(m);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  --tls_thread.locks;
}
// In a fork child, where the lock taken by the fork-prepare handler cannot be
// released (its owner was the parent's thread): a fresh lock, no longer held.
inline void ResetShimLockInChild(pthread_mutex_t* m) {
  pthread_mutex_init(m, nullptr);
  --tls_thread.locks;
}

RawEvent* ReserveEventSlow(ThreadState* ts);
void WakeWriter(ThreadState* ts);
// Wakes the writer thread now, whatever the rings hold: something it polls
// has begun (mapped/fault_sampler.cc), and it sleeps until a flush or a
// sample otherwise, up to its sample interval.
void WakeWriterNow();

// Returns the slot for a new event on this thread, or null when the event
// cannot be recorded (it is then counted as dropped). Call only with
// ts->busy set; publish with CommitEvent.
inline RawEvent* ReserveEvent(ThreadState* ts) {
  Ring* r = ts->ring;
  if (__builtin_expect(r == nullptr, 0)) return ReserveEventSlow(ts);
  uint64_t h = r->head.load(std::memory_order_relaxed);
  if (__builtin_expect(h - r->tail_seen >= r->capacity, 0)) return ReserveEventSlow(ts);
  return &r->events[h & (r->capacity - 1)];
}

inline void CommitEvent(ThreadState* ts) {
  Ring* r = ts->ring;
  uint64_t h = r->head.load(std::memory_order_relaxed) + 1;
  r->head.store(h, std::memory_order_release);
  if (__builtin_expect(h - r->tail_seen == r->capacity / 2, 0)) WakeWriter(ts);
}

// Counts an event that could not be recorded on this thread.
void CountDropped(ThreadState* ts);

// What the recorder asks of the trace writer (file/writer.h). Set once at
// start-up (interpose/shim.cc), before recording begins, and called only
// while recording.
struct WriterHooks {
  // The calling thread took its first ring: the writer thread should run.
  void (*ring_taken)();
  // The calling thread's `ring` is full up to `head`: drain it now, on this
  // thread.
  void (*ring_full)(Ring* ring, uint64_t head);
  // The string table is full (strings.h): write every pending string, then
  // empty the table.
  void (*strings_full)();
};
void SetWriterHooks(const WriterHooks& hooks);
extern WriterHooks g_writer_hooks;

// Start-up: the per-thread ring release (at thread exit). False if it cannot
// be set up, when nothing must be recorded.
bool PrepareRings();

// The rings of every thread that ever recorded, newest first (each Ring's
// `next`), for the writer to drain.
Ring* AllRings();

// Events lost on threads that could not get a ring.
uint64_t DroppedWithoutRing();

// Puts the writer thread to sleep until WakeWriter wakes it or `timeout_ns`
// pass.
void WaitForWake(uint64_t timeout_ns);

// Fork handlers (interpose/shim.cc): the ring lock is held across fork. In the
// child, the parent's unwritten events stay with the parent: every ring is
// free again, and this thread takes a fresh one on its next event.
void LockRingsForFork();
void UnlockRingsAfterFork(bool child);

// Warns once per process on stderr (unless IOTAP_QUIET=1); `err` is an errno
// value or 0. On a thread that called DeferWarnings (the writer, whose
// descriptor table has no stderr), the warning waits for the next
// application thread through the shim's slow path (every few thousand
// events), or for PrintDeferredWarning.
void WarnOnce(const char* what, int err);
void DeferWarnings();
// Prints a deferred warning, if one waits; on an application thread.
void PrintDeferredWarning();

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CORE_RECORDER_H_
