/* symbol_caller cases for the calls around the data (interpose/posix/posix_meta.cc):
 * positioning, synchronisation, mappings, advice, the stat family, directory
 * scans, unlink, rename, mkdir. */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/integration/programs/symbol_caller.h"

typedef off_t (*lseek_fn)(int, off_t, int);
typedef int (*sync_fn)(int);
typedef void* (*mmap_fn)(void*, size_t, int, int, int, off_t);
typedef int (*fadvise_fn)(int, off_t, off_t, int);

enum { kData = 20, kOut = 21, kDir = 23, kBad = 999 };

static void run_lseek(const char* name, void* fn) {
  lseek_fn call = fn;
  char buf[16];
  open_at("data.bin", O_RDONLY, kData, 0);
  begin("set");
  end(call(kData, 123, SEEK_SET), errno);
  begin("read");
  end(read(kData, buf, 10), errno);
  begin("end");
  end(call(kData, -10, SEEK_END), errno);
  begin("einval");
  end(call(kData, -1, SEEK_SET), errno);
}

static void run_sync(const char* name, void* fn) {
  sync_fn call = fn;
  open_at("out.bin", O_RDWR | O_CREAT | O_TRUNC, kOut, 0);
  begin("ok");
  end(call(kOut), errno);
  begin("ebadf");
  end(call(kBad), errno);
}

/* Mappings print 0 for an address and -1 for MAP_FAILED. */
static long mapped(void* p) { return p == MAP_FAILED ? -1 : 0; }

static void run_mmap(const char* name, void* fn) {
  mmap_fn call = fn;
  open_at("data.bin", O_RDONLY, kData, 0);
  begin("file");
  void* p = call(NULL, 4096, PROT_READ, MAP_PRIVATE, kData, 0);
  end(mapped(p), errno);
  if (p != MAP_FAILED) note("sum %u", checksum(p, 4096));
  begin("anon");
  void* q = call(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  end(mapped(q), errno);
  begin("einval");
  end(mapped(call(NULL, 4096, PROT_READ, MAP_PRIVATE, kData, 100)), errno);
}

static void run_munmap(const char* name, void* fn) {
  open_at("data.bin", O_RDONLY, kData, 0);
  void* p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, kData, 0);
  void* q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  begin("file");
  end(munmap(p, 4096), errno);
  begin("anon");
  end(munmap(q, 4096), errno);
}

/* mremap of a file mapping follows it (an event); anonymous memory and a
 * failed call record nothing. */
static void run_mremap(const char* name, void* fn) {
  open_at("data.bin", O_RDONLY, kData, 0);
  void* p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, kData, 0);
  void* q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  begin("file");
  void* r = mremap(p, 4096, 8192, MREMAP_MAYMOVE);
  end(mapped(r), errno);
  begin("anon");
  end(mapped(mremap(q, 4096, 8192, MREMAP_MAYMOVE)), errno);
  begin("einval");
  end(mapped(mremap(r, 8192, 4096, 0x4000)), errno);
}

static void run_fadvise(const char* name, void* fn) {
  fadvise_fn call = fn;
  open_at("data.bin", O_RDONLY, kData, 0);
  begin("ok");
  end(call(kData, 0, 4096, POSIX_FADV_SEQUENTIAL), errno);
  begin("einval");
  end(call(kData, 0, 4096, 99), errno);
}

/* --- The stat family: every form prints the size it saw. */

static int by_path(const char* name, const char* path, long long* size) {
  struct stat st = {0};
  struct stat64 st64 = {0};
  int r = -2;
  if (strcmp(name, "stat") == 0) r = stat(path, &st);
  if (strcmp(name, "stat64") == 0) r = stat64(path, &st64);
  if (strcmp(name, "__xstat") == 0) r = __xstat(STAT_VER, path, &st);
  if (strcmp(name, "__xstat64") == 0) r = __xstat64(STAT_VER, path, &st64);
  if (strcmp(name, "lstat") == 0) r = lstat(path, &st);
  if (strcmp(name, "lstat64") == 0) r = lstat64(path, &st64);
  if (strcmp(name, "__lxstat") == 0) r = __lxstat(STAT_VER, path, &st);
  if (strcmp(name, "__lxstat64") == 0) r = __lxstat64(STAT_VER, path, &st64);
  *size = (long long)st.st_size + (long long)st64.st_size;
  return r;
}

static void run_path_stat(const char* name, void* fn) {
  const char* labels[] = {"ok", "link", "enoent"};
  const char* paths[] = {"data.bin", "link", "missing"};
  for (int i = 0; i < 3; ++i) {
    long long size = 0;
    begin(labels[i]);
    end(by_path(name, paths[i], &size), errno);
    note("size %lld", size);
  }
}

