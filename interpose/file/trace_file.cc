#include "interpose/file/trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "interpose/core/clock.h"
#include "interpose/core/raw_syscall.h"
#include "interpose/file/packets.h"

namespace iotap::interpose {

constinit std::atomic<int> TraceFile::writing_fd_{-1};
constinit std::atomic<uint64_t> TraceFile::opening_since_ns_{0};
constinit std::atomic<bool> TraceFile::stopped_{false};

namespace {
// Set while the calling thread is inside Append.
__thread bool tls_appending __attribute__((tls_model("initial-exec"))) = false;

void SleepNs(long ns) {
  struct timespec ts = {ns / 1000000000, ns % 1000000000};
  RawSyscall(SYS_nanosleep, &ts, nullptr);
}

// The shim's own file operations use raw system calls: they must never be
// traced.
int OpenDirectory(const char* dir) {
  return static_cast<int>(RawSyscall(SYS_openat, AT_FDCWD, dir,
                                  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

void SafeHostname(char* out, size_t cap) {
  struct utsname uts;
  const char* host = TraceHostname(&uts);
  if (host[0] == '\0') host = "host";
  size_t n = 0;
  for (; host[n] != '\0' && n + 1 < cap; ++n) {
    char c = host[n];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '-' || c == '_';
    out[n] = ok ? c : '_';
  }
  out[n] = '\0';
}

}  // namespace

int TraceFile::Create(const char* dir, int pid, uint64_t realtime_ns) {
  created_ = false;
  int dirfd = OpenDirectory(dir);
  if (dirfd < 0 && errno == ENOENT) {
    if (RawSyscall(SYS_mkdirat, AT_FDCWD, dir, 0700) != 0 && errno != EEXIST) return errno;
    dirfd = OpenDirectory(dir);
  }
  if (dirfd < 0) return errno == ELOOP ? ENOTDIR : errno;
  struct stat st;
  if (RawSyscall(SYS_fstat, dirfd, &st) != 0 || st.st_uid != geteuid()) {
    RawSyscall(SYS_close, dirfd);
    return EPERM;  // someone else's directory: do not write into it
  }
  char host[64];
  SafeHostname(host, sizeof(host));
  time_t secs = static_cast<time_t>(realtime_ns / 1000000000ull);
  struct tm tm;
  gmtime_r(&secs, &tm);
  char name[160];
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    int len = snprintf(name, sizeof(name), "%s.%d.%04d%02d%02dT%02d%02d%02d.%09lluZ",
                       host, pid, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                       tm.tm_hour, tm.tm_min, tm.tm_sec,
                       static_cast<unsigned long long>(realtime_ns % 1000000000ull));
    if (attempt > 0) snprintf(name + len, sizeof(name) - len, "-%d", attempt);
    strncat(name, ".iotap", sizeof(name) - strlen(name) - 1);
    // O_APPEND: after a failed write is truncated back, the next one goes to
    // the new end, not past it (which would leave a hole of zeros).
    fd = static_cast<int>(RawSyscall(SYS_openat, dirfd, name,
                                  O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                  0600));
    if (fd < 0 && errno != EEXIST) break;
  }
  int err = fd < 0 ? errno : 0;
  RawSyscall(SYS_close, dirfd);
  if (fd < 0) return err;
  if (RawSyscall(SYS_fstat, fd, &st) != 0) {
    err = errno;
    RawSyscall(SYS_close, fd);
    return err;
  }
  if (!kept_.Adopt(fd)) RawSyscall(SYS_close, fd);  // then a descriptor per write
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  size_ = 0;
  snprintf(path_, sizeof(path_), "%s/%s", dir, name);
  created_ = true;
  return 0;
}

namespace {

// Writing past RLIMIT_FSIZE raises SIGXFSZ, whose default action would kill
// the job for a write that was ours. The signal is blocked around our write
// and, if our write raised it, taken off the thread's pending set.
class NoFileSizeSignal {
 public:
  NoFileSizeSignal() {
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGXFSZ);
    RawSyscall(SYS_rt_sigprocmask, SIG_BLOCK, &block, &old_, sizeof(uint64_t));
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGXFSZ) == 1;
  }
  ~NoFileSizeSignal() {
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGXFSZ) == 1) {
      sigset_t only;
      sigemptyset(&only);
      sigaddset(&only, SIGXFSZ);
      struct timespec zero = {0, 0};
      sigtimedwait(&only, nullptr, &zero);
    }
    RawSyscall(SYS_rt_sigprocmask, SIG_SETMASK, &old_, nullptr, sizeof(uint64_t));
  }

