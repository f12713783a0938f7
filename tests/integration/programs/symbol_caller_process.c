/* symbol_caller cases for the process lifecycle (interpose/posix/process.cc). Each
 * first records one write ("before"), which must reach the trace however the
 * process goes on; exec and posix_spawn first try a program that does not
 * exist, then run this program again as "exec-child" or "spawn-child". The
 * test checks the end-of-trace and exec-notice packets, and the new image's
 * own trace. */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/programs/symbol_caller.h"

extern char** environ;

/* Names no directory in PATH holds, and no file in the work directory. */
static const char kMissing[] = "missing-program";
static const char kNotInPath[] = "no-such-program-iotap";
/* This program's name, found through PATH (the test puts its directory
 * there). */
static const char kSelfName[] = "symbol_caller";

static void before(void) {
  open_at("out.bin", O_RDWR | O_CREAT | O_TRUNC, 21, 0);
  begin("before");
  end(write(21, "bye", 3), errno);
}

static void run_exit(const char* name, void* fn) {
  before();
  fflush(stdout);
  if (strcmp(name, "exit") == 0) exit(5);
  if (strcmp(name, "_exit") == 0) _exit(6);
  if (strcmp(name, "_Exit") == 0) _Exit(7);
  if (strcmp(name, "abort") == 0) abort();
  /* __libc_start_main: main returns 3. */
}

/* Tries `kMissing` (or `kNotInPath`) first, then replaces the image. */
static void run_exec(const char* name, void* fn) {
  char* argv[] = {(char*)kSelfName, (char*)"exec-child", (char*)g_workdir, NULL};
  int self_fd = open(g_self, O_RDONLY | O_CLOEXEC);
  before();
  begin("enoent");
  int r = -2;
  if (strcmp(name, "execve") == 0) r = execve(kMissing, argv, environ);
  if (strcmp(name, "execv") == 0) r = execv(kMissing, argv);
  if (strcmp(name, "execvp") == 0) r = execvp(kNotInPath, argv);
  if (strcmp(name, "execvpe") == 0) r = execvpe(kNotInPath, argv, environ);
  if (strcmp(name, "fexecve") == 0) r = fexecve(999, argv, environ);
  if (strcmp(name, "execveat") == 0) r = execveat(AT_FDCWD, kMissing, argv, environ, 0);
  if (strcmp(name, "execl") == 0) r = execl(kMissing, kSelfName, NULL);
  if (strcmp(name, "execlp") == 0) r = execlp(kNotInPath, kSelfName, NULL);
  if (strcmp(name, "execle") == 0) r = execle(kMissing, kSelfName, NULL, environ);
  end(r, errno);
  fflush(stdout);
  if (strcmp(name, "execve") == 0) execve(g_self, argv, environ);
  if (strcmp(name, "execv") == 0) execv(g_self, argv);
  if (strcmp(name, "execvp") == 0) execvp(kSelfName, argv);
  if (strcmp(name, "execvpe") == 0) execvpe(kSelfName, argv, environ);
  if (strcmp(name, "fexecve") == 0) fexecve(self_fd, argv, environ);
  if (strcmp(name, "execveat") == 0) execveat(AT_FDCWD, g_self, argv, environ, 0);
  if (strcmp(name, "execl") == 0) execl(g_self, kSelfName, "exec-child", g_workdir, NULL);
  if (strcmp(name, "execlp") == 0) execlp(kSelfName, kSelfName, "exec-child", g_workdir, NULL);
  if (strcmp(name, "execle") == 0) {
    execle(g_self, kSelfName, "exec-child", g_workdir, NULL, environ);
  }
  printf("exec failed: %s\n", strerror(errno));
  exit(1);
}