static int by_fd(const char* name, int fd, long long* size) {
  struct stat st = {0};
  struct stat64 st64 = {0};
  int r = -2;
  if (strcmp(name, "fstat") == 0) r = fstat(fd, &st);
  if (strcmp(name, "fstat64") == 0) r = fstat64(fd, &st64);
  if (strcmp(name, "__fxstat") == 0) r = __fxstat(STAT_VER, fd, &st);
  if (strcmp(name, "__fxstat64") == 0) r = __fxstat64(STAT_VER, fd, &st64);
  *size = (long long)st.st_size + (long long)st64.st_size;
  return r;
}

static void run_fd_stat(const char* name, void* fn) {
  long long size = 0;
  open_at("data.bin", O_RDONLY, kData, 0);
  begin("ok");
  end(by_fd(name, kData, &size), errno);
  note("size %lld", size);
  begin("ebadf");
  end(by_fd(name, kBad, &size), errno);
}

static int at_dir(const char* name, int dirfd, const char* path, int flags, long long* size) {
  struct stat st = {0};
  struct stat64 st64 = {0};
  struct statx stx = {0};
  int r = -2;
  if (strcmp(name, "fstatat") == 0) r = fstatat(dirfd, path, &st, flags);
  if (strcmp(name, "fstatat64") == 0) r = fstatat64(dirfd, path, &st64, flags);
  if (strcmp(name, "__fxstatat") == 0) r = __fxstatat(STAT_VER, dirfd, path, &st, flags);
  if (strcmp(name, "__fxstatat64") == 0) r = __fxstatat64(STAT_VER, dirfd, path, &st64, flags);
  if (strcmp(name, "statx") == 0) r = statx(dirfd, path, flags, STATX_SIZE, &stx);
  *size = (long long)st.st_size + (long long)st64.st_size + (long long)stx.stx_size;
  return r;
}

static void run_at_stat(const char* name, void* fn) {
  const char* labels[] = {"ok", "nofollow", "empty", "enoent"};
  const int dirs[] = {kDir, AT_FDCWD, kData, kDir};
  const char* paths[] = {"a", "link", "", "missing"};
  const int flags[] = {0, AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH, 0};
  open_at("data.bin", O_RDONLY, kData, 0);
  open_at("dir", O_RDONLY | O_DIRECTORY, kDir, 0);
  for (int i = 0; i < 4; ++i) {
    long long size = 0;
    begin(labels[i]);
    end(at_dir(name, dirs[i], paths[i], flags[i], &size), errno);
    note("size %lld", size);
  }
}

/* --- Directories: descriptors are printed in place of DIR pointers. */

static void run_opendir(const char* name, void* fn) {
  begin("ok");
  DIR* d = opendir("dir");
  end(d != NULL ? dirfd(d) : -1, errno);
  if (d != NULL) closedir(d);
  begin("enoent");
  d = opendir("missing");
  end(d != NULL ? dirfd(d) : -1, errno);
}

static void run_fdopendir(const char* name, void* fn) {
  open_at("dir", O_RDONLY | O_DIRECTORY, kDir, 0);
  open_at("data.bin", O_RDONLY, kData, 0);
  begin("ok");
  DIR* d = fdopendir(kDir);
  end(d != NULL ? dirfd(d) : -1, errno);
  begin("readdir");
  end(d != NULL && readdir(d) != NULL, errno);
  if (d != NULL) closedir(d);
  begin("enotdir");
  d = fdopendir(kData);
  end(d != NULL ? dirfd(d) : -1, errno);
}

static void run_readdir(const char* name, void* fn) {
  const char* labels[] = {"entry", "entry", "entry", "end"};
  int is64 = strcmp(name, "readdir64") == 0;
  DIR* d = opendir("dir");
  for (int i = 0; i < 4; ++i) {
    begin(labels[i]);
    const char* entry = NULL;
    if (is64) {
      struct dirent64* e = readdir64(d);
      entry = e != NULL ? e->d_name : NULL;
    } else {
      struct dirent* e = readdir(d);
      entry = e != NULL ? e->d_name : NULL;
    }
    end(entry != NULL, errno);
    if (entry != NULL) note("name %s", entry);
  }
  closedir(d);
}

static void run_closedir(const char* name, void* fn) {
  char buf[8];
  DIR* d = opendir("dir");
  int fd = dirfd(d);
  begin("ok");
  end(closedir(d), errno);
  raw_open_at("text.txt", O_RDONLY, fd);
  begin("reuse");
  end(read(fd, buf, 5), errno);
}

