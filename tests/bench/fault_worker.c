/* Page faults in a file mapping, for tests/bench/run-mapped-overhead.sh:
 *
 *   fault_worker FILE ROUNDS [sequential|random]
 *
 * Maps FILE (which should be in the page cache) ROUNDS times with
 * MADV_RANDOM, touches one byte of every page, in the file's order or in a
 * shuffled one (the same each round), unmaps it, and prints:
 *   faults N            the page faults the touching loops took (the
 *                       thread's minor and major faults, getrusage);
 *   pages_per_fault N   pages touched per fault: MADV_RANDOM turns off
 *                       readahead, not fault-around (Linux 6.18 here maps
 *                       the 64 KiB around each fault, or the large folio,
 *                       so a fault maps 16 pages or more);
 *   ns_per_fault N      the mean wall time per fault of the touching loops
 *                       alone: what the thread that faults pays;
 *   cpu_ns_per_fault N  the process's CPU time per fault, every thread's
 *                       (a tracer's writer too), from before the first
 *                       round to 100 ms after the last (time for a writer
 *                       to take the last faults): what the machine pays.
 * Before 2026-12-07 (eleventh session) it divided by the pages touched,
 * taking each for a fault: its figures were per page, about a sixteenth of
 * these.
 * A shuffled order puts nearly every fault in a page table (2 MiB) of its
 * own, the costliest case for a writer that looks at the page tables of
 * the faults it takes (one look per page table per drain). */

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

// The calling thread's page faults so far, minor and major.
static long long thread_faults(void) {
  struct rusage u;
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt + u.ru_majflt;
}

static long long cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) return 2;
  int shuffled = argc == 4 && strcmp(argv[3], "random") == 0;
  if (argc == 4 && !shuffled && strcmp(argv[3], "sequential") != 0) return 2;
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return 2;
  long page = sysconf(_SC_PAGESIZE);
  int rounds = atoi(argv[2]);
  long pages = st.st_size / page;
  off_t* order = malloc((pages > 0 ? pages : 1) * sizeof(off_t));
  if (order == NULL) return 2;
  for (long i = 0; i < pages; ++i) order[i] = i * page;
  if (shuffled) {
    unsigned long long x = 88172645463325252ull;  /* xorshift64, a fixed seed */
    for (long i = pages - 1; i > 0; --i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      long j = (long)(x % (unsigned long long)(i + 1));
      off_t t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
  }
  long long total = 0, faults = 0, touched = 0;
  unsigned sum = 0;
  long long cpu0 = cpu_ns();
  for (int r = 0; r < rounds; ++r) {
    volatile unsigned char* p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return 2;
    madvise((void*)p, st.st_size, MADV_RANDOM);
    long long f0 = thread_faults();
    long long t0 = now_ns();
    for (long i = 0; i < pages; ++i) sum += p[order[i]];
    total += now_ns() - t0;
    faults += thread_faults() - f0;
    touched += pages;
    munmap((void*)p, st.st_size);
  }
  struct timespec pause = {0, 100000000};
  nanosleep(&pause, NULL);
  long long cpu = cpu_ns() - cpu0;
  if (faults == 0) faults = 1;
  printf("faults %lld\npages_per_fault %.1f\nns_per_fault %.1f\ncpu_ns_per_fault %.1f\nsum %u\n",
         faults, (double)touched / faults, (double)total / faults, (double)cpu / faults, sum);
  free(order);
  return 0;
}
