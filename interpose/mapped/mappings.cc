#include "interpose/core/raw_syscall.h"
#include "interpose/mapped/mappings.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace iotap::interpose {

namespace {

constexpr uint64_t kStillMapped = UINT64_MAX;

struct Mapping {
  uintptr_t start;
  size_t length;
  int64_t offset;
  uint64_t added_ns;
  uint32_t file;
  bool data;
};

struct MappingTable {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  Mapping entries[kMaxMappings] = {};
  std::atomic<int> count{0};
  std::atomic<int> live_data{0};
  std::atomic<uint64_t> version{0};
  // Removed data mappings, oldest overwritten first.
  DataMapping removed[kRemovedHistory] = {};
  uint64_t removed_total = 0;
};

constinit MappingTable g_mappings;

bool StartsWith(const char* s, const char* prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool EndsWith(const char* s, size_t n, const char* suffix) {
  size_t k = strlen(suffix);
  return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

// Caller holds the lock.
void AppendLocked(const Mapping& m) {
  int n = g_mappings.count.load(std::memory_order_relaxed);
  if (n >= kMaxMappings) return;
  g_mappings.entries[n] = m;
  g_mappings.count.store(n + 1, std::memory_order_release);
  if (m.data) g_mappings.live_data.fetch_add(1);
}

// Forgets entry `i` (swapping the last one in); caller holds the lock.
void EraseLocked(int i) {
  int n = g_mappings.count.load(std::memory_order_relaxed);
  if (g_mappings.entries[i].data) g_mappings.live_data.fetch_sub(1, std::memory_order_relaxed);
  g_mappings.entries[i] = g_mappings.entries[n - 1];
  g_mappings.count.store(n - 1, std::memory_order_release);
}

// Keeps the part [start, start+length) of data mapping `m` in the history,
// removed at `now_ns`; caller holds the lock.
void RememberRemovedLocked(const Mapping& m, uintptr_t start, size_t length, uint64_t now_ns) {
  if (!m.data || length == 0) return;
  DataMapping& r = g_mappings.removed[g_mappings.removed_total % kRemovedHistory];
  r = DataMapping{.start = start,
                  .length = length,
                  .offset = m.offset + static_cast<int64_t>(start - m.start),
                  .added_ns = m.added_ns,
                  .removed_ns = now_ns,
                  .file = m.file};
  ++g_mappings.removed_total;
}

void Bump() { g_mappings.version.fetch_add(1, std::memory_order_release); }

}  // namespace

bool IsDataPath(const char* path) {
  size_t n = strlen(path);
  const char* deleted = " (deleted)";
  if (EndsWith(path, n, deleted)) n -= strlen(deleted);
  // memfd and System V shared memory (shmat) are memory, not files.
  if (path[0] != '/' || StartsWith(path, "/memfd:") || StartsWith(path, "/SYSV")) return false;
  static constexpr const char* kSystemPrefixes[] = {"/proc/", "/sys/", "/dev/", "/usr/",
                                                    "/lib/",  "/lib64/", "/bin/", "/sbin/",
                                                    "/etc/",  "/run/"};
  for (const char* p : kSystemPrefixes) {
    if (StartsWith(path, p)) return false;
  }
  static constexpr const char* kRuntimeParts[] = {
      "/site-packages/", "/dist-packages/", "/lib/python", "/bin/",   "/.pyenv/", "/conda",
      "/.venv/",         "/venv/",          "/__pycache__/", "/pymp-", ".so."};
  for (const char* part : kRuntimeParts) {
    if (memmem(path, n, part, strlen(part)) != nullptr) return false;
  }
  static constexpr const char* kRuntimeSuffixes[] = {".so", ".py", ".pyc", ".pth"};
  for (const char* s : kRuntimeSuffixes) {
    if (EndsWith(path, n, s)) return false;
  }
  return true;
}

bool IsDataFile(int fd, int prot) {
  if ((prot & PROT_READ) == 0 || (prot & PROT_EXEC) != 0) return false;
  char link[32];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  char path[4096];
  long n = RawSyscall(SYS_readlinkat, AT_FDCWD, link, path, sizeof(path) - 1);
  if (n <= 0) return false;
  path[n] = '\0';
  return IsDataPath(path);
}

void AddMapping(void* addr, size_t length, uint32_t file, int64_t offset, bool data,
                uint64_t now_ns) {
  pthread_mutex_lock(&g_mappings.lock);
  AppendLocked(Mapping{reinterpret_cast<uintptr_t>(addr), length, offset, now_ns, file, data});
  if (data) Bump();
  pthread_mutex_unlock(&g_mappings.lock);
}

uint32_t RemoveMappingRange(void* addr, size_t length, uint64_t now_ns) {
  uintptr_t lo = reinterpret_cast<uintptr_t>(addr);
  uintptr_t hi = lo + length;
  uint32_t file = 0;
  bool data_changed = false;
  pthread_mutex_lock(&g_mappings.lock);
  for (int i = 0; i < g_mappings.count.load(std::memory_order_relaxed);) {
    Mapping m = g_mappings.entries[i];
    uintptr_t end = m.start + m.length;
    if (hi <= m.start || lo >= end) {
      ++i;
      continue;
    }
    if (file == 0) file = m.file;
    uintptr_t cut_lo = lo > m.start ? lo : m.start;
    uintptr_t cut_hi = hi < end ? hi : end;
    RememberRemovedLocked(m, cut_lo, cut_hi - cut_lo, now_ns);
    data_changed |= m.data;
    EraseLocked(i);
    // What is left on either side stays mapped; the loop looks at the
    // swapped-in entry at `i` next and never revisits the pieces, which the
    // range no longer overlaps.
    if (m.start < cut_lo) {
      AppendLocked(Mapping{m.start, cut_lo - m.start, m.offset, m.added_ns, m.file, m.data});
    }
    if (cut_hi < end) {
      AppendLocked(Mapping{cut_hi, end - cut_hi,
                           m.offset + static_cast<int64_t>(cut_hi - m.start), m.added_ns,
                           m.file, m.data});
    }
  }
  if (data_changed) Bump();
  pthread_mutex_unlock(&g_mappings.lock);
  return file;
}

uint32_t MoveMapping(void* old_addr, void* new_addr, size_t new_length, uint64_t now_ns,
                     int64_t* offset) {
  uintptr_t old_start = reinterpret_cast<uintptr_t>(old_addr);
  uint32_t file = 0;
  pthread_mutex_lock(&g_mappings.lock);
  int n = g_mappings.count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    Mapping m = g_mappings.entries[i];
    if (m.start != old_start) continue;
    file = m.file;
    *offset = m.offset;
    // The old range is gone (or shrunk into the new one) as of now; faults
    // from here on belong to the new range, made now.
    RememberRemovedLocked(m, m.start, m.length, now_ns);
    EraseLocked(i);
    AppendLocked(Mapping{reinterpret_cast<uintptr_t>(new_addr), new_length, m.offset, now_ns,
                         m.file, m.data});
    if (m.data) Bump();
    break;
  }
  pthread_mutex_unlock(&g_mappings.lock);
  return file;
}

bool HasMappingAt(void* addr) {
  uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  bool found = false;
  pthread_mutex_lock(&g_mappings.lock);
  int n = g_mappings.count.load(std::memory_order_relaxed);
  for (int i = 0; i < n && !found; ++i) found = g_mappings.entries[i].start == a;
  pthread_mutex_unlock(&g_mappings.lock);
  return found;
}

bool HasMappings() { return g_mappings.count.load(std::memory_order_acquire) != 0; }

int LiveDataMappings() { return g_mappings.live_data.load(); }

uint64_t DataMappingsVersion() { return g_mappings.version.load(std::memory_order_acquire); }

size_t SnapshotDataMappings(uint64_t since_ns, DataMapping* out, size_t cap) {
  size_t k = 0;
  pthread_mutex_lock(&g_mappings.lock);
  int n = g_mappings.count.load(std::memory_order_relaxed);
  for (int i = 0; i < n && k < cap; ++i) {
    const Mapping& m = g_mappings.entries[i];
    if (!m.data) continue;
    out[k++] = DataMapping{m.start, m.length, m.offset, m.added_ns, kStillMapped, m.file};
  }
  uint64_t total = g_mappings.removed_total;
  uint64_t first = total > kRemovedHistory ? total - kRemovedHistory : 0;
  for (uint64_t i = first; i < total && k < cap; ++i) {
    const DataMapping& r = g_mappings.removed[i % kRemovedHistory];
    if (r.removed_ns >= since_ns) out[k++] = r;
  }
  pthread_mutex_unlock(&g_mappings.lock);
  // Insertion sort: the snapshot is small and mostly sorted between drains.
  for (size_t i = 1; i < k; ++i) {
    DataMapping m = out[i];
    size_t j = i;
    for (; j > 0 && out[j - 1].start > m.start; --j) out[j] = out[j - 1];
    out[j] = m;
  }
  return k;
}

const DataMapping* FindDataMapping(const DataMapping* snapshot, size_t n, uint64_t max_length,
                                   uintptr_t addr, uint64_t time_ns) {
  // The last entry starting at or below `addr`, then backwards over the
  // entries that may still hold it (mappings of other times at overlapping
  // addresses).
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (snapshot[mid].start <= addr) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  for (size_t i = lo; i-- > 0;) {
    const DataMapping& m = snapshot[i];
    if (addr >= m.start && addr - m.start < m.length && m.added_ns <= time_ns &&
        time_ns < m.removed_ns) {
      return &m;
    }
    // Entries further back start lower still; none can reach `addr` once
    // it lies a longest mapping past their start.
    if (addr - m.start >= max_length) break;
  }
  return nullptr;
}

void LockMappingsForFork() { pthread_mutex_lock(&g_mappings.lock); }

void UnlockMappingsAfterFork(bool child) {
  if (child) {
    pthread_mutex_init(&g_mappings.lock, nullptr);
  } else {
    pthread_mutex_unlock(&g_mappings.lock);
  }
}

}  // namespace iotap::interpose
