/* The iotap marker API: tell iotap where training steps begin and end.
 *
 * libiotap.so exports these functions; a program that is not traced does not
 * have them, so call them through a weak reference or dlsym:
 *
 *   #include "iotap.h"
 *   for (long long step = 0; ...; ++step) {
 *     if (iotap_step_begin) iotap_step_begin(step);
 *     ...train...
 *     if (iotap_step_end) iotap_step_end(step);
 *   }
 *
 * The markers become events in the trace (OP_STEP_BEGIN, OP_STEP_END,
 * OP_MARK, OP_DATA_WAIT, OP_OPTIMIZER_STEP); the analyzer turns them into
 * step spans (analyzer/steps/marker_steps.h). They cost about as much as one
 * traced system call and do nothing when tracing is off. Python programs use
 * interpose/python/iotap instead, which calls these through ctypes.
 */

#ifndef IOTAP_INTERPOSE_IOTAP_H_
#define IOTAP_INTERPOSE_IOTAP_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the start of training step `step` on the calling thread. */
void iotap_step_begin(long long step) __attribute__((weak));
/* Marks the end of training step `step`. */
void iotap_step_end(long long step) __attribute__((weak));
/* Records an instant with a name (a copy of `name` is kept). */
void iotap_mark(const char* name) __attribute__((weak));

/* Kinds of iotap_span: the numbers of OP_DATA_WAIT and OP_OPTIMIZER_STEP in
 * proto/iotap/trace.proto. */
#define IOTAP_SPAN_DATA_WAIT 303
#define IOTAP_SPAN_OPTIMIZER_STEP 304

/* Records a span that the caller timed itself: `start_monotonic_ns` and
 * `end_monotonic_ns` are CLOCK_MONOTONIC readings (Python's
 * time.monotonic_ns()), written as given (flag FLAG_EXPLICIT_TIMES), to the
 * trace's time resolution (10 ns unless IOTAP_TIME_UNIT_NS says otherwise).
 * `kind` is IOTAP_SPAN_DATA_WAIT (the loop waited for its next batch) or
 * IOTAP_SPAN_OPTIMIZER_STEP. `step` numbers the training step the span
 * belongs to, counted the way the Python helper counts: step N ends with its
 * optimizer step(s), and its data waits come after step N-1's optimizer step;
 * a second optimizer step with no wait in between (two optimizers on one
 * batch) belongs to the same step.
 * Returns 0 if recorded, -1 if not (tracing off, unknown kind, start not
 * positive, or end before start). */
int iotap_span(int kind, long long step, long long start_monotonic_ns,
               long long end_monotonic_ns) __attribute__((weak));

/* Python stack samples. The Python helper's sampler (interpose/python/iotap/
 * _sampler.py) calls these through ctypes; any other sampler of an
 * interpreter's stacks may too. Functions and stacks are interned once and
 * samples refer to them by id:
 *
 *   static const char load[] = "ImageFile.load\0/usr/lib/python3/PIL/ImageFile.py\0" "155";
 *   long long f = iotap_py_intern(IOTAP_PY_FUNCTION, load, sizeof(load) - 1);
 *   ... the stack's bytes: varints (function id, line) per frame, outermost first ...
 *   long long s = iotap_py_intern(IOTAP_PY_STACK, bytes, n);
 *   iotap_py_sample(tid, (unsigned)s, cpu_ns, start_ns, end_ns, (unsigned)(s >> 32));
 *
 * Kinds of iotap_py_intern: KIND_PY_FUNCTION and KIND_PY_STACK of
 * proto/iotap/trace.proto, which says what their bytes hold. */
#define IOTAP_PY_FUNCTION 12
#define IOTAP_PY_STACK 13

/* Interns `size` bytes (1 to 8192) of kind IOTAP_PY_FUNCTION or IOTAP_PY_STACK.
 * Returns (generation << 32) | id, with id > 0, or 0 if nothing was interned
 * (tracing off, bad arguments). An id stays valid while the generation does
 * not change (the generation counts the times the shim's string table was
 * emptied); a caller that keeps ids passes the generation to
 * iotap_py_sample. */
long long iotap_py_intern(int kind, const char* bytes, size_t size) __attribute__((weak));

/* Records one sample (OP_PY_SAMPLE) on the calling thread: thread `tid` (a
 * kernel thread id of this process) was running Python stack `stack` (an id
 * from iotap_py_intern) and used `cpu_ns` of CPU time between
 * `start_monotonic_ns` and `end_monotonic_ns` (CLOCK_MONOTONIC, Python's
 * time.monotonic_ns()). Returns 0 if recorded, 1 if `generation` is no longer
 * the string table's (intern again, then retry), -1 if not recorded (tracing
 * off, bad arguments, event dropped). */
int iotap_py_sample(int tid, unsigned stack, long long cpu_ns, long long start_monotonic_ns,
                    long long end_monotonic_ns, unsigned generation) __attribute__((weak));

/* Interns the current Python stacks of the threads `idents[0..n)`
 * (threading idents, the keys of sys._current_frames()) into `stacks[i]`, as
 * iotap_py_intern returns them ((generation << 32) | stack id), or 0 for a
 * thread with no Python frame. Walks the frames in C, with the GIL held
 * throughout and the garbage collector paused: call it through
 * ctypes.PyDLL, from CPython 3.11 on, whose frame objects of other threads
 * must not be walked by Python code (see interpose/pystacks/py_stacks.cc).
 * Returns how many stacks it interned, or -1 when this is no CPython with
 * the functions it needs (or bad arguments). */
int iotap_py_stacks(const unsigned long* idents, int n, long long* stacks) __attribute__((weak));

/* A stack sampler's thread, from CPython 3.11 on: call iotap_py_run_sampler
 * through ctypes.PyDLL (with the GIL) from a thread of its own; it returns
 * when iotap_py_stop_sampler is called (from any thread), when tracing is
 * off (-1), or at once with -1 when this is no CPython with the functions it
 * needs or a sampler already runs in this process (0 for `interval_ns` only
 * asks whether it could run). Between looks it sleeps without the GIL. Every
 * `interval_ns` (less often while the process is idle, down to one look in
 * 8 intervals) it takes the GIL and, if the process used at least a tenth of
 * an interval of CPU since the last look, reads the CPU clock of every other
 * thread with a Python frame, and records a sample (as iotap_py_sample) of
 * each thread that ran and used at least half an interval of CPU since its
 * last sample, weighted with that CPU time. */
int iotap_py_run_sampler(long long interval_ns) __attribute__((weak));
void iotap_py_stop_sampler(void) __attribute__((weak));

/* States of iotap_py_sampler: the sampler started, or cannot run; then,
 * once started, how its samples are taken: by a signal to each thread where
 * its CPU time is spent, or with the GIL (charging CPU time in C code that
 * holds the GIL to the Python code that runs after it). */
#define IOTAP_PY_SAMPLER_STARTED 1
#define IOTAP_PY_SAMPLER_UNAVAILABLE 2
#define IOTAP_PY_SAMPLER_BY_SIGNAL 3
#define IOTAP_PY_SAMPLER_WITH_GIL 4

/* Records a state of this process's sampler, taking
 * `samples_per_cpu_second`, with a `note` (NULL for none) saying why it is
 * unavailable or samples with the GIL. Returns 0 if recorded, -1 if not. */
int iotap_py_sampler(int state, long long samples_per_cpu_second, const char* note)
    __attribute__((weak));

#ifdef __cplusplus
}
#endif

#endif /* IOTAP_INTERPOSE_IOTAP_H_ */
