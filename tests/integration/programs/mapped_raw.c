// Faults in a mapping the mmap wrappers never saw: a data file mapped by a
// raw system call, while another data file's mapping (made through libc)
// keeps the page-fault sampler on.
//
//   mapped_raw SEEN RAW [random|late]
//       maps SEEN through mmap() and reads its first byte, maps RAW (8 MiB)
//       with syscall(SYS_mmap, ...), reads one byte per 64 KiB window of it
//       and prints "sum N" (the sum of those bytes) and "faults MINOR MAJOR"
//       (the thread's own counts over the reads). With "random", RAW's
//       mapping is MADV_RANDOM first: no readahead, so in a cold file every
//       window is a major fault. With "late", before mapping RAW it faults
//       in 4 MiB of fresh anonymous memory (faults in no file mapping, which
//       send a tracer to the kernel's list of mappings) and waits 100 ms.

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define kWindow (64 * 1024)
#define kFileBytes (8 << 20)

static int Open(const char* path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) perror(path);
  return fd;
}

int main(int argc, char** argv) {
  int advise_random = argc == 4 && strcmp(argv[3], "random") == 0;
  int late = argc == 4 && strcmp(argv[3], "late") == 0;
  if (argc != 3 && !advise_random && !late) {
    fprintf(stderr, "usage: mapped_raw SEEN RAW [random|late]\n");
    return 1;
  }
  int seen_fd = Open(argv[1]);
  int raw_fd = Open(argv[2]);
  if (seen_fd < 0 || raw_fd < 0) return 2;
  const unsigned char* seen = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, seen_fd, 0);
  if (seen == MAP_FAILED) {
    perror("mmap");
    return 2;
  }
  long sum = seen[0] * 0;  // the sampler is on from this fault
  if (late) {
    volatile unsigned char* anon =
        mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (anon == MAP_FAILED) {
      perror("mmap");
      return 2;
    }
    for (long at = 0; at < (4 << 20); at += 4096) anon[at] = 1;
    struct timespec pause = {0, 100000000};
    nanosleep(&pause, NULL);
  }
  /* syscall() reads each argument as a long: pass longs. */
  long raw = syscall(SYS_mmap, 0L, (long)kFileBytes, (long)PROT_READ, (long)MAP_PRIVATE,
                     (long)raw_fd, 0L);
  if (raw == -1) {
    perror("mmap");
    return 2;
  }
  if (advise_random && madvise((void*)raw, kFileBytes, MADV_RANDOM) != 0) {
    perror("madvise");
    return 2;
  }
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
