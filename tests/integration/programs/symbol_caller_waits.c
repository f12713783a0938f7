/* symbol_caller cases for the waits (interpose/waits/) and the socket
 * receives (interpose/posix/posix_recv.cc).
 *
 * symbols_test runs this with IOTAP_WAIT_THRESHOLD_US=20000: a wait that
 * returns at once is never recorded, one of 100 ms always. Waits block on
 * "fifo" (a named pipe opened read-write on descriptor 22, so that it has a
 * writer and stays unready until something is written), a semaphore or a
 * condition variable; "wakes" cases are woken after 100 ms by a thread that
 * makes raw system calls only, so the thread leaves no event of its own. */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/programs/symbol_caller.h"

extern int __poll_chk(struct pollfd* fds, nfds_t nfds, int timeout, size_t fdslen);
extern int __ppoll_chk(struct pollfd* fds, nfds_t nfds, const struct timespec* timeout,
                       const sigset_t* ss, size_t fdslen);
extern ssize_t __recv_chk(int fd, void* buf, size_t n, size_t buflen, int flags);
extern ssize_t __recvfrom_chk(int fd, void* buf, size_t n, size_t buflen, int flags,
                              struct sockaddr* from, socklen_t* from_len);

enum { kFifo = 22, kEpoll = 23, kSocket = 24, kPeer = 25, kBad = 999 };
enum { kBlockMs = 100 };

/* --- Waking the main thread from a thread the shim does not see ---------- */

static sem_t g_sem;
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_signalled;

static void raw_sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  syscall(SYS_nanosleep, &ts, NULL);
}

static void* write_fifo_later(void* arg) {
  raw_sleep_ms(kBlockMs);
  syscall(SYS_write, kFifo, "x", 1);
  return NULL;
}

static void* post_later(void* arg) {
  raw_sleep_ms(kBlockMs);
  sem_post(&g_sem);
  return NULL;
}

static void* signal_later(void* arg) {
  raw_sleep_ms(kBlockMs);
  pthread_mutex_lock(&g_mutex);
  g_signalled = 1;
  pthread_cond_signal(&g_cond);
  pthread_mutex_unlock(&g_mutex);
  return NULL;
}

static pthread_t g_waker;
static void wake_later(void* (*fn)(void*)) { pthread_create(&g_waker, NULL, fn, NULL); }
static void joined(void) { pthread_join(g_waker, NULL); }

static void fill_fifo(void) { syscall(SYS_write, kFifo, "x", 1); }
static void drain_fifo(void) {
  char c;
  syscall(SYS_read, kFifo, &c, 1);
}

static void open_fifo(void) {
  if (syscall(SYS_mknodat, AT_FDCWD, "fifo", S_IFIFO | 0600, 0) != 0) return;
  open_at("fifo", O_RDWR | O_NONBLOCK, kFifo, 0);
}

/* Absolute times kBlockMs from now on `clock`. */
static struct timespec deadline(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  ts.tv_nsec += kBlockMs * 1000000L;
  ts.tv_sec += ts.tv_nsec / 1000000000L;
  ts.tv_nsec %= 1000000000L;
  return ts;
}

/* --- poll, __poll_chk, ppoll, __ppoll_chk ---------------------------------- */

