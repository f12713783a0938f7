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
 * OP_MARK); the analyzer turns them into step spans. They cost about as much
 * as one traced system call and do nothing when tracing is off. Python
 * programs use interpose/python/iotap instead.
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

#ifdef __cplusplus
}
#endif

#endif /* IOTAP_INTERPOSE_IOTAP_H_ */