 private:
  sigset_t old_;
  bool was_pending_ = false;
};

}  // namespace

void TraceFile::PublishOpening() {
  opening_since_ns_.store(MonotonicNs(), std::memory_order_relaxed);
  writing_fd_.store(kOpening, std::memory_order_seq_cst);
}

int TraceFile::Append(const uint8_t* data, size_t n) {
  if (!created_) return EBADF;
  // Set before the write is published, so that a handler that interrupts
  // this thread anywhere in here never waits for the thread's own write.
  struct Appending {
    Appending() { tls_appending = true; }
    ~Appending() { tls_appending = false; }
  } appending;
  NoFileSizeSignal no_sigxfsz;
  // Published before Get() checks the inode: from then on a close or dup2
  // of this number by the program waits until the write is over, so the
  // descriptor checked is the descriptor written. (A close that read the
  // published value just before, and is a few instructions from its system
  // call, is not waited for: that window is left open.)
  int published = kept_.number();
  if (published >= 0) {
    writing_fd_.store(published, std::memory_order_seq_cst);
  } else {
    PublishOpening();
  }
  // After publishing, against StopWritesForExit's store then load: either
  // it waits for this write, or this write sees that the process is ending
  // and never starts. The thread is then left parked until exit_group.
  if (stopped_.load(std::memory_order_seq_cst)) {
    writing_fd_.store(-1, std::memory_order_seq_cst);
    for (;;) SleepNs(1000000000);
  }
  int fd = kept_.Get();
  bool kept = fd >= 0;
  if (!kept) {
    // The program closed or reused our descriptor: reopen by name, and keep
    // the new one if it is still our file. Its number is not known until
    // then.
    if (published >= 0) PublishOpening();
    fd = static_cast<int>(
        RawSyscall(SYS_openat, AT_FDCWD, path_, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC));
    if (fd < 0) {
      int err = errno;
      writing_fd_.store(-1, std::memory_order_release);
      return err;
    }
  }
  struct stat st;
  if (RawSyscall(SYS_fstat, fd, &st) != 0 || st.st_dev != dev_ || st.st_ino != ino_) {
    if (kept) {
      kept_.Close();
    } else {
      RawSyscall(SYS_close, fd);
    }
    writing_fd_.store(-1, std::memory_order_release);
    return ESTALE;  // not our file any more
  }
  if (!kept && kept_.Adopt(fd)) {
    fd = kept_.Get();
    kept = fd >= 0;
    if (!kept) {
      writing_fd_.store(-1, std::memory_order_release);
      return ESTALE;
    }
  }
  writing_fd_.store(fd, std::memory_order_seq_cst);
  // Another process never shares this file, so its size is ours to know; a
  // previous failure may have left it shorter than we think.
  size_ = static_cast<uint64_t>(st.st_size);
  size_t done = 0;
  int err = 0;
  while (done < n) {
    long w = RawSyscall(SYS_write, fd, data + done, n - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    if (w == 0) {
      err = ENOSPC;
      break;
    }
    done += static_cast<size_t>(w);
  }
  if (err != 0) {
    RawSyscall(SYS_ftruncate, fd, static_cast<off_t>(size_));
  } else {
    size_ += n;
  }
  // Closed before it is unpublished: a program waiting to dup2 onto this
  // number must not have its new descriptor closed by us.
  if (!kept) RawSyscall(SYS_close, fd);
  writing_fd_.store(-1, std::memory_order_release);
  return err;
}

void TraceFile::StopWritesForExit(uint64_t wait_ns) {
  stopped_.store(true, std::memory_order_seq_cst);
  if (tls_appending) return;
  uint64_t deadline = MonotonicNs() + wait_ns;
  while (writing_fd_.load(std::memory_order_seq_cst) != -1 && MonotonicNs() < deadline) {
    SleepNs(20000);
  }
}

}  // namespace iotap::interpose
