// The signal sampler: each sampled Python thread is interrupted by a signal
// as its CPU time passes, and the handler, in that thread, copies the
// thread's Python stack (py_frames.h) into the thread's ring; the sampler
// thread drains the rings into OP_PY_SAMPLE events without the GIL. A sample
// is so taken where the CPU time was spent, also in C code that holds the
// GIL, which a sampler that needs the GIL cannot see.
//
// The signal comes from a perf task-clock event on the thread (the kernel's
// high-resolution timer on the thread's CPU time), after a period of it that
// the handler draws anew at each signal, evenly from half an interval to one
// and a half: one signal per sample, at random moments. The event's
// descriptor, which that takes, is parked high in the descriptor table
// (core/parked_fds.h); where it cannot be, the event signals every fifth of
// an interval and the handler keeps one in three at random once half an
// interval passed since its last sample. Where perf_event_open is
// refused (perf_event_paranoid 3, a seccomp profile), from a POSIX timer on
// the thread's CPU clock (timer_create, SIGEV_THREAD_ID), every interval:
// the kernel sees such a timer expire only at its scheduler tick, and with
// every core busy its samples were as far off as the GIL sampler's
// (README, "Python stack samples"). The event counts user time only, so that
// its signal never comes while the thread is in a system call (a sleep in
// it would end with EINTR); a kernel built without
// POSIX_CPU_TIMERS_TASK_WORK may send the timer's signal from the tick
// within one.
//
// Used by the sampler's loop (py_stacks.cc), on the sampler thread only:
//
//   if (StartPySignals({this_thread_state, walk}, interval_ns) &&
//       /* the walk checked, WalkOwnPyFrames */ TakePySignal()) {
//     int slot = ArmPyThread(tid);   // at each new thread; -1: not possible
//     ...
//     DrainPySamples();              // at each wake-up
//     DisarmPyThread(slot);          // when the thread is gone
//   }
//   StopPySignals();                 // every event and timer ended
//
// The signal is the highest real-time signal below SIGRTMAX whose
// disposition is the default one when the sampler starts (so that no
// handler of the job's is replaced), SIGRTMAX itself being left to
// debuggers (valgrind takes it). SIGPROF is not used: it is the job's own
// profilers' signal (setitimer(ITIMER_PROF), gperftools, vmprof).

#ifndef IOTAP_INTERPOSE_PYSTACKS_PY_SIGNAL_H_
#define IOTAP_INTERPOSE_PYSTACKS_PY_SIGNAL_H_

#include <stdint.h>
#include <sys/types.h>

#include "interpose/pystacks/py_frames.h"

namespace iotap::interpose {

struct PySignalSetup {
  void* (*this_thread_state)();  // PyGILState_GetThisThreadState
  PyWalk walk;
};

// Readies the rings and the names' table (afresh in a fork child). False if
// it cannot (no memory): the caller then samples with the GIL.
bool StartPySignals(const PySignalSetup& setup, int64_t interval_ns);

// In a fork child (shim.cc's fork handler): frees the slots of the
// parent's threads and closes the child's copies of their parked event
// descriptors. Also done by StartPySignals in a child where it was not.
void PySignalsAfterForkChild();

// Takes the signal (once per process: a fork child keeps its parent's
// handler). False if no signal is free.
bool TakePySignal();

// Whether the signal's handler is still the sampler's: a job that set its
// own for the same signal turns the signal sampler off (StopPySignals).
bool PySignalHandlerKept();

// Has thread `tid` (of this process) signalled as its CPU time passes,
// counted from now: a task-clock event, else a CPU-clock timer. The slot of
// its ring, or -1.
int ArmPyThread(pid_t tid);

// How many times slot `slot`'s handler ran: 0 after some CPU time of the
// thread means that the thread blocks the signal (or never gets it).
uint32_t PySlotFired(int slot);

// Ends the event or timer of slot `slot`, and records what its ring holds.
void DisarmPyThread(int slot);

// Records the samples the rings hold as OP_PY_SAMPLE events (interning
// functions and stacks). Returns how many it recorded. Never needs the GIL.
int DrainPySamples();

// Ends every event and timer, and records what the rings hold.
void StopPySignals();

// The calling thread's own stack as the handler would record it (after
// StartPySignals), for the check at start against the C API; PyFrameText
// gives a frame's "QUALNAME\0FILE\0FIRSTLINE" (`room`: at least 1024
// bytes). Returns the depth, or -1.
int WalkOwnPyFrames(const PySignalSetup& setup, RawFrame* frames, bool* cut);
bool PyFrameText(const RawFrame& frame, char* out, size_t room, size_t* size);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_PYSTACKS_PY_SIGNAL_H_
