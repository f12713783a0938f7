#include "interpose/core/parked_fds.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "interpose/core/raw_syscall.h"

namespace iotap::interpose {

namespace {

// The ceiling (parked_fds.h), or -1 if the limit cannot be read.
int ParkingCeiling() {
  struct rlimit rl;
  if (RawSyscall(SYS_getrlimit, RLIMIT_NOFILE, &rl) != 0) return -1;
  return static_cast<int>(rl.rlim_cur < 1024 ? rl.rlim_cur : 1024);
}

}  // namespace

int ParkFd(int fd, Parked kind) {
  int ceiling = ParkingCeiling();
  int low = -1;
  int high = ceiling;
  if (kind == Parked::kFile && ceiling >= 64) {
    low = ceiling - 16;
  } else if (kind == Parked::kSampleEvent && ceiling >= 256) {
    low = ceiling - 64;
    high = ceiling - 16;
  }
  if (low < 0) return -1;  // too few descriptors to set these aside
  int parked = static_cast<int>(RawSyscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, low));
  if (parked < 0) return -1;
  if (parked >= high) {
    RawSyscall(SYS_close, parked);
    return -1;
  }
  RawSyscall(SYS_close, fd);
  return parked;
}

}  // namespace iotap::interpose
