// Run as a set-uid or set-gid program by security_test.cc, to check that the
// shim stays inert in secure-execution mode, whether it was preloaded (the
// dynamic loader should have refused) or loaded by the program itself.
//
//   setuid_probe SHIM FILE
//
// Prints whether the process runs in secure-execution mode (AT_SECURE),
// whether SHIM was already loaded (preloaded) before the program loads it
// with dlopen, then reads FILE through the shim's own open, read and close
// (which record nothing, the shim being inert) and prints how many bytes
// came back. Exits 1 if SHIM cannot be loaded.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: setuid_probe SHIM FILE\n");
    return 2;
  }
  int preloaded = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD) != NULL;
  printf("secure %lu preloaded %d\n", getauxval(AT_SECURE), preloaded);
  void* shim = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (shim == NULL) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  int (*shim_open)(const char*, int, ...) = dlsym(shim, "open");
  ssize_t (*shim_read)(int, void*, size_t) = dlsym(shim, "read");
  int (*shim_close)(int) = dlsym(shim, "close");
  if (shim_open == NULL || shim_read == NULL || shim_close == NULL) {
    fprintf(stderr, "the shim exports no open, read or close\n");
    return 1;
  }
  char buf[4096];
  int fd = shim_open(argv[2], O_RDONLY);
  ssize_t n = fd < 0 ? -1 : shim_read(fd, buf, sizeof(buf));
  if (fd >= 0) shim_close(fd);
  printf("read %zd\n", n);
  return 0;
}
