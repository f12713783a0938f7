// Faults in a mapping the mmap wrappers never saw: a data file mapped by a
// raw system call, while another data file's mapping (made through libc)
// keeps the page-fault sampler on.
//
//   mapped_raw SEEN RAW [random]
//       maps SEEN through mmap() and reads its first byte, maps RAW (8 MiB)
//       with syscall(SYS_mmap, ...), reads one byte per 64 KiB window of it
//       and prints "sum N" (the sum of those bytes) and "faults MINOR MAJOR"
//       (the thread's own counts over the reads). With "random", RAW's
//       mapping is MADV_RANDOM first: no readahead, so in a cold file every
//       window is a major fault.

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define kWindow (64 * 1024)
#define kFileBytes (8 << 20)

static int Open(const char* path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) perror(path);
  return fd;
}

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 4 && strcmp(argv[3], "random") == 0)) {
    fprintf(stderr, "usage: mapped_raw SEEN RAW [random]\n");
    return 1;
  }
  int seen_fd = Open(argv[1]);
  int raw_fd = Open(argv[2]);
  if (seen_fd < 0 || raw_fd < 0) return 2;
  const unsigned char* seen = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, seen_fd, 0);
  /* syscall() reads each argument as a long: pass longs. */
  long raw = syscall(SYS_mmap, 0L, (long)kFileBytes, (long)PROT_READ, (long)MAP_PRIVATE,
                     (long)raw_fd, 0L);
  if (seen == MAP_FAILED || raw == -1) {
    perror("mmap");
    return 2;
  }
  if (argc == 4 && madvise((void*)raw, kFileBytes, MADV_RANDOM) != 0) {
    perror("madvise");
    return 2;
  }
  long sum = seen[0] * 0;
  const volatile unsigned char* p = (const volatile unsigned char*)raw;
  struct rusage before, after;
  getrusage(RUSAGE_THREAD, &before);
  for (long at = 0; at < kFileBytes; at += kWindow) sum += p[at];
  getrusage(RUSAGE_THREAD, &after);
  printf("sum %ld\n", sum);
  printf("faults %ld %ld\n", after.ru_minflt - before.ru_minflt,
         after.ru_majflt - before.ru_majflt);
  return 0;
}
