// Data faults between bursts of anonymous ones, as a DataLoader worker
// collating a batch makes them: megabytes of fresh memory faulted in within
// a millisecond, then a read through a file mapping.
//
//   mapped_storm DATA [thread]
//       maps DATA (8 MiB) and, for each 64 KiB window of it, faults in 8 MiB
//       of fresh anonymous memory (2,048 page faults) and frees it, reads
//       the window's first byte, and sleeps 2 ms; prints "sum N" (the sum of
//       those bytes). With "thread", a thread started after the mapping
//       does the reading, after a first burst of 3.5 MiB and a pause of 20 ms
//       (time for the sampler to give it a larger buffer).

#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define kWindow (64 * 1024)
#define kFileBytes (8 << 20)
#define kBurstBytes (8 << 20)

static const volatile unsigned char* data;
static long sum;

static void Sleep(long ns) {
  struct timespec pause = {0, ns};
  nanosleep(&pause, NULL);
}

// Faults in `bytes` of fresh anonymous memory and frees it.
static int Burst(long bytes) {
  volatile unsigned char* burst =
      mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (burst == MAP_FAILED) {
    perror("mmap");
    return -1;
  }
  for (long page = 0; page < bytes; page += 4096) burst[page] = 1;
  munmap((void*)burst, bytes);
  return 0;
}

static void* Read(void* ramp) {
  if (ramp != NULL) {
    if (Burst(7 << 19) != 0) return (void*)1;
    Sleep(20000000);
  }
  for (long at = 0; at < kFileBytes; at += kWindow) {
    if (Burst(kBurstBytes) != 0) return (void*)1;
    sum += data[at];
    Sleep(2000000);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "thread") != 0)) {
    fprintf(stderr, "usage: mapped_storm DATA [thread]\n");
    return 1;
  }
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    perror(argv[1]);
    return 2;
  }
  data = mmap(NULL, kFileBytes, PROT_READ, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) {
    perror("mmap");
    return 2;
  }
  void* failed = NULL;
  if (argc == 3) {
    pthread_t reader;
    if (pthread_create(&reader, NULL, Read, &sum) != 0 || pthread_join(reader, &failed) != 0) {
      return 2;
    }
  } else {
    failed = Read(NULL);
  }
  if (failed != NULL) return 2;
  printf("sum %ld\n", sum);
  return 0;
}
