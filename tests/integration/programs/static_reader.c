// A statically linked program (built with -static): the dynamic loader, and
// so LD_PRELOAD, never comes into play. Under the shim it must run exactly as
// it does without, and leave no trace.
//
//   static_reader FILE OUT   reads FILE, writes a copy to OUT, forks a child
//                            that reads FILE again; prints sizes, a checksum
//                            and the child's exit status.

#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static long Checksum(const char* path, unsigned long* sum) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  char buf[4096];
  long total = 0;
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) {
    for (ssize_t i = 0; i < n; ++i) *sum = *sum * 31 + (unsigned char)buf[i];
    total += n;
  }
  close(fd);
  return total;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: static_reader FILE OUT\n");
    return 2;
  }
  unsigned long sum = 0;
  long size = Checksum(argv[1], &sum);
  FILE* in = fopen(argv[1], "rb");
  FILE* out = fopen(argv[2], "wb");
  if (size < 0 || in == NULL || out == NULL) {
    perror("open");
    return 1;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), in)) > 0) fwrite(buf, 1, n, out);
  fclose(in);
  fclose(out);
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    unsigned long again = 0;
    _exit(Checksum(argv[1], &again) == size && again == sum ? 5 : 6);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("size %ld checksum %lu child %d\n", size, sum, WEXITSTATUS(status));
  return 0;
}
