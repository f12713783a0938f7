// A program the fault-injection tests run with and without the shim: one
// mode per way a job can be hard on a tracer. Output is the same whatever
// the timing, so a traced run's output can be compared with an untraced
// one's; what varies with timing goes to a separate file.
//
//   faults interrupted BYTES RESTART COUNTS
//       a thread writes BYTES through a pipe in pieces of 100 bytes, and
//       rests 300 us after every 40 (the pipe runs dry and the reader
//       blocks: without rests a reader slowed by tracing always found data
//       waiting, and a run of 40 saw no read interrupted in 6), while
//       the main thread read()s 4096 at a time and a timer interrupts it
//       every 200 us (handler installed with SA_RESTART if RESTART is 1; it
//       reads one byte of /dev/zero). Prints the bytes and their checksum;
//       writes "reads R interrupted E short S handled H" to COUNTS: the
//       main thread's read calls, those that failed with EINTR, those that
//       returned less than 4096 bytes (and more than 0), and handler runs.
//   faults fork-many N FILE
//       forks N children at once (they start together, on a barrier); each
//       preads FILE 10 times (100 bytes at offsets 0, 100, ...) and exits
//       with its index modulo 7. Prints the sum of the exit codes.
//   faults many-files N DIR
//       creates DIR/f0 .. DIR/f<N-1> (8 bytes each), then opens all N at
//       once, reads each, and closes them. Raises RLIMIT_NOFILE as needed;
//       exits 3 if it cannot.
//   faults close-all FILE SINK ROUNDS
//       closes every descriptor above 2 (close_range, closefrom and a close
//       loop), then, for ROUNDS rounds, preads FILE (4096 x 100 bytes) while
//       a second thread points descriptors 3 and 4 at SINK with dup2 and
//       closes them again, over and over. Prints how many bytes SINK holds at
//       the end (0, unless the shim's data went through those descriptors).
//   faults vfork FILE
//       vfork + execl("/bin/cat", FILE), then vfork + _exit(3); prints the
//       exit status of each child.
//   faults busy FILE THREADS
//       THREADS threads pread FILE in a loop for ever; prints "ready" once
//       they have started.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void Die(const char* what) {
  perror(what);
  exit(2);
}

// --- interrupted ---------------------------------------------------------------

static int g_pipe[2];
static long g_bytes;
static volatile sig_atomic_t g_handled;
static int g_zero = -1;

static void* PipeWriter(void* arg) {
  (void)arg;
  char piece[100];
  long pieces = 0;
  for (long sent = 0; sent < g_bytes; sent += (long)sizeof(piece)) {
    if (++pieces % 40 == 0) {
      struct timespec rest = {0, 300000};
      while (nanosleep(&rest, &rest) != 0 && errno == EINTR) {
      }
    }
    for (size_t i = 0; i < sizeof(piece); ++i) piece[i] = (char)((sent + (long)i) % 251);
    size_t done = 0;
    while (done < sizeof(piece)) {
      ssize_t n = write(g_pipe[1], piece + done, sizeof(piece) - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) Die("write");
      done += (size_t)n;
    }
  }
  close(g_pipe[1]);
  return NULL;
}

static void OnAlarm(int sig) {
  (void)sig;
  int saved = errno;
  char c;
  if (read(g_zero, &c, 1) == 1) ++g_handled;
  errno = saved;
}

static int Interrupted(long bytes, int restart, const char* counts) {
  g_bytes = bytes;
  g_zero = open("/dev/zero", O_RDONLY);
  if (g_zero < 0 || pipe(g_pipe) != 0) Die("setup");
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnAlarm;
  sa.sa_flags = restart ? SA_RESTART : 0;
  sigaction(SIGALRM, &sa, NULL);
  // The writer thread never takes the signal: only reads are interrupted.
  sigset_t alarm;
  sigemptyset(&alarm);
  sigaddset(&alarm, SIGALRM);
  pthread_sigmask(SIG_BLOCK, &alarm, NULL);
  pthread_t writer;
  pthread_create(&writer, NULL, PipeWriter, NULL);
  pthread_sigmask(SIG_UNBLOCK, &alarm, NULL);
  struct itimerval t = {{0, 200}, {0, 200}};
  setitimer(ITIMER_REAL, &t, NULL);
  char buf[4096];
  long total = 0, reads = 0, interrupted = 0, short_reads = 0;
  unsigned long sum = 0;
  for (;;) {
    ssize_t n = read(g_pipe[0], buf, sizeof(buf));
    ++reads;
    if (n < 0 && errno == EINTR) {
      ++interrupted;
      continue;
    }
    if (n < 0) Die("read");
    if (n == 0) break;
    if (n < (ssize_t)sizeof(buf)) ++short_reads;
    for (ssize_t i = 0; i < n; ++i) sum = sum * 31 + (unsigned char)buf[i];
    total += n;
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  pthread_join(writer, NULL);
  printf("bytes %ld checksum %lu\n", total, sum);
  FILE* f = fopen(counts, "w");
  if (f == NULL) Die(counts);
  fprintf(f, "reads %ld interrupted %ld short %ld handled %ld\n", reads, interrupted, short_reads,
          (long)g_handled);
  fclose(f);
  return 0;
}

// --- fork-many -----------------------------------------------------------------

static int ForkMany(int n, const char* file) {
  int barrier[2];
  if (pipe(barrier) != 0) Die("pipe");
  pid_t* pids = calloc((size_t)n, sizeof(pid_t));
  for (int i = 0; i < n; ++i) {
    pids[i] = fork();
    if (pids[i] < 0) Die("fork");
    if (pids[i] == 0) {
      close(barrier[1]);
      char c;
      if (read(barrier[0], &c, 1) != 0) _exit(90);  // returns 0 when all are forked
      int fd = open(file, O_RDONLY);
      char buf[100];
      for (int k = 0; k < 10; ++k) {
        if (pread(fd, buf, sizeof(buf), k * 100) != (ssize_t)sizeof(buf)) _exit(91);
      }
      close(fd);
      exit(i % 7);
    }
  }
  close(barrier[1]);
  int sum = 0;
  for (int i = 0; i < n; ++i) {
    int status = 0;
    if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status)) Die("waitpid");
    sum += WEXITSTATUS(status);
  }
  free(pids);
  printf("children %d exit codes sum %d\n", n, sum);
  return 0;
}

