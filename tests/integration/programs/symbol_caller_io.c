/* symbol_caller cases for the POSIX data transfers (interpose/posix/posix_io.cc).
 * data.bin is read on descriptor 20; writes go to out.bin on descriptor 21. */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tests/integration/programs/symbol_caller.h"

typedef ssize_t (*read_fn)(int, void*, size_t);
typedef ssize_t (*pread_fn)(int, void*, size_t, off_t);
typedef ssize_t (*write_fn)(int, const void*, size_t);
typedef ssize_t (*pwrite_fn)(int, const void*, size_t, off_t);
typedef ssize_t (*vector_fn)(int, const struct iovec*, int);
typedef ssize_t (*pvector_fn)(int, const struct iovec*, int, off_t);
typedef ssize_t (*pvector2_fn)(int, const struct iovec*, int, off_t, int);
typedef ssize_t (*sendfile_fn)(int, int, off_t*, size_t);

enum { kData = 20, kOut = 21, kBad = 999 };

/* The fortified forms with the buffer size a fortified caller would pass. */
static ssize_t read_chk(int fd, void* buf, size_t n) { return __read_chk(fd, buf, n, 64); }
static ssize_t pread_chk(int fd, void* buf, size_t n, off_t offset) {
  return __pread_chk(fd, buf, n, offset, 64);
}
static ssize_t pread64_chk(int fd, void* buf, size_t n, off_t offset) {
  return __pread64_chk(fd, buf, n, offset, 64);
}

/* preadv2, preadv64v2, pwritev2, pwritev64v2 take flags. */
static int ends_with_v2(const char* name) {
  size_t n = strlen(name);
  return n > 2 && strcmp(name + n - 2, "v2") == 0;
}

static void print_out_file(void) {
  char buf[512];
  ssize_t n = pread(kOut, buf, sizeof(buf), 0);
  note("out.bin: %zd bytes, sum %u", n, checksum(buf, n > 0 ? (size_t)n : 0));
}

/* read, __read_chk: tracked positions, then a bad descriptor. */
static void run_read(const char* name, void* fn) {
  read_fn call = fn;
  char buf[64];
  open_at("data.bin", O_RDONLY, kData, 100);
  begin("ok");
  ssize_t r = call(kData, buf, 50);
  end(r, errno);
  note("sum %u", checksum(buf, 50));
  begin("next");
  r = call(kData, buf, 50);
  end(r, errno);
  begin("ebadf");
  r = call(kBad, buf, 10);
  end(r, errno);
}

/* pread and its forms: explicit offsets that leave the position alone. */
static void run_pread(const char* name, void* fn) {
  pread_fn call = fn;
  char buf[64];
  open_at("data.bin", O_RDONLY, kData, 0);
  begin("ok");
  ssize_t r = call(kData, buf, 50, 200);
  end(r, errno);
  note("sum %u", checksum(buf, 50));
  begin("short");
  r = call(kData, buf, 50, 4080);
  end(r, errno);
  begin("einval");
  r = call(kData, buf, 10, -1);
  end(r, errno);
  begin("read");
  r = read(kData, buf, 10);
  end(r, errno);
}

static void run_readv(const char* name, void* fn) {
  char a[30], b[20];
  struct iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};
  open_at("data.bin", O_RDONLY, kData, 100);
  begin("ok");
  ssize_t r = readv(kData, iov, 2);
  end(r, errno);
  note("sums %u %u", checksum(a, sizeof(a)), checksum(b, sizeof(b)));
  /* The kernel refuses more than IOV_MAX entries before it reads any; so
   * must the shim. */
  begin("einval");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
  r = readv(kData, iov, 1 << 20);
#pragma GCC diagnostic pop
  end(r, errno);
  begin("ebadf");
  r = readv(kBad, iov, 2);
  end(r, errno);
}

/* preadv, preadv64; preadv2 and preadv64v2 add an offset of -1 ("here"). */
static void run_preadv(const char* name, void* fn) {
  char a[30], b[20];
  struct iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};
  int v2 = ends_with_v2(name);
  open_at("data.bin", O_RDONLY, kData, 100);
  begin("ok");
  ssize_t r = v2 ? ((pvector2_fn)fn)(kData, iov, 2, 300, 0) : ((pvector_fn)fn)(kData, iov, 2, 300);
  end(r, errno);
  note("sums %u %u", checksum(a, sizeof(a)), checksum(b, sizeof(b)));
  if (v2) {
    begin("current");
    r = ((pvector2_fn)fn)(kData, iov, 2, -1, 0);
    end(r, errno);
  }
  begin("ebadf");
  r = v2 ? ((pvector2_fn)fn)(kBad, iov, 2, 300, 0) : ((pvector_fn)fn)(kBad, iov, 2, 300);
  end(r, errno);
}

