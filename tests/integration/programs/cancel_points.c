// Cancellation at read(): what a job that cancels threads sees, traced or
// not (interpose/core/direct_io.h).
//
//   cancel_points self     a thread asks to cancel itself, then reads
//                          /dev/zero: read() is a cancellation point, so it
//                          never returns ("after read" is never printed);
//                          the join says it was cancelled
//   cancel_points blocked  a thread blocks in read() on an empty pipe; the
//                          main thread cancels it, and the join says it was
//                          cancelled
//   cancel_points main-exit  the main thread ends with pthread_exit while
//                          a thread it started still works: the process
//                          exits 0 once that thread is done, stdout flushed
//   cancel_points main-cancel  the one thread cancels itself and reads: it
//                          ends at read(), and with it the process, exit 0
//   cancel_points plain    reads and writes with no thread: results and errno

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_pipe[2];

static void* Blocked(void* arg) {
  (void)arg;
  char c;
  ssize_t r = read(g_pipe[0], &c, 1);  // no one writes: only a cancellation ends it
  printf("read returned %zd\n", r);
  return NULL;
}

static void* LateWorker(void* arg) {
  struct timespec pause = {0, 100000000};
  nanosleep(&pause, NULL);
  printf("worker done\n");
  return arg;
}

// Reads /dev/zero, asks to cancel the calling thread, and reads again: the
// second read() acts on the request, so "after read" is never printed.
static void CancelledAtRead(void) {
  int fd = open("/dev/zero", O_RDONLY);
  char buf[16];
  printf("before read %zd\n", read(fd, buf, sizeof(buf)));
  pthread_cancel(pthread_self());
  ssize_t r = read(fd, buf, sizeof(buf));
  printf("after read %zd\n", r);
}

static void* SelfCancelled(void* arg) {
  CancelledAtRead();
  return arg;
}

int main(int argc, char** argv) {
  if (argc != 2) return 1;
  setvbuf(stdout, NULL, _IONBF, 0);
  if (strcmp(argv[1], "self") == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, SelfCancelled, NULL) != 0) return 2;
    void* result = NULL;
    pthread_join(t, &result);
    printf("joined, cancelled %d\n", result == PTHREAD_CANCELED);
    return 0;
  }
  if (strcmp(argv[1], "main-exit") == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, LateWorker, NULL) != 0) return 2;
    printf("main exits\n");
    pthread_exit(NULL);
  }
  if (strcmp(argv[1], "main-cancel") == 0) {
    setvbuf(stdout, NULL, _IOFBF, 4096);  // flushed by exit(0), which glibc calls
    CancelledAtRead();
    return 3;
  }
  if (strcmp(argv[1], "blocked") == 0) {
    if (pipe(g_pipe) != 0) return 2;
    pthread_t t;
    if (pthread_create(&t, NULL, Blocked, NULL) != 0) return 2;
    struct timespec pause = {0, 50000000};
    nanosleep(&pause, NULL);
    pthread_cancel(t);
    void* result = NULL;
    pthread_join(t, &result);
    printf("joined, cancelled %d\n", result == PTHREAD_CANCELED);
    return 0;
  }
  if (strcmp(argv[1], "plain") == 0) {
    char buf[8] = "abcdefg";
    int fd = open("/dev/null", O_RDWR);
    errno = 0;
    printf("write %zd\n", write(fd, buf, sizeof(buf)));
    printf("pwrite %zd\n", pwrite(fd, buf, sizeof(buf), 4));
    printf("read %zd\n", read(fd, buf, sizeof(buf)));
    ssize_t r = pread(fd, buf, sizeof(buf), 0);
    printf("pread /dev/null %zd errno %d\n", r, r < 0 ? errno : 0);
    errno = 0;
    r = read(-1, buf, 1);
    printf("read -1: %zd errno %d\n", r, errno);
    errno = 0;
    r = pwrite(fd, buf, 1, -5);
    printf("pwrite at -5: %zd errno %d\n", r, errno);
    errno = 0;
    if (pipe(g_pipe) != 0) return 2;
    const void* volatile bad = (const void*)1;  // no page there
    r = write(g_pipe[1], bad, 1);
    printf("write from a bad address: %zd errno %d\n", r, errno);
    return 0;
  }
  return 1;
}
