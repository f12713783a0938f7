// A program the lifecycle tests run under the shim: one mode per behaviour.
//
//   lifecycle threads DIR N M   N threads, each pread()s DIR/t<i>.bin M times
//   lifecycle fork DIR          reads a.bin, forks a child that reads b.bin
//   lifecycle exec DIR          reads a.bin 4 times, then execs cat b.bin
//   lifecycle spawn DIR         posix_spawn()s cat b.bin and waits
//   lifecycle end HOW CODE      one read of /dev/zero, then ends by HOW:
//                               exit, _exit, _Exit, return, abort
//   lifecycle loop DIR [N]      reads a.bin (forever, or N times) 1 ms apart,
//                               printing "<count>" after every 100 reads
//   lifecycle errors DIR        failing calls; prints each result and errno
//   lifecycle fdnumbers DIR MS  opens and closes a.bin for MS milliseconds,
//                               printing how many opens returned a
//                               descriptor other than the first open did
//                               (the lowest free one)
//   lifecycle closeall DIR      reads a.bin, closes every descriptor above
//                               2, reads b.bin, waits 50 ms, reads b.bin
//   lifecycle tables DIR        makes a pipe, reads a.bin (so the shim starts
//                               its writer thread) and keeps it open, then
//                               waits up to 5 s for a thread named
//                               iotap-writer whose descriptor table no longer
//                               has a.bin's descriptor; prints "writer shares
//                               the table" or "writer has a table of its
//                               own" (or "no writer thread"), then closes the
//                               pipe's write end and prints "pipe at end" if
//                               a read of the other end then returns 0 at
//                               once ("pipe still open" otherwise)
//
// Files are created by the tests. Output goes to stdout, one line per fact.

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

static char g_dir[4096];

static int OpenIn(const char* name) {
  char path[8192];
  snprintf(path, sizeof(path), "%s/%s", g_dir, name);
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    perror(path);
    exit(90);
  }
  return fd;
}

static void ReadTimes(int fd, int times, size_t size) {
  char buf[4096];
  for (int i = 0; i < times; ++i) {
    if (read(fd, buf, size) != (ssize_t)size) exit(91);
  }
}

struct ThreadJob {
  int index;
  int reads;
};

static void* ThreadMain(void* arg) {
  struct ThreadJob* job = arg;
  char name[64];
  snprintf(name, sizeof(name), "t%d.bin", job->index);
  int fd = OpenIn(name);
  char buf[100];
  for (int i = 0; i < job->reads; ++i) {
    if (pread(fd, buf, sizeof(buf), (off_t)i * 100) != (ssize_t)sizeof(buf)) exit(92);
  }
  close(fd);
  return NULL;
}

static int Threads(int n, int m) {
  pthread_t ids[256];
  struct ThreadJob jobs[256];
  if (n > 256) n = 256;
  for (int i = 0; i < n; ++i) {
    jobs[i].index = i;
    jobs[i].reads = m;
    pthread_create(&ids[i], NULL, ThreadMain, &jobs[i]);
  }
  for (int i = 0; i < n; ++i) pthread_join(ids[i], NULL);
  return 0;
}

