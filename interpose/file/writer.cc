#include "interpose/core/raw_syscall.h"
#include "interpose/file/writer.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/core/clock.h"
#include "interpose/core/real.h"
#include "interpose/core/recorder.h"
#include "interpose/core/strings.h"
#include "interpose/file/compress.h"
#include "interpose/file/kept_fd.h"
#include "interpose/file/packets.h"
#include "interpose/file/trace_file.h"
#include "interpose/file/wire_writer.h"

namespace iotap::interpose {

namespace {

// Events per EventChunk: bounds the size of one encoded chunk.
constexpr uint32_t kMaxChunkEvents = 4096;
// Bytes of encoded packets per zstd frame.
constexpr size_t kPacketBufferBytes = 1u << 20;
// A chunk of kMaxChunkEvents takes at most 11 columns of 10-byte varints.
constexpr size_t kWorstChunkBytes = kMaxChunkEvents * 11 * 10 + 256;

struct Writer {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  TraceFile file;
  ClockConverter clock;
  FrameCompressor compressor;
  uint8_t* packets = nullptr;
  size_t packets_used = 0;
  uint64_t packets_events = 0;  // events in `packets`, lost if the write fails
  uint8_t* frame = nullptr;
  size_t frame_capacity = 0;
  ChunkScratch scratch = {nullptr, 0, nullptr};
  uint64_t recorded = 0;  // events written to the file
  uint64_t dropped = 0;   // events lost: full ring in a signal handler, failed writes
  uint64_t next_flush_ns = 0;
  uint64_t next_sample_ns = 0;
  uint64_t retry_write_ns = 0;  // after a failed write, the next attempt
  int pid = 0;
  bool write_failed = false;
  // The trace's end was written at exit: the writer thread starts no frame
  // after it (exit_group, moments later, could cut one short).
  bool ended_at_exit = false;
};
constinit Writer g_writer;

constinit PolledSources g_polled = {};
constinit std::atomic<int> g_writer_tid{0};

constinit std::atomic<int> g_exit_code{0};
constinit std::atomic<bool> g_exit_code_known{false};
constinit std::atomic<bool> g_writer_started{false};

void* MapZeroed(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// --- Output ------------------------------------------------------------------

// Compresses and appends what has been encoded. Caller holds the writer lock.
// While writes fail (disk full, file-size limit, directory gone), retry at
// most this often, so a broken output costs the job almost nothing.
constexpr uint64_t kRetryWriteNs = 1000000000ull;

// `final` (the end of the trace) always tries to write.
void FlushFrame(bool final = false) {
  Writer& w = g_writer;
  if (w.packets_used == 0) return;
  int err = 0;
  if (w.write_failed && !final && MonotonicNs() < w.retry_write_ns) {
    err = EAGAIN;
  } else {
    size_t n = w.compressor.Compress(w.packets, w.packets_used, w.frame, w.frame_capacity);
    err = n == 0 ? ENOBUFS : w.file.Append(w.frame, n);
  }
  if (err == 0) {
    w.recorded += w.packets_events;
    w.write_failed = false;
  } else {
    w.dropped += w.packets_events;
    if (!w.write_failed) WarnOnce("cannot write the trace file; events are being lost", err);
    if (err != EAGAIN) w.retry_write_ns = MonotonicNs() + kRetryWriteNs;
    w.write_failed = true;
  }
  w.packets_used = 0;
  w.packets_events = 0;
}

WireWriter PacketWriter() {
  Writer& w = g_writer;
  WireWriter out(w.packets, kPacketBufferBytes);
  out.Rewind(w.packets_used);
  return out;
}

// Runs `encode` on a writer over the packet buffer, flushing first or
// retrying after a flush if it does not fit.
template <typename EncodeFn>
void Emit(EncodeFn encode) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    WireWriter out = PacketWriter();
    encode(&out);
    if (!out.overflow()) {
      g_writer.packets_used = out.size();
      return;
    }
    FlushFrame();
  }
}

void EmitStrings() {
  for (;;) {
    WireWriter out = PacketWriter();
    bool done = EncodePendingStrings(&out);
    g_writer.packets_used = out.overflow() ? g_writer.packets_used : out.size();
    if (done && !out.overflow()) return;
    FlushFrame();
  }
}

// Encodes [tail, head) of `ring`. Caller holds the writer lock and has
// emitted the strings interned before `head` was read.
void DrainRing(Ring* ring, uint64_t head) {
  Writer& w = g_writer;
  uint64_t tail = ring->tail.load(std::memory_order_relaxed);
  while (tail < head) {
    uint32_t count =
        static_cast<uint32_t>(head - tail < kMaxChunkEvents ? head - tail : kMaxChunkEvents);
    if (kPacketBufferBytes - w.packets_used < kWorstChunkBytes) FlushFrame();
    uint64_t dropped = ring->dropped.load(std::memory_order_relaxed);
    uint64_t dropped_before = dropped - ring->dropped_reported;
    WireWriter out = PacketWriter();
    if (EncodeChunk(&out, *ring, tail, count, tail - ring->seq_origin, dropped_before, w.clock,
                    &w.scratch)) {
      w.packets_used = out.size();
      w.packets_events += count;
      ring->dropped_reported = dropped;
      w.dropped += dropped_before;
    } else {
      w.dropped += count;  // cannot happen with kWorstChunkBytes of room
    }
    tail += count;
    ring->tail.store(tail, std::memory_order_release);
  }
}

// Drains every ring. Caller holds the writer lock.
void DrainAll() {
  constexpr int kMaxRings = 4096;
  Ring* rings[kMaxRings];
  uint64_t heads[kMaxRings];
  int n = 0;
  // Heads first, then strings: every string an event up to its head uses was
  // interned before the head was published.
  for (Ring* r = AllRings(); r != nullptr && n < kMaxRings; r = r->next) {
    rings[n] = r;
    heads[n] = r->head.load(std::memory_order_acquire);
    ++n;
  }
  g_writer.clock.Reanchor();
  EmitStrings();
  for (int i = 0; i < n; ++i) {
    DrainRing(rings[i], heads[i]);
    if (rings[i]->state.load(std::memory_order_acquire) == kRingOrphaned &&
        rings[i]->tail.load(std::memory_order_relaxed) ==
            rings[i]->head.load(std::memory_order_acquire)) {
      rings[i]->state.store(kRingFree, std::memory_order_release);
    }
  }
}

void DrainPolled(bool final) {
  if (g_polled.drain != nullptr) g_polled.drain(final);
}

uint64_t TotalDropped() { return g_writer.dropped + DroppedWithoutRing(); }

void EmitSnapshot() {
  uint64_t recorded = g_writer.recorded + g_writer.packets_events;
  uint64_t dropped = TotalDropped();
  Emit([&](WireWriter* out) {
    EncodeClockSnapshot(out, recorded, dropped);
    EncodeResourceSample(out);
  });
}

// Everything pending, then `tail` (end or exec packets). Caller holds the lock.
template <typename TailFn>
void WriteEverything(TailFn tail) {
  DrainAll();
  DrainPolled(/*final=*/true);
  EmitSnapshot();
  Emit(tail);
  FlushFrame(/*final=*/true);
}

// --- Writer thread -----------------------------------------------------------

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1u << 1)
#endif

