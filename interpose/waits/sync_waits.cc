// Waits on semaphores and condition variables: sem_wait, sem_timedwait,
// sem_clockwait (CPython's locks, and so queue.Queue and threading.Condition;
// multiprocessing's semaphores) and pthread_cond_wait, pthread_cond_timedwait,
// pthread_cond_clockwait (C++ condition variables and thread pools, CPython's
// GIL).
//
// Recorded only when the call blocked (TraceCall::FinishWait). CPython tries
// its locks without blocking first (sem_trywait, not wrapped), so a sem_wait
// from Python is nearly always a real wait.
//
// glibc keeps a pre-2.3.2 pthread_cond_* ABI beside the current one; dlsym
// resolves the current (default) version, which is what programs built in
// this century call.

#include <pthread.h>
#include <semaphore.h>
#include <time.h>

#include "interpose/core/io_event.h"
#include "interpose/core/real.h"
#include "interpose/core/trace_call.h"

namespace iotap::interpose {
namespace {

IOTAP_REAL(sem_wait);
IOTAP_REAL(sem_timedwait);
IOTAP_REAL(sem_clockwait);
IOTAP_REAL(pthread_cond_wait);
IOTAP_REAL(pthread_cond_timedwait);
IOTAP_REAL(pthread_cond_clockwait);

// sem_*: 0, or -1 with errno.
IOTAP_HOT void RecordSemWait(TraceCall& call, int r) {
  if (RawEvent* e = call.FinishWait(kOpSemWait, r < 0)) e->result = r;
}

// pthread_cond_*: the error number itself (errno means nothing here).
IOTAP_HOT void RecordCondWait(TraceCall& call, int r) {
  if (RawEvent* e = call.FinishWait(kOpCondWait, false)) e->result = r;
}

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT int sem_wait(sem_t* sem) {
  TraceCall call(kLayerWaits);
  int r = real_sem_wait()(sem);
  RecordSemWait(call, r);
  return r;
}

IOTAP_EXPORT int sem_timedwait(sem_t* sem, const struct timespec* abstime) {
  TraceCall call(kLayerWaits);
  int r = real_sem_timedwait()(sem, abstime);
  RecordSemWait(call, r);
  return r;
}

IOTAP_EXPORT int sem_clockwait(sem_t* sem, clockid_t clock, const struct timespec* abstime) {
  TraceCall call(kLayerWaits);
  int r = real_sem_clockwait()(sem, clock, abstime);
  RecordSemWait(call, r);
  return r;
}

IOTAP_EXPORT int pthread_cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex) {
  TraceCall call(kLayerWaits);
  int r = real_pthread_cond_wait()(cond, mutex);
  RecordCondWait(call, r);
  return r;
}

IOTAP_EXPORT int pthread_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex,
                                        const struct timespec* abstime) {
  TraceCall call(kLayerWaits);
  int r = real_pthread_cond_timedwait()(cond, mutex, abstime);
  RecordCondWait(call, r);
  return r;
}

IOTAP_EXPORT int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex,
                                        clockid_t clock, const struct timespec* abstime) {
  TraceCall call(kLayerWaits);
  int r = real_pthread_cond_clockwait()(cond, mutex, clock, abstime);
  RecordCondWait(call, r);
  return r;
}
