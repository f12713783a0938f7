// The process lifecycle: how a traced process starts, replaces itself, and
// ends. fork is handled by pthread_atfork handlers in interpose/shim.cc (they
// see every fork, including those made through glibc's internal entry
// points).
//
// - exec*: everything recorded is written before the new image replaces this
//   one (which then traces itself, LD_PRELOAD being inherited). A failed
//   exec leaves tracing running.
// - posix_spawn: written first too, so the parent's trace is complete up to
//   the child's birth.
// - exit: only remembers the code; the library destructor, which runs after
//   the application's exit handlers, writes the end of the trace.
// - _exit/_Exit (how DataLoader workers leave, through os._exit): no
//   destructors run, so the trace is finished here, and no other thread's
//   write of the trace may be left half done by exit_group
//   (FinishTraceBeforeExitGroup).
// - abort: finished on the way down, unless the writer lock stays busy for
//   half a second.
// - __libc_start_main: wraps main to learn the exit code when main returns.

#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "interpose/core/io_event.h"
#include "interpose/core/real.h"
#include "interpose/core/recorder.h"
#include "interpose/file/writer.h"
#include "interpose/posix/glibc_symbols.h"

namespace iotap::interpose {
namespace {

IOTAP_REAL(__libc_start_main);
IOTAP_REAL(exit);
IOTAP_REAL(_exit);
IOTAP_REAL(_Exit);
IOTAP_REAL(abort);
IOTAP_REAL(execve);
IOTAP_REAL(execv);
IOTAP_REAL(execvp);
IOTAP_REAL(execvpe);
IOTAP_REAL(fexecve);
IOTAP_REAL(execveat);
IOTAP_REAL(posix_spawn);
IOTAP_REAL(posix_spawnp);

int (*g_main)(int, char**, char**) = nullptr;

int MainWrapper(int argc, char** argv, char** envp) {
  int code = g_main(argc, argv, envp);
  NoteExitCode(code);
  return code;
}

// Collects the arguments of execl, execlp and execle into an argv array on
// the stack (they are rare and short). Returns the count, or -1 if there are
// more than `cap` - 1.
int CollectArgs(const char* arg0, va_list ap, char** argv, int cap) {
  int n = 0;
  argv[n++] = const_cast<char*>(arg0);
  while (argv[n - 1] != nullptr) {
    if (n == cap) return -1;
    argv[n++] = va_arg(ap, char*);
  }
  return n - 1;
}

constexpr int kMaxExeclArgs = 4096;

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT int __libc_start_main(int (*main)(int, char**, char**), int argc, char** argv,
                                   void (*init)(void), void (*fini)(void),
                                   void (*rtld_fini)(void), void* stack_end) {
  g_main = main;
  return real___libc_start_main()(MainWrapper, argc, argv, init, fini, rtld_fini,
                                  stack_end);
}

IOTAP_EXPORT void exit(int code) noexcept {
  NoteExitCode(code);
  real_exit()(code);
  __builtin_unreachable();
}

IOTAP_EXPORT void _exit(int code) {
  FinishTraceBeforeExitGroup(code);
  real__exit()(code);
  __builtin_unreachable();
}

IOTAP_EXPORT void _Exit(int code) noexcept {
  FinishTraceBeforeExitGroup(code);
  real__Exit()(code);
  __builtin_unreachable();
}

IOTAP_EXPORT void abort() noexcept {
  FinishTrace(EndReason::kAbort, 134, false, /*wait_ms=*/500);
  real_abort()();
  __builtin_unreachable();
}

IOTAP_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) noexcept {
  FlushBeforeExec(path, false);
  return real_execve()(path, argv, envp);
}

IOTAP_EXPORT int execv(const char* path, char* const argv[]) noexcept {
  FlushBeforeExec(path, false);
  return real_execv()(path, argv);
}

IOTAP_EXPORT int execvp(const char* file, char* const argv[]) noexcept {
  FlushBeforeExec(file, false);
  return real_execvp()(file, argv);
}

IOTAP_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) noexcept {
  FlushBeforeExec(file, false);
  return real_execvpe()(file, argv, envp);
}

IOTAP_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) noexcept {
  FlushBeforeExec(nullptr, false);
  return real_fexecve()(fd, argv, envp);
}

IOTAP_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[],
                          int flags) noexcept {
  FlushBeforeExec(path, false);
  return real_execveat()(dirfd, path, argv, envp, flags);
}

IOTAP_EXPORT int execl(const char* path, const char* arg, ...) noexcept {
  char* argv[kMaxExeclArgs];
  va_list ap;
  va_start(ap, arg);
  int n = CollectArgs(arg, ap, argv, kMaxExeclArgs);
  va_end(ap);
  if (n < 0) {
    errno = E2BIG;
    return -1;
  }
  return execv(path, argv);
}

IOTAP_EXPORT int execlp(const char* file, const char* arg, ...) noexcept {
  char* argv[kMaxExeclArgs];
  va_list ap;
  va_start(ap, arg);
  int n = CollectArgs(arg, ap, argv, kMaxExeclArgs);
  va_end(ap);
  if (n < 0) {
    errno = E2BIG;
    return -1;
  }
  return execvp(file, argv);
}

IOTAP_EXPORT int execle(const char* path, const char* arg, ...) noexcept {
  char* argv[kMaxExeclArgs];
  va_list ap;
  va_start(ap, arg);
  int n = CollectArgs(arg, ap, argv, kMaxExeclArgs);
  char* const* envp = n < 0 ? nullptr : va_arg(ap, char* const*);
  va_end(ap);
  if (n < 0) {
    errno = E2BIG;
    return -1;
  }
  return execve(path, argv, envp);
}

IOTAP_EXPORT int posix_spawn(pid_t* pid, const char* path,
                             const posix_spawn_file_actions_t* actions,
                             const posix_spawnattr_t* attr, char* const argv[],
                             char* const envp[]) {
  FlushBeforeExec(path, true);
  return real_posix_spawn()(pid, path, actions, attr, argv, envp);
}

IOTAP_EXPORT int posix_spawnp(pid_t* pid, const char* file,
                              const posix_spawn_file_actions_t* actions,
                              const posix_spawnattr_t* attr, char* const argv[],
                              char* const envp[]) {
  FlushBeforeExec(file, true);
  return real_posix_spawnp()(pid, file, actions, attr, argv, envp);
}
