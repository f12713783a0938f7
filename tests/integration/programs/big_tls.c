/* A program with 1 MiB of static thread-local storage, more than the shim's
 * writer thread's own stack: glibc puts static TLS on each thread's stack.
 *
 *   big_tls FILE CALLS   CALLS 1-byte preads of FILE */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static __thread char g_big[1 << 20];

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) return 1;
  long calls = atol(argv[2]);
  for (long i = 0; i < calls; ++i) {
    if (pread(fd, g_big + (i & 1023), 1, 0) != 1) return 1;
  }
  close(fd);
  printf("%d\n", g_big[0]);
  return 0;
}