// Gives the writer thread an empty descriptor table of its own.
//
// Linux looks a descriptor up without a lock or a reference count only while
// no other thread shares the caller's table (fdget: files->count == 1), and
// read() then skips the file position lock too. A writer thread sharing the
// table would cost every I/O call of a single-threaded program (cat, dd, a
// DataLoader worker) those atomic operations: on the development VM, 40 ns
// of CPU per pread and 100 ns per 4 KiB read, more than the shim's own work
// (an idle second thread, sharing the table or not). close_range with
// CLOSE_RANGE_UNSHARE from 0 copies no descriptor into the new table, so the
// writer holds no reference to the program's files (a pipe the program
// closes still reaches end-of-file). The writer opens what it writes and
// reads in its own table (kept_fd.h), and defers its warnings (WarnOnce).
// Where the kernel refuses (before Linux 5.9, or a seccomp filter), the
// writer shares the program's table as before. Under ThreadSanitizer (the
// shim's threaded test) it always shares it: the sanitizer's reports from
// this thread go to stderr.
void UseOwnDescriptorTable() {
#if defined(__SANITIZE_THREAD__)
  return;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
  return;
#endif
#endif
  if (RawSyscall(SYS_close_range, 0u, ~0u, CLOSE_RANGE_UNSHARE) != 0) return;
  KeptFd::UseOwnTable();
  DeferWarnings();
  LockShim(&g_writer.lock);
  g_writer.file.Open();
  UnlockShim(&g_writer.lock);
}