static int call_poll(const char* name, struct pollfd* fds, nfds_t n, int timeout_ms) {
  struct timespec ts = {timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
  if (strcmp(name, "poll") == 0) return poll(fds, n, timeout_ms);
  if (strcmp(name, "__poll_chk") == 0) return __poll_chk(fds, n, timeout_ms, n * sizeof(*fds));
  if (strcmp(name, "ppoll") == 0) return ppoll(fds, n, &ts, NULL);
  return __ppoll_chk(fds, n, &ts, NULL, n * sizeof(*fds));
}

static void run_poll(const char* name, void* fn) {
  open_fifo();
  struct pollfd one = {kFifo, POLLIN, 0};
  begin("timeout");
  int r = call_poll(name, &one, 1, kBlockMs);
  end(r, errno);
  fill_fifo();
  begin("ready");
  r = call_poll(name, &one, 1, 5000);
  end(r, errno);
  drain_fifo();
  begin("nonblocking");
  r = call_poll(name, &one, 1, 0);
  end(r, errno);
  wake_later(write_fifo_later);
  begin("wakes");
  r = call_poll(name, &one, 1, 5000);
  end(r, errno);
  joined();
  drain_fifo();
  struct pollfd two[2] = {{-1, POLLIN, 0}, {kFifo, POLLIN, 0}};
  wake_later(write_fifo_later);
  begin("second");
  r = call_poll(name, two, 2, 5000);
  end(r, errno);
  note("revents %d %d", two[0].revents, two[1].revents);
  joined();
  drain_fifo();
  begin("efault");
  r = call_poll(name, (struct pollfd*)8, 1, kBlockMs);
  end(r, errno);
}

/* --- select, pselect ---------------------------------------------------- */

static int call_select(const char* name, fd_set* read, long timeout_ms) {
  struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  struct timespec ts = {timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
  if (strcmp(name, "select") == 0) return select(kFifo + 1, read, NULL, NULL, &tv);
  return pselect(kFifo + 1, read, NULL, NULL, &ts, NULL);
}

static void run_select(const char* name, void* fn) {
  open_fifo();
  fd_set set;
  FD_ZERO(&set);
  FD_SET(kFifo, &set);
  begin("timeout");
  int r = call_select(name, &set, kBlockMs);
  end(r, errno);
  fill_fifo();
  FD_SET(kFifo, &set);
  begin("ready");
  r = call_select(name, &set, 5000);
  end(r, errno);
  drain_fifo();
  FD_SET(kFifo, &set);
  wake_later(write_fifo_later);
  begin("wakes");
  r = call_select(name, &set, 5000);
  end(r, errno);
  joined();
  drain_fifo();
  FD_ZERO(&set);
  FD_SET(kFifo - 1, &set); /* not open */
  begin("ebadf");
  r = call_select(name, &set, kBlockMs);
  end(r, errno);
}

/* --- epoll_wait, epoll_pwait, epoll_pwait2 -------------------------------- */

static int call_epoll(const char* name, struct epoll_event* events, int timeout_ms) {
  struct timespec ts = {timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
  if (strcmp(name, "epoll_wait") == 0) return epoll_wait(kEpoll, events, 4, timeout_ms);
  if (strcmp(name, "epoll_pwait") == 0) return epoll_pwait(kEpoll, events, 4, timeout_ms, NULL);
  return epoll_pwait2(kEpoll, events, 4, &ts, NULL);
}

static void run_epoll(const char* name, void* fn) {
  open_fifo();
  int ep = epoll_create1(0);
  if (ep != kEpoll) {
    dup2(ep, kEpoll);
    close(ep);
  }
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = kFifo};
  epoll_ctl(kEpoll, EPOLL_CTL_ADD, kFifo, &ev);
  struct epoll_event got[4];
  begin("timeout");
  int r = call_epoll(name, got, kBlockMs);
  end(r, errno);
  fill_fifo();
  begin("ready");
  r = call_epoll(name, got, 5000);
  end(r, errno);
  drain_fifo();
  begin("nonblocking");
  r = call_epoll(name, got, 0);
  end(r, errno);
  wake_later(write_fifo_later);
  begin("wakes");
  r = call_epoll(name, got, 5000);
  end(r, errno);
  joined();
  drain_fifo();
  begin("ebadf");
  r = epoll_wait(kBad, got, 4, kBlockMs);
  end(r, errno);
}

/* --- sem_wait, sem_timedwait, sem_clockwait -------------------------------- */

static int call_sem(const char* name, const struct timespec* abstime) {
  if (strcmp(name, "sem_wait") == 0) return sem_wait(&g_sem);
  if (strcmp(name, "sem_timedwait") == 0) return sem_timedwait(&g_sem, abstime);
  return sem_clockwait(&g_sem, CLOCK_MONOTONIC, abstime);
}

static void run_sem(const char* name, void* fn) {
  clockid_t clock = strcmp(name, "sem_clockwait") == 0 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
  sem_init(&g_sem, 0, 0);
  if (strcmp(name, "sem_wait") != 0) {
    struct timespec at = deadline(clock);
    begin("timeout");
    int r = call_sem(name, &at);
    end(r, errno);
    struct timespec bad = {0, -1};
    begin("einval");
    r = call_sem(name, &bad);
    end(r, errno);
  }
  sem_post(&g_sem);
  struct timespec far = deadline(clock);
  far.tv_sec += 5;
  begin("ready");
  int r = call_sem(name, &far);
  end(r, errno);
  wake_later(post_later);
  begin("wakes");
  r = call_sem(name, &far);
  end(r, errno);
  joined();
}

/* --- pthread_cond_wait, pthread_cond_timedwait, pthread_cond_clockwait ----- */

static int call_cond(const char* name, const struct timespec* abstime) {
  if (strcmp(name, "pthread_cond_wait") == 0) return pthread_cond_wait(&g_cond, &g_mutex);
  if (strcmp(name, "pthread_cond_timedwait") == 0) {
    return pthread_cond_timedwait(&g_cond, &g_mutex, abstime);
  }
  return pthread_cond_clockwait(&g_cond, &g_mutex, CLOCK_MONOTONIC, abstime);
}

static void run_cond(const char* name, void* fn) {
  clockid_t clock = strcmp(name, "pthread_cond_clockwait") == 0 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
  pthread_mutex_lock(&g_mutex);
  if (strcmp(name, "pthread_cond_wait") != 0) {
    struct timespec at = deadline(clock);
    begin("timeout");
    int r = call_cond(name, &at);
    end(r, errno);
    struct timespec bad = {0, -1};
    begin("einval");
    r = call_cond(name, &bad);
    end(r, errno);
  }
  struct timespec far = deadline(clock);
  far.tv_sec += 5;
  g_signalled = 0;
  wake_later(signal_later);
  begin("wakes");
  int r = call_cond(name, &far);
  end(r, errno);
  note("signalled %d", g_signalled);
  pthread_mutex_unlock(&g_mutex);
  joined();
}

/* --- recv, __recv_chk, recvfrom, __recvfrom_chk, recvmsg ------------------- */

static ssize_t call_recv(const char* name, int fd, void* buf, size_t n, int flags) {
  if (strcmp(name, "recv") == 0) return recv(fd, buf, n, flags);
  if (strcmp(name, "__recv_chk") == 0) return __recv_chk(fd, buf, n, n, flags);
  if (strcmp(name, "recvfrom") == 0) return recvfrom(fd, buf, n, flags, NULL, NULL);
  if (strcmp(name, "__recvfrom_chk") == 0) {
    return __recvfrom_chk(fd, buf, n, n, flags, NULL, NULL);
  }
  char* half = buf;
  struct iovec iov[2] = {{half, n / 2}, {half + n / 2, n - n / 2}};
  struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};
  return recvmsg(fd, &msg, flags);
}

static void run_recv(const char* name, void* fn) {
  int pair[2];
  socketpair(AF_UNIX, SOCK_STREAM, 0, pair);
  syscall(SYS_dup2, pair[0], kSocket);
  syscall(SYS_dup2, pair[1], kPeer);
  syscall(SYS_close, pair[0]);
  syscall(SYS_close, pair[1]);
  char buf[64];
  syscall(SYS_write, kPeer, "hello", 5);
  begin("peek");
  ssize_t r = call_recv(name, kSocket, buf, sizeof(buf), MSG_PEEK);
  end(r, errno);
  begin("ok");
  r = call_recv(name, kSocket, buf, sizeof(buf), 0);
  end(r, errno);
  note("got %.*s", r > 0 ? (int)r : 0, buf);
  begin("eagain");
  r = call_recv(name, kSocket, buf, sizeof(buf), MSG_DONTWAIT);
  end(r, errno);
  begin("ebadf");
  r = call_recv(name, kBad, buf, sizeof(buf), 0);
  end(r, errno);
}

const struct symbol_case kWaitCases[] = {
    {"poll", run_poll, NULL},
    {"__poll_chk", run_poll, NULL},
    {"ppoll", run_poll, NULL},
    {"__ppoll_chk", run_poll, NULL},
    {"select", run_select, NULL},
    {"pselect", run_select, NULL},
    {"epoll_wait", run_epoll, NULL},
    {"epoll_pwait", run_epoll, NULL},
    {"epoll_pwait2", run_epoll, NULL},
    {"sem_wait", run_sem, NULL},
    {"sem_timedwait", run_sem, NULL},
    {"sem_clockwait", run_sem, NULL},
    {"pthread_cond_wait", run_cond, NULL},
    {"pthread_cond_timedwait", run_cond, NULL},
    {"pthread_cond_clockwait", run_cond, NULL},
    {"recv", run_recv, NULL},
    {"__recv_chk", run_recv, NULL},
    {"recvfrom", run_recv, NULL},
    {"__recvfrom_chk", run_recv, NULL},
    {"recvmsg", run_recv, NULL},
    {NULL, NULL, NULL},
};
