/* The perf event each thread samples its page faults with (fault_sampler.cc):
 * a software fault event, every fault (period 1), the thread, the time on
 * CLOCK_MONOTONIC and the address, user space only (allowed at
 * perf_event_paranoid 2). C as well as C++: tests/bench/perf_switch_cost.c
 * opens the same events to time what they cost, and must not drift from
 * what the shim opens.
 *
 *   struct perf_event_attr a;
 *   IotapFaultEventAttr(&a, PERF_COUNT_SW_PAGE_FAULTS);
 *   syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
 */

#ifndef IOTAP_INTERPOSE_MAPPED_FAULT_EVENT_H_
#define IOTAP_INTERPOSE_MAPPED_FAULT_EVENT_H_

#include <linux/perf_event.h>
#include <string.h>
#include <time.h>

/* `config`: PERF_COUNT_SW_PAGE_FAULTS, or PERF_COUNT_SW_PAGE_FAULTS_MAJ. */
static inline void IotapFaultEventAttr(struct perf_event_attr* a, unsigned long long config) {
  memset(a, 0, sizeof(*a));
  a->size = sizeof(*a);
  a->type = PERF_TYPE_SOFTWARE;
  a->config = config;
  a->sample_period = 1;
  a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR;
  a->exclude_kernel = 1;
  a->exclude_hv = 1;
  a->use_clockid = 1;
  a->clockid = CLOCK_MONOTONIC;
}

#endif /* IOTAP_INTERPOSE_MAPPED_FAULT_EVENT_H_ */