static void run_spawn(const char* name, void* fn) {
  char* argv[] = {(char*)kSelfName, (char*)"spawn-child", (char*)g_workdir, NULL};
  int by_path = strcmp(name, "posix_spawnp") == 0;
  pid_t pid = 0;
  before();
  begin("enoent");
  int r = by_path ? posix_spawnp(&pid, kNotInPath, NULL, NULL, argv, environ)
                  : posix_spawn(&pid, kMissing, NULL, NULL, argv, environ);
  end(r, errno);
  fflush(stdout);
  begin("spawn");
  r = by_path ? posix_spawnp(&pid, kSelfName, NULL, NULL, argv, environ)
              : posix_spawn(&pid, g_self, NULL, NULL, argv, environ);
  end(r, errno);
  int status = 0;
  if (r == 0) waitpid(pid, &status, 0);
  note("child exit %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static void* thread_main(void* arg) { return arg; }

/* pthread_create starts the thread through the shim's trampoline (page-fault
 * sampling, interpose/posix/threads.cc): nothing is recorded, the thread
 * runs and returns as it would untraced. */
static void run_pthread_create(const char* name, void* fn) {
  pthread_t thread;
  void* joined = NULL;
  begin("ok");
  int r = pthread_create(&thread, NULL, thread_main, (void*)42);
  if (r == 0) pthread_join(thread, &joined);
  end(r, errno);
  note("joined %ld", (long)joined);
}

static void* cancelled_main(void* arg) {
  (void)arg;
  for (;;) pause(); /* a cancellation point: only pthread_cancel ends it */
  return NULL;
}

/* pthread_cancel makes read() and the rest glibc's cancellation points again
 * (interpose/core/direct_io.h): nothing is recorded, the thread is cancelled
 * as it would be untraced. */
static void run_pthread_cancel(const char* name, void* fn) {
  pthread_t thread;
  void* joined = NULL;
  if (pthread_create(&thread, NULL, cancelled_main, NULL) != 0) return;
  begin("ok");
  int r = pthread_cancel(thread);
  end(r, errno);
  pthread_join(thread, &joined);
  note("cancelled %d", joined == PTHREAD_CANCELED);
}

/* syscall(): io_uring's system calls are recorded, every other number
 * passes through untouched, errno included. */
static void run_syscall(const char* name, void* fn) {
  begin("other");
  end(syscall(SYS_close, 999), errno);
  struct io_uring_params params;
  memset(&params, 0, sizeof(params));
  begin("uring_setup");
  long ring = syscall(SYS_io_uring_setup, 4, &params);
  end(ring, errno);
  note("sq_entries %u", params.sq_entries);
  begin("uring_enter");
  end(syscall(SYS_io_uring_enter, ring, 0L, 0L, 0L, NULL, 0L), errno);
  begin("uring_enter_ebadf");
  end(syscall(SYS_io_uring_enter, 999L, 0L, 0L, 0L, NULL, 0L), errno);
  begin("uring_register_ebadf");
  end(syscall(SYS_io_uring_register, 999, IORING_REGISTER_FILES, NULL, 0), errno);
  begin("close");
  end(close((int)ring), errno);
}

const struct symbol_case kProcessCases[] = {
    {"__libc_start_main", run_exit, NULL},
    {"exit", run_exit, NULL},
    {"_exit", run_exit, NULL},
    {"_Exit", run_exit, NULL},
    {"abort", run_exit, NULL},
    {"execve", run_exec, NULL},
    {"execv", run_exec, NULL},
    {"execvp", run_exec, NULL},
    {"execvpe", run_exec, NULL},
    {"fexecve", run_exec, NULL},
    {"execveat", run_exec, NULL},
    {"execl", run_exec, NULL},
    {"execlp", run_exec, NULL},
    {"execle", run_exec, NULL},
    {"posix_spawn", run_spawn, NULL},
    {"posix_spawnp", run_spawn, NULL},
    {"pthread_cancel", run_pthread_cancel, NULL},
    {"pthread_create", run_pthread_create, NULL},
    {"syscall", run_syscall, NULL},
    {NULL, NULL, NULL},
};
