// Samples read through a file mapping at random, as a DataLoader worker
// reads a numpy.memmap dataset:
//
//   mapped_samples FILE SAMPLES SAMPLE_PAGES PAUSE_US
//
// maps FILE (in the page cache, for the kernel to map each fault's window
// whole), and reads SAMPLES samples of SAMPLE_PAGES pages at page offsets
// drawn from a fixed sequence (the same every run), one byte of every page
// in order, pausing PAUSE_US microseconds after each (a worker's decoding
// and collating: the writer drains the faults of a few samples at a time),
// keeps the mapping 1.5 s more (as a training job keeps its dataset mapped:
// the writer looks at the page tables while they are there, and the last
// fault's, held up to 1 s for a major sample that a minor fault never has,
// with the others), and prints:
//   map ADDR       the mapping's address (the kernel aligns fault-around
//                  windows in the address space, not in the file)
//   sample PAGE    each sample's first page
//   sum N          the sum of the bytes read

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: mapped_samples FILE SAMPLES SAMPLE_PAGES PAUSE_US\n");
    return 1;
  }
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    perror(argv[1]);
    return 2;
  }
  long samples = atol(argv[2]);
  long sample_pages = atol(argv[3]);
  long pause_us = atol(argv[4]);
  long pages = st.st_size / 4096;
  if (samples < 1 || sample_pages < 1 || sample_pages > pages) {
    fprintf(stderr, "mapped_samples: %s holds %ld pages\n", argv[1], pages);
    return 1;
  }
  const volatile unsigned char* data = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) {
    perror("mmap");
    return 2;
  }
  printf("map %lu\n", (unsigned long)data);
  unsigned long long x = 88172645463325252ull;  // xorshift64, a fixed seed
  long sum = 0;
  for (long s = 0; s < samples; ++s) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    long first = (long)(x % (unsigned long long)(pages - sample_pages + 1));
    printf("sample %ld\n", first);
    for (long p = first; p < first + sample_pages; ++p) sum += data[p * 4096];
    struct timespec pause = {pause_us / 1000000, pause_us % 1000000 * 1000};
    nanosleep(&pause, NULL);
  }
  printf("sum %ld\n", sum);
  struct timespec keep = {1, 500000000};
  nanosleep(&keep, NULL);
  munmap((void*)data, st.st_size);
  close(fd);
  return 0;
}
