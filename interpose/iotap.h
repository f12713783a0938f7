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

#ifdef __cplusplus
}
#endif

#endif /* IOTAP_INTERPOSE_IOTAP_H_ */
