#include "interpose/file/kept_fd.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace iotap::interpose {

namespace {

// Descriptors at or above this are the shim's. Staying under 1024 keeps the
// kernel's descriptor table small and out of select()'s range problems for
// descriptors the program opens itself.
int ParkingFloor() {
  struct rlimit rl;
  if (syscall(SYS_getrlimit, RLIMIT_NOFILE, &rl) != 0) return -1;
  rlim_t limit = rl.rlim_cur < 1024 ? rl.rlim_cur : 1024;
  if (limit < 64) return -1;  // too few descriptors to set any aside
  return static_cast<int>(limit) - 16;
}

}  // namespace

bool KeptFd::Adopt(int fd) {
  Close();
  int floor = ParkingFloor();
  int high = floor < 0 ? -1
                       : static_cast<int>(syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, floor));
  struct stat st;
  if (high >= 0 && syscall(SYS_fstat, high, &st) != 0) {
    syscall(SYS_close, high);
    high = -1;
  }
  if (high < 0) return false;
  syscall(SYS_close, fd);
  fd_ = high;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  return true;
}

int KeptFd::Get() {
  if (fd_ < 0) return -1;
  struct stat st;
  if (syscall(SYS_fstat, fd_, &st) != 0 || st.st_dev != dev_ || st.st_ino != ino_) {
    fd_ = -1;
  }
  return fd_;
}

void KeptFd::Close() {
  if (Get() >= 0) syscall(SYS_close, fd_);
  fd_ = -1;
}

}  // namespace iotap::interpose