void* WriterMain(void*) {
  tls_thread.busy = true;  // nothing this thread does is traced
  g_writer_tid.store(static_cast<int>(RawSyscall(SYS_gettid)), std::memory_order_release);
  prctl(PR_SET_NAME, "iotap-writer", 0, 0, 0);
  UseOwnDescriptorTable();
  const uint64_t flush_ns = g_config.flush_interval_ms * 1000000ull;
  const uint64_t sample_ns = g_config.sample_interval_ms * 1000000ull;
  for (;;) {
    uint64_t now = MonotonicNs();
    uint64_t next = g_writer.next_flush_ns < g_writer.next_sample_ns ? g_writer.next_flush_ns
                                                                     : g_writer.next_sample_ns;
    uint64_t poll = g_polled.poll_interval_ns != nullptr ? g_polled.poll_interval_ns() : 0;
    if (poll != 0 && now + poll < next) next = now + poll;
    if (next > now) WaitForWake(next - now);
    LockShim(&g_writer.lock);
    if (g_writer.ended_at_exit) {
      // The process is in its last moments; the thread that ends it wrote
      // everything. Nothing this thread does is needed any more.
      UnlockShim(&g_writer.lock);
      for (;;) WaitForWake(1000000000ull);
    }
    now = MonotonicNs();
    if (now >= g_writer.next_sample_ns) {
      Emit([](WireWriter* out) { EncodeResourceSample(out); });
      if (g_polled.sample != nullptr) g_polled.sample();
      g_writer.next_sample_ns = now + sample_ns;
    }
    DrainAll();
    DrainPolled(/*final=*/false);
    if (now >= g_writer.next_flush_ns) {
      EmitSnapshot();
      FlushFrame();
      g_writer.next_flush_ns = now + flush_ns;
    } else if (g_writer.packets_used > kPacketBufferBytes / 2) {
      FlushFrame();
    }
    UnlockShim(&g_writer.lock);
  }
  return nullptr;
}

// --- Start-up ----------------------------------------------------------------------

bool AllocateWriterBuffers() {
  Writer& w = g_writer;
  w.packets = static_cast<uint8_t*>(MapZeroed(kPacketBufferBytes));
  w.frame_capacity = w.compressor.Bound(kPacketBufferBytes);
  w.frame = static_cast<uint8_t*>(MapZeroed(w.frame_capacity));
  w.scratch.capacity = kMaxChunkEvents * 10;
  w.scratch.column = static_cast<uint8_t*>(MapZeroed(w.scratch.capacity));
  w.scratch.times = static_cast<int64_t*>(MapZeroed(kMaxChunkEvents * 2 * sizeof(int64_t)));
  return w.packets != nullptr && w.frame != nullptr && w.scratch.column != nullptr &&
         w.scratch.times != nullptr;
}

}  // namespace

bool AllocateWriter() {
  g_writer.clock.Init(g_config.allow_tsc);
  g_writer.clock.SetWaitThreshold(g_config.wait_threshold_ns);
  return g_writer.compressor.Init(g_config.zstd_level, kPacketBufferBytes) &&
         AllocateWriterBuffers();
}