// --- many-files ----------------------------------------------------------------

static int ManyFiles(int n, const char* dir) {
  struct rlimit lim;
  getrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < (rlim_t)n + 64) {
    lim.rlim_cur = (rlim_t)n + 64;
    if (lim.rlim_max < lim.rlim_cur) lim.rlim_max = lim.rlim_cur;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
      fprintf(stderr, "cannot raise RLIMIT_NOFILE to %d: %s\n", n + 64, strerror(errno));
      return 3;
    }
  }
  char path[4096];
  for (int i = 0; i < n; ++i) {
    snprintf(path, sizeof(path), "%s/f%d", dir, i);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "12345678", 8) != 8) Die(path);
    close(fd);
  }
  int* fds = calloc((size_t)n, sizeof(int));
  for (int i = 0; i < n; ++i) {
    snprintf(path, sizeof(path), "%s/f%d", dir, i);
    fds[i] = open(path, O_RDONLY);
    if (fds[i] < 0) Die(path);
  }
  long bytes = 0;
  char buf[16];
  for (int i = 0; i < n; ++i) bytes += read(fds[i], buf, sizeof(buf));
  for (int i = 0; i < n; ++i) close(fds[i]);
  free(fds);
  printf("files %d bytes %ld\n", n, bytes);
  return 0;
}

// --- close-all -----------------------------------------------------------------

static volatile int g_stop;
static int g_sink = -1;

// Points descriptors 3 and 4, the lowest ones (every other is above 99
// after the close-all), at the sink and closes them again, as fast as it
// can: whatever else opens a file (the shim, to write its trace) gets one of
// them and, unless the shim takes care, has it replaced or closed under it.
static void* Clobber(void* arg) {
  (void)arg;
  while (!g_stop) {
    for (int fd = 3; fd < 5; ++fd) {
      if (dup2(g_sink, fd) == fd) close(fd);
    }
  }
  return NULL;
}

static int CloseAll(const char* file, const char* sink, int rounds) {
  close_range(3, ~0U, 0);
  closefrom(3);
  for (int fd = 3; fd < 1024; ++fd) close(fd);
  // The sink and the data file get descriptors above those the other thread
  // clobbers.
  int s = open(sink, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  int f = open(file, O_RDONLY);
  if (s < 0 || f < 0) Die("open");
  g_sink = fcntl(s, F_DUPFD, 100);
  int data = fcntl(f, F_DUPFD, 100);
  close(s);
  close(f);
  pthread_t clobber;
  pthread_create(&clobber, NULL, Clobber, NULL);
  char buf[100];
  long bytes = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < 4096; ++k) bytes += pread(data, buf, sizeof(buf), (off_t)k * 100);
  }
  g_stop = 1;
  pthread_join(clobber, NULL);
  close(data);
  close(g_sink);
  struct stat st;
  if (stat(sink, &st) != 0) Die(sink);
  printf("read %ld bytes; the sink holds %lld bytes\n", bytes, (long long)st.st_size);
  return 0;
}

// --- vfork ---------------------------------------------------------------------

static int VforkMode(const char* file) {
  fflush(stdout);
  pid_t a = vfork();
  if (a == 0) {
    execl("/bin/cat", "cat", file, (char*)NULL);
    _exit(127);
  }
  int status_a = 0, status_b = 0;
  waitpid(a, &status_a, 0);
  pid_t b = vfork();
  if (b == 0) _exit(3);
  waitpid(b, &status_b, 0);
  printf("\ncat %d, _exit %d\n", WEXITSTATUS(status_a), WEXITSTATUS(status_b));
  return 0;
}

// --- busy ----------------------------------------------------------------------

static int g_busy_fd;

static void* Busy(void* arg) {
  (void)arg;
  char buf[100];
  for (long k = 0;; ++k) {
    if (pread(g_busy_fd, buf, sizeof(buf), (k % 40) * 100) != (ssize_t)sizeof(buf)) exit(92);
  }
  return NULL;
}

static int BusyMode(const char* file, int threads) {
  g_busy_fd = open(file, O_RDONLY);
  if (g_busy_fd < 0) Die(file);
  for (int i = 0; i < threads; ++i) {
    pthread_t t;
    pthread_create(&t, NULL, Busy, NULL);
  }
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();
  return 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "interrupted") == 0 && argc == 5) {
    return Interrupted(atol(argv[2]), atoi(argv[3]), argv[4]);
  }
  if (strcmp(mode, "fork-many") == 0 && argc == 4) return ForkMany(atoi(argv[2]), argv[3]);
  if (strcmp(mode, "many-files") == 0 && argc == 4) return ManyFiles(atoi(argv[2]), argv[3]);
  if (strcmp(mode, "close-all") == 0 && argc == 5) {
    return CloseAll(argv[2], argv[3], atoi(argv[4]));
  }
  if (strcmp(mode, "vfork") == 0 && argc == 3) return VforkMode(argv[2]);
  if (strcmp(mode, "busy") == 0 && argc == 4) return BusyMode(argv[2], atoi(argv[3]));
  fprintf(stderr, "usage: see the top of faults.c\n");
  return 2;
}
