#include "interpose/core/raw_syscall.h"
#include "interpose/mapped/fault_counters.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/file/writer.h"

namespace iotap::interpose {

namespace {

// Reads a small /proc file with raw system calls; its text, NUL-ended, or
// an empty string.
void ReadProc(const char* path, char* buf, size_t cap) {
  buf[0] = '\0';
  int fd = static_cast<int>(RawSyscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return;
  long n = RawSyscall(SYS_read, fd, buf, cap - 1);
  RawSyscall(SYS_close, fd);
  buf[n > 0 ? n : 0] = '\0';
}

struct Counted {
  ThreadCounters threads[kMaxCountedThreads];
  int count;
  uint64_t now_ns;
};
constinit Counted g_counted = {};

void Encode(WireWriter* w, void*) {
  const Counted& c = g_counted;
  size_t packet = w->BeginNested(1);
  size_t f = w->BeginNested(12);
  w->Varint(1, c.now_ns);
  for (int i = 0; i < c.count; ++i) {
    const ThreadCounters& t = c.threads[i];
    size_t entry = w->BeginNested(2);
    w->Varint(1, t.tid);
    w->VarintIfNonZero(2, t.minor_faults);
    w->VarintIfNonZero(3, t.major_faults);
    w->VarintIfNonZero(4, t.read_bytes);
    w->EndNested(entry);
  }
  w->EndNested(f);
  w->EndNested(packet);
}

}  // namespace

bool ParseThreadCounters(const char* stat, const char* io, ThreadCounters* out) {
  // The command name (field 2) may hold spaces and parentheses: fields are
  // counted from the last ')'.
  const char* p = strrchr(stat, ')');
  if (p == nullptr) return false;
  ++p;
  uint64_t fields[10] = {};  // fields 3 to 12
  for (int i = 0; i < 10; ++i) {
    while (*p == ' ') ++p;
    if (*p == '\0') return false;
    fields[i] = i == 0 ? 0 : strtoull(p, nullptr, 10);
    while (*p != ' ' && *p != '\0') ++p;
  }
  out->minor_faults = fields[7];
  out->major_faults = fields[9];
  const char* rb = strncmp(io, "read_bytes:", 11) == 0 ? io : strstr(io, "\nread_bytes:");
  if (rb != nullptr && *rb == '\n') ++rb;
  out->read_bytes = rb != nullptr ? strtoull(rb + 11, nullptr, 10) : 0;
  return true;
}

void WriteFaultCounters(uint64_t now_ns, int skip_tid) {
  Counted& c = g_counted;
  c.count = 0;
  c.now_ns = now_ns;
  int dir = static_cast<int>(RawSyscall(SYS_openat, AT_FDCWD, "/proc/self/task",
                                     O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir < 0) return;
  char buf[4096];
  for (;;) {
    long n = RawSyscall(SYS_getdents64, dir, buf, sizeof(buf));
    if (n <= 0) break;
    for (long at = 0; at < n && c.count < kMaxCountedThreads;) {
      auto* d = reinterpret_cast<struct dirent64*>(buf + at);
      at += d->d_reclen;
      int tid = atoi(d->d_name);
      if (tid <= 0 || tid == skip_tid) continue;
      char path[64], stat[1024], io[512];
      snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
      ReadProc(path, stat, sizeof(stat));
      snprintf(path, sizeof(path), "/proc/self/task/%d/io", tid);
      ReadProc(path, io, sizeof(io));
      ThreadCounters t;
      t.tid = static_cast<uint32_t>(tid);
      if (ParseThreadCounters(stat, io, &t)) c.threads[c.count++] = t;
    }
  }
  RawSyscall(SYS_close, dir);
  if (c.count > 0) WritePacketLocked(Encode, nullptr);
}

}  // namespace iotap::interpose
