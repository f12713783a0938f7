/* symbol_caller cases for descriptors (interpose/posix/posix_open.cc): the open
 * family, mkstemp, close, duplication, and the calls that only change what
 * the shim's descriptor table knows (close_range, closefrom, chdir, fchdir),
 * whose effect shows in the next call's event. */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/integration/programs/symbol_caller.h"

typedef int (*open_fn)(const char*, int, ...);
typedef int (*open2_fn)(const char*, int);
typedef int (*openat_fn)(int, const char*, int, ...);
typedef int (*openat2_fn)(int, const char*, int);
typedef int (*creat_fn)(const char*, mode_t);
typedef int (*fcntl_fn)(int, int, ...);

enum { kData = 20, kText = 22, kDir = 23, kBad = 999 };

/* Ends a case whose result is a new descriptor, and closes it. */
static void end_open(int fd, int err) {
  end(fd, err);
  if (fd >= 0) close(fd);
}

static void note_mode(const char* path) {
  struct stat st;
  if (stat(path, &st) == 0) note("%s mode %o", path, (unsigned)(st.st_mode & 0777));
}

static void run_open(const char* name, void* fn) {
  open_fn call = fn;
  begin("ok");
  end_open(call("data.bin", O_RDONLY), errno);
  begin("create");
  end_open(call("new.bin", O_WRONLY | O_CREAT | O_TRUNC, 0640), errno);
  note_mode("new.bin");
  begin("dotdot");
  end_open(call("dir/../text.txt", O_RDONLY), errno);
  begin("tmpfile");
  end_open(call("dir", O_TMPFILE | O_RDWR, 0600), errno);
  begin("direct");
  end_open(call("data.bin", O_RDONLY | O_DIRECT), errno);
  begin("enoent");
  end_open(call("missing", O_RDONLY), errno);
}

static int open_2(const char* path, int flags) { return __open_2(path, flags); }
static int open64_2(const char* path, int flags) { return __open64_2(path, flags); }
static int openat_2(int dirfd, const char* path, int flags) {
  return __openat_2(dirfd, path, flags);
}
static int openat64_2(int dirfd, const char* path, int flags) {
  return __openat64_2(dirfd, path, flags);
}

static void run_open_2(const char* name, void* fn) {
  open2_fn call = fn;
  begin("ok");
  end_open(call("data.bin", O_RDONLY), errno);
  begin("enoent");
  end_open(call("missing", O_RDONLY), errno);
}

static void run_openat(const char* name, void* fn) {
  openat_fn call = fn;
  char absolute[4096];
  snprintf(absolute, sizeof(absolute), "%s/text.txt", g_workdir);
  open_at("dir", O_RDONLY | O_DIRECTORY, kDir, 0);
  begin("ok");
  end_open(call(kDir, "a", O_RDONLY), errno);
  begin("create");
  end_open(call(kDir, "c", O_RDWR | O_CREAT, 0600), errno);
  note_mode("dir/c");
  begin("absolute");
  end_open(call(kDir, absolute, O_RDONLY), errno);
  begin("cwd");
  end_open(call(AT_FDCWD, "text.txt", O_RDONLY), errno);
  begin("enoent");
  end_open(call(kDir, "missing", O_RDONLY), errno);
}

static void run_openat_2(const char* name, void* fn) {
  openat2_fn call = fn;
  open_at("dir", O_RDONLY | O_DIRECTORY, kDir, 0);
  begin("ok");
  end_open(call(kDir, "a", O_RDONLY), errno);
  begin("enoent");
  end_open(call(kDir, "missing", O_RDONLY), errno);
}

static void run_creat(const char* name, void* fn) {
  creat_fn call = fn;
  begin("ok");
  end_open(call("made.bin", 0600), errno);
  note_mode("made.bin");
  begin("enoent");
  end_open(call("nodir/x", 0600), errno);
}

/* mkstemp, mkostemp, mkstemps, mkostemps and their 64 forms. The name made
 * is random, so only its shape is printed. */
static int call_mkstemp(const char* name, char* path_template) {
  if (strcmp(name, "mkstemp") == 0) return mkstemp(path_template);
  if (strcmp(name, "mkstemp64") == 0) return mkstemp64(path_template);
  if (strcmp(name, "mkostemp") == 0) return mkostemp(path_template, O_CLOEXEC);
  if (strcmp(name, "mkostemp64") == 0) return mkostemp64(path_template, O_CLOEXEC);
  if (strcmp(name, "mkstemps") == 0) return mkstemps(path_template, 4);
  if (strcmp(name, "mkstemps64") == 0) return mkstemps64(path_template, 4);
  if (strcmp(name, "mkostemps") == 0) return mkostemps(path_template, 4, O_APPEND);
  if (strcmp(name, "mkostemps64") == 0) return mkostemps64(path_template, 4, O_APPEND);
  abort();
}

static void run_mkstemp(const char* name, void* fn) {
  int suffix = strstr(name, "stemps") != NULL;
  char made[32], bad[32];
  strcpy(made, suffix ? "tmpXXXXXX.dat" : "tmpXXXXXX");
  strcpy(bad, suffix ? "bad.dat" : "bad");
  begin("ok");
  end_open(call_mkstemp(name, made), errno);
  note("made %zu bytes, starts %.3s", strlen(made), made);
  begin("einval");
  end_open(call_mkstemp(name, bad), errno);
}

