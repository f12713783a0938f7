// The trace writer: drains the threads' rings (core/recorder.h) into
// packets (packets.h), compresses them into frames (compress.h) and appends
// the frames to the process's trace file (trace_file.h).
//
// One writer thread, started with the first event (WriterHooks::ring_taken),
// drains every ring at least once per flush interval, encodes columnar
// chunks, compresses and writes them, and samples the process's CPU use. A
// thread whose ring fills up first drains it itself (DrainFullRing). The
// writer thread has a descriptor table of its own (UseOwnDescriptorTable in
// writer.cc), so that a program with one thread keeps Linux's faster I/O
// path for unshared tables. Layers that describe an object once (HDF5
// datasets, TFRecord files) hand their packets to WritePackets; the
// lifecycle wrappers (exec, exit, abort) end the trace through the functions
// at the end of this header.
//
// The writer lock comes first in the shim's lock order (core/recorder.h).
//
//   if (AllocateWriter() && OpenTrace(/*forked=*/false) == 0) ...   // start-up

#ifndef IOTAP_INTERPOSE_FILE_WRITER_H_
#define IOTAP_INTERPOSE_FILE_WRITER_H_

#include <stddef.h>
#include <stdint.h>

#include "interpose/core/ring.h"
#include "interpose/file/packets.h"
#include "interpose/file/wire_writer.h"

namespace iotap::interpose {

// Start-up: chooses the clock and maps the packet, frame and chunk buffers
// and the compression workspace. False if memory could not be had.
bool AllocateWriter();

// Creates this process's trace file and writes its header (for a fork child:
// `forked`). Returns 0 or errno.
int OpenTrace(bool forked);

// The writer's side of WriterHooks (core/recorder.h).
void StartWriterThread();
void DrainFullRing(Ring* ring, uint64_t head);
void FlushStringsAndReset();

// Appends already-encoded packets (each a whole Trace.packet field) to the
// trace, after the strings interned so far. For layers that describe an
// object once (HDF5 datasets, TFRecord files).
void WritePackets(const uint8_t* data, size_t size);

// Event sources the writer polls instead of draining rings: the page-fault
// sampler (mapped/), whose events come from the kernel's sample buffers. Set
// once at start-up (interpose/shim.cc), before recording begins; each is
// called on the writer's side, holding the writer lock.
struct PolledSources {
  // Writes what the source gathered since the last call (WriteSampledChunk,
  // WritePacketLocked). `final`: the trace ends here (exit, exec, abort), so
  // nothing may be held back for later.
  void (*drain)(bool final);
  // At every CPU sample (--sample-interval).
  void (*sample)();
  // How soon the source must be drained again, in ns; 0 while it has
  // nothing to poll.
  uint64_t (*poll_interval_ns)();
  // On the thread that ends the trace, before it takes the writer lock: a
  // last chance to record events on that thread (io_uring requests still in
  // flight).
  void (*before_end)();
};
void SetPolledSources(const PolledSources& sources);
// Runs `fn` on the calling thread holding the writer lock (a polled source
// that must write now, as its state changes), if the process is recording.
void RunUnderWriterLock(void (*fn)());

// For PolledSources, under the writer lock: an EventChunk of `count` events
// of thread `tid` whose times are CLOCK_MONOTONIC ns already, numbered from
// `first_seq`. Writes the strings interned so far first.
void WriteSampledChunk(uint32_t tid, RawEvent* events, uint32_t count, uint64_t first_seq);
// One or more packets that `encode` appends to `w`.
void WritePacketLocked(void (*encode)(WireWriter* w, void* context), void* context);

// The writer thread's id (0 before it started), which no layer traces.
int WriterThreadId();

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
// FinishTrace for _exit and _Exit, which end the process at once
// (exit_group): the writer lock stays held, so that no other thread starts a
// frame that exit_group would cut short. Called on a thread that holds a
// shim lock it writes nothing, but stops every write that has not started
// and waits up to 200 ms for one in progress on another thread
// (TraceFile::StopWritesForExit), so the file still ends with a whole frame.
void FinishTraceBeforeExitGroup(int code);
// FinishTrace at the library's unloading (exit, or main returning), with the
// code NoteExitCode learnt, if any.
void FinishTraceAtExit();
// Before exec or posix_spawn: write everything, plus an exec notice (and, for
// exec, an end packet that a failed exec leaves superseded later). Writes
// nothing on a thread that holds a shim lock, as FinishTrace.
void FlushBeforeExec(const char* path, bool spawn);

// Whether the calling process owns this trace (false in a vfork child, which
// shares our memory but must not write our file).
bool InOwnProcess();

// Fork handlers (interpose/shim.cc): the writer lock is held across fork. The
// child forgets the parent's trace file and writer thread; OpenTrace then
// gives it its own file.
void LockWriterForFork();
void UnlockWriterAfterFork(bool child);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_FILE_WRITER_H_
