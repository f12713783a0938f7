// The descriptor numbers a job gets around its mapped reads, printed so that
// a traced run's output can be compared with an untraced one's. While a
// process has a data file mapped, the shim samples its threads' page faults
// through perf events it opens on the thread that maps the file, on each
// thread started after, and in a forked child that maps one again.
//
//   mapped_fds FILE
//       maps FILE (at least 128 KiB) and reads one byte per 64 KiB of its
//       first half, then prints, one per line (with the sums of the bytes
//       each mapping's reads saw): the descriptors open() and dup() return; the one a thread
//       started after the mapping gets from open() once it has read its bytes of the second half;
//       the one a forked child gets after mapping FILE again and reading it; the one open() returns
//       after the job closed every descriptor above 2 (close_range); and the
//       job's descriptors below 512 with what they name (/proc/self/fd;
//       the shim's own files are parked higher, or in its writer thread's
//       table of its own).

#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define kWindow (64 * 1024)

static const char* g_path;
static size_t g_size;

static void Die(const char* what) {
  perror(what);
  exit(2);
}

// Maps the file and reads one byte per window of [from, to); returns their
// sum (which the caller prints, so that the reads are made).
static long Touch(size_t from, size_t to) {
  int fd = open(g_path, O_RDONLY);
  if (fd < 0) Die("open");
  const unsigned char* p = mmap(NULL, g_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) Die("mmap");
  close(fd);
  long sum = 0;
  for (size_t at = from; at < to; at += kWindow) sum += p[at];
  munmap((void*)p, g_size);
  return sum;
}

static void* Thread(void* arg) {
  (void)arg;
  long sum = Touch(g_size / 2, g_size);
  int fd = open(g_path, O_RDONLY);
  printf("thread sum %ld open %d\n", sum, fd);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: mapped_fds FILE\n");
    return 1;
  }
  g_path = argv[1];
  struct stat st;
  if (stat(g_path, &st) != 0 || st.st_size < 2 * kWindow) Die("stat");
  g_size = (size_t)st.st_size;

  // Mapped for the whole run, so that sampling stays on.
  int fd = open(g_path, O_RDONLY);
  const unsigned char* p = mmap(NULL, g_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) Die("mmap");
  close(fd);
  long sum = 0;
  for (size_t at = 0; at < g_size / 2; at += kWindow) sum += p[at];
  printf("sum %ld\n", sum);
  int a = open(g_path, O_RDONLY);
  printf("open %d dup %d\n", a, dup(a));
  fflush(stdout);

  pthread_t t;
  if (pthread_create(&t, NULL, Thread, NULL) != 0) Die("pthread_create");
  pthread_join(t, NULL);
  fflush(stdout);

  pid_t child = fork();
  if (child == 0) {
    long sum = Touch(0, g_size);
    printf("child sum %ld open %d\n", sum, open(g_path, O_RDONLY));
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("child status %d\n", status);

  if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0) Die("close_range");
  printf("after close_range open %d\n", open(g_path, O_RDONLY));
  sum = Touch(0, g_size);
  printf("sum %ld after close_range and a mapping open %d\n", sum, open(g_path, O_RDONLY));

  DIR* d = opendir("/proc/self/fd");
  if (d == NULL) Die("opendir");
  int listing = dirfd(d);
  static char names[512][PATH_MAX];
  for (struct dirent* e; (e = readdir(d)) != NULL;) {
    int n = atoi(e->d_name);
    if (e->d_name[0] == '.' || n == listing || n >= 512) continue;
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", n);
    ssize_t len = readlink(link, names[n], PATH_MAX - 1);
    if (len < 0) Die("readlink");
  }
  closedir(d);
  for (int n = 0; n < 512; ++n) {
    // 0-2 are the harness's pipes, named by inode numbers that differ per run.
    if (names[n][0] != '\0') printf("fd %d %s\n", n, n > 2 ? names[n] : "");
  }
  return 0;
}
