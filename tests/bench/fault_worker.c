/* Page faults in a file mapping, for tests/bench/run-mapped-overhead.sh:
 *
 *   fault_worker FILE ROUNDS
 *
 * Maps FILE (which should be in the page cache) ROUNDS times with
 * MADV_RANDOM (no fault-around: each page touched is one minor fault),
 * touches one byte of every page, unmaps it, and prints the mean wall time
 * per fault of the touching loops alone, in ns: "ns_per_fault N". */

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return 2;
  long page = sysconf(_SC_PAGESIZE);
  int rounds = atoi(argv[2]);
  long long total = 0, faults = 0;
  unsigned sum = 0;
  for (int r = 0; r < rounds; ++r) {
    volatile unsigned char* p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return 2;
    madvise((void*)p, st.st_size, MADV_RANDOM);
    long long t0 = now_ns();
    for (off_t at = 0; at < st.st_size; at += page) sum += p[at];
    total += now_ns() - t0;
    faults += st.st_size / page;
    munmap((void*)p, st.st_size);
  }
  printf("ns_per_fault %.1f\nsum %u\n", (double)total / faults, sum);
  return 0;
}
