// The recorder: thread state, the event path, flushing and the process
// lifecycle of libiotap.so.
//
// Wrappers record through TraceCall (trace_call.h), which uses ReserveEvent
// and CommitEvent below; the lifecycle wrappers (fork, exec, exit) call the
// functions at the end of this header.
//
// Threads: an application thread only appends to its own ring. One writer
// thread, started with the first event, drains every ring at least once per
// flush interval, encodes columnar chunks, compresses and writes them, and
// samples the process's CPU use. A thread whose ring fills up before the
// writer comes drains it itself under the writer lock rather than drop events.
// The writer has a descriptor table of its own (UseOwnDescriptorTable in
// recorder.cc), so that a program with one thread keeps Linux's faster I/O
// path for unshared tables.
//
// Lock order: writer lock, then the string table lock. Neither is taken on the
// hot path. Both are taken through LockShim/UnlockShim, which keep count of
// them on the thread (see ThreadState::locks).

#ifndef IOTAP_INTERPOSE_RECORDER_H_
#define IOTAP_INTERPOSE_RECORDER_H_

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "interpose/config.h"
#include "interpose/ring.h"

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
  // Shim locks (writer, string table) this thread holds or is about to take.
  // A signal handler runs on whatever thread it interrupts, and handlers do
  // call _exit (torch's DataLoader workers do on SIGTERM): finishing the trace
  // there must not wait for a lock the interrupted code holds, or the process
  // never ends.
  uint32_t locks;
};

extern __thread ThreadState tls_thread
    __attribute__((tls_model("initial-exec")));

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

// Appends already-encoded packets (each a whole Trace.packet field) to the
// trace, after the strings interned so far. For layers that describe an
// object once (HDF5 datasets, TFRecord files).
void WritePackets(const uint8_t* data, size_t size);

// Writes every pending string and empties the string table (strings.cc calls
// this when the table is full).
void FlushStringsAndReset();

// EndOfTrace.Reason in trace.proto.
enum class EndReason {
  kExit = 1,
  kUnderscoreExit = 2,
  kExec = 3,
  kUnloaded = 4,
  kAbort = 5,
};

// Remembers the code passed to exit() or returned from main.
void NoteExitCode(int code);
// Writes everything recorded so far and an end packet. With a
// `wait_ms` other than 0 it gives up after waiting that long for the writer
// lock (abort: another thread may be stuck in a write to a hung file system).
// Recording goes on afterwards; a later end packet supersedes this one.
// Called on a thread that holds a shim lock (from a signal handler that
// interrupted the shim) it writes nothing: the trace then ends as a killed
// process's does, at the last flush, rather than the process hanging.
void FinishTrace(EndReason reason, int code, bool code_known, int wait_ms = 0);
// Before exec or posix_spawn: write everything, plus an exec notice (and, for
// exec, an end packet that a failed exec leaves superseded later). Writes
// nothing on a thread that holds a shim lock, as FinishTrace.
void FlushBeforeExec(const char* path, bool spawn);

// Warns once per process on stderr (unless IOTAP_QUIET=1); `err` is an errno
// value or 0. On the writer thread, whose descriptor table has no stderr, the
// warning waits for the next application thread through the shim's slow path
// (every few thousand events, and the end of the trace).
void WarnOnce(const char* what, int err);

// Whether the calling process owns this trace (false in a vfork child, which
// shares our memory but must not write our file).
bool InOwnProcess();

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_RECORDER_H_
