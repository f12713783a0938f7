#include "interpose/core/raw_syscall.h"
#include "interpose/mapped/proc_maps.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/core/recorder.h"
#include "interpose/core/strings.h"
#include "interpose/file/kept_fd.h"
#include "interpose/mapped/mappings.h"

namespace iotap::interpose {

namespace {

constexpr uint64_t kMinIntervalNs = 1000000000ull;

constinit uint64_t g_last_read_ns = 0;
constinit bool g_read_once = false;
constinit EarlyRereads g_early;

// The PROCMAP_QUERY ioctl of /proc/PID/maps (include/uapi/linux/fs.h since
// Linux 6.11; Debian 12's headers predate it).
struct ProcmapQuery {
  uint64_t size;
  uint64_t query_flags;
  uint64_t query_addr;
  uint64_t vma_start;
  uint64_t vma_end;
  uint64_t vma_flags;
  uint64_t vma_page_size;
  uint64_t vma_offset;
  uint64_t inode;
  uint32_t dev_major;
  uint32_t dev_minor;
  uint32_t vma_name_size;
  uint32_t build_id_size;
  uint64_t vma_name_addr;
  uint64_t build_id_addr;
};
static_assert(sizeof(ProcmapQuery) == 104);
constexpr unsigned long kProcmapQuery = 0xC0686611;  // _IOWR('f', 17, struct procmap_query)
constexpr uint64_t kVmaReadable = 0x01;
constexpr uint64_t kVmaExecutable = 0x04;

// Ranges found not to hold a data file's mapping (anonymous memory, a
// library's), each trusted for a second (a raw mmap may replace one with a
// file's meanwhile). Direct-mapped by the 2 MiB region of the address asked
// about: one probe per miss, whatever the number of ranges.
struct NotData {
  uint64_t start, end, found_ns;
};
constexpr int kNotDataSlots = 1024;
constexpr int kRegionShift = 21;

struct Query {
  KeptFd maps;
  bool unsupported = false;
  NotData not_data[kNotDataSlots] = {};
  bool not_data_set = false;  // whether any entry of `not_data` was, since the last reset
  char name[4096] = {};
};
constinit Query g_query;

NotData& SlotOf(uint64_t addr) { return g_query.not_data[(addr >> kRegionShift) % kNotDataSlots]; }

bool KnownNotData(uint64_t addr, uint64_t now_ns) {
  const NotData& r = SlotOf(addr);
  return addr >= r.start && addr < r.end && now_ns - r.found_ns < kMinIntervalNs;
}

int MapsFd() {
  int fd = g_query.maps.Get();
  if (fd >= 0) return fd;
  int opened =
      static_cast<int>(RawSyscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC));
  if (opened < 0) return -1;
  if (!g_query.maps.Adopt(opened)) {
    RawSyscall(SYS_close, opened);
    return -1;
  }
  return g_query.maps.Get();
}

// Parses hex digits at `*p`, advancing it; false if there were none.
bool Hex(const char** p, const char* end, uint64_t* out) {
  uint64_t v = 0;
  const char* s = *p;
  for (; s < end; ++s) {
    char c = *s;
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) break;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  if (s == *p) return false;
  *p = s;
  *out = v;
  return true;
}

bool Skip(const char** p, const char* end, char c) {
  if (*p >= end || **p != c) return false;
  ++*p;
  return true;
}

// Skips one field and the spaces after it.
void SkipField(const char** p, const char* end) {
  while (*p < end && **p != ' ') ++*p;
  while (*p < end && **p == ' ') ++*p;
}

void Learn(const MapsLine& m) {
  if (m.path_size == 0 || m.path_size >= 4096 || !m.readable || m.executable) return;
  char path[4096];
  memcpy(path, m.path, m.path_size);
  path[m.path_size] = '\0';
  if (!IsDataPath(path) || HasMappingAt(reinterpret_cast<void*>(m.start))) return;
  const char* deleted = " (deleted)";
  size_t n = m.path_size;
  size_t k = strlen(deleted);
  if (n > k && memcmp(path + n - k, deleted, k) == 0) path[n - k] = '\0';
  uint32_t file = InternPath(AT_FDCWD, path);
  AddMapping(reinterpret_cast<void*>(m.start), m.end - m.start, file, m.offset, true, 0);
}

}  // namespace

