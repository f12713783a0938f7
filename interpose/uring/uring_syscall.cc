// syscall(2) for io_uring: programs that drive io_uring without liburing
// (fio's engine, for one) make its three system calls through libc's
// syscall(): io_uring_setup, io_uring_enter and io_uring_register. Every
// other number goes straight on to libc's syscall() with the arguments as
// given: the wrapper reads six, as glibc's own syscall() does (it loads six
// registers whatever the number takes), and costs one comparison besides.

#include <errno.h>
#include <linux/io_uring.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/core/io_event.h"
#include "interpose/core/real.h"
#include "interpose/core/trace_call.h"
#include "interpose/uring/uring_calls.h"

namespace iotap::interpose {
namespace {

IOTAP_REAL(syscall);

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT long syscall(long number, ...) noexcept {
  va_list ap;
  va_start(ap, number);
  long a1 = va_arg(ap, long);
  long a2 = va_arg(ap, long);
  long a3 = va_arg(ap, long);
  long a4 = va_arg(ap, long);
  long a5 = va_arg(ap, long);
  long a6 = va_arg(ap, long);
  va_end(ap);
  auto real = real_syscall();
  if (__builtin_expect(number != SYS_io_uring_enter && number != SYS_io_uring_setup &&
                           number != SYS_io_uring_register,
                       1)) {
    return real(number, a1, a2, a3, a4, a5, a6);
  }
  if (number == SYS_io_uring_setup) {
    TraceCall call(kLayerUring);
    long r = real(number, a1, a2, a3, a4, a5, a6);
    RecordSetup(call, static_cast<unsigned>(a1), reinterpret_cast<struct io_uring_params*>(a2),
                r < 0 ? -1 : static_cast<int>(r), r, Failure::kErrno, /*raw=*/true);
    return r;
  }
  if (number == SYS_io_uring_register) {
    TraceCall call(kLayerUring);
    long r = real(number, a1, a2, a3, a4, a5, a6);
    RecordRegister(call, static_cast<int>(a1), static_cast<unsigned>(a2),
                   reinterpret_cast<const void*>(a3), static_cast<unsigned>(a4), r, Failure::kErrno);
    return r;
  }
  // io_uring_enter(fd, to_submit, min_complete, flags, arg, argsz). With
  // IORING_ENTER_REGISTERED_RING the first argument is an index into the
  // registered ring descriptors, which the shim does not follow.
  TraceCall call(kLayerUring);
  int fd = (a4 & IORING_ENTER_REGISTERED_RING) ? -1 : static_cast<int>(a1);
  SubmitMark mark = call.active() && fd >= 0 ? UringMark(fd, nullptr) : SubmitMark{};
  long r = real(number, a1, a2, a3, a4, a5, a6);
  RecordEnter(call, fd, nullptr, mark, static_cast<unsigned>(a3), r, Failure::kErrno);
  return r;
}