int OpenTrace(bool forked) {
  Writer& w = g_writer;
  ProcessInfo info;
  info.pid = static_cast<int>(RawSyscall(SYS_getpid));
  info.ppid = static_cast<int>(RawSyscall(SYS_getppid));
  info.forked = forked;
  info.start_monotonic_ns = MonotonicNs();
  info.start_realtime_ns = TraceRealtimeNs();
  w.pid = info.pid;
  w.recorded = 0;
  w.dropped = 0;
  w.packets_used = 0;
  w.packets_events = 0;
  w.write_failed = false;
  int err = w.file.Create(g_config.dir, info.pid, info.start_realtime_ns);
  if (err != 0) return err;
  Emit([&](WireWriter* out) {
    EncodeProcessHeader(out, info, w.clock);
    EncodeClockSnapshot(out, 0, 0);
    // A baseline sample; it also opens the /proc files the later samples
    // read, here, before the program has threads whose opens it could shift.
    EncodeResourceSample(out);
  });
  FlushFrame();
  return w.write_failed ? EIO : 0;
}

// --- The recorder's hooks -----------------------------------------------------------

// glibc ends a process when its last thread ends, by calling exit(0) in that
// thread (atexit handlers run, stdio is flushed), and counts the threads in
// __nptl_nthreads (GLIBC_PRIVATE, glibc 2.34 and later in libc itself). The
// writer, which never ends, must not count: a program whose main thread ends
// with pthread_exit (the idiom that lets its threads finish) or is cancelled
// would otherwise never exit. Where the counter cannot be found the writer
// counts as before.
namespace {
void UncountWriterThread() {
  auto* threads = static_cast<unsigned int*>(ResolveGlobal("__nptl_nthreads"));
  if (threads != nullptr) __atomic_fetch_sub(threads, 1u, __ATOMIC_SEQ_CST);
}
}  // namespace

void StartWriterThread() {
  if (g_writer_started.exchange(true, std::memory_order_acq_rel)) return;
  uint64_t now = MonotonicNs();
  g_writer.next_flush_ns = now + g_config.flush_interval_ms * 1000000ull;
  g_writer.next_sample_ns = now;
  // The application's signal handlers must never run on our thread.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_t thread;
  int err = pthread_create(&thread, &attr, WriterMain, nullptr);
  if (err == EINVAL) {
    // glibc puts a thread's static TLS on its stack: a program with more
    // than our stack's worth of __thread data needs the default size.
    pthread_attr_destroy(&attr);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    err = pthread_create(&thread, &attr, WriterMain, nullptr);
  }
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (err != 0) {
    WarnOnce("cannot start the writer thread; events are written when buffers fill", err);
    return;
  }
  UncountWriterThread();
}

void DrainFullRing(Ring* ring, uint64_t head) {
  LockShim(&g_writer.lock);
  g_writer.clock.Reanchor();
  EmitStrings();
  DrainRing(ring, head);
  UnlockShim(&g_writer.lock);
}

// --- Packets from other layers ---------------------------------------------------

void WritePackets(const uint8_t* data, size_t size) {
  if (!Recording() || size > kPacketBufferBytes) return;
  LockShim(&g_writer.lock);
  EmitStrings();
  Emit([&](WireWriter* out) {
    uint8_t* dst = out->Claim(size);
    if (dst != nullptr) {
      memcpy(dst, data, size);
      out->Commit(dst + size);
    }
  });
  UnlockShim(&g_writer.lock);
}

void SetPolledSources(const PolledSources& sources) { g_polled = sources; }

void RunUnderWriterLock(void (*fn)()) {
  if (!Recording()) return;
  LockShim(&g_writer.lock);
  fn();
  UnlockShim(&g_writer.lock);
}

void WriteSampledChunk(uint32_t tid, RawEvent* events, uint32_t count, uint64_t first_seq) {
  Writer& w = g_writer;
  EmitStrings();
  Ring view;
  view.tid = tid;
  view.monotonic_times = true;
  view.events = events;
  view.capacity = 1;
  while (view.capacity < count) view.capacity <<= 1;
  for (uint32_t done = 0; done < count;) {
    uint32_t n = count - done < kMaxChunkEvents ? count - done : kMaxChunkEvents;
    if (kPacketBufferBytes - w.packets_used < kWorstChunkBytes) FlushFrame();
    WireWriter out = PacketWriter();
    if (EncodeChunk(&out, view, done, n, first_seq + done, 0, w.clock, &w.scratch)) {
      w.packets_used = out.size();
      w.packets_events += n;
    } else {
      w.dropped += n;
    }
    done += n;
  }
}

