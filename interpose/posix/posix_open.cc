// POSIX descriptors: open and its relatives, close, duplication, and the
// calls that only change what the descriptor table knows (close_range,
// closefrom, chdir).

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/core/io_event.h"
#include "interpose/core/real.h"
#include "interpose/core/strings.h"
#include "interpose/core/trace_call.h"
#include "interpose/file/trace_file.h"
#include "interpose/file/writer.h"
#include "interpose/posix/glibc_symbols.h"
#include "interpose/uring/uring_rings.h"

namespace iotap::interpose {
namespace {

IOTAP_REAL(open);
IOTAP_REAL(open64);
IOTAP_REAL(__open_2);
IOTAP_REAL(__open64_2);
IOTAP_REAL(openat);
IOTAP_REAL(openat64);
IOTAP_REAL(__openat_2);
IOTAP_REAL(__openat64_2);
IOTAP_REAL(creat);
IOTAP_REAL(creat64);
IOTAP_REAL(mkstemp);
IOTAP_REAL(mkstemp64);
IOTAP_REAL(mkostemp);
IOTAP_REAL(mkostemp64);
IOTAP_REAL(mkstemps);
IOTAP_REAL(mkstemps64);
IOTAP_REAL(mkostemps);
IOTAP_REAL(mkostemps64);
IOTAP_REAL(close);
IOTAP_REAL(dup);
IOTAP_REAL(dup2);
IOTAP_REAL(dup3);
IOTAP_REAL(fcntl);
IOTAP_REAL(fcntl64);
IOTAP_REAL(close_range);
IOTAP_REAL(closefrom);
IOTAP_REAL(chdir);
IOTAP_REAL(fchdir);

// open(2) takes a mode only when it may create a file.
bool TakesMode(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

// Every open-like call: the path (made absolute against `dirfd`) becomes the
// descriptor's file, failed attempts included.
void RecordOpen(TraceCall& call, Op op, int dirfd, const char* path, int flags, int fd) {
  RawEvent* e = call.Finish(op, fd < 0);
  if (e == nullptr && !call.active()) return;
  // A path the kernel could not read is the caller's EFAULT; never touch it.
  if (fd < 0 && call.saved_errno() == EFAULT) return;
  uint32_t file = InternPath(dirfd, path);
  if (fd >= 0) FdOpened(fd, file, flags, 0, path);
  if (e == nullptr) return;
  e->file = file;
  e->result = fd;
  e->aux = static_cast<uint32_t>(flags);
  if (flags & O_DIRECT) e->flags |= kFlagODirect;
}

void RecordMkstemp(TraceCall& call, const char* path_template, int flags, int fd) {
  RecordOpen(call, kOpMkstemp, AT_FDCWD, path_template, flags | O_RDWR | O_CREAT | O_EXCL, fd);
}

// A vfork child shares our memory but not our descriptors: its dup2 and close
// calls (subprocess plumbing before exec) must neither be recorded as ours nor
// edit our descriptor table.
void RecordDup(TraceCall& call, int oldfd, int newfd) {
  if (!call.active() || !InOwnProcess()) return;
  RawEvent* e = call.Finish(kOpDup, newfd < 0);
  if (!call.active()) return;
  if (newfd >= 0) FdDuplicated(oldfd, newfd);
  if (e == nullptr) return;
  e->file = FileOf(oldfd);
  e->result = newfd;
  e->aux = static_cast<uint64_t>(oldfd);
}

int FcntlCommon(decltype(&::fcntl) real, int fd, int cmd, void* arg) {
  if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC) return real(fd, cmd, arg);
  TraceCall call(kLayerPosix);
  int r = real(fd, cmd, arg);
  RecordDup(call, fd, r);
  return r;
}

// Opening the trace file takes microseconds; past this, the file system is
// struggling and the application's closes go ahead (file/trace_file.h).
constexpr uint64_t kMaxOpeningWaitNs = 1000000;

// Waits while the shim writes its trace through a descriptor in [first,
// last] (file/trace_file.h), which the caller is about to close or replace. Not on
// a thread inside the shim (a signal handler that interrupted our own write
// would wait for ever): that write then fails and its events are counted as
// dropped.
void WaitForTraceWrite(unsigned first, unsigned last) {
  for (;;) {
    int fd = TraceFile::WritingFd();
    if (fd == -1 || tls_thread.locks != 0) return;
    if (fd == TraceFile::kOpening) {
      if (MonotonicNs() - TraceFile::OpeningSinceNs() > kMaxOpeningWaitNs) return;
    } else if (static_cast<unsigned>(fd) < first || static_cast<unsigned>(fd) > last) {
      return;
    }
    sched_yield();
  }
}

// Bookkeeping only, no event: the descriptor table forgets closed ranges.
bool OwnsTable() { return Recording() && InOwnProcess(); }

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT int open(const char* path, int flags, ...) {
  mode_t mode = 0;
  if (TakesMode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  TraceCall call(kLayerPosix);
  int fd = real_open()(path, flags, mode);
  RecordOpen(call, kOpOpen, AT_FDCWD, path, flags, fd);
  return fd;
}

IOTAP_EXPORT int open64(const char* path, int flags, ...) {
  mode_t mode = 0;
  if (TakesMode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  TraceCall call(kLayerPosix);
  int fd = real_open64()(path, flags, mode);
  RecordOpen(call, kOpOpen, AT_FDCWD, path, flags, fd);
  return fd;
}

IOTAP_EXPORT int __open_2(const char* path, int flags) {
  TraceCall call(kLayerPosix);
  int fd = real___open_2()(path, flags);
  RecordOpen(call, kOpOpen, AT_FDCWD, path, flags, fd);
  return fd;
}

IOTAP_EXPORT int __open64_2(const char* path, int flags) {
  TraceCall call(kLayerPosix);
  int fd = real___open64_2()(path, flags);
  RecordOpen(call, kOpOpen, AT_FDCWD, path, flags, fd);
  return fd;
}

IOTAP_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  mode_t mode = 0;
  if (TakesMode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  TraceCall call(kLayerPosix);
  int fd = real_openat()(dirfd, path, flags, mode);
  RecordOpen(call, kOpOpenat, dirfd, path, flags, fd);
  return fd;
}

IOTAP_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  mode_t mode = 0;
  if (TakesMode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  TraceCall call(kLayerPosix);
  int fd = real_openat64()(dirfd, path, flags, mode);
  RecordOpen(call, kOpOpenat, dirfd, path, flags, fd);
  return fd;
}

IOTAP_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  TraceCall call(kLayerPosix);
  int fd = real___openat_2()(dirfd, path, flags);
  RecordOpen(call, kOpOpenat, dirfd, path, flags, fd);
  return fd;
}

IOTAP_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  TraceCall call(kLayerPosix);
  int fd = real___openat64_2()(dirfd, path, flags);
  RecordOpen(call, kOpOpenat, dirfd, path, flags, fd);
  return fd;
}

IOTAP_EXPORT int creat(const char* path, mode_t mode) {
  TraceCall call(kLayerPosix);
  int fd = real_creat()(path, mode);
  RecordOpen(call, kOpCreat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, fd);
  return fd;
}

IOTAP_EXPORT int creat64(const char* path, mode_t mode) {
  TraceCall call(kLayerPosix);
  int fd = real_creat64()(path, mode);
  RecordOpen(call, kOpCreat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, fd);
  return fd;
}

IOTAP_EXPORT int mkstemp(char* path_template) {
  TraceCall call(kLayerPosix);
  int fd = real_mkstemp()(path_template);
  RecordMkstemp(call, path_template, 0, fd);
  return fd;
}

IOTAP_EXPORT int mkstemp64(char* path_template) {
  TraceCall call(kLayerPosix);
  int fd = real_mkstemp64()(path_template);
  RecordMkstemp(call, path_template, 0, fd);
  return fd;
}

IOTAP_EXPORT int mkostemp(char* path_template, int flags) {
  TraceCall call(kLayerPosix);
  int fd = real_mkostemp()(path_template, flags);
  RecordMkstemp(call, path_template, flags, fd);
  return fd;
}

IOTAP_EXPORT int mkostemp64(char* path_template, int flags) {
  TraceCall call(kLayerPosix);
  int fd = real_mkostemp64()(path_template, flags);
  RecordMkstemp(call, path_template, flags, fd);
  return fd;
}

IOTAP_EXPORT int mkstemps(char* path_template, int suffix_len) {
  TraceCall call(kLayerPosix);
  int fd = real_mkstemps()(path_template, suffix_len);
  RecordMkstemp(call, path_template, 0, fd);
  return fd;
}

IOTAP_EXPORT int mkstemps64(char* path_template, int suffix_len) {
  TraceCall call(kLayerPosix);
  int fd = real_mkstemps64()(path_template, suffix_len);
  RecordMkstemp(call, path_template, 0, fd);
  return fd;
}

IOTAP_EXPORT int mkostemps(char* path_template, int suffix_len, int flags) {
  TraceCall call(kLayerPosix);
  int fd = real_mkostemps()(path_template, suffix_len, flags);
  RecordMkstemp(call, path_template, flags, fd);
  return fd;
}

IOTAP_EXPORT int mkostemps64(char* path_template, int suffix_len, int flags) {
  TraceCall call(kLayerPosix);
  int fd = real_mkostemps64()(path_template, suffix_len, flags);
  RecordMkstemp(call, path_template, flags, fd);
  return fd;
}

IOTAP_EXPORT int close(int fd) {
  WaitForTraceWrite(fd, fd);
  TraceCall call(kLayerPosix);
  // An io_uring ring's last completions, while its queues are still there.
  if (call.active()) UringRingClosing(fd);
  int r = real_close()(fd);
  if (!call.active() || !InOwnProcess()) return r;
  if (RawEvent* e = call.Finish(kOpClose, r < 0)) {
    e->file = FileOf(FdPeek(fd));
    e->result = r;
  }
  // Linux frees the descriptor even when close reports EINTR or EIO.
  if (!(r < 0 && call.saved_errno() == EBADF)) FdClosed(fd);
  return r;
}

IOTAP_EXPORT int dup(int oldfd) {
  TraceCall call(kLayerPosix);
  int r = real_dup()(oldfd);
  RecordDup(call, oldfd, r);
  return r;
}

IOTAP_EXPORT int dup2(int oldfd, int newfd) {
  WaitForTraceWrite(newfd, newfd);
  TraceCall call(kLayerPosix);
  int r = real_dup2()(oldfd, newfd);
  RecordDup(call, oldfd, r);
  return r;
}

IOTAP_EXPORT int dup3(int oldfd, int newfd, int flags) {
  WaitForTraceWrite(newfd, newfd);
  TraceCall call(kLayerPosix);
  int r = real_dup3()(oldfd, newfd, flags);
  RecordDup(call, oldfd, r);
  return r;
}

// fcntl's third argument is an int or a pointer depending on the command;
// like glibc, forward one pointer-sized argument whatever it is.
IOTAP_EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return FcntlCommon(real_fcntl(), fd, cmd, arg);
}

IOTAP_EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return FcntlCommon(real_fcntl64(), fd, cmd, arg);
}

IOTAP_EXPORT int close_range(unsigned int first, unsigned int last, int flags) noexcept {
  if (!(flags & CLOSE_RANGE_CLOEXEC)) WaitForTraceWrite(first, last);
  int r = real_close_range()(first, last, flags);
  if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC) && OwnsTable()) {
    int saved = errno;
    tls_thread.busy = true;
    FdClosedRange(first, last);
    tls_thread.busy = false;
    errno = saved;
  }
  return r;
}

IOTAP_EXPORT void closefrom(int lowfd) noexcept {
  if (lowfd >= 0) WaitForTraceWrite(static_cast<unsigned>(lowfd), ~0u);
  real_closefrom()(lowfd);
  if (lowfd >= 0 && OwnsTable()) {
    int saved = errno;
    tls_thread.busy = true;
    FdClosedRange(static_cast<unsigned>(lowfd), ~0u);
    tls_thread.busy = false;
    errno = saved;
  }
}

IOTAP_EXPORT int chdir(const char* path) noexcept {
  int r = real_chdir()(path);
  if (r == 0) InvalidateCwd();
  return r;
}

IOTAP_EXPORT int fchdir(int fd) noexcept {
  int r = real_fchdir()(fd);
  if (r == 0) InvalidateCwd();
  return r;
}
