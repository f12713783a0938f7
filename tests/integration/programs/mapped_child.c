// A forked child that reads its parent's mapping and makes no call the shim
// records until it has: the shape of a DataLoader worker over a
// numpy.memmap made before the fork.
//
//   mapped_child FILE
//       maps FILE (8 MiB) and dirties 64 MiB of heap, then forks; the child
//       writes one byte of every heap page (16,384 copy-on-write faults,
//       far more than a sample buffer holds), waits 0.5 s, reads one byte
//       per 64 KiB window of the mapping and prints their sum; the parent
//       waits for it and prints its status.

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define kWindow (64 * 1024)
#define kFileBytes (8 << 20)
#define kHeapBytes (64 << 20)

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: mapped_child FILE\n");
    return 1;
  }
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    perror("open");
    return 2;
  }
  const unsigned char* p = mmap(NULL, kFileBytes, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    return 2;
  }
  close(fd);
  char* heap = malloc(kHeapBytes);
  if (heap == NULL) return 2;
  memset(heap, 1, kHeapBytes);
  pid_t child = fork();
  if (child == 0) {
    for (size_t at = 0; at < kHeapBytes; at += 4096) heap[at] = 2;
    struct timespec pause = {0, 500000000};
    nanosleep(&pause, NULL);
    long sum = 0;
    for (size_t at = 0; at < kFileBytes; at += kWindow) sum += p[at];
    printf("child sum %ld\n", sum);
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("child status %d\n", status);
  return 0;
}
