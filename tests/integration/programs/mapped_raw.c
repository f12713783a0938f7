// Faults in a mapping the mmap wrappers never saw: a data file mapped by a
// raw system call, while another data file's mapping (made through libc)
// keeps the page-fault sampler on.
//
//   mapped_raw SEEN RAW
//       maps SEEN through mmap() and reads its first byte, maps RAW (8 MiB)
//       with syscall(SYS_mmap, ...), reads one byte per 64 KiB window of it
//       and prints "sum N" (the sum of those bytes).

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
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
  if (argc != 3) {
    fprintf(stderr, "usage: mapped_raw SEEN RAW\n");
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
  long sum = seen[0] * 0;
  const unsigned char* p = (const unsigned char*)raw;
  for (long at = 0; at < kFileBytes; at += kWindow) sum += p[at];
  printf("sum %ld\n", sum);
  return 0;
}
