/* What a thread's perf events cost its context switches (issue 15):
 *
 *   perf_switch_cost MODE ROUND_TRIPS
 *
 * Two processes pass a byte back and forth over two pipes ROUND_TRIPS
 * times; each round trip is two context switches each way when both run on
 * one CPU (taskset -c 0). Prints "MODE us_per_round_trip".
 *
 *   none      no perf event
 *   sampling  each process samples its own page faults as the shim does
 *             (PERF_COUNT_SW_PAGE_FAULTS and PAGE_FAULTS_MAJ, period 1,
 *             TID, TIME and ADDR, user space only, CLOCK_MONOTONIC, a
 *             mapped buffer each)
 *   one       the first of those events only
 *   disabled  both events, opened disabled
 *   keeper    none here; a third process holds both on itself, as
 *             `iotap run` keeps one open for the job
 *
 * tests/bench/run-switch-cost.sh runs the modes in turn and prints their
 * medians. */

#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "interpose/mapped/fault_event.h"

static int g_events = 2;
static int g_disabled = 0;

static void open_events(void) {
  const unsigned long configs[2] = {PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_PAGE_FAULTS_MAJ};
  for (int i = 0; i < g_events; ++i) {
    struct perf_event_attr a;
    IotapFaultEventAttr(&a, configs[i]);  /* as the shim opens them */
    a.disabled = g_disabled;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
      perror("perf_event_open");
      exit(2);
    }
    void* buffer = mmap(NULL, 9 * (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
                        MAP_SHARED, fd, 0);
    if (buffer == MAP_FAILED) {
      perror("mmap");
      exit(2);
    }
    close(fd);  // the mapping holds the event
  }
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s none|sampling|one|disabled|keeper ROUND_TRIPS\n", argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  long n = atol(argv[2]);
  int here = 1;  // events in the two processes
  if (strcmp(mode, "none") == 0 || strcmp(mode, "keeper") == 0) {
    here = 0;
  } else if (strcmp(mode, "one") == 0) {
    g_events = 1;
  } else if (strcmp(mode, "disabled") == 0) {
    g_disabled = 1;
  } else if (strcmp(mode, "sampling") != 0) {
    fprintf(stderr, "%s: no mode %s\n", argv[0], mode);
    return 2;
  }
  pid_t keeper = -1;
  if (strcmp(mode, "keeper") == 0) {
    keeper = fork();
    if (keeper == 0) {
      open_events();
      pause();
      _exit(0);
    }
    usleep(20000);
  }
  int there[2], back[2];
  if (pipe(there) != 0 || pipe(back) != 0) return 2;
  char c = 0;
  pid_t child = fork();
  if (child == 0) {
    if (here) open_events();
    for (long i = 0; i < n; ++i) {
      if (read(there[0], &c, 1) != 1 || write(back[1], &c, 1) != 1) _exit(2);
    }
    _exit(0);
  }
  if (here) open_events();
  usleep(10000);
  double t0 = now_s();
  for (long i = 0; i < n; ++i) {
    if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1) return 2;
  }
  double t1 = now_s();
  waitpid(child, NULL, 0);
  if (keeper > 0) {
    kill(keeper, SIGKILL);
    waitpid(keeper, NULL, 0);
  }
  printf("%s %.3f\n", mode, (t1 - t0) / (double)n * 1e6);
  return 0;
}