static void run_write(const char* name, void* fn) {
  open_at("out.bin", O_RDWR | O_CREAT | O_TRUNC, kOut, 0);
  open_at("data.bin", O_RDONLY, kData, 0);
  begin("ok");
  ssize_t r = write(kOut, "hello world", 11);
  end(r, errno);
  begin("next");
  r = write(kOut, "abc", 3);
  end(r, errno);
  begin("ebadf");
  r = write(kData, "x", 1);
  end(r, errno);
  open_at("app.bin", O_WRONLY | O_CREAT | O_APPEND, 22, 0);
  begin("append");
  r = write(22, "xy", 2);
  end(r, errno);
  print_out_file();
}

static void run_pwrite(const char* name, void* fn) {
  pwrite_fn call = fn;
  open_at("out.bin", O_RDWR | O_CREAT | O_TRUNC, kOut, 0);
  open_at("data.bin", O_RDONLY, kData, 0);
  begin("ok");
  ssize_t r = call(kOut, "hello", 5, 100);
  end(r, errno);
  begin("ebadf");
  r = call(kData, "x", 1, 0);
  end(r, errno);
  print_out_file();
}

/* writev, pwritev, pwritev64, pwritev2, pwritev64v2. */
static void run_writev(const char* name, void* fn) {
  struct iovec iov[2] = {{"hello ", 6}, {"world", 5}};
  int positional = name[0] == 'p';
  int v2 = ends_with_v2(name);
  open_at("out.bin", O_RDWR | O_CREAT | O_TRUNC, kOut, 0);
  begin("ok");
  ssize_t r = v2           ? ((pvector2_fn)fn)(kOut, iov, 2, 100, 0)
              : positional ? ((pvector_fn)fn)(kOut, iov, 2, 100)
                           : ((vector_fn)fn)(kOut, iov, 2);
  end(r, errno);
  if (v2) {
    begin("current");
    r = ((pvector2_fn)fn)(kOut, iov, 2, -1, 0);
    end(r, errno);
  }
  begin("ebadf");
  r = v2           ? ((pvector2_fn)fn)(kBad, iov, 2, 100, 0)
      : positional ? ((pvector_fn)fn)(kBad, iov, 2, 100)
                   : ((vector_fn)fn)(kBad, iov, 2);
  end(r, errno);
  print_out_file();
}

static void run_copy_file_range(const char* name, void* fn) {
  open_at("data.bin", O_RDONLY, kData, 0);
  open_at("out.bin", O_RDWR | O_CREAT | O_TRUNC, kOut, 0);
  off64_t in_offset = 100;
  begin("ok");
  ssize_t r = copy_file_range(kData, &in_offset, kOut, NULL, 200, 0);
  end(r, errno);
  note("in_offset %lld", (long long)in_offset);
  begin("tracked");
  r = copy_file_range(kData, NULL, kOut, NULL, 100, 0);
  end(r, errno);
  begin("ebadf");
  r = copy_file_range(kBad, NULL, kOut, NULL, 10, 0);
  end(r, errno);
  print_out_file();
}

static void run_sendfile(const char* name, void* fn) {
  sendfile_fn call = fn;
  open_at("data.bin", O_RDONLY, kData, 0);
  open_at("out.bin", O_RDWR | O_CREAT | O_TRUNC, kOut, 0);
  off_t offset = 50;
  begin("ok");
  ssize_t r = call(kOut, kData, &offset, 100);
  end(r, errno);
  note("offset %lld", (long long)offset);
  begin("tracked");
  r = call(kOut, kData, NULL, 60);
  end(r, errno);
  begin("ebadf");
  r = call(kOut, kBad, NULL, 10);
  end(r, errno);
  print_out_file();
}

const struct symbol_case kIoCases[] = {
    {"read", run_read, read},
    {"__read_chk", run_read, read_chk},
    {"pread", run_pread, pread},
    {"pread64", run_pread, pread64},
    {"__pread_chk", run_pread, pread_chk},
    {"__pread64_chk", run_pread, pread64_chk},
    {"readv", run_readv, NULL},
    {"preadv", run_preadv, preadv},
    {"preadv64", run_preadv, preadv64},
    {"preadv2", run_preadv, preadv2},
    {"preadv64v2", run_preadv, preadv64v2},
    {"write", run_write, NULL},
    {"pwrite", run_pwrite, pwrite},
    {"pwrite64", run_pwrite, pwrite64},
    {"writev", run_writev, writev},
    {"pwritev", run_writev, pwritev},
    {"pwritev64", run_writev, pwritev64},
    {"pwritev2", run_writev, pwritev2},
    {"pwritev64v2", run_writev, pwritev64v2},
    {"copy_file_range", run_copy_file_range, NULL},
    {"sendfile", run_sendfile, sendfile},
    {"sendfile64", run_sendfile, sendfile64},
    {NULL, NULL, NULL},
};