/* --- Names: unlink, rename, mkdir, rmdir. */

static void run_unlink(const char* name, void* fn) {
  raw_touch("victim");
  begin("ok");
  end(unlink("victim"), errno);
  begin("enoent");
  end(unlink("victim"), errno);
}

static void run_unlinkat(const char* name, void* fn) {
  raw_touch("dir/victim");
  raw_mkdir("dir/sub");
  open_at("dir", O_RDONLY | O_DIRECTORY, kDir, 0);
  begin("ok");
  end(unlinkat(kDir, "victim", 0), errno);
  begin("removedir");
  end(unlinkat(kDir, "sub", AT_REMOVEDIR), errno);
  begin("enoent");
  end(unlinkat(kDir, "victim", 0), errno);
}

static void run_rename(const char* name, void* fn) {
  raw_touch("old");
  open_at("dir", O_RDONLY | O_DIRECTORY, kDir, 0);
  if (strcmp(name, "rename") == 0) {
    begin("ok");
    end(rename("old", "new"), errno);
    begin("enoent");
    end(rename("old", "other"), errno);
  } else if (strcmp(name, "renameat") == 0) {
    begin("ok");
    end(renameat(kDir, "a", AT_FDCWD, "moved"), errno);
    begin("enoent");
    end(renameat(kDir, "a", AT_FDCWD, "other"), errno);
  } else {
    begin("ok");
    end(renameat2(AT_FDCWD, "old", kDir, "b", RENAME_NOREPLACE), errno);
    begin("eexist");
    end(renameat2(AT_FDCWD, "text.txt", AT_FDCWD, "data.bin", RENAME_NOREPLACE), errno);
  }
}

static void run_mkdir(const char* name, void* fn) {
  int at = strcmp(name, "mkdirat") == 0;
  struct stat st;
  open_at("dir", O_RDONLY | O_DIRECTORY, kDir, 0);
  begin("ok");
  end(at ? mkdirat(kDir, "nd", 0750) : mkdir("nd", 0750), errno);
  if (stat(at ? "dir/nd" : "nd", &st) == 0) note("mode %o", (unsigned)(st.st_mode & 0777));
  begin("eexist");
  end(at ? mkdirat(kDir, "nd", 0750) : mkdir("nd", 0750), errno);
}

static void run_rmdir(const char* name, void* fn) {
  raw_mkdir("gone");
  begin("ok");
  end(rmdir("gone"), errno);
  begin("enoent");
  end(rmdir("gone"), errno);
}

const struct symbol_case kMetaCases[] = {
    {"lseek", run_lseek, lseek},
    {"lseek64", run_lseek, lseek64},
    {"fsync", run_sync, fsync},
    {"fdatasync", run_sync, fdatasync},
    {"mmap", run_mmap, mmap},
    {"mmap64", run_mmap, mmap64},
    {"munmap", run_munmap, NULL},
    {"mremap", run_mremap, NULL},
    {"posix_fadvise", run_fadvise, posix_fadvise},
    {"posix_fadvise64", run_fadvise, posix_fadvise64},
    {"stat", run_path_stat, NULL},
    {"stat64", run_path_stat, NULL},
    {"__xstat", run_path_stat, NULL},
    {"__xstat64", run_path_stat, NULL},
    {"lstat", run_path_stat, NULL},
    {"lstat64", run_path_stat, NULL},
    {"__lxstat", run_path_stat, NULL},
    {"__lxstat64", run_path_stat, NULL},
    {"fstat", run_fd_stat, NULL},
    {"fstat64", run_fd_stat, NULL},
    {"__fxstat", run_fd_stat, NULL},
    {"__fxstat64", run_fd_stat, NULL},
    {"fstatat", run_at_stat, NULL},
    {"fstatat64", run_at_stat, NULL},
    {"__fxstatat", run_at_stat, NULL},
    {"__fxstatat64", run_at_stat, NULL},
    {"statx", run_at_stat, NULL},
    {"opendir", run_opendir, NULL},
    {"fdopendir", run_fdopendir, NULL},
    {"readdir", run_readdir, NULL},
    {"readdir64", run_readdir, NULL},
    {"closedir", run_closedir, NULL},
    {"unlink", run_unlink, NULL},
    {"unlinkat", run_unlinkat, NULL},
    {"rename", run_rename, NULL},
    {"renameat", run_rename, NULL},
    {"renameat2", run_rename, NULL},
    {"mkdir", run_mkdir, NULL},
    {"mkdirat", run_mkdir, NULL},
    {"rmdir", run_rmdir, NULL},
    {NULL, NULL, NULL},
};
