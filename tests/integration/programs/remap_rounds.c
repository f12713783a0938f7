// Maps a file again and again, as a job that opens a memory-mapped dataset
// per epoch: for the tracer, mappings come and go at the same addresses
// while their faults wait to be written.
//
//   remap_rounds FILE ROUNDS
//       maps FILE ROUNDS times with MADV_RANDOM (one fault per page, no
//       fault-around), touches one byte of every page, unmaps it, and
//       prints "sum N" (the bytes touched, added up).

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return 2;
  long page = sysconf(_SC_PAGESIZE);
  int rounds = atoi(argv[2]);
  unsigned long long sum = 0;
  for (int r = 0; r < rounds; ++r) {
    volatile unsigned char* p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return 3;
    madvise((void*)p, st.st_size, MADV_RANDOM);
    for (off_t at = 0; at < st.st_size; at += page) sum += p[at];
    munmap((void*)p, st.st_size);
  }
  close(fd);
  printf("sum %llu\n", sum);
  return 0;
}
