#include "interpose/file/kept_fd.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/core/parked_fds.h"
#include "interpose/core/raw_syscall.h"

namespace iotap::interpose {

namespace {

// Set on the writer thread once its descriptor table is its own: the
// table's number among those the process has made (g_own_tables), 0 while
// the thread shares the program's.
constinit __thread uint32_t t_own_table __attribute__((tls_model("initial-exec"))) = 0;
constinit uint32_t g_own_tables = 0;

}  // namespace

void KeptFd::UseOwnTable() { t_own_table = ++g_own_tables; }

bool KeptFd::InOwnTable() { return t_own_table != 0; }

bool KeptFd::Adopt(int fd) {
  Close();
  struct stat st;
  if (RawSyscall(SYS_fstat, fd, &st) != 0) return false;
  int high = ParkFd(fd, Parked::kFile);
  if (high < 0) return false;
  Mine() = Slot{high, st.st_dev, st.st_ino, t_own_table};
  return true;
}

int KeptFd::Get() {
  Slot& s = Mine();
  if (s.fd < 0) return -1;
  // No one but this thread opens or closes a number in its own table: once
  // checked there, it is still ours. A fork child's writer has a new table
  // (a new number), where its parent's writer's descriptors are checked once.
  if (s.table != 0 && s.table == t_own_table) return s.fd;
  struct stat st;
  if (RawSyscall(SYS_fstat, s.fd, &st) != 0 || st.st_dev != s.dev || st.st_ino != s.ino) {
    s.fd = -1;
    return -1;
  }
  s.table = t_own_table;
  return s.fd;
}

void KeptFd::Close() {
  if (Get() >= 0) RawSyscall(SYS_close, Mine().fd);
  Mine().fd = -1;
}

}  // namespace iotap::interpose
