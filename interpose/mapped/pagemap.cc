#include "interpose/mapped/pagemap.h"

#include <string.h>
#include <sys/ioctl.h>

#include "interpose/core/raw_syscall.h"
#include "interpose/mapped/fault_spans.h"

namespace iotap::interpose {

namespace {

constexpr uint64_t kPageSize = 4096;

// linux/fs.h of Linux 6.7 (Debian 12's headers predate it).
struct PageRegion {
  uint64_t start;
  uint64_t end;
  uint64_t categories;
};
struct PmScanArg {
  uint64_t size;
  uint64_t flags;
  uint64_t start;
  uint64_t end;
  uint64_t walk_end;
  uint64_t vec;
  uint64_t vec_len;
  uint64_t max_pages;
  uint64_t category_inverted;
  uint64_t category_mask;
  uint64_t category_anyof_mask;
  uint64_t return_mask;
};
constexpr unsigned long kPagemapScan = _IOWR('f', 16, PmScanArg);
constexpr uint64_t kPageIsPresent = 1u << 3;
// Runs of present pages one call returns at most; a range with more is
// asked again from where the kernel stopped.
constexpr uint64_t kRuns = 32;

// False if the kernel would not scan: before Linux 6.7 (ENOTTY, EINVAL),
// or a seccomp profile that refuses this ioctl (EPERM, ENOSYS). The caller
// reads the entries instead, from then on.
bool Scan(int fd, uint64_t first_page, uint32_t n, bool* present) {
  memset(present, 0, n);
  PageRegion runs[kRuns];
  const uint64_t end = (first_page + n) * kPageSize;
  uint64_t start = first_page * kPageSize;
  while (start < end) {
    PmScanArg q;
    memset(&q, 0, sizeof(q));
    q.size = sizeof(q);
    q.start = start;
    q.end = end;
    q.vec = reinterpret_cast<uint64_t>(runs);
    q.vec_len = kRuns;
    q.category_mask = kPageIsPresent;
    q.return_mask = kPageIsPresent;
    long got = RawSyscall(SYS_ioctl, fd, kPagemapScan, &q);
    if (got < 0) return false;
    for (long i = 0; i < got; ++i) {
      uint64_t lo = runs[i].start < start ? start : runs[i].start;
      uint64_t hi = runs[i].end > end ? end : runs[i].end;
      for (uint64_t a = lo; a < hi; a += kPageSize) present[a / kPageSize - first_page] = true;
    }
    // The walk stops early only when the runs filled the vector.
    if (q.walk_end <= start || q.walk_end >= end) break;
    start = q.walk_end;
  }
  return true;
}

bool Read(int fd, uint64_t first_page, uint32_t n, bool* present) {
  uint64_t entries[kMaxRegionPages];
  long r =
      RawSyscall(SYS_pread64, fd, entries, n * sizeof(uint64_t), first_page * sizeof(uint64_t));
  if (r != static_cast<long>(n * sizeof(uint64_t))) return false;
  for (uint32_t i = 0; i < n; ++i) present[i] = (entries[i] >> 63) != 0;
  return true;
}

}  // namespace

bool ReadPresentPages(int fd, uint64_t first_page, uint32_t n, bool* present,
                      PagemapMethod* method) {
  if (n == 0 || n > kMaxRegionPages) return false;
  if (*method == PagemapMethod::kScan) {
    if (Scan(fd, first_page, n, present)) return true;
    *method = PagemapMethod::kRead;
  }
  return Read(fd, first_page, n, present);
}

}  // namespace iotap::interpose