bool ParseMapsLine(const char* line, size_t n, MapsLine* out) {
  const char* p = line;
  const char* end = line + n;
  uint64_t start = 0, stop = 0, offset = 0;
  if (!Hex(&p, end, &start) || !Skip(&p, end, '-') || !Hex(&p, end, &stop) || !Skip(&p, end, ' ') ||
      end - p < 4) {
    return false;
  }
  out->start = start;
  out->end = stop;
  out->readable = p[0] == 'r';
  out->executable = p[2] == 'x';
  p += 4;
  if (!Skip(&p, end, ' ') || !Hex(&p, end, &offset) || !Skip(&p, end, ' ')) return false;
  out->offset = static_cast<int64_t>(offset);
  SkipField(&p, end);  // device
  SkipField(&p, end);  // inode, then the spaces before the path
  out->path = p;
  out->path_size = static_cast<size_t>(end - p);
  return stop > start;
}

bool LearnMappingAt(uint64_t addr, uint64_t now_ns, int* queries) {
  if (KnownNotData(addr, now_ns)) return false;
  if (*queries <= 0) return false;  // this drain's questions (or whole read) are spent
  if (g_config.no_maps_query) g_query.unsupported = true;
  int fd = g_query.unsupported ? -1 : MapsFd();
  if (fd < 0) {
    *queries = 0;
    return LearnMappings(now_ns);
  }
  --*queries;
  ProcmapQuery q;
  memset(&q, 0, sizeof(q));
  q.size = sizeof(q);
  q.query_addr = addr;
  q.vma_name_size = sizeof(g_query.name);
  q.vma_name_addr = reinterpret_cast<uint64_t>(g_query.name);
  if (RawSyscall(SYS_ioctl, fd, kProcmapQuery, &q) != 0) {
    // ENOENT: nothing is mapped there any more. Anything else (ENOTTY
    // before Linux 6.11): the kernel cannot answer; read the whole file.
    if (errno == ENOENT) return false;
    g_query.unsupported = true;
    *queries = 0;
    return LearnMappings(now_ns);
  }
  bool readable = (q.vma_flags & kVmaReadable) != 0;
  bool executable = (q.vma_flags & kVmaExecutable) != 0;
  if (q.inode == 0 || q.vma_name_size <= 1 || !readable || executable ||
      !IsDataPath(g_query.name)) {
    SlotOf(addr) = NotData{q.vma_start, q.vma_end, now_ns};
    g_query.not_data_set = true;
    return false;
  }
  uint64_t before = DataMappingsVersion();
  Learn(MapsLine{.start = q.vma_start,
                 .end = q.vma_end,
                 .offset = static_cast<int64_t>(q.vma_offset),
                 .readable = readable,
                 .executable = executable,
                 .path = g_query.name,
                 .path_size = q.vma_name_size - 1});  // the size counts the NUL
  // False also for a data mapping the table has already (made since the
  // drain's snapshot): the caller's next snapshot places its faults.
  return DataMappingsVersion() != before;
}

void ForgetProcMapsInChild() {
  g_query.maps.Close();
  if (!g_query.not_data_set) return;  // untouched: its pages stay the parent's
  for (NotData& r : g_query.not_data) r = NotData{};
  g_query.not_data_set = false;
}

bool LearnMappings(uint64_t now_ns) {
  // Within the second of the last read, again only after a wait that grows
  // while such reads find nothing new (misses in anonymous memory).
  const bool early = g_read_once && now_ns - g_last_read_ns < kMinIntervalNs;
  if (early && now_ns - g_last_read_ns < g_early.wait_ns()) return false;
  g_read_once = true;
  g_last_read_ns = now_ns;
  uint64_t before = DataMappingsVersion();
  int fd = static_cast<int>(RawSyscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC));
  if (fd < 0) return false;
  // Lines are taken whole from a buffer that is refilled after them.
  char buf[16384];
  size_t used = 0;
  for (;;) {
    long r = RawSyscall(SYS_read, fd, buf + used, sizeof(buf) - used);
    if (r <= 0) break;
    used += static_cast<size_t>(r);
    size_t begin = 0;
    for (;;) {
      char* nl = static_cast<char*>(memchr(buf + begin, '\n', used - begin));
      if (nl == nullptr) break;
      MapsLine m;
      if (ParseMapsLine(buf + begin, static_cast<size_t>(nl - (buf + begin)), &m)) Learn(m);
      begin = static_cast<size_t>(nl - buf) + 1;
    }
    if (begin == 0 && used == sizeof(buf)) used = 0;  // a line longer than the buffer
    memmove(buf, buf + begin, used - begin);
    used -= begin;
  }
  RawSyscall(SYS_close, fd);
  const bool learned = DataMappingsVersion() != before;
  if (early) g_early.After(learned);
  return learned;
}

}  // namespace iotap::interpose
