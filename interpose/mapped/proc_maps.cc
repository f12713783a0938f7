#include "interpose/mapped/proc_maps.h"

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/core/strings.h"
#include "interpose/mapped/mappings.h"

namespace iotap::interpose {

namespace {

constexpr uint64_t kMinIntervalNs = 1000000000ull;

constinit uint64_t g_last_read_ns = 0;
constinit bool g_read_once = false;

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
  if (!Hex(&p, end, &start) || !Skip(&p, end, '-') || !Hex(&p, end, &stop) ||
      !Skip(&p, end, ' ') || end - p < 4) {
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

bool LearnMappings(uint64_t now_ns) {
  if (g_read_once && now_ns - g_last_read_ns < kMinIntervalNs) return false;
  g_read_once = true;
  g_last_read_ns = now_ns;
  uint64_t before = DataMappingsVersion();
  int fd = static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC));
  if (fd < 0) return false;
  // Lines are taken whole from a buffer that is refilled after them.
  char buf[16384];
  size_t used = 0;
  for (;;) {
    long r = syscall(SYS_read, fd, buf + used, sizeof(buf) - used);
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
  syscall(SYS_close, fd);
  return DataMappingsVersion() != before;
}

}  // namespace iotap::interpose
