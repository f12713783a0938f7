#include "interpose/file/kept_fd.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/core/parked_fds.h"
#include "interpose/core/raw_syscall.h"

namespace iotap::interpose {

namespace {

// Set on the writer thread once its descriptor table is its own.
constinit __thread bool t_own_table __attribute__((tls_model("initial-exec"))) = false;

// Descriptors at or above this are the shim's (core/parked_fds.h).
int ParkingFloor() {
  int ceiling = ParkingCeiling();
  if (ceiling < 64) return -1;  // too few descriptors to set any aside
  return ceiling - 16;
}

}  // namespace

void KeptFd::UseOwnTable() { t_own_table = true; }

bool KeptFd::InOwnTable() { return t_own_table; }

bool KeptFd::Adopt(int fd) {
  Close();
  int floor = ParkingFloor();
  int high = floor < 0 ? -1
                       : static_cast<int>(RawSyscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, floor));
  struct stat st;
  if (high >= 0 && RawSyscall(SYS_fstat, high, &st) != 0) {
    RawSyscall(SYS_close, high);
    high = -1;
  }
  if (high < 0) return false;
  RawSyscall(SYS_close, fd);
  Mine() = Slot{high, st.st_dev, st.st_ino};
  return true;
}

int KeptFd::Get() {
  Slot& s = Mine();
  if (s.fd < 0) return -1;
  struct stat st;
  if (RawSyscall(SYS_fstat, s.fd, &st) != 0 || st.st_dev != s.dev || st.st_ino != s.ino) {
    s.fd = -1;
  }
  return s.fd;
}

void KeptFd::Close() {
  if (Get() >= 0) RawSyscall(SYS_close, Mine().fd);
  Mine().fd = -1;
}

}  // namespace iotap::interpose