static void run_close(const char* name, void* fn) {
  char buf[8];
  open_at("data.bin", O_RDONLY, kData, 100);
  begin("ok");
  int r = close(kData);
  end(r, errno);
  begin("ebadf");
  r = close(kData);
  end(r, errno);
  raw_open_at("text.txt", O_RDONLY, kData);
  begin("reuse");
  end(read(kData, buf, 5), errno);
}

/* dup, dup2 and dup3 onto text.txt's descriptor: the new descriptor shares
 * data.bin's position. */
static void run_dup(const char* name, void* fn) {
  char buf[16];
  open_at("data.bin", O_RDONLY, kData, 100);
  open_at("text.txt", O_RDONLY, kText, 0);
  int is_dup2 = strcmp(name, "dup2") == 0, is_dup3 = strcmp(name, "dup3") == 0;
  begin("ok");
  int r = is_dup2 ? dup2(kData, kText) : is_dup3 ? dup3(kData, kText, O_CLOEXEC) : dup(kData);
  end(r, errno);
  begin("read-new");
  end(read(r, buf, 10), errno);
  begin("read-old");
  end(read(kData, buf, 10), errno);
  begin("ebadf");
  r = is_dup2 ? dup2(kBad, kText) : is_dup3 ? dup3(kBad, kText, 0) : dup(kBad);
  end(r, errno);
  if (is_dup3) {
    begin("einval");
    end(dup3(kData, kData, 0), errno);
  }
}

static void run_fcntl(const char* name, void* fn) {
  fcntl_fn call = fn;
  char buf[16];
  open_at("data.bin", O_RDONLY, kData, 100);
  begin("dupfd");
  end(call(kData, F_DUPFD, 50), errno);
  begin("dupfd-cloexec");
  end(call(kData, F_DUPFD_CLOEXEC, 60), errno);
  begin("getfd");
  end(call(60, F_GETFD), errno);
  begin("read");
  end(read(50, buf, 10), errno);
  begin("ebadf");
  end(call(kBad, F_DUPFD, 0), errno);
}

static void run_close_range(const char* name, void* fn) {
  char buf[8];
  open_at("data.bin", O_RDONLY, kData, 100);
  open_at("data.bin", O_RDONLY, 21, 0);
  begin("ok");
  end(close_range(kData, kData, 0), errno);
  raw_open_at("text.txt", O_RDONLY, kData);
  begin("reused");
  end(read(kData, buf, 5), errno);
  begin("cloexec");
  end(close_range(21, 21, CLOSE_RANGE_CLOEXEC), errno);
  begin("kept");
  end(read(21, buf, 5), errno);
  begin("einval");
  end(close_range(30, 20, 0), errno);
}

static void run_closefrom(const char* name, void* fn) {
  char buf[8];
  open_at("data.bin", O_RDONLY, kData, 100);
  begin("ok");
  closefrom(kData);
  end(0, errno);
  raw_open_at("text.txt", O_RDONLY, kData);
  begin("reused");
  end(read(kData, buf, 5), errno);
}

/* chdir and fchdir: a relative path opened afterwards is named from the new
 * directory. The first relative open makes the shim remember the old one. */
static void run_chdir(const char* name, void* fn) {
  int fchdir_case = name[0] == 'f';
  close(open("text.txt", O_RDONLY));
  open_at("dir", O_RDONLY | O_DIRECTORY, kDir, 0);
  begin("ok");
  end(fchdir_case ? fchdir(kDir) : chdir("dir"), errno);
  begin("open");
  end_open(open("a", O_RDONLY), errno);
  begin("error");
  end(fchdir_case ? fchdir(kBad) : chdir("missing"), errno);
  begin("open-again");
  end_open(open("a", O_RDONLY), errno);
}

const struct symbol_case kOpenCases[] = {
    {"open", run_open, open},
    {"open64", run_open, open64},
    {"__open_2", run_open_2, open_2},
    {"__open64_2", run_open_2, open64_2},
    {"openat", run_openat, openat},
    {"openat64", run_openat, openat64},
    {"__openat_2", run_openat_2, openat_2},
    {"__openat64_2", run_openat_2, openat64_2},
    {"creat", run_creat, creat},
    {"creat64", run_creat, creat64},
    {"mkstemp", run_mkstemp, NULL},
    {"mkstemp64", run_mkstemp, NULL},
    {"mkostemp", run_mkstemp, NULL},
    {"mkostemp64", run_mkstemp, NULL},
    {"mkstemps", run_mkstemp, NULL},
    {"mkstemps64", run_mkstemp, NULL},
    {"mkostemps", run_mkstemp, NULL},
    {"mkostemps64", run_mkstemp, NULL},
    {"close", run_close, NULL},
    {"dup", run_dup, NULL},
    {"dup2", run_dup, NULL},
    {"dup3", run_dup, NULL},
    {"fcntl", run_fcntl, fcntl},
    {"fcntl64", run_fcntl, fcntl64},
    {"close_range", run_close_range, NULL},
    {"closefrom", run_closefrom, NULL},
    {"chdir", run_chdir, NULL},
    {"fchdir", run_chdir, NULL},
    {NULL, NULL, NULL},
};
