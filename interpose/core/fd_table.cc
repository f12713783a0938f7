#include "interpose/core/fd_table.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/core/raw_syscall.h"
#include "interpose/core/strings.h"

namespace iotap::interpose {

constinit std::atomic<FdEntry*> g_fd_pages[kFdPages] = {};

namespace {

constexpr int kPageBits = kFdPageBits;
constexpr int kPageSize = kFdPageSize;
constexpr int kMaxPages = kFdPages;
constexpr uint32_t kPositionsPerSlab = 4096;
constexpr uint32_t kMaxSlabs = 1024;

struct PositionPool {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  FilePosition* slabs[kMaxSlabs] = {};
  uint32_t slab_count = 0;
  uint32_t next_unused = 0;  // within the last slab
  uint32_t free_head = 0;    // 1-based index, 0 = empty
};
constinit PositionPool g_pool;
constinit FdHooks g_hooks = {};

uint32_t HookedOpenBits(const char* path) {
  return g_hooks.open_bits != nullptr ? g_hooks.open_bits(path) : 0;
}

void HookedRelease(FdEntry* e) {
  if (g_hooks.released != nullptr) g_hooks.released(e);
}

FilePosition* PositionAt(uint32_t index1) {
  uint32_t i = index1 - 1;
  return &g_pool.slabs[i / kPositionsPerSlab][i % kPositionsPerSlab];
}

FilePosition* AllocatePosition(int64_t offset) {
  pthread_mutex_lock(&g_pool.lock);
  FilePosition* p = nullptr;
  if (g_pool.free_head != 0) {
    p = PositionAt(g_pool.free_head);
    g_pool.free_head = p->next_free;
  } else {
    if (g_pool.slab_count == 0 || g_pool.next_unused == kPositionsPerSlab) {
      if (g_pool.slab_count < kMaxSlabs) {
        void* mem = mmap(nullptr, sizeof(FilePosition) * kPositionsPerSlab,
                         PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mem != MAP_FAILED) {
          g_pool.slabs[g_pool.slab_count++] = static_cast<FilePosition*>(mem);
          g_pool.next_unused = 0;
        }
      }
    }
    if (g_pool.slab_count > 0 && g_pool.next_unused < kPositionsPerSlab) {
      p = &g_pool.slabs[g_pool.slab_count - 1][g_pool.next_unused++];
    }
  }
  if (p != nullptr) {
    p->offset.store(offset, std::memory_order_relaxed);
    p->refs.store(1, std::memory_order_relaxed);
    p->next_free = 0;
  }
  pthread_mutex_unlock(&g_pool.lock);
  return p;
}

uint32_t IndexOf(FilePosition* p) {
  for (uint32_t s = 0; s < g_pool.slab_count; ++s) {
    FilePosition* base = g_pool.slabs[s];
    if (p >= base && p < base + kPositionsPerSlab) {
      return s * kPositionsPerSlab + static_cast<uint32_t>(p - base) + 1;
    }
  }
  return 0;
}

void ReleasePosition(FilePosition* p) {
  if (p == nullptr) return;
  if (p->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  pthread_mutex_lock(&g_pool.lock);
  uint32_t index = IndexOf(p);
  if (index != 0) {
    p->next_free = g_pool.free_head;
    g_pool.free_head = index;
  }
  pthread_mutex_unlock(&g_pool.lock);
}

FdEntry* Page(int fd, bool create) {
  if (fd < 0 || (fd >> kPageBits) >= kMaxPages) return nullptr;
  std::atomic<FdEntry*>& slot = g_fd_pages[fd >> kPageBits];
  FdEntry* page = slot.load(std::memory_order_acquire);
  if (page == nullptr && create) {
    void* mem = mmap(nullptr, sizeof(FdEntry) * kPageSize, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return nullptr;
    FdEntry* fresh = static_cast<FdEntry*>(mem);
    if (slot.compare_exchange_strong(page, fresh, std::memory_order_acq_rel)) {
      page = fresh;
    } else {
      munmap(mem, sizeof(FdEntry) * kPageSize);
    }
  }
  return page == nullptr ? nullptr : &page[fd & (kPageSize - 1)];
}

uint32_t BitsForFlags(int open_flags) {
  uint32_t bits = 0;
  if (open_flags >= 0 && (open_flags & O_APPEND)) bits |= kFdAppend;
  if (open_flags >= 0 && (open_flags & O_DIRECT)) bits |= kFdDirect;
  return bits;
}

void Install(FdEntry* e, uint32_t file, uint32_t bits, FilePosition* position) {
  FilePosition* old = e->position.exchange(position, std::memory_order_acq_rel);
  ReleasePosition(old);
  HookedRelease(e);
  e->stream_offset.store(
      position != nullptr ? position->offset.load(std::memory_order_relaxed) : -1,
      std::memory_order_relaxed);
  e->file.store(file, std::memory_order_relaxed);
  e->bits.store(bits | kFdKnown, std::memory_order_release);
}

// Identifies a descriptor the shim has not seen opened, after a call that
// moved its position by `moved` bytes.
void Identify(int fd, FdEntry* e, int64_t moved) {
  struct stat st;
  if (RawSyscall(SYS_fstat, fd, &st) != 0) return;  // not open: leave unknown
  char name[PATH_MAX];
  char link[64];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  long n = RawSyscall(SYS_readlinkat, AT_FDCWD, link, name, sizeof(name) - 1);
  if (n <= 0) n = snprintf(name, sizeof(name), "fd:%d", fd);
  name[n] = '\0';
  StringKind kind = kKindAnon;
  uint32_t bits = 0;
  if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
    kind = kKindPath;
    bits |= kFdSeekable;
    if (S_ISREG(st.st_mode) && name[0] == '/') bits |= HookedOpenBits(name);
  } else if (S_ISDIR(st.st_mode)) {
    kind = kKindPath;
  } else if (S_ISFIFO(st.st_mode)) {
    kind = kKindPipe;
  } else if (S_ISSOCK(st.st_mode)) {
    kind = kKindSocket;
  } else if (S_ISCHR(st.st_mode)) {
    kind = kKindDevice;
  }
  if (kind == kKindPath && name[0] != '/') kind = kKindAnon;
  long flags = RawSyscall(SYS_fcntl, fd, F_GETFL);
  bits |= BitsForFlags(flags < 0 ? -1 : static_cast<int>(flags));
  FilePosition* position = nullptr;
  if (bits & kFdSeekable) {
    long offset = RawSyscall(SYS_lseek, fd, 0, SEEK_CUR) - (moved > 0 ? moved : 0);
    position = AllocatePosition(offset < 0 ? 0 : offset);
  }
  Install(e, InternString(name, static_cast<size_t>(n), kind), bits, position);
}

}  // namespace

void SetFdHooks(const FdHooks& hooks) { g_hooks = hooks; }

FdEntry* FdPeek(int fd) { return Page(fd, false); }

FdEntry* FdLookupSlow(int fd, int64_t moved) {
  FdEntry* e = Page(fd, true);
  if (e == nullptr) return nullptr;
  if (!(e->bits.load(std::memory_order_acquire) & kFdKnown)) Identify(fd, e, moved);
  return e;
}

void FdOpened(int fd, uint32_t file, int open_flags, int64_t offset, const char* path) {
  FdEntry* e = Page(fd, true);
  if (e == nullptr) return;
  struct stat st;
  uint32_t bits = BitsForFlags(open_flags);
  if (RawSyscall(SYS_fstat, fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))) {
    bits |= kFdSeekable;
    if (S_ISREG(st.st_mode)) bits |= HookedOpenBits(path);
  }
  FilePosition* position = (bits & kFdSeekable) ? AllocatePosition(offset) : nullptr;
  Install(e, file, bits, position);
}

void FdClosed(int fd) {
  FdEntry* e = Page(fd, false);
  if (e == nullptr) return;
  e->bits.store(0, std::memory_order_release);
  e->file.store(0, std::memory_order_relaxed);
  ReleasePosition(e->position.exchange(nullptr, std::memory_order_acq_rel));
  HookedRelease(e);
}

void FdClosedRange(unsigned first, unsigned last) {
  unsigned limit = static_cast<unsigned>(kMaxPages) << kPageBits;
  if (last >= limit) last = limit - 1;
  for (unsigned fd = first; fd <= last; ++fd) {
    if ((fd & (kPageSize - 1)) == 0 && Page(static_cast<int>(fd), false) == nullptr) {
      fd += kPageSize - 1;  // whole page unused
      continue;
    }
    FdClosed(static_cast<int>(fd));
  }
}

void FdDuplicated(int oldfd, int newfd) {
  FdEntry* from = FdLookup(oldfd);
  FdEntry* to = Page(newfd, true);
  if (from == nullptr || to == nullptr || from == to) return;
  FilePosition* position = from->position.load(std::memory_order_acquire);
  if (position != nullptr) position->refs.fetch_add(1, std::memory_order_relaxed);
  Install(to, from->file.load(std::memory_order_relaxed),
          from->bits.load(std::memory_order_relaxed) & ~kFdKnown, position);
}

int64_t FdAdvance(FdEntry* e, int64_t moved) {
  if (e == nullptr || !(e->bits.load(std::memory_order_relaxed) & kFdSeekable)) return -1;
  FilePosition* p = e->position.load(std::memory_order_acquire);
  if (p == nullptr) return -1;
  if (moved <= 0) return p->offset.load(std::memory_order_relaxed);
  return p->offset.fetch_add(moved, std::memory_order_relaxed);
}

void FdSetPosition(FdEntry* e, int64_t offset) {
  if (e == nullptr) return;
  FilePosition* p = e->position.load(std::memory_order_acquire);
  if (p != nullptr) p->offset.store(offset, std::memory_order_relaxed);
}

int64_t StreamAdvance(FdEntry* e, int64_t moved) {
  if (e == nullptr || !(e->bits.load(std::memory_order_relaxed) & kFdSeekable)) return -1;
  int64_t current = e->stream_offset.load(std::memory_order_relaxed);
  if (current < 0 || moved <= 0) return current;
  return e->stream_offset.fetch_add(moved, std::memory_order_relaxed);
}

void StreamSetPosition(FdEntry* e, int64_t offset) {
  if (e != nullptr) e->stream_offset.store(offset, std::memory_order_relaxed);
}

void LockFdTableForFork() { pthread_mutex_lock(&g_pool.lock); }

void UnlockFdTableAfterFork(bool child) {
  if (child) {
    pthread_mutex_init(&g_pool.lock, nullptr);
  } else {
    pthread_mutex_unlock(&g_pool.lock);
  }
}

}  // namespace iotap::interpose
