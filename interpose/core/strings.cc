#include "interpose/core/raw_syscall.h"
#include "interpose/core/strings.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "interpose/core/recorder.h"

namespace iotap::interpose {

namespace {

// Bounds of the table; see the header for what happens when they are hit.
constexpr size_t kMaxStrings = 1u << 18;
constexpr size_t kArenaBytes = 32u << 20;
constexpr size_t kSlots = kMaxStrings * 2;  // load factor at most 1/2
// One arena record: id (4), kind (1), length (4), then the bytes.
constexpr size_t kRecordHeader = 9;

struct Slot {
  uint32_t hash;    // 0 = empty
  uint32_t offset;  // record offset in the arena
};

struct Table {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  // Reserved once, touched as used, so RSS follows the strings stored.
  uint8_t* arena = nullptr;
  Slot* slots = nullptr;
  size_t used = 0;      // arena bytes in use
  size_t emitted = 0;   // arena bytes already written to the trace
  size_t count = 0;
  uint32_t next_id = 1;
  bool mapped = false;
  bool map_failed = false;
  char cwd[PATH_MAX] = {};
  bool cwd_valid = false;
};

constinit Table g_table;
// Times Clear ran; read without the lock (StringGeneration).
constinit std::atomic<uint32_t> g_generation{0};

uint32_t Hash(const char* s, size_t n, StringKind kind) {
  uint64_t h = 1469598103934665603ull ^ kind;
  for (size_t i = 0; i < n; ++i) {
    h = (h ^ static_cast<uint8_t>(s[i])) * 1099511628211ull;
  }
  uint32_t r = static_cast<uint32_t>(h ^ (h >> 32));
  return r == 0 ? 1 : r;
}

bool MapTable() {
  if (g_table.mapped) return true;
  if (g_table.map_failed) return false;
  void* arena = mmap(nullptr, kArenaBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  void* slots = mmap(nullptr, kSlots * sizeof(Slot), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (arena == MAP_FAILED || slots == MAP_FAILED) {
    if (arena != MAP_FAILED) munmap(arena, kArenaBytes);
    if (slots != MAP_FAILED) munmap(slots, kSlots * sizeof(Slot));
    g_table.map_failed = true;
    return false;
  }
  g_table.arena = static_cast<uint8_t*>(arena);
  g_table.slots = static_cast<Slot*>(slots);
  g_table.mapped = true;
  return true;
}

uint32_t RecordId(size_t offset) {
  uint32_t id;
  memcpy(&id, g_table.arena + offset, 4);
  return id;
}

bool RecordEquals(size_t offset, const char* s, size_t n, StringKind kind) {
  const uint8_t* r = g_table.arena + offset;
  uint32_t len;
  memcpy(&len, r + 5, 4);
  return r[4] == kind && len == n && memcmp(r + kRecordHeader, s, n) == 0;
}

bool Full(size_t n) {
  return g_table.count + 1 > kMaxStrings ||
         g_table.used + kRecordHeader + n > kArenaBytes;
}

void Clear() {
  // Only the slots that can be non-empty are touched: madvise returns the
  // pages to the kernel, which gives back zeros on the next touch.
  madvise(g_table.slots, kSlots * sizeof(Slot), MADV_DONTNEED);
  madvise(g_table.arena, kArenaBytes, MADV_DONTNEED);
  g_table.used = 0;
  g_table.emitted = 0;
  g_table.count = 0;
  g_generation.fetch_add(1, std::memory_order_release);
}

// Appends the path made absolute and normalised to `out` (capacity `cap`).
// Returns the length, or 0 if it does not fit.
size_t Normalise(const char* base, const char* path, char* out, size_t cap) {
  size_t n = 0;
  auto append = [&](const char* part, size_t len) {
    // Splits into components and applies them to `out`.
    size_t i = 0;
    while (i < len) {
      while (i < len && part[i] == '/') ++i;
      size_t start = i;
      while (i < len && part[i] != '/') ++i;
      size_t clen = i - start;
      if (clen == 0 || (clen == 1 && part[start] == '.')) continue;
      if (clen == 2 && part[start] == '.' && part[start + 1] == '.') {
        while (n > 0 && out[n - 1] != '/') --n;
        if (n > 0) --n;
        continue;
      }
      if (n + 1 + clen >= cap) return false;
      out[n++] = '/';
      memcpy(out + n, part + start, clen);
      n += clen;
    }
    return true;
  };
  if (path[0] != '/' && base != nullptr && !append(base, strlen(base))) return 0;
  if (!append(path, strlen(path))) return 0;
  if (n == 0) out[n++] = '/';
  out[n] = '\0';
  return n;
}

// The path a descriptor refers to, from /proc (raw syscall: not traced).
bool DescriptorPath(int fd, char* out, size_t cap) {
  char link[64];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  long n = RawSyscall(SYS_readlinkat, AT_FDCWD, link, out, cap - 1);
  if (n <= 0) return false;
  out[n] = '\0';
  return out[0] == '/';
}

}  // namespace

uint32_t InternString(const char* s, size_t n, StringKind kind) {
  if (n > UINT32_MAX / 2) n = UINT32_MAX / 2;
  uint32_t h = Hash(s, n, kind);
  LockShim(&g_table.lock);
  if (!MapTable()) {
    UnlockShim(&g_table.lock);
    return 0;
  }
  size_t mask = kSlots - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    Slot& slot = g_table.slots[i];
    if (slot.hash == 0) break;
    if (slot.hash == h && RecordEquals(slot.offset, s, n, kind)) {
      uint32_t id = RecordId(slot.offset);
      UnlockShim(&g_table.lock);
      return id;
    }
  }
  if (Full(n)) {
    // The writer must emit what is pending before the table can be emptied;
    // it takes the writer lock, which ranks above this one.
    UnlockShim(&g_table.lock);
    g_writer_hooks.strings_full();
    LockShim(&g_table.lock);
    if (Full(n)) {  // a single string larger than the arena
      UnlockShim(&g_table.lock);
      return 0;
    }
  }
  uint32_t id = g_table.next_id++;
  size_t offset = g_table.used;
  uint8_t* r = g_table.arena + offset;
  uint32_t len = static_cast<uint32_t>(n);
  memcpy(r, &id, 4);
  r[4] = kind;
  memcpy(r + 5, &len, 4);
  memcpy(r + kRecordHeader, s, n);
  g_table.used += kRecordHeader + n;
  ++g_table.count;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    if (g_table.slots[i].hash == 0) {
      g_table.slots[i] = Slot{h, static_cast<uint32_t>(offset)};
      break;
    }
  }
  UnlockShim(&g_table.lock);
  return id;
}

size_t AbsolutePath(int dirfd, const char* path, char* out, size_t cap) {
  if (path == nullptr) return 0;
  char base[PATH_MAX];
  const char* base_ptr = nullptr;
  if (path[0] != '/') {
    if (dirfd == AT_FDCWD) {
      LockShim(&g_table.lock);
      if (!g_table.cwd_valid) {
        g_table.cwd_valid =
            RawSyscall(SYS_getcwd, g_table.cwd, sizeof(g_table.cwd)) > 0;
      }
      if (g_table.cwd_valid) {
        memcpy(base, g_table.cwd, sizeof(base));
        base_ptr = base;
      }
      UnlockShim(&g_table.lock);
    } else if (DescriptorPath(dirfd, base, sizeof(base))) {
      base_ptr = base;
    }
  }
  return Normalise(base_ptr, path, out, cap);
}

uint32_t InternPath(int dirfd, const char* path) {
  if (path == nullptr) return 0;
  char out[PATH_MAX * 2];
  size_t n = AbsolutePath(dirfd, path, out, sizeof(out));
  if (n == 0) return InternString(path, strlen(path), kKindPath);
  return InternString(out, n, kKindPath);
}

void InvalidateCwd() {
  LockShim(&g_table.lock);
  g_table.cwd_valid = false;
  UnlockShim(&g_table.lock);
}

bool TakePendingStrings(bool (*take)(const StringRecord& s, void* context), void* context) {
  LockShim(&g_table.lock);
  while (g_table.mapped && g_table.emitted < g_table.used) {
    const uint8_t* r = g_table.arena + g_table.emitted;
    StringRecord record;
    memcpy(&record.id, r, 4);
    record.kind = static_cast<StringKind>(r[4]);
    memcpy(&record.size, r + 5, 4);
    record.bytes = r + kRecordHeader;
    if (!take(record, context)) break;
    g_table.emitted += kRecordHeader + record.size;
  }
  bool done = !g_table.mapped || g_table.emitted == g_table.used;
  UnlockShim(&g_table.lock);
  return done;
}

void LockStringsForFork() { LockShim(&g_table.lock); }

void UnlockStringsAfterFork(bool child) {
  if (child) {
    ResetShimLockInChild(&g_table.lock);
    g_table.emitted = 0;
  } else {
    UnlockShim(&g_table.lock);
  }
}

uint32_t StringGeneration() { return g_generation.load(std::memory_order_acquire); }

void ResetStringsIfFull() {
  LockShim(&g_table.lock);
  if (g_table.mapped && Full(PATH_MAX) && g_table.emitted == g_table.used) Clear();
  UnlockShim(&g_table.lock);
}

}  // namespace iotap::interpose