void WritePacketLocked(void (*encode)(WireWriter* w, void* context), void* context) {
  Emit([&](WireWriter* out) { encode(out, context); });
}

int WriterThreadId() { return g_writer_tid.load(std::memory_order_acquire); }

void FlushStringsAndReset() {
  LockShim(&g_writer.lock);
  EmitStrings();
  FlushFrame();
  ResetStringsIfFull();
  UnlockShim(&g_writer.lock);
}

// --- Lifecycle -------------------------------------------------------------------

void NoteExitCode(int code) {
  g_exit_code.store(code, std::memory_order_relaxed);
  g_exit_code_known.store(true, std::memory_order_release);
}

bool InOwnProcess() { return RawSyscall(SYS_getpid) == g_writer.pid; }

void FinishTraceAtExit() {
  FinishTrace(EndReason::kExit, g_exit_code.load(std::memory_order_relaxed),
              g_exit_code_known.load(std::memory_order_relaxed));
}

namespace {
constexpr uint64_t kExitWriteWaitNs = 200000000;

// FinishTrace, which leaves the writer lock held if `keep_locked`.
void EndTrace(EndReason reason, int code, bool code_known, int wait_ms, bool keep_locked) {
  if (!Recording() || !InOwnProcess()) return;
  if (tls_thread.locks != 0) {
    if (keep_locked) TraceFile::StopWritesForExit(kExitWriteWaitNs);
    return;
  }
  if (g_polled.before_end != nullptr) g_polled.before_end();
  bool was_busy = tls_thread.busy;
  tls_thread.busy = true;
  if (wait_ms == 0) {
    LockShim(&g_writer.lock);
  } else {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += static_cast<long>(wait_ms) * 1000000;
    deadline.tv_sec += deadline.tv_nsec / 1000000000;
    deadline.tv_nsec %= 1000000000;
    if (!TimedLockShim(&g_writer.lock, &deadline)) {
      tls_thread.busy = was_busy;
      return;
    }
  }
  WriteEverything([&](WireWriter* out) {
    EncodeEnd(out, static_cast<int>(reason), code, code_known,
              g_writer.recorded + g_writer.packets_events, TotalDropped());
  });
  if (reason == EndReason::kExit) g_writer.ended_at_exit = true;
  if (!keep_locked) UnlockShim(&g_writer.lock);
  PrintDeferredWarning();
  tls_thread.busy = was_busy;
}
}  // namespace

void FinishTrace(EndReason reason, int code, bool code_known, int wait_ms) {
  EndTrace(reason, code, code_known, wait_ms, /*keep_locked=*/false);
}

void FinishTraceBeforeExitGroup(int code) {
  EndTrace(EndReason::kUnderscoreExit, code, true, /*wait_ms=*/0, /*keep_locked=*/true);
}

void FlushBeforeExec(const char* path, bool spawn) {
  if (!Recording() || !InOwnProcess() || tls_thread.locks != 0) return;
  if (!spawn && g_polled.before_end != nullptr) g_polled.before_end();
  bool was_busy = tls_thread.busy;
  tls_thread.busy = true;
  LockShim(&g_writer.lock);
  WriteEverything([&](WireWriter* out) {
    EncodeExecNotice(out, path, spawn);
    if (!spawn) {
      EncodeEnd(out, static_cast<int>(EndReason::kExec), 0, false,
                g_writer.recorded + g_writer.packets_events, TotalDropped());
    }
  });
  UnlockShim(&g_writer.lock);
  PrintDeferredWarning();
  tls_thread.busy = was_busy;
}

// --- Fork --------------------------------------------------------------------------

void LockWriterForFork() { LockShim(&g_writer.lock); }

void UnlockWriterAfterFork(bool child) {
  if (!child) {
    UnlockShim(&g_writer.lock);
    return;
  }
  ResetShimLockInChild(&g_writer.lock);
  g_writer_started.store(false, std::memory_order_relaxed);
  g_writer_tid.store(0, std::memory_order_relaxed);
  g_exit_code_known.store(false, std::memory_order_relaxed);
  g_writer.ended_at_exit = false;
  g_writer.file.Forget();
  ResetProcFilesInChild();
}

}  // namespace iotap::interpose
