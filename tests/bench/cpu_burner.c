/* A control for the memmap epoch benchmarks (run-layer-costs.sh): CPU time
 * and wake-ups like the shim's writer threads', without tracing anything.
 *
 *   cc -O2 -shared -fPIC -o libcpu_burner.so tests/bench/cpu_burner.c -lpthread
 *   BURNER_PERIOD_US=5000 BURNER_SPIN_US=150 LD_PRELOAD=./libcpu_burner.so JOB
 *
 * Preloaded, it starts one thread in the process and again in every forked
 * child (a DataLoader's workers), which sleeps BURNER_PERIOD_US, then spins
 * for BURNER_SPIN_US of CPU time, and so on until the process ends. Like
 * the shim's writer, the thread first gives itself a descriptor table of
 * its own (close_range with CLOSE_RANGE_UNSHARE), so that the program's
 * descriptor lookups stay those of a program with one thread where it has
 * one. Without both variables it does nothing.
 *
 * If an epoch takes as much longer under this as traced, the tracer's cost
 * is its CPU time and wake-ups; if not, it lies elsewhere (latency in the
 * traced threads themselves). */

#define _GNU_SOURCE
#include <linux/close_range.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long g_period_us, g_spin_us;

static long long thread_cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void* burn(void* unused) {
  (void)unused;
  syscall(SYS_close_range, 0u, ~0u, CLOSE_RANGE_UNSHARE);
  struct timespec period = {g_period_us / 1000000, (g_period_us % 1000000) * 1000};
  for (;;) {
    nanosleep(&period, NULL);
    long long until = thread_cpu_ns() + g_spin_us * 1000LL;
    while (thread_cpu_ns() < until) {
    }
  }
  return NULL;
}

static void start(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, burn, NULL) == 0) pthread_detach(t);
}

__attribute__((constructor)) static void init(void) {
  const char* period = getenv("BURNER_PERIOD_US");
  const char* spin = getenv("BURNER_SPIN_US");
  if (period == NULL || spin == NULL) return;
  g_period_us = atol(period);
  g_spin_us = atol(spin);
  if (g_period_us <= 0 || g_spin_us <= 0) return;
  start();
  pthread_atfork(NULL, NULL, start);
}
