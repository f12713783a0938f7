#include "interpose/core/parked_fds.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "interpose/core/raw_syscall.h"

namespace iotap::interpose {

int ParkingCeiling() {
  struct rlimit rl;
  if (RawSyscall(SYS_getrlimit, RLIMIT_NOFILE, &rl) != 0) return -1;
  return static_cast<int>(rl.rlim_cur < 1024 ? rl.rlim_cur : 1024);
}

int ParkFd(int fd, int low, int high) {
  if (low < 0 || low >= high) return -1;
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
