#include "interpose/file/kept_fd.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/core/parked_fds.h"
#include "interpose/core/raw_syscall.h"

namespace iotap::interpose {

namespace {

// Set on the writer thread once its descriptor table is its own.
constinit __thread bool t_own_table __attribute__((tls_model("initial-exec"))) = false;

}  // namespace

void KeptFd::UseOwnTable() { t_own_table = true; }

bool KeptFd::InOwnTable() { return t_own_table; }

bool KeptFd::Adopt(int fd) {
  Close();
  struct stat st;
  if (RawSyscall(SYS_fstat, fd, &st) != 0) return false;
  int high = ParkFd(fd, Parked::kFile);
  if (high < 0) return false;
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