static int Fork(void) {
  int a = OpenIn("a.bin");
  ReadTimes(a, 10, 100);  // still in the parent's buffer when it forks
  pid_t child = fork();
  if (child == 0) {
    int b = OpenIn("b.bin");
    ReadTimes(b, 5, 100);
    close(b);
    exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ReadTimes(a, 3, 100);
  close(a);
  printf("child %d\n", (int)child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

static int Exec(void) {
  int a = OpenIn("a.bin");
  ReadTimes(a, 4, 100);
  char path[8192];
  snprintf(path, sizeof(path), "%s/b.bin", g_dir);
  fflush(stdout);
  execl("/bin/cat", "cat", path, (char*)NULL);
  return 98;
}

static int Spawn(void) {
  char path[8192];
  snprintf(path, sizeof(path), "%s/b.bin", g_dir);
  char* argv[] = {"cat", path, NULL};
  pid_t pid;
  if (posix_spawn(&pid, "/bin/cat", NULL, NULL, argv, environ) != 0) return 97;
  int status = 0;
  waitpid(pid, &status, 0);
  printf("child %d\n", (int)pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 96;
}

static int End(const char* how, int code) {
  int fd = open("/dev/zero", O_RDONLY);
  char c;
  if (read(fd, &c, 1) != 1) return 95;
  fflush(stdout);
  if (strcmp(how, "exit") == 0) exit(code);
  if (strcmp(how, "_exit") == 0) _exit(code);
  if (strcmp(how, "_Exit") == 0) _Exit(code);
  if (strcmp(how, "abort") == 0) abort();
  return code;  // "return"
}

static int Loop(long times) {
  int a = OpenIn("a.bin");
  char buf[100];
  for (long count = 1; times == 0 || count <= times; ++count) {
    if (pread(a, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) return 94;
    if (count % 100 == 0) {
      printf("%ld\n", count);
      fflush(stdout);
    }
    usleep(1000);
  }
  return 0;
}

static double NowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int FdNumbers(int ms) {
  int opens = 0, odd = 0, lowest = -1;
  for (double end = NowMs() + ms; NowMs() < end; ++opens) {
    int fd = OpenIn("a.bin");
    if (lowest < 0) lowest = fd;
    odd += fd != lowest;
    close(fd);
  }
  printf("%d opens, %d not %d\n", opens, odd, lowest);
  return 0;
}

static int CloseAll(void) {
  int a = OpenIn("a.bin");
  ReadTimes(a, 1, 100);
  if (close_range(3, ~0U, 0) != 0) return 95;
  int b = OpenIn("b.bin");
  ReadTimes(b, 1, 1000);
  usleep(50000);
  ReadTimes(b, 1, 1000);
  close(b);
  return 0;
}

// The id of the thread named `name`, or 0.
static int ThreadNamed(const char* name) {
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == NULL) return 0;
  int found = 0;
  struct dirent* e;
  while (found == 0 && (e = readdir(tasks)) != NULL) {
    char path[300], comm[64] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
    FILE* f = fopen(path, "r");
    if (f == NULL) continue;
    if (fgets(comm, sizeof(comm), f) != NULL && strncmp(comm, name, strlen(name)) == 0 &&
        comm[strlen(name)] == '\n') {
      found = atoi(e->d_name);
    }
    fclose(f);
  }
  closedir(tasks);
  return found;
}

// Whether thread `tid`'s descriptor `fd` names the file `path`.
static int ThreadSees(int tid, int fd, const char* path) {
  char link[128], target[8192];
  snprintf(link, sizeof(link), "/proc/self/task/%d/fd/%d", tid, fd);
  ssize_t n = readlink(link, target, sizeof(target) - 1);
  if (n < 0) return 0;
  target[n] = '\0';
  return strcmp(target, path) == 0;
}

static int Tables(void) {
  int p[2];
  if (pipe(p) != 0) return 93;
  int a = OpenIn("a.bin");
  ReadTimes(a, 1, 100);
  char path[8192];
  snprintf(path, sizeof(path), "%s/a.bin", g_dir);
  int writer = 0, shares = 1;
  for (int waited = 0; waited < 5000 && shares; ++waited) {
    if (writer == 0) writer = ThreadNamed("iotap-writer");
    shares = writer == 0 || ThreadSees(writer, a, path);
    if (shares) usleep(1000);
  }
  printf("%s\n", writer == 0 ? "no writer thread"
                 : shares    ? "writer shares the table"
                             : "writer has a table of its own");
  close(p[1]);
  struct pollfd in = {p[0], POLLIN, 0};
  char c;
  int at_end = poll(&in, 1, 0) == 1 && read(p[0], &c, 1) == 0;
  printf("%s\n", at_end ? "pipe at end" : "pipe still open");
  close(a);
  return 0;
}

static void OnAlarm(int sig) { (void)sig; }

static void Report(const char* what, long result) {
  printf("%s %ld %s\n", what, result, result < 0 ? strerrorname_np(errno) : "-");
}

static int Errors(void) {
  char path[8192];
  snprintf(path, sizeof(path), "%s/missing", g_dir);
  char buf[16];
  struct stat st;
  errno = 0;
  Report("open-missing", open(path, O_RDONLY));
  Report("read-badfd", read(-1, buf, 1));
  Report("close-badfd", close(12345));
  Report("stat-missing", stat(path, &st));
  FILE* f = fopen(path, "r");
  printf("fopen-missing %s %s\n", f == NULL ? "null" : "file", strerrorname_np(errno));
  int p[2];
  if (pipe(p) != 0) return 93;
  Report("lseek-pipe", lseek(p[0], 0, SEEK_SET));
  // A read interrupted by a signal whose handler does not restart it.
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnAlarm;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval t = {{0, 0}, {0, 50000}};
  setitimer(ITIMER_REAL, &t, NULL);
  Report("read-interrupted", read(p[0], buf, 1));
  int ro = OpenIn("a.bin");
  Report("write-readonly", write(ro, "x", 1));
  Report("pread-negative", pread(ro, buf, 1, -1));
  errno = 1234;  // errno survives a successful call untouched
  ssize_t ok = read(ro, buf, 1);
  printf("errno-after-success %ld %d\n", (long)ok, errno);
  return 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 3) {
    fprintf(stderr, "usage: lifecycle MODE ARGS\n");
    return 2;
  }
  const char* mode = argv[1];
  if (strcmp(mode, "end") == 0) return End(argv[2], argc > 3 ? atoi(argv[3]) : 0);
  snprintf(g_dir, sizeof(g_dir), "%s", argv[2]);
  if (strcmp(mode, "threads") == 0 && argc > 4) return Threads(atoi(argv[3]), atoi(argv[4]));
  if (strcmp(mode, "fork") == 0) return Fork();
  if (strcmp(mode, "exec") == 0) return Exec();
  if (strcmp(mode, "spawn") == 0) return Spawn();
  if (strcmp(mode, "loop") == 0) return Loop(argc > 3 ? atol(argv[3]) : 0);
  if (strcmp(mode, "errors") == 0) return Errors();
  if (strcmp(mode, "fdnumbers") == 0 && argc > 3) return FdNumbers(atoi(argv[3]));
  if (strcmp(mode, "closeall") == 0) return CloseAll();
  if (strcmp(mode, "tables") == 0) return Tables();
  fprintf(stderr, "unknown mode %s\n", mode);
  return 2;
}
